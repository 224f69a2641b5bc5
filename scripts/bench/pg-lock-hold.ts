/**
 * How long a create holds PostgreSQL's write lock (issue 49): the schema's advisory lock every write transaction
 * takes (src/db/postgres-dialect.ts) is held from its grant to the commit, so creates/s across every node of a
 * cluster is at most 1,000 / (that hold in ms). The benchmark's `POST /events` bodies (scripts/bench/scenarios.ts)
 * sent in process (`inject`) to an app on a copy of the bench loader's data (schema `<--pg-schema>`, default
 * `pgw_lock`), `--in-flight` at a time, `--requests` counted after `--warm`, optionally through the delay proxy
 * (`--delay-ms`, scripts/bench/delay-proxy.ts). Timed where pg sends and answers them (`Client.prototype.query`
 * wrapped, as the client sees it): the lock's wait (sent → granted), its hold (granted → the commit answered), the
 * create's wall time (inject → answer), and the statements and round trips inside the lock and outside it (a
 * round trip: a statement sent while the connection has none in flight), every statement's kind inside and outside it,
 * and the CPU of this process and of the database's backends serving it (`/proc/<pid>/stat`: the database on this
 * machine) a create. A concurrent unit's tail sent as one text (the log lock to the commit) is timed whole. Printed,
 * never checked.
 *
 * CLI: node --import tsx scripts/bench/pg-lock-hold.ts [--events 2000] [--warm 50] [--requests 300] [--in-flight 1]
 *      [--delay-ms 0] [--pg-schema pgw_lock] [--database-url postgres://postgres@127.0.0.1:5432/test]
 *      [--profile FILE.cpuprofile] (the measured creates only, this process: the app and pg's client)
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { Session } from 'node:inspector/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import pg from 'pg'
import { buildApp } from '../../src/app.js'
import { defaultConfig } from '../../src/config.js'
import { openDatabase } from '../../src/db/database.js'
import { withTransaction } from '../../src/db/unit-of-work.js'
import { formatUtc } from '../../src/lib/dates.js'
import { generateKey } from '../../src/lib/api-keys.js'
import { createUserWithKey } from '../../src/repositories/users.js'
import { roundTripMs, startDelayProxy } from './delay-proxy.js'
import { buildDatabase } from './loader.js'
import { copyToPostgres, dropBenchSchema } from './postgres.js'
import { allScenarios, sampleData } from './scenarios.js'

const arg = (name: string, fallback: string) => {
  const i = process.argv.indexOf(`--${name}`)
  return i < 0 ? fallback : (process.argv[i + 1] as string)
}
const EVENTS = Number(arg('events', '2000'))
const WARM = Number(arg('warm', '50'))
const REQUESTS = Number(arg('requests', '300'))
const IN_FLIGHT = Number(arg('in-flight', '1'))
const DELAY = Number(arg('delay-ms', '0'))
const SCHEMA = arg('pg-schema', 'pgw_lock')
const URL = arg('database-url', 'postgres://postgres@127.0.0.1:5432/test')
const PROFILE = arg('profile', '')
const NOW = new Date()

/** A write transaction holding the lock on a connection: when it was granted, and its statements since (text, sent at). */
interface Held { grantedAt: number; sent: Array<{ text: string; at: number }> }
/**
 * The statements a write must run under the lock in a design where the lock is taken at the change log's position
 * (issue 49 (d)): the log's states look and its insert (with the outbox), the data version after, and the commit.
 */
