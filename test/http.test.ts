/**
 * Cross-cutting HTTP behaviour (CONTRACT §1, §3, §9, §10): the route index, /doc and Swagger UI, routing
 * (trailing slashes, digits-only ids, unknown paths and methods), CORS, Content-Language, ml_language,
 * request bodies, query arrays and booleans, and that every operation of the spec is served.
 */
import t from 'tap'
import { parse } from 'yaml'
import { dereference } from '../src/http/spec.js'
import { uiDocument } from '../src/http/swagger-ui.js'
import { API, API_URL, build, type Built, type Injected } from './helpers/build.js'
import { SPEC } from './helpers/contract.js'

type Json = Record<string, unknown>

const METHODS = ['get', 'post', 'put', 'patch', 'delete'] as const
const LANGUAGES = ['at', 'en', 'de', 'es', 'ch-fr', 'ch-de'] as const
const RESOLVED = dereference(SPEC.document)
/** The source's routes, and those CONTRACT §1 adds (`/changes`, §12; an event's occurrences and a split, §17). */
const SOURCE_PATHS = [
  '/', '/doc',
  '/events', '/events/{id}', '/events/{id}/occurrences', '/events/{id}/occurrences/{occurrence}', '/events/{id}/occurrences/{occurrence}/split',
  '/events/by-slug/{slug}',
  '/venues', '/venues/{id}', '/venues/by-slug/{slug}',
  '/organizers', '/organizers/{id}', '/organizers/by-slug/{slug}',
  '/categories', '/categories/{id}',
  '/tags', '/tags/{id}',
  '/changes',
  '/webhooks', '/webhooks/{id}/deliveries', '/webhooks/{id}',
]

const NO_ROUTE = { code: 'rest_no_route', message: 'No route was found matching the URL and request method.', data: { status: 404 } }
const INVALID_JSON = { code: 'rest_invalid_json', message: 'Invalid JSON body passed.', data: { status: 400 } }
const FORM = { 'content-type': 'application/x-www-form-urlencoded' }
const JSON_TYPE = { 'content-type': 'application/json' }

function isJson(value: unknown): value is Json {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}

/** `path` of the spec as a URL: `{id}` → 1, `{slug}` → `some-slug`, `{occurrence}` → an occurrence id. */
function urlOf(path: string): string {
  return `${API}${path === '/' ? '' : path}`.replace('{id}', '1').replace('{slug}', 'some-slug').replace('{occurrence}', '20260701T180000Z')
}

function operationsOf(path: string): Array<{ method: (typeof METHODS)[number]; operation: Json }> {
  const item = RESOLVED.paths[path] ?? {}
  return METHODS.flatMap((method) => {
    const operation = item[method]
    return isJson(operation) ? [{ method, operation }] : []
  })
}

function parametersOf(operation: Json): Json[] {
  return Array.isArray(operation.parameters) ? operation.parameters.filter(isJson) : []
}

function bodySchemaOf(operation: Json): Json | undefined {
  const body = operation.requestBody
  const content = isJson(body) && isJson(body.content) ? body.content['application/json'] : undefined
  return isJson(content) && isJson(content.schema) ? content.schema : undefined
}

/** The 400 body of a rejected `ml_language`. */
function invalidLanguage(where: 'querystring' | 'body') {
  return {
    code: 'rest_invalid_param',
    message: 'Invalid parameter(s): ml_language.',
    data: {
      status: 400,
      params: { ml_language: 'ml_language must be equal to one of the allowed values' },
      details: [{ field: 'ml_language', in: where, keyword: 'enum', message: 'must be equal to one of the allowed values', params: { allowedValues: [...LANGUAGES] } }],
    },
  }
}

/** The 400 body of a query parameter of the wrong type. */
function wrongType(name: string, type: string) {
  return {
    code: 'rest_invalid_param',
    message: `Invalid parameter(s): ${name}.`,
    data: {
      status: 400,
      params: { [name]: `${name} must be ${type}` },
      details: [{ field: name, in: 'querystring', keyword: 'type', message: `must be ${type}`, params: { type } }],
    },
  }
}

function category(id: number, name: string, slug: string, description: string | null = null) {
  return {
    id, name, slug, description, parent: 0, count: 0,
    rest_url: `${API_URL}/categories/${id}`,
    urls: { self: `${API_URL}/categories/${id}`, collection: `${API_URL}/categories` },
    ml_language: 'en',
    translations: { en: id },
  }
}

async function createCategories(built: Built, names: string[]): Promise<{ authorization: string }> {
  const editor = await built.auth('editor')
  for (const name of names) {
    const res = await built.inject({ method: 'POST', url: `${API}/categories`, headers: editor, payload: { name } })
    if (res.statusCode !== 201) throw new Error(`could not create category ${name}: ${res.body}`)
  }
  return editor
}

async function categoryCount(built: Built): Promise<number> {
  const res = await built.inject({ url: `${API}/categories?hide_empty=false` })
  return res.json<{ total: number }>().total
}

function exposedHeaders(res: Injected): string[] {
  return String(res.headers['access-control-expose-headers'] ?? '').split(',').map((s) => s.trim())
}

// ---------------------------------------------------------------- route index (CONTRACT §9)

t.test('the route index lists every path of the spec with its methods', async (t) => {
  const { inject } = await build(t)
  const res = await inject({ url: API })
  t.equal(res.statusCode, 200)
  t.match(res.headers['content-type'], /^application\/json/)
  const body = res.json<{ namespace: string; routes: Record<string, { namespace: string; methods: string[]; endpoints: Array<{ methods: string[] }> }>; _links: unknown }>()
  t.equal(body.namespace, 'calendar/events/v1')
  t.strictSame(Object.keys(body.routes), Object.keys(RESOLVED.paths).map((p) => (p === '/' ? API : `${API}${p}`)))
  t.strictSame(Object.keys(body.routes), SOURCE_PATHS.map((p) => (p === '/' ? API : `${API}${p}`)))
  for (const path of Object.keys(RESOLVED.paths)) {
    const route = body.routes[path === '/' ? API : `${API}${path}`]
    const methods = operationsOf(path).map((o) => o.method.toUpperCase())
    t.equal(route?.namespace, 'calendar/events/v1', `${path}: namespace`)
    t.strictSame(route?.methods, methods, `${path}: methods`)
    const grouped = (route?.endpoints ?? []).flatMap((e) => e.methods)
    t.strictSame([...grouped].sort(), [...methods].sort(), `${path}: each method in exactly one endpoint`)
  }
  t.strictSame(body._links, { self: [{ href: API_URL }], describedby: [{ href: `${API_URL}/doc` }] })
})

