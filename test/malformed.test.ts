/**
 * A catalogue of malformed input, on every resource (CONTRACT §1, §3, §10): bodies over the limit, other
 * media types, malformed JSON, deep nesting, invalid UTF-8, 100 kB strings and parameters, null bytes,
 * numbers beyond 2^63, zero and negative pages, SQL metacharacters and LIKE wildcards in `search`.
 * Each gets a declared 4xx with the error body, or the right 2xx where the input is valid, and a refused
 * request changes nothing: every table's row count and content hash are compared before and after.
 * (Every answer is also checked against the spec by `build`'s `inject`.)
 */
import { createHash } from 'node:crypto'
import { sql } from 'kysely'
import t from 'tap'
import type { Test } from 'tap'
import { API, build, type Built, type Injected } from './helpers/build.js'

type Json = Record<string, unknown>
type Headers = Record<string, string>

const JSON_TYPE = { 'content-type': 'application/json' }
const FORM = { 'content-type': 'application/x-www-form-urlencoded' }
const LIMIT = 1024 * 1024
const TWO_63 = '9223372036854775808'

interface Resource {
  /** Collection path segment. */
  path: 'events' | 'venues' | 'organizers' | 'categories' | 'tags'
  singular: 'event' | 'venue' | 'organizer' | 'category' | 'tag'
  /** The field holding the record's name. */
  name: 'title' | 'venue' | 'organizer' | 'name'
  /** Addressed by slug too. */
  bySlug: boolean
  /** The most characters its name may have (terms: 200, as WordPress keeps them); unbounded if not given. */
  maxName?: number
  /** A valid create body around a name. */
  create(name: string): Json
}

const EVENT_DATES = { start_date: '2026-07-01 18:00:00', end_date: '2026-07-01 21:00:00' }
const RESOURCES: readonly Resource[] = [
  { path: 'events', singular: 'event', name: 'title', bySlug: true, create: (name) => ({ title: name, ...EVENT_DATES }) },
  { path: 'venues', singular: 'venue', name: 'venue', bySlug: true, create: (name) => ({ venue: name }) },
  { path: 'organizers', singular: 'organizer', name: 'organizer', bySlug: true, create: (name) => ({ organizer: name }) },
  { path: 'categories', singular: 'category', name: 'name', bySlug: false, maxName: 200, create: (name) => ({ name }) },
  { path: 'tags', singular: 'tag', name: 'name', bySlug: false, maxName: 200, create: (name) => ({ name }) },
]

interface Fixture extends Built {
  editor: Headers
  /** The id and (for events, venues, organizers) slug of one record per resource. */
  record: Record<Resource['path'], { id: number; slug: string }>
}

/** An app with one record of each resource (the event linked to the others). */
async function setup(t: Test): Promise<Fixture> {
  const built = await build(t)
  const editor = await built.auth('editor')
  const create = async (path: string, body: Json) => {
    const res = await built.inject({ method: 'POST', url: `${API}/${path}`, headers: editor, payload: body })
    if (res.statusCode !== 201) throw new Error(`setup: POST ${path} ${res.statusCode} ${res.body}`)
    const record = res.json<{ id: number; slug: string }>()
    return { id: record.id, slug: record.slug }
  }
  const categories = await create('categories', { name: 'Music' })
  const tags = await create('tags', { name: 'Outdoor' })
  const venues = await create('venues', { venue: 'Main Hall', city: 'Vienna' })
  const organizers = await create('organizers', { organizer: 'City Council', email: 'council@example.org' })
  const events = await create('events', { title: 'Summer Concert', ...EVENT_DATES, categories: [categories.id], tags: [tags.id], venue: [venues.id], organizer: [organizers.id] })
  return { ...built, editor, record: { events, venues, organizers, categories, tags } }
}

/**
 * The tables of the test's own database. On PostgreSQL those of its schema, read from the catalog: Kysely's
 * introspector reads every schema's tables, and failed (42P01) when another test process dropped its
 * schema during the read.
 */
async function tableNames(built: Built): Promise<string[]> {
  if (built.engine !== 'postgres') return (await built.db.introspection.getTables()).map((table) => table.name)
  const { rows } = await sql<{ name: string }>`select c.relname as name from pg_catalog.pg_class c
    join pg_catalog.pg_namespace n on n.oid = c.relnamespace
    where n.nspname = current_schema() and c.relkind in ('r', 'p', 'v')`.execute(built.db)
  return rows.map((row) => row.name)
}

