/**
 * Ready to operate (CONTRACT §16, issue 13): health checks, Prometheus metrics, compression with ETags
 * that survive it, the headers every answer carries (X-Request-Id, nosniff; the UI's security headers)
 * and the one log line per request. The limits are in throttling.test.ts.
 */
import { connect } from 'node:net'
import t from 'tap'
import { buildApp } from '../src/app.js'
import { defaultConfig } from '../src/config.js'
import { API, build, decoded } from './helpers/build.js'
import { SPEC, contractProblems } from './helpers/contract.js'
import { openTestDatabase } from './helpers/database.js'

t.test('GET /healthz is 200 while the process runs; /readyz is 200 when the database answers, 503 naming the check when not', async (t) => {
  const handle = await openTestDatabase(t)
  const app = await buildApp({ db: handle.db, config: defaultConfig(), spec: SPEC })
  t.teardown(() => app.close())
  const health = await app.inject({ url: '/healthz' })
  t.equal(health.statusCode, 200)
  t.same(health.json(), { status: 'ok' })
  t.equal(health.headers['x-content-type-options'], 'nosniff')
  const ready = await app.inject({ url: '/readyz' })
  t.equal(ready.statusCode, 200)
  t.same(ready.json(), { status: 'ok', checks: { database: 'ok', migrations: 'ok' } })
  t.equal((await app.inject({ url: `${API}/healthz` })).statusCode, 404, 'outside the namespace only')

  await handle.close()
  const closed = await app.inject({ url: '/readyz' })
  t.equal(closed.statusCode, 503)
  t.same(closed.json(), { status: 'unavailable', checks: { database: 'failed', migrations: 'failed' } })
  t.equal((await app.inject({ url: '/healthz' })).statusCode, 200, 'alive all the same')
})

t.test('/readyz is 503 naming the migrations when one is not applied', async (t) => {
  const s = await build(t)
  const history = s.db.withTables<{ kysely_migration: { name: string; timestamp: string } }>()
  const row = await history.selectFrom('kysely_migration').selectAll().where('name', '=', '0003-change-log').executeTakeFirstOrThrow()
  await history.deleteFrom('kysely_migration').where('name', '=', row.name).execute()
  const res = await s.app.inject({ url: '/readyz' })
  t.equal(res.statusCode, 503)
  t.same(res.json(), { status: 'unavailable', checks: { database: 'ok', migrations: 'failed' } })
  // Put back as it was (its time too: the history is read in that order): on PostgreSQL the next test takes this schema.
  await history.insertInto('kysely_migration').values(row).execute()
  t.equal((await s.app.inject({ url: '/readyz' })).statusCode, 200)
})

t.test('metrics are off by default: /metrics is rest_no_route', async (t) => {
  const s = await build(t)
  const res = await s.inject({ url: '/metrics' })
  t.equal(res.statusCode, 404)
  t.equal(res.json().code, 'rest_no_route')
})

/** The value of a sample line `name{labels} value` in Prometheus text. */
function sample(text: string, name: string, labels: string): number | undefined {
  const line = text.split('\n').find((l) => l.startsWith(`${name}{`) && labels.split(',').every((label) => l.includes(label)))
  return line === undefined ? undefined : Number(line.slice(line.lastIndexOf(' ') + 1))
}