t.test('the route index builds every argument from the spec', async (t) => {
  const { inject } = await build(t)
  const res = await inject({ url: API })
  const routes = res.json<{ routes: Record<string, { endpoints: Array<{ methods: string[]; args: Record<string, Json> }> }> }>().routes
  for (const path of Object.keys(RESOLVED.paths)) {
    for (const { method, operation } of operationsOf(path)) {
      const where = `${method.toUpperCase()} ${path}`
      const endpoint = routes[path === '/' ? API : `${API}${path}`]?.endpoints.find((e) => e.methods.includes(method.toUpperCase()))
      const args = endpoint?.args ?? {}
      const expected = new Map<string, { schema: Json; description: unknown; required: boolean }>()
      for (const parameter of parametersOf(operation)) {
        if (parameter.in !== 'query' && parameter.in !== 'path') continue
        const schema = isJson(parameter.schema) ? parameter.schema : {}
        expected.set(String(parameter.name), { schema, description: parameter.description ?? schema.description, required: parameter.required === true })
      }
      const body = bodySchemaOf(operation)
      const required = Array.isArray(body?.required) ? body.required : []
      for (const [name, schema] of Object.entries(isJson(body?.properties) ? body.properties : {})) {
        if (expected.has(name) || !isJson(schema)) continue
        expected.set(name, { schema, description: schema.description, required: required.includes(name) })
      }
      t.strictSame(Object.keys(args).sort(), [...expected.keys()].sort(), `${where}: argument names`)
      for (const [name, { schema, description, required: isRequired }] of expected) {
        const arg = args[name] ?? {}
        t.equal(arg.required, isRequired, `${where} ${name}: required`)
        t.equal(arg.description, description, `${where} ${name}: description`)
        if (typeof schema.type === 'string') t.equal(arg.type, schema.type, `${where} ${name}: type`)
        t.same(arg.default, schema.default, `${where} ${name}: default`)
        t.same(arg.enum, schema.enum, `${where} ${name}: enum`)
      }
    }
  }
  const id = parametersOf(RESOLVED.paths['/categories/{id}']?.get as Json).find((p) => p.name === 'id')
  t.strictSame(routes[`${API}/categories/{id}`]?.endpoints[0]?.args.id, { type: 'integer', description: id?.description, required: true })
})

t.test('the route index answers only for its own namespace', async (t) => {
  const { inject } = await build(t)
  const own = await inject({ url: `${API}?namespace=calendar/events/v1` })
  t.equal(own.statusCode, 200)
  t.equal(own.json().namespace, 'calendar/events/v1')
  for (const namespace of ['wp/v2', 'calendar/events/v2', 'CALENDAR/EVENTS/V1', '']) {
    const res = await inject({ url: `${API}?namespace=${encodeURIComponent(namespace)}` })
    t.equal(res.statusCode, 404, `namespace=${namespace}`)
    t.strictSame(res.json(), { code: 'rest_invalid_namespace', message: 'The specified namespace could not be found.', data: { status: 404 } })
  }
})

t.test('the route index accepts context view and help, nothing else', async (t) => {
  const { inject } = await build(t)
  const plain = await inject({ url: API })
  for (const context of ['view', 'help']) {
    const res = await inject({ url: `${API}?context=${context}` })
    t.equal(res.statusCode, 200, `context=${context}`)
    t.strictSame(Object.keys(res.json<{ routes: Json }>().routes), Object.keys(plain.json<{ routes: Json }>().routes))
  }
  type Endpoint = { methods: string[]; description?: string }
  const endpoints = (res: Injected) => res.json<{ routes: Record<string, { endpoints: Endpoint[] }> }>().routes[`${API}/events`]?.endpoints ?? []
  t.same(endpoints(plain).map((e) => e.description), [undefined, undefined], 'view: no descriptions')
  const help = await inject({ url: `${API}?context=help` })
  t.same(endpoints(help).map((e) => e.methods), [['GET'], ['POST']])
  t.match(endpoints(help)[0]?.description, /^Returns one page of events/, 'help: each endpoint says what it does')
  const bad = await inject({ url: `${API}?context=edit` })
  t.equal(bad.statusCode, 400)
  t.strictSame(bad.json(), {
    code: 'rest_invalid_param',
    message: 'Invalid parameter(s): context.',
    data: {
      status: 400,
      params: { context: 'context must be equal to one of the allowed values' },
      details: [{ field: 'context', in: 'querystring', keyword: 'enum', message: 'must be equal to one of the allowed values', params: { allowedValues: ['view', 'help'] } }],
    },
  })
})

// ---------------------------------------------------------------- /doc and Swagger UI (CONTRACT §9)

t.test('/doc serves the OpenAPI 3.1 document with exactly one absolute server', async (t) => {
  const { inject } = await build(t)
  const res = await inject({ url: `${API}/doc` })
  t.equal(res.statusCode, 200)
  t.match(res.headers['content-type'], /^application\/json/)
  const doc = res.json<Json & { servers: Array<{ url: string }> }>()
  t.match(doc.openapi, /^3\.1\.\d+$/)
  t.equal(doc.servers.length, 1)
  t.equal(doc.servers[0]?.url, 'http://calendar.test/calendar/events/v1')
  // Otherwise it is the contract itself, less its top-level `x-` extensions (the message catalogue).
  const contract = (document: Json) => Object.fromEntries(Object.entries(document).filter(([key]) => key !== 'servers' && !key.startsWith('x-')))
  t.same(contract(doc), contract(SPEC.document))
  t.strictSame(Object.keys(doc).filter((key) => key.startsWith('x-')), [], 'no extension of ours is served')
})

t.test('/doc paths are relative to the server and are the routes of the source and CONTRACT only', async (t) => {
  const { inject } = await build(t)
  const doc = (await inject({ url: `${API}/doc` })).json<{ paths: Record<string, Json> }>()
  t.strictSame(Object.keys(doc.paths), SOURCE_PATHS)
})

t.test('/doc declares id as an integer and slug as a string path parameter', async (t) => {
  const { inject } = await build(t)
  const doc = dereference((await inject({ url: `${API}/doc` })).json<{ paths: Record<string, Json> }>())
  let checked = 0
  for (const [path, item] of Object.entries(doc.paths)) {
    for (const method of METHODS) {
      const operation = item[method]
      if (!isJson(operation)) continue
      const inPath = parametersOf(operation).filter((p) => p.in === 'path')
      const names = [...path.matchAll(/\{(\w+)\}/g)].map((m) => m[1])
      t.strictSame(inPath.map((p) => p.name), names, `${method} ${path}: path parameters`)
      for (const parameter of inPath) {
        checked++
        t.equal(parameter.required, true)
        t.equal(isJson(parameter.schema) ? parameter.schema.type : undefined, parameter.name === 'id' ? 'integer' : 'string', `${method} ${path} ${String(parameter.name)}`)
      }
    }
  }
  t.ok(checked > 0)
})

