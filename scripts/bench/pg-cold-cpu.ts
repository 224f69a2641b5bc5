/**
 * Where a random anonymous read by id spends on PostgreSQL (issue 49, branch pg-cold-read): the app in this process
 * on a PostgreSQL schema of the benchmark's data (its documents stored first, as a running server has them),
 * listening; autocannon in a process of its own asking random ids over HTTP (scripts/bench/cold-load.mjs, 10
 * connections), so the requests pass through the replay (http/replay.ts) as on a server. Counted over the measured
 * seconds: the requests, those answered cold before routing (`app.replay.colds`), this process's CPU a request (the
 * API and pg's client; the load's own process not counted), pg's statements and round trips a request (every
 * `Client.prototype.query`, and every one sent on a connection with nothing in flight) by kind, and the database
 * server's CPU a request (the pool's backends, `/proc/<pid>/stat`: the database must run on this machine). `--rounds`
 * runs in turn on the same app. Printed, never checked.
 *
 * CLI: node --import tsx scripts/bench/pg-cold-cpu.ts --db /tmp/bench-x/bench-20000.db --pg-schema NAME [--copy]
 *      [--database-url postgres://postgres@127.0.0.1:5432/test] [--seconds 5] [--rounds 2] [--events 20000] [--occurrences]
 * `--occurrences` (a schema with series, issue 45): random anonymous reads of the series' occurrences without an
 * override (`random-by-occurrence`'s kind) instead of reads by id. `--search` (issue 49): random searches as the
 * benchmark's `random-search` sends them (half its five known words, half random fragments of two or three letters, page
 * 1 or 2; 20,000 seeded URLs asked in random order) instead of reads by id.
 * `--copy`: the SQLite file (built when missing) is copied into the schema first (else the schema is used as it is).
 */
import { execFile } from 'node:child_process'
import { existsSync, readFileSync, writeFileSync } from 'node:fs'
import type { AddressInfo } from 'node:net'
import { promisify } from 'node:util'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { sql } from 'kysely'
import pg from 'pg'
import { buildApp } from '../../src/app.js'
import { defaultConfig } from '../../src/config.js'
import { openDatabase } from '../../src/db/database.js'
import { buildDatabase, prng, SEARCH_WORDS } from './loader.js'
import { copyToPostgres, schemaUrl } from './postgres.js'

const arg = (name: string, fallback: string) => {
  const i = process.argv.indexOf(`--${name}`)
  return i < 0 ? fallback : (process.argv[i + 1] as string)
}
const URL_ = arg('database-url', 'postgres://postgres@127.0.0.1:5432/test')
const FILE = arg('db', '')
const SCHEMA = arg('pg-schema', '')
const SECONDS = arg('seconds', '5')
const ROUNDS = Number(arg('rounds', '2'))
const EVENTS = arg('events', '20000')
if (SCHEMA === '') throw new Error('--pg-schema NAME is needed')

let statements = 0
let roundTrips = 0
const kinds = new Map<string, number>()
const inFlight = new WeakMap<object, number>()
const backends = new Set<number>()
type Query = (this: object, ...args: unknown[]) => unknown
const proto = pg.Client.prototype as unknown as { query: Query }
const original = proto.query
proto.query = function (this: object, ...args: unknown[]) {
  statements++
  const pid = (this as { processID?: number | null }).processID
  if (typeof pid === 'number') backends.add(pid)
  const first = args[0]
  const text = typeof first === 'string' ? first : (first as { text?: string } | undefined)?.text ?? '?'
  const kind = text.replace(/\s+/g, ' ').trim().slice(0, 70)
  kinds.set(kind, (kinds.get(kind) ?? 0) + 1)
  const busy = inFlight.get(this) ?? 0
  if (busy === 0) roundTrips++
  inFlight.set(this, busy + 1)
  const done = () => { inFlight.set(this, (inFlight.get(this) ?? 1) - 1) }
  const result = original.apply(this, args)
  if (result instanceof Promise) result.then(done, done)
  else done()
  return result
}

/** The CPU (ms, user + system) the database's backends of this process spent so far. */
const databaseCpu = (): number => {
  let ms = 0
  for (const pid of backends) {
    try {
      const fields = (readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1] ?? '').split(' ')
      ms += (Number(fields[11]) + Number(fields[12])) * 10
    } catch { /* gone */ }
  }
  return ms
}

