/**
 * Authentication and roles (CONTRACT §1 order of checks, §6): bearer keys on writes, 401 for no or an
 * unusable key, 403 for a role the operation does not allow, public reads, and keys never echoed.
 */
import t from 'tap'
import { ROLES, generateKey } from '../src/lib/api-keys.js'
import { dereference } from '../src/http/spec.js'
import { revokeKeys } from '../src/repositories/users.js'
import { withTransaction } from '../src/db/unit-of-work.js'
import { API, API_URL, build, type Injected } from './helpers/build.js'
import { SPEC } from './helpers/contract.js'

type Json = Record<string, unknown>

const RESOLVED = dereference(SPEC.document)
const WRITE_METHODS = ['post', 'put', 'patch', 'delete'] as const
const UNAUTHORIZED = { code: 'rest_forbidden', message: 'Sorry, you are not allowed to do that.', data: { status: 401 } }
const FORBIDDEN = { code: 'rest_forbidden', message: 'Sorry, you are not allowed to do that.', data: { status: 403 } }

function isJson(value: unknown): value is Json {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}

/** Every write operation of the spec, with a URL for it and the roles its security allows. */
const WRITES = Object.entries(RESOLVED.paths).flatMap(([path, item]) => WRITE_METHODS.flatMap((method) => {
  const operation = item[method]
  if (!isJson(operation)) return []
  const scopes = (Array.isArray(operation.security) ? operation.security : [])
    .flatMap((s) => (isJson(s) && Array.isArray(s.bearerAuth) ? s.bearerAuth.map(String) : []))
  return [{
    id: String(operation.operationId),
    method: method.toUpperCase() as 'POST' | 'PUT' | 'PATCH' | 'DELETE',
    url: `${API}${path}`.replace('{id}', '1').replace('{slug}', 'some-slug'),
    scopes,
    terms: path.startsWith('/categories') || path.startsWith('/tags'),
  }]
}))

function category(id: number, name: string, slug: string, description: string | null = null) {
  return {
    id, name, slug, description, parent: 0, count: 0,
    rest_url: `${API_URL}/categories/${id}`,
    urls: { self: `${API_URL}/categories/${id}`, collection: `${API_URL}/categories` },
    ml_language: 'en',
    translations: { en: id },
  }
}

function tag(id: number, name: string, slug: string, description: string | null = null) {
  return {
    id, name, slug, description, count: 0,
    rest_url: `${API_URL}/tags/${id}`,
    urls: { self: `${API_URL}/tags/${id}`, collection: `${API_URL}/tags` },
    ml_language: 'en',
    translations: { en: id },
  }
}

t.test('the spec has write operations for every resource, each with roles', async (t) => {
  t.equal(WRITES.length, 45, 'events, venues, organizers: 9 each; categories, tags: 5 each; webhooks: 3; one occurrence: 5')
  for (const write of WRITES) t.ok(write.scopes.length > 0, `${write.id} lists the roles allowed`)
  for (const write of WRITES) t.notOk(write.scopes.includes('subscriber'), `${write.id}: subscribers read only`)
})

t.test('a write without a key is 401 rest_forbidden', async (t) => {
  const { inject } = await build(t)
  for (const write of WRITES) {
    const res = await inject({ method: write.method, url: write.url, payload: write.method === 'DELETE' ? undefined : {} })
    t.equal(res.statusCode, 401, write.id)
    t.strictSame(res.json(), UNAUTHORIZED, write.id)
  }
})

t.test('a write with an unknown key is 401 rest_forbidden', async (t) => {
  const { inject, auth } = await build(t)
  await auth('administrator')
  for (const key of [generateKey(), 'cal_', 'not-a-key', 'x'.repeat(500)]) {
    for (const write of WRITES.filter((w) => w.id === 'createCategory' || w.id === 'updateVenue' || w.id === 'deleteEvent')) {
      const res = await inject({ method: write.method, url: write.url, headers: { authorization: `Bearer ${key}` }, payload: write.method === 'DELETE' ? undefined : {} })
      t.equal(res.statusCode, 401, `${write.id} with ${key.slice(0, 12)}`)
      t.strictSame(res.json(), UNAUTHORIZED)
    }
  }
})