t.test('/doc uses a bearer security scheme and requires no header parameter', async (t) => {
  const { inject } = await build(t)
  const doc = dereference((await inject({ url: `${API}/doc` })).json<{ paths: Record<string, Json>; components: { securitySchemes: Record<string, Json> } }>())
  const bearer = Object.entries(doc.components.securitySchemes).filter(([, s]) => s.type === 'http' && s.scheme === 'bearer').map(([name]) => name)
  t.equal(bearer.length, 1)
  for (const [path, item] of Object.entries(doc.paths)) {
    for (const method of METHODS) {
      const operation = item[method]
      if (!isJson(operation)) continue
      const headers = parametersOf(operation).filter((p) => p.in === 'header')
      t.notOk(headers.some((p) => p.required === true), `${method} ${path}: no required header parameter`)
      t.notOk(headers.some((p) => String(p.name).toLowerCase() === 'authorization'), `${method} ${path}: no Authorization parameter`)
      const schemes = (Array.isArray(operation.security) ? operation.security : []).flatMap((s) => (isJson(s) ? Object.keys(s) : []))
      t.ok(schemes.every((s) => bearer.includes(s)), `${method} ${path}: security uses the bearer scheme`)
      if (method !== 'get') t.ok(schemes.length > 0, `${method} ${path}: writes need the bearer scheme`)
    }
  }
})

t.test('/doc answers YAML when asked for application/yaml', async (t) => {
  const { inject } = await build(t)
  const json = await inject({ url: `${API}/doc` })
  const res = await inject({ url: `${API}/doc`, headers: { accept: 'application/yaml' } })
  t.equal(res.statusCode, 200)
  t.match(res.headers['content-type'], /^application\/yaml/)
  t.same(parse(res.body), json.json())
})

t.test('Swagger UI is served at /ui', async (t) => {
  const { inject } = await build(t)
  const res = await inject({ url: `${API}/ui` })
  t.equal(res.statusCode, 200)
  t.match(res.headers['content-type'], /^text\/html/)
  t.match(res.body, '<div id="swagger-ui"></div>')
  t.match(res.body, 'swagger-initializer.js')
  const init = await inject({ url: `${API}/ui/static/swagger-initializer.js` })
  t.equal(init.statusCode, 200)
  t.match(init.body, './json', 'the UI loads the document from /ui/json')
})

t.test('Swagger UI shows the document /doc serves, with only what the UI needs to try it (uiDocument)', async (t) => {
  const { inject } = await build(t)
  const doc = await inject({ url: `${API}/doc` })
  const ui = await inject({ url: `${API}/ui/json` })
  t.equal(ui.statusCode, 200)
  t.match(ui.headers['content-type'], /^application\/json/)
  t.same(ui.json(), uiDocument(doc.json(), 'Not sent'))
  t.notSame(ui.json(), doc.json())
})

// ---------------------------------------------------------------- routing (CONTRACT §1)

t.test('every kind of route answers the same with or without a trailing slash', async (t) => {
  const built = await build(t)
  const { inject } = built
  const editor = await createCategories(built, ['Rock'])
  const reads = [API, `${API}/doc`, `${API}/ui/json`, `${API}/categories`, `${API}/categories/1`, `${API}/categories/2`,
    `${API}/tags?hide_empty=false`, `${API}/events/1`, `${API}/events/by-slug/some-slug`, `${API}/venues/by-slug/x`]
  for (const url of reads) {
    const [path, query] = url.split('?')
    const plain = await inject({ url })
    const slashed = await inject({ url: `${path}/${query === undefined ? '' : `?${query}`}` })
    t.not(plain.json<Json>().code, 'rest_no_route', url)
    t.equal(slashed.statusCode, plain.statusCode, `${url}/: status`)
    t.equal(slashed.body, plain.body, `${url}/: body`)
  }
  const ui = await inject({ url: `${API}/ui/` })
  t.equal(ui.statusCode, 200)
  t.match(ui.headers['content-type'], /^text\/html/)

  const created = await inject({ method: 'POST', url: `${API}/categories/`, headers: editor, payload: { name: 'Jazz' } })
  t.equal(created.statusCode, 201)
  t.strictSame(created.json(), category(2, 'Jazz', 'jazz'))
  const updated = await inject({ method: 'PATCH', url: `${API}/categories/2/`, headers: editor, payload: { description: 'Smooth' } })
  t.equal(updated.statusCode, 200)
  t.strictSame(updated.json(), category(2, 'Jazz', 'jazz', 'Smooth'))
  const deleted = await inject({ method: 'DELETE', url: `${API}/categories/2/`, headers: editor })
  t.equal(deleted.statusCode, 200)
  t.strictSame(deleted.json(), category(2, 'Jazz', 'jazz', 'Smooth'))
  const preflight = await inject({ method: 'OPTIONS', url: `${API}/categories/1/` })
  t.equal(preflight.statusCode, 204)
})

t.test('unknown paths are 404 rest_no_route', async (t) => {
  const { inject } = await build(t)
  const urls = ['/', '/calendar', '/calendar/events', '/calendar/events/v2/categories', `${API}/nope`, `${API}/category`,
    `${API}/categories/1/extra`, `${API}/events/by-slug`, `${API}/events/by-slug/a/b`, `${API}/categories/by-slug/rock`,
    `${API}/doc/json`, `${API}/ui/nope`, `${API}//categories`]
  for (const url of urls) {
    const res = await inject({ url })
    t.equal(res.statusCode, 404, url)
    t.match(res.headers['content-type'], /^application\/json/)
    t.strictSame(res.json(), NO_ROUTE, url)
  }
})

t.test('ids are digits only: anything else is 404 rest_no_route', async (t) => {
  const { inject, auth } = await build(t)
  const editor = await auth('editor')
  const requests = [
    ...['abc', '-1', '1.5', '1e3', '0x1', '1a', ' 1'].map((id) => ({ method: 'GET', url: `${API}/categories/${encodeURIComponent(id)}` })),
    { method: 'GET', url: `${API}/tags/abc` },
    { method: 'GET', url: `${API}/events/abc` },
    { method: 'GET', url: `${API}/venues/abc` },
    { method: 'GET', url: `${API}/organizers/x1` },
    { method: 'PATCH', url: `${API}/categories/abc`, headers: editor, payload: { name: 'x' } },
    { method: 'DELETE', url: `${API}/tags/abc`, headers: editor },
  ] as const
  for (const request of requests) {
    const res = await inject({ ...request })
    t.equal(res.statusCode, 404, `${request.method} ${request.url}`)
    t.strictSame(res.json(), NO_ROUTE)
  }
})

