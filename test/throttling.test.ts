/**
 * The limits of CONTRACT §16: an address whose keys fail more than CALENDAR_AUTH_FAILURE_LIMIT times a
 * minute (default 30) gets 429 on every request with credentials until the minute passes, requests
 * without credentials untouched; the optional per-client rate limit with RateLimit-* headers; and
 * CALENDAR_TRUST_PROXY deciding whether X-Forwarded-For names the client.
 */
import t from 'tap'
import { API, NOW, build } from './helpers/build.js'

const BAD = { authorization: 'Bearer not-a-key-at-all' }

t.test('by default, the 31st failed authentication in a minute blocks requests with credentials until the minute passes', async (t) => {
  let now = NOW
  const s = await build(t, { clock: () => now })
  t.equal(s.config.authFailureLimit, 30, 'the default')
  const editor = await s.auth('editor')
  for (let i = 1; i <= 31; i++) {
    const res = await s.inject({ method: 'POST', url: `${API}/tags`, headers: i % 2 === 0 ? BAD : { authorization: 'Basic x' }, payload: { name: `t${i}` } })
    if (res.statusCode !== 401) t.fail(`failure ${i}: ${res.statusCode}`)
  }
  const blocked = await s.inject({ method: 'POST', url: `${API}/tags`, headers: BAD, payload: { name: 'x' } })
  t.equal(blocked.statusCode, 429)
  t.equal(blocked.json().code, 'rest_too_many_requests')
  t.equal(blocked.headers['retry-after'], '60')
  const valid = await s.inject({ method: 'POST', url: `${API}/tags`, headers: editor, payload: { name: 'ok' } })
  t.equal(valid.statusCode, 429, 'a valid key from that address too')
  const read = await s.inject({ url: `${API}/tags?ml_language=de`, headers: editor })
  t.equal(read.statusCode, 429, 'reads that carry a key as well')
  t.match(read.json().message, /Zu viele Anfragen; versuchen Sie es in 60 Sekunden erneut/, 'in the language asked for')
  const anonymous = await s.inject({ url: `${API}/tags` })
  t.equal(anonymous.statusCode, 200, 'requests without credentials are unaffected')

  now = new Date(NOW.getTime() + 45_000)
  const later = await s.inject({ method: 'POST', url: `${API}/tags`, headers: editor, payload: { name: 'ok' } })
  t.equal(later.statusCode, 429)
  t.equal(later.headers['retry-after'], '15', 'Retry-After counts down')
  now = new Date(NOW.getTime() + 60_000)
  const after = await s.inject({ method: 'POST', url: `${API}/tags`, headers: editor, payload: { name: 'ok' } })
  t.equal(after.statusCode, 201, 'once the minute passed')
})

t.test('failures are counted per address; 0 turns the throttle off; a valid key is no failure', async (t) => {
  const s = await build(t, { config: { authFailureLimit: 2 } })
  const editor = await s.auth('editor')
  for (let i = 0; i < 10; i++) t.equal((await s.inject({ url: `${API}/tags`, headers: editor })).statusCode, 200)
  for (let i = 0; i < 3; i++) await s.inject({ url: `${API}/tags`, headers: BAD, remoteAddress: '10.0.0.1' })
  t.equal((await s.inject({ url: `${API}/tags`, headers: editor, remoteAddress: '10.0.0.1' })).statusCode, 429)
  t.equal((await s.inject({ url: `${API}/tags`, headers: editor, remoteAddress: '10.0.0.2' })).statusCode, 200, 'another address')

  const off = await build(t, { config: { authFailureLimit: 0 } })
  for (let i = 0; i < 40; i++) await off.inject({ url: `${API}/tags`, headers: BAD })
  t.equal((await off.inject({ url: `${API}/tags`, headers: BAD })).statusCode, 200, 'never throttled when off')
})