t.test('a malformed Authorization header is 401, even around a valid key', async (t) => {
  const { inject, auth } = await build(t)
  const key = (await auth('administrator')).authorization.replace('Bearer ', '')
  const headers = ['', 'Bearer', 'Bearer ', key, `Basic ${key}`, `Token ${key}`, `Bearer ${key} extra`, `Bearer,${key}`,
    `Bearer:${key}`, `Bearer${key}`, `Bearer "${key}"`, `Bearer ${key.slice(0, -1)}`, `Bearer ${key}x`, `Bearer ${key.toUpperCase()}`]
  for (const authorization of headers) {
    const res = await inject({ method: 'POST', url: `${API}/categories`, headers: { authorization }, payload: { name: 'Rock' } })
    t.equal(res.statusCode, 401, JSON.stringify(authorization.replace(key, '<key>')))
    t.strictSame(res.json(), UNAUTHORIZED)
  }
  const list = await inject({ url: `${API}/categories?hide_empty=false` })
  t.equal(list.json().total, 0, 'nothing was created')
  // The scheme name is case-insensitive (RFC 9110), and surrounding blanks do not matter.
  for (const [index, authorization] of [`bearer ${key}`, `BEARER ${key}`, `Bearer  ${key}`, `Bearer ${key} `].entries()) {
    const res = await inject({ method: 'POST', url: `${API}/categories`, headers: { authorization }, payload: { name: `Rock ${index}` } })
    t.equal(res.statusCode, 201, JSON.stringify(authorization.replace(key, '<key>')))
  }
})

t.test('a revoked key is 401 from the next request on', async (t) => {
  const { inject, auth, db } = await build(t)
  const editor = await auth('editor', 'ci')
  const before = await inject({ method: 'POST', url: `${API}/categories`, headers: editor, payload: { name: 'Rock' } })
  t.equal(before.statusCode, 201)
  t.equal(await withTransaction(db, (trx) => revokeKeys(trx, 'ci', '2026-06-15 12:00:00')), 1)
  const after = await inject({ method: 'POST', url: `${API}/categories`, headers: editor, payload: { name: 'Jazz' } })
  t.equal(after.statusCode, 401)
  t.strictSame(after.json(), UNAUTHORIZED)
  const update = await inject({ method: 'PATCH', url: `${API}/categories/1`, headers: editor, payload: { name: 'Jazz' } })
  t.equal(update.statusCode, 401)
  const read = await inject({ url: `${API}/categories/1`, headers: editor })
  t.equal(read.statusCode, 200, 'reads stay public')
  t.strictSame(read.json(), category(1, 'Rock', 'rock'))
})

t.test('each write answers 403 exactly to the roles its operation does not list', async (t) => {
  const { inject, auth } = await build(t)
  for (const role of ROLES) {
    const headers = await auth(role)
    for (const write of WRITES) {
      const res = await inject({ method: write.method, url: write.url, headers, payload: write.method === 'DELETE' ? undefined : {} })
      if (write.scopes.includes(role)) {
        t.notOk([401, 403].includes(res.statusCode), `${role} may call ${write.id} (${res.statusCode})`)
      } else {
        t.equal(res.statusCode, 403, `${role} may not call ${write.id}`)
        t.strictSame(res.json(), FORBIDDEN)
      }
    }
  }
})

t.test('a subscriber may write nothing', async (t) => {
  const { inject, auth } = await build(t)
  const subscriber = await auth('subscriber')
  const bodies: Record<string, Json> = {
    [`${API}/events`]: { title: 'Gig', start_date: '2026-07-01 20:00:00', end_date: '2026-07-01 23:00:00' },
    [`${API}/venues`]: { venue: 'Hall' },
    [`${API}/organizers`]: { organizer: 'Crew' },
    [`${API}/categories`]: { name: 'Rock' },
    [`${API}/tags`]: { name: 'Live' },
  }
  for (const [url, payload] of Object.entries(bodies)) {
    const res = await inject({ method: 'POST', url, headers: subscriber, payload })
    t.equal(res.statusCode, 403, url)
    t.strictSame(res.json(), FORBIDDEN)
    const list = await inject({ url: `${url}?hide_empty=false`.replace(/(events|venues|organizers)\?hide_empty=false$/, '$1') })
    t.equal(list.json().total, 0, `${url}: nothing was created`)
  }
})

