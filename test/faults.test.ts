/**
 * Database faults (CONTRACT §18), really injected into real servers: PostgreSQL connections terminated,
 * a PostgreSQL of the test's own stopped and started, a lock held elsewhere past CALENDAR_DATABASE_TIMEOUT_MS,
 * SQLite full, its file deleted or replaced under the server, a file the process may not write. The
 * process stays up, clients get 503 `rest_database_unavailable` with `Retry-After` (the contract's body),
 * nothing refused is written, everything acknowledged is, and the next requests succeed by themselves.
 * Every wait polls a condition with a bound; no sleep is an assertion of timing.
 */
import t, { type Test } from 'tap'
import { execFileSync, spawn } from 'node:child_process'
import { chmodSync, existsSync, mkdtempSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import pg from 'pg'
import SQLite from 'better-sqlite3'
import { buildApp } from '../src/app.js'
import { defaultConfig } from '../src/config.js'
import { openDatabase } from '../src/db/database.js'
import { withTransaction } from '../src/db/unit-of-work.js'
import { generateKey } from '../src/lib/api-keys.js'
import { createUserWithKey } from '../src/repositories/users.js'
import { SPEC } from './helpers/contract.js'
import { contractProblems } from './helpers/contract.js'

import { engineTest, TEST_ENGINE, freshDatabaseUrl } from './helpers/database.js'
import { build } from './helpers/build.js'
import { freePort } from './helpers/net.js'
import { apiKeyCommand, editorKey, startServer, type Server } from './helpers/server.js'
import { TYPESCRIPT } from './helpers/typescript.js'

const ROOT = new URL('..', import.meta.url).pathname
const API = '/calendar/events/v1'

interface Answer {
  status: number
  body: Record<string, unknown>
  retryAfter: string | null
}

/** A request to a child server, its answer checked against the contract. */
async function send(t: Test, base: string, key: string, method: string, path: string, body?: Record<string, unknown>): Promise<Answer> {
  const res = await fetch(`${base}${path}`, {
    method,
    headers: { authorization: `Bearer ${key}`, ...(body !== undefined ? { 'content-type': 'application/json' } : {}) },
    ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
    signal: AbortSignal.timeout(15_000),
  })
  const text = await res.text()
  const problems = contractProblems(method, `${API}${path}`, { statusCode: res.status, headers: Object.fromEntries(res.headers), body: text })
  if (problems.length > 0) t.fail(`${method} ${path} breaks the contract`, { problems, body: text.slice(0, 300) })
  const parsed: unknown = text === '' ? {} : JSON.parse(text)
  return { status: res.status, body: typeof parsed === 'object' && parsed !== null ? parsed as Record<string, unknown> : {}, retryAfter: res.headers.get('retry-after') }
}

async function probe(base: string, path: '/healthz' | '/readyz'): Promise<{ status: number; body: Record<string, unknown> }> {
  const res = await fetch(`${base.replace(API, '')}${path}`, { signal: AbortSignal.timeout(15_000) })
  return { status: res.status, body: await res.json() as Record<string, unknown> }
}

/** Polls `check` until it holds, at most `ms`; fails the test otherwise. */
async function until(t: Test, what: string, check: () => Promise<boolean> | boolean, ms = 15_000): Promise<void> {
  const deadline = Date.now() + ms
  for (;;) {
    if (await check()) return
    if (Date.now() > deadline) {
      t.fail(`${what}: not within ${ms} ms`)
      return
    }
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
}

function isUnavailable(t: Test, answer: Answer, what: string): void {
  t.equal(answer.status, 503, `${what}: 503`)
  t.equal(answer.body.code, 'rest_database_unavailable', `${what}: rest_database_unavailable`)
  t.ok(answer.retryAfter !== null && /^\d+$/.test(answer.retryAfter), `${what}: Retry-After`)
}

const alive = (server: Server): boolean => server.child.exitCode === null && server.child.signalCode === null

async function venueNames(url: string): Promise<string[]> {
  const handle = await openDatabase(url)
  try {
    const rows = await handle.db.selectFrom('venues').select('name').execute()
    return rows.map((r) => r.name)
  } finally {
    await handle.close()
  }
}

engineTest('postgres', t, 'PostgreSQL: the server\'s connections terminated, the process stays up and the next requests succeed', async (t) => {
  const base = await freshDatabaseUrl(t)
  const name = `calendar_faults_${process.pid}`
  const url = `${base}&application_name=${name}`
  const key = await editorKey(url)
  const server = await startServer(t, url, await freePort(), { DATABASE_POOL_SIZE: '4' })
  const admin = new pg.Client({ connectionString: base.replace(/\?.*$/, '') })
  await admin.connect()
  t.teardown(() => admin.end())
  const terminate = async () => (await admin.query('select pg_terminate_backend(pid) from pg_stat_activity where application_name = $1', [name])).rowCount
  t.equal((await send(t, server.base, key, 'POST', '/venues', { venue: 'before' })).status, 201)
  // Idle connections closed (as a restart, a pooler or a firewall does): the process ended within a second before.
  t.ok(((await terminate()) ?? 0) > 0, 'the server\'s connections were terminated')
  // Writes in flight while their connections are closed, and again.
  const acknowledged: string[] = []
  const refused: string[] = []
  const writes = Array.from({ length: 24 }, async (_, i) => {
    const answer = await send(t, server.base, key, 'POST', '/venues', { venue: `during ${i}` })
    if (answer.status === 201) acknowledged.push(`during ${i}`)
    else {
      isUnavailable(t, answer, `write ${i} while its connection closed`)
      refused.push(`during ${i}`)
    }
  })
  await terminate()
  await Promise.all(writes)
  await terminate()
  await until(t, 'a write succeeds again', async () => (await send(t, server.base, key, 'POST', '/venues', { venue: 'after' })).status === 201)
  t.ok(alive(server), 'the process is up')
  t.equal((await probe(server.base, '/readyz')).status, 200, 'ready again')
  const names = await venueNames(base)
  for (const v of acknowledged) t.ok(names.includes(v), `acknowledged ${v} is there`)
  for (const v of refused) t.notOk(names.includes(v), `refused ${v} was not written`)
  t.ok(names.includes('before'))
})

/** The PostgreSQL server binaries of this machine, if any. */
const PG_BIN = ['/usr/lib/postgresql/17/bin', '/usr/lib/postgresql/16/bin', '/usr/lib/postgresql/15/bin'].find((dir) => existsSync(join(dir, 'pg_ctl')))

engineTest('postgres', t, 'PostgreSQL stopped and started: 503 and readiness naming the database while it is down, then back without a restart', async (t) => {
  if (PG_BIN === undefined) {
    if (process.env.CI === 'true') t.fail('the PostgreSQL server binaries (initdb, pg_ctl) are missing: CI must have them')
    else t.pass('no PostgreSQL server binaries on this machine: not tried (outside CI)')
    return
  }
  const dir = mkdtempSync(join(tmpdir(), 'calendar-pg-'))
  const data = join(dir, 'data')
  const port = await freePort()
  const asPostgres = (args: string[]) => (process.getuid?.() === 0 ? ['runuser', ['-u', 'postgres', '--', ...args]] as const : [args[0] as string, args.slice(1)] as const)
  const run = (args: string[]) => {
    const [command, rest] = asPostgres(args)
    execFileSync(command, rest, { stdio: 'pipe', timeout: 60_000 })
  }
  if (process.getuid?.() === 0) execFileSync('chown', ['postgres:postgres', dir])
  run([join(PG_BIN, 'initdb'), '-D', data, '-A', 'trust', '-U', 'postgres', '--no-sync'])
  const start = () => run([join(PG_BIN, 'pg_ctl'), '-D', data, '-w', '-t', '30', '-l', join(dir, 'log'), '-o', `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c fsync=off`, 'start'])
  const stop = () => run([join(PG_BIN, 'pg_ctl'), '-D', data, '-w', '-t', '30', '-m', 'fast', 'stop'])
  start()
  t.teardown(() => {
    try {
      stop()
    } catch {
      // Already stopped.
    }
    rmSync(dir, { recursive: true, force: true })
  })
  const url = `postgres://postgres@127.0.0.1:${port}/postgres`
  const key = await editorKey(url)
  const server = await startServer(t, url, await freePort(), { CALENDAR_DATABASE_TIMEOUT_MS: '1000' })
  t.equal((await send(t, server.base, key, 'POST', '/venues', { venue: 'before' })).status, 201)
  const stoppedAt = Date.now()
  stop()
  isUnavailable(t, await send(t, server.base, key, 'POST', '/venues', { venue: 'while down' }), 'a write while PostgreSQL is down')
  isUnavailable(t, await send(t, server.base, key, 'GET', '/venues'), 'a read while PostgreSQL is down')
  const ready = await probe(server.base, '/readyz')
  t.equal(ready.status, 503, 'not ready')
  t.strictSame(ready.body.checks, { database: 'failed', migrations: 'ok' }, 'readiness names the database only')
  t.equal((await probe(server.base, '/healthz')).status, 200, 'alive')
  t.ok(alive(server), 'the process is up')
  start()
  const startedAt = Date.now()
  await until(t, 'a write succeeds once PostgreSQL is back', async () => (await send(t, server.base, key, 'POST', '/venues', { venue: 'after' })).status === 201)
  t.comment(`down ${startedAt - stoppedAt} ms; writes back ${Date.now() - startedAt} ms after PostgreSQL started`)
  t.equal((await probe(server.base, '/readyz')).status, 200, 'ready again')
  const names = await venueNames(url)
  t.notOk(names.includes('while down'), 'the refused write was not made')
  t.ok(names.includes('before') && names.includes('after'))
})

/**
 * Holds a lock on the database at `url` from another connection until the returned function is called: on
 * PostgreSQL `tables` locked in access exclusive mode, on SQLite a transaction begun with `sqliteBegin`.
 */
async function holdLock(url: string, tables: readonly string[], sqliteBegin: 'begin immediate' | 'begin exclusive'): Promise<() => Promise<void>> {
  if (TEST_ENGINE === 'postgres') {
    const other = new pg.Client({ connectionString: url.replace(/\?.*$/, '') })
    await other.connect()
    const schema = new URL(url).searchParams.get('schema') ?? 'public'
    await other.query('begin')
    await other.query(`lock table ${tables.map((table) => `"${schema}".${table}`).join(', ')} in access exclusive mode`)
    return async () => {
      await other.query('rollback')
      await other.end()
    }
  }
  const other = new SQLite(url)
  other.exec(sqliteBegin)
  return async () => {
    other.exec('rollback')
    other.close()
  }
}

t.test('a lock held elsewhere past CALENDAR_DATABASE_TIMEOUT_MS: 503 in bounded time, rolled back, never applied later', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'calendar-lock-'))
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  const url = await freshDatabaseUrl(t, join(dir, 'calendar.db'))
  const key = await editorKey(url)
  const server = await startServer(t, url, await freePort(), { CALENDAR_DATABASE_TIMEOUT_MS: '300' })
  t.equal((await send(t, server.base, key, 'POST', '/venues', { venue: 'before' })).status, 201)
  const release = await holdLock(url, ['venues'], 'begin immediate')
  // The lock is released after the answer, or after 10 s if none came (the old server waited for it).
  const released = new Promise<void>((resolve) => setTimeout(resolve, 10_000).unref())
  const began = Date.now()
  const answer = await Promise.race([send(t, server.base, key, 'POST', '/venues', { venue: 'behind the lock' }), released.then(() => undefined)])
  const took = Date.now() - began
  await release()
  t.ok(answer !== undefined, 'answered while the lock was held')
  if (answer !== undefined) isUnavailable(t, answer, 'a write behind the lock')
  t.ok(took < 5000, `answered in bounded time (${took} ms)`)
  t.equal((await send(t, server.base, key, 'POST', '/venues', { venue: 'after' })).status, 201, 'the next write succeeds')
  const names = await venueNames(url)
  t.notOk(names.includes('behind the lock'), 'the refused write was never applied')
  t.ok(alive(server))
})