/** Row count and content hash of every table (rows in a stable order, whatever the engine). */
async function dump(built: Built): Promise<Record<string, { rows: number; hash: string }>> {
  // The data, not what reads store of it: an event's stored document (migration 0009) is written by the
  // anonymous read that assembled it.
  const tables = (await tableNames(built)).filter((name) => !name.startsWith('kysely_') && name !== 'event_documents').sort()
  for (const table of ['events', 'venues', 'organizers', 'terms', 'change_log']) {
    if (!tables.includes(table)) throw new Error(`the table list misses ${table}: ${tables.join(', ')}`)
  }
  const out: Record<string, { rows: number; hash: string }> = {}
  for (const table of tables) {
    const { rows } = await sql<Record<string, unknown>>`select * from ${sql.table(table)}`.execute(built.db)
    const lines = rows.map((row) => JSON.stringify(row)).sort()
    out[table] = { rows: rows.length, hash: createHash('sha256').update(lines.join('\n')).digest('hex') }
  }
  return out
}

/** Runs `body`, then checks that no table changed. */
async function unchanged(t: Test, built: Built, body: () => Promise<void>): Promise<void> {
  const before = await dump(built)
  await body()
  t.strictSame(await dump(built), before, 'no table changed')
}

/** The write routes of a resource: create, and update by id and by slug with POST, PUT and PATCH. */
function writeRoutes(fixture: Fixture, resource: Resource): Array<{ method: 'POST' | 'PUT' | 'PATCH'; url: string }> {
  const { id, slug } = fixture.record[resource.path]
  const routes: Array<{ method: 'POST' | 'PUT' | 'PATCH'; url: string }> = [{ method: 'POST', url: `${API}/${resource.path}` }]
  for (const method of ['POST', 'PUT', 'PATCH'] as const) {
    routes.push({ method, url: `${API}/${resource.path}/${id}` })
    if (resource.bySlug) routes.push({ method, url: `${API}/${resource.path}/by-slug/${slug}` })
  }
  return routes
}

function everyWriteRoute(fixture: Fixture) {
  return RESOURCES.flatMap((resource) => writeRoutes(fixture, resource).map((route) => ({ ...route, resource })))
}

interface ErrorBody {
  code: string
  message: string
  data: { status: number; params?: Record<string, string> | string[] }
}

/** Asserts an error answer with its body; returns the body. */
function refused(t: Test, res: Injected, status: number, code: string | RegExp, what: string): ErrorBody {
  t.equal(res.statusCode, status, `${what}: ${status}`)
  const body = res.json<ErrorBody>()
  if (typeof code === 'string') t.equal(body.code, code, `${what}: ${code}`)
  else t.match(body.code, code, `${what}: ${code}`)
  t.equal(body.data.status, status)
  t.type(body.message, 'string')
  return body
}

function resourceAt(path: Resource['path']): Resource {
  const resource = RESOURCES.find((r) => r.path === path)
  if (resource === undefined) throw new Error(`no resource ${path}`)
  return resource
}

/** The ids a list answer holds. */
function idsOf(res: Injected, resource: Resource): number[] {
  const records = res.json<Json>()[resource.path]
  return Array.isArray(records) ? records.map((r: { id: number }) => r.id).sort((a, b) => a - b) : []
}

function paramsOf(body: ErrorBody): string[] {
  const params = body.data.params
  return Array.isArray(params) ? params : Object.keys(params ?? {})
}

t.test('bodies over 1 MiB are 413 rest_payload_too_large on every write route, JSON and form; nothing changes', async (t) => {
  const fixture = await setup(t)
  await unchanged(t, fixture, async () => {
    for (const { method, url, resource } of everyWriteRoute(fixture)) {
      const json = JSON.stringify({ ...resource.create('Big'), description: 'x'.repeat(LIMIT) })
      const asJson = await fixture.inject({ method, url, headers: { ...fixture.editor, ...JSON_TYPE }, payload: json })
      refused(t, asJson, 413, 'rest_payload_too_large', `${method} ${url} JSON`)
      const asForm = await fixture.inject({ method, url, headers: { ...fixture.editor, ...FORM }, payload: `description=${'x'.repeat(LIMIT)}` })
      refused(t, asForm, 413, 'rest_payload_too_large', `${method} ${url} form`)
      // The key is checked before the body (CONTRACT §1).
      const anonymous = await fixture.inject({ method, url, headers: JSON_TYPE, payload: json })
      refused(t, anonymous, 401, 'rest_forbidden', `${method} ${url} without a key`)
    }
  })
})

