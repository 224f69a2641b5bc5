/**
 * A seventh black-box pass over the contract, over HTTP against the real server as a child process, on the engine
 * under test (CONTRACT §15, §17, §18): a PostgreSQL database that refuses connections for a while (an operator's
 * `ALLOW_CONNECTIONS false`), requests pipelined on one connection (RFC 9112 §9.3.2: a request that follows a write
 * on its connection is answered as it stands after that write), recurring series across DST changes in several
 * zones edited one, this-and-following and all, read as JSON and as iCalendar and compared with dateutil. Every
 * answer is checked against the spec.
 */
import t, { type Test } from 'tap'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { connect } from 'node:net'
import pg from 'pg'
import { contractProblems } from './helpers/contract.js'
import { TEST_POSTGRES_URL, engineTest, freshDatabaseUrl } from './helpers/database.js'
import { freePort } from './helpers/net.js'
import { API, REQUEST_TIMEOUT_MS, editorKey, startServer, type Server } from './helpers/server.js'

type Json = Record<string, any> // eslint-disable-line @typescript-eslint/no-explicit-any
interface Answer { status: number; headers: Record<string, string>; text: string; body: Json }

/** A request to a child server with `key` (none when undefined), its answer checked against the contract. */
async function send(t: Test, server: Server, key: string | undefined, method: string, path: string, body?: unknown): Promise<Answer> {
  const headers: Record<string, string> = key === undefined ? {} : { authorization: `Bearer ${key}` }
  if (body !== undefined) headers['content-type'] = 'application/json'
  const res = await fetch(`${server.base}${path}`, { method, headers, ...(body !== undefined ? { body: JSON.stringify(body) } : {}), signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS) })
  return checked(t, method, path, res.status, Object.fromEntries(res.headers), await res.text())
}

function checked(t: Test, method: string, path: string, status: number, headers: Record<string, string>, text: string): Answer {
  const problems = contractProblems(method, `${API}${path}`, { statusCode: status, headers, body: text })
  if (problems.length > 0) t.fail(`${method} ${path} breaks the contract`, { problems, body: text.slice(0, 400) })
  const parsed: unknown = headers['content-type']?.startsWith('application/json') === true && text !== '' ? JSON.parse(text) : {}
  return { status, headers, text, body: typeof parsed === 'object' && parsed !== null ? parsed as Json : {} }
}

async function probe(server: Server, path: '/healthz' | '/readyz'): Promise<{ status: number; body: Json }> {
  const res = await fetch(`${server.base.replace(API, '')}${path}`, { signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS) })
  return { status: res.status, body: await res.json() as Json }
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

const alive = (server: Server): boolean => server.child.exitCode === null && server.child.signalCode === null

/** A server on a fresh database of the engine under test, and an administrator's key. */
async function oneNode(t: Test, env: Record<string, string> = {}): Promise<{ server: Server; key: string }> {
  const dir = mkdtempSync(join(tmpdir(), 'calendar-pass7-'))
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  const url = await freshDatabaseUrl(t, join(dir, 'calendar.db'))
  const key = await editorKey(url, 'administrator')
  return { server: await startServer(t, url, await freePort(), env), key }
}

engineTest('postgres', t, 'PostgreSQL refusing connections (ALLOW_CONNECTIONS false, as an operator sets for maintenance): 503 with Retry-After, /readyz naming the database alone, nothing written, back by itself (CONTRACT §18)', async (t) => {
  // A database of the test's own: refusing connections is a setting of a whole database.
  const name = `calendar_pass7_${process.pid}`
  const admin = new pg.Client({ connectionString: TEST_POSTGRES_URL })
  await admin.connect()
  await admin.query(`drop database if exists ${name} with (force)`)
  await admin.query(`create database ${name}`)
  t.teardown(async () => {
    await admin.query(`alter database ${name} allow_connections true`)
    await admin.query(`drop database if exists ${name} with (force)`)
    await admin.end()
  })
  const url = new URL(TEST_POSTGRES_URL)
  url.pathname = `/${name}`
  const key = await editorKey(url.toString(), 'administrator')
  const server = await startServer(t, url.toString(), await freePort())
  t.equal((await send(t, server, key, 'POST', '/venues', { venue: 'before' })).status, 201)
  await admin.query(`alter database ${name} allow_connections false`)
  // Its connections closed, so that the pool must open new ones (a restart into maintenance does the same).
  await admin.query('select pg_terminate_backend(pid) from pg_stat_activity where datname = $1', [name])
  for (const [method, path, body] of [['GET', '/venues', undefined], ['GET', '/events/1', undefined], ['POST', '/venues', { venue: 'refused' }], ['POST', '/events', { title: 'refused', start_date: '2027-01-01 10:00:00', end_date: '2027-01-01 11:00:00' }]] as const) {
    const answer = await send(t, server, key, method, path, body)
    t.equal(answer.status, 503, `${method} ${path}: 503 while connections are refused`)
    t.equal(answer.body.code, 'rest_database_unavailable', `${method} ${path}: rest_database_unavailable`)
    t.match(answer.headers['retry-after'] ?? '', /^\d+$/, `${method} ${path}: Retry-After`)
  }
  const ready = await probe(server, '/readyz')
  t.equal(ready.status, 503, 'not ready')
  t.same(ready.body.checks, { database: 'failed', migrations: 'ok' }, '/readyz names the database alone')
  t.equal((await probe(server, '/healthz')).status, 200, '/healthz stays 200')
  await admin.query(`alter database ${name} allow_connections true`)
  await until(t, 'a write succeeds again', async () => (await send(t, server, key, 'POST', '/venues', { venue: 'after' })).status === 201)
  t.equal((await probe(server, '/readyz')).status, 200, 'ready again')
  t.ok(alive(server), 'the process is up')
  const names = ((await send(t, server, key, 'GET', '/venues?per_page=50')).body.venues as Json[]).map((v) => v.venue as string).sort()
  t.same(names, ['after', 'before'], 'nothing refused was written')
  t.equal((await send(t, server, key, 'GET', '/events?start_date=2026-01-01')).body.total, 0, 'no event was written')
})

