/**
 * Contract fuzzing from `openapi/openapi.yaml`. Every operation of the spec gets a request generator
 * (path, query, headers and body; valid values and invalid ones) built by a small JSON Schema →
 * fast-check converter, steered towards the records a seeded database holds. Each run starts from a
 * fresh copy of that database and sends a short sequence of requests through `app.inject`.
 *
 * Every response must:
 * - not be a 5xx;
 * - have a status declared for its operation and a body valid against the declared schema
 *   (`contractProblems`, the same check every test's `inject` makes);
 * - follow the order of checks of CONTRACT §1: a write without a (known) key is 401, a role outside the
 *   operation's scopes 403, then a malformed body 415/400, then a request the schema refuses 400;
 * - accept a request the schema accepts: a 400 for it must come from a contract rule the schema cannot
 *   express (see `CONTRACT_RULES`, the documented list of exceptions) and never from schema validation;
 * - leave the data unchanged when it is a read or fails (CONTRACT §5: all or nothing);
 * - never show the caller's API key (CONTRACT §6);
 * - for a list, agree with itself: headers, total_pages, the number of records on the page (§3);
 * - for a successful write, show the text fields of a JSON body exactly as sent (§2), and read back the
 *   same record with the same ETag from its `rest_url` (§5).
 *
 * Which requests the schema accepts is decided here, independently of the server: the wire form
 * (query string, JSON or form body) is decoded as CONTRACT §1 describes and checked with Ajv 2020.
 */
import { createHash } from 'node:crypto'
import fc from 'fast-check'
import { Ajv2020 } from 'ajv/dist/2020.js'
import addFormats from 'ajv-formats'
import type { FastifyInstance } from 'fastify'
import { buildApp } from '../../src/app.js'
import { defaultConfig, type Config } from '../../src/config.js'
import { openSqlite, type DatabaseHandle } from '../../src/db/database.js'
import type SQLite from 'better-sqlite3'
import { createCompilers } from '../../src/http/compilers.js'
import { PREFIX, dereference, type OpenApiDocument } from '../../src/http/spec.js'
import { generateKey, type Role } from '../../src/lib/api-keys.js'
import { createUserWithKey } from '../../src/repositories/users.js'
import { withTransaction } from '../../src/db/unit-of-work.js'
import { contractProblems, SPEC } from './contract.js'

type Json = Record<string, unknown>

const BASE_URL = 'http://calendar.test'
/** The pinned clock (the same as `build`'s): Monday 15 June 2026, 12:00 UTC. */
const NOW = new Date('2026-06-15T12:00:00Z')

// ---------------------------------------------------------------------------------------------------
// The operations of the spec

export interface Param {
  name: string
  in: 'path' | 'query' | 'header'
  required: boolean
  schema: Json
}

export interface Operation {
  id: string
  method: string
  /** The spec's path, e.g. `/events/{id}`. */
  path: string
  params: Param[]
  body?: { schema: Json; media: string[] }
  /** Roles allowed by the operation's bearer scopes; undefined when anonymous callers may call it. */
  scopes?: string[]
  statuses: string[]
}

const DOC: OpenApiDocument = dereference(SPEC.document)
const METHODS = ['get', 'post', 'put', 'patch', 'delete'] as const

function isJson(value: unknown): value is Json {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}

function operationsOf(doc: OpenApiDocument): Operation[] {
  const out: Operation[] = []
  for (const [path, item] of Object.entries(doc.paths)) {
    for (const method of METHODS) {
      const op = item[method]
      if (!isJson(op) || typeof op.operationId !== 'string') continue
      const params: Param[] = []
      for (const p of Array.isArray(op.parameters) ? op.parameters : []) {
        if (!isJson(p) || typeof p.name !== 'string' || !isJson(p.schema)) continue
        if (p.in !== 'path' && p.in !== 'query' && p.in !== 'header') continue
        params.push({ name: p.name, in: p.in, required: p.required === true, schema: p.schema })
      }
      let body: Operation['body']
      const requestBody = op.requestBody
      if (isJson(requestBody) && isJson(requestBody.content)) {
        const media = Object.keys(requestBody.content)
        const first = requestBody.content[media[0] ?? '']
        if (isJson(first) && isJson(first.schema)) body = { schema: first.schema, media }
      }
      const security = Array.isArray(op.security) ? op.security : []
      const open = security.some((s) => isJson(s) && Object.keys(s).length === 0)
      const bearer = security.find((s): s is Json => isJson(s) && Array.isArray(s.bearerAuth))
      const scopes = open || bearer === undefined ? undefined : (bearer.bearerAuth as unknown[]).filter((s): s is string => typeof s === 'string')
      out.push({
        id: op.operationId, method: method.toUpperCase(), path, params, statuses: Object.keys(isJson(op.responses) ? op.responses : {}),
        ...(body !== undefined ? { body } : {}), ...(scopes !== undefined ? { scopes } : {}),
      })
    }
  }
  return out
}

export const OPERATIONS: readonly Operation[] = operationsOf(DOC)

// ---------------------------------------------------------------------------------------------------
// The seeded database: what the generators aim at

/** Roles that get a key in every fuzzed database; users 1–5 in this order. */
export const ROLES: readonly Role[] = ['administrator', 'editor', 'author', 'contributor', 'subscriber']
export type Caller = Role | 'anonymous' | 'unknown-key'

/** Names, slugs and ids of the seeded records (read back from the database after seeding). */
export interface Seeds {
  slugs: Record<'events' | 'venues' | 'organizers', string[]>
  ids: Record<Collection, number[]>
  termNames: string[]
  termSlugs: string[]
  maxId: number
}

/** Strings with the characters that break naive SQL, LIKE patterns, HTML, JSON and URLs. */
export const NASTY_STRINGS = [
  '', ' ', '  x  ', '%', '_', '\\', '%_%', "'", '"', "'; DROP TABLE events; --", '--', '/*', ';', '\u0000', 'a\u0000b',
  '<script>alert(1)</script>', '&amp;', '\u202e', '\ufeff', '\ud800', 'Ü', 'ß', 'İ', 'ǅ', '🎉', 'e\u0301', '日本語', '\n\t\r',
  'null', 'true', '0', '-1', '1e400', 'NaN', '[]', '{}', 'a,b', 'a=b&c=d', '../..', '%2F', '?x=1#y',
]

/** Dates written as CONTRACT §5 accepts them in bodies (and a few near the edges it may refuse). */
const BODY_DATES = fc.oneof(
  { weight: 6, arbitrary: fc.tuple(fc.integer({ min: 2020, max: 2030 }), fc.integer({ min: 1, max: 12 }), fc.integer({ min: 1, max: 28 }), fc.integer({ min: 0, max: 23 }), fc.integer({ min: 0, max: 59 }), fc.integer({ min: 0, max: 59 }), fc.constantFrom('wall', 'wall-short', 'iso-z', 'iso-offset', 'day'))
    .map(([y, mo, d, h, mi, s, form]) => {
      const p = (n: number, w = 2) => String(n).padStart(w, '0')
      const day = `${p(y, 4)}-${p(mo)}-${p(d)}`
      if (form === 'wall') return `${day} ${p(h)}:${p(mi)}:${p(s)}`
      if (form === 'wall-short') return `${day} ${p(h)}:${p(mi)}`
      if (form === 'iso-z') return `${day}T${p(h)}:${p(mi)}:${p(s)}Z`
      if (form === 'day') return day
      return `${day}T${p(h)}:${p(mi)}:${p(s)}${h % 2 === 0 ? '+' : '-'}${p(h % 14)}:${mi % 2 === 0 ? '00' : '30'}`
    }) },
  { weight: 2, arbitrary: fc.constantFrom(
    '2026-07-01 18:00:00', '2026-07-01 21:00', '2026-07-01T18:00:00Z', '2026-07-01T18:00:00+02:00', '2026-03-29 02:30:00',
    '2026-11-01 01:30:00', '0001-01-01 00:00:00', '0001-01-01T00:00:00Z', '0001-01-01T00:00:00+14:00', '0001-01-01T00:00:00-12:00',
    '9999-12-31 23:59:59', '9999-12-31T23:59:59Z', '9999-12-31T23:59:59-14:00', '9999-12-31T23:59:59+14:00', '2026-02-29 10:00:00',
    '2024-02-29 10:00:00', '2026-13-01 10:00:00', '2026-06-15 24:00:00', '2026-06-15T10:00:00.123456Z', '2026-06-15t10:00:00z',
    '2026-06-15 10:00:00+2359', '2026-06-15 10:00:00+24:00', 'now', 'today', '1750000000', '15/06/2026', '') },
)

const FILTER_DATES = fc.oneof(
  { weight: 3, arbitrary: BODY_DATES },
  { weight: 2, arbitrary: fc.constantFrom('now', 'today', 'tomorrow', 'yesterday', 'NOW', 'Today', '1750000000', '0', '-86400', '-62135596800', '253402300799', '253402300800', '999999999999999', '9999999999999999') },
  { weight: 1, arbitrary: fc.integer({ min: -(2 ** 40), max: 2 ** 40 }).map(String) },
)

const TIMEZONES = fc.constantFrom(
  'UTC', 'Europe/Berlin', 'Europe/Vienna', 'Europe/Zurich', 'America/New_York', 'Asia/Kolkata', 'Australia/Lord_Howe',
  'Pacific/Kiritimati', 'Pacific/Chatham', 'America/St_Johns', 'Etc/GMT+12', 'Etc/GMT-14', 'UTC+5:30', 'UTC-12', 'UTC+14', 'UTC+5.5',
  'UTC+0', 'utc', 'europe/berlin', 'Mars/Olympus', 'UTC+15', '+02:00', 'GMT', 'EST', '', null,
)