let serverUrl = schemaUrl(URL_, SCHEMA)
if (process.argv.includes('--copy')) {
  if (FILE === '') throw new Error('--copy needs --db FILE')
  if (!existsSync(FILE)) await buildDatabase({ file: FILE, events: Number(EVENTS), log: () => {} })
  serverUrl = await copyToPostgres(FILE, URL_, SCHEMA, (m) => process.stderr.write(`${m}\n`))
}
const handle = await openDatabase(serverUrl)
const app = await buildApp({ db: handle.db, config: defaultConfig({ databaseUrl: serverUrl, logLevel: 'silent', publicUrl: 'http://127.0.0.1:8080' }) })
try {
  while (!(await app.fillEventDocuments())) { /* until one pass is done */ }
  await app.listen({ port: 0, host: '127.0.0.1' })
  const { port } = app.server.address() as AddressInfo
  let paths: string | undefined
  if (process.argv.includes('--occurrences')) {
    const { rows } = await sql<{ id: number; occurrence: string }>`select o.event_id as id, o.occurrence from events e
        join event_occurrences o on o.event_id = e.id
      where e.recurrence is not null and e.language = 'en' and e.status = 'publish' and e.password is null and e.hide_from_listings = 0
        and not exists (select 1 from event_overrides x where x.event_id = o.event_id and x.occurrence = o.occurrence)
      order by o.event_id, o.occurrence limit 200000`.execute(handle.db)
    paths = join(tmpdir(), `pg-cold-cpu-${process.pid}.txt`)
    writeFileSync(paths, rows.map((r) => `/calendar/events/v1/events/${r.id}/occurrences/${r.occurrence}\n`).join(''))
    // The full path's answers first: the cold reads' template of occurrences is taken from them.
    for (const r of rows.slice(0, 50)) await (await fetch(`http://127.0.0.1:${port}/calendar/events/v1/events/${r.id}/occurrences/${r.occurrence}`)).arrayBuffer()
    process.stdout.write(`${rows.length} occurrences without an override\n`)
  }
  if (process.argv.includes('--search')) {
    // As scenarios.ts `realScenarios` makes `random-search`'s URLs.
    const rnd = prng(20261125)
    const pick = <T>(list: readonly T[]): T => list[Math.floor(rnd() * list.length)] as T
    const letters = 'abcdefghiklmnoprstuvwy'
    const urls = Array.from({ length: 20000 }, () => {
      const word = rnd() < 0.5 ? pick(SEARCH_WORDS) : Array.from({ length: 2 + Math.floor(rnd() * 2) }, () => pick([...letters])).join('')
      return `/calendar/events/v1/events?search=${word}&page=${1 + Math.floor(rnd() * 2)}\n`
    })
    paths = join(tmpdir(), `pg-cold-cpu-${process.pid}.txt`)
    writeFileSync(paths, urls.join(''))
  }
  for (let i = 1; i <= 50; i++) await (await fetch(`http://127.0.0.1:${port}/calendar/events/v1/events/${i}`)).arrayBuffer()
  const load = new URL('./cold-load.mjs', import.meta.url).pathname
  for (let round = 1; round <= ROUNDS; round++) {
    statements = 0
    roundTrips = 0
    kinds.clear()
    const before = { cpu: process.cpuUsage(), colds: app.replay.colds, replayed: app.replay.replayed, looks: app.replay.looks, db: databaseCpu(), backends: backends.size }
    const run = await promisify(execFile)(process.execPath, [load, `http://127.0.0.1:${port}`, SECONDS, EVENTS, ...(paths === undefined ? [] : [paths])], { encoding: 'utf8' })
    const cpu = process.cpuUsage(before.cpu)
    // Backends first seen in this round started at 0.
    const db = databaseCpu() - before.db
    const { total, non2xx } = JSON.parse(run.stdout) as { total: number; non2xx: number }
    const per = (x: number) => (x / Math.max(1, total))
    process.stdout.write(`round ${round}: ${total} requests (${non2xx} not 2xx, ${(total / Number(SECONDS)).toFixed(0)} req/s), ${app.replay.colds - before.colds} cold, ${app.replay.replayed - before.replayed} replayed, ${app.replay.looks - before.looks} replay looks; `
      + `API CPU ${per((cpu.user + cpu.system) / 1000).toFixed(3)} ms, database CPU ${per(db).toFixed(3)} ms (${backends.size} backends), `
      + `${per(statements).toFixed(2)} statements, ${per(roundTrips).toFixed(2)} round trips a request\n`)
    for (const [kind, n] of [...kinds].sort((a, b) => b[1] - a[1]).slice(0, 8)) process.stdout.write(`  ${per(n).toFixed(3)}  ${kind}\n`)
  }
} finally {
  await app.close()
  await handle.close()
}
