import { readFileSync } from 'node:fs'
import pg from 'pg'
const schema = process.argv[2] as string
const client = new pg.Client({ connectionString: 'postgres://postgres@127.0.0.1:5432/test' })
await client.connect()
await client.query(`set search_path = ${schema}`)
const pid = Number((await client.query<{ p: number }>('select pg_backend_pid() as p')).rows[0]?.p)
const cpu = () => { const f = (readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1] ?? '').split(' '); return (Number(f[11]) + Number(f[12])) * 10 }
const letters = 'abcdefghiklmnoprstuvwy'
let seed = Number(process.argv[3] ?? 11)
const rnd = () => ((seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648)
const needles = (n: number, len: number) => Array.from({ length: n }, () => Array.from({ length: len }, () => letters[Math.floor(rnd() * letters.length)]).join(''))
const texts: Record<string, (n: string) => [string, unknown[]]> = {
  pair: (n) => [`select string_agg(q.id::text, ',') as ids from (select event_id as id from event_search where pairs @> array[$1::text]) q`, [n]],
  triple: (n) => [`select string_agg(q.id::text, ',') as ids from (select event_id as id from event_search where title like $1 or description like $1) q`, [`%${n}%`]],
  look: () => ['select h, e from data_version()', []],
}
for (const [kind, len] of [['pair', 2], ['triple', 3], ['look', 0], ['pair', 2], ['triple', 3], ['look', 0]] as const) {
  const list = needles(kind === 'look' ? 1000 : 200, len)
  const c = cpu(); const t = performance.now(); let ids = 0
  for (const n of list) { const [text, params] = texts[kind]!(n); const r = await client.query(text, params); ids += (r.rows[0]?.ids ?? '').split(',').length }
  console.log(kind, 'ids', (ids / list.length).toFixed(0), 'db cpu ms', ((cpu() - c) / list.length).toFixed(3), 'wall ms', ((performance.now() - t) / list.length).toFixed(2))
}
await client.end()