const URLS = fc.oneof(
  { weight: 3, arbitrary: fc.constantFrom('https://example.org/', 'http://example.com/a/b?c=d#e', 'https://xn--bcher-kva.example/img.png', 'http://127.0.0.1:8080/x', 'HTTPS://EXAMPLE.ORG') },
  { weight: 2, arbitrary: fc.webUrl({ withQueryParameters: true, withFragments: true }) },
  { weight: 1, arbitrary: fc.constantFrom('ftp://example.org/file', 'mailto:a@b.c', 'urn:isbn:0451450523', 'http:/x', 'javascript:alert(1)', 'example.org', 'http://') },
)

const EMAILS = fc.oneof(fc.emailAddress(), fc.constantFrom('a@b.co', 'first.last+tag@example.org', "o'hara@example.ie", 'a@b', 'a b@c.de', '@x.y'))

const COSTS = fc.constantFrom('Free', 'free', '$10', '10 - 20 EUR', '€5,50', '5 €', 'USD 1,000.50', '0', 'Donation', '1e400', '-5', '10.5.3', '')

const ID_SMALL = fc.integer({ min: 1, max: 16 })

/** Integers at the edges JSON, JavaScript and SQLite disagree about. */
const BIG_INTEGERS = [0, -1, 2 ** 31, 2 ** 32, 2 ** 53 - 1, 2 ** 53, 2 ** 53 + 2, 2 ** 63, 2 ** 64, 1e20, -(2 ** 63)]

// ---------------------------------------------------------------------------------------------------
// JSON Schema → fast-check

type Where = 'path' | 'query' | 'header' | 'body'

function typeList(schema: Json): string[] {
  if (typeof schema.type === 'string') return [schema.type]
  if (Array.isArray(schema.type)) return schema.type.filter((t): t is string => typeof t === 'string')
  return []
}

const num = (value: unknown): number | undefined => (typeof value === 'number' ? value : undefined)

/** Values valid for `schema`, with field-specific hints mixed in (see `hintFor`). */
export function arbitraryOf(schema: Json, name: string, where: Where, seeds: Seeds): fc.Arbitrary<unknown> {
  const hinted = hintFor(schema, name, where, seeds)
  const plain = plainArbitrary(schema, name, where, seeds)
  return hinted === undefined ? plain : fc.oneof({ weight: 6, arbitrary: hinted }, { weight: 1, arbitrary: plain })
}

function plainArbitrary(schema: Json, name: string, where: Where, seeds: Seeds): fc.Arbitrary<unknown> {
  if ('const' in schema) return fc.constant(schema.const)
  if (Array.isArray(schema.enum)) return fc.constantFrom(...(schema.enum as unknown[]))
  const alternatives = Array.isArray(schema.oneOf) ? schema.oneOf : Array.isArray(schema.anyOf) ? schema.anyOf : undefined
  if (alternatives !== undefined) return fc.oneof(...alternatives.filter(isJson).map((alt) => arbitraryOf(alt, name, where, seeds)))
  const types = typeList(schema)
  if (types.length === 0) return jsonValue
  return fc.oneof(...types.map((type) => typedArbitrary(schema, type, name, where, seeds)))
}

function typedArbitrary(schema: Json, type: string, name: string, where: Where, seeds: Seeds): fc.Arbitrary<unknown> {
  const min = num(schema.minimum)
  const max = num(schema.maximum)
  switch (type) {
    case 'null':
      return fc.constant(null)
    case 'boolean':
      return fc.boolean()
    case 'integer': {
      const lo = Math.max(min ?? -1000, -1000)
      const hi = Math.min(max ?? 1000, 1000)
      const edges = BIG_INTEGERS.filter((n) => (min === undefined || n >= min) && (max === undefined || n <= max))
      const parts: Array<fc.WeightedArbitrary<number>> = [{ weight: 4, arbitrary: fc.integer({ min: lo, max: hi }) }]
      if (edges.length > 0) parts.push({ weight: 1, arbitrary: fc.constantFrom(...edges) })
      if (max === undefined) parts.push({ weight: 1, arbitrary: fc.maxSafeInteger().filter((n) => min === undefined || n >= min) })
      return fc.oneof(...parts)
    }
    case 'number': {
      const range = { noNaN: true, noDefaultInfinity: true, ...(min !== undefined ? { min } : {}), ...(max !== undefined ? { max } : {}) }
      const ints = fc.integer({ min: Math.ceil(Math.max(min ?? -1000, -1000)), max: Math.floor(Math.min(max ?? 1000, 1000)) })
      return fc.oneof(fc.double(range), ints, fc.constantFrom(...[min, max, 0].filter((n): n is number => n !== undefined)))
    }
    case 'string':
      return stringArbitrary(schema)
    case 'array': {
      const items = isJson(schema.items) ? schema.items : {}
      const minItems = num(schema.minItems) ?? 0
      return fc.array(arbitraryOf(items, `${name}[]`, where, seeds), { minLength: minItems, maxLength: Math.max(minItems, Math.min(num(schema.maxItems) ?? 4, 4)) })
    }
    case 'object':
      return objectArbitrary(schema, where, seeds, 3)
    default:
      return jsonValue
  }
}

const SMALL_ALPHABET = fc.constantFrom('a', 'b', 'A', ' ', '0', '-', '%', '_', 'é', ',')

function stringArbitrary(schema: Json): fc.Arbitrary<string> {
  const minLength = num(schema.minLength) ?? 0
  const maxLength = num(schema.maxLength)
  const fits = (s: string) => [...s].length >= minLength && (maxLength === undefined || [...s].length <= maxLength)
  if (schema.format === 'uri') return URLS.filter(fits)
  if (schema.format === 'email') return EMAILS.filter(fits)
  if (typeof schema.pattern === 'string') return fc.stringMatching(new RegExp(schema.pattern))
  const length = { minLength, maxLength: Math.max(minLength, Math.min(maxLength ?? 40, 40)) }
  return fc.oneof(
    { weight: 3, arbitrary: fc.string({ unit: 'binary', ...length }) },
    // A small alphabet makes collisions (names, slugs) likely.
    { weight: 3, arbitrary: fc.string({ unit: SMALL_ALPHABET, ...length }) },
    { weight: 2, arbitrary: fc.constantFrom(...NASTY_STRINGS).filter(fits) },
    { weight: 1, arbitrary: fc.string({ unit: 'grapheme', ...length }) },
  )
}

/** An object for `schema`: its required properties and a few optional ones. */
function objectArbitrary(schema: Json, where: Where, seeds: Seeds, maxOptional: number): fc.Arbitrary<Json> {
  const properties = isJson(schema.properties) ? schema.properties : {}
  const required = Array.isArray(schema.required) ? schema.required.filter((r): r is string => typeof r === 'string') : []
  const names = Object.keys(properties)
  const optional = names.filter((n) => !required.includes(n))
  const arb = (n: string) => arbitraryOf(isJson(properties[n]) ? properties[n] : {}, n, where, seeds).map((v): [string, unknown] => [n, v])
  const requiredArb = fc.tuple(...required.map(arb))
  const optionalArb = fc.uniqueArray(fc.constantFrom(...(optional.length > 0 ? optional : [''])), { maxLength: optional.length > 0 ? maxOptional : 0 })
    .chain((chosen) => fc.tuple(...chosen.map(arb)))
  return fc.tuple(requiredArb, optionalArb).map(([a, b]) => Object.fromEntries([...a, ...b]))
}

/** Any JSON value, small. */
const jsonValue: fc.Arbitrary<unknown> = fc.jsonValue({ maxDepth: 2 })

/**
 * Values that mean something to the contract for a field of this name: dates in the accepted forms,
 * real time zones, the seeded records' ids, slugs and names, URLs, costs. Still checked against the
 * schema like everything else (a hint may be schema-invalid; the classification decides).
 */
function hintFor(schema: Json, name: string, where: Where, seeds: Seeds): fc.Arbitrary<unknown> | undefined {
  const types = new Set(typeList(schema))
  const terms = fc.oneof(ID_SMALL, fc.constantFrom(...seeds.termSlugs, ...seeds.termNames, 'no-such-term'))
  if (where === 'path') return undefined
  // A few keys, so that creates meet them again (a replay, or 422 with another body), and malformed ones.
  if (where === 'header' && name === 'Idempotency-Key') return fc.constantFrom('retry-1', 'retry-2', 'a b', '', 'k'.repeat(256))
  if (where === 'header') return fc.constantFrom('*', '"event-1-1"', '"event-1-2"', '"venue-1-1"', '"organizer-1-1"', '"category-1-1"', '"tag-4-1"', 'W/"event-1-1"', '"x", "event-1-1"', 'garbage')
  switch (name) {
    case 'start_date': case 'end_date': case 'date': case 'date_utc':
      return where === 'query' ? FILTER_DATES : BODY_DATES
    case 'starts_before': case 'starts_after': case 'ends_before': case 'ends_after':
    case 'modified_after': case 'modified_before':
      return FILTER_DATES
    case 'timezone': return TIMEZONES
    case 'website': return types.has('null') ? fc.oneof(URLS, fc.constant(null)) : URLS
    case 'email': return fc.oneof(EMAILS, fc.constant(null))
    case 'image': return fc.oneof(fc.constantFrom(1, 2, '1', null), URLS)
    case 'author': return fc.integer({ min: 1, max: 7 })
    case 'translation_of': case 'post_parent': case 'event': case 'post': return ID_SMALL
    case 'parent': return fc.integer({ min: 0, max: 12 })
    case 'include': case 'exclude': case 'include[]': case 'exclude[]': return where === 'query' && name.endsWith('[]') ? ID_SMALL : undefined
    case 'categories[]': case 'tags[]': return terms
    case 'venue[]': return where === 'query' ? fc.constantFrom(...seeds.ids.venues, 99) : undefined
    case 'organizer[]': return where === 'query' ? fc.constantFrom(...seeds.ids.organizers, 99) : undefined
    // Mostly the default language: by id, another one names a version that seldom exists (404).
    case 'ml_language': return fc.oneof({ weight: 6, arbitrary: fc.constant('en') }, { weight: 1, arbitrary: fc.constantFrom('at', 'de', 'es', 'ch-fr', 'ch-de') })
    case 'cost': return COSTS
    case 'search': return fc.oneof(fc.constantFrom(...NASTY_STRINGS), fc.constantFrom('concert', 'CONCERT', 'Hall', '100%', 'fun_', 'fun%', 'a_b', "o'", 'secret', 'jazz'))
    case 'slug':
      if (where === 'query') return fc.constantFrom(...seeds.termSlugs)
      return fc.oneof(fc.constantFrom(...seeds.slugs.events, ...seeds.termSlugs, 'Ünïcode Slug', '---', '', 'a'.repeat(250)))
    case 'name': case 'title': case 'venue': case 'organizer':
      return types.has('string') ? fc.constantFrom(...seeds.termNames, 'Summer Concert', ' Music ', 'MUSIC', 'Jazz  Night', 'x'.repeat(300)) : undefined
    case 'password': return fc.constantFrom('secret', 'wrong', '', null)
    case 'page': return fc.integer({ min: 1, max: 3 })
    case 'per_page': return fc.integer({ min: 1, max: 60 })
    case 'geoloc_lat': case 'geo_lat': return fc.constantFrom(48.2, 48.21, 47.37, -90, 90, 0, null)
    case 'geoloc_lng': case 'geo_lng': return fc.constantFrom(16.37, 16.38, 8.54, -180, 180, 0, null)
    default: return undefined
  }
}