engineTest('postgres', t, 'PostgreSQL: the write lock not taken within CALENDAR_DATABASE_TIMEOUT_MS is 503, and the connection goes back to the pool clean (no 500 after)', async (t) => {
  const url = await freshDatabaseUrl(t)
  // Two connections, so that the next writes surely reuse the ones the refused writes had.
  const handle = await openDatabase(url, { timeoutMs: 300, poolSize: 2 })
  const app = await buildApp({ db: handle.db, config: defaultConfig({ publicUrl: 'http://calendar.test' }), spec: SPEC })
  t.teardown(async () => {
    await app.close()
    await handle.close()
  })
  const key = generateKey()
  await withTransaction(handle.db, (trx) => createUserWithKey(trx, 'editor', key, '2026-01-01 00:00:00'))
  const write = async (name: string) => {
    const res = await app.inject({ method: 'POST', url: `${API}/venues`, headers: { authorization: `Bearer ${key}` }, payload: { venue: name } })
    const problems = contractProblems('POST', `${API}/venues`, res)
    if (problems.length > 0) t.fail('POST /venues breaks the contract', { problems })
    return res.statusCode
  }
  // Another node's write transaction holds the schema's write lock (postgres-dialect.ts) past the timeout.
  const other = new pg.Client({ connectionString: url.replace(/\?.*$/, '') })
  await other.connect()
  t.teardown(() => other.end())
  const schema = new URL(url).searchParams.get('schema') ?? 'public'
  await other.query('begin')
  await other.query(`select pg_advisory_xact_lock(hashtext('calendar-writes:' || $1::text))`, [schema])
  const refused = await Promise.all(['locked 1', 'locked 2', 'locked 3', 'locked 4'].map(write))
  t.same(refused, [503, 503, 503, 503], 'writes behind the lock: 503')
  await other.query('rollback')
  // One after the other (the pool's two connections each reused), so that only a connection's state can fail them.
  const after: number[] = []
  for (let i = 0; i < 6; i++) after.push(await write(`after ${i}`))
  t.same(after, after.map(() => 201), 'every write after it: 201 (no connection left inside an aborted transaction)')
  const read = await app.inject({ url: `${API}/venues` })
  t.equal(read.statusCode, 200, 'reads too')
  const names = await venueNames(url)
  t.notOk(names.some((n) => n.startsWith('locked')), 'the refused writes were not made')
  t.equal(names.filter((n) => n.startsWith('after')).length, 6)
})