t.test('bodies of another media type are 415 rest_unsupported_media_type on every write route; nothing changes', async (t) => {
  const fixture = await setup(t)
  const types = ['text/plain', 'application/xml', 'multipart/form-data; boundary=x', 'application/octet-stream', 'text/json', 'application/merge-patch+json', 'application/jsonx', 'text/html; charset=utf-8',
    // Types the server answers with (the feeds, /doc): no body of theirs is taken either.
    'text/calendar', 'text/calendar; charset=utf-8', 'application/yaml']
  await unchanged(t, fixture, async () => {
    for (const { method, url, resource } of everyWriteRoute(fixture)) {
      for (const type of types) {
        const res = await fixture.inject({ method, url, headers: { ...fixture.editor, 'content-type': type }, payload: JSON.stringify(resource.create('Typed')) })
        refused(t, res, 415, 'rest_unsupported_media_type', `${method} ${url} ${type}`)
      }
    }
  })
})

t.test('malformed JSON is 400 rest_invalid_json on every write route; nothing changes', async (t) => {
  const fixture = await setup(t)
  const payloads = ['{', '{"name":', '{"name":}', "{'name':'x'}", '{name:"x"}', '{"name":"x",}', '[1,]', '{"name":"x"}}', '{"name":"x"} x', 'NaN', 'undefined', '{"name":"\\x"}', '{"name":"\u0001"}', '\u0000']
  await unchanged(t, fixture, async () => {
    for (const { method, url } of everyWriteRoute(fixture)) {
      for (const payload of payloads) {
        const res = await fixture.inject({ method, url, headers: { ...fixture.editor, ...JSON_TYPE }, payload })
        refused(t, res, 400, 'rest_invalid_json', `${method} ${url} ${JSON.stringify(payload)}`)
      }
    }
  })
})

t.test('JSON nested 1,000 and 100,000 levels deep is a 400, as the body or as a field, never a 5xx; nothing changes', async (t) => {
  const fixture = await setup(t)
  const deepArray = (n: number) => `${'['.repeat(n)}${']'.repeat(n)}`
  const deepObject = (n: number) => `${'{"a":'.repeat(n)}1${'}'.repeat(n)}`
  await unchanged(t, fixture, async () => {
    for (const { method, url, resource } of everyWriteRoute(fixture)) {
      const named = JSON.stringify(resource.create('Deep')).slice(0, -1)
      for (const payload of [deepArray(1000), deepObject(1000), `${named},"${resource.name}":${deepArray(1000)}}`, `${named},"description":${deepObject(1000)}}`, `${named},"extra":${deepArray(1000)}}`]) {
        const res = await fixture.inject({ method, url, headers: { ...fixture.editor, ...JSON_TYPE }, payload })
        refused(t, res, 400, /^rest_(invalid_param|missing_callback_param)$/, `${method} ${url} ${payload.slice(0, 40)}…`)
      }
      // Far deeper than any parser's stack, still under the size limit: as the body, and as a field (which
      // the checks before validation walk: 6,000 levels there were a 500).
      const res = await fixture.inject({ method, url, headers: { ...fixture.editor, ...JSON_TYPE }, payload: deepArray(200_000) })
      refused(t, res, 400, /^rest_invalid_(json|param)$/, `${method} ${url} 200,000 levels`)
      for (const payload of [`${named},"${resource.name}":${deepArray(100_000)}}`, `${named},"extra":${deepObject(50_000)}}`]) {
        const deep = await fixture.inject({ method, url, headers: { ...fixture.editor, ...JSON_TYPE }, payload })
        refused(t, deep, 400, /^rest_invalid_(json|param)$/, `${method} ${url} a field ${payload.length.toLocaleString('en')} characters deep`)
      }
    }
    const inline = await fixture.inject({ method: 'POST', url: `${API}/events`, headers: fixture.editor, payload: JSON.parse(`{"title":"x","start_date":"2026-07-01","end_date":"2026-07-01","venue":[{"venue":"v","description":${deepArray(1000)}}]}`) })
    refused(t, inline, 400, 'rest_invalid_param', 'an inline venue with a deep field')
  })
  // In a query it is only text.
  for (const resource of RESOURCES) {
    const res = await fixture.inject({ url: `${API}/${resource.path}?search=${encodeURIComponent(deepArray(1000))}` })
    t.equal(res.statusCode, 200, `${resource.path} search with 2,000 brackets`)
  }
})

