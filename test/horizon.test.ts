/**
 * The horizon job (src/horizon.ts, repositories/occurrence-horizon.ts; CONTRACT §17): with the clock moved
 * forward a year, the unbounded series' rows reach the new horizon (exactly the expansion's set, none
 * duplicated), bounded series and single events are untouched, the change log and the events' versions are
 * unchanged, and a second run adds nothing. Two nodes (two processes on one database: one SQLite file, one
 * PostgreSQL schema) running it at once leave exactly the expected rows, each series moved once. A series
 * written while the job expands it is left to its write. A database that cannot serve (a lock held past the
 * timeout) fails a run with an error the server retries on; the next run does the work. A server process moves
 * the horizon when it starts, and stops on SIGTERM with the job.
 */
import SQLite from 'better-sqlite3'
import { spawn } from 'node:child_process'
import pg from 'pg'
import t, { type Test } from 'tap'
import { join } from 'node:path'
import { openDatabase } from '../src/db/database.js'
import { isDatabaseUnavailable } from '../src/db/faults.js'
import type { Database } from '../src/db/schema.js'
import { withTransaction } from '../src/db/unit-of-work.js'
import { horizonAt, moveHorizons, scheduleHorizon, type HorizonRun } from '../src/horizon.js'
import { checkRecurrence, expandSeries } from '../src/lib/recurrence.js'
import { extendSeries, occurrencesToAdd, seriesBehind } from '../src/repositories/occurrence-horizon.js'
import { API, NOW, build, type Built } from './helpers/build.js'
import { TEST_ENGINE } from './helpers/database.js'
import { freePort } from './helpers/net.js'
import { startServer } from './helpers/server.js'
import { TYPESCRIPT } from './helpers/typescript.js'

const ROOT = new URL('..', import.meta.url).pathname
import type { Kysely } from 'kysely'

const DAY = 86_400_000

interface Rows { occurrence: string; start_utc: string; end_utc: string }

async function rowsOf(db: Kysely<Database>, id: number): Promise<Rows[]> {
  return db.selectFrom('event_occurrences').select(['occurrence', 'start_utc', 'end_utc']).where('event_id', '=', id).orderBy('start_utc').orderBy('occurrence').execute()
}

/** The rows an event's series should have at `horizon`, from its row. */
async function expected(db: Kysely<Database>, id: number, horizon: string): Promise<Rows[]> {
  const row = await db.selectFrom('events').selectAll().where('id', '=', id).executeTakeFirstOrThrow()
  if (row.recurrence === null) throw new Error(`event ${id} is no series`)
  const allDay = Number(row.all_day) === 1
  const checked = checkRecurrence(JSON.parse(row.recurrence) as { rule: string | null; rdates: string[]; exdates: string[] }, allDay)
  if ('refused' in checked) throw new Error(checked.refused)
  const all = expandSeries({ timezone: row.timezone, allDay, start: row.start_date, end: row.end_date, startUtc: row.start_utc, endUtc: row.end_utc }, checked, horizon)
  if ('refused' in all) throw new Error(all.refused)
  return all.map((o) => ({ occurrence: o.id, start_utc: o.startUtc, end_utc: o.endUtc }))
}

async function changeCount(db: Kysely<Database>): Promise<number> {
  return Number((await db.selectFrom('changes').select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow()).n)
}

interface Clocked { built: Built; editor: { authorization: string }; clock: { now: Date } }

async function setup(t: Test, file?: string): Promise<Clocked> {
  const clock = { now: NOW }
  const built = await build(t, { clock: () => clock.now, ...(file === undefined ? {} : { file }) })
  return { built, editor: await built.auth('editor'), clock }
}

async function create(s: Clocked, body: Record<string, unknown>): Promise<{ id: number; etag: string }> {
  const res = await s.built.inject({ method: 'POST', url: `${API}/events`, headers: s.editor, payload: body })
  if (res.statusCode !== 201) throw new Error(`create answered ${res.statusCode}: ${res.body}`)
  return { id: res.json<{ id: number }>().id, etag: String(res.headers.etag) }
}

