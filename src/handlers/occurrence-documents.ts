/**
 * An anonymous read of one occurrence of a series (`GET /events/{id}/occurrences/{occurrence}`, CONTRACT §17)
 * answered from the series' stored document (handlers/event-documents.ts) as text, without the series' record:
 * for an occurrence with no override, its record is the series' with ten members changed (its dates, their
 * details, `timezone_abbr`, `occurrence`) and its JSON-LD's `startDate` and `endDate`, so its answer is the
 * document's JSON with those values put in (and its terms' current records, as a read of the series puts them).
 *
 * The ETag (http/etag.ts `occurrenceEtag`) is a digest of the occurrence record's `JSON.stringify`, whose keys
 * are in the order the assembly makes them (event-documents.ts `EVENT_KEYS`), where the document's are in the
 * contract's. That text is made from the document's member texts put in the assembled order, and it is used only
 * when the series' own text made so has the digest the document keeps (`eventDigest`: the record's
 * `JSON.stringify` with its terms left out), which proves it is the text the assembled record would give: a
 * member written otherwise by the document's serializer (an escape, a key order within a value) fails the proof,
 * and the read then reads the record back from the document or assembles it (handlers/event-occurrences.ts).
 */
import fastJsonStringify from 'fast-json-stringify'
import type { Category, Event, Tag } from '../contract.js'
import { occurrenceEtagOf, textDigest } from '../http/etag.js'
import { jsonLdDates } from '../lib/json-ld.js'
import { occurrenceRecord, type OccurrenceState } from '../lib/occurrence-view.js'
import type { EventDocument } from '../repositories/event-documents.js'
import type { AppContext } from './context.js'
import { EVENT_KEYS, ORGANIZER_KEYS, VENUE_KEYS } from './event-documents.js'

/** The members an occurrence without an override changes in its series' record (lib/occurrence-view.ts `occurrenceRecord`). */
export const OCCURRENCE_KEYS = ['start_date', 'start_date_details', 'end_date', 'end_date_details', 'utc_start_date', 'utc_start_date_details',
  'utc_end_date', 'utc_end_date_details', 'timezone_abbr', 'occurrence'] as const

type Span = [from: number, to: number]

const QUOTE = 34
const BACKSLASH = 92
const COLON = 58
const COMMA = 44
const OPEN_OBJECT = 123
const CLOSE_OBJECT = 125
const OPEN_ARRAY = 91
const CLOSE_ARRAY = 93

/** The offset after the JSON string opening at `at`, or -1. */
function afterString(text: string, at: number): number {
  let from = at + 1
  for (;;) {
    const quote = text.indexOf('"', from)
    if (quote < 0) return -1
    let escapes = 0
    while (text.charCodeAt(quote - 1 - escapes) === BACKSLASH) escapes++
    if (escapes % 2 === 0) return quote + 1
    from = quote + 1
  }
}

/** The offset after the JSON value starting at `at` in compact JSON (no whitespace), or -1. */
function afterValue(text: string, at: number): number {
  const first = text.charCodeAt(at)
  if (first === QUOTE) return afterString(text, at)
  if (first === OPEN_OBJECT || first === OPEN_ARRAY) {
    let depth = 0
    for (let i = at; i < text.length;) {
      const c = text.charCodeAt(i)
      if (c === QUOTE) {
        i = afterString(text, i)
        if (i < 0) return -1
        continue
      }
      if (c === OPEN_OBJECT || c === OPEN_ARRAY) depth++
      else if (c === CLOSE_OBJECT || c === CLOSE_ARRAY) {
        depth--
        if (depth === 0) return i + 1
      }
      i++
    }
    return -1
  }
  for (let i = at; i < text.length; i++) {
    const c = text.charCodeAt(i)
    if (c === COMMA || c === CLOSE_OBJECT || c === CLOSE_ARRAY) return i
  }
  return -1
}

/** The members of the compact JSON object in `text` at `span`: each key (without escapes) with its value's span; undefined when it is not that. */
export function membersOf(text: string, [from, to]: Span): Map<string, Span> | undefined {
  const members = new Map<string, Span>()
  if (text.charCodeAt(from) !== OPEN_OBJECT || text.charCodeAt(to - 1) !== CLOSE_OBJECT) return undefined
  if (to - from === 2) return members
  for (let i = from + 1; ;) {
    if (text.charCodeAt(i) !== QUOTE) return undefined
    const keyEnd = afterString(text, i)
    if (keyEnd < 0 || text.charCodeAt(keyEnd) !== COLON) return undefined
    const key = text.slice(i + 1, keyEnd - 1)
    const end = afterValue(text, keyEnd + 1)
    if (end < 0 || key.includes('\\') || members.has(key)) return undefined
    members.set(key, [keyEnd + 1, end])
    if (end === to - 1) return members
    if (text.charCodeAt(end) !== COMMA) return undefined
    i = end + 1
  }
}