/** Values that are probably invalid for `schema` (wrong type, out of range, not in the enum, garbage). */
function invalidArbitrary(schema: Json): fc.Arbitrary<unknown> {
  const candidates: unknown[] = [null, true, false, 0, -1, 1.5, 2 ** 63, -(2 ** 63), '', ' ', 'x', '0', 'true', 'yes', [], [1], ['x'], {}, { a: 1 }]
  const min = num(schema.minimum)
  const max = num(schema.maximum)
  if (min !== undefined) candidates.push(min - 1, min - 0.5)
  if (max !== undefined) candidates.push(max + 1, max + 1e-9)
  if (Array.isArray(schema.enum)) candidates.push('PUBLISH', 'trash', 'EN', 'en-US', 'future', 'inherit')
  return fc.oneof(
    { weight: 3, arbitrary: fc.constantFrom(...candidates) },
    { weight: 1, arbitrary: fc.string({ unit: 'binary', maxLength: 20 }) },
    { weight: 1, arbitrary: jsonValue },
  )
}

/** Raw query-string values that are probably invalid for the parameter. */
const GARBAGE_PARAMS = fc.constantFrom(
  '', ' ', 'abc', '-1', '0', '1.5', '1e3', '1e400', '99999999999999999999999', '9223372036854775808', '-9223372036854775809',
  'TRUE', 'yes', 'no', '2', 'null', 'undefined', 'NaN', 'Infinity', '\u0000', '%', "1'", '1;--', '[]', '{}', 'EN', 'trash', '1,,2', ',',
  'x'.repeat(3000), `1${'0'.repeat(400)}`, `-${'9'.repeat(400)}`,
)

// ---------------------------------------------------------------------------------------------------
// Requests on the wire

/** A request as sent: the key is attached by role when it is sent, so a failure replays anywhere. */
export interface WireRequest {
  op: string
  method: string
  url: string
  caller: Caller
  headers: Record<string, string>
  payload?: string
}

type ArrayStyle = 'repeat' | 'bracket' | 'comma' | 'indexed'

/** Query pairs for typed values, arrays in one of the forms of CONTRACT §1 (`indexed`: as PHP's `http_build_query`, objects too). */
function queryPairs(values: Json, style: ArrayStyle): Array<[string, string]> {
  const pairs: Array<[string, string]> = []
  const php = (name: string, value: unknown): void => {
    if (Array.isArray(value)) value.forEach((item, i) => php(`${name}[${i}]`, item))
    else if (isJson(value)) for (const [key, item] of Object.entries(value)) php(`${name}[${key}]`, item)
    else if (value !== undefined) pairs.push([name, scalarText(value)])
  }
  for (const [name, value] of Object.entries(values)) {
    if (Array.isArray(value)) {
      if (value.length === 0) continue
      if (style === 'indexed') php(name, value)
      else if (style === 'comma') pairs.push([name, value.map(scalarText).join(',')])
      else for (const item of value) pairs.push([style === 'bracket' ? `${name}[]` : name, scalarText(item)])
    } else if (style === 'indexed' && isJson(value)) {
      php(name, value)
    } else if (value !== undefined) {
      pairs.push([name, scalarText(value)])
    }
  }
  return pairs
}

function scalarText(value: unknown): string {
  if (value === null) return ''
  if (typeof value === 'string') return value
  if (typeof value === 'number' || typeof value === 'boolean') return String(value)
  return JSON.stringify(value)
}

function encodePairs(pairs: Array<[string, string]>): string {
  return pairs.map(([k, v]) => `${encode(k)}=${encode(v)}`).join('&')
}