t.test('CALENDAR_TRUST_PROXY decides whether X-Forwarded-For names the address', async (t) => {
  const direct = await build(t, { config: { authFailureLimit: 1 } })
  for (let i = 0; i < 2; i++) await direct.inject({ url: `${API}/tags`, headers: { ...BAD, 'x-forwarded-for': `192.0.2.${i}` } })
  t.equal((await direct.inject({ url: `${API}/tags`, headers: { ...BAD, 'x-forwarded-for': '192.0.2.99' } })).statusCode, 429, 'not trusted: the socket address counts')

  const proxied = await build(t, { config: { authFailureLimit: 1, trustProxy: true } })
  for (let i = 0; i < 2; i++) await proxied.inject({ url: `${API}/tags`, headers: { ...BAD, 'x-forwarded-for': '192.0.2.1' } })
  t.equal((await proxied.inject({ url: `${API}/tags`, headers: { ...BAD, 'x-forwarded-for': '192.0.2.1' } })).statusCode, 429)
  t.equal((await proxied.inject({ url: `${API}/tags`, headers: { ...BAD, 'x-forwarded-for': '192.0.2.2' } })).statusCode, 200, 'trusted: each forwarded client counts')
})

t.test('CALENDAR_RATE_LIMIT: requests per minute per client (key, else address) with RateLimit-* headers', async (t) => {
  const s = await build(t, { config: { rateLimit: 3 } })
  const editor = await s.auth('editor')
  const statuses: number[] = []
  let last
  for (let i = 0; i < 4; i++) {
    last = await s.inject({ url: `${API}/tags` })
    statuses.push(last.statusCode)
    if (i === 0) {
      t.equal(last.headers['ratelimit-limit'], '3')
      t.equal(last.headers['ratelimit-remaining'], '2')
      t.ok(Number(last.headers['ratelimit-reset']) > 0)
    }
  }
  t.same(statuses, [200, 200, 200, 429])
  t.equal(last?.json().code, 'rest_too_many_requests')
  t.ok(Number(last?.headers['retry-after']) > 0, 'Retry-After')
  t.equal((await s.inject({ url: `${API}/tags`, headers: editor })).statusCode, 200, 'a key counts apart from its address')
  t.equal((await s.app.inject({ url: '/healthz' })).statusCode, 200, 'health checks are never limited')
  const off = await build(t)
  const res = await off.inject({ url: `${API}/tags` })
  t.equal(res.headers['ratelimit-limit'], undefined, 'off by default')
})

t.test('CALENDAR_RATE_LIMIT: a key that authenticates no one counts against the address, whatever the failure limit', async (t) => {
  for (const authFailureLimit of [0, 30, 1000]) {
    const s = await build(t, { config: { rateLimit: 10, authFailureLimit } })
    const editor = await s.auth('editor')
    const statuses: number[] = []
    for (let i = 0; i < 12; i++) {
      const made = { authorization: `Bearer ${(0xa000 + i).toString(16).padStart(40, '0')}` }
      statuses.push((await s.inject({ url: `${API}/tags`, headers: made })).statusCode)
    }
    t.same(statuses, [...Array<number>(10).fill(200), 429, 429], `made-up keys, failure limit ${authFailureLimit}`)
    t.equal((await s.inject({ url: `${API}/tags` })).statusCode, 429, 'the address is spent for anonymous reads too')
    t.equal((await s.inject({ url: `${API}/tags`, headers: editor })).statusCode, 200, 'a valid key still counts apart')
  }
  const writes = await build(t, { config: { rateLimit: 2, authFailureLimit: 0 } })
  for (let i = 0; i < 2; i++) {
    t.equal((await writes.inject({ method: 'POST', url: `${API}/tags`, headers: BAD, payload: { name: `t${i}` } })).statusCode, 401)
  }
  t.equal((await writes.inject({ method: 'POST', url: `${API}/tags`, headers: BAD, payload: { name: 'x' } })).statusCode, 429, 'refused writes count too')
})
