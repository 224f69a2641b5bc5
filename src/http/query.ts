/**
 * Query strings and form bodies carry only strings. This turns them into the types their schema asks
 * for, before validation, the same way for both: the three array forms (`a=1&a=2`, `a[]=1&a[]=2`,
 * `a=1,2`), booleans as `true`/`false`/`1`/`0`, integers and numbers. A value that does not fit is left
 * as it is, so that validation rejects it with a 400 naming the field: nothing is silently dropped.
 */
import type { FastifyInstance, FastifyRequest } from 'fastify'
import { isRecord } from '../lib/json.js'
import { nestBracketedNames } from './bracketed-names.js'

type JsonSchema = Record<string, unknown>

declare module 'fastify' {
  interface FastifyRequest {
    /** Query parameter names the client actually sent (after `a[]` → `a`), in the order sent. */
    sentQuery: string[]
    /** Path parameters as sent, before conversion: `99999999999999999999999` is no number to echo. */
    sentParams: Record<string, string>
    /**
     * Integers sent in the query or path beyond 2^53, by the number they became, with their text as sent:
     * `rest_url` and messages echo what was sent (`9007199254740993`, not `…992`).
     */
    sentDigits: Map<number, string>
  }
}

export function registerQueryNormalisation(app: FastifyInstance): void {
  app.decorateRequest('sentQuery', null as unknown as string[])
  app.decorateRequest('sentParams', null as unknown as Record<string, string>)
  app.decorateRequest('sentDigits', null as unknown as Map<number, string>)
  app.addHook('onRequest', (req, _reply, done) => {
    req.sentDigits = new Map()
    done()
  })
  app.addHook('preValidation', (req, _reply, done) => {
    try {
      normaliseRequest(req)
    } catch (error) {
      done(error as Error)
      return
    }
    done()
  })
}

/** The query, path parameters and form body of `req` in the types their schemas ask for (see above). */
function normaliseRequest(req: FastifyRequest): void {
  const schema = req.routeOptions.schema
  req.sentQuery = []
  req.sentParams = {}
  if (isRecord(req.params)) for (const [name, value] of Object.entries(req.params)) if (typeof value === 'string') req.sentParams[name] = value
  const digits = req.sentDigits
  const query = req.query
  if (isRecord(query)) {
    const properties = propertiesOf(schema?.querystring)
    req.sentQuery = normaliseRecord(query, properties, false, digits)
  }
  if (isRecord(req.params)) normaliseRecord(req.params, propertiesOf(schema?.params), false, digits)
  if (req.headers['content-type']?.startsWith('application/x-www-form-urlencoded') === true && isRecord(req.body)) {
    normaliseRecord(req.body, propertiesOf(bodySchema(schema?.body, 'application/x-www-form-urlencoded')), true)
  }
}

/**
 * A query parsed outside a route (http/replay.ts "Cold lists") normalised as `preValidation` normalises the route's:
 * `query` changed in place for its `querystring` schema, integers beyond 2^53 noted in `digits`; the names sent, in order.
 */
export function normaliseQuery(query: Record<string, unknown>, querystring: unknown, digits: Map<number, string>): string[] {
  return normaliseRecord(query, propertiesOf(querystring), false, digits)
}

/**
 * Parses a form body into strings, lists and objects (repeated keys and `a[]` keys become lists, PHP's
 * bracketed names lists and objects: `bracketed-names.ts`), in time linear in the body: repeated values
 * are appended in place, never copied.
 */
export function parseFormBody(text: string): Record<string, unknown> {
  return nestBracketedNames(new URLSearchParams(text))
}

/**
 * Whether the `%XX` escapes of a form body decode to UTF-8. URLSearchParams would silently put U+FFFD
 * for bytes that do not (`name=%ff`); such a body is refused like raw bytes that are not UTF-8. A `%`
 * that starts no escape is a plain `%`, as the WHATWG form rules read it (`50%`).
 */
export function formEscapesAreUtf8(text: string): boolean {
  if (!/%[89a-f][0-9a-f]/i.test(text)) return true
  const bytes = Buffer.concat(text.split(/(%[0-9a-f]{2})/i)
    .map((part) => (/^%[0-9a-f]{2}$/i.test(part) ? Buffer.from([parseInt(part.slice(1), 16)]) : Buffer.from(part, 'utf8'))))
  try {
    new TextDecoder('utf-8', { fatal: true }).decode(bytes)
    return true
  } catch {
    return false
  }
}