/** The elements' spans of the compact JSON array in `text` at `span`, or undefined. */
function elementsOf(text: string, [from, to]: Span): Span[] | undefined {
  if (text.charCodeAt(from) !== OPEN_ARRAY || text.charCodeAt(to - 1) !== CLOSE_ARRAY) return undefined
  const elements: Span[] = []
  if (to - from === 2) return elements
  for (let i = from + 1; ;) {
    const end = afterValue(text, i)
    if (end < 0) return undefined
    elements.push([i, end])
    if (end === to - 1) return elements
    if (text.charCodeAt(end) !== COMMA) return undefined
    i = end + 1
  }
}

/** The object at `span` as `JSON.stringify` writes a record whose keys are in `order` (others after, as they are), or undefined. */
function reordered(text: string, span: Span, order: readonly string[]): string | undefined {
  const members = membersOf(text, span)
  if (members === undefined) return undefined
  const parts: string[] = []
  for (const key of order) {
    const value = members.get(key)
    if (value !== undefined) parts.push(`"${key}":${text.slice(value[0], value[1])}`)
  }
  for (const [key, value] of members) if (!order.includes(key)) parts.push(`"${key}":${text.slice(value[0], value[1])}`)
  return `{${parts.join(',')}}`
}

/** The array of records at `span`, each as `reordered` writes it, or undefined. */
function reorderedList(text: string, span: Span, order: readonly string[]): string | undefined {
  const elements = elementsOf(text, span)
  if (elements === undefined) return undefined
  const items: string[] = []
  for (const element of elements) {
    const item = reordered(text, element, order)
    if (item === undefined) return undefined
    items.push(item)
  }
  return `[${items.join(',')}]`
}

/** A series' document read as text: its members, and its record's `JSON.stringify` as pieces (proved by the digest). */
export interface SeriesText {
  /** The document's bytes it was read from. */
  body: Buffer
  text: string
  members: Map<string, Span>
  /** `"key":value` of each member of the assembled record, in its order (categories and tags empty). */
  pieces: string[]
  allDay: boolean
  /** What `occurrenceRecord` reads of the series (besides `all_day`). */
  timezone: string
  startDate: string
  endDate: string
  restUrl: string
  /** The spans of the JSON-LD's `startDate` and `endDate`, undefined when it has not both. */
  ldDates: [Span, Span] | undefined
}

/** Series' texts read lately, by event id, within MEMO_BYTES of documents (the least recently used dropped first). */
const memo = new Map<number, SeriesText>()
const MEMO_BYTES = 8 * 1024 * 1024
let memoBytes = 0

/**
 * The document's text with its record's `JSON.stringify` in pieces, or undefined when they do not make the text its
 * digest names. Remembered by event id while its document's bytes stay the same (compared on each use).
 */
export function seriesText(document: EventDocument): SeriesText | undefined {
  const known = memo.get(document.id)
  if (known !== undefined && known.body.equals(document.body)) {
    memo.delete(document.id)
    memo.set(document.id, known)
    return known
  }
  const read = readSeriesText(document)
  if (known !== undefined) {
    memo.delete(document.id)
    memoBytes -= known.body.length
  }
  if (read !== undefined) {
    memo.set(document.id, read)
    memoBytes += read.body.length
    for (const [id, entry] of memo) {
      if (memoBytes <= MEMO_BYTES) break
      memo.delete(id)
      memoBytes -= entry.body.length
    }
  }
  return read
}

function readSeriesText(document: EventDocument): SeriesText | undefined {
  const text = document.body.toString('utf8')
  const members = membersOf(text, [0, text.length])
  if (members === undefined || members.size !== EVENT_KEYS.length + 1 || !members.has('json_ld')) return undefined
  const pieces: string[] = []
  for (const key of EVENT_KEYS) {
    const span = members.get(key)
    if (span === undefined) return undefined
    const value = key === 'venue' ? reorderedList(text, span, VENUE_KEYS) : key === 'organizer' ? reorderedList(text, span, ORGANIZER_KEYS) : text.slice(span[0], span[1])
    if (value === undefined) return undefined
    pieces.push(`"${key}":${value}`)
  }
  if (textDigest(`{${pieces.join(',')}}`) !== document.digest) return undefined
  const value = (key: string): unknown => {
    const [from, to] = members.get(key) as Span
    return JSON.parse(text.slice(from, to))
  }
  const [timezone, startDate, endDate, restUrl, allDay] = ['timezone', 'start_date', 'end_date', 'rest_url', 'all_day'].map(value)
  if (typeof timezone !== 'string' || typeof startDate !== 'string' || typeof endDate !== 'string' || typeof restUrl !== 'string') return undefined
  const ld = membersOf(text, members.get('json_ld') as Span)
  const ldStart = ld?.get('startDate')
  const ldEnd = ld?.get('endDate')
  return {
    body: document.body, text, members, pieces, allDay: allDay === true, timezone, startDate, endDate, restUrl,
    ldDates: ldStart === undefined || ldEnd === undefined ? undefined : [ldStart, ldEnd],
  }
}