t.test('unknown methods are 404 rest_no_route, before any key is asked for', async (t) => {
  const { inject } = await build(t)
  const requests = [
    { method: 'DELETE', url: `${API}/categories` },
    { method: 'PUT', url: `${API}/categories` },
    { method: 'PATCH', url: `${API}/tags` },
    { method: 'DELETE', url: `${API}/events` },
    { method: 'POST', url: API },
    { method: 'DELETE', url: API },
    { method: 'POST', url: `${API}/doc` },
    { method: 'PUT', url: `${API}/doc` },
    { method: 'PROPFIND', url: `${API}/categories` },
  ] as const
  for (const request of requests) {
    const res = await inject({ ...request })
    t.equal(res.statusCode, 404, `${request.method} ${request.url}`)
    t.strictSame(res.json(), NO_ROUTE)
  }
})

t.test('a URL that cannot be decoded is 400 with the error body, never a 5xx', async (t) => {
  const { inject } = await build(t)
  for (const slug of ['%ff', '%E0%A4%A', '%']) {
    const res = await inject({ url: `${API}/events/by-slug/${slug}` })
    t.equal(res.statusCode, 400, slug)
    t.match(res.headers['content-type'], /^application\/json/)
    t.equal(res.headers['access-control-allow-origin'], '*')
    t.strictSame(res.json(), { code: 'rest_invalid_param', message: 'The request URL is malformed.', data: { status: 400 } })
  }
})

t.test('a slug of 200 characters reaches its route', async (t) => {
  const { inject } = await build(t)
  const res = await inject({ url: `${API}/events/by-slug/${'a'.repeat(200)}` })
  t.not(res.statusCode, 414)
  t.not(res.json<Json>().code, 'rest_no_route')
})

// ---------------------------------------------------------------- CORS (CONTRACT §1)

t.test('OPTIONS on every path of the spec is a CORS preflight', async (t) => {
  const { inject } = await build(t)
  for (const path of Object.keys(RESOLVED.paths)) {
    const res = await inject({ method: 'OPTIONS', url: urlOf(path), headers: { origin: 'http://elsewhere.test', 'access-control-request-method': 'POST' } })
    const methods = [...operationsOf(path).map((o) => o.method.toUpperCase()), 'OPTIONS']
    t.equal(res.statusCode, 204, path)
    t.equal(res.body, '')
    t.equal(res.headers['access-control-allow-origin'], '*')
    t.strictSame(String(res.headers['access-control-allow-methods']).split(', '), methods, `${path}: methods`)
    const allowed = String(res.headers['access-control-allow-headers']).split(',').map((s) => s.trim().toLowerCase())
    for (const header of ['authorization', 'content-type', 'if-match', 'if-none-match']) t.ok(allowed.includes(header), `${path}: allows ${header}`)
  }
})

t.test('OPTIONS on an unknown path is 404', async (t) => {
  const { inject } = await build(t)
  for (const url of [`${API}/nope`, `${API}/categories/abc`, `${API}/categories/1/extra`, '/elsewhere']) {
    const res = await inject({ method: 'OPTIONS', url })
    t.equal(res.statusCode, 404, url)
    t.strictSame(res.json(), NO_ROUTE)
  }
})

t.test('every response carries the CORS headers, errors included', async (t) => {
  const built = await build(t)
  const { inject, auth } = built
  const editor = await createCategories(built, ['Rock'])
  const subscriber = await auth('subscriber')
  const requests = [
    { url: API },
    { url: `${API}/doc`, headers: { accept: 'application/yaml' } },
    { url: `${API}/ui` },
    { url: `${API}/ui/json` },
    { url: `${API}/categories?hide_empty=false` },
    { url: `${API}/categories/1` },
    { url: `${API}/categories/9` },
    { url: `${API}/categories?hide_empty=maybe` },
    { url: `${API}/nope` },
    { url: `${API}/events/by-slug/%ff` },
    { url: `${API}/events` },
    { method: 'OPTIONS', url: `${API}/categories` },
    { method: 'POST', url: `${API}/categories`, headers: editor, payload: { name: 'Jazz' } },
    { method: 'POST', url: `${API}/categories`, payload: { name: 'Blues' } },
    { method: 'POST', url: `${API}/categories`, headers: subscriber, payload: { name: 'Blues' } },
    { method: 'POST', url: `${API}/categories`, headers: { ...editor, ...JSON_TYPE }, payload: '{"name":' },
    { method: 'POST', url: `${API}/categories`, headers: { ...editor, 'content-type': 'text/plain' }, payload: 'Blues' },
    { method: 'POST', url: `${API}/categories`, headers: { ...editor, ...JSON_TYPE }, payload: `{"name":"${'x'.repeat(1024 * 1024)}"}` },
  ] as const
  const statuses = new Set<number>()
  for (const request of requests) {
    const res = await inject({ ...request })
    statuses.add(res.statusCode)
    const name = `${'method' in request ? request.method : 'GET'} ${request.url.slice(0, 60)} (${res.statusCode})`
    t.equal(res.headers['access-control-allow-origin'], '*', name)
    const exposed = exposedHeaders(res)
    for (const header of ['X-Total', 'X-Total-Pages', 'Link', 'ETag', 'Location']) t.ok(exposed.includes(header), `${name}: exposes ${header}`)
  }
  t.strictSame([...statuses].sort(), [200, 201, 204, 400, 401, 403, 404, 413, 415], 'every kind of answer was seen')
})

// ---------------------------------------------------------------- Content-Language and ml_language (CONTRACT §1, §7)

t.test('Content-Language names the language asked for by ml_language', async (t) => {
  const { inject } = await build(t)
  for (const language of LANGUAGES) {
    const list = await inject({ url: `${API}/categories?ml_language=${language}` })
    t.equal(list.statusCode, 200)
    t.equal(list.headers['content-language'], language, `list in ${language}`)
    const missing = await inject({ url: `${API}/tags/9?ml_language=${language}` })
    t.equal(missing.statusCode, 404)
    t.equal(missing.headers['content-language'], language, `404 in ${language}`)
  }
  const plain = await inject({ url: `${API}/categories` })
  t.equal(plain.headers['content-language'], 'en')
  const doc = await inject({ url: `${API}/doc?ml_language=ch-de` })
  t.equal(doc.headers['content-language'], 'ch-de')
  const index = await inject({ url: `${API}?ml_language=at` })
  t.equal(index.headers['content-language'], 'at')
  const noRoute = await inject({ url: `${API}/nope?ml_language=es` })
  t.equal(noRoute.headers['content-language'], 'es')
  const preflight = await inject({ method: 'OPTIONS', url: `${API}/categories?ml_language=de` })
  t.equal(preflight.headers['content-language'], 'de')
})