t.test('invalid UTF-8 is 400 in JSON and form bodies, raw or percent-encoded; nothing changes', async (t) => {
  const fixture = await setup(t)
  const sequences = [[0xff], [0xfe, 0xff], [0xc0, 0xaf], [0xe0, 0x80, 0xaf], [0xed, 0xa0, 0x80], [0xf4, 0x90, 0x80, 0x80], [0xe2, 0x82], [0x80]]
  const around = (before: string, bytes: number[], after: string) => Buffer.concat([Buffer.from(before), Buffer.from(bytes), Buffer.from(after)])
  await unchanged(t, fixture, async () => {
    for (const { method, url, resource } of everyWriteRoute(fixture)) {
      for (const bytes of sequences) {
        const what = `${method} ${url} ${Buffer.from(bytes).toString('hex')}`
        const json = await fixture.inject({ method, url, headers: { ...fixture.editor, ...JSON_TYPE }, payload: around(`{"${resource.name}":"a`, bytes, 'b"}') })
        refused(t, json, 400, 'rest_invalid_json', `${what} JSON`)
        const form = await fixture.inject({ method, url, headers: { ...fixture.editor, ...FORM }, payload: around(`${resource.name}=a`, bytes, 'b') })
        refused(t, form, 400, 'rest_invalid_request', `${what} form`)
        const escaped = bytes.map((b) => `%${b.toString(16).padStart(2, '0')}`).join('')
        const percent = await fixture.inject({ method, url, headers: { ...fixture.editor, ...FORM }, payload: `${resource.name}=a${escaped}b` })
        refused(t, percent, 400, 'rest_invalid_request', `${what} form, percent-encoded`)
      }
    }
  })
  // Percent-encoded UTF-8 in a form is fine, and a stray % is a plain character.
  const ok = await fixture.inject({ method: 'POST', url: `${API}/tags`, headers: { ...fixture.editor, ...FORM }, payload: 'name=Caf%C3%A9%20100%' })
  t.equal(ok.statusCode, 201)
  t.equal(ok.json().name, 'Café 100%')
  // In a path it is a malformed URL; in a query it is kept as the text sent.
  for (const resource of RESOURCES) {
    if (resource.bySlug) refused(t, await fixture.inject({ url: `${API}/${resource.path}/by-slug/a%ffb` }), 400, 'rest_invalid_param', `${resource.path} slug %ff`)
    const list = await fixture.inject({ url: `${API}/${resource.path}?search=%ff` })
    t.equal(list.statusCode, 200, `${resource.path} search %ff`)
    t.equal(list.json().total, 0)
  }
})

t.test('100 kB strings are stored and returned exactly; 100 kB parameters are answered; never a 5xx', async (t) => {
  const fixture = await setup(t)
  const long = `${'ü'.repeat(50_000)}${'x'.repeat(1_000)}`
  for (const resource of RESOURCES) {
    // A term's name is at most 200 characters: a longer one is refused naming it, and the longest it may be is kept.
    const name = resource.maxName === undefined ? long : long.slice(0, resource.maxName)
    if (resource.maxName !== undefined) {
      await unchanged(t, fixture, async () => {
        refused(t, await fixture.inject({ method: 'POST', url: `${API}/${resource.path}`, headers: fixture.editor, payload: resource.create(long) }),
          400, 'rest_invalid_param', `${resource.path} with a 100 kB name`)
      })
    }
    const created = await fixture.inject({ method: 'POST', url: `${API}/${resource.path}`, headers: fixture.editor, payload: { ...resource.create(name), description: long } })
    t.equal(created.statusCode, 201, `${resource.path} with a ${name.length}-character name`)
    const record = created.json<Json & { id: number; slug: string }>()
    t.equal(record[resource.name], name, 'the name comes back exactly')
    t.equal(record.description, long, 'the description comes back exactly')
    t.ok(record.slug.length <= 200, 'the slug stays within 200 characters')
    const read = await fixture.inject({ url: `${API}/${resource.path}/${record.id}` })
    t.equal(read.json()[resource.name], name)
    const search = await fixture.inject({ url: `${API}/${resource.path}?hide_empty=false&search=${encodeURIComponent(name)}` })
    t.equal(search.statusCode, 200)
    t.same(idsOf(search, resource), [record.id], '100 kB search finds it')
  }
  await unchanged(t, fixture, async () => {
    const big = 'y'.repeat(100_000)
    for (const resource of RESOURCES) {
      const { id } = fixture.record[resource.path]
      const search = await fixture.inject({ url: `${API}/${resource.path}?search=${big}` })
      t.equal(search.statusCode, 200, `${resource.path} 100 kB search`)
      t.equal(search.json().total, 0)
      refused(t, await fixture.inject({ url: `${API}/${resource.path}?ml_language=${big}` }), 400, 'rest_invalid_param', `${resource.path} 100 kB ml_language`)
      // A page number of 100,000 digits is past the last page.
      refused(t, await fixture.inject({ url: `${API}/${resource.path}?page=${'9'.repeat(100_000)}` }), 404, `${resource.singular}-archive-page-not-found`, `${resource.path} 100 kB page`)
      refused(t, await fixture.inject({ url: `${API}/${resource.path}/${'1'.repeat(100_000)}` }), 404, 'rest_no_route', `${resource.path} 100 kB id`)
      if (resource.bySlug) refused(t, await fixture.inject({ url: `${API}/${resource.path}/by-slug/${big}` }), 404, 'rest_no_route', `${resource.path} 100 kB slug`)
      // Any slug or id a socket can send (its request line is at most 16 kB) names no record.
      if (resource.bySlug) refused(t, await fixture.inject({ url: `${API}/${resource.path}/by-slug/${big.slice(0, 12_000)}` }), 404, `rest-${resource.singular}-not-found`, `${resource.path} 12 kB slug`)
      refused(t, await fixture.inject({ url: `${API}/${resource.path}/${'1'.repeat(12_000)}` }), 404, `rest-${resource.singular}-not-found`, `${resource.path} 12 kB id`)
      const stale = await fixture.inject({ method: 'PATCH', url: `${API}/${resource.path}/${id}`, headers: { ...fixture.editor, 'if-match': big }, payload: {} })
      refused(t, stale, 412, 'rest-precondition-failed', `${resource.path} 100 kB If-Match`)
      const fresh = await fixture.inject({ url: `${API}/${resource.path}/${id}`, headers: { 'if-none-match': big } })
      t.equal(fresh.statusCode, 200, `${resource.path} 100 kB If-None-Match`)
    }
    const password = await fixture.inject({ url: `${API}/events/${fixture.record.events.id}?password=${big}` })
    t.equal(password.statusCode, 200, 'a 100 kB password on an event without one')
  })
})

