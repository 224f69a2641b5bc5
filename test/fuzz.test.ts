/**
 * The contract, fuzzed from the spec (test/helpers/fuzz.ts): every operation with generated paths,
 * queries, headers and bodies, valid and invalid, against a fresh seeded database per run. A fixed seed
 * here; `node --import tsx scripts/fuzz.ts --runs N [--seed S]` runs longer with a new seed each time.
 * Then the regression tests of what the fuzzer found.
 */
import t from 'tap'
import { API, build } from './helpers/build.js'
import { OPERATIONS, runFuzz } from './helpers/fuzz.js'
import { propertyRuns, propertySeed } from './helpers/property.js'

const SEED = propertySeed(20260615)
const FULL_RUNS = 3500
const RUNS = propertyRuns(FULL_RUNS)
/** Every operation is sent at least this often (50 in the full run). */
const MIN_SENDS = Math.ceil((50 * RUNS) / FULL_RUNS)

t.test('every operation, fuzzed from the spec: no 5xx, only declared answers, valid requests accepted, failed ones change nothing', async (t) => {
  const stats = await runFuzz({ seed: SEED, numRuns: RUNS })
  t.comment(`fuzz: ${stats.requests} requests in ${stats.runs} runs, ${(stats.ms / 1000).toFixed(1)} s (seed ${SEED}); answers by status ${JSON.stringify(stats.byStatus)}`)
  t.equal(stats.runs, RUNS, `${stats.requests} requests`)
  for (const op of OPERATIONS) t.ok((stats.byOperation[op.id] ?? 0) >= MIN_SENDS, `${op.method} ${op.path} (${op.id}) was sent ${stats.byOperation[op.id] ?? 0} times`)
  const statuses = Object.keys(stats.byStatus).map(Number)
  // The runs reach past validation: records are read, created, updated and deleted.
  for (const status of [200, 201, 304, 400, 401, 403, 404, 410, 412, 415]) t.ok(statuses.includes(status), `some answers are ${status}`)
})

const EVENT = { start_date: '2026-07-01 18:00:00', end_date: '2026-07-01 21:00:00' }

t.test('no route is 404 rest_no_route before the body is read: malformed JSON, another media type, over the limit', async (t) => {
  const { inject, auth } = await build(t)
  const editor = await auth('editor')
  const cases: Array<[string, string, Record<string, string>, string]> = [
    ['PUT', `${API}/categories/1.5`, { 'content-type': 'application/json' }, '{'],
    ['POST', `${API}/nothing`, { 'content-type': 'text/plain' }, 'x'],
    ['PATCH', `${API}/events/abc`, { 'content-type': 'application/json' }, 'x'.repeat(1024 * 1024 + 1)],
    ['POST', `${API}/categories/by-slug/x`, { 'content-type': 'application/x-www-form-urlencoded' }, 'name=%ff'],
  ]
  for (const [method, url, headers, payload] of cases) {
    const res = await inject({ method: method as 'POST', url, headers: { ...editor, ...headers }, payload })
    t.equal(res.statusCode, 404, `${method} ${url}`)
    t.equal(res.json().code, 'rest_no_route')
  }
})

t.test('a form body field named __proto__ is refused naming it', async (t) => {
  const { inject, auth } = await build(t)
  const res = await inject({
    method: 'POST', url: `${API}/categories`, headers: { ...(await auth('editor')), 'content-type': 'application/x-www-form-urlencoded' },
    payload: 'name=Music&__proto__=%7B%7D',
  })
  t.equal(res.statusCode, 400)
  const body = res.json<{ code: string; message: string; data: { params: Record<string, string> } }>()
  t.equal(body.code, 'rest_invalid_param')
  t.ok(Object.hasOwn(body.data.params, '__proto__'), 'data.params names __proto__')
  t.match(body.message, /__proto__/)
})

