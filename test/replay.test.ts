/**
 * Answers replayed before routing (http/replay.ts, issue 49): an anonymous `GET /events/{id}` asked again over a
 * socket is answered with what the full chain sent for it, while the read cache's generation it was made in is
 * the current one. Over real HTTP (`inject` does not pass there): a replayed answer and the full path's before
 * it compared header by header (in order, as on the wire) and byte by byte, identity, gzip and br, with an
 * Origin, an Accept, a request id sent; each replay has its own request id, its log line and its count in the
 * metrics. A write through the API, from another handle (through the change log) and raw (outside it) is seen
 * by the very next request; conditional and credentialed requests, and every request under a rate limit, take
 * the full path. Requests that arrive together (pipelined) share one look; a list is replayed while the clock
 * keeps its window, not once midnight moves it.
 */
import { connect, type AddressInfo } from 'node:net'
import t, { type Test } from 'tap'
import pg from 'pg'
import { buildApp } from '../src/app.js'
import { defaultConfig } from '../src/config.js'
import { openDatabase } from '../src/db/database.js'
import { withTransaction } from '../src/db/unit-of-work.js'
import { createCompilers } from '../src/http/compilers.js'
import { generateKey } from '../src/lib/api-keys.js'
import { createUserWithKey } from '../src/repositories/users.js'
import { API, BASE_URL, NOW, build, type Built } from './helpers/build.js'
import { SPEC } from './helpers/contract.js'
import { engineTest, freshDatabaseUrl, rawWriteFromAnotherHandle, writeFromAnotherHandle } from './helpers/database.js'
import { listenAndGet, type Answer } from './helpers/socket-answers.js'

interface Wire {
  get(path: string, headers?: Record<string, string>): Promise<Answer>
}

async function listening(t: Test, s: Built): Promise<Wire> {
  return { get: await listenAndGet(t, s.app) }
}

/** Log lines as written. */
function logLines(): { stream: { write(line: string): void }; lines: Array<Record<string, unknown>> } {
  const lines: Array<Record<string, unknown>> = []
  return { stream: { write: (line: string) => { lines.push(JSON.parse(line) as Record<string, unknown>) } }, lines }
}

async function newEvent(t: Test, s: Built, editor: { authorization: string }, title = 'Night'): Promise<number> {
  const res = await s.inject({
    method: 'POST', url: `${API}/events`, headers: editor,
    payload: { title, status: 'publish', start_date: '2026-07-01 20:00:00', end_date: '2026-07-01 23:00:00', description: `<p>${'A long description. '.repeat(80)}</p>` },
  })
  t.equal(res.statusCode, 201)
  return res.json<{ id: number }>().id
}

/** The request count of a route in the metrics, answered 200. */
async function counted(s: Built, route: string): Promise<number> {
  const text = (await s.app.inject({ url: '/metrics' })).body
  const line = text.split('\n').find((l) => l.startsWith('http_request_duration_seconds_count{') && l.includes(`route="${route}"`) && l.includes('status_code="200"') && l.includes('method="GET"'))
  return line === undefined ? 0 : Number(line.split(' ').pop())
}

/**
 * `path` asked until it is replayed: the answer before the first replay (the full path's, recorded) and that
 * replay; fails when none is replayed within five requests.
 */
async function fullThenReplayed(t: Test, s: Built, wire: Wire, path: string, headers: Record<string, string> = {}): Promise<{ full: Answer; replayed: Answer }> {
  let full = await wire.get(path, headers)
  await s.app.eventDocuments.settled()
  for (let i = 0; i < 5; i++) {
    const before = s.app.replay.replayed
    const next = await wire.get(path, headers)
    if (s.app.replay.replayed === before + 1) return { full, replayed: next }
    full = next
  }
  t.fail(`${path} ${JSON.stringify(headers)}: never replayed`)
  return { full, replayed: full }
}

