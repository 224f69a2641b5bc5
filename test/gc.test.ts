/**
 * The server survives garbage collection of many prepared statements (issue 13). better-sqlite3 up to
 * 12.x, built against Node.js 24.19 or later, aborted the process (SIGABRT, `Assertion failed: (env) !=
 * nullptr` in `node::RemoveEnvironmentCleanupHook`, from `Statement::~Statement`) when a collection took
 * a statement at the wrong moment; better-sqlite3 13 (Node-API) does not. CI runs this on every Node.js
 * line it tests.
 *
 * The real server runs as a child process (`--expose-gc`) over a database file, with test/helpers/gc-probe.ts
 * loaded beside it to count prepared and collected statements and to force collections on request. Thousands
 * of list requests, each with another combination of filters (another SQL text), overflow the server's cache
 * of prepared statements, so the statements it drops become garbage; after each batch the test forces
 * collections. Then the server still answers (the seeded records, exactly), still writes, and exits 0 on
 * SIGTERM.
 */
import t from 'tap'
import type { Test } from 'tap'
import { spawn, type ChildProcess } from 'node:child_process'
import { join } from 'node:path'
import { openDatabase } from '../src/db/database.js'
import { generateKey } from '../src/lib/api-keys.js'
import { createUserWithKey } from '../src/repositories/users.js'
import { withTransaction } from '../src/db/unit-of-work.js'
import { contractProblems } from './helpers/contract.js'
import type { GcReport } from './helpers/gc-probe.js'
import { freePort } from './helpers/net.js'
import { TYPESCRIPT } from './helpers/typescript.js'

const ROOT = new URL('..', import.meta.url).pathname
const API = '/calendar/events/v1'
/** Requests at once; every one is a list with its own combination of filters. */
const CONCURRENCY = 4
const BATCH = 256
const REQUEST_TIMEOUT_MS = 15_000

type Json = Record<string, unknown>

function isJson(value: unknown): value is Json {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}

interface Server {
  child: ChildProcess
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>
  stderr(): string
  /** Forces `rounds` rounds of collections in the server and returns the probe's counts. */
  collect(rounds: number): Promise<GcReport>
}

async function startServer(t: Test, file: string, port: number): Promise<Server> {
  const child = spawn(process.execPath, ['--expose-gc', ...TYPESCRIPT, '--import', './test/helpers/gc-probe.ts', 'src/server.ts'], {
    cwd: ROOT,
    // No NODE_V8_COVERAGE: coverage counts the test processes only (typescript-loader.ts).
    env: { ...process.env, DATABASE_URL: file, PORT: String(port), HOST: '127.0.0.1', LOG_LEVEL: 'silent', PUBLIC_URL: 'http://calendar.test', NODE_OPTIONS: '', NODE_V8_COVERAGE: undefined },
    stdio: ['ignore', 'pipe', 'pipe', 'ipc'],
  })
  t.teardown(() => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL')
  })
  let out = ''
  let err = ''
  child.stderr?.on('data', (chunk: Buffer) => { err += chunk.toString() })
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => {
    child.once('exit', (code, signal) => resolve({ code, signal }))
  })
  await within(new Promise<void>((resolve, reject) => {
    child.stdout?.on('data', (chunk: Buffer) => {
      out += chunk.toString()
      if (out.includes('listening on')) resolve()
    })
    void exited.then(({ code, signal }) => reject(new Error(`the server exited before listening (${code ?? signal}): ${err}`)))
  }), 30_000, () => `the server did not listen within 30 s: ${err}`)
  const collect = (rounds: number) => within(new Promise<GcReport>((resolve, reject) => {
    child.once('message', (message: unknown) => {
      if (isJson(message) && typeof message.prepared === 'number' && typeof message.collected === 'number' && typeof message.heapUsed === 'number') {
        resolve({ prepared: message.prepared, collected: message.collected, heapUsed: message.heapUsed })
      } else {
        reject(new Error(`unexpected message from the probe: ${JSON.stringify(message)}`))
      }
    })
    void exited.then(({ code, signal }) => reject(new Error(`the server died (${code ?? signal}): ${err.slice(0, 2000)}`)))
    child.send({ collect: rounds })
  }), 60_000, () => `no answer from the probe within 60 s: ${err}`)
  return { child, exited, stderr: () => err, collect }
}

/** `promise`, or a rejection after `ms` (the timer never outlives the wait). */
async function within<T>(promise: Promise<T>, ms: number, message: () => string): Promise<T> {
  let timer: NodeJS.Timeout | undefined
  try {
    return await Promise.race([promise, new Promise<never>((_resolve, reject) => { timer = setTimeout(() => reject(new Error(message())), ms) })])
  } finally {
    clearTimeout(timer)
  }
}