engineTest('sqlite', t, 'SQLite full: writes 503 with Retry-After and SQLITE_FULL in the log, reads go on, writes work again with space', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'calendar-full-'))
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  const lines: string[] = []
  const s = await build(t, { file: join(dir, 'calendar.db'), config: { logLevel: 'warn' }, logStream: { write: (line) => { lines.push(line) } } })
  const editor = await s.auth('editor')
  const sqlite = s.sqlite()
  const pages = Number(sqlite.pragma('page_count', { simple: true }))
  sqlite.pragma(`max_page_count = ${pages + 2}`)
  let answer
  for (let i = 0; i < 200; i++) {
    answer = await s.inject({ method: 'POST', url: `${API}/venues`, headers: editor, payload: { venue: `venue ${i} ${'x'.repeat(2000)}`, description: 'y'.repeat(4000) } })
    if (answer.statusCode !== 201) break
  }
  t.equal(answer?.statusCode, 503, 'a write on a full database is 503')
  t.equal(answer?.json().code, 'rest_database_unavailable')
  t.ok(answer?.headers['retry-after'], 'Retry-After')
  t.ok(lines.some((line) => line.includes('SQLITE_FULL')), 'the log names SQLITE_FULL')
  t.notOk(lines.some((line) => line.includes('no transaction is active')), 'not a failed rollback')
  t.equal((await s.inject({ method: 'GET', url: `${API}/venues`, headers: editor })).statusCode, 200, 'reads go on')
  sqlite.pragma('max_page_count = 1073741823')
  t.equal((await s.inject({ method: 'POST', url: `${API}/venues`, headers: editor, payload: { venue: 'with space' } })).statusCode, 201, 'writes work again')
})