t.test('a replayed answer is the full path\'s, header by header and byte by byte; its own id, log line and count', async (t) => {
  const log = logLines()
  const s = await build(t, { file: `${t.testdir()}/calendar.db`, config: { metrics: true, logLevel: 'info' }, logStream: log.stream })
  const editor = await s.auth('editor')
  const wire = await listening(t, s)
  const variants: Array<Record<string, string>> = [
    {},
    { 'accept-encoding': 'gzip' },
    { 'accept-encoding': 'br, gzip' },
    { origin: 'https://widget.example', accept: 'application/json' },
    { 'x-request-id': 'probe-17', 'accept-language': 'de' },
  ]
  const route = '/calendar/events/v1/events/:id'
  for (const headers of variants) {
    const id = await newEvent(t, s, editor, `Night ${JSON.stringify(headers)}`)
    const path = `${API}/events/${id}`
    const { full, replayed } = await fullThenReplayed(t, s, wire, path, headers)
    t.equal(replayed.status, 200)
    t.same(replayed.headers, full.headers, `${JSON.stringify(headers)}: every header the same, in the same order`)
    t.equal(replayed.body.toString('base64'), full.body.toString('base64'), `${JSON.stringify(headers)}: the same bytes`)
    if (headers['accept-encoding'] !== undefined) t.match(replayed.headers.join('\n'), /content-encoding\n(gzip|br)/i, 'compressed')
    if (headers['x-request-id'] !== undefined) t.equal(replayed.id, headers['x-request-id'], 'the request id sent is followed')
    else t.not(replayed.id, full.id, 'a request id of its own')
    // The same as `inject` answers it (decoded, the contract checked).
    const injected = await s.inject({ url: path, headers })
    t.equal(injected.rawPayload.toString('base64'), full.body.toString('base64'), 'the same bytes as inject\'s full path')

    // The log line: the same fields as the full path's, its own id.
    const lineOf = (reqId: string) => log.lines.find((l) => l.reqId === reqId && l.msg === 'request')
    const fullLine = lineOf(full.id)
    const replayLine = lineOf(replayed.id)
    t.ok(fullLine !== undefined && replayLine !== undefined, 'a log line for each')
    const fields = (line: Record<string, unknown> | undefined) => Object.keys(line ?? {}).filter((k) => !['time', 'reqId', 'durationMs'].includes(k)).map((k) => [k, line?.[k]])
    t.same(fields(replayLine), fields(fullLine), 'the same fields and values, in the same order')
    t.same(Object.keys(replayLine ?? {}), Object.keys(fullLine ?? {}), 'the same keys in the same order')
    t.type(replayLine?.durationMs, 'number')

    // Counted in the metrics like the full path.
    const before = await counted(s, route)
    await wire.get(path, headers)
    t.equal(await counted(s, route), before + 1, 'a replay is counted in the request metrics')
  }
})

t.test('a write is seen by the next request however often it was replayed: through the API, from another handle, raw', async (t) => {
  const s = await build(t, { file: `${t.testdir()}/calendar.db` })
  const editor = await s.auth('editor')
  const wire = await listening(t, s)
  const id = await newEvent(t, s, editor)
  const path = `${API}/events/${id}`
  const record = (answer: Answer) => JSON.parse(answer.body.toString('utf8')) as { title: string; excerpt: string }
  const steps: Array<{ what: string; write: () => Promise<void>; shows: (answer: Answer) => boolean }> = [
    {
      what: 'a write through the API',
      write: async () => { t.equal((await s.inject({ method: 'PATCH', url: path, headers: editor, payload: { title: 'Renamed' } })).statusCode, 200) },
      shows: (answer) => record(answer).title === 'Renamed',
    },
    {
      what: 'a write from another handle',
      write: () => writeFromAnotherHandle(s.url, id),
      shows: (answer) => record(answer).excerpt === 'written elsewhere',
    },
    {
      what: 'a raw write from another handle, outside the change log',
      write: () => rawWriteFromAnotherHandle(s.url, id),
      shows: (answer) => record(answer).excerpt === 'raw',
    },
  ]
  for (const step of steps) {
    const { replayed } = await fullThenReplayed(t, s, wire, path)
    t.notOk(step.shows(replayed), `not yet: ${step.what}`)
    await step.write()
    const before = s.app.replay.replayed
    const next = await wire.get(path)
    t.equal(next.status, 200)
    t.ok(step.shows(next), `the next request shows ${step.what}`)
    t.equal(s.app.replay.replayed, before, `${step.what}: the next request is not a replay`)
  }
})