t.test('Content-Language of a write follows ml_language, the body before the query', async (t) => {
  const { inject, auth } = await build(t)
  const editor = await auth('editor')
  const query = await inject({ method: 'POST', url: `${API}/categories?ml_language=es`, headers: editor, payload: { name: 'Rock' } })
  t.equal(query.statusCode, 201)
  t.equal(query.headers['content-language'], 'es')
  t.equal(query.json().ml_language, 'es')
  const body = await inject({ method: 'POST', url: `${API}/categories?ml_language=es`, headers: editor, payload: { name: 'Jazz', ml_language: 'ch-fr' } })
  t.equal(body.statusCode, 201)
  t.equal(body.headers['content-language'], 'ch-fr')
  t.equal(body.json().ml_language, 'ch-fr')
  const form = await inject({ method: 'POST', url: `${API}/tags`, headers: { ...editor, ...FORM }, payload: 'name=Live&ml_language=de' })
  t.equal(form.statusCode, 201)
  t.equal(form.headers['content-language'], 'de')
  const rejected = await inject({ method: 'POST', url: `${API}/tags`, headers: editor, payload: { ml_language: 'at' } })
  t.equal(rejected.statusCode, 400)
  t.equal(rejected.headers['content-language'], 'at')
})

t.test('Content-Language defaults to CALENDAR_DEFAULT_LANGUAGE', async (t) => {
  const { inject } = await build(t, { config: { defaultLanguage: 'ch-fr' } })
  const list = await inject({ url: `${API}/categories` })
  t.equal(list.headers['content-language'], 'ch-fr')
  const invalid = await inject({ url: `${API}/categories?ml_language=fr` })
  t.equal(invalid.statusCode, 400)
  t.equal(invalid.headers['content-language'], 'ch-fr')
  const noRoute = await inject({ url: `${API}/nope` })
  t.equal(noRoute.headers['content-language'], 'ch-fr')
})

t.test('an invalid ml_language is 400 on every read', async (t) => {
  const { inject } = await build(t)
  const reads = [API, `${API}/doc`, `${API}/categories`, `${API}/categories/1`, `${API}/tags`, `${API}/events`, `${API}/events/by-slug/x`, `${API}/venues/1`]
  for (const value of ['', 'EN', 'fr', 'en-US', 'ch_fr', ' en']) {
    for (const url of reads) {
      const res = await inject({ url: `${url}?ml_language=${encodeURIComponent(value)}` })
      t.equal(res.statusCode, 400, `${url} ml_language=${value}`)
      t.strictSame(res.json(), invalidLanguage('querystring'))
    }
  }
})

t.test('an invalid ml_language is 400 on writes, in the query or in the body', async (t) => {
  const built = await build(t)
  const { inject } = built
  const editor = await createCategories(built, ['Rock'])
  for (const value of ['', 'EN', 'fr']) {
    const inQuery = await inject({ method: 'POST', url: `${API}/categories?ml_language=${value}`, headers: editor, payload: { name: 'Jazz' } })
    t.equal(inQuery.statusCode, 400, `query ml_language=${value}`)
    t.strictSame(inQuery.json(), invalidLanguage('querystring'))
    const inBody = await inject({ method: 'POST', url: `${API}/categories`, headers: editor, payload: { name: 'Jazz', ml_language: value } })
    t.equal(inBody.statusCode, 400, `body ml_language=${value}`)
    t.strictSame(inBody.json(), invalidLanguage('body'))
    const inForm = await inject({ method: 'POST', url: `${API}/categories`, headers: { ...editor, ...FORM }, payload: `name=Jazz&ml_language=${value}` })
    t.equal(inForm.statusCode, 400, `form ml_language=${value}`)
    const update = await inject({ method: 'PATCH', url: `${API}/categories/1`, headers: editor, payload: { description: 'x', ml_language: value } })
    t.equal(update.statusCode, 400, `update ml_language=${value}`)
    t.strictSame(update.json(), invalidLanguage('body'))
    const remove = await inject({ method: 'DELETE', url: `${API}/categories/1?ml_language=${value}`, headers: editor })
    t.equal(remove.statusCode, 400, `delete ml_language=${value}`)
    t.strictSame(remove.json(), invalidLanguage('querystring'))
  }
  const after = await inject({ url: `${API}/categories/1` })
  t.strictSame(after.json(), category(1, 'Rock', 'rock'), 'nothing was written')
  t.equal(await categoryCount(built), 1)
})

// ---------------------------------------------------------------- request bodies (CONTRACT §1)

t.test('JSON and form-urlencoded bodies are both accepted with the same fields', async (t) => {
  const { inject, auth } = await build(t)
  const editor = await auth('editor')
  const json = await inject({ method: 'POST', url: `${API}/categories`, headers: editor, payload: { name: 'Rock', description: 'Loud' } })
  t.equal(json.statusCode, 201)
  t.strictSame(json.json(), category(1, 'Rock', 'rock', 'Loud'))
  const form = await inject({ method: 'POST', url: `${API}/categories`, headers: { ...editor, ...FORM }, payload: 'name=Jazz+%26+Soul&description=Smooth' })
  t.equal(form.statusCode, 201)
  t.strictSame(form.json(), category(2, 'Jazz & Soul', 'jazz-soul', 'Smooth'))
  const charset = await inject({ method: 'POST', url: `${API}/categories`, headers: { ...editor, 'content-type': 'application/json; charset=utf-8' }, payload: '{"name":"Blues"}' })
  t.equal(charset.statusCode, 201)
  t.strictSame(charset.json(), category(3, 'Blues', 'blues'))
  const update = await inject({ method: 'PATCH', url: `${API}/categories/2`, headers: { ...editor, ...FORM }, payload: 'description=Cool' })
  t.equal(update.statusCode, 200)
  t.strictSame(update.json(), category(2, 'Jazz & Soul', 'jazz-soul', 'Cool'))
})