t.test('null bytes in strings and parameters are refused naming the field (PostgreSQL cannot store them), in paths name nothing, in field names are refused too', async (t) => {
  const fixture = await setup(t)
  await unchanged(t, fixture, async () => {
    for (const resource of RESOURCES) {
      const name = `Nul\u0000${resource.singular}\u0000`
      const created = await fixture.inject({ method: 'POST', url: `${API}/${resource.path}`, headers: fixture.editor, payload: { ...resource.create(name) } })
      t.same(paramsOf(refused(t, created, 400, 'rest_invalid_param', `${resource.path} with null bytes`)), [resource.name])
      const described = await fixture.inject({ method: 'POST', url: `${API}/${resource.path}`, headers: fixture.editor, payload: { ...resource.create('Plain'), description: 'a\u0000b' } })
      t.same(paramsOf(refused(t, described, 400, 'rest_invalid_param', `${resource.path} description with a null byte`)), ['description'])
      const form = await fixture.inject({ method: 'POST', url: `${API}/${resource.path}`, headers: { ...fixture.editor, ...FORM }, payload: `${new URLSearchParams({ ...(resource.create(`Form\u0000${resource.singular}`) as Record<string, string>) })}` })
      refused(t, form, 400, 'rest_invalid_param', `${resource.path} form with a null byte`)
      const search = await fixture.inject({ url: `${API}/${resource.path}?hide_empty=false&search=%00${resource.singular}%00` })
      t.same(paramsOf(refused(t, search, 400, 'rest_invalid_param', `${resource.path} search with a null byte`)), ['search'])
    }
  })
  await unchanged(t, fixture, async () => {
    for (const resource of RESOURCES) {
      const { id, slug } = fixture.record[resource.path]
      const name = JSON.stringify(resource.name)
      const key = await fixture.inject({ method: 'PATCH', url: `${API}/${resource.path}/${id}`, headers: { ...fixture.editor, ...JSON_TYPE }, payload: `{${name.slice(0, 2)}\\u0000${name.slice(2)}:"x"}` })
      const body = refused(t, key, 400, 'rest_invalid_param', `${resource.path} a field name with a null byte`)
      t.same(paramsOf(body), [`${resource.name.slice(0, 1)}\u0000${resource.name.slice(1)}`], 'named as sent')
      refused(t, await fixture.inject({ url: `${API}/${resource.path}/${id}%00` }), 404, 'rest_no_route', `${resource.path} id with a null byte`)
      refused(t, await fixture.inject({ url: `${API}/${resource.path}?ml_language=en%00` }), 400, 'rest_invalid_param', `${resource.path} ml_language with a null byte`)
      refused(t, await fixture.inject({ url: `${API}/${resource.path}?page=1%00` }), 400, 'rest_invalid_param', `${resource.path} page with a null byte`)
      if (resource.bySlug) {
        refused(t, await fixture.inject({ url: `${API}/${resource.path}/by-slug/${slug}%00` }), 404, `rest-${resource.singular}-not-found`, `${resource.path} slug with a null byte`)
        const update = await fixture.inject({ method: 'PATCH', url: `${API}/${resource.path}/by-slug/%00`, headers: fixture.editor, payload: {} })
        refused(t, update, 404, `rest-${resource.singular}-not-found`, `${resource.path} update of slug %00`)
      }
    }
  })
})