/**
 * Whether a query's (or path's) values have nothing to nest: no bracketed name and no repeated one (every
 * value a string), so that nesting would give them back as they are (an empty query, a path's `id`).
 */
function plain(values: Record<string, unknown>): boolean {
  for (const key in values) {
    if (!Object.hasOwn(values, key)) continue
    if (typeof values[key] !== 'string' || key.includes('[') || key.includes(']')) return false
  }
  return true
}

function normaliseRecord(values: Record<string, unknown>, properties: Record<string, JsonSchema>, form: boolean, digits?: Map<number, string>): string[] {
  if (!form && !plain(values)) {
    // A query string as PHP writes it (`a[]=1`, `a[0]=1`): the bracketed names of known parameters are
    // nested (a form body was when it was parsed); those of unknown ones stay unknown, and ignored.
    const entries = Object.entries(values).flatMap(([key, value]) => asList(value).map((v): [string, unknown] => [key, v]))
    const nested = nestBracketedNames(entries, (base) => Object.hasOwn(properties, base))
    for (const key of Object.keys(values)) delete values[key]
    for (const [key, value] of Object.entries(nested)) Object.defineProperty(values, key, { value, enumerable: true, writable: true, configurable: true })
  }
  // The names in the order the client sent them, `a[]` and `a[0]` counting as `a` where it first appears.
  const sent = Object.keys(values).filter((name) => Object.hasOwn(properties, name))
  for (const name of sent) {
    const schema = properties[name]
    if (schema !== undefined) values[name] = coerce(values[name], schema, form, digits)
  }
  return sent
}

function coerce(value: unknown, schema: JsonSchema, form: boolean, digits?: Map<number, string>): unknown {
  const types = typesOf(schema)
  // An object of a form body (`venue[city]=Bern`): its fields are text like any other.
  if (isRecord(value)) return types.has('object') ? coerceFields(value, schema, form, digits) : value
  if (types.has('array')) {
    if (typeof value !== 'string' && !Array.isArray(value)) return value
    const items = itemsOf(schema) ?? {}
    // A single value is the comma-list form (`a=1,2`). In a form body the other forms (`a[]=`, repeated
    // keys) arrive as arrays whose elements are values as written, commas and all (`Rock, Pop`); a query
    // splits those too (ids and slugs hold no comma, and `include[]=1,2` has always meant 1 and 2).
    // A form list whose items take no text (ids) splits them too: `venue[]=1,2` is the form of the spec's
    // id-list text as much as `venue=1,2` is.
    const split = typeof value === 'string' || !form || !typesOf(items).has('string')
    const list = asList(value).flatMap((v) => (typeof v === 'string' && split ? v.split(',') : [v]))
    const values = list.map((v) => (typeof v === 'string' ? v.trim() : v)).filter((v) => v !== '').map((v) => coerce(v, items, form, digits))
    // A filter named twice is named once: a list of a few kinds (`resource=events,events,…`) never
    // exceeds its `maxItems` by repeating them.
    return form ? values : [...new Set(values)]
  }
  if (typeof value !== 'string') return value
  if (form && value === '' && types.has('null')) return null
  if (types.has('integer') && /^-?\d+$/.test(value)) {
    const n = Number(value)
    if (!Number.isSafeInteger(n)) digits?.set(n, value)
    return n
  }
  // A field that also takes text (`cost`) keeps the text as written: "12.50" must not become 12.5.
  if (types.has('number') && !types.has('string') && /^-?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?$/.test(value)) return Number(value)
  if (types.has('boolean')) {
    if (value === 'true' || value === '1') return true
    if (value === 'false' || value === '0') return false
  }
  return value
}

/** The fields of an object coerced by the properties its schema (or one of its alternatives) gives them. */
function coerceFields(value: Record<string, unknown>, schema: JsonSchema, form: boolean, digits?: Map<number, string>): Record<string, unknown> {
  const properties = objectProperties(schema)
  for (const [name, field] of Object.entries(value)) {
    const fieldSchema = properties[name]
    if (fieldSchema !== undefined) value[name] = coerce(field, fieldSchema, form, digits)
  }
  return value
}