t.test('an empty body counts as {}', async (t) => {
  const built = await build(t)
  const { inject } = built
  const editor = await createCategories(built, ['Rock'])
  const missing = {
    code: 'rest_missing_callback_param',
    message: 'Missing parameter(s): name.',
    data: {
      status: 400,
      params: ['name'],
      details: [{ field: 'name', in: 'body', keyword: 'required', message: "must have required property 'name'", params: { missingProperty: 'name' } }],
    },
  }
  const variants = [{}, JSON_TYPE, FORM, { 'content-type': 'text/plain' }, { 'content-type': 'application/xml' }]
  for (const headers of variants) {
    const res = await inject({ method: 'POST', url: `${API}/categories`, headers: { ...editor, ...headers } })
    t.equal(res.statusCode, 400, `empty body, ${JSON.stringify(headers)}`)
    t.strictSame(res.json(), missing)
    const update = await inject({ method: 'PATCH', url: `${API}/categories/1`, headers: { ...editor, ...headers }, payload: '' })
    t.equal(update.statusCode, 200, `empty update, ${JSON.stringify(headers)}`)
    t.strictSame(update.json(), category(1, 'Rock', 'rock'))
  }
})

t.test('a body naming a charset other than UTF-8 is 415, JSON and form alike; UTF-8 in any spelling is read; nothing is written', async (t) => {
  const built = await build(t)
  const { inject } = built
  const editor = await createCategories(built, ['Rock'])
  // Latin-1's bytes for `Café` are no UTF-8; ASCII-only bytes would have been read, and stored, all the same.
  const bodies = [
    { type: 'application/json', payload: Buffer.from('{"name":"Café"}', 'latin1') },
    { type: 'application/json', payload: '{"name":"Cafe"}' },
    { type: 'application/x-www-form-urlencoded', payload: 'name=Cafe' },
  ]
  for (const charset of ['latin1', 'ISO-8859-1', '"windows-1252"', 'utf-16', 'us-ascii', '']) {
    for (const { type, payload } of bodies) {
      const contentType = `${type}; charset=${charset}`
      const res = await inject({ method: 'POST', url: `${API}/categories`, headers: { ...editor, 'content-type': contentType }, payload })
      t.equal(res.statusCode, 415, contentType)
      t.strictSame(res.json(), {
        code: 'rest_unsupported_media_type',
        message: `Unsupported charset "${charset.replaceAll('"', '')}": send the body as UTF-8, with charset=utf-8 or no charset.`,
        data: { status: 415 },
      }, contentType)
      const update = await inject({ method: 'PATCH', url: `${API}/categories/1`, headers: { ...editor, 'content-type': contentType }, payload })
      t.equal(update.statusCode, 415, `update ${contentType}`)
    }
  }
  const german = await inject({ method: 'POST', url: `${API}/categories?ml_language=de`, headers: { ...editor, 'content-type': 'application/json; charset=latin1' }, payload: '{"name":"Cafe"}' })
  t.equal(german.json().message, 'Nicht unterstützter Zeichensatz „latin1“: Senden Sie den Body als UTF-8, mit charset=utf-8 oder ohne charset.')
  t.strictSame((await inject({ url: `${API}/categories/1` })).json(), category(1, 'Rock', 'rock'), 'nothing was written')
  t.equal(await categoryCount(built), 1)
  // An empty body has no text to misread: `{}`, as without a charset.
  const empty = await inject({ method: 'PATCH', url: `${API}/categories/1`, headers: { ...editor, 'content-type': 'application/json; charset=latin1' } })
  t.equal(empty.statusCode, 200)
  for (const [n, charset] of ['UTF-8', '"utf-8"', 'utf8', 'Unicode-1-1-UTF-8'].entries()) {
    const json = await inject({ method: 'POST', url: `${API}/categories`, headers: { ...editor, 'content-type': `application/json;charset=${charset}` }, payload: Buffer.from(`{"name":"Café ${n}"}`, 'utf8') })
    t.equal(json.statusCode, 201, charset)
    t.equal(json.json().name, `Café ${n}`, charset)
    const form = await inject({ method: 'POST', url: `${API}/categories`, headers: { ...editor, 'content-type': `application/x-www-form-urlencoded; charset=${charset}` }, payload: `name=Th%C3%A9+${n}` })
    t.equal(form.statusCode, 201, charset)
    t.equal(form.json().name, `Thé ${n}`, charset)
  }
})

t.test('a non-empty body of another media type is 415', async (t) => {
  const built = await build(t)
  const { inject } = built
  const editor = await createCategories(built, ['Rock'])
  for (const type of ['text/plain', 'application/xml', 'multipart/form-data; boundary=x', 'application/vnd.api+json', 'application/octet-stream']) {
    const res = await inject({ method: 'POST', url: `${API}/categories`, headers: { ...editor, 'content-type': type }, payload: '{"name":"Jazz"}' })
    t.equal(res.statusCode, 415, type)
    t.strictSame(res.json(), {
      code: 'rest_unsupported_media_type',
      message: `Unsupported media type "${type}": send application/json or application/x-www-form-urlencoded.`,
      data: { status: 415 },
    })
    const update = await inject({ method: 'PUT', url: `${API}/categories/1`, headers: { ...editor, 'content-type': type }, payload: 'name=Jazz' })
    t.equal(update.statusCode, 415, `update ${type}`)
  }
  t.strictSame((await inject({ url: `${API}/categories/1` })).json(), category(1, 'Rock', 'rock'), 'nothing was written')
  t.equal(await categoryCount(built), 1)
})

t.test('a body over 1 MiB is 413; exactly 1 MiB is accepted', async (t) => {
  const built = await build(t)
  const { inject, auth } = built
  const editor = await auth('editor')
  const limit = 1024 * 1024
  const fits = '{"name":"Rock"}'.padEnd(limit, ' ')
  t.equal(Buffer.byteLength(fits), limit)
  const ok = await inject({ method: 'POST', url: `${API}/categories`, headers: { ...editor, ...JSON_TYPE }, payload: fits })
  t.equal(ok.statusCode, 201)
  t.strictSame(ok.json(), category(1, 'Rock', 'rock'))
  const tooLarge = { code: 'rest_payload_too_large', message: 'The request body is larger than the limit of 1 MiB.', data: { status: 413 } }
  const json = await inject({ method: 'POST', url: `${API}/categories`, headers: { ...editor, ...JSON_TYPE }, payload: '{"name":"Jazz"}'.padEnd(limit + 1, ' ') })
  t.equal(json.statusCode, 413)
  t.strictSame(json.json(), tooLarge)
  const form = await inject({ method: 'POST', url: `${API}/categories`, headers: { ...editor, ...FORM }, payload: `name=Jazz&description=${'x'.repeat(limit)}` })
  t.equal(form.statusCode, 413)
  t.strictSame(form.json(), tooLarge)
  const other = await inject({ method: 'POST', url: `${API}/categories`, headers: { ...editor, 'content-type': 'text/plain' }, payload: 'x'.repeat(limit + 1) })
  t.equal(other.statusCode, 413, 'the size is checked before the media type')
  t.equal(await categoryCount(built), 1)
})