/** Unbounded series in several zones (DST changes within the year moved), one bounded, one single event. */
async function someSeries(s: Clocked): Promise<{ unbounded: number[]; bounded: number; single: number }> {
  const unbounded = [
    (await create(s, { title: 'Weekly in Berlin', timezone: 'Europe/Berlin', start_date: '2026-06-16 19:00:00', end_date: '2026-06-16 20:30:00', recurrence: { rule: 'FREQ=WEEKLY;BYDAY=TU,TH', exdates: ['2031-06-19 19:00:00'], rdates: [] } })).id,
    (await create(s, { title: 'Daily in New York', timezone: 'America/New_York', start_date: '2026-06-20 02:30:00', end_date: '2026-06-20 03:00:00', recurrence: { rule: 'FREQ=DAILY' } })).id,
    (await create(s, { title: 'Last Friday in Zurich', timezone: 'Europe/Zurich', start_date: '2026-06-26 19:00:00', end_date: '2026-06-26 21:00:00', recurrence: { rule: 'FREQ=MONTHLY;BYDAY=-1FR' } })).id,
    (await create(s, { title: 'Yearly festival', all_day: true, timezone: 'Europe/Vienna', start_date: '2026-07-18', end_date: '2026-07-19', recurrence: { rule: 'FREQ=YEARLY', exdates: ['2027-07-18'] } })).id,
  ]
  const bounded = (await create(s, { title: 'Ten Mondays', timezone: 'Europe/Berlin', start_date: '2026-06-22 10:00:00', end_date: '2026-06-22 11:00:00', recurrence: { rule: 'FREQ=WEEKLY;COUNT=10' } })).id
  const single = (await create(s, { title: 'Once', start_date: '2026-07-01 18:00:00', end_date: '2026-07-01 19:00:00' })).id
  return { unbounded, bounded, single }
}

t.test('a year later: rows reach the new horizon, none duplicated, nothing else changed, the change log untouched', async (t) => {
  const s = await setup(t)
  const { db, config } = s.built
  const { unbounded, bounded, single } = await someSeries(s)
  const days = config.recurrenceHorizonDays
  for (const id of unbounded) t.strictSame(await rowsOf(db, id), await expected(db, id, horizonAt(NOW, days)), `series ${id}: its rows when written`)
  const before = { changes: await changeCount(db), bounded: await rowsOf(db, bounded), single: await rowsOf(db, single) }
  const etags = await Promise.all([...unbounded, bounded, single].map(async (id) => (await s.built.inject({ url: `${API}/events/${id}` })).headers.etag))

  s.clock.now = new Date(NOW.getTime() + 365 * DAY)
  const horizon = horizonAt(s.clock.now, days)
  const run = await moveHorizons(db, s.clock.now, days)
  t.equal(run.series, unbounded.length, 'every unbounded series moved')
  t.equal(run.lost, 0)
  t.ok(run.occurrences > 365 + 104, `occurrences added: ${run.occurrences}`)
  for (const id of unbounded) {
    const rows = await rowsOf(db, id)
    t.strictSame(rows, await expected(db, id, horizon), `series ${id}: exactly the expansion to the new horizon`)
    t.equal(new Set(rows.map((r) => r.occurrence)).size, rows.length, 'no occurrence twice')
    t.ok(rows.every((r) => r.start_utc < horizon), 'none at or past the horizon')
    const through = await db.selectFrom('events').select('recurrence_through_utc').where('id', '=', id).executeTakeFirstOrThrow()
    t.equal(through.recurrence_through_utc, horizon, 'the horizon moved')
  }
  t.strictSame(await rowsOf(db, bounded), before.bounded, 'a bounded series is untouched')
  t.strictSame(await rowsOf(db, single), before.single, 'a single event is untouched')
  t.equal(await changeCount(db), before.changes, 'no change-log entry')
  const after = await Promise.all([...unbounded, bounded, single].map(async (id) => (await s.built.inject({ url: `${API}/events/${id}` })).headers.etag))
  t.strictSame(after, etags, 'no event\'s ETag changed')
  const changes = await s.built.inject({ url: `${API}/changes` })
  t.equal(changes.statusCode, 200)

  const again = await moveHorizons(db, s.clock.now, days)
  t.strictSame([again.series, again.occurrences], [0, 0], 'a second run at the same time has nothing to do')
  for (const id of unbounded) t.strictSame(await rowsOf(db, id), await expected(db, id, horizon), `series ${id}: unchanged by the second run`)
})