t.test('numbers beyond 2^63 in paths, pages and bodies are a 404 or 400 naming the field, never a 5xx; nothing changes', async (t) => {
  const fixture = await setup(t)
  const huge = [TWO_63, '18446744073709551616', '99999999999999999999999999999999']
  await unchanged(t, fixture, async () => {
    for (const resource of RESOURCES) {
      for (const id of huge) {
        refused(t, await fixture.inject({ url: `${API}/${resource.path}/${id}` }), 404, `rest-${resource.singular}-not-found`, `GET ${resource.path}/${id}`)
        const update = await fixture.inject({ method: 'PATCH', url: `${API}/${resource.path}/${id}`, headers: fixture.editor, payload: {} })
        refused(t, update, 404, `rest-${resource.singular}-not-found`, `PATCH ${resource.path}/${id}`)
        const remove = await fixture.inject({ method: 'DELETE', url: `${API}/${resource.path}/${id}`, headers: fixture.editor })
        refused(t, remove, 404, `rest-${resource.singular}-not-found`, `DELETE ${resource.path}/${id}`)
        refused(t, await fixture.inject({ url: `${API}/${resource.path}?page=${id}` }), 404, `${resource.singular}-archive-page-not-found`, `${resource.path}?page=${id}`)
        const perPage = await fixture.inject({ url: `${API}/${resource.path}?hide_empty=false&per_page=${id}` })
        t.equal(perPage.statusCode, 200, `${resource.path}?per_page=${id}`)
        t.match(perPage.json().rest_url, /per_page=50/, 'clamped to 50')
        if (resource.path === 'events' || !resource.bySlug) {
          // `include` ids that do not exist match nothing (CONTRACT §3).
          const include = await fixture.inject({ url: `${API}/${resource.path}?include=${id}` })
          t.equal(include.statusCode, 200, `${resource.path}?include=${id}`)
          t.equal(include.json().total, 0)
        }
      }
      // Integer fields of a body: an unknown record, named.
      const integers: Array<[string, Json]> = [['translation_of', { translation_of: 0 }]]
      if (resource.path === 'categories') integers.push(['parent', { parent: 0 }])
      if (resource.path !== 'categories' && resource.path !== 'tags') integers.push(['author', { author: 0 }], ['image', { image: 0 }])
      for (const [field] of integers) {
        for (const raw of [TWO_63, '1e19', '18446744073709551616']) {
          const payload = `${JSON.stringify(resource.create('Big')).slice(0, -1)},"${field}":${raw}}`
          const res = await fixture.inject({ method: 'POST', url: `${API}/${resource.path}`, headers: { ...fixture.editor, ...JSON_TYPE }, payload })
          t.same(paramsOf(refused(t, res, 400, 'rest_invalid_param', `POST ${resource.path} ${field}: ${raw}`)), [field])
        }
        const infinite = await fixture.inject({ method: 'POST', url: `${API}/${resource.path}`, headers: { ...fixture.editor, ...JSON_TYPE }, payload: `${JSON.stringify(resource.create('Big')).slice(0, -1)},"${field}":1e400}` })
        t.same(paramsOf(refused(t, infinite, 400, 'rest_invalid_param', `POST ${resource.path} ${field}: 1e400`)), [field])
      }
    }
    for (const field of ['categories', 'tags', 'venue', 'organizer']) {
      const res = await fixture.inject({ method: 'POST', url: `${API}/events`, headers: { ...fixture.editor, ...JSON_TYPE }, payload: `{"title":"Big","start_date":"2026-07-01","end_date":"2026-07-01","${field}":[${TWO_63}]}` })
      t.same(paramsOf(refused(t, res, 400, 'rest_invalid_param', `POST events ${field}: [2^63]`)), [field])
      const form = await fixture.inject({ method: 'POST', url: `${API}/events`, headers: { ...fixture.editor, ...FORM }, payload: `title=Big&start_date=2026-07-01&end_date=2026-07-01&${field}=${TWO_63}` })
      t.same(paramsOf(refused(t, form, 400, 'rest_invalid_param', `POST events form ${field}=2^63`)), [field])
    }
    for (const [path, query] of [['events', `venue=${TWO_63}`], ['events', `organizer=${TWO_63}`], ['events', `post_parent=${TWO_63}`], ['events', `categories=${TWO_63}`], ['events', `tags=${TWO_63}`], ['venues', `event=${TWO_63}`], ['organizers', `event=${TWO_63}`], ['categories', `post=${TWO_63}`], ['categories', `parent=${TWO_63}`], ['tags', `event=${TWO_63}`]] as const) {
      const res = await fixture.inject({ url: `${API}/${path}?${query}` })
      t.same(paramsOf(refused(t, res, 400, 'rest_invalid_param', `${path}?${query}`)), [query.split('=')[0]])
    }
  })
})

