/**
 * One node's run of the horizon job in a process of its own (test/horizon.test.ts starts two on one database,
 * as two servers would run it): opens DATABASE_URL, says `ready` on stdout, waits for a line on stdin (so that
 * both runs begin together, past their start-up), runs `moveHorizons` at the instant and with the horizon days
 * given as arguments, prints what the run did as JSON on a line of its own, closes.
 */
import { createInterface } from 'node:readline'
import { openDatabase } from '../../src/db/database.js'
import { moveHorizons } from '../../src/horizon.js'

const [at, days] = process.argv.slice(2)
const handle = await openDatabase(process.env.DATABASE_URL ?? '')
try {
  const lines = createInterface({ input: process.stdin })
  process.stdout.write('ready\n')
  for await (const _ of lines) break
  lines.close()
  process.stdout.write(`${JSON.stringify(await moveHorizons(handle.db, new Date(at ?? ''), Number(days)))}\n`)
} finally {
  await handle.close()
}