/** One request; the answer must keep the contract. */
async function call(port: number, key: string, method: string, path: string, body?: Json): Promise<{ status: number; body: unknown; problems: string[] }> {
  const res = await fetch(`http://127.0.0.1:${port}${API}${path}`, {
    method,
    headers: { authorization: `Bearer ${key}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
  })
  const text = await res.text()
  const problems = contractProblems(method, `${API}${path}`, { statusCode: res.status, headers: Object.fromEntries(res.headers), body: text })
  return { status: res.status, body: text === '' ? undefined : JSON.parse(text), problems }
}

async function created(t: Test, port: number, key: string, path: string, body: Json): Promise<number> {
  const res = await call(port, key, 'POST', path, body)
  t.equal(res.status, 201, `POST ${path}`)
  t.same(res.problems, [], `POST ${path} keeps the contract`)
  if (!isJson(res.body) || typeof res.body.id !== 'number') throw new Error(`POST ${path}: no id in ${JSON.stringify(res.body)}`)
  return res.body.id
}

/** The ids of an event list answer, in order. */
function eventIds(body: unknown): unknown[] {
  return isJson(body) && Array.isArray(body.events) ? body.events.map((e) => (isJson(e) ? e.id : undefined)) : []
}

t.test('thousands of statements prepared, dropped and collected: the server still answers, writes and stops cleanly', async (t) => {
  const file = join(t.testdir(), 'calendar.db')
  const key = generateKey()
  const seed = await openDatabase(file)
  try {
    await withTransaction(seed.db, (trx) => createUserWithKey(trx, 'editor', key, '2026-01-01 00:00:00'))
  } finally {
    await seed.close()
  }
  const port = await freePort()
  const server = await startServer(t, file, port)

  // Records every filter below can find: the year 2030, whatever today is.
  const category = await created(t, port, key, '/categories', { name: 'Jazz' })
  const tag = await created(t, port, key, '/tags', { name: 'Outdoor' })
  const venue = await created(t, port, key, '/venues', { venue: 'Volkshaus', city: 'Zürich' })
  const organizer = await created(t, port, key, '/organizers', { organizer: 'Jazzclub' })
  const events: number[] = []
  for (const day of ['03', '10', '17']) {
    events.push(await created(t, port, key, '/events', {
      title: `Concert on 2030-06-${day}`, start_date: `2030-06-${day} 19:00:00`, end_date: `2030-06-${day} 22:00:00`,
      categories: [category], tags: [tag], venue: [venue], organizer: [organizer],
    }))
  }

  // Each filter adds a condition to the SQL: every combination is a statement of its own.
  const filters: Array<[string, string]> = [
    ['start_date', '2030-01-01'], ['end_date', '2030-12-31'], ['starts_before', '2030-12-01'], ['starts_after', '2029-12-31'],
    ['ends_before', '2031-01-01'], ['ends_after', '2030-01-01'], ['search', 'concert'], ['categories', String(category)],
    ['tags', String(tag)], ['venue', String(venue)], ['organizer', String(organizer)], ['featured', 'false'],
  ]
  const combinations = 2 ** filters.length
  const before = await server.collect(1)
  let bad = 0
  const firstBad: string[] = []
  for (let start = 0; start < combinations; start += BATCH) {
    const masks = Array.from({ length: Math.min(BATCH, combinations - start) }, (_v, i) => start + i)
    const workers = Array.from({ length: CONCURRENCY }, async (_v, w) => {
      for (let i = w; i < masks.length; i += CONCURRENCY) {
        const mask = masks[i] ?? 0
        const query = new URLSearchParams(filters.filter((_f, bit) => (mask & (1 << bit)) !== 0))
        const res = await call(port, key, 'GET', `/events?${query}`)
        if (res.status !== 200 || res.problems.length > 0) {
          bad += 1
          if (firstBad.length < 3) firstBad.push(`${query}: ${res.status} ${res.problems.join('; ')}`)
        }
      }
    })
    await Promise.all(workers)
    await server.collect(2)
  }
  const after = await server.collect(3)
  t.equal(bad, 0, `${combinations} lists, each with other filters, answer 200 and keep the contract ${firstBad.join(' | ')}`)
  const prepared = after.prepared - before.prepared
  const collected = after.collected - before.collected
  // Combinations the SQL reads alike share a statement (a link filter's total and page are one statement).
  t.ok(prepared >= 2000, `the server prepared ${prepared} statements (at least twice the 1,000 it keeps)`)
  t.ok(collected >= 1000, `garbage collection took ${collected} of them (the server keeps at most 1,000)`)
  t.comment(`gc: ${combinations} lists, ${prepared} statements prepared, ${collected} collected, heap ${(after.heapUsed / 2 ** 20).toFixed(1)} MB`)

  // The server still reads exactly what was written, and still writes.
  const all = await call(port, key, 'GET', `/events?start_date=2030-01-01&end_date=2030-12-31&categories=${category}&venue=${venue}`)
  t.equal(all.status, 200)
  t.same(all.problems, [])
  t.same(eventIds(all.body), events, 'the three seeded events, in start order')
  const late = await created(t, port, key, '/events', { title: 'After the collections', start_date: '2030-07-01 19:00:00', end_date: '2030-07-01 21:00:00', categories: [category] })
  const read = await call(port, key, 'GET', `/events/${late}`)
  t.equal(read.status, 200, 'a write after the collections reads back')
  t.match(read.body, { id: late, title: 'After the collections' })

  server.child.kill('SIGTERM')
  const exit = await within(server.exited, 20_000, () => `the server did not exit within 20 s of SIGTERM: ${server.stderr()}`)
  t.same(exit, { code: 0, signal: null }, 'SIGTERM: exits 0, no abort')
  t.notMatch(server.stderr(), /Assertion failed|Segmentation|Aborted/, 'nothing on stderr about a native crash')
})
