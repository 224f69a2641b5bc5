/**
 * Statements and round trips per request on PostgreSQL (issue 49): the realistic workloads' reads (random by id,
 * random filtered list, random search; scripts/bench/scenarios.ts `realScenarios`) sent in process (`inject`)
 * to an app on a copy of the bench loader's data (schema `calendar_bench_<events>`), the event documents
 * stored first (as a running server has them), then per workload `--warm` requests unmeasured and
 * `--requests` counted. Counted where pg sends them: every `Client.prototype.query` (a statement), and every
 * time a connection with nothing in flight sends one (a round trip: statements sent while one is still in
 * flight on the same connection, pipelined, ride on it). Printed per workload: statements and round trips a
 * request, the statements by kind (their first words), and the CPU this process spent a request (the app and pg's
 * client, requests one at a time: the database server's CPU not counted), and the wall time each kind of statement
 * took from its send to its answer (the database server's time and the round trip). Printed, never checked.
 * `--db FILE`: a kept benchmark database (`--keep-db`, e.g. /tmp/calendar-bench/bench-20000-series20.db) copied
 * instead of one built; `--pg-schema NAME`: the schema (else `calendar_bench_<events>`); `--only a,b`: those
 * workloads; `--seed N`: another seeded sequence of requests; `--keep-schema`: left for EXPLAIN ANALYZE after;
 * `--reuse-schema`: a schema kept so (by `--keep-schema`) used as it is, not copied again (its documents filled);
 * `--in-flight N`: the counted requests sent N at a time (else one at a time); `--profile FILE`: a CPU profile of this process over the counted requests (each workload's own file, its key
 * added before `.cpuprofile`). Also printed: the CPU the database's backends that served the app spent a request
 * (`/proc/<pid>/stat` of each connection's backend, pg's `processID`: the database must run on this machine).
 *
 * CLI: node --import tsx scripts/bench/pg-statements.ts [--events 5000] [--warm 300] [--requests 300]
 *      [--database-url postgres://postgres@127.0.0.1:5432/test] [--db FILE] [--pg-schema NAME] [--only a,b]
 *      [--seed N] [--keep-schema] [--reuse-schema] [--in-flight N]
 *      [--profile FILE.cpuprofile]
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { Session } from 'node:inspector/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import pg from 'pg'
import { buildApp } from '../../src/app.js'
import { defaultConfig } from '../../src/config.js'
import { openDatabase } from '../../src/db/database.js'
import { buildDatabase } from './loader.js'
import { benchSchema, copyToPostgres, dropBenchSchema, schemaUrl } from './postgres.js'
import { realScenarios, sampleData } from './scenarios.js'

const arg = (name: string, fallback: string) => {
  const i = process.argv.indexOf(`--${name}`)
  return i < 0 ? fallback : (process.argv[i + 1] as string)
}
const EVENTS = Number(arg('events', '5000'))
const WARM = Number(arg('warm', '300'))
const REQUESTS = Number(arg('requests', '300'))
const URL = arg('database-url', 'postgres://postgres@127.0.0.1:5432/test')
const KEPT = arg('db', '')
const SCHEMA = arg('pg-schema', benchSchema(EVENTS))
const ONLY = arg('only', '').split(',').filter((k) => k !== '')
const SEED = Number(arg('seed', '20261125'))
const KEEP_SCHEMA = process.argv.includes('--keep-schema') || process.argv.includes('--reuse-schema')
const REUSE_SCHEMA = process.argv.includes('--reuse-schema')
const PROFILE = arg('profile', '')
const IN_FLIGHT = Number(arg('in-flight', '1'))
const NOW = new Date()

// Statements and round trips, counted where pg sends them.
let statements = 0
let roundTrips = 0
const kinds = new Map<string, number>()
/** Per kind, the milliseconds its statements took from send to answer. */
const times = new Map<string, number>()
const inFlight = new WeakMap<object, number>()
type Query = (this: object, ...args: unknown[]) => unknown
const proto = pg.Client.prototype as unknown as { query: Query }
const original = proto.query
/** The backends that served the app (each connection's `processID`), for their CPU. */
const backends = new Set<number>()
/** The backends' CPU so far, in ms (user + system; 100 ticks a second). */
const backendCpu = (): number => {
  let ms = 0
  for (const pid of backends) {
    try {
      const fields = (readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1] ?? '').split(' ')
      ms += (Number(fields[11]) + Number(fields[12])) * 10
    } catch { /* a backend gone */ }
  }
  return ms
}
proto.query = function (this: object, ...args: unknown[]) {
  statements++
  const pid = (this as { processID?: number | null }).processID
  if (typeof pid === 'number') backends.add(pid)
  const first = args[0]
  const text = typeof first === 'string' ? first : (first as { text?: string } | undefined)?.text ?? '?'
  const kind = text.replace(/\s+/g, ' ').trim().slice(0, 90)
  kinds.set(kind, (kinds.get(kind) ?? 0) + 1)
  const busy = inFlight.get(this) ?? 0
  if (busy === 0) roundTrips++
  inFlight.set(this, busy + 1)
  const sent = performance.now()
  const done = () => {
    inFlight.set(this, (inFlight.get(this) ?? 1) - 1)
    times.set(kind, (times.get(kind) ?? 0) + performance.now() - sent)
  }
  const result = original.apply(this, args)
  if (result instanceof Promise) result.then(done, done)
  else done()
  return result
}

