/**
 * The document Swagger UI shows (`/ui/json`) tries well: the `ml_language` it prefills and the language
 * of the write examples follow the page's language; reads that need no key show no lock; an optional
 * parameter starts as "Not sent" (in the page's language); every form field is prefilled from the form's
 * example or left empty, and that form, sent as Swagger UI sends it, is accepted by the server; the
 * server's description is plain text. /doc keeps the contract's own security and examples.
 */
import t from 'tap'
import { LANGUAGES } from '../src/contract.js'
import { API, build, type Built } from './helpers/build.js'

type Json = Record<string, unknown>
const isJson = (value: unknown): value is Json => typeof value === 'object' && value !== null && !Array.isArray(value)
const METHODS = ['get', 'post', 'put', 'patch', 'delete']
const FORM = 'application/x-www-form-urlencoded'
const NOT_SENT = { en: 'Not sent', de: 'Nicht gesendet', at: 'Nicht geschickt', 'ch-de': 'Nicht gesendet', 'ch-fr': 'Pas envoyé', es: 'No enviado' }

function operations(doc: Json): Array<{ path: string; method: string; op: Json }> {
  const paths = isJson(doc.paths) ? doc.paths : {}
  return Object.entries(paths).flatMap(([path, item]) => METHODS.flatMap((method) => isJson(item) && isJson(item[method]) ? [{ path, method, op: item[method] }] : []))
}