t.test('zero, negative, fractional and empty pages are 400 rest_invalid_param on every list', async (t) => {
  const fixture = await setup(t)
  for (const resource of RESOURCES) {
    for (const query of ['page=0', 'page=-1', `page=-${TWO_63}`, 'page=1.5', 'page=', 'page=abc', 'page=1e2', 'per_page=0', 'per_page=-5', 'per_page=2.5', 'per_page=', 'page=1&page=2']) {
      const body = refused(t, await fixture.inject({ url: `${API}/${resource.path}?${query}` }), 400, 'rest_invalid_param', `${resource.path}?${query}`)
      t.same(paramsOf(body), [query.split('=')[0]])
    }
    t.equal((await fixture.inject({ url: `${API}/${resource.path}?page=1&per_page=1&hide_empty=false` })).statusCode, 200)
  }
})

t.test('search takes %, _, \\ and quotes literally on every list, and SQL in it is harmless', async (t) => {
  const fixture = await setup(t)
  const names = ['Plain', '100% Sure', 'Under_score', 'Back\\slash', "O'Hara", 'Semi; DROP TABLE events; --', 'Comment /* x */', 'Quote " mark']
  const ids: Record<string, Record<string, number>> = {}
  for (const resource of RESOURCES) {
    ids[resource.path] = {}
    for (const name of names) {
      const res = await fixture.inject({ method: 'POST', url: `${API}/${resource.path}`, headers: fixture.editor, payload: resource.create(name) })
      t.equal(res.statusCode, 201, `${resource.path} ${name}`)
      const byPath = ids[resource.path]
      if (byPath !== undefined) byPath[name] = res.json<{ id: number }>().id
    }
  }
  const cases: Array<[string, string[]]> = [
    ['%', ['100% Sure']], ['_', ['Under_score']], ['\\', ['Back\\slash']], ["'", ["O'Hara"]], ['"', ['Quote " mark']],
    ['%%', []], ['100%', ['100% Sure']], ['0%_S', []], ['r_s', ['Under_score']], ['_%', []], ['%s', []], ['\\s', ['Back\\slash']],
    [';', ['Semi; DROP TABLE events; --']], ['--', ['Semi; DROP TABLE events; --']], ['/*', ['Comment /* x */']],
    ["' OR '1'='1", []], ["'; DELETE FROM events; --", []], ['") OR 1=1 --', []], ['*', ['Comment /* x */']], ['[a-z]', []],
  ]
  await unchanged(t, fixture, async () => {
    for (const resource of RESOURCES) {
      const byName = ids[resource.path] ?? {}
      for (const [search, expected] of cases) {
        const res = await fixture.inject({ url: `${API}/${resource.path}?hide_empty=false&per_page=50&search=${encodeURIComponent(search)}` })
        t.equal(res.statusCode, 200, `${resource.path} search ${search}`)
        t.same(idsOf(res, resource), expected.map((n) => byName[n]).sort((a, b) => (a ?? 0) - (b ?? 0)), `${resource.path} search ${JSON.stringify(search)}`)
        t.match(res.json().rest_url, `search=${encodeURIComponent(search)}`, 'rest_url carries the search as sent')
      }
    }
  })
  // Every table is still there, with its rows.
  const counts = await fixture.inject({ url: `${API}/events?per_page=50` })
  t.equal(counts.json().total, names.length + 1)
})

// Regression tests of what this catalogue found.

t.test('a form body whose %-escapes do not decode to UTF-8 is 400 rest_invalid_request, not stored with U+FFFD', async (t) => {
  const fixture = await setup(t)
  await unchanged(t, fixture, async () => {
    for (const payload of ['name=%ff', 'name=a%C3', 'name=%C3%28', 'name=%ED%A0%80', 'description=%80&name=x', 'na%ffme=x']) {
      const res = await fixture.inject({ method: 'POST', url: `${API}/categories`, headers: { ...fixture.editor, ...FORM }, payload })
      refused(t, res, 400, 'rest_invalid_request', payload)
    }
  })
  const ok = await fixture.inject({ method: 'POST', url: `${API}/categories`, headers: { ...fixture.editor, ...FORM }, payload: 'name=%E2%82%AC+100%25+%F0%9F%8E%89+50%' })
  t.equal(ok.statusCode, 201)
  t.equal(ok.json().name, '€ 100% 🎉 50%')
})