t.test('conditional and credentialed requests take the full path; 304 as before', async (t) => {
  const s = await build(t)
  const editor = await s.auth('editor')
  const wire = await listening(t, s)
  const id = await newEvent(t, s, editor)
  const path = `${API}/events/${id}`
  const { full } = await fullThenReplayed(t, s, wire, path)
  const etag = full.headers[full.headers.findIndex((h) => h.toLowerCase() === 'etag') + 1] as string
  const before = s.app.replay.replayed
  const conditional = await wire.get(path, { 'if-none-match': etag })
  t.equal(conditional.status, 304, 'If-None-Match: 304')
  t.equal(conditional.body.length, 0)
  const keyed = await wire.get(path, editor)
  t.equal(keyed.status, 200)
  t.equal(s.app.replay.replayed, before, 'neither was replayed')
})

t.test('under a rate limit every request takes the full path and carries its own counts', async (t) => {
  const s = await build(t, { config: { rateLimit: 100 } })
  const editor = await s.auth('editor')
  const wire = await listening(t, s)
  const id = await newEvent(t, s, editor)
  const path = `${API}/events/${id}`
  await wire.get(path)
  await s.app.eventDocuments.settled()
  const remaining: string[] = []
  for (let i = 0; i < 3; i++) {
    const answer = await wire.get(path)
    remaining.push(answer.headers[answer.headers.findIndex((h) => h.toLowerCase() === 'ratelimit-remaining') + 1] as string)
  }
  const [first] = remaining.map(Number)
  t.ok(first !== undefined && first < 100)
  t.same(remaining.map(Number), [0, 1, 2].map((i) => (first ?? 0) - i), 'each counted by the limit')
  t.equal(s.app.replay.replayed, 0, 'none replayed')
})

t.test('requests arriving together share one look at the data version', async (t) => {
  const s = await build(t)
  const editor = await s.auth('editor')
  const wire = await listening(t, s)
  const id = await newEvent(t, s, editor)
  const path = `${API}/events/${id}`
  await fullThenReplayed(t, s, wire, path)
  const { replayed, looks } = s.app.replay
  // Three requests in one write (pipelined): Node reads and parses them in one turn of the loop.
  const { port } = s.app.server.address() as AddressInfo
  const text = await new Promise<string>((resolve, reject) => {
    const socket = connect(port, '127.0.0.1')
    const chunks: Buffer[] = []
    socket.on('data', (chunk: Buffer) => chunks.push(chunk))
    socket.on('end', () => resolve(Buffer.concat(chunks).toString('latin1')))
    socket.on('error', reject)
    const one = `GET ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\n`
    // Not half-closed: Node would then drop what is not yet answered. The last asks the server to close.
    socket.write(`${one}\r\n${one}\r\n${one}Connection: close\r\n\r\n`)
  })
  t.equal(text.match(/HTTP\/1\.1 200 OK/g)?.length, 3, 'three answers')
  t.equal(s.app.replay.replayed, replayed + 3, 'all three replayed')
  t.equal(s.app.replay.looks, looks + 1, 'after one look')
})