for (const how of ['deleted', 'replaced'] as const) {
  engineTest('sqlite', t, `SQLite: the file ${how} under a running server is noticed: not ready, writes 503, the path logged, nothing written to it`, async (t) => {
    const dir = mkdtempSync(join(tmpdir(), 'calendar-lost-'))
    t.teardown(() => rmSync(dir, { recursive: true, force: true }))
    const file = join(dir, 'calendar.db')
    const key = await editorKey(file)
    const server = await startServer(t, file, await freePort(), { LOG_LEVEL: 'info' })
    t.equal((await send(t, server.base, key, 'POST', '/venues', { venue: 'before' })).status, 201)
    if (how === 'deleted') rmSync(file)
    else {
      // Another database (a restore) moved over the path.
      const other = join(dir, 'restored.db')
      const restored = new SQLite(other)
      restored.exec('create table restored (x)')
      restored.close()
      renameSync(other, file)
    }
    const lostAt = Date.now()
    await until(t, 'readiness says 503', async () => (await probe(server.base, '/readyz')).status === 503, 10_000)
    t.comment(`noticed within ${Date.now() - lostAt} ms`)
    t.strictSame((await probe(server.base, '/readyz')).body.checks, { database: 'failed', migrations: 'ok' }, 'readiness names the database')
    isUnavailable(t, await send(t, server.base, key, 'POST', '/venues', { venue: 'into the lost file' }), 'a write')
    t.ok(alive(server), 'the process is up')
    await until(t, 'the log names the path', () => server.stdout().includes(file), 5000)
    const wal = `${file}-wal`
    t.ok(!existsSync(wal) || statSync(wal).size === 0, 'no WAL left behind for the file now at the path')
    if (how === 'replaced') {
      server.child.kill('SIGTERM')
      await server.exited
      const reopened = new SQLite(file)
      t.strictSame(reopened.prepare("select name from sqlite_master where type = 'table'").all(), [{ name: 'restored' }], 'the restored file is as it was')
      reopened.close()
    }
  })
}