t.test('id lists longer than the 32,766 parameters SQLite binds are refused naming the list (at most 100 values), never a 5xx', async (t) => {
  const fixture = await setup(t)
  const many = (n: number, first = 1) => Array.from({ length: n }, (_, i) => first + i)
  const { events, venues, categories, tags } = fixture.record
  const ids = [...many(40_000, 1000), events.id, categories.id, tags.id]
  const list = ids.join(',')
  await unchanged(t, fixture, async () => {
    const included = await fixture.inject({ url: `${API}/events?include=${list}` })
    t.same(paramsOf(refused(t, included, 400, 'rest_invalid_param', 'events?include= 40,003 ids')), ['include'])
    const venue = await fixture.inject({ url: `${API}/events?venue=${[venues.id, ...many(40_000, 1000)].join(',')}` })
    t.same(paramsOf(refused(t, venue, 400, 'rest_invalid_param', 'events?venue= 40,001 ids')), ['venue'])
    for (const path of ['categories', 'tags'] as const) {
      const include = await fixture.inject({ url: `${API}/${path}?hide_empty=false&include=${list}&orderby=include&order=desc` })
      t.same(paramsOf(refused(t, include, 400, 'rest_invalid_param', `${path}?include= 40,003 ids`)), ['include'])
      const exclude = await fixture.inject({ url: `${API}/${path}?hide_empty=false&exclude=${list}` })
      t.same(paramsOf(refused(t, exclude, 400, 'rest_invalid_param', `${path}?exclude= 40,003 ids`)), ['exclude'])
    }
    // The most a list takes still finds what exists among ids that do not.
    const hundred = [...many(99, 1000), events.id].join(',')
    const fits = await fixture.inject({ url: `${API}/events?include=${hundred}` })
    t.equal(fits.statusCode, 200)
    t.same(idsOf(fits, resourceAt('events')), [events.id], 'events?include= 100 ids finds the one that exists')
  })
  // orderby=include keeps the order of the list, its first mention of each id.
  const second = await fixture.inject({ method: 'POST', url: `${API}/tags`, headers: fixture.editor, payload: { name: 'Second' } })
  const order = await fixture.inject({ url: `${API}/tags?hide_empty=false&include=${[second.json().id, 999, tags.id, second.json().id].join(',')}&orderby=include` })
  t.same((order.json<Json>().tags as Array<{ id: number }>).map((r) => r.id), [second.json().id, tags.id])
})

t.test('an event linked to more terms than one INSERT can bind (16,500 tags) is refused naming tags, never a 5xx', async (t) => {
  const fixture = await setup(t)
  const count = 16_500
  const rows = Array.from({ length: count }, (_, i) => ({ taxonomy: 'tag' as const, language: 'en', translation_group: null, name: `bulk ${i}`, name_key: `bulk ${i}`, slug: `bulk-${i}`, description: null }))
  for (let i = 0; i < rows.length; i += 1000) await fixture.db.insertInto('terms').values(rows.slice(i, i + 1000)).execute()
  const ids = (await fixture.db.selectFrom('terms').select('id').where('slug', 'like', 'bulk-%').orderBy('id').execute()).map((r) => r.id)
  t.equal(ids.length, count)
  const refusedCreate = await fixture.inject({ method: 'POST', url: `${API}/events`, headers: fixture.editor, payload: { title: 'Tagged', ...EVENT_DATES, tags: ids } })
  t.same(paramsOf(refused(t, refusedCreate, 400, 'rest_invalid_param', '16,500 tags')), ['tags'])
  // The most a list takes (100) is written and read.
  const created = await fixture.inject({ method: 'POST', url: `${API}/events`, headers: fixture.editor, payload: { title: 'Tagged', ...EVENT_DATES, tags: ids.slice(0, 100) } })
  t.equal(created.statusCode, 201)
  const event = created.json<{ id: number; tags: unknown[] }>()
  t.equal(event.tags.length, 100, 'every tag is linked')
  const read = await fixture.inject({ url: `${API}/events/${event.id}` })
  t.equal(read.json<{ tags: unknown[] }>().tags.length, 100)
  const cleared = await fixture.inject({ method: 'PATCH', url: `${API}/events/${event.id}`, headers: fixture.editor, payload: { tags: [] } })
  t.same(cleared.json().tags, [])
})