t.test('malformed JSON is 400 rest_invalid_json', async (t) => {
  const built = await build(t)
  const { inject } = built
  const editor = await createCategories(built, ['Rock'])
  for (const payload of ['{"name":', '{name:"Jazz"}', "{'name':'Jazz'}", '{"name":"Jazz"}}', '{"name":"Jazz",}', 'name=Jazz', 'nul']) {
    const res = await inject({ method: 'POST', url: `${API}/categories`, headers: { ...editor, ...JSON_TYPE }, payload })
    t.equal(res.statusCode, 400, payload)
    t.strictSame(res.json(), INVALID_JSON)
  }
  const update = await inject({ method: 'PATCH', url: `${API}/categories/1`, headers: { ...editor, ...JSON_TYPE }, payload: '{"description":' })
  t.equal(update.statusCode, 400)
  t.strictSame(update.json(), INVALID_JSON)
  t.equal(await categoryCount(built), 1)
})

t.test('a JSON body that is not an object is 400', async (t) => {
  const { inject, auth } = await build(t)
  const editor = await auth('editor')
  for (const payload of ['[]', 'null', '"Jazz"', '42']) {
    const res = await inject({ method: 'POST', url: `${API}/categories`, headers: { ...editor, ...JSON_TYPE }, payload })
    t.equal(res.statusCode, 400, payload)
    t.equal(res.json<Json>().code, 'rest_invalid_param')
  }
})

t.test('a body that is not UTF-8 is 400', async (t) => {
  const built = await build(t)
  const { inject, auth } = built
  const editor = await auth('editor')
  const invalid = (text: string) => Buffer.concat([Buffer.from(text.split('*')[0] ?? ''), Buffer.from([0xff, 0xfe, 0xc3]), Buffer.from(text.split('*')[1] ?? '')])
  const json = await inject({ method: 'POST', url: `${API}/categories`, headers: { ...editor, ...JSON_TYPE }, payload: invalid('{"name":"*"}') })
  t.equal(json.statusCode, 400)
  t.strictSame(json.json(), INVALID_JSON)
  const form = await inject({ method: 'POST', url: `${API}/categories`, headers: { ...editor, ...FORM }, payload: invalid('name=*') })
  t.equal(form.statusCode, 400)
  t.strictSame(form.json(), { code: 'rest_invalid_request', message: 'Invalid form body passed: its text and its `%XX` escapes must decode to UTF-8.', data: { status: 400 } })
  t.equal(await categoryCount(built), 0)
})

t.test('unknown body fields are 400 naming every one of them', async (t) => {
  const built = await build(t)
  const { inject } = built
  const editor = await createCategories(built, ['Rock'])
  const unknown = (names: string[]) => ({
    code: 'rest_invalid_param',
    message: `Invalid parameter(s): ${names.join(', ')}.`,
    data: {
      status: 400,
      params: Object.fromEntries(names.map((n) => [n, `${n} must NOT have additional properties`])),
      details: names.map((n) => ({ field: n, in: 'body', keyword: 'additionalProperties', message: 'must NOT have additional properties', params: { additionalProperty: n } })),
    },
  })
  const json = await inject({ method: 'POST', url: `${API}/categories`, headers: editor, payload: { name: 'Jazz', colour: 'blue', count: 3 } })
  t.equal(json.statusCode, 400)
  t.strictSame(json.json(), unknown(['colour', 'count']))
  const form = await inject({ method: 'POST', url: `${API}/categories`, headers: { ...editor, ...FORM }, payload: 'name=Jazz&colour=blue&count=3' })
  t.equal(form.statusCode, 400)
  t.strictSame(form.json(), unknown(['colour', 'count']))
  const update = await inject({ method: 'PATCH', url: `${API}/categories/1`, headers: editor, payload: { title: 'Jazz' } })
  t.equal(update.statusCode, 400)
  t.strictSame(update.json(), unknown(['title']))
  const tag = await inject({ method: 'POST', url: `${API}/tags`, headers: editor, payload: { name: 'Live', parent: 1 } })
  t.equal(tag.statusCode, 400, 'tags have no parent')
  t.strictSame(tag.json(), unknown(['parent']))
  t.equal(await categoryCount(built), 1)
  t.strictSame((await inject({ url: `${API}/categories/1` })).json(), category(1, 'Rock', 'rock'))
})

// ---------------------------------------------------------------- query parameters (CONTRACT §1)

t.test('array parameters accept the repeated, bracketed and comma forms', async (t) => {
  const built = await build(t)
  const { inject } = built
  await createCategories(built, ['Blues', 'Jazz', 'Rock'])
  const expected = {
    categories: [category(1, 'Blues', 'blues'), category(3, 'Rock', 'rock')],
    rest_url: `${API_URL}/categories?page=1&per_page=10&hide_empty=false&include=1%2C3`,
    total: 2,
    total_pages: 1,
  }
  for (const query of ['include=1&include=3', 'include[]=1&include[]=3', 'include%5B%5D=1&include%5B%5D=3', 'include=1,3', 'include=1%2C3']) {
    const res = await inject({ url: `${API}/categories?hide_empty=false&${query}` })
    t.equal(res.statusCode, 200, query)
    t.strictSame(res.json(), expected, query)
  }
  const exclude = await inject({ url: `${API}/categories?hide_empty=false&exclude[]=1&exclude=2` })
  t.strictSame(exclude.json<{ categories: unknown[] }>().categories, [category(3, 'Rock', 'rock')])
})

t.test('array fields of a form body accept the repeated, bracketed and comma forms', async (t) => {
  const built = await build(t)
  const { inject } = built
  const editor = await createCategories(built, ['Rock', 'Jazz'])
  const event = 'title=Gig&start_date=2026-07-01+20%3A00%3A00&end_date=2026-07-01+23%3A00%3A00'
  for (const form of ['categories=1&categories=2', 'categories[]=1&categories[]=2', 'categories=1,2', 'categories=1%2Cjazz']) {
    const res = await inject({ method: 'POST', url: `${API}/events`, headers: { ...editor, ...FORM }, payload: `${event}&${form}` })
    t.equal(res.statusCode, 201, form)
    t.strictSame(res.json<{ categories: Array<{ id: number }> }>().categories.map((c) => c.id).sort(), [1, 2], form)
  }
  const json = await inject({ method: 'POST', url: `${API}/events`, headers: editor, payload: { title: 'Gig', start_date: '2026-07-01 20:00:00', end_date: '2026-07-01 23:00:00', categories: [1, 'jazz'] } })
  t.equal(json.statusCode, 201)
  t.strictSame(json.json<{ categories: Array<{ id: number }> }>().categories.map((c) => c.id).sort(), [1, 2])
  const bad = await inject({ method: 'POST', url: `${API}/events`, headers: { ...editor, ...FORM }, payload: `${event}&categories=1,nope` })
  t.equal(bad.statusCode, 400, 'an unknown entry is not dropped')
})