engineTest('sqlite', t, 'SQLite: a database file the process may not write is refused at start, naming the path', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'calendar-readonly-'))
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  const file = join(dir, 'calendar.db')
  await editorKey(file)
  // The folder writable by anyone, the file only by its owner (root): the server runs as another user.
  chmodSync(dir, 0o777)
  chmodSync(file, 0o644)
  writeFileSync(join(dir, 'marker'), '')
  const child = spawn('runuser', ['-u', 'postgres', '--', process.execPath, ...TYPESCRIPT, 'src/server.ts'], {
    cwd: ROOT, env: { ...process.env, DATABASE_URL: file, PORT: String(await freePort()), HOST: '127.0.0.1', LOG_LEVEL: 'silent', NODE_OPTIONS: '', NODE_V8_COVERAGE: undefined },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  t.teardown(() => { if (child.exitCode === null) child.kill('SIGKILL') })
  let stderr = ''
  child.stderr.on('data', (chunk: Buffer) => { stderr += chunk.toString() })
  child.stdout.resume()
  const code = await new Promise<number | null>((resolve) => {
    const timer = setTimeout(() => resolve(null), 30_000)
    child.once('exit', (c) => { clearTimeout(timer); resolve(c) })
  })
  t.ok(code !== null && code !== 0, `exits non-zero (${code})`)
  t.match(stderr, file, 'names the path')
  t.match(stderr, /may not be written/, 'says why')
}, { skip: process.getuid?.() !== 0 && 'as root only (the server runs as another user)' })

t.test('the key command waits at most CALENDAR_DATABASE_TIMEOUT_MS for a locked database, then says so and exits non-zero', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'calendar-key-'))
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  const url = await freshDatabaseUrl(t, join(dir, 'calendar.db'))
  await editorKey(url)
  const release = await holdLock(url, ['users', 'api_keys'], 'begin exclusive')
  const began = Date.now()
  const result = await apiKeyCommand(url, ['create', '--role', 'editor'], { CALENDAR_DATABASE_TIMEOUT_MS: '500' })
  const took = Date.now() - began
  await release()
  t.not(result.code, 0, 'exits non-zero')
  t.match(result.stderr, /waited/i, 'says what it waited for')
  t.ok(took < 15_000, `within a bounded time (${took} ms)`)
})