t.test('dates with no wall time in the zone (at the edges of years 0001–9999) are 400 naming the field, never a 5xx', async (t) => {
  const built = await build(t, { config: { timezone: 'America/New_York' }, sqlite: true })
  const { inject, auth } = built
  const sqlite = built.sqlite()
  const editor = await auth('editor')
  const post = (url: string, payload: unknown, method = 'POST') => inject({ method: method as 'POST', url: `${API}${url}`, headers: editor, payload: payload as Record<string, unknown> })
  t.equal((await post('/organizers', { organizer: 'Council' })).statusCode, 201)
  t.equal((await post('/venues', { venue: 'Hall' })).statusCode, 201)
  const rows = () => sqlite.prepare('SELECT (SELECT count(*) FROM events) + (SELECT count(*) FROM venues) + (SELECT count(*) FROM organizers) + (SELECT sum(version) FROM organizers)').pluck().get()
  const before = rows()
  const cases: Array<[string, string, unknown, string]> = [
    // 0001-01-01 00:00 UTC is still year 0000 in New York (the site's zone).
    ['PATCH', '/organizers/1', { date_utc: '0001-01-01 00:00:00' }, 'date_utc'],
    ['POST', '/organizers', { organizer: 'Old', date_utc: '0001-01-01T00:00:00' }, 'date_utc'],
    ['POST', '/venues', { venue: 'Old', date: '0001-01-01T00:00:00Z' }, 'date'],
    ['PUT', '/venues/1', { date_utc: '0001-01-01 03:00:00' }, 'date_utc'],
    // An event's dates in its own zone.
    ['POST', '/events', { title: 'Old', start_date: '0001-01-01T00:00:00Z', end_date: '0001-01-01T06:00:00Z', timezone: 'America/New_York' }, 'start_date'],
    ['POST', '/events', { title: 'Late', ...EVENT, end_date: '9999-12-31T23:59:59-05:00', timezone: 'Asia/Tokyo' }, 'end_date'],
    ['POST', '/events', { title: 'Late', start_date: '9999-12-31T23:00:00Z', end_date: '9999-12-31T23:30:00Z', timezone: 'UTC+14' }, 'start_date'],
  ]
  for (const [method, url, payload, field] of cases) {
    const res = await post(url, payload, method)
    t.equal(res.statusCode, 400, `${method} ${url} ${JSON.stringify(payload)}`)
    t.same(Object.keys(res.json<{ data: { params: Record<string, string> } }>().data.params), [field])
  }
  t.equal(rows(), before, 'nothing was written')
  // The same instants where they have a wall time are fine.
  t.equal((await post('/organizers/1', { date_utc: '0001-01-01 06:00:00' }, 'PATCH')).statusCode, 200)
  t.equal((await post('/events', { title: 'Old', start_date: '0001-01-01T06:00:00Z', end_date: '0001-01-01T07:00:00Z', timezone: 'America/New_York' })).statusCode, 201)
})

t.test('a JSON string with a lone surrogate escape is 400 rest_invalid_json, not stored mangled', async (t) => {
  const built = await build(t, { sqlite: true })
  const { inject, auth } = built
  const sqlite = built.sqlite()
  const editor = { ...(await auth('editor')), 'content-type': 'application/json' }
  const rows = () => sqlite.prepare('SELECT (SELECT count(*) FROM terms) + (SELECT count(*) FROM events) + (SELECT count(*) FROM venues)').pluck().get()
  const before = rows()
  const cases: Array<[string, string]> = [
    ['/tags', '{"name":"\\ud800"}'],
    ['/categories', '{"name":"x\\udc00y"}'],
    ['/categories', '{"name":"x","description":"\\udbff\\udbff"}'],
    ['/venues', '{"venue":"Hall","city":"\\ud83c"}'],
    ['/events', `{"title":"x","start_date":"2026-07-01","end_date":"2026-07-01","venue":[{"venue":"\\ud800"}]}`],
    ['/tags', '{"name":"x","\\ud800":1}'],
  ]
  for (const [path, payload] of cases) {
    const res = await inject({ method: 'POST', url: `${API}${path}`, headers: editor, payload })
    t.equal(res.statusCode, 400, `${path} ${payload}`)
    t.equal(res.json().code, 'rest_invalid_json')
  }
  t.equal(rows(), before, 'nothing was written')
  // A pair is one character; an escaped backslash before `u` is plain text.
  const pair = await inject({ method: 'POST', url: `${API}/tags`, headers: editor, payload: '{"name":"\\ud83c\\udf89 party"}' })
  t.equal(pair.json().name, '🎉 party')
  const text = await inject({ method: 'POST', url: `${API}/tags`, headers: editor, payload: '{"name":"a\\\\ud800"}' })
  t.equal(text.json().name, 'a\\ud800')
})