t.test('CALENDAR_METRICS=true: requests by route, method and status with latency, and the read cache', async (t) => {
  const s = await build(t, { config: { metrics: true } })
  const editor = await s.auth('editor')
  const created = await s.inject({ method: 'POST', url: `${API}/categories`, headers: editor, payload: { name: 'Jazz' } })
  t.equal(created.statusCode, 201)
  const id = created.json<{ id: number }>().id
  for (let i = 0; i < 3; i++) t.equal((await s.inject({ url: `${API}/categories/${id}` })).statusCode, 200)
  t.equal((await s.inject({ url: `${API}/categories/999` })).statusCode, 404)
  t.equal((await s.inject({ url: `${API}/nowhere` })).statusCode, 404)

  const res = await s.app.inject({ url: '/metrics' })
  t.equal(res.statusCode, 200)
  t.match(res.headers['content-type'], /^text\/plain/)
  const text = res.body
  const count = 'http_request_duration_seconds_count'
  t.equal(sample(text, count, `route="${API}/categories/:id",method="GET",status_code="200"`), 3, 'three reads of the category')
  t.equal(sample(text, count, `route="${API}/categories/:id",method="GET",status_code="404"`), 1)
  t.equal(sample(text, count, `route="${API}/categories",method="POST",status_code="201"`), 1)
  t.equal(sample(text, count, 'route="unknown",method="GET",status_code="404"'), 1, 'unknown paths share one label')
  t.match(text, /http_request_duration_seconds_bucket\{le="0.005",route=/, 'a latency histogram')
  const hits = sample(text, 'calendar_read_cache_hits_total', 'kind="records"') ?? 0
  const misses = sample(text, 'calendar_read_cache_misses_total', 'kind="records"') ?? 0
  t.ok(hits >= 2, `the second and third reads hit the cache (${hits} hits)`)
  t.ok(misses >= 1, `the first read missed (${misses} misses)`)
  t.match(text, /# TYPE calendar_db_pool_connections gauge/)
  if (s.engine === 'postgres') t.ok((sample(text, 'calendar_db_pool_connections', 'state="total"') ?? 0) >= 1, 'the pool on PostgreSQL')
  else t.equal(sample(text, 'calendar_db_pool_connections', 'state="total"'), undefined, 'no pool on SQLite')
  t.match(text, /process_cpu_user_seconds_total/, "Node's process metrics")
})

t.test('answers over 1 kB are compressed as the client accepts; ETags name the coding; 304 and If-Match still work', async (t) => {
  const s = await build(t)
  const editor = await s.auth('editor')
  const description = 'A long description. '.repeat(100)
  const created = await s.inject({ method: 'POST', url: `${API}/categories`, headers: editor, payload: { name: 'Long', description } })
  t.equal(created.statusCode, 201)
  const { id } = created.json<{ id: number }>()
  const url = `${API}/categories/${id}`
  const plain = await s.inject({ url })
  t.equal(plain.headers['content-encoding'], undefined, 'no Accept-Encoding: identity')
  t.match(plain.headers.vary, /Accept-Encoding/i)
  const identity = String(plain.headers.etag)
  for (const coding of ['br', 'gzip', 'deflate']) {
    const res = await s.inject({ url, headers: { 'accept-encoding': coding } })
    t.equal(res.headers['content-encoding'], coding, coding)
    t.ok(res.rawPayload.length < Buffer.byteLength(plain.body), `${coding}: smaller`)
    t.equal(res.body, plain.body, `${coding}: decodes to the same JSON`)
    t.match(res.headers.vary, /accept-encoding/i)
    t.equal(res.headers.etag, `${identity.slice(0, -1)}-${coding}"`, `${coding}: the ETag names the coding`)
    const again = await s.inject({ url, headers: { 'accept-encoding': coding, 'if-none-match': String(res.headers.etag) } })
    t.equal(again.statusCode, 304, `${coding}: its ETag revalidates`)
    t.equal(again.headers.etag, res.headers.etag, 'the 304 repeats the tag held')
  }
  t.equal((await s.inject({ url, headers: { 'accept-encoding': 'gzip', 'if-none-match': identity } })).statusCode, 304, 'the identity tag revalidates a compressed read')
  t.equal(decoded(await s.app.inject({ url, headers: { 'accept-encoding': 'gzip, br;q=0.5' } })).headers['content-encoding'], 'gzip', 'the client\'s preference')
  const gz = String((await s.inject({ url, headers: { 'accept-encoding': 'gzip' } })).headers.etag)
  const write = await s.inject({ method: 'PATCH', url, headers: { ...editor, 'if-match': gz }, payload: { name: 'Longer' } })
  t.equal(write.statusCode, 200, 'If-Match with the compressed form of the current tag writes')
  t.equal((await s.inject({ method: 'PATCH', url, headers: { ...editor, 'if-match': gz }, payload: { name: 'Stale' } })).statusCode, 412, 'and is stale after')

  const small = await s.inject({ url: `${API}/tags`, headers: { 'accept-encoding': 'br' } })
  t.equal(small.headers['content-encoding'], undefined, 'under 1 kB: sent as it is')
  const list = await s.inject({ url: `${API}/categories?hide_empty=false`, headers: { 'accept-encoding': 'br' } })
  t.equal(list.headers['content-encoding'], 'br', 'lists')
  t.equal(list.json<{ categories: unknown[] }>().categories.length, 1)
  const doc = await s.app.inject({ url: `${API}/doc`, headers: { 'accept-encoding': 'gzip' } })
  t.equal(doc.headers['content-encoding'], 'gzip', '/doc')
  t.ok(JSON.parse(decoded(doc).body).openapi, '/doc decodes to the document')
  const yaml = await s.app.inject({ url: `${API}/doc?format=yaml`, headers: { 'accept-encoding': 'br' } })
  t.equal(yaml.headers['content-encoding'], 'br', '/doc as YAML')
})

t.test('X-Request-Id on every answer: a short token sent is reused, anything else (or a credential) replaced', async (t) => {
  const s = await build(t)
  const own = await s.inject({ url: `${API}/tags`, headers: { 'x-request-id': 'abc-123.X_y' } })
  t.equal(own.headers['x-request-id'], 'abc-123.X_y')
  for (const bad of ['a b', 'x'.repeat(65), 'id\nforged', '']) {
    const res = await s.inject({ url: `${API}/tags`, headers: { 'x-request-id': bad } })
    t.match(res.headers['x-request-id'], /^[0-9a-f-]{36}$/, `replaced: ${JSON.stringify(bad.slice(0, 10))}`)
  }
  // Never a credential (CONTRACT §6): an API key's form, or any part of the Authorization header sent.
  const editor = await s.auth('editor')
  const key = editor.authorization.slice('Bearer '.length)
  for (const [sent, headers] of [[key, editor], [key, {}], [key.slice(4, 40), editor], ['CAL_abc', {}], ['Bearer', editor]] as const) {
    const res = await s.inject({ url: `${API}/tags`, headers: { ...headers, 'x-request-id': sent } })
    t.match(res.headers['x-request-id'], /^[0-9a-f-]{36}$/, `replaced: ${sent.slice(0, 8)}…`)
    t.notOk(JSON.stringify(res.headers).includes(key.slice(4, 20)), 'no part of the key in any header')
  }
  const a = await s.inject({ url: `${API}/nowhere` })
  const b = await s.inject({ url: `${API}/events/by-slug/%ff` })
  for (const res of [a, b]) {
    t.match(res.headers['x-request-id'], /^[0-9a-f-]{36}$/)
    t.equal(res.headers['x-content-type-options'], 'nosniff', `${res.statusCode}: nosniff`)
  }
  t.not(a.headers['x-request-id'], (await s.inject({ url: `${API}/nowhere` })).headers['x-request-id'], 'a new id per request')
})

t.test('a request the HTTP parser refuses also gets X-Request-Id and nosniff', async (t) => {
  const s = await build(t)
  await s.app.listen({ host: '127.0.0.1', port: 0 })
  const address = s.app.server.address()
  const port = typeof address === 'object' && address !== null ? address.port : 0
  const raw = await new Promise<string>((resolve, reject) => {
    const socket = connect(port, '127.0.0.1', () => socket.write('GET /calendar/events/v1/events?x=zürich HTTP/1.1\r\nHost: x\r\n\r\n'))
    let text = ''
    socket.on('data', (d) => { text += d.toString('latin1') })
    socket.on('end', () => resolve(text))
    socket.on('error', reject)
  })
  t.match(raw, /^HTTP\/1.1 400/)
  t.match(raw, /\r\nX-Content-Type-Options: nosniff\r\n/)
  t.match(raw, /\r\nX-Request-Id: [0-9a-f-]{36}\r\n/)
})

t.test('the Swagger UI pages carry a content security policy and X-Frame-Options: DENY; the API does not need them', async (t) => {
  const s = await build(t)
  const page = await s.app.inject({ url: `${API}/ui/` })
  t.equal(page.statusCode, 200)
  t.equal(page.headers['x-frame-options'], 'DENY')
  const csp = String(page.headers['content-security-policy'])
  t.match(csp, /default-src 'self'/)
  t.match(csp, /script-src 'self'/)
  t.match(csp, /frame-ancestors 'none'/)
  t.notMatch(csp, /upgrade-insecure-requests/, 'the UI works over plain HTTP')
  t.equal(page.headers['x-content-type-options'], 'nosniff')
  t.equal(page.headers['strict-transport-security'], undefined, 'TLS is the proxy\'s business')
  for (const asset of ['json', 'static/swagger-ui-bundle.js']) {
    const res = await s.app.inject({ url: `${API}/ui/${asset}` })
    t.equal(res.statusCode, 200, asset)
    t.equal(res.headers['x-frame-options'], 'DENY', `${asset}: DENY`)
  }
  const api = await s.inject({ url: `${API}/tags` })
  t.equal(api.headers['x-frame-options'], undefined, 'API answers: no UI headers')
  t.equal(api.headers['content-security-policy'], undefined)
})

t.test('one info line per request with method, route, status, duration and request id; health checks not at info', async (t) => {
  const lines: string[] = []
  const handle = await openTestDatabase(t)
  const app = await buildApp({ db: handle.db, config: defaultConfig({ logLevel: 'info' }), spec: SPEC, logStream: { write: (line) => lines.push(line) } })
  t.teardown(() => app.close())
  const res = await app.inject({ url: `${API}/categories/7?api_key=SECRET`, headers: { 'x-request-id': 'trace-1', authorization: 'Bearer SECRETKEY' } })
  t.same(contractProblems('GET', `${API}/categories/7`, res), [])
  await app.inject({ url: '/healthz' })
  await app.inject({ url: '/readyz' })
  const parsed = lines.map((l) => JSON.parse(l) as Record<string, unknown>)
  const requests = parsed.filter((l) => l.msg === 'request')
  t.equal(requests.length, 1, 'one line, for the API request only')
  t.match(requests[0], { level: 30, reqId: 'trace-1', method: 'GET', route: `${API}/categories/:id`, status: 404, url: `${API}/categories/7?api_key=[redacted]` })
  t.type(requests[0]?.durationMs, 'number')
  t.notMatch(lines.join(''), /SECRET/, 'never a key')
  t.notMatch(lines.join(''), /healthz|readyz/, 'health checks are not logged at info')
})
