/**
 * The start every in-process benchmark tool shares: the database file named first on its command line (its usage
 * printed otherwise), copied beside it under the tool's name so that the file itself is not changed, and the copy
 * removed by `remove` (its WAL and shared memory too).
 */
import { copyFileSync, rmSync } from 'node:fs'
import { openSqlite } from '../../src/db/database.js'
import { withTransaction } from '../../src/db/unit-of-work.js'
import { generateKey } from '../../src/lib/api-keys.js'
import { createUserWithKey } from '../../src/repositories/users.js'

export function scratchCopy(tool: string, usage: string): { source: string; file: string; remove: () => void } {
  const source = process.argv[2]
  if (source === undefined) {
    process.stderr.write(`usage: node --import tsx scripts/bench/${tool}.ts <database file> ${usage}\n`)
    process.exit(2)
  }
  const file = `${source}.${tool}`
  const remove = (): void => {
    for (const f of [file, `${file}-wal`, `${file}-shm`]) rmSync(f, { force: true })
  }
  remove()
  copyFileSync(source, file)
  return { source, file, remove }
}

/** The copy opened, with an editor and its key made in it. */
export async function openWithEditor(file: string, tool: string): Promise<{ database: Awaited<ReturnType<typeof openSqlite>>; key: string }> {
  const database = await openSqlite(file)
  const key = generateKey()
  await withTransaction(database.db, (trx) => createUserWithKey(trx, 'editor', key, '2026-01-01 00:00:00', tool))
  return { database, key }
}
