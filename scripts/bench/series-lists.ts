/**
 * Issue 45's random filtered lists in process (docs/performance.md "Issue 45"): the `random-filter` workload of
 * scripts/bench/scenarios.ts (`realScenarios`, the same seeded requests) sent through `inject` to an app on a
 * database the benchmark kept (`--keep-db`; copy it first: the app may store event documents), the CPU per
 * request and the statements per request printed (SQLite: each statement's calls and time, the slowest first).
 * `--dump FILE` writes every answer (status, the list's headers, the body) for comparing two builds byte for byte;
 * `--src DIR` runs the app of another tree (e.g. an export of main), the same requests.
 *
 * PostgreSQL's statements are counted too (pg's `Client.query`; by text with `--statements`, calls only).
 *
 * `--workload mixed-90-10` sends that workload instead (its PATCHes with an editor's key made in the copy).
 *
 * CLI: node --import tsx scripts/bench/series-lists.ts --file DB [--database-url postgres://…?schema…] [--requests 2000]
 *      [--warm 1000] [--seed 20261125] [--src DIR] [--dump FILE] [--statements] [--workload random-filter|mixed-90-10]
 *      [--profile FILE.cpuprofile] [--heap-profile FILE.heapprofile] [--creates N] [--patches N] [--fill-after]
 *      [--by-kind] [--skip-writes]
 */
import { writeFileSync } from 'node:fs'
import { Session } from 'node:inspector/promises'
import { PerformanceObserver } from 'node:perf_hooks'
import { resolve } from 'node:path'
import SQLite from 'better-sqlite3'
import pg from 'pg'
import { allScenarios, realScenarios, sampleData } from './scenarios.js'

const argv = process.argv.slice(2)
const opt = (name: string): string | undefined => {
  const i = argv.indexOf(`--${name}`)
  return i < 0 ? undefined : argv[i + 1]
}
const file = opt('file')
if (file === undefined) throw new Error('--file DB')
const databaseUrl = opt('database-url') ?? file
const requests = Number(opt('requests') ?? 2000)
const warm = Number(opt('warm') ?? 1000)
const seed = Number(opt('seed') ?? 20261125)
const src = resolve(opt('src') ?? new URL('../../src', import.meta.url).pathname)
const dump = opt('dump')
const perStatement = argv.includes('--statements')
const workload = opt('workload') ?? 'random-filter'
const profile = opt('profile')
const heapProfile = opt('heap-profile')
// `--creates N` / `--patches N`: before the warm-up, N requests of the full realistic run's earlier workloads
// `event-create` and `event-update` (what `random-filter` meets after them in `npm run bench -- --realistic`).
const creates = Number(opt('creates') ?? 0)
const patchesBefore = Number(opt('patches') ?? 0)
// `--by-kind`: CPU and statements per kind of request (PATCH, by id, each kind of list), and for each list URL
// read again, how many PATCHes came between its reads (what a cache kept across writes may save).
const byKind = argv.includes('--by-kind')
// `--skip-writes`: the workload's PATCHes drawn but not sent (the reads the same requests in the same order): the
// reads' CPU without the PATCHes' after-effects (caches dropped, lists rechecked), to set beside a run with them.
const skipWrites = argv.includes('--skip-writes')
const kindOf = (method: string, path: string): string => {
  if (method !== 'GET') return method
  const q = path.split('?')[1]
  if (q === undefined) return 'by-id'
  for (const k of ['start_date', 'categories', 'venue', 'tags', 'organizer', 'search']) if (q.startsWith(`${k}=`)) return `list:${k}`
  return 'list:other'
}

// Statements counted (and timed) where better-sqlite3 runs them: every call of a statement's all/get/run/iterate.
let statements = 0
// `--kind-statements KIND`: which statements the requests of that kind ran (with `--by-kind`), the most called first.
const kindStatements = new Map<string, number>()
let tallying = false
const timings = new Map<string, { calls: number; ms: number; cpuMs: number }>()
const probe = new SQLite(':memory:')
const statement = Object.getPrototypeOf(probe.prepare('select 1')) as Record<string, (...args: unknown[]) => unknown>
probe.close()
for (const method of ['all', 'get', 'run', 'iterate']) {
  const original = statement[method] as (...args: unknown[]) => unknown
  statement[method] = function (this: { source: string }, ...args: unknown[]) {
    statements++
    if (tallying) kindStatements.set(this.source, (kindStatements.get(this.source) ?? 0) + 1)
    if (!perStatement) return original.apply(this, args)
    const started = performance.now()
    const cpu = process.threadCpuUsage()
    try {
      return original.apply(this, args)
    } finally {
      const used = process.threadCpuUsage(cpu)
      const t = timings.get(this.source) ?? { calls: 0, ms: 0, cpuMs: 0 }
      t.calls++
      t.ms += performance.now() - started
      t.cpuMs += (used.user + used.system) / 1000
      timings.set(this.source, t)
    }
  }
}

