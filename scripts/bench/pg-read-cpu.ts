/**
 * The PostgreSQL server's CPU per statement of the anonymous single reads (branches pg-occ-read, pg-byid-function): a
 * read by id's statement (the data version and the document, repositories/event-documents.ts `readWithVersion`) as the
 * text it was sent as before migration 0023 and as that migration's function `event_document`, the bare look at the
 * data version (dialect.ts `dataVersion`: a read whose answer is cached) as text and as `data_version()`, an occurrence's
 * as the text it was sent as before migration 0022 (the version, the document, the occurrence's row and override) and
 * as that migration's function `occurrence_document`, each sent `--statements` times in turn on one connection of a
 * kept benchmark schema with series (random documents and occurrences of it), for `--rounds` rounds. The CPU is the
 * server process's own (`/proc/<backend pid>/stat`, so the database must run on this machine), beside the wall time a
 * statement took from send to answer. The texts are written out here as the app sends them (the function's call) or
 * sent them (the text before 0022); with `--named`, each also as a named prepared statement (planned once per
 * connection), for comparison. Printed, never checked.
 *
 * CLI: node --import tsx scripts/bench/pg-read-cpu.ts --pg-schema calendar_bench_20000_series20
 *      [--database-url postgres://postgres@127.0.0.1:5432/test] [--statements 2000] [--rounds 3] [--named]
 */
import { readFileSync } from 'node:fs'
import pg from 'pg'

const arg = (name: string, fallback: string) => {
  const i = process.argv.indexOf(`--${name}`)
  return i < 0 ? fallback : (process.argv[i + 1] as string)
}
const URL = arg('database-url', 'postgres://postgres@127.0.0.1:5432/test')
const SCHEMA = arg('pg-schema', 'calendar_bench_20000_series20')
const N = Number(arg('statements', '2000'))
const ROUNDS = Number(arg('rounds', '3'))
const NAMED = process.argv.includes('--named')

const client = new pg.Client({ connectionString: URL })
await client.connect()
try {
  await client.query(`set search_path = ${client.escapeIdentifier(SCHEMA)}`)
  await client.query('set jit = off')
  const pid = Number((await client.query<{ p: number }>('select pg_backend_pid() as p')).rows[0]?.p)
  const ticks = 100
  /** The backend's CPU so far, in ms (user + system). */
  const cpu = (): number => {
    const fields = (readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1] ?? '').split(' ')
    return ((Number(fields[11]) + Number(fields[12])) * 1000) / ticks
  }
  const context = (await client.query<{ context: string }>('select context from event_documents limit 1')).rows[0]?.context
  const occurrences = (await client.query<{ event_id: number; occurrence: string }>(`select o.event_id, o.occurrence from event_occurrences as o
    join event_documents as d on d.event_id = o.event_id join events as e on e.id = o.event_id where e.recurrence is not null order by random() limit 5000`)).rows
  const ids = (await client.query<{ event_id: string }>('select event_id from event_documents order by random() limit 5000')).rows.map((r) => r.event_id)
  if (context === undefined) throw new Error(`no documents in ${SCHEMA}`)

  const COLUMNS = 'd.event_id, d.grp, d.version, d.digest, d.category_ids, d.tag_ids, d.category_at, d.tag_at, d.ld_from, d.ld_to, d.body'
  const VERSION = 'select (select coalesce(max(position), 0) from changes) as h, (select coalesce(max(n), 0) from data_epoch) as e'
  const occurrenceArgs = (i: number): unknown[] => {
    const o = occurrences[i % occurrences.length] as { event_id: number; occurrence: string }
    return [o.occurrence, o.event_id, context]
  }
  const variants: Array<{ name: string; text: string; args: (i: number) => unknown[]; prepared?: string }> = [
    { name: 'by id (text)', text: `select v.h, v.e, ${COLUMNS} from (${VERSION}) as v left join event_documents as d on d.event_id = $1 and d.context = $2`,
      args: (i) => [ids[i % ids.length], context] },
    { name: 'by id (function, 0023)', text: 'select h, e, event_id, grp, version, digest, category_ids, tag_ids, category_at, tag_at, ld_from, ld_to, body '
      + 'from event_document($1, $2)', args: (i) => [ids[i % ids.length], context] },
    { name: 'version look (text, before 0023)', text: VERSION, args: () => [] },
    { name: 'version look (function, 0023)', text: 'select h, e from data_version()', args: () => [] },
    { name: 'occurrence (text, before 0022)', text: `select v0.h, v0.e, ${COLUMNS}, `
      + `(select o.start_utc || '|' || o.end_utc from event_occurrences as o where o.event_id = d.event_id and o.occurrence = $1) as o_dates, `
      + `(select v.version from event_overrides as v where v.event_id = d.event_id and v.occurrence = $1) as o_override `
      + `from (${VERSION}) as v0 left join event_documents as d on d.event_id = $2 and d.context = $3`, args: occurrenceArgs },
    { name: 'occurrence (function, 0022)', text: 'select h, e, event_id, grp, version, digest, category_ids, tag_ids, category_at, tag_at, ld_from, ld_to, body, '
      + 'o_dates, o_override from occurrence_document($1, $2, $3)', args: occurrenceArgs },
  ]
  // A schema without series: the reads by id and the version's look alone.
  if (occurrences.length === 0) variants.splice(0, variants.length, ...variants.filter((v) => !v.name.startsWith('occurrence')))
  if (NAMED) for (const [i, v] of [...variants].entries()) variants.push({ ...v, name: `${v.name}, named`, prepared: `pg_read_cpu_${i}` })
  const figures = new Map<string, string[]>()
  for (let round = 0; round < ROUNDS; round++) {
    for (const v of variants) {
      const before = cpu()
      const started = performance.now()
      for (let i = 0; i < N; i++) {
        const values = v.args(i + round * N)
        await client.query(v.prepared === undefined ? { text: v.text, values } : { name: v.prepared, text: v.text, values })
      }
      const wall = ((performance.now() - started) / N) * 1000
      const server = ((cpu() - before) / N) * 1000
      figures.set(v.name, [...(figures.get(v.name) ?? []), `${server.toFixed(0)} / ${wall.toFixed(0)}`])
    }
  }
  console.log(`${SCHEMA}: the database server's CPU / the wall time a statement, µs (${N} statements a round, ${ROUNDS} rounds)`)
  for (const [name, rounds] of figures) console.log(`  ${name.padEnd(40)} ${rounds.join('   ')}`)
} finally {
  await client.end()
}