/** The answers on one connection to requests written to it at once (pipelined), in order; the last asks to close. */
async function pipelined(server: Server, requests: readonly string[]): Promise<Array<{ status: number; headers: Record<string, string>; text: string }>> {
  const { port } = new URL(server.base)
  const socket = connect(Number(port), '127.0.0.1')
  await new Promise<void>((resolve, reject) => socket.once('connect', resolve).once('error', reject))
  const chunks: Buffer[] = []
  socket.on('data', (d: Buffer) => chunks.push(d))
  socket.on('error', () => undefined)
  const ended = new Promise<void>((resolve) => socket.once('close', () => resolve()))
  socket.write(requests.join(''))
  await Promise.race([ended, new Promise((resolve) => setTimeout(resolve, REQUEST_TIMEOUT_MS).unref())])
  socket.destroy()
  let rest = Buffer.concat(chunks)
  const answers: Array<{ status: number; headers: Record<string, string>; text: string }> = []
  while (rest.length > 0) {
    const end = rest.indexOf('\r\n\r\n')
    if (end < 0) break
    const [line = '', ...fields] = rest.subarray(0, end).toString('latin1').split('\r\n')
    const headers: Record<string, string> = {}
    for (const field of fields) headers[field.slice(0, field.indexOf(':')).toLowerCase()] = field.slice(field.indexOf(':') + 1).trim()
    const length = Number(headers['content-length'] ?? 0)
    answers.push({ status: Number(line.split(' ')[1]), headers, text: rest.subarray(end + 4, end + 4 + length).toString('utf8') })
    rest = rest.subarray(end + 4 + length)
  }
  return answers
}

t.test('pipelined requests: each is answered in order, as the data stands after the requests before it on its connection (a read after a create, an update and a delete sees them; RFC 9112 §9.3.2; CONTRACT §15)', async (t) => {
  const { server, key } = await oneNode(t)
  const request = (method: string, path: string, body?: unknown, close = false) => {
    const text = body === undefined ? '' : JSON.stringify(body)
    return `${method} ${API}${path} HTTP/1.1\r\nHost: 127.0.0.1\r\n${method === 'GET' ? '' : `Authorization: Bearer ${key}\r\n`}${body === undefined ? '' : `Content-Type: application/json\r\nContent-Length: ${Buffer.byteLength(text)}\r\n`}${close ? 'Connection: close\r\n' : ''}\r\n${text}`
  }
  const search = '/venues?search=Piped'
  // Read twice before, so that the later reads may be answered hot (http/replay.ts) or from the read cache.
  for (let i = 0; i < 2; i++) t.equal((await send(t, server, undefined, 'GET', search)).body.total, 0)
  for (let round = 0; round < 5; round++) {
    const name = `Piped ${round}`
    const venues = (await send(t, server, undefined, 'GET', `${search}&per_page=50`)).body.venues as Json[]
    const steps: Array<[string, string, unknown?]> = [
      ['POST', '/venues', { venue: name }],
      ['GET', search], ['GET', search], ['GET', `${search}&per_page=50`],
    ]
    const created = await pipelined(server, [...steps.map(([method, path, body]) => request(method, path, body)), request('GET', search, undefined, true)])
    t.same(created.map((a) => a.status), [201, 200, 200, 200, 200], `round ${round}: every request answered, in order`)
    created.forEach((a, i) => checked(t, steps[i]?.[0] ?? 'GET', steps[i]?.[1] ?? search, a.status, a.headers, a.text))
    const id = (JSON.parse(created[0]?.text ?? '{}') as Json).id as number
    t.same(created.slice(1).map((a) => (JSON.parse(a.text) as Json).total), [venues.length + 1, venues.length + 1, venues.length + 1, venues.length + 1], `round ${round}: every read after the create on its connection sees it`)
    const changed = await pipelined(server, [
      request('GET', `/venues/${id}`),
      request('PATCH', `/venues/${id}`, { venue: `${name} renamed` }),
      request('GET', `/venues/${id}`),
      request('DELETE', `/venues/${id}?force=true`),
      request('GET', `/venues/${id}`, undefined, true),
    ])
    t.same(changed.map((a) => a.status), [200, 200, 200, 200, 404], `round ${round}: read, update, read, delete, read: answered in order`)
    t.equal((JSON.parse(changed[2]?.text ?? '{}') as Json).venue, `${name} renamed`, `round ${round}: the read after the update sees it`)
  }
  t.ok(alive(server), 'the process is up')
})