t.test('a series written while the job expands it is left to its write; the job takes it up again at its next run', async (t) => {
  const s = await setup(t)
  const { db, config } = s.built
  const id = (await create(s, { title: 'Weekly', timezone: 'Europe/Berlin', start_date: '2026-06-16 19:00:00', end_date: '2026-06-16 20:00:00', recurrence: { rule: 'FREQ=WEEKLY' } })).id
  s.clock.now = new Date(NOW.getTime() + 30 * DAY)
  const horizon = horizonAt(s.clock.now, config.recurrenceHorizonDays)
  const [stale] = await seriesBehind(db, horizon, undefined, 10)
  if (stale === undefined) throw new Error('the series is behind the horizon')
  const occurrences = occurrencesToAdd(stale, horizon)
  t.ok(occurrences.length >= 4, 'a month of Tuesdays to add')
  // The series changes: every Wednesday now.
  const patched = await s.built.inject({ method: 'PATCH', url: `${API}/events/${id}`, headers: s.editor, payload: { recurrence: { rule: 'FREQ=WEEKLY;BYDAY=WE' } } })
  t.equal(patched.statusCode, 200)
  const written = await rowsOf(db, id)
  t.strictSame(written, await expected(db, id, horizon), 'the write made the new rule\'s rows, to its own horizon')
  t.notOk(await withTransaction(db, (trx) => extendSeries(trx, stale, horizon, occurrences)), 'the swap is lost')
  t.strictSame(await rowsOf(db, id), written, 'and nothing of the old rule was inserted')
  s.clock.now = new Date(s.clock.now.getTime() + 30 * DAY)
  const run = await moveHorizons(db, s.clock.now, config.recurrenceHorizonDays)
  t.equal(run.series, 1, 'the next run moves it')
  t.strictSame(await rowsOf(db, id), await expected(db, id, horizonAt(s.clock.now, config.recurrenceHorizonDays)), 'with the rule as written')
})

t.test('two nodes running the job at once leave exactly the expected rows, each series moved once', async (t) => {
  const s = await setup(t, join(t.testdir(), 'calendar.db'))
  const { db, config } = s.built
  const ids: number[] = []
  const zones = ['Europe/Berlin', 'America/New_York', 'Australia/Lord_Howe', 'Asia/Kathmandu', 'UTC']
  for (let i = 0; i < 40; i++) {
    const zone = zones[i % zones.length] as string
    const rule = ['FREQ=DAILY', 'FREQ=WEEKLY;BYDAY=MO,FR', 'FREQ=MONTHLY;BYMONTHDAY=-1'][i % 3] as string
    ids.push((await create(s, { title: `Series ${i}`, timezone: zone, start_date: `2026-06-${String(16 + (i % 10)).padStart(2, '0')} 0${i % 10}:30:00`, end_date: `2026-06-${String(16 + (i % 10)).padStart(2, '0')} 0${i % 10}:45:00`, recurrence: { rule } })).id)
  }
  const changes = await changeCount(db)
  const later = new Date(NOW.getTime() + 200 * DAY)
  const horizon = horizonAt(later, config.recurrenceHorizonDays)
  // Both processes started and ready, then told to go at once.
  const nodes = [nodeRun(s.built.url, later, config.recurrenceHorizonDays), nodeRun(s.built.url, later, config.recurrenceHorizonDays)]
  await Promise.all(nodes.map((n) => n.ready))
  for (const n of nodes) n.go()
  const [a, b] = await Promise.all(nodes.map((n) => n.done)) as [HorizonRun, HorizonRun]
  t.equal(a.series + b.series, ids.length, `each series moved once (${a.series} by one node, ${b.series} by the other, ${a.lost + b.lost} swaps lost)`)
  for (const id of ids) t.strictSame(await rowsOf(db, id), await expected(db, id, horizon), `series ${id}: exactly the expected rows`)
  t.equal(await changeCount(db), changes, 'no change-log entry')
})

/** One node's run of the job, in a process of its own on the database at `url` (test/helpers/horizon-node.ts). */
interface NodeRun { ready: Promise<void>; go(): void; done: Promise<HorizonRun> }

function nodeRun(url: string, at: Date, days: number): NodeRun {
  const env: Record<string, string | undefined> = { ...process.env, DATABASE_URL: url, NODE_OPTIONS: '' }
  delete env.NODE_V8_COVERAGE
  const child = spawn(process.execPath, [...TYPESCRIPT, 'test/helpers/horizon-node.ts', at.toISOString(), String(days)], { cwd: ROOT, env, stdio: ['pipe', 'pipe', 'pipe'] })
  let stdout = ''
  let stderr = ''
  let readied: () => void = () => undefined
  const ready = new Promise<void>((resolve) => { readied = resolve })
  const timer = setTimeout(() => child.kill('SIGKILL'), 60_000)
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
    stdout += chunk
    if (stdout.startsWith('ready\n')) readied()
  })
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => { stderr += chunk })
  const done = new Promise<HorizonRun>((resolve, reject) => {
    child.on('error', reject)
    child.on('close', (code) => {
      clearTimeout(timer)
      readied()
      if (code === 0) resolve(JSON.parse(stdout.slice('ready\n'.length)) as HorizonRun)
      else reject(new Error(`a node's run exited ${code}: ${stderr}`))
    })
  })
  return { ready, go: () => child.stdin.end('go\n'), done }
}

