import { sql } from 'kysely'
import { openDatabase } from '../../src/db/database.js'
import { listIds, searchedIds } from '../../src/db/dialect.js'
import { schemaUrl } from './postgres.js'
const handle = await openDatabase(schemaUrl('postgres://postgres@127.0.0.1:5432/test', process.argv[2] as string))
const db = handle.db
const letters = 'abcdefghiklmnoprstuvwy'
let seed = 7
const rnd = () => ((seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648)
const needles = (n: number, len: number) => Array.from({ length: n }, () => Array.from({ length: len }, () => letters[Math.floor(rnd() * letters.length)]).join(''))
for (const len of [2, 3]) {
  for (const way of ['rows', 'agg', 'rows', 'agg']) {
    const list = needles(150, len)
    const cpu = process.cpuUsage(); const t = performance.now(); let ids = 0
    for (const needle of list) {
      const found = searchedIds(db, needle)
      const q = db.selectFrom(sql<{ id: number }>`${found.ids}`.as('found')).select('found.id')
      const r = way === 'rows' ? (await q.execute()).map((x) => Number(x.id)) : await listIds(db, q)
      ids += r.length
    }
    const u = process.cpuUsage(cpu)
    console.log(len, way, 'ids/needle', (ids / list.length).toFixed(0), 'user ms', (u.user / 1000 / list.length).toFixed(2), 'sys ms', (u.system / 1000 / list.length).toFixed(2), 'wall ms', ((performance.now() - t) / list.length).toFixed(2))
  }
}
await handle.close()