t.test('a list is replayed as the full path answers it, and not once the clock moves its window', async (t) => {
  let now = new Date('2026-07-01T12:00:00Z')
  const s = await build(t, { clock: () => now })
  const editor = await s.auth('editor')
  const wire = await listening(t, s)
  await newEvent(t, s, editor, 'Tonight')
  const later = await s.inject({
    method: 'POST', url: `${API}/events`, headers: editor,
    payload: { title: 'Tomorrow', status: 'publish', start_date: '2026-07-02 20:00:00', end_date: '2026-07-02 23:00:00' },
  })
  t.equal(later.statusCode, 201)
  const codings: Array<Record<string, string>> = [{}, { 'accept-encoding': 'gzip' }, { 'accept-encoding': 'br' }]
  for (const headers of codings) {
    for (const path of [`${API}/events`, `${API}/events?per_page=1&page=2`]) {
      const { full, replayed } = await fullThenReplayed(t, s, wire, path, headers)
      t.same(replayed.headers, full.headers, `${path} ${JSON.stringify(headers)}: every header the same, in the same order`)
      t.equal(replayed.body.toString('base64'), full.body.toString('base64'), `${path} ${JSON.stringify(headers)}: the same bytes`)
    }
  }
  const path = `${API}/events`
  const { replayed } = await fullThenReplayed(t, s, wire, path)
  const total = (answer: Answer) => answer.headers[answer.headers.findIndex((h) => h.toLowerCase() === 'x-total') + 1]
  t.equal(total(replayed), '2', 'today\'s event is in today\'s window')
  now = new Date('2026-07-01T23:59:59Z')
  let before = s.app.replay.replayed
  const late = await wire.get(path)
  t.equal(s.app.replay.replayed, before + 1, 'replayed until the day ends')
  t.equal(late.body.toString('base64'), replayed.body.toString('base64'))
  now = new Date('2026-07-02T00:00:00Z')
  before = s.app.replay.replayed
  const tomorrow = await wire.get(path)
  t.equal(s.app.replay.replayed, before, 'the next day\'s list is not a replay of the day before\'s')
  t.equal(total(tomorrow), '1', 'yesterday\'s event has left the window')
  t.match(tomorrow.body.toString('utf8'), /start_date=2026-07-02/, 'the window starts on the new day')
})

/** One request written as is on a connection of its own, the answer as text (the server closes after it). */
function rawRequest(port: number, text: string): Promise<string> {
  return new Promise<string>((resolve, reject) => {
    const socket = connect(port, '127.0.0.1')
    const chunks: Buffer[] = []
    socket.on('data', (chunk: Buffer) => chunks.push(chunk))
    socket.on('end', () => resolve(Buffer.concat(chunks).toString('latin1')))
    socket.on('error', reject)
    socket.write(text)
  })
}

/** The status and body of a raw answer (not chunked). */
function statusAndBody(text: string): { status: number; body: string } {
  const at = text.indexOf('\r\n\r\n')
  return { status: Number(text.slice(9, 12)), body: text.slice(at + 4) }
}

