import { CompiledQuery } from 'kysely'
import { openDatabase } from '../../src/db/database.js'
import { schemaUrl } from './postgres.js'
const handle = await openDatabase(schemaUrl('postgres://postgres@127.0.0.1:5432/test', process.argv[2] as string))
const q = CompiledQuery.raw('select h, e from data_version()', [])
const q2 = CompiledQuery.raw('select h, e from data_version() where $1::int = 1', [1])
for (const [name, query] of [['simple', q], ['extended', q2], ['simple', q], ['extended', q2]] as const) {
  for (let i = 0; i < 300; i++) await handle.db.executeQuery(query)
  const cpu = process.cpuUsage(); const t = performance.now()
  const N = 3000
  for (let i = 0; i < N; i++) await handle.db.executeQuery(query)
  const u = process.cpuUsage(cpu)
  console.log(name, 'user µs', (u.user / N).toFixed(1), 'sys µs', (u.system / N).toFixed(1), 'wall µs', ((performance.now() - t) * 1000 / N).toFixed(0))
}
await handle.close()