/** Holds a write lock on `events` from another connection until the returned function is called. */
async function holdLock(url: string): Promise<() => Promise<void>> {
  if (TEST_ENGINE === 'postgres') {
    const client = new pg.Client({ connectionString: url.replace(/\?.*$/, '') })
    await client.connect()
    const schema = new URL(url).searchParams.get('schema') ?? 'public'
    await client.query('begin')
    await client.query(`lock table "${schema}".events in access exclusive mode`)
    return async () => {
      await client.query('rollback')
      await client.end()
    }
  }
  const other = new SQLite(url)
  other.exec('begin immediate')
  return async () => {
    other.exec('rollback')
    other.close()
  }
}

t.test('a database that cannot serve fails the run with an error the server retries on; the next run does the work', async (t) => {
  const s = await setup(t, join(t.testdir(), 'calendar.db'))
  const { config } = s.built
  const id = (await create(s, { title: 'Weekly', timezone: 'Europe/Berlin', start_date: '2026-06-16 19:00:00', end_date: '2026-06-16 20:00:00', recurrence: { rule: 'FREQ=WEEKLY' } })).id
  const handle = await openDatabase(s.built.url, { timeoutMs: 300 })
  t.teardown(() => handle.close())
  const later = new Date(NOW.getTime() + 60 * DAY)
  const before = await rowsOf(handle.db, id)
  const errors: unknown[] = []
  const release = await holdLock(s.built.url)
  const schedule = scheduleHorizon(handle.db, { now: () => later, days: config.recurrenceHorizonDays, onError: (e) => errors.push(e), everyMs: 3_600_000 })
  await schedule.runNow()
  await release()
  t.ok(errors.length >= 1, 'the run failed')
  t.ok(errors.every(isDatabaseUnavailable), 'as a database that cannot serve (retried by the server)')
  t.strictSame(await rowsOf(handle.db, id), before, 'nothing written')
  errors.length = 0
  await schedule.runNow()
  t.strictSame(errors, [], 'the next run succeeds')
  t.strictSame(await rowsOf(handle.db, id), await expected(handle.db, id, horizonAt(later, config.recurrenceHorizonDays)), 'and moves the series')
  await schedule.stop()
})

t.test('the server moves the horizon when it starts, and stops with the job on SIGTERM', async (t) => {
  // A series written by a clock long past: its rows end five years after 2000, far behind any real horizon.
  const clock = { now: new Date('2000-01-03T12:00:00Z') }
  const file = join(t.testdir(), 'calendar.db')
  const built = await build(t, { clock: () => clock.now, file })
  const editor = await built.auth('editor')
  const id = (await create({ built, editor, clock }, { title: 'Weekly since 2000', timezone: 'Europe/Berlin', start_date: '2000-01-03 19:00:00', end_date: '2000-01-03 20:00:00', recurrence: { rule: 'FREQ=WEEKLY' } })).id
  const through = async () => (await built.db.selectFrom('events').select('recurrence_through_utc').where('id', '=', id).executeTakeFirstOrThrow()).recurrence_through_utc
  const written = await through()
  t.ok(written !== null && written < '2005-02-01', `five years of rows when written: ${written ?? 'null'}`)
  const server = await startServer(t, built.url, await freePort(), { LOG_LEVEL: 'info' })
  // The server's first run begins as it listens; it logs what it moved (30 s at most).
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no horizon run logged: ${server.stdout().slice(-2000)}`)), 30_000)
    const look = () => {
      if (!server.stdout().includes('recurring series extended to the horizon')) return
      clearTimeout(timer)
      server.child.stdout?.off('data', look)
      resolve()
    }
    server.child.stdout?.on('data', look)
    look()
  })
  const moved = await through()
  t.ok(moved !== null && moved > new Date(Date.now() + (built.config.recurrenceHorizonDays - 2) * DAY).toISOString().replace('T', ' '), `moved to about now + the horizon days: ${moved ?? 'null'}`)
  t.strictSame(await rowsOf(built.db, id), await expected(built.db, id, moved ?? ''), 'with every occurrence up to it')
  server.child.kill('SIGTERM')
  t.strictSame((await server.exited).code, 0, 'and it stops on SIGTERM')
})