t.test('HTTP/1.0, HEAD, no Host or a body take the full path; Content-Length: 0 and X-No-Compression are keyed as sent', async (t) => {
  const s = await build(t)
  const editor = await s.auth('editor')
  const wire = await listening(t, s)
  const id = await newEvent(t, s, editor)
  const path = `${API}/events/${id}`
  const { full } = await fullThenReplayed(t, s, wire, path)
  const { port } = s.app.server.address() as AddressInfo
  const fullBody = full.body.toString('latin1')
  const cases: Array<{ what: string; text: string; status: number; body?: string }> = [
    { what: 'HTTP/1.0', text: `GET ${path} HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n`, status: 200, body: fullBody },
    { what: 'HEAD', text: `HEAD ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n`, status: 200, body: '' },
    { what: 'no Host (the full path refuses it)', text: `GET ${path} HTTP/1.1\r\nConnection: close\r\n\r\n`, status: 400 },
    { what: 'a body', text: `GET ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 2\r\nConnection: close\r\n\r\n{}`, status: 200, body: fullBody },
  ]
  for (const one of cases) {
    const before = s.app.replay.replayed
    const answer = statusAndBody(await rawRequest(port, one.text))
    t.equal(answer.status, one.status, `${one.what}: ${one.status}`)
    if (one.body !== undefined) t.equal(answer.body, one.body, `${one.what}: the full path's bytes`)
    t.equal(s.app.replay.replayed, before, `${one.what}: not replayed`)
  }
  t.ok(s.app.replay.size > 0, 'the recording kept')
  // An empty body said so is no body: replayed.
  const before = s.app.replay.replayed
  const empty = statusAndBody(await rawRequest(port, `GET ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 0\r\nConnection: close\r\n\r\n`))
  t.equal(empty.status, 200)
  t.equal(empty.body, fullBody, 'Content-Length: 0: the same bytes')
  t.equal(s.app.replay.replayed, before + 1, 'Content-Length: 0: replayed')
  // X-No-Compression is part of the key: a compressed recording is not replayed to a request that refuses compression.
  const gzip = await fullThenReplayed(t, s, wire, path, { 'accept-encoding': 'gzip' })
  t.match(gzip.replayed.headers.join('\n'), /content-encoding\ngzip/i, 'the gzip recording')
  const plain = await fullThenReplayed(t, s, wire, path, { 'accept-encoding': 'gzip', 'x-no-compression': '1' })
  t.notMatch(plain.replayed.headers.join('\n'), /content-encoding/i, 'X-No-Compression: replayed uncompressed')
  t.equal(plain.replayed.body.toString('base64'), full.body.toString('base64'), 'X-No-Compression: the identity bytes')
  t.same(plain.replayed.headers, plain.full.headers)
})

engineTest('postgres', t, 'PostgreSQL: when the look at the data version fails (the database away), held requests get the full path\'s answer: 503, not a replay', async (t) => { // SQLite's look answers at once, without waiting
  const url = await freshDatabaseUrl(t)
  const handle = await openDatabase(url, { timeoutMs: 300 })
  const app = await buildApp({ db: handle.db, config: defaultConfig({ publicUrl: BASE_URL, databaseTimeoutMs: 300 }), now: () => NOW, spec: SPEC, compilers: createCompilers() })
  t.teardown(async () => {
    await app.close()
    await handle.close()
  })
  const key = generateKey()
  await withTransaction(handle.db, (trx) => createUserWithKey(trx, 'editor', key, '2026-01-01 00:00:00'))
  const s = { app, inject: (request: { url: string }) => app.inject(request) } as unknown as Built
  const created = await app.inject({
    method: 'POST', url: `${API}/events`, headers: { authorization: `Bearer ${key}` },
    payload: { title: 'Night', status: 'publish', start_date: '2026-07-01 20:00:00', end_date: '2026-07-01 23:00:00' },
  })
  t.equal(created.statusCode, 201)
  const path = `${API}/events/${created.json<{ id: number }>().id}`
  const wire = await listening(t, s)
  const { full } = await fullThenReplayed(t, s, wire, path)
  // Every look reads the change log and the data epoch: locked elsewhere, each waits its 300 ms and fails.
  const other = new pg.Client({ connectionString: url.replace(/\?.*$/, '') })
  await other.connect()
  t.teardown(() => other.end())
  const schema = new URL(url).searchParams.get('schema') ?? 'public'
  await other.query('begin')
  await other.query(`lock table "${schema}".changes, "${schema}".data_epoch in access exclusive mode`)
  const before = s.app.replay.replayed
  const away = await wire.get(path)
  await other.query('rollback')
  t.equal(away.status, 503, 'the full path\'s answer: 503')
  t.match(JSON.parse(away.body.toString('utf8')), { code: 'rest_database_unavailable' })
  t.ok(away.headers.some((h) => h.toLowerCase() === 'retry-after'), 'with Retry-After')
  t.equal(s.app.replay.replayed, before, 'not replayed')
  const back = await wire.get(path)
  t.equal(back.status, 200)
  t.equal(back.body.toString('base64'), full.body.toString('base64'), 'back: the same bytes')
})