const dir = mkdtempSync(join(tmpdir(), 'calendar-pg-statements-'))
const file = KEPT === '' ? join(dir, 'calendar.db') : KEPT
if (KEPT === '') await buildDatabase({ file, events: EVENTS, now: NOW, log: () => {} })
const serverUrl = REUSE_SCHEMA ? schemaUrl(URL, SCHEMA) : await copyToPostgres(file, URL, SCHEMA, () => {})
const samples = sampleData(file, EVENTS, NOW)
const handle = await openDatabase(serverUrl)
const app = await buildApp({ db: handle.db, config: defaultConfig({ databaseUrl: serverUrl, publicUrl: 'http://calendar.bench' }) })
try {
  while (!(await app.fillEventDocuments())) { /* until one pass is done */ }
  for (const scenario of realScenarios(samples, 'unused', NOW, SEED).filter((s) => s.key !== 'mixed-90-10' && (ONLY.length === 0 || ONLY.includes(s.key)))) {
    for (let i = 0; i < WARM; i++) {
      const r = scenario.next()
      await app.inject({ method: r.method, url: r.path })
    }
    statements = 0
    roundTrips = 0
    kinds.clear()
    times.clear()
    const statuses = new Map<number, number>()
    const session = PROFILE === '' ? undefined : new Session()
    if (session !== undefined) {
      session.connect()
      await session.post('Profiler.enable')
      await session.post('Profiler.start')
    }
    const dbCpu = backendCpu()
    const cpu = process.cpuUsage()
    const started = performance.now()
    let sent = 0
    await Promise.all(Array.from({ length: IN_FLIGHT }, async () => {
      while (sent < REQUESTS) {
        sent++
        const r = scenario.next()
        const res = await app.inject({ method: r.method, url: r.path })
        statuses.set(res.statusCode, (statuses.get(res.statusCode) ?? 0) + 1)
      }
    }))
    const used = process.cpuUsage(cpu)
    const wall = performance.now() - started
    const dbUsed = backendCpu() - dbCpu
    if (session !== undefined) {
      writeFileSync(PROFILE.replace(/(\.cpuprofile)?$/, `-${scenario.key}.cpuprofile`), JSON.stringify((await session.post('Profiler.stop')).profile))
      session.disconnect()
    }
    console.log(`\n${scenario.key}: ${(statements / REQUESTS).toFixed(2)} statements, ${(roundTrips / REQUESTS).toFixed(2)} round trips a request,`
      + ` ${((used.user + used.system) / 1000 / REQUESTS).toFixed(3)} ms CPU and ${(wall / REQUESTS).toFixed(2)} ms a request`
      + `, the database's backends ${(dbUsed / REQUESTS).toFixed(3)} ms CPU a request (${backends.size} of them)`
      + ` (statuses ${[...statuses].map(([s, n]) => `${s}×${n}`).join(', ')})`)
    for (const [kind, n] of [...kinds].sort((a, b) => (times.get(b[0]) ?? 0) - (times.get(a[0]) ?? 0)).slice(0, 15)) {
      console.log(`  ${(n / REQUESTS).toFixed(2)} a request, ${((times.get(kind) ?? 0) / REQUESTS).toFixed(3)} ms a request  ${kind}`)
    }
  }
} finally {
  await app.close()
  await handle.close()
  if (!KEEP_SCHEMA) await dropBenchSchema(URL, SCHEMA)
  rmSync(dir, { recursive: true, force: true })
}