/** The schema of a list's items, looking through `oneOf`/`anyOf` (`venue`: a list, or one entry alone). */
function itemsOf(schema: JsonSchema): JsonSchema | undefined {
  if (isRecord(schema.items)) return schema.items
  for (const key of ['oneOf', 'anyOf'] as const) {
    const alternatives = schema[key]
    if (Array.isArray(alternatives)) {
      for (const alt of alternatives) {
        const items = isRecord(alt) ? itemsOf(alt) : undefined
        if (items !== undefined) return items
      }
    }
  }
  return undefined
}

/** The properties of every object alternative of a schema, the first naming a field winning. */
function objectProperties(schema: JsonSchema): Record<string, JsonSchema> {
  const out: Record<string, JsonSchema> = { ...propertiesOf(schema) }
  for (const key of ['oneOf', 'anyOf'] as const) {
    const alternatives = schema[key]
    if (Array.isArray(alternatives)) {
      for (const alt of alternatives) if (isRecord(alt)) for (const [name, s] of Object.entries(objectProperties(alt))) if (!(name in out)) out[name] = s
    }
  }
  return out
}

/** The types a schema takes, kept per schema object (route schemas are made once: every request asks the same). */
const typesKnown = new WeakMap<JsonSchema, ReadonlySet<string>>()

function typesOf(schema: JsonSchema): ReadonlySet<string> {
  let types = typesKnown.get(schema)
  if (types === undefined) typesKnown.set(schema, types = typesMade(schema))
  return types
}

/** The JSON types a schema admits, looking through `oneOf`/`anyOf` and `enum`. */
function typesMade(schema: JsonSchema): Set<string> {
  const types = new Set<string>()
  const type = schema.type
  if (typeof type === 'string') types.add(type)
  if (Array.isArray(type)) for (const t of type) if (typeof t === 'string') types.add(t)
  for (const key of ['oneOf', 'anyOf'] as const) {
    const alternatives = schema[key]
    if (Array.isArray(alternatives)) for (const alt of alternatives) if (isRecord(alt)) for (const t of typesOf(alt)) types.add(t)
  }
  if (Array.isArray(schema.enum)) {
    for (const v of schema.enum) types.add(v === null ? 'null' : typeof v === 'number' ? 'number' : typeof v)
  }
  return types
}

/** The properties of a schema (never to be changed by their reader), per schema object. */
const propertiesKnown = new WeakMap<object, Readonly<Record<string, JsonSchema>>>()
const NO_PROPERTIES: Readonly<Record<string, JsonSchema>> = Object.freeze({})

function propertiesOf(schema: unknown): Readonly<Record<string, JsonSchema>> {
  if (!isRecord(schema) || !isRecord(schema.properties)) return NO_PROPERTIES
  let out = propertiesKnown.get(schema)
  if (out === undefined) {
    const made: Record<string, JsonSchema> = {}
    for (const [name, s] of Object.entries(schema.properties)) if (isRecord(s)) made[name] = s
    propertiesKnown.set(schema, out = made)
  }
  return out
}

function bodySchema(body: unknown, mediaType: string): unknown {
  if (!isRecord(body) || !isRecord(body.content)) return undefined
  const entry = body.content[mediaType]
  return isRecord(entry) ? entry.schema : undefined
}

function asList(value: unknown): unknown[] {
  return value === undefined ? [] : Array.isArray(value) ? value : [value]
}


/** Query values as they should appear again in a `rest_url`: arrays as comma lists. */
export function queryValueText(value: unknown): string {
  if (Array.isArray(value)) return value.map(queryValueText).join(',')
  return String(value)
}

export function sentQueryOf(req: FastifyRequest): string[] {
  return req.sentQuery ?? []
}

/** A value as it was sent: integers beyond 2^53 as their digits (see `sentDigits`), arrays element by element. */
export function asSent(req: FastifyRequest, value: unknown): unknown {
  return asSentWith(req.sentDigits, value)
}

/** `asSent` with the request's `sentDigits` (none: undefined). */
export function asSentWith(digits: ReadonlyMap<number, string> | undefined, value: unknown): unknown {
  if (Array.isArray(value)) return value.map((v) => asSentWith(digits, v))
  if (typeof value === 'number' && !Number.isSafeInteger(value)) return digits?.get(value) ?? value
  return value
}

/** The text of a message variable as sent: a number that became another beyond 2^53 is its digits. */
export function sentText(req: FastifyRequest, text: string): string {
  for (const [n, digits] of req.sentDigits ?? []) if (String(n) === text) return digits
  return text
}