// PostgreSQL's statements counted where pg sends them (every query of a client, the pool's too), tallied by text
// with `--statements` or `--kind-statements` (calls only: their time is the server's and the round trip's).
const pgQuery = pg.Client.prototype.query as (...args: unknown[]) => unknown
pg.Client.prototype.query = function (this: pg.Client, ...args: unknown[]) {
  statements++
  const first = args[0] as string | { text?: string } | undefined
  const text = typeof first === 'string' ? first : first?.text ?? '?'
  if (tallying) kindStatements.set(text, (kindStatements.get(text) ?? 0) + 1)
  if (perStatement) {
    const t = timings.get(text) ?? { calls: 0, ms: 0, cpuMs: 0 }
    t.calls++
    timings.set(text, t)
  }
  return pgQuery.apply(this, args)
} as typeof pg.Client.prototype.query

const { buildApp } = await import(`${src}/app.js`) as typeof import('../../src/app.js')
const { defaultConfig } = await import(`${src}/config.js`) as typeof import('../../src/config.js')
const { openDatabase } = await import(`${src}/db/database.js`) as typeof import('../../src/db/database.js')

const now = new Date()
const samples = sampleData(file, 20000, now)
const handle = await openDatabase(databaseUrl)
// An editor's key for the workloads that write (`mixed-90-10`'s PATCHes), made in the copy.
const { generateKey } = await import(`${src}/lib/api-keys.js`) as typeof import('../../src/lib/api-keys.js')
const { createUserWithKey } = await import(`${src}/repositories/users.js`) as typeof import('../../src/repositories/users.js')
const { withTransaction } = await import(`${src}/db/unit-of-work.js`) as typeof import('../../src/db/unit-of-work.js')
const key = generateKey()
await withTransaction(handle.db, (trx) => createUserWithKey(trx, 'editor', key, '2026-01-01 00:00:00'))
const scenario = realScenarios(samples, key, now, seed).find((s) => s.key === workload)
if (scenario === undefined) throw new Error(`no workload ${workload}`)
const app = await buildApp({ db: handle.db, config: defaultConfig({ databaseUrl, publicUrl: 'http://calendar.bench' }), now: () => now })
const answers: string[] = []
// Collections (V8's pauses on the main thread) while requests run: their number and time, the kinds apart.
const collections = { count: 0, ms: 0, major: 0, majorMs: 0 }
const gcObserver = new PerformanceObserver((list) => {
  for (const entry of list.getEntries()) {
    collections.count++
    collections.ms += entry.duration
    // kind 2: mark-sweep-compact (perf_hooks.constants.NODE_PERFORMANCE_GC_MAJOR)
    if (((entry as { detail?: { kind?: number } }).detail)?.kind === 2) {
      collections.major++
      collections.majorMs += entry.duration
    }
  }
})
gcObserver.observe({ entryTypes: ['gc'] })
try {
  // The event documents of this public URL, as the server fills them after it starts (the benchmark waits for them).
  const filled = performance.now()
  await (app as unknown as { fillEventDocuments: () => Promise<boolean> }).fillEventDocuments()
  console.log(`event documents filled in ${((performance.now() - filled) / 1000).toFixed(1)} s`)
  for (const [kind, n] of [['event-create', creates], ['event-update', patchesBefore]] as const) {
    const before = allScenarios(samples, key, now).find((s) => s.key === kind)
    for (let i = 0; i < n && before !== undefined; i++) {
      const req = before.next()
      const res = await app.inject({ method: req.method, url: req.path, payload: req.body, headers: { ...before.headers, ...req.headers } })
      if (res.statusCode !== before.expect) throw new Error(`${req.path}: ${res.statusCode} ${res.body.slice(0, 300)}`)
    }
    if (n > 0) console.log(`${n} ${kind} requests sent before the warm-up`)
  }
  // `--fill-after`: the documents those writes left missing stored before the warm-up (as server.ts has them stored once writes pause).
  if (argv.includes('--fill-after')) {
    const refill = performance.now()
    await (app as unknown as { writtenDocuments: { run: () => Promise<boolean> } }).writtenDocuments.run()
    console.log(`documents missing after the writes filled in ${((performance.now() - refill) / 1000).toFixed(1)} s`)
  }
  const kinds = new Map<string, { n: number; cpuMs: number; statements: number }>()
  const lastRead = new Map<string, number>()
  let patches = 0
  const gaps = new Map<string, number[]>()
  const run = async (n: number, keep: boolean) => {
    const cpu = process.cpuUsage()
    const before = statements
    Object.assign(collections, { count: 0, ms: 0, major: 0, majorMs: 0 })
    const started = performance.now()
    for (let i = 0; i < n; i++) {
      const req = scenario.next()
      if (skipWrites && req.method !== 'GET') continue
      const kind = kindOf(req.method, req.path)
      const one = byKind && keep ? process.cpuUsage() : undefined
      const statementsBefore = statements
      tallying = keep && kind === opt('kind-statements')
      if (req.method !== 'GET') patches++
      else if (kind.startsWith('list:') && keep) {
        const seen = lastRead.get(req.path)
        if (seen !== undefined) {
          const g = gaps.get(kind) ?? []
          g.push(patches - seen)
          gaps.set(kind, g)
        }
      }
      if (req.method === 'GET') lastRead.set(req.path, patches)
      const res = await app.inject({ method: req.method, url: req.path, ...(req.body === undefined ? {} : { payload: req.body }), ...(req.headers === undefined ? {} : { headers: req.headers }) })
      if (res.statusCode !== 200 && res.statusCode !== 404) throw new Error(`${req.path}: ${res.statusCode} ${res.body.slice(0, 300)}`)
      if (keep && dump !== undefined && req.method === 'GET') {
        answers.push(JSON.stringify([req.path, res.statusCode, res.headers['x-total'], res.headers['x-total-pages'], res.headers.link, res.body]))
      }
      if (one !== undefined) {
        const used = process.cpuUsage(one)
        const k = kinds.get(kind) ?? { n: 0, cpuMs: 0, statements: 0 }
        k.n++
        k.cpuMs += (used.user + used.system) / 1000
        k.statements += statements - statementsBefore
        kinds.set(kind, k)
      }
    }
    const used = process.cpuUsage(cpu)
    // The observer is told at the end of a turn: one more turn so that the last collections are counted.
    await new Promise((resolve) => setImmediate(resolve))
    return {
      cpuMs: (used.user + used.system) / 1000 / n, wallMs: (performance.now() - started) / n, statements: (statements - before) / n,
      gc: `${collections.count} collections ${collections.ms.toFixed(0)} ms (${collections.major} mark-compacts ${collections.majorMs.toFixed(0)} ms)`,
    }
  }
  const w = await run(warm, false)
  timings.clear()
  // `--profile FILE`: a CPU profile of the measured requests only (open it in Chrome's DevTools).
  const session = profile === undefined ? undefined : new Session()
  if (session !== undefined) {
    session.connect()
    await session.post('Profiler.enable')
    await session.post('Profiler.start')
  }
  // `--heap-profile FILE`: where the measured requests allocate (V8's sampling heap profiler, every 32 kB on average).
  const heapSession = heapProfile === undefined ? undefined : new Session()
  if (heapSession !== undefined) {
    heapSession.connect()
    await heapSession.post('HeapProfiler.enable')
    await heapSession.post('HeapProfiler.startSampling', { samplingInterval: 32768, includeObjectsCollectedByMajorGC: true, includeObjectsCollectedByMinorGC: true })
  }
  const m = await run(requests, true)
  if (session !== undefined && profile !== undefined) {
    writeFileSync(profile, JSON.stringify((await session.post('Profiler.stop')).profile))
    session.disconnect()
  }
  if (heapSession !== undefined && heapProfile !== undefined) {
    writeFileSync(heapProfile, JSON.stringify((await heapSession.post('HeapProfiler.stopSampling')).profile))
    heapSession.disconnect()
  }
  console.log(`${workload} ${src}: warm ${warm} (${w.cpuMs.toFixed(2)} ms CPU, ${w.statements.toFixed(2)} statements a request), `
    + `measured ${requests}: ${m.cpuMs.toFixed(3)} ms CPU, ${m.wallMs.toFixed(3)} ms wall, ${m.statements.toFixed(2)} statements a request; ${m.gc}`)
  if (byKind) {
    for (const [kind, k] of [...kinds].sort((a, b) => b[1].cpuMs - a[1].cpuMs)) {
      const g = gaps.get(kind) ?? []
      const within = (m: number) => g.filter((x) => x <= m).length
      console.log(`  ${kind.padEnd(16)} ${String(k.n).padStart(5)} requests, ${(k.cpuMs / k.n).toFixed(3)} ms CPU each, ${(k.cpuMs / requests).toFixed(3)} ms of a request's mean, `
        + `${(k.statements / k.n).toFixed(2)} statements; URL read before in the run: ${g.length} (0 PATCHes since: ${within(0)}, ≤128: ${within(128)}, ≤512: ${within(512)})`)
    }
  }
  for (const [sql, n] of [...kindStatements].sort((a, b) => b[1] - a[1]).slice(0, 15)) console.log(`  ${String(n).padStart(6)}  ${sql.replace(/\s+/g, ' ').slice(0, 200)}`)
  if (perStatement) {
    let all = 0
    let allCpu = 0
    for (const t of timings.values()) {
      all += t.ms
      allCpu += t.cpuMs
    }
    console.log(`  ${(all / requests).toFixed(3)} ms/req in statements (wall), ${(allCpu / requests).toFixed(3)} ms/req of the thread's CPU, all together`)
    const top = [...timings.entries()].sort((a, b) => b[1].cpuMs - a[1].cpuMs || b[1].calls - a[1].calls).slice(0, 12)
    for (const [sql, t] of top) {
      console.log(`  ${(t.cpuMs / requests).toFixed(3)} ms CPU/req (wall ${(t.ms / requests).toFixed(3)})  ${(t.calls / requests).toFixed(2)} calls/req  ${sql.replace(/\s+/g, ' ').slice(0, 220)}`)
    }
  }
  if (dump !== undefined) writeFileSync(dump, `${answers.join('\n')}\n`)
} finally {
  gcObserver.disconnect()
  await app.close()
  await handle.close()
}