const TAIL = /^(select "id", "language", "status", "author" from "(events|venues|organizers)"|select "id", "taxonomy", "language" from "terms"|with l as \(insert into changes|select \(select coalesce\(max\(position\), 0\) from changes\)|commit)/
const tails: number[] = []
let counting = false
const holds: number[] = []
/** The tails sent as one text (the lock to the commit): sent → answered, the lock's wait and its hold together. */
const oneTrip: number[] = []
const waits: number[] = []
const inside = { statements: 0, roundTrips: 0 }
const outside = { statements: 0, roundTrips: 0 }
const insideKinds = new Map<string, number>()
const outsideKinds = new Map<string, number>()
const held = new WeakMap<object, Held>()
/** The database server's processes serving this one's connections (the database must run on this machine). */
const backends = new Set<number>()
/** The CPU (ms, user + system) those backends spent so far. */
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
const inFlight = new WeakMap<object, number>()
type Query = (this: object, ...args: unknown[]) => unknown
const proto = pg.Client.prototype as unknown as { query: Query }
const original = proto.query
proto.query = function (this: object, ...args: unknown[]) {
  const pid = (this as { processID?: number | null }).processID
  if (typeof pid === 'number') backends.add(pid)
  const first = args[0]
  const text = typeof first === 'string' ? first : (first as { text?: string } | undefined)?.text ?? '?'
  const busy = inFlight.get(this) ?? 0
  inFlight.set(this, busy + 1)
  // The exclusive lock a create holds: the write lock before issue 49's concurrent creates, the log lock since (the writes lock shared is not timed).
  const lock = /pg_advisory_xact_lock\(/.test(text)
  const ends = /(^|;)\s*(commit|rollback)\s*$/i.test(text)
  const holding = held.get(this)
  if (counting) {
    const where = holding === undefined ? outside : inside
    where.statements++
    if (busy === 0) where.roundTrips++
    const kind = text.replace(/\s+/g, ' ').trim().slice(0, 80)
    const kinds = holding === undefined ? outsideKinds : insideKinds
    kinds.set(kind, (kinds.get(kind) ?? 0) + 1)
    if (holding !== undefined) holding.sent.push({ text: text.trim(), at: performance.now() })
  }
  const sent = performance.now()
  const done = () => {
    inFlight.set(this, (inFlight.get(this) ?? 1) - 1)
    const now = performance.now()
    if (lock && ends) {
      // The log lock, the append and the commit in one text (a concurrent unit's tail since pg-ratios): its wait and hold in one.
      if (counting) oneTrip.push(now - sent)
    } else if (lock) {
      held.set(this, { grantedAt: now, sent: [] })
      if (counting) waits.push(now - sent)
    } else if (ends && holding !== undefined) {
      held.delete(this)
      if (counting) {
        holds.push(now - holding.grantedAt)
        // From the first statement of the transaction's tail (walking back from the commit) to the commit answered.
        let i = holding.sent.length
        while (i > 0 && TAIL.test((holding.sent[i - 1] as { text: string }).text)) i--
        tails.push(now - (holding.sent[i]?.at ?? now))
      }
    }
  }
  const result = original.apply(this, args)
  if (result instanceof Promise) result.then(done, done)
  else done()
  return result
}

const dir = mkdtempSync(join(tmpdir(), 'calendar-pg-lock-'))
const file = join(dir, 'calendar.db')
await buildDatabase({ file, events: EVENTS, now: NOW, log: () => {} })
const samples = sampleData(file, EVENTS, NOW)
const directUrl = await copyToPostgres(file, URL, SCHEMA, () => {})
const proxy = DELAY > 0 ? await startDelayProxy(directUrl, DELAY) : undefined
const serverUrl = proxy?.url ?? directUrl
const rtt = await roundTripMs(serverUrl)
const handle = await openDatabase(serverUrl)
const key = generateKey()
await withTransaction(handle.db, (trx) => createUserWithKey(trx, 'editor', key, formatUtc(NOW), 'lock bench'))
const app = await buildApp({ db: handle.db, config: defaultConfig({ databaseUrl: serverUrl, publicUrl: 'http://calendar.bench' }) })
const create = allScenarios(samples, key, NOW).find((s) => s.key === 'event-create')
if (create === undefined) throw new Error('no event-create scenario')
const pct = (list: number[], p: number) => [...list].sort((a, b) => a - b)[Math.min(list.length - 1, Math.floor(p * list.length))] ?? NaN
const mean = (list: number[]) => list.reduce((a, b) => a + b, 0) / Math.max(1, list.length)
try {
  const statuses = new Map<number, number>()
  const walls: number[] = []
  const run = async (total: number) => {
    let left = total
    await Promise.all(Array.from({ length: IN_FLIGHT }, async () => {
      while (left-- > 0) {
        const r = create.next()
        const started = performance.now()
        const res = await app.inject({ method: r.method as 'POST', url: r.path, headers: create.headers, payload: r.body })
        if (counting) walls.push(performance.now() - started)
        statuses.set(res.statusCode, (statuses.get(res.statusCode) ?? 0) + 1)
      }
    }))
  }
  await run(WARM)
  statuses.clear()
  const session = PROFILE === '' ? undefined : new Session()
  if (session !== undefined) {
    session.connect()
    await session.post('Profiler.enable')
    await session.post('Profiler.start')
  }
  counting = true
  const dbCpu = databaseCpu()
  const cpu = process.cpuUsage()
  const started = performance.now()
  await run(REQUESTS)
  const wall = performance.now() - started
  const used = process.cpuUsage(cpu)
  const dbUsed = databaseCpu() - dbCpu
  counting = false
  if (session !== undefined) {
    writeFileSync(PROFILE, JSON.stringify((await session.post('Profiler.stop')).profile))
    session.disconnect()
  }
  const n = holds.length
  const holdMean = mean(holds)
  console.log(`${REQUESTS} creates, ${IN_FLIGHT} in flight, round trip ${rtt.toFixed(3)} ms (a bare statement${DELAY > 0 ? `, through the proxy at ${DELAY} ms` : ''});`
    + ` statuses ${[...statuses].map(([s, c]) => `${s}×${c}`).join(', ')}`)
  console.log(`  ${(REQUESTS / wall * 1000).toFixed(0)} creates/s, ${((used.user + used.system) / 1000 / REQUESTS).toFixed(2)} ms CPU of this process a create,`
    + ` ${(dbUsed / REQUESTS).toFixed(2)} ms of the database's (its ${backends.size} backends)`)
  console.log(`  create wall ms: mean ${mean(walls).toFixed(2)}, p50 ${pct(walls, 0.5).toFixed(2)}, p99 ${pct(walls, 0.99).toFixed(2)}`)
  console.log(`  lock hold ms (granted → commit answered, ${n} write transactions): mean ${holdMean.toFixed(2)}, p50 ${pct(holds, 0.5).toFixed(2)}, p99 ${pct(holds, 0.99).toFixed(2)}`
    + ` → at most ${(1000 / holdMean).toFixed(0)} creates/s on the cluster`)
  console.log(`  of it from the change log's first statement on (what a lock taken there would hold): mean ${mean(tails).toFixed(2)}, p99 ${pct(tails, 0.99).toFixed(2)}`
    + ` (${(100 * mean(tails) / holdMean).toFixed(0)} % of the hold) → at most ${(1000 / mean(tails)).toFixed(0)} creates/s`)
  console.log(`  lock wait ms (sent → granted): mean ${mean(waits).toFixed(2)}, p99 ${pct(waits, 0.99).toFixed(2)}; the hold is ${(100 * holdMean / mean(walls)).toFixed(0)} % of a create's wall time`)
  if (oneTrip.length > 0) console.log(`  the lock to the commit in one text (${oneTrip.length}): sent → answered ms mean ${mean(oneTrip).toFixed(2)}, p50 ${pct(oneTrip, 0.5).toFixed(2)}, p99 ${pct(oneTrip, 0.99).toFixed(2)} (the lock's wait and hold)`)
  console.log(`  a create: inside the lock ${(inside.statements / REQUESTS).toFixed(2)} statements in ${(inside.roundTrips / REQUESTS).toFixed(2)} round trips;`
    + ` outside it ${(outside.statements / REQUESTS).toFixed(2)} statements in ${(outside.roundTrips / REQUESTS).toFixed(2)} round trips (the lock's own statement counted outside)`)
  for (const [kind, c] of [...insideKinds].sort((a, b) => b[1] - a[1]).slice(0, 30)) console.log(`    ${(c / REQUESTS).toFixed(2)}  ${kind}`)
  console.log('  outside it:')
  for (const [kind, c] of [...outsideKinds].sort((a, b) => b[1] - a[1]).slice(0, 40)) console.log(`    ${(c / REQUESTS).toFixed(2)}  ${kind}`)
} finally {
  await app.close()
  await handle.close()
  proxy?.stop()
  await dropBenchSchema(URL, SCHEMA)
  rmSync(dir, { recursive: true, force: true })
}