t.test('booleans of a form body are true, false, 1 or 0 (venue maps also yes or no)', async (t) => {
  const { inject, auth } = await build(t)
  const editor = await auth('editor')
  const event = 'title=Gig&start_date=2026-07-01+20%3A00%3A00&end_date=2026-07-01+23%3A00%3A00'
  for (const [value, expected] of [['true', true], ['1', true], ['false', false], ['0', false]] as const) {
    const res = await inject({ method: 'POST', url: `${API}/events`, headers: { ...editor, ...FORM }, payload: `${event}&featured=${value}&sticky=${value}` })
    t.equal(res.statusCode, 201, `featured=${value}`)
    t.equal(res.json().featured, expected)
    t.equal(res.json().sticky, expected)
  }
  for (const value of ['yes', 'no', 'TRUE', 'on', '2']) {
    const res = await inject({ method: 'POST', url: `${API}/events`, headers: { ...editor, ...FORM }, payload: `${event}&featured=${value}` })
    t.equal(res.statusCode, 400, `featured=${value}`)
    t.strictSame(res.json<{ data: { params: Json } }>().data.params, { featured: 'featured must be boolean' })
  }
  for (const [value, expected] of [['yes', true], ['no', false], ['1', true], ['false', false]] as const) {
    const res = await inject({ method: 'POST', url: `${API}/venues`, headers: { ...editor, ...FORM }, payload: `venue=Hall+${value}&show_map=${value}&show_map_link=${value}` })
    t.equal(res.statusCode, 201, `show_map=${value}`)
    t.equal(res.json().show_map, expected)
    t.equal(res.json().show_map_link, expected)
  }
  const maybe = await inject({ method: 'POST', url: `${API}/venues`, headers: { ...editor, ...FORM }, payload: 'venue=Hall&show_map=maybe' })
  t.equal(maybe.statusCode, 400)
  t.strictSame(Object.keys(maybe.json<{ data: { params: Json } }>().data.params), ['show_map'])
})

t.test('an array parameter with a bad item is 400', async (t) => {
  const built = await build(t)
  const { inject } = built
  await createCategories(built, ['Rock'])
  // The message names the item found wrong (its position in the list); the detail names the parameter.
  const cases = [['include=1,x', 1], ['include[]=1&include[]=x', 1], ['include=1&include=x', 1], ['include=1.5', 0], ['exclude=-', 0], ['exclude[]=a', 0]] as const
  for (const [query, item] of cases) {
    const res = await inject({ url: `${API}/categories?hide_empty=false&${query}` })
    t.equal(res.statusCode, 400, query)
    const name = query.startsWith('include') ? 'include' : 'exclude'
    const expected = wrongType(name, 'integer')
    expected.data.params = { [name]: `${name}[${item}] must be integer` }
    t.strictSame(res.json(), expected, query)
  }
})

t.test('query booleans are true, false, 1 or 0', async (t) => {
  const built = await build(t)
  const { inject } = built
  await createCategories(built, ['Rock'])
  for (const [value, normal, total] of [['true', 'true', 0], ['1', 'true', 0], ['false', 'false', 1], ['0', 'false', 1]] as const) {
    const res = await inject({ url: `${API}/categories?hide_empty=${value}` })
    t.equal(res.statusCode, 200, `hide_empty=${value}`)
    t.strictSame(res.json(), {
      categories: total === 0 ? [] : [category(1, 'Rock', 'rock')],
      rest_url: `${API_URL}/categories?page=1&per_page=10&hide_empty=${normal}`,
      total,
      total_pages: total,
    }, `hide_empty=${value}`)
  }
})

t.test('any other query boolean is 400', async (t) => {
  const { inject } = await build(t)
  for (const value of ['yes', 'no', '', 'TRUE', 'False', '2', 'on', 't']) {
    const res = await inject({ url: `${API}/categories?hide_empty=${value}` })
    t.equal(res.statusCode, 400, `hide_empty=${value}`)
    t.strictSame(res.json(), wrongType('hide_empty', 'boolean'))
  }
  const twice = await inject({ url: `${API}/tags?hide_empty=true&hide_empty=false` })
  t.equal(twice.statusCode, 400, 'a boolean sent twice is not silently reduced to one')
})

t.test('unknown query parameters are ignored', async (t) => {
  const built = await build(t)
  const { inject } = built
  const editor = await createCategories(built, ['Rock'])
  const plain = await inject({ url: `${API}/categories?hide_empty=false` })
  const extra = await inject({ url: `${API}/categories?hide_empty=false&colour=blue&filter[x]=1&_embed=1&include_all=yes` })
  t.equal(extra.statusCode, 200)
  t.strictSame(extra.json(), plain.json())
  const one = await inject({ url: `${API}/categories/1?colour=blue` })
  t.equal(one.statusCode, 200)
  t.strictSame(one.json(), category(1, 'Rock', 'rock'))
  const created = await inject({ method: 'POST', url: `${API}/categories?colour=blue`, headers: editor, payload: { name: 'Jazz' } })
  t.equal(created.statusCode, 201)
  t.strictSame(created.json(), category(2, 'Jazz', 'jazz'))
  const index = await inject({ url: `${API}?colour=blue` })
  t.equal(index.statusCode, 200)
})

// ---------------------------------------------------------------- every operation is served

t.test('every operation of the spec is implemented and answers without a 5xx', async (t) => {
  const { inject, auth } = await build(t)
  const editor = await auth('editor')
  for (const path of Object.keys(RESOLVED.paths)) {
    for (const { method, operation } of operationsOf(path)) {
      const id = String(operation.operationId)
      // A body that passes the schema's required list, so that the request reaches the handler.
      const schema = bodySchemaOf(operation)
      const properties = isJson(schema?.properties) ? schema.properties : {}
      const required = Array.isArray(schema?.required) ? schema.required.map(String) : []
      const payload = Object.fromEntries(required.map((name) => {
        const type = isJson(properties[name]) ? properties[name].type : undefined
        return [name, type === 'integer' || type === 'number' ? 1 : type === 'boolean' ? true : 'x']
      }))
      const res = await inject({ method: method.toUpperCase() as 'GET', url: urlOf(path), headers: editor, ...(method === 'get' || method === 'delete' ? {} : { payload }) })
      t.ok(res.statusCode < 500, `${id}: ${method.toUpperCase()} ${path} answered ${res.statusCode}`)
      t.not(res.json<Json>().code, 'rest_no_route', `${id} is routed`)
    }
  }
})