/** Where in a series' pieces (EVENT_KEYS' order) each member an occurrence changes is, and its terms. */
const CHANGED_AT = new Map<number, string>(OCCURRENCE_KEYS.map((key) => [EVENT_KEYS.indexOf(key), key]))
const CATEGORIES_AT = EVENT_KEYS.indexOf('categories')
const TAGS_AT = EVENT_KEYS.indexOf('tags')

/** The serializer of the members an occurrence changes, as the Event schema writes them (the document's serializer's texts). */
const changedSerializers = new WeakMap<object, (value: object) => string>()

function changedSerializer(ctx: AppContext): ((value: object) => string) | undefined {
  const document = ctx.spec.document as { components?: { schemas?: Record<string, { properties?: Record<string, unknown> }> } }
  let serialize = changedSerializers.get(document)
  if (serialize === undefined) {
    const properties = document.components?.schemas?.Event?.properties
    if (properties === undefined || OCCURRENCE_KEYS.some((key) => properties[key] === undefined)) return undefined
    serialize = fastJsonStringify({
      type: 'object', properties: Object.fromEntries(OCCURRENCE_KEYS.map((key) => [key, properties[key]])), components: document.components,
    } as Parameters<typeof fastJsonStringify>[0]) as (value: object) => string
    changedSerializers.set(document, serialize)
  }
  return serialize
}

/**
 * The answer to an anonymous read of occurrence `state` (one with no override) of the series whose document
 * `document` is (`series`: its text), with the series' terms' current records and the series' ETag as a read of
 * it gives them: the occurrence's ETag and its bytes, as the assembled record would give them. Undefined when
 * the text cannot be read so (the read then goes the long way).
 */
export function occurrenceAnswer(ctx: AppContext, document: EventDocument, series: SeriesText, state: OccurrenceState,
  categories: readonly Category[], tags: readonly Tag[], seriesEtag: string): { etag: string; body: () => Buffer } | undefined {
  const serialize = changedSerializer(ctx)
  if (serialize === undefined || series.ldDates === undefined) return undefined
  const [startAt, endAt] = series.ldDates
  // The members the occurrence changes, as `occurrenceRecord` makes them from what of the series they depend on.
  const basis = { timezone: series.timezone, all_day: series.allDay, start_date: series.startDate, end_date: series.endDate, rest_url: series.restUrl } as Event
  const changed = occurrenceRecord(basis, state, null)
  // The occurrence record's JSON.stringify: the series' pieces with the changed members and the terms put in.
  const pieces = series.pieces.slice()
  for (const [at, key] of CHANGED_AT) pieces[at] = `"${key}":${JSON.stringify(changed[key as keyof Event])}`
  pieces[CATEGORIES_AT] = `"categories":${JSON.stringify(categories)}`
  pieces[TAGS_AT] = `"tags":${JSON.stringify(tags)}`
  const etag = occurrenceEtagOf(seriesEtag, document.id, document.version, state.id, 0, textDigest(`{${pieces.join(',')}}`))
  // The bytes: the document's with the changed members as the Event schema writes them, the terms' records in
  // their arrays (written empty) and the JSON-LD's dates.
  const changedText = serialize(Object.fromEntries(OCCURRENCE_KEYS.map((key) => [key, changed[key]])))
  const changedMembers = membersOf(changedText, [0, changedText.length])
  if (changedMembers === undefined) return undefined
  const edits: Array<[number, number, string]> = []
  for (const key of OCCURRENCE_KEYS) {
    const value = changedMembers.get(key)
    if (value === undefined) return undefined
    const [from, to] = series.members.get(key) as Span
    edits.push([from, to, changedText.slice(value[0], value[1])])
  }
  for (const [key, items] of [['categories', categories.map((c) => ctx.json.category(c))], ['tags', tags.map((t) => ctx.json.tag(t))]] as const) {
    const [from, to] = series.members.get(key) as Span
    if (series.text.slice(from, to) !== '[]') return undefined
    edits.push([from, to, `[${items.join(',')}]`])
  }
  const dates = jsonLdDates(changed)
  edits.push([startAt[0], startAt[1], JSON.stringify(dates.startDate)], [endAt[0], endAt[1], JSON.stringify(dates.endDate)])
  edits.sort((a, b) => a[0] - b[0])
  return {
    etag,
    body: () => {
      const parts: string[] = []
      let at = 0
      for (const [from, to, value] of edits) {
        parts.push(series.text.slice(at, from), value)
        at = to
      }
      parts.push(series.text.slice(at))
      return Buffer.from(parts.join(''), 'utf8')
    },
  }
}