t.test('a committed write is answered 2xx: nothing after the commit (a read failing on its connection) turns it into an error', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'calendar-answer-'))
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  const url = await freshDatabaseUrl(t, join(dir, 'calendar.db'))
  // The connection fails for the first read of a record in a request once its unit of work has appended its
  // changes (the last thing before the commit): a read back after the commit met it; a read inside the unit
  // of work comes before it.
  let armed = false
  const failing = TEST_ENGINE === 'postgres' ? { code: '08006', message: 'connection failure' } : { code: 'SQLITE_IOERR', message: 'disk I/O error' }
  const handle = await openDatabase(url, {
    log: ({ sql }) => {
      if (/insert into "?changes"?/.test(sql)) armed = true
      else if (armed && /from "?(venues|terms|events)"?/.test(sql)) {
        armed = false
        throw Object.assign(new Error(failing.message), { code: failing.code })
      }
    },
  })
  const app = await buildApp({ db: handle.db, config: defaultConfig({ publicUrl: 'http://calendar.test' }), spec: SPEC })
  t.teardown(async () => {
    await app.close()
    await handle.close()
  })
  const key = generateKey()
  await withTransaction(handle.db, (trx) => createUserWithKey(trx, 'administrator', key, '2026-01-01 00:00:00'))
  const inject = async (method: 'POST' | 'PATCH', url: string, payload: Record<string, unknown>) => {
    armed = false
    const res = await app.inject({ method, url: `${API}${url}`, headers: { authorization: `Bearer ${key}` }, payload })
    const problems = contractProblems(method, `${API}${url}`, res)
    if (problems.length > 0) t.fail(`${method} ${url} breaks the contract`, { problems })
    return res
  }
  const venue = await inject('POST', '/venues', { venue: 'Committed hall' })
  t.equal(venue.statusCode, 201, 'a created venue is answered 201')
  const id = Number(venue.json<{ id: number }>().id)
  t.equal((await inject('PATCH', `/venues/${id}`, { venue: 'Renamed hall' })).statusCode, 200, 'an update is answered 200')
  t.equal((await inject('POST', '/categories', { name: 'Committed' })).statusCode, 201, 'a created category is answered 201')
  const event = await inject('POST', '/events', { title: 'Committed', start_date: '2026-07-01 10:00:00', end_date: '2026-07-01 11:00:00' })
  t.equal(event.statusCode, 201, 'a created event is answered 201')
  const names = await venueNames(url)
  t.strictSame(names, ['Renamed hall'], 'written once, as answered')
})

engineTest('postgres', t, 'PostgreSQL: readiness stays 200 while every connection of the pool is busy', async (t) => {
  const handle = await openDatabase(await freshDatabaseUrl(t), { poolSize: 1 })
  const app = await buildApp({ db: handle.db, config: defaultConfig({ publicUrl: 'http://calendar.test' }), spec: SPEC })
  t.teardown(async () => {
    await app.close()
    await handle.close()
  })
  let finish = (): void => undefined
  const held = new Promise<void>((resolve) => { finish = resolve })
  let holding = (): void => undefined
  const taken = new Promise<void>((resolve) => { holding = resolve })
  // The pool's one connection held by a unit of work (as requests hold them all under load).
  const work = withTransaction(handle.db, async () => {
    holding()
    await held
  })
  await taken
  const ready = await app.inject({ method: 'GET', url: '/readyz' })
  finish()
  await work
  t.equal(ready.statusCode, 200, 'ready: the database answers, its connections are busy')
  t.strictSame(ready.json(), { status: 'ok', checks: { database: 'ok', migrations: 'ok' } })
})

t.test('which errors say the database cannot serve now (503) and which do not', async (t) => {
  const { isDatabaseUnavailable, DatabaseFileLost } = await import('../src/db/faults.js')
  const coded = (code: string, message = 'x') => Object.assign(new Error(message), { code })
  for (const code of ['57P01', '57P03', '57014', '08006', '53300', '55P03', '25006', 'ECONNREFUSED', 'ECONNRESET', 'SQLITE_BUSY', 'SQLITE_FULL', 'SQLITE_READONLY_DBMOVED', 'SQLITE_IOERR_WRITE']) {
    t.ok(isDatabaseUnavailable(coded(code)), `${code} is 503`)
  }
  for (const code of ['23505', '23503', '40001', '42P01', 'SQLITE_CONSTRAINT_UNIQUE', 'SQLITE_ERROR', 'ERR_INVALID_ARG_TYPE']) {
    t.notOk(isDatabaseUnavailable(coded(code)), `${code} is not`)
  }
  t.ok(isDatabaseUnavailable(new Error('Connection terminated unexpectedly')), 'pg: a connection ended under a query')
  t.ok(isDatabaseUnavailable(new Error('timeout exceeded when trying to connect')), 'pg: the pool\'s acquire timeout')
  t.ok(isDatabaseUnavailable(new DatabaseFileLost('/srv/calendar.db')), 'a lost file')
  t.ok(isDatabaseUnavailable(new AggregateError([coded('ECONNREFUSED')])), 'carried by an AggregateError')
  t.ok(isDatabaseUnavailable(new Error('rollback failed', { cause: coded('SQLITE_FULL') })), 'carried as the cause')
  t.notOk(isDatabaseUnavailable(new Error('a bug')), 'a plain error is not')
  t.notOk(isDatabaseUnavailable(undefined))
})