/** Percent-encoding; a lone surrogate (which no URL can carry) becomes U+FFFD first. */
function encode(text: string): string {
  return encodeURIComponent(text.replace(/[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g, '\ufffd'))
}

type BodyEncoding = 'json' | 'json-charset' | 'json-upper' | 'form' | 'empty' | 'text' | 'broken-json'

interface RequestParts {
  op: Operation
  caller: Caller
  path: Record<string, string>
  query: Array<[string, string]>
  headers: Record<string, string>
  body: unknown
  encoding: BodyEncoding
  style: ArrayStyle
  slash: boolean
}

function toWire(parts: RequestParts): WireRequest {
  let path = parts.op.path
  for (const [name, value] of Object.entries(parts.path)) path = path.replace(`{${name}}`, encode(value))
  let url = `${PREFIX}${path === '/' ? '' : path}${parts.slash ? '/' : ''}`
  if (parts.query.length > 0) url += `?${encodePairs(parts.query)}`
  const headers = { ...parts.headers }
  let payload: string | undefined
  if (parts.op.body !== undefined) {
    switch (parts.encoding) {
      case 'json': case 'json-charset': case 'json-upper':
        headers['content-type'] = { json: 'application/json', 'json-charset': 'application/json; charset=utf-8', 'json-upper': 'Application/JSON; Charset=UTF-8' }[parts.encoding]
        payload = JSON.stringify(parts.body)
        break
      case 'form':
        headers['content-type'] = 'application/x-www-form-urlencoded'
        payload = isJson(parts.body) ? encodePairs(queryPairs(parts.body, parts.style)) : String(parts.body)
        break
      case 'text':
        headers['content-type'] = 'text/plain'
        payload = JSON.stringify(parts.body) || 'x'
        break
      case 'broken-json':
        headers['content-type'] = 'application/json'
        payload = `${JSON.stringify(parts.body)}`.slice(0, -1) || '{'
        break
      case 'empty':
        break
    }
  }
  return { op: parts.op.id, method: parts.op.method, url, caller: parts.caller, headers, ...(payload !== undefined ? { payload } : {}) }
}

const CALLERS: fc.Arbitrary<Caller> = fc.oneof(
  { weight: 12, arbitrary: fc.constant<Caller>('editor') },
  { weight: 2, arbitrary: fc.constantFrom<Caller>('administrator', 'author') },
  { weight: 2, arbitrary: fc.constantFrom<Caller>('contributor', 'subscriber') },
  { weight: 2, arbitrary: fc.constantFrom<Caller>('anonymous', 'unknown-key') },
)

const UNKNOWN_FIELDS = ['foo', 'id', 'rest_url', 'json_ld', 'global_id', 'translations', 'password', 'count', '__proto__', 'constructor', 'Title', '']

/** The request generator of one operation: valid parts most of the time, one broken part otherwise. */
function operationArbitrary(op: Operation, seeds: Seeds): fc.Arbitrary<WireRequest> {
  const pathParams = op.params.filter((p) => p.in === 'path')
  const queryParams = op.params.filter((p) => p.in === 'query')
  const headerParams = op.params.filter((p) => p.in === 'header')

  const pathArb = fc.tuple(...pathParams.map((p) => fc.oneof(
    {
      weight: 15,
      arbitrary: p.name === 'slug' ? fc.oneof({ weight: 3, arbitrary: fc.constantFrom(...seeds.slugs[postCollectionOf(op)]) }, { weight: 1, arbitrary: arbitraryOf(p.schema, p.name, 'path', seeds) })
        : p.name === 'id' ? fc.oneof({ weight: 5, arbitrary: fc.constantFrom(...seeds.ids[collectionOf(op)]) }, { weight: 1, arbitrary: fc.integer({ min: 1, max: seeds.maxId + 3 }) }, { weight: 1, arbitrary: arbitraryOf(p.schema, p.name, 'path', seeds) })
        : arbitraryOf(p.schema, p.name, 'path', seeds),
    },
    { weight: 1, arbitrary: p.name === 'id' ? fc.constantFrom('0', '-1', 'abc', '1.5', '1e3', '9007199254740993', '9223372036854775808', '1'.repeat(40), '٣', ' 1') : fc.constantFrom(...NASTY_STRINGS.filter((s) => s !== '')) },
  ).map((v): [string, string] => [p.name, scalarText(v)]))).map((entries) => Object.fromEntries(entries))

  const typedQuery = queryParams.length === 0 ? fc.constant({}) : objectArbitrary({
    properties: Object.fromEntries(queryParams.map((p) => [p.name, p.schema])),
    required: queryParams.filter((p) => p.required).map((p) => p.name),
  }, 'query', seeds, 4)
  const queryArb = fc.tuple(typedQuery, fc.constantFrom<ArrayStyle>('repeat', 'bracket', 'comma', 'indexed'), fc.oneof(
    { weight: 8, arbitrary: fc.constant(null) },
    { weight: 1, arbitrary: fc.oneof(
      // One parameter broken: a garbage string, a typed invalid value, or sent twice.
      ...(queryParams.length === 0 ? [] : [
        fc.tuple(fc.constantFrom(...queryParams.map((p) => p.name)), GARBAGE_PARAMS).map(([n, v]): Array<[string, string]> => [[n, v]]),
        fc.constantFrom(...queryParams).chain((p) => invalidArbitrary(p.schema).map((v): Array<[string, string]> => [[p.name, scalarText(v)]])),
        fc.tuple(fc.constantFrom(...queryParams.map((p) => p.name)), GARBAGE_PARAMS, GARBAGE_PARAMS).map(([n, a, b]): Array<[string, string]> => [[n, a], [n, b]]),
      ]),
      // Unknown parameters are ignored (CONTRACT §1).
      fc.tuple(fc.constantFrom('foo', 'id', '_fields', 'order[]', 'PAGE', 'parent'), GARBAGE_PARAMS).map(([n, v]): Array<[string, string]> => [[n, v]]),
    ) }))
    .map(([typed, style, broken]) => {
      const pairs = queryPairs(typed, style)
      if (broken === null) return { pairs, style }
      const names = new Set(broken.map(([n]) => n))
      return { pairs: [...pairs.filter(([n]) => !names.has(n.replace(/\[\]$/, ''))), ...broken], style }
    })

  const headerArb = fc.tuple(...headerParams.map((p) => fc.oneof({ weight: 4, arbitrary: fc.constant(null) }, { weight: 1, arbitrary: arbitraryOf(p.schema, p.name, 'header', seeds) })
    // Header values are visible ASCII (a client cannot send control characters in them).
    .map((v): [string, string | null] => [p.name.toLowerCase(), typeof v === 'string' ? v.replace(/[^\x20-\x7e]/g, '') : null])))
    .map((entries) => Object.fromEntries(entries.filter((e): e is [string, string] => e[1] !== null)))

  let bodyArb: fc.Arbitrary<{ body: unknown; encoding: BodyEncoding }> = fc.constant({ body: undefined, encoding: 'empty' as BodyEncoding })
  if (op.body !== undefined) {
    const schema = op.body.schema
    const properties = isJson(schema.properties) ? schema.properties : {}
    const required = Array.isArray(schema.required) ? schema.required.filter((r): r is string => typeof r === 'string') : []
    const valid = objectArbitrary(schema, 'body', seeds, 5)
    const names = Object.keys(properties)
    const mutations: Array<fc.Arbitrary<(body: Json) => unknown>> = [
      fc.tuple(fc.constantFrom(...UNKNOWN_FIELDS), jsonValue).map(([key, value]) => (body: Json) => Object.fromEntries([...Object.entries(body), [key, value]])),
      fc.constantFrom(...names).chain((key) => invalidArbitrary(isJson(properties[key]) ? properties[key] : {}).map((value) => (body: Json) => ({ ...body, [key]: value }))),
      fc.constantFrom([], 'text', 0, null, true, [{}], 'x'.repeat(1000)).map((value) => () => value),
    ]
    if (required.length > 0) mutations.push(fc.constantFrom(...required).map((key) => (body: Json) => Object.fromEntries(Object.entries(body).filter(([k]) => k !== key))))
    for (const inline of ['venue', 'organizer'].filter((n) => n in properties && isJson(properties[n]) && isJson((properties[n] as Json).items))) {
      // An invalid record inside the body: an inline venue or organizer missing its name or with an unknown field.
      mutations.push(fc.constantFrom<unknown>({}, { foo: 1 }, { [inline]: '' }, { [inline]: 'X', website: 'nope' }, { [inline]: 'X', status: 'trash' }, { [inline]: 'X', foo: 1 }, 0, -3, 'name')
        .map((value) => (body: Json) => ({ ...body, [inline]: [value] })))
    }
    const invalid = fc.tuple(valid, fc.oneof(...mutations)).map(([body, mutate]) => mutate(body))
    const encodings = fc.oneof(
      { weight: 16, arbitrary: fc.constantFrom<BodyEncoding>('json', 'json-charset') },
      { weight: 4, arbitrary: fc.constant<BodyEncoding>('form') },
      { weight: 1, arbitrary: fc.constantFrom<BodyEncoding>('empty', 'text', 'broken-json', 'json-upper') },
    )
    bodyArb = fc.record({ body: fc.oneof({ weight: 4, arbitrary: valid }, { weight: 1, arbitrary: invalid }), encoding: encodings })
  }

  return fc.record({
    caller: CALLERS, path: pathArb, query: queryArb, headers: headerArb, body: bodyArb,
    // With or without a trailing slash (CONTRACT §1).
    slash: fc.constantFrom(false, false, false, true),
  }).map((r) => toWire({
    op, caller: r.caller, path: r.path, query: r.query.pairs, headers: r.headers, body: r.body.body,
    encoding: r.body.encoding, style: r.query.style, slash: r.slash,
  }))
}

type Collection = 'events' | 'venues' | 'organizers' | 'categories' | 'tags'

function collectionOf(op: Operation): Collection {
  const first = op.path.split('/')[1]
  return first === 'venues' || first === 'organizers' || first === 'categories' || first === 'tags' ? first : 'events'
}

function postCollectionOf(op: Operation): keyof Seeds['slugs'] {
  const collection = collectionOf(op)
  return collection === 'venues' || collection === 'organizers' ? collection : 'events'
}

/** One request to any operation of the spec. */
export function requestArbitrary(seeds: Seeds): fc.Arbitrary<WireRequest> {
  return fc.oneof(...OPERATIONS.map((op) => operationArbitrary(op, seeds)))
}

// ---------------------------------------------------------------------------------------------------
// What the contract says the server receives (CONTRACT §1), and whether the schema accepts it

const ajv = new Ajv2020({ strict: false, allErrors: false, validateFormats: true, coerceTypes: false, useDefaults: false })
addFormats.default(ajv)
const validators = new Map<string, ReturnType<typeof ajv.compile>>()

function validator(key: string, schema: Json): ReturnType<typeof ajv.compile> {
  let check = validators.get(key)
  if (check === undefined) {
    check = ajv.compile(schema)
    validators.set(key, check)
  }
  return check
}

/** The JSON types a schema admits, through `oneOf`/`anyOf` and `enum`. */
function typesOf(schema: Json): Set<string> {
  const types = new Set(typeList(schema))
  for (const alt of [...(Array.isArray(schema.oneOf) ? schema.oneOf : []), ...(Array.isArray(schema.anyOf) ? schema.anyOf : [])]) {
    if (isJson(alt)) for (const t of typesOf(alt)) types.add(t)
  }
  if (Array.isArray(schema.enum)) for (const v of schema.enum) types.add(v === null ? 'null' : typeof v === 'number' ? 'number' : typeof v)
  return types
}

/** A query or form value as CONTRACT §1 reads it: booleans `true/false/1/0`, integers, numbers. */
function decodeScalar(value: string, schema: Json, form: boolean): unknown {
  const types = typesOf(schema)
  if (form && value === '' && types.has('null')) return null
  if (types.has('integer') && /^-?\d+$/.test(value)) return Number(value)
  if (types.has('number') && /^-?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?$/.test(value)) return Number(value)
  if (types.has('boolean')) {
    if (value === 'true' || value === '1') return true
    if (value === 'false' || value === '0') return false
  }
  return value
}

/**
 * Pairs decoded against `properties`: the three array forms, scalars once. Unknown names are ignored
 * in a query and kept (as strings, to be refused) in a body.
 */
function decodePairs(pairs: Array<[string, string]>, properties: Json, form: boolean): Json {
  const grouped = new Map<string, { values: string[]; bracket: boolean }>()
  const out: Json = {}
  // PHP's nested names (`a[0]`, `venue[city]`, `organizer[0][organizer]`) of known fields, by base name.
  const nested = new Map<string, Json>()
  for (const [raw, value] of pairs) {
    // Deeper than any field nests, a name keeps one level more than they take (so its field refuses it), as the server reads it.
    const php = /^([^[\]]+)((?:\[[^[\]]*\])+)$/.exec(raw)
    if (php?.[1] !== undefined && php[2] !== undefined && php[2] !== '[]' && Object.hasOwn(properties, php[1])) {
      const root = nested.get(php[1]) ?? {}
      nested.set(php[1], root)
      const path = php[2].slice(1, -1).split('][').slice(0, 4)
      let node = root
      for (const [i, segment] of path.entries()) {
        const key = segment === '' ? String(Object.keys(node).length) : segment
        if (i === path.length - 1) {
          const before = node[key]
          Object.defineProperty(node, key, { value: typeof before === 'string' ? [before, value] : Array.isArray(before) ? [...before, value] : value, enumerable: true, writable: true, configurable: true })
        } else {
          const child = node[key]
          const next: Json = isJson(child) ? child : {}
          Object.defineProperty(node, key, { value: next, enumerable: true, writable: true, configurable: true })
          node = next
        }
      }
      if (!grouped.has(php[1])) grouped.set(php[1], { values: [], bracket: true })
      continue
    }
    const bracket = raw.endsWith('[]')
    const name = bracket && Object.hasOwn(properties, raw.slice(0, -2)) ? raw.slice(0, -2) : raw
    if (!Object.hasOwn(properties, name)) {
      // Defined, not assigned: `__proto__` is a field name like any other here.
      if (form) Object.defineProperty(out, raw, { value, enumerable: true, writable: true, configurable: true })
      continue
    }
    const entry = grouped.get(name) ?? { values: [], bracket: false }
    entry.values.push(value)
    entry.bracket ||= bracket
    grouped.set(name, entry)
  }
  for (const [name, { values, bracket }] of grouped) {
    const schema = isJson(properties[name]) ? properties[name] : {}
    const tree = nested.get(name)
    if (tree !== undefined) {
      const value = phpValue(tree)
      const all = values.length === 0 ? value : [...values, ...(Array.isArray(value) ? value : [value])]
      out[name] = decodeNested(all, schema, form)
    } else if (typesOf(schema).has('array')) {
      const items = itemsOf(schema)
      out[name] = values.flatMap((v) => v.split(',')).map((v) => v.trim()).filter((v) => v !== '').map((v) => decodeScalar(v, items, form))
    } else if (values.length === 1 && !bracket) {
      out[name] = decodeScalar(values[0] ?? '', schema, form)
    } else {
      out[name] = values
    }
  }
  return out
}

/** A nested name's value: a list in index order when every key is an index, else an object. */
function phpValue(node: Json): unknown {
  const keys = Object.keys(node)
  const each = (value: unknown): unknown => (isJson(value) ? phpValue(value) : value)
  if (keys.length > 0 && keys.every((k) => /^\d+$/.test(k))) return keys.sort((a, b) => Number(BigInt(a) - BigInt(b))).map((k) => each(node[k]))
  const out: Json = {}
  for (const k of keys) Object.defineProperty(out, k, { value: each(node[k]), enumerable: true, writable: true, configurable: true })
  return out
}

/** A nested value's text decoded as its schema reads it: lists through their items, objects through their fields. */
function decodeNested(value: unknown, schema: Json, form: boolean): unknown {
  if (typeof value === 'string') {
    if (!typesOf(schema).has('array')) return decodeScalar(value, schema, form)
    return value.split(',').map((v) => v.trim()).filter((v) => v !== '').map((v) => decodeScalar(v, itemsOf(schema), form))
  }
  if (Array.isArray(value)) {
    if (!typesOf(schema).has('array')) return value
    return value.flatMap((v) => (typeof v === 'string' ? v.split(',').map((x) => x.trim()).filter((x) => x !== '') : [v])).map((v) => decodeNested(v, itemsOf(schema), form))
  }
  if (isJson(value)) {
    const fields = fieldsOfObjects(schema)
    for (const [k, v] of Object.entries(value)) {
      const field = Object.hasOwn(fields, k) ? fields[k] : undefined
      if (isJson(field)) Object.defineProperty(value, k, { value: decodeNested(v, field, form), enumerable: true, writable: true, configurable: true })
    }
  }
  return value
}

/** The items of a list schema, through `oneOf`/`anyOf` (`venue`: a list, or one entry alone). */
function itemsOf(schema: Json): Json {
  if (isJson(schema.items)) return schema.items
  for (const alt of [...(Array.isArray(schema.oneOf) ? schema.oneOf : []), ...(Array.isArray(schema.anyOf) ? schema.anyOf : [])]) {
    if (isJson(alt) && (isJson(alt.items) || Array.isArray(alt.anyOf) || Array.isArray(alt.oneOf))) {
      const items = itemsOf(alt)
      if (Object.keys(items).length > 0) return items
    }
  }
  return {}
}

/** The fields of every object alternative of a schema. */
function fieldsOfObjects(schema: Json): Json {
  const out: Json = { ...(isJson(schema.properties) ? schema.properties : {}) }
  for (const alt of [...(Array.isArray(schema.oneOf) ? schema.oneOf : []), ...(Array.isArray(schema.anyOf) ? schema.anyOf : [])]) {
    if (isJson(alt)) for (const [k, v] of Object.entries(fieldsOfObjects(alt))) if (!(k in out)) out[k] = v
  }
  return out
}

/** What a request is, for the contract, before the server sees it. */
export interface Classified {
  operation: Operation
  /** 401/403 expected from the key and role alone. */
  auth?: 401 | 403
  /** The path does not name a route (a non-digit id, a too-long segment): 404 `rest_no_route`. */
  noRoute: boolean
  /** Body problems before validation: 415 or 400 `rest_invalid_json`. */
  media?: 415 | 'invalid-json'
  /** Fields of the request the schema refuses (empty when it accepts the request). */
  invalid: string[]
  /** The decoded request, by field name (for the contract rules). */
  values: Map<string, unknown[]>
}

const MAX_PARAM_LENGTH = 2048

export function classify(request: WireRequest): Classified {
  const op = OPERATIONS.find((o) => o.id === request.op)
  if (op === undefined) throw new Error(`unknown operation ${request.op}`)
  const values = new Map<string, unknown[]>()
  const remember = (name: string, value: unknown) => values.set(name, [...(values.get(name) ?? []), value])
  const result: Classified = { operation: op, noRoute: false, invalid: [], values }

  if (op.scopes !== undefined) {
    if (request.caller === 'anonymous' || request.caller === 'unknown-key') result.auth = 401
    else if (!op.scopes.includes(request.caller)) result.auth = 403
  }

  const url = new URL(request.url, 'http://x')
  // Path parameters: `{id}` is digits only (else no route); a segment over the router's limit is no route.
  const template = `${PREFIX}${op.path === '/' ? '' : op.path}`.split('/')
  // Segments as sent (a URL would resolve `.` and `..`, as the server does: those name no slug).
  const segments = (request.url.split('?')[0] ?? '').replace(/(.)\/$/, '$1').split('/')
  const pathValues: Json = {}
  template.forEach((part, i) => {
    const m = /^\{(\w+)\}$/.exec(part)
    const raw = segments[i]
    if (m === null) return
    // An empty last segment (`…/occurrences/`, its slash dropped as the router drops it) names no route either.
    if (raw === undefined) {
      result.noRoute = true
      return
    }
    const name = m[1] ?? ''
    if (raw.length > MAX_PARAM_LENGTH || raw === '' || raw === '.' || raw === '..') result.noRoute = true
    const text = decodeURIComponent(raw)
    if (name === 'id') {
      if (!/^\d+$/.test(text)) result.noRoute = true
      pathValues[name] = Number(text)
    } else {
      pathValues[name] = text
    }
    remember(name, pathValues[name])
  })
  const pathParams = op.params.filter((p) => p.in === 'path')
  const pathSchema = { type: 'object', properties: Object.fromEntries(pathParams.map((p) => [p.name, p.schema])), required: pathParams.map((p) => p.name) }
  if (!validator(`${op.id} path`, pathSchema)(pathValues)) result.invalid.push('path')

  const queryParams = op.params.filter((p) => p.in === 'query')
  const queryProperties = Object.fromEntries(queryParams.map((p) => [p.name, p.schema]))
  const query = decodePairs([...url.searchParams], queryProperties, false)
  for (const [name, value] of Object.entries(query)) remember(name, value)
  const querySchema = { type: 'object', properties: queryProperties, required: queryParams.filter((p) => p.required).map((p) => p.name) }
  const checkQuery = validator(`${op.id} query`, querySchema)
  if (!checkQuery(query)) result.invalid.push(...fieldsOf(checkQuery.errors, 'query'))
  for (const p of op.params.filter((p) => p.in === 'header')) {
    const value = request.headers[p.name.toLowerCase()]
    if (value !== undefined && !validator(`${op.id} header ${p.name}`, p.schema)(value)) result.invalid.push(p.name)
  }

  if (op.body !== undefined) {
    const type = (request.headers['content-type'] ?? '').split(';')[0]?.trim().toLowerCase() ?? ''
    const payload = request.payload ?? ''
    let body: unknown
    if (payload === '' && type !== 'application/x-www-form-urlencoded') body = {}
    else if (type === 'application/json') {
      if (payload.trim() === '') body = {}
      else {
        try {
          body = JSON.parse(payload)
        } catch {
          result.media = 'invalid-json'
        }
        // Strings that are not Unicode text (a lone `\ud800`) are malformed JSON. `__proto__` and
        // `constructor` keys are plain fields, which validation refuses by name (issue 21, item 17).
        if (notText(body)) result.media = 'invalid-json'
      }
    } else if (type === 'application/x-www-form-urlencoded') {
      body = decodePairs([...new URLSearchParams(payload)], isJson(op.body.schema.properties) ? op.body.schema.properties : {}, true)
    } else {
      result.media = 415
    }
    if (result.media === undefined) {
      collectValues(body, remember)
      const checkBody = validator(`${op.id} body`, op.body.schema)
      if (!checkBody(body)) result.invalid.push(...fieldsOf(checkBody.errors, 'body'))
    }
  }
  return result
}

const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/

/** A string or key anywhere that holds a lone surrogate (no UTF-8 form). */
function notText(value: unknown): boolean {
  if (typeof value === 'string') return LONE_SURROGATE.test(value)
  if (Array.isArray(value)) return value.some(notText)
  return isJson(value) && Object.entries(value).some(([k, v]) => LONE_SURROGATE.test(k) || notText(v))
}

/** A `__proto__` key, or a `constructor` object with a `prototype` key, anywhere (secure-json-parse refuses both). */
function fieldsOf(errors: ReadonlyArray<{ instancePath: string; params: Record<string, unknown> }> | null | undefined, where: string): string[] {
  const first = errors?.[0]
  if (first === undefined) return [where]
  const segment = first.instancePath.split('/')[1]
  const extra = first.params.missingProperty ?? first.params.additionalProperty
  return [segment ?? (typeof extra === 'string' ? extra : where)]
}

/** Every value under each field name, also inside inline venues and organizers. */
function collectValues(body: unknown, remember: (name: string, value: unknown) => void): void {
  if (!isJson(body)) return
  for (const [name, value] of Object.entries(body)) {
    remember(name, value)
    if (Array.isArray(value)) for (const item of value) collectValues(item, remember)
    // A single inline venue or organizer where the list is expected (CONTRACT §5).
    else if (isJson(value)) collectValues(value, remember)
  }
}

// ---------------------------------------------------------------------------------------------------
// Contract rules the schema cannot express: a schema-valid request may be refused (400) for these

export interface ContractRule {
  name: string
  /** Where CONTRACT.md says so. */
  contract: string
  /** Error codes the refusal may carry. */
  codes: readonly string[]
  /** Fields the refusal may name (data.params); any field when absent. */
  fields?: readonly string[]
  /** Whether the rule can apply to these values of the field (false: the refusal is a bug). */
  applies?: (values: unknown[]) => boolean
}

const surelyValidDate = (v: unknown) => typeof v === 'string' && (
  /^(19|20)\d\d-(0[1-9]|1[0-2])-(0[1-9]|1\d|2[0-8]) ([01]\d|2[0-3]):[0-5]\d(:[0-5]\d)?$/.test(v) ||
  /^(19|20)\d\d-(0[1-9]|1[0-2])-(0[1-9]|1\d|2[0-8])T([01]\d|2[0-3]):[0-5]\d(:[0-5]\d)?(Z|[+-](0\d|1[0-3]):[0-5]\d)$/.test(v))
const KNOWN_ZONES = new Set(['UTC', 'Europe/Berlin', 'Europe/Vienna', 'Europe/Zurich', 'America/New_York', 'Asia/Kolkata', 'Pacific/Kiritimati', 'UTC+5:30', 'UTC-12', 'UTC+14', 'UTC+0', ''])
const surelyHttpUrl = (v: unknown) => typeof v === 'string' && /^https?:\/\/[a-z0-9]([a-z0-9-]*[a-z0-9])?(\.[a-z0-9]([a-z0-9-]*[a-z0-9])?)*(:\d{1,5})?(\/[^\s]*)?$/i.test(v)

/**
 * The documented exceptions to "a schema-valid request is accepted": each is a rule of CONTRACT.md that
 * depends on other fields, on the stored data, on the configuration or on the caller, or that is
 * stricter than the schema's type (dates and time zones are plain strings in the schema).
 */
export const CONTRACT_RULES: readonly ContractRule[] = [
  {
    name: 'webhook URLs whose host is, or resolves to, no public address (or does not resolve at all)',
    contract: '§13', codes: ['rest_invalid_param'], fields: ['url'],
    applies: (values) => values.some((v) => /^https?:/i.test(String(v))),
  },
  { name: 'end before start (on the merged record)', contract: '§5', codes: ['rest_invalid_param'], fields: ['end_date'] },
  {
    name: 'a recurrence the contract refuses (the RRULE subset, the forms of rdates and exdates, the limits of a series): the schema types the rule and the dates as strings',
    contract: '§17', codes: ['rest_invalid_param'], fields: ['recurrence'],
  },
  { name: 'date and date_utc sent together that name different instants', contract: '§5', codes: ['rest_invalid_param'], fields: ['date_utc'] },
  {
    name: 'dates the schema types as strings but the contract does not parse (or that leave years 0001–9999 in a time zone)',
    contract: '§4, §5', codes: ['rest_invalid_param'],
    fields: ['start_date', 'end_date', 'date', 'date_utc', 'starts_before', 'starts_after', 'ends_before', 'ends_after', 'modified_after', 'modified_before'],
    applies: (values) => values.some((v) => !surelyValidDate(v)),
  },
  {
    name: 'strings holding U+0000, which PostgreSQL cannot store (refused on every engine)', contract: '§15', codes: ['rest_invalid_param'],
    applies: (values) => values.some((v) => JSON.stringify(v ?? null).includes('\\u0000')),
  },
  { name: 'cursors that no earlier answer gave (or from beyond the log)', contract: '§12', codes: ['rest_invalid_param', 'rest-changes-cursor-expired'], fields: ['since'], applies: (values) => values.some((v) => v !== 'now') },
  { name: 'time zone names that are not real zones', contract: '§2', codes: ['rest_invalid_param'], fields: ['timezone'], applies: (values) => values.some((v) => typeof v === 'string' && !KNOWN_ZONES.has(v)) },
  { name: 'URLs that are not absolute http(s) (format: uri also admits ftp:, urn:, mailto:)', contract: '§2 image, §5 website', codes: ['rest_invalid_param'], fields: ['website'], applies: (values) => values.some((v) => typeof v === 'string' && !surelyHttpUrl(v)) },
  {
    name: 'unknown referenced ids, slugs and names', contract: '§4, §5, §7, §10', codes: ['rest_invalid_param'],
    fields: ['categories', 'tags', 'venue', 'organizer', 'translation_of', 'post_parent', 'parent', 'event', 'post'],
  },
  // Users 1–5 exist in every fuzzed database (and no request creates or deletes one).
  { name: 'unknown authors', contract: '§6', codes: ['rest_invalid_param'], fields: ['author'], applies: (values) => values.some((v) => !(typeof v === 'number' && v >= 1 && v <= ROLES.length)) },
  // Image 1 exists in every fuzzed database (the seeded event's); images are never deleted.
  { name: 'unknown image ids', contract: '§2 image', codes: ['rest_invalid_param'], fields: ['image'], applies: (values) => values.some((v) => v !== 1 && v !== '1' && v !== null && !surelyHttpUrl(v)) },
  { name: 'term names unique per resource, language and parent', contract: '§5', codes: ['term_exists'], fields: ['name'] },
  { name: 'geolocation while the extension is off', contract: '§8', codes: ['geoloc-extension-inactive'], fields: ['geoloc', 'geoloc_lat', 'geoloc_lng', 'geo_lat', 'geo_lng'] },
  { name: 'coordinates come in pairs', contract: '§8', codes: ['rest_invalid_param'], fields: ['geoloc_lat', 'geoloc_lng', 'geo_lat', 'geo_lng'] },
  { name: 'ticketed=true without a ticketing module', contract: '§4', codes: ['event-tickets-not-active'], fields: ['ticketed'] },
  { name: 'list status not allowed for the caller', contract: '§6', codes: ['rest_invalid_param'], fields: ['status'] },
  // The RRULE subset, its limits and the forms of rdates and exdates are checked by the server only (CONTRACT §17).
  { name: 'recurrence rules, dates and limits the contract refuses', contract: '§17', codes: ['rest_invalid_param'], fields: ['recurrence'] },
  { name: 'a split at the first occurrence, or a change of a single event\'s only occurrence', contract: '§17', codes: ['rest_invalid_param'], fields: ['occurrence'] },
]

interface ErrorBody {
  code?: unknown
  data?: { params?: unknown; details?: unknown }
}

/** Why a 400 for a schema-valid request is allowed, or undefined when it is not. */
export function allowedRefusal(classified: Classified, body: ErrorBody): string | undefined {
  const details = Array.isArray(body.data?.details) ? body.data.details : []
  // The server's schema validation refused what the spec's schema accepts: never allowed.
  if (details.some((d) => isJson(d) && 'keyword' in d)) return undefined
  const params = body.data?.params
  const fields = isJson(params) ? Object.keys(params) : Array.isArray(params) ? params.map(String) : []
  if (fields.length === 0) return undefined
  const names: string[] = []
  for (const field of fields) {
    const rule = CONTRACT_RULES.find((r) => r.codes.includes(String(body.code)) && (r.fields === undefined || r.fields.includes(field)) &&
      (r.applies === undefined || r.applies(classified.values.get(field) ?? [])))
    if (rule === undefined) return undefined
    names.push(rule.name)
  }
  return names.join('; ')
}

// ---------------------------------------------------------------------------------------------------
// The server under test: one app per configuration over a database reset before every run

export interface FuzzConfig {
  name: string
  config: Partial<Config>
}

export const CONFIGS: readonly FuzzConfig[] = [
  { name: 'default', config: {} },
  { name: 'geoloc, New York', config: { extensions: new Set(['geoloc'] as const), timezone: 'America/New_York' } },
]

interface Instance {
  app: FastifyInstance
  handle: DatabaseHandle & { sqlite: SQLite.Database }
  keys: Record<Role, string>
  tables: string[]
  reset(): Promise<void>
  hash(): string
}

export interface Target {
  instances: Instance[]
  seeds: Seeds
  stats: FuzzStats
  close(): Promise<void>
}

export interface FuzzStats {
  requests: number
  runs: number
  byStatus: Record<string, number>
  byOperation: Record<string, number>
  refusals: Record<string, number>
}

const compilers = createCompilers()

async function createInstance(fuzzConfig: FuzzConfig): Promise<Instance> {
  // Thousands of bad keys from one address: the failure throttle (throttling.test.ts) would answer 429 to them.
  const config = defaultConfig({ publicUrl: BASE_URL, authFailureLimit: 0, ...fuzzConfig.config })
  // The fuzzer snapshots and restores SQLite's tables between runs (ATTACH): it runs on SQLite.
  const handle = await openSqlite(':memory:')
  const app = await buildApp({ db: handle.db, config, now: () => NOW, spec: SPEC, compilers })
  await app.ready()
  const keys = {} as Record<Role, string>
  for (const role of ROLES) {
    keys[role] = generateKey()
    await withTransaction(handle.db, (trx) => createUserWithKey(trx, role, keys[role], '2026-01-01 00:00:00'))
  }
  await seed(app, keys, config)
  const sqlite = handle.sqlite
  // Ordinary and virtual tables (the search index's FTS5 table, whose own shadow tables follow it and are
  // never written directly), without the migration history and SQLite's own.
  const listed = sqlite.prepare("SELECT name, type FROM pragma_table_list WHERE schema = 'main' AND type IN ('table', 'virtual') AND name NOT LIKE 'kysely_%' AND name NOT LIKE 'sqlite_%' AND name NOT IN ('data_epoch', 'key_epoch') ORDER BY name").all() as Array<{ name: string; type: string }>
  const tables = listed.map((t) => t.name)
  const virtual = new Set(listed.filter((t) => t.type === 'virtual').map((t) => t.name))
  // Kept in step with `events` by triggers (migration 0017): emptied, then filled again by the events' restore.
  const derived = new Set(['event_occurrences'])
  // A snapshot of the seeded data in an attached database; every run starts from a copy of it. The data
  // epoch is not restored, nor the key epoch: the restore's writes move them on, as any write outside the log does. A virtual
  // table's rowid is no column of `*`: it is copied by name.
  const columns = (t: string) => (virtual.has(t) ? `rowid AS rowid_, *` : '*')
  sqlite.exec("ATTACH DATABASE ':memory:' AS snap")
  for (const t of tables) if (!derived.has(t)) sqlite.exec(`CREATE TABLE snap."copy_${t}" AS SELECT ${columns(t)} FROM main."${t}"`)
  const restore = sqlite.transaction(() => {
    for (const t of tables) {
      sqlite.prepare(`DELETE FROM main."${t}"`).run()
      if (derived.has(t)) continue
      if (!virtual.has(t)) {
        sqlite.prepare(`INSERT INTO main."${t}" SELECT * FROM snap."copy_${t}"`).run()
        continue
      }
      const names = (sqlite.prepare(`SELECT name FROM pragma_table_info('${t}')`).pluck().all() as string[]).map((n) => `"${n}"`)
      sqlite.prepare(`INSERT INTO main."${t}" (rowid, ${names.join(', ')}) SELECT rowid_, ${names.join(', ')} FROM snap."copy_${t}"`).run()
    }
  })
  // The data, not what reads store of it: an event's stored document (migration 0009) is written by the
  // anonymous read that assembled it, and deleted by the writes that change it.
  // A table without rowid (event_occurrences) in the order of its key.
  const order = (t: string) => (derived.has(t) ? 'event_id, occurrence' : 'rowid')
  const selects = tables.filter((t) => t !== 'event_documents')
    .map((t) => [t, sqlite.prepare(`SELECT ${columns(t)} FROM main."${t}" ORDER BY ${order(t)}`).raw()] as const)
  // Rows change only through INSERT, UPDATE and DELETE, which total_changes() counts: hash again only then.
  const changes = sqlite.prepare('SELECT total_changes()').pluck()
  let cached = { changes: -1, hash: '' }
  return {
    app, handle, keys, tables,
    async reset() {
      sqlite.pragma('foreign_keys = OFF')
      restore()
      sqlite.pragma('foreign_keys = ON')
      // The app remembers list totals until a write passes through it (or another connection commits);
      // this reset went round it on its own connection, so a write-method request tells it.
      await app.inject({ method: 'POST', url: `${PREFIX}/fuzz-reset` })
    },
    hash() {
      const now = Number(changes.get())
      if (now === cached.changes) return cached.hash
      const h = createHash('sha1')
      for (const [t, select] of selects) h.update(`${t}\u0000${JSON.stringify(select.all())}\u0000`)
      cached = { changes: now, hash: h.digest('hex') }
      return cached.hash
    },
  }
}

/** The seeded records, created through the API (so the seed itself follows the contract). */
async function seed(app: FastifyInstance, keys: Record<Role, string>, config: Config): Promise<void> {
  const send = async (method: string, path: string, body: Json | undefined, role: Role = 'editor') => {
    const res = await app.inject({
      method, url: `${PREFIX}${path}`, headers: { authorization: `Bearer ${keys[role]}`, 'content-type': 'application/json' },
      ...(body !== undefined ? { payload: JSON.stringify(body) } : {}),
    })
    if (res.statusCode >= 300) throw new Error(`seeding ${method} ${path} failed: ${res.statusCode} ${res.body}`)
  }
  const geo = config.extensions.has('geoloc')
  await send('POST', '/categories', { name: 'Music', description: 'All kinds of music' }) // 1
  await send('POST', '/categories', { name: 'Jazz', parent: 1 }) // 2
  await send('POST', '/categories', { name: 'Sports' }) // 3
  await send('POST', '/tags', { name: 'Outdoor' }) // 4
  await send('POST', '/tags', { name: 'Free Entry' }) // 5
  await send('POST', '/tags', { name: '100% fun_stuff' }) // 6
  await send('POST', '/categories', { name: 'Musik', translation_of: 1, ml_language: 'de' }) // 7
  await send('POST', '/venues', { venue: 'Main Hall', address: 'Ring 1', city: 'Vienna', country: 'Austria', zip: '1010', website: 'https://hall.example', ...(geo ? { geo_lat: 48.2, geo_lng: 16.37 } : {}) }) // 1
  await send('POST', '/venues', { venue: 'Riverside Park', city: 'Zurich' }) // 2
  await send('POST', '/venues', { venue: 'Old Barn', status: 'draft' }, 'author') // 3
  await send('POST', '/venues', { venue: 'Closed Venue' }) // 4
  await send('DELETE', '/venues/4', undefined)
  await send('POST', '/organizers', { organizer: 'City Council', email: 'council@example.org', phone: '+43 1 234' }) // 1
  await send('POST', '/organizers', { organizer: 'Jazz Club', website: 'http://jazz.example' }) // 2
  await send('POST', '/organizers', { organizer: 'Ghost Org' }) // 3
  await send('DELETE', '/organizers/3', undefined)
  await send('POST', '/events', {
    title: 'Summer Concert', description: 'Open air concert', start_date: '2026-07-01 18:00:00', end_date: '2026-07-01 21:00:00',
    categories: [1], tags: ['outdoor'], venue: [1], organizer: [1], image: 'https://img.example/summer.png', cost: '$10 - $20',
  }) // 1
  await send('POST', '/events', {
    title: 'Jazz Night', start_date: '2026-06-20T20:00:00+02:00', end_date: '2026-06-20T23:00:00+02:00', timezone: 'Europe/Vienna',
    categories: ['jazz'], tags: [5, 6], venue: [2], organizer: [2], featured: true,
  }) // 2
  await send('POST', '/events', { title: 'Secret Gala', start_date: '2026-08-01 19:00', end_date: '2026-08-01 23:00' }) // 3
  await send('PATCH', '/events/3', { password: 'secret' })
  await send('POST', '/events', { title: 'Hidden Event', start_date: '2026-06-16', end_date: '2026-06-16', all_day: true, hide_from_listings: true }) // 4
  await send('POST', '/events', { title: 'Draft idea', start_date: '2026-09-01 10:00', end_date: '2026-09-01 11:00' }, 'contributor') // 5
  await send('POST', '/events', { title: 'Old Event', start_date: '2026-06-01 10:00', end_date: '2026-06-01 11:00' }) // 6
  await send('DELETE', '/events/6', undefined)
  await send('POST', '/events', { title: 'Sommerkonzert', start_date: '2026-07-01 18:00:00', end_date: '2026-07-01 21:00:00', translation_of: 1, ml_language: 'de', categories: [7] }) // 7
  await send('POST', '/events', { title: 'Private party', status: 'private', start_date: '2026-06-18 20:00', end_date: '2026-06-19 02:00', venue: [{ venue: 'Inline Loft', city: 'Graz' }] }, 'author') // 8
}

async function readSeeds(instance: Instance): Promise<Seeds> {
  const sqlite = instance.handle.sqlite
  const col = (sql: string) => sqlite.prepare(sql).pluck().all().map(String)
  const maxId = Math.max(...['events', 'venues', 'organizers', 'terms'].map((t) => Number(sqlite.prepare(`SELECT max(id) FROM ${t}`).pluck().get() ?? 0)))
  const ids = (sql: string) => sqlite.prepare(sql).pluck().all().map(Number)
  return {
    slugs: { events: col('SELECT slug FROM events'), venues: col('SELECT slug FROM venues'), organizers: col('SELECT slug FROM organizers') },
    ids: {
      events: ids('SELECT id FROM events'), venues: ids('SELECT id FROM venues'), organizers: ids('SELECT id FROM organizers'),
      categories: ids("SELECT id FROM terms WHERE taxonomy = 'category'"), tags: ids("SELECT id FROM terms WHERE taxonomy = 'tag'"),
    },
    termNames: col('SELECT name FROM terms'),
    termSlugs: col('SELECT slug FROM terms'),
    maxId,
  }
}

export async function createTarget(): Promise<Target> {
  const instances: Instance[] = []
  for (const c of CONFIGS) instances.push(await createInstance(c))
  const first = instances[0]
  if (first === undefined) throw new Error('no configuration')
  return {
    instances,
    seeds: await readSeeds(first),
    stats: { requests: 0, runs: 0, byStatus: {}, byOperation: {}, refusals: {} },
    async close() {
      for (const i of instances) {
        await i.app.close()
        await i.handle.close()
      }
    },
  }
}

// ---------------------------------------------------------------------------------------------------
// Sending and judging

function headersFor(instance: Instance, request: WireRequest): Record<string, string> {
  const headers = { ...request.headers }
  if (request.caller === 'unknown-key') headers.authorization = 'Bearer cal_unknownkeyunknownkeyunknownkeyunknownkey00'
  else if (request.caller !== 'anonymous') headers.authorization = `Bearer ${instance.keys[request.caller]}`
  return headers
}

/** Sends one request and returns what is wrong with its answer (empty when nothing is). */
export async function judge(target: Target, instance: Instance, request: WireRequest): Promise<string[]> {
  const classified = classify(request)
  const before = instance.hash()
  const res = await instance.app.inject({
    method: request.method as 'GET', url: request.url, headers: headersFor(instance, request),
    ...(request.payload !== undefined ? { payload: request.payload } : {}),
  })
  target.stats.requests += 1
  target.stats.byStatus[res.statusCode] = (target.stats.byStatus[res.statusCode] ?? 0) + 1
  target.stats.byOperation[request.op] = (target.stats.byOperation[request.op] ?? 0) + 1
  const problems: string[] = []
  const status = res.statusCode
  if (status >= 500) problems.push(`server error ${status}`)
  problems.push(...contractProblems(request.method, request.url, res))
  let json: Json = {}
  try {
    const parsed: unknown = JSON.parse(res.body)
    if (isJson(parsed)) json = parsed
  } catch {
    // 304 and YAML have no JSON body
  }
  const body: ErrorBody = json
  const code = String(body.code ?? '')
  for (const key of Object.values(instance.keys)) {
    if (res.body.includes(key) || JSON.stringify(res.headers).includes(key)) problems.push('the answer shows an API key')
  }

  const expected = (statuses: number[], why: string, codes?: string[]) => {
    if (!statuses.includes(status) || (codes !== undefined && !codes.includes(code))) {
      problems.push(`expected ${statuses.join('/')}${codes !== undefined ? ` ${codes.join('/')}` : ''} (${why}), got ${status} ${code}`)
    }
  }
  if (classified.noRoute) expected([404], 'no route: the id is not digits', ['rest_no_route'])
  else if (classified.auth === 401) expected([401], 'a write without a known key', ['rest_forbidden'])
  else if (classified.auth === 403) expected([403], 'a role outside the scopes of the operation', ['rest_forbidden'])
  else if (classified.media === 415) expected([415], 'a body that is neither JSON nor a form', ['rest_unsupported_media_type'])
  else if (classified.media === 'invalid-json') expected([400], 'malformed JSON', ['rest_invalid_json'])
  else if (classified.invalid.length > 0) expected([400], `the schema refuses ${classified.invalid.join(', ')}`, ['rest_invalid_param', 'rest_missing_callback_param'])
  else if (status === 400) {
    const why = allowedRefusal(classified, body)
    if (why === undefined) problems.push(`a request the schema accepts was refused: ${res.body.slice(0, 400)}`)
    else target.stats.refusals[why] = (target.stats.refusals[why] ?? 0) + 1
  } else if (status === 404 && code === 'rest_no_route') {
    problems.push('a request to a route of the spec was answered rest_no_route')
  }

  // The change feed pages by cursor (CONTRACT §12), not by page and total (§3); a calendar feed (§14,
  // text/calendar, checked against the spec above) has no pages.
  const calendar = String(res.headers['content-type'] ?? '').startsWith('text/calendar')
  if (status === 200 && request.op.startsWith('list') && request.op !== 'listChanges' && !calendar) problems.push(...pageProblems(res.headers, json))

  if ((request.method === 'GET' || status >= 300) && instance.hash() !== before) {
    problems.push(`the data changed although the request ${request.method === 'GET' ? 'only read' : `failed (${status})`}`)
  }
  // A replay (CONTRACT §18) is the first answer as it was given: the record may have changed since.
  const replayed = res.headers['idempotent-replayed'] === 'true'
  if (status >= 200 && status < 300 && request.method !== 'GET' && request.method !== 'DELETE' && problems.length === 0 && !replayed) {
    problems.push(...echoProblems(request, json))
    problems.push(...await readBackProblems(target, instance, request, res.headers, json))
  }
  if (problems.length > 0) problems.push(`answer: ${status} ${res.body.slice(0, 600)}`)
  return problems
}

/** Text fields a record returns exactly as written (CONTRACT §2), `""` as null. */
const ECHOED = ['title', 'description', 'excerpt', 'venue', 'organizer', 'name', 'address', 'city', 'country', 'province', 'state', 'zip', 'phone', 'stateprovince', 'website', 'email']

/** A successful write's record shows the text fields of a JSON body exactly as sent. */
function echoProblems(request: WireRequest, record: Json): string[] {
  if (!(request.headers['content-type'] ?? '').toLowerCase().startsWith('application/json') || request.payload === undefined || request.payload.trim() === '') return []
  const sent: unknown = JSON.parse(request.payload)
  if (!isJson(sent)) return []
  const problems: string[] = []
  for (const field of ECHOED) {
    const value = sent[field]
    if (typeof value !== 'string' || !(field in record)) continue
    const expected = value === '' ? null : value
    if (record[field] !== expected) problems.push(`${field} written as ${JSON.stringify(value).slice(0, 80)} came back as ${JSON.stringify(record[field]).slice(0, 80)}`)
  }
  return problems
}

/**
 * After a successful create or update, the record reads back the same by its `rest_url` (CONTRACT §5),
 * with the same ETag; only `json_ld` is added on reads by id.
 */
async function readBackProblems(target: Target, instance: Instance, request: WireRequest, headers: Record<string, unknown>, record: Json): Promise<string[]> {
  if (typeof record.rest_url !== 'string' || typeof record.id !== 'number') return []
  const url = new URL(record.rest_url).pathname
  const res = await instance.app.inject({ method: 'GET', url, headers: headersFor(instance, { ...request, headers: {} }) })
  target.stats.requests += 1
  if (res.statusCode !== 200) return [`reading the written record back (GET ${url}) answered ${res.statusCode} ${res.body.slice(0, 200)}`]
  const problems = contractProblems('GET', url, res)
  const read = JSON.parse(res.body) as Json
  delete read.json_ld
  if (JSON.stringify(read) !== JSON.stringify(record)) problems.push(`GET ${url} differs from the write's answer: ${JSON.stringify(read).slice(0, 300)}`)
  if (res.headers.etag !== headers.etag) problems.push(`GET ${url} has ETag ${String(res.headers.etag)}, the write answered ${String(headers.etag)}`)
  return problems
}

/**
 * A list page agrees with itself (CONTRACT §3): the headers repeat `total` and `total_pages`, which is
 * ⌈total / per_page⌉, and the page holds per_page records before the last page and the rest on it.
 */
function pageProblems(headers: Record<string, unknown>, body: Json): string[] {
  const records = Object.values(body).find(Array.isArray)
  const total = body.total
  const pages = body.total_pages
  const url = typeof body.rest_url === 'string' ? new URL(body.rest_url) : undefined
  const page = Number(url?.searchParams.get('page'))
  const perPage = Number(url?.searchParams.get('per_page'))
  if (records === undefined || typeof total !== 'number' || typeof pages !== 'number' || !(page >= 1) || !(perPage >= 1)) return ['a list answer without records, total, total_pages or page and per_page in rest_url']
  const problems: string[] = []
  if (String(headers['x-total']) !== String(total) || String(headers['x-total-pages']) !== String(pages)) problems.push(`X-Total ${String(headers['x-total'])}/X-Total-Pages ${String(headers['x-total-pages'])} differ from the body's ${total}/${pages}`)
  if (pages !== Math.ceil(total / perPage)) problems.push(`total_pages ${pages} is not ⌈${total} / ${perPage}⌉`)
  const expected = page < pages ? perPage : page === pages ? total - (page - 1) * perPage : 0
  if (records.length !== expected) problems.push(`page ${page} of ${pages} (per_page ${perPage}, total ${total}) holds ${records.length} records, not ${expected}`)
  if ((page < pages) !== (typeof body.next_rest_url === 'string')) problems.push('next_rest_url present exactly when a next page exists')
  if ((page > 1 && page - 1 <= pages) !== (typeof body.previous_rest_url === 'string')) problems.push('previous_rest_url present exactly when a previous page exists')
  return problems
}

/** A run: a fresh copy of the seeded database in one configuration, then a few requests in order. */
export function runArbitrary(seeds: Seeds, maxRequests = 8): fc.Arbitrary<{ config: number; requests: WireRequest[] }> {
  return fc.record({
    config: fc.constantFrom(...CONFIGS.map((_, i) => i)),
    requests: fc.array(requestArbitrary(seeds), { minLength: 1, maxLength: maxRequests }),
  })
}

export function fuzzProperty(target: Target, maxRequests?: number) {
  return fc.asyncProperty(runArbitrary(target.seeds, maxRequests), async ({ config, requests }) => {
    const instance = target.instances[config]
    if (instance === undefined) throw new Error(`no configuration ${config}`)
    await instance.reset()
    target.stats.runs += 1
    for (const [i, request] of requests.entries()) {
      const problems = await judge(target, instance, request)
      if (problems.length > 0) {
        throw new Error(`request ${i + 1} of ${requests.length} (${CONFIGS[config]?.name} configuration): ${request.method} ${request.url} as ${request.caller}` +
          `${request.payload !== undefined ? `\n  body (${request.headers['content-type'] ?? 'no content-type'}): ${request.payload.slice(0, 600)}` : ''}` +
          `${Object.keys(request.headers).length > 0 ? `\n  headers: ${JSON.stringify(request.headers).slice(0, 300)}` : ''}\n  - ${problems.join('\n  - ')}`)
      }
    }
  })
}

export interface FuzzOptions {
  seed: number
  numRuns: number
  path?: string
  maxRequests?: number
}

/** Runs the fuzzer; throws (fast-check's report: counterexample, seed, path) on the first failure. */
export async function runFuzz(options: FuzzOptions): Promise<FuzzStats & { ms: number }> {
  const started = performance.now()
  const target = await createTarget()
  try {
    await fc.assert(fuzzProperty(target, options.maxRequests), {
      seed: options.seed, numRuns: options.numRuns, ...(options.path !== undefined ? { path: options.path } : {}),
      includeErrorInReport: true,
    })
  } finally {
    await target.close()
  }
  return { ...target.stats, ms: performance.now() - started }
}