function component(doc: Json, ref: unknown): Json {
  let node: unknown = doc
  if (typeof ref === 'string') for (const key of ref.replace(/^#\//, '').split('/')) node = isJson(node) ? node[key] : undefined
  return isJson(node) ? node : {}
}

const resolve = (doc: Json, node: unknown): Json => isJson(node) && typeof node.$ref === 'string' ? component(doc, node.$ref) : isJson(node) ? node : {}

async function documents(s: Built, language: string): Promise<{ ui: Json; doc: Json }> {
  const ui = await s.inject({ url: `${API}/ui/json?ml_language=${language}` })
  const doc = await s.inject({ url: `${API}/doc?ml_language=${language}` })
  t.equal(ui.statusCode, 200)
  t.equal(doc.statusCode, 200)
  return { ui: ui.json(), doc: doc.json() }
}

t.test('ml_language: the example Swagger UI prefills, and the write examples, are the page language', async (t) => {
  const s = await build(t)
  for (const language of LANGUAGES) {
    const { ui, doc } = await documents(s, language)
    for (const served of [ui, doc]) {
      t.equal(component(served, '#/components/parameters/MlLanguage').example, language, `${language}: the parameter`)
      const bodies = Object.values(component(served, '#/components/requestBodies'))
      const languages = bodies.flatMap((body) => Object.values(resolve(served, resolve(served, body).content)).flatMap((media) => {
        const example = isJson(media) ? media.example : undefined
        return isJson(example) && 'ml_language' in example ? [example.ml_language] : []
      }))
      t.ok(languages.length >= 2, `${language}: write examples that send ml_language`)
      t.strictSame(new Set(languages), new Set([language]), `${language}: every one sends the page language`)
    }
  }
  // The loaded contract itself is left as it was.
  const { doc } = await documents(s, 'en')
  t.equal(component(doc, '#/components/parameters/MlLanguage').example, 'en')
})

t.test('reads that need no key show no lock in the UI; /doc keeps the optional key', async (t) => {
  const s = await build(t)
  const { ui, doc } = await documents(s, 'en')
  const security = (served: Json) => new Map(operations(served).map(({ path, method, op }) => [`${method} ${path}`, op.security]))
  const inUi = security(ui)
  let open = 0
  for (const [operation, required] of security(doc)) {
    const optional = Array.isArray(required) && required.some((r) => isJson(r) && Object.keys(r).length === 0)
    if (optional) {
      open++
      t.strictSame(required, [{}, { bearerAuth: [] }], `${operation}: /doc says a key is optional`)
      t.strictSame(inUi.get(operation), [{}], `${operation}: the UI shows no lock`)
    } else {
      t.strictSame(inUi.get(operation), required, `${operation}: the UI shows the key it needs`)
    }
  }
  t.equal(open, 18, 'every public read')
})

t.test('an optional parameter starts as "Not sent" in the page language; the contract has values only', async (t) => {
  const s = await build(t)
  for (const language of LANGUAGES) {
    const { ui, doc } = await documents(s, language)
    let optional = 0
    for (const { path, method, op } of operations(ui)) {
      for (const parameter of Array.isArray(op.parameters) ? op.parameters.map((p) => resolve(ui, p)) : []) {
        if (!isJson(parameter.examples)) continue
        const [first, ...rest] = Object.values(parameter.examples)
        if (parameter.required === true) {
          t.ok(isJson(first) && 'value' in first, `${method} ${path} ${String(parameter.name)}: a required parameter starts with a value`)
          continue
        }
        optional++
        t.strictSame(first, { summary: NOT_SENT[language] }, `${language} ${method} ${path} ${String(parameter.name)}`)
        t.ok(rest.length >= 1 && rest.every((e) => isJson(e) && 'value' in e), 'then the examples of the contract')
      }
    }
    t.ok(optional >= 51, `${language}: ${optional} optional parameters`)
    const withoutValue = JSON.stringify(doc).match(/"examples":\{"[^"]+":\{"summary":"[^"]*"\}/g)
    t.equal(withoutValue, null, `${language}: /doc has no example without a value`)
  }
})

t.test('the server description is plain text', async (t) => {
  const s = await build(t)
  for (const language of LANGUAGES) {
    const { ui, doc } = await documents(s, language)
    for (const served of [ui, doc]) {
      const servers = Array.isArray(served.servers) ? served.servers : []
      t.equal(servers.length, 1)
      const description = isJson(servers[0]) ? servers[0].description : undefined
      t.match(description, /calendar\/events\/v1/)
      t.notMatch(description, /[`*_[\]]/, `${language}: no Markdown (the servers list shows it raw)`)
    }
  }
})

/** The body Swagger UI sends for a form: each field's prefilled value, empty ones left out, lists repeated. */
function formSent(schema: Json): URLSearchParams {
  const body = new URLSearchParams()
  for (const [name, property] of Object.entries(isJson(schema.properties) ? schema.properties : {})) {
    const sample: unknown = isJson(property) && Array.isArray(property.examples) ? property.examples[0] : undefined
    for (const value of Array.isArray(sample) ? sample : [sample]) if (value !== undefined && value !== '') body.append(name, String(value))
  }
  return body
}

/** Records for every write to reach: their ids and slugs stand for the path parameters. */
async function records(s: Built, language: string, editor: { authorization: string }): Promise<Record<string, string>> {
  const post = async (path: string, payload: Json) => {
    const res = await s.inject({ method: 'POST', url: `${API}${path}?ml_language=${language}`, headers: editor, payload })
    t.equal(res.statusCode, 201, `fixture ${path}: ${res.body.slice(0, 200)}`)
    return res.json()
  }
  const category = await post('/categories', { name: 'Jazz' })
  const tag = await post('/tags', { name: 'Outdoors' })
  const event = await post('/events', { title: 'Open Air Cinema', slug: 'open-air-cinema', start_date: '2026-12-11 21:00', end_date: '2026-12-11 23:30', status: 'publish' })
  const venue = await post('/venues', { venue: 'Rote Fabrik', slug: 'rote-fabrik', status: 'publish' })
  const organizer = await post('/organizers', { organizer: 'Kino am See', slug: 'kino-am-see', status: 'publish' })
  // A weekly series (UTC, Thursdays 21:00 from 2026-12-03): its second occurrence is changed, its third split off.
  const series = await post('/events', { title: 'Late Night Jazz', start_date: '2026-12-03 21:00', end_date: '2026-12-03 23:30', timezone: 'UTC', status: 'publish', recurrence: { rule: 'FREQ=WEEKLY;COUNT=6' } })
  const admin = await s.auth('administrator')
  const webhook = await s.inject({ method: 'POST', url: `${API}/webhooks`, headers: admin, payload: { url: 'https://partner.example.com/hooks/a', events: ['*'] } })
  t.equal(webhook.statusCode, 201)
  t.equal(String(category.id), '1', 'the form example of a new event names category 1')
  return {
    '/events/{id}': String(event.id), '/events/by-slug/{slug}': String(event.slug), '/venues/{id}': String(venue.id),
    '/venues/by-slug/{slug}': String(venue.slug), '/organizers/{id}': String(organizer.id), '/organizers/by-slug/{slug}': String(organizer.slug),
    '/categories/{id}': String(category.id), '/tags/{id}': String(tag.id), '/webhooks/{id}': String(webhook.json().id),
    '/events/{id}/occurrences/{occurrence}': `/events/${String(series.id)}/occurrences/20261210T210000Z`,
    '/events/{id}/occurrences/{occurrence}/split': `/events/${String(series.id)}/occurrences/20261217T210000Z/split`,
  }
}

for (const language of ['en', 'de'] as const) {
  t.test(`${language}: every form field is prefilled from the form's example or empty, and the form is accepted`, async (t) => {
    const s = await build(t, { config: { webhooks: { retrySchedule: [1000], disableAfter: 10, allowPrivate: true } } })
    const { ui } = await documents(s, language)
    const editor = await s.auth('editor')
    const admin = await s.auth('administrator')
    const ids = await records(s, language, editor)
    let tried = 0
    for (const { path, method, op } of operations(ui)) {
      const form = isJson(op.requestBody) ? resolve(ui, resolve(ui, op.requestBody).content)[FORM] : undefined
      if (!isJson(form) || !isJson(form.example)) continue
      const schema = resolve(ui, form.schema)
      const example = form.example
      for (const [name, property] of Object.entries(isJson(schema.properties) ? schema.properties : {})) {
        const sample: unknown = isJson(property) && Array.isArray(property.examples) ? property.examples[0] : undefined
        const expected = example[name] ?? ''
        t.ok(sample === expected || (Array.isArray(sample) && sample.join(',') === String(expected)), `${method} ${path} ${name}: ${JSON.stringify(sample)}`)
      }
      const body = formSent(schema)
      t.strictSame(Object.fromEntries(body), Object.fromEntries(Object.entries(example).map(([k, v]) => [k, String(v)])), `${method} ${path}: the form sends its example`)
      // An occurrence's paths name two records: their whole path is given.
      const target = path.includes('/occurrences/') ? ids[path] ?? path : path.replace(/\{(id|slug)\}$/, () => ids[path] ?? 'unknown')
      const sendsLanguage = Array.isArray(op.parameters) && op.parameters.some((p) => resolve(ui, p).name === 'ml_language')
      const res = await s.inject({
        method: method.toUpperCase(), url: `${API}${target}${sendsLanguage ? `?ml_language=${language}` : ''}`,
        headers: { ...(path.startsWith('/webhooks') ? admin : editor), 'content-type': FORM }, payload: body.toString(),
      })
      t.ok(res.statusCode === 200 || res.statusCode === 201, `${method.toUpperCase()} ${path} as a form: ${res.statusCode} ${res.body.slice(0, 300)}`)
      tried++
    }
    t.equal(tried, 35, 'every write that takes a form')
  })
}