t.test('contributors and authors may not manage terms', async (t) => {
  const { inject, auth } = await build(t)
  const editor = await auth('editor')
  const rock = await inject({ method: 'POST', url: `${API}/categories`, headers: editor, payload: { name: 'Rock' } })
  const live = await inject({ method: 'POST', url: `${API}/tags`, headers: editor, payload: { name: 'Live' } })
  const tagId = live.json<{ id: number }>().id
  t.equal(rock.statusCode, 201)
  t.equal(live.statusCode, 201)
  for (const role of ['contributor', 'author'] as const) {
    const headers = await auth(role)
    const requests = [
      { method: 'POST', url: `${API}/categories`, payload: { name: 'Jazz' } },
      { method: 'PATCH', url: `${API}/categories/1`, payload: { name: 'Jazz' } },
      { method: 'PUT', url: `${API}/categories/1`, payload: { name: 'Jazz' } },
      { method: 'POST', url: `${API}/categories/1`, payload: { name: 'Jazz' } },
      { method: 'DELETE', url: `${API}/categories/1` },
      { method: 'POST', url: `${API}/tags`, payload: { name: 'Studio' } },
      { method: 'PATCH', url: `${API}/tags/${tagId}`, payload: { name: 'Studio' } },
      { method: 'DELETE', url: `${API}/tags/${tagId}` },
    ] as const
    for (const request of requests) {
      const res = await inject({ ...request, headers })
      t.equal(res.statusCode, 403, `${role}: ${request.method} ${request.url}`)
      t.strictSame(res.json(), FORBIDDEN)
    }
  }
  t.strictSame((await inject({ url: `${API}/categories/1` })).json(), category(1, 'Rock', 'rock'), 'unchanged')
  t.strictSame((await inject({ url: `${API}/tags/${tagId}` })).json(), tag(tagId, 'Live', 'live'), 'unchanged')
})

t.test('editors and administrators manage terms', async (t) => {
  const { inject, auth } = await build(t)
  for (const role of ['editor', 'administrator'] as const) {
    const headers = await auth(role)
    for (const [collection, record] of [['categories', category], ['tags', tag]] as const) {
      const created = await inject({ method: 'POST', url: `${API}/${collection}`, headers, payload: { name: `Rock ${role}` } })
      t.equal(created.statusCode, 201, `${role} creates in ${collection}`)
      const id = created.json<{ id: number }>().id
      t.strictSame(created.json(), record(id, `Rock ${role}`, `rock-${role}`))
      for (const [method, description] of [['PATCH', 'a'], ['PUT', 'b'], ['POST', 'c']] as const) {
        const updated = await inject({ method, url: `${API}/${collection}/${id}`, headers, payload: { description } })
        t.equal(updated.statusCode, 200, `${role} updates ${collection} with ${method}`)
        t.strictSame(updated.json(), record(id, `Rock ${role}`, `rock-${role}`, description))
      }
      const deleted = await inject({ method: 'DELETE', url: `${API}/${collection}/${id}`, headers })
      t.equal(deleted.statusCode, 200, `${role} deletes in ${collection}`)
      t.strictSame(deleted.json(), record(id, `Rock ${role}`, `rock-${role}`, 'c'))
      const gone = await inject({ url: `${API}/${collection}/${id}` })
      t.equal(gone.statusCode, 404)
    }
  }
})

t.test('the key is checked before the body: 401 and 403 win over 400, 413 and 415', async (t) => {
  const { inject, auth } = await build(t)
  const bad = [
    { name: 'malformed JSON', headers: { 'content-type': 'application/json' }, payload: '{"name":' },
    { name: 'unsupported media type', headers: { 'content-type': 'text/plain' }, payload: 'Rock' },
    { name: 'body over 1 MiB', headers: { 'content-type': 'application/json' }, payload: `{"name":"${'x'.repeat(1024 * 1024)}"}` },
    { name: 'invalid UTF-8', headers: { 'content-type': 'application/json' }, payload: Buffer.from([0x7b, 0xff, 0x7d]) },
    { name: 'unknown field', headers: {}, payload: { name: 'Rock', colour: 'blue' } },
    { name: 'missing field', headers: {}, payload: {} },
    { name: 'wrong type', headers: {}, payload: { name: 42 } },
    { name: 'invalid ml_language', headers: {}, payload: { name: 'Rock', ml_language: 'fr' } },
  ]
  const callers = [
    { who: 'anonymous', headers: {}, status: 401, body: UNAUTHORIZED },
    { who: 'unknown key', headers: { authorization: `Bearer ${generateKey()}` }, status: 401, body: UNAUTHORIZED },
    { who: 'subscriber', headers: await auth('subscriber'), status: 403, body: FORBIDDEN },
    { who: 'contributor', headers: await auth('contributor'), status: 403, body: FORBIDDEN },
  ]
  for (const caller of callers) {
    for (const request of bad) {
      for (const url of [`${API}/categories`, `${API}/categories/1`]) {
        const res = await inject({ method: 'POST', url, headers: { ...request.headers, ...caller.headers }, payload: request.payload })
        t.equal(res.statusCode, caller.status, `${caller.who}, ${request.name}, ${url}`)
        t.strictSame(res.json(), caller.body)
      }
    }
  }
  const subscriber = await auth('subscriber')
  const venue = await inject({ method: 'POST', url: `${API}/venues?ml_language=xx`, headers: subscriber, payload: { bogus: true } })
  t.equal(venue.statusCode, 403, 'query parameters are checked after the role too')
})

t.test('reads are public, and a bad key on a read is ignored', async (t) => {
  // 40 bad keys from one address: above the default failure limit (throttling.test.ts tests it).
  const { inject, auth, db } = await build(t, { config: { authFailureLimit: 100 } })
  const editor = await auth('editor', 'revoked')
  await inject({ method: 'POST', url: `${API}/categories`, headers: editor, payload: { name: 'Rock' } })
  await withTransaction(db, (trx) => revokeKeys(trx, 'revoked', '2026-06-15 12:00:00'))
  const reads = [API, `${API}/doc`, `${API}/categories?hide_empty=false`, `${API}/categories/1`, `${API}/tags`, `${API}/events`, `${API}/venues`, `${API}/organizers`]
  const keys = [undefined, `Bearer ${generateKey()}`, 'Bearer', 'Basic dXNlcjpwYXNz', 'garbage', editor.authorization]
  for (const url of reads) {
    const anonymous = await inject({ url })
    t.equal(anonymous.statusCode, 200, url)
    for (const authorization of keys) {
      const res = await inject({ url, headers: authorization === undefined ? {} : { authorization } })
      t.equal(res.statusCode, 200, `${url} with ${String(authorization).slice(0, 16)}`)
      t.equal(res.body, anonymous.body)
    }
  }
  t.strictSame((await inject({ url: `${API}/categories/1`, headers: { authorization: 'Bearer nope' } })).json(), category(1, 'Rock', 'rock'))
})

t.test('no response body or header contains the key or any part of the Authorization header', async (t) => {
  const { inject, auth } = await build(t)
  const editor = await auth('editor')
  const subscriber = await auth('subscriber')
  const unknown = { authorization: 'Bearer cal_ZZsecretZZtokenZZthatZZmustZZneverZZleakZZ' }
  const odd = { authorization: 'Basic QWxhZGRpbjpvcGVuIHNlc2FtZQ==' }
  const requests = [
    { method: 'POST', url: `${API}/categories`, headers: editor, payload: { name: 'Rock' } },
    { method: 'POST', url: `${API}/categories`, headers: editor, payload: { name: 'Rock' } },
    { method: 'POST', url: `${API}/categories`, headers: editor, payload: { colour: 'blue' } },
    { method: 'POST', url: `${API}/categories`, headers: { ...editor, 'content-type': 'text/plain' }, payload: 'x' },
    { method: 'POST', url: `${API}/categories`, headers: { ...editor, 'content-type': 'application/json' }, payload: '{' },
    { method: 'PATCH', url: `${API}/categories/9`, headers: editor, payload: { name: 'x' } },
    { method: 'GET', url: `${API}/categories/1`, headers: editor },
    { method: 'GET', url: `${API}/categories?hide_empty=nope`, headers: editor },
    { method: 'GET', url: `${API}/nope`, headers: editor },
    { method: 'OPTIONS', url: `${API}/categories`, headers: editor },
    { method: 'POST', url: `${API}/categories`, headers: subscriber, payload: { name: 'Jazz' } },
    { method: 'POST', url: `${API}/venues`, headers: subscriber, payload: { venue: 'Hall' } },
    { method: 'POST', url: `${API}/categories`, headers: unknown, payload: { name: 'Jazz' } },
    { method: 'GET', url: `${API}/categories`, headers: unknown },
    { method: 'POST', url: `${API}/tags`, headers: odd, payload: { name: 'Jazz' } },
    { method: 'GET', url: `${API}/events/by-slug/%ff`, headers: unknown },
  ] as const
  const leaks = (res: Injected, authorization: string): string[] => {
    const token = authorization.replace(/^\S+\s+/, '')
    const text = `${res.body}\n${JSON.stringify(res.headers)}`
    const parts = new Set<string>()
    for (let i = 0; i + 8 <= token.length; i++) parts.add(token.slice(i, i + 8))
    return [...parts].filter((part) => text.includes(part))
  }
  const statuses = new Set<number>()
  for (const request of requests) {
    const res = await inject({ ...request })
    statuses.add(res.statusCode)
    t.strictSame(leaks(res, request.headers.authorization), [], `${request.method} ${request.url} (${res.statusCode})`)
  }
  t.strictSame([...statuses].sort(), [200, 201, 204, 400, 401, 403, 404, 415])
})
