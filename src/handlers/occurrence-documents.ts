/**
 * An anonymous read of one occurrence of a series (`GET /events/{id}/occurrences/{occurrence}`, CONTRACT §17)
 * answered from the series' stored document (handlers/event-documents.ts) as bytes, without the series' record:
 * for an occurrence with no override, its record is the series' with ten members changed (its dates, their
 * details, `timezone_abbr`, `occurrence`: lib/occurrence-view.ts `OCCURRENCE_KEYS`) and its JSON-LD's `startDate`
 * and `endDate`, so its answer is the document's bytes with those values put in (and its terms' current records,
 * as a read of the series puts them).
 *
 * Where those values are in a document (`SeriesSlots`) is found once per document, by reading its members' places
 * in the bytes, and remembered per app and series for the same document (its version and digest). The ETag is the
 * series' (the document's) with the occurrence's id and the JSON of its ten members (http/etag.ts `occurrenceEtag`):
 * no digest of the whole occurrence record, which a read would otherwise have to make as text first.
 */
import fastJsonStringify from 'fast-json-stringify'
import type { Category, Event, Tag } from '../contract.js'
import { occurrenceEtag } from '../http/etag.js'
import type { Serialized } from '../http/serialized.js'
import { jsonLdDates } from '../lib/json-ld.js'
import { OCCURRENCE_KEYS, occurrenceRecord, type OccurrenceState } from '../lib/occurrence-view.js'
import type { EventDocument } from '../repositories/event-documents.js'
import type { AppContext } from './context.js'
import { singleBody, type BodyEdit } from './event-documents.js'

export { OCCURRENCE_KEYS }

type Span = readonly [from: number, to: number]

const QUOTE = 34
const BACKSLASH = 92
const COLON = 58
const COMMA = 44
const OPEN_OBJECT = 123
const CLOSE_OBJECT = 125
const OPEN_ARRAY = 91
const CLOSE_ARRAY = 93

/**
 * The offset after the JSON string opening at `at` in UTF-8 `bytes`, or -1. A byte below 0x80 is never part of a
 * longer UTF-8 sequence, so JSON's quotes, backslashes and brackets are found in the bytes as in the text.
 */
function afterString(bytes: Buffer, at: number): number {
  let from = at + 1
  for (;;) {
    const quote = bytes.indexOf(QUOTE, from)
    if (quote < 0) return -1
    let escapes = 0
    while (bytes[quote - 1 - escapes] === BACKSLASH) escapes++
    if (escapes % 2 === 0) return quote + 1
    from = quote + 1
  }
}

/** The offset after the JSON value starting at `at` in compact JSON (no whitespace), or -1. */
function afterValue(bytes: Buffer, at: number): number {
  const first = bytes[at]
  if (first === QUOTE) return afterString(bytes, at)
  if (first === OPEN_OBJECT || first === OPEN_ARRAY) {
    let depth = 0
    for (let i = at; i < bytes.length;) {
      const c = bytes[i]
      if (c === QUOTE) {
        i = afterString(bytes, i)
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
  for (let i = at; i < bytes.length; i++) {
    const c = bytes[i]
    if (c === COMMA || c === CLOSE_OBJECT || c === CLOSE_ARRAY) return i
  }
  return -1
}

/**
 * The value spans of the members `wanted` of the compact JSON object opening at `at` in `bytes`, read up to the last
 * of them (the members after it not read); undefined when it is not such an object or one is missing or twice there.
 */
export function membersUpTo(bytes: Buffer, at: number, wanted: readonly string[]): Map<string, Span> | undefined {
  if (bytes[at] !== OPEN_OBJECT) return undefined
  const found = new Map<string, Span>()
  for (let i = at + 1; found.size < wanted.length;) {
    if (bytes[i] !== QUOTE) return undefined
    const keyEnd = afterString(bytes, i)
    if (keyEnd < 0 || bytes[keyEnd] !== COLON) return undefined
    const end = afterValue(bytes, keyEnd + 1)
    if (end < 0) return undefined
    const key = bytes.toString('latin1', i + 1, keyEnd - 1)
    if (wanted.includes(key)) {
      if (found.has(key)) return undefined
      found.set(key, [keyEnd + 1, end])
    }
    if (bytes[end] !== COMMA) break
    i = end + 1
  }
  return found.size === wanted.length ? found : undefined
}

/** What `occurrenceRecord` reads of a series (and copies; nothing else of it is read). */
type SeriesBasis = Pick<Event, 'timezone' | 'all_day' | 'start_date' | 'end_date' | 'rest_url'>

/** Where the values an occurrence changes are in a series' document (byte offsets), and what they are made from. */
export interface SeriesSlots {
  /** The document they were found in: its version, digest and length (see `slotsOf`). */
  version: number
  digest: string
  length: number
  basis: SeriesBasis
  /** The values of OCCURRENCE_KEYS' members, in that order. */
  members: readonly Span[]
  /** The JSON-LD's `startDate` and `endDate` values. */
  ldStart: Span
  ldEnd: Span
  /** Each span with the byte after it, as found (a member's value follows a colon): checked on each use. */
  marks: ReadonlyArray<readonly [from: number, to: number, after: number]>
}

/** Series' slots kept per app, at most this many (the least recently used dropped first). */
const MAX_SLOTS = 8192
const kept = new WeakMap<AppContext, Map<number, SeriesSlots | null>>()

/**
 * The slots of a series' document, found when none are kept for it, else the kept ones; null when its document has
 * not the members where a series' has them (the read then goes the long way).
 *
 * Kept slots are used for a document of the same event, version, digest and length. Within an app, a document is
 * the Event serializer's bytes (its context: the public URL, the contract's Event schema, the site's settings, this
 * code's format: repositories/event-documents.ts) of the record its digest names (`eventDigest`), so the same digest
 * is the same bytes; as a margin against another node's bytes under the same context, each use checks that the colon
 * before every span and the byte after it are still there.
 */
export function slotsOf(ctx: AppContext, document: EventDocument): SeriesSlots | null {
  let byId = kept.get(ctx)
  if (byId === undefined) kept.set(ctx, byId = new Map())
  const known = byId.get(document.id)
  if (known !== undefined) {
    byId.delete(document.id)
    if (known !== null && known.version === document.version && known.digest === document.digest && known.length === document.body.length
      && known.marks.every(([from, to, after]) => document.body[from - 1] === COLON && document.body[to] === after)) {
      byId.set(document.id, known)
      return known
    }
  }
  const found = readSlots(document)
  if (byId.size >= MAX_SLOTS) byId.delete(byId.keys().next().value as number)
  byId.set(document.id, found)
  return found
}

/** The members of a series' record read from its document: what `occurrenceRecord` reads, and those it changes but `occurrence`. */
const READ_KEYS = ['rest_url', 'all_day', 'timezone', ...OCCURRENCE_KEYS.filter((key) => key !== 'occurrence')]
const JSON_LD = Buffer.from(',"json_ld":')
const NO_OCCURRENCE = Buffer.from(',"occurrence":null')

/**
 * A series document's slots. Its members come in the contract's order, `occurrence` last before `json_ld` (the
 * bytes a list leaves out: `ldFrom`), so the record's members are read from the start up to `timezone_abbr`, then
 * `occurrence` is the `null` before the JSON-LD and the JSON-LD's members are read up to `endDate`: the venues,
 * organizers, translations and the rest of the JSON-LD are not gone through.
 */
function readSlots(document: EventDocument): SeriesSlots | null {
  const bytes = document.body
  const top = membersUpTo(bytes, 0, READ_KEYS)
  const ldAt = document.ldFrom + JSON_LD.length
  const ld = bytes.compare(JSON_LD, 0, JSON_LD.length, document.ldFrom, ldAt) === 0 ? membersUpTo(bytes, ldAt, ['startDate', 'endDate']) : undefined
  const ldStart = ld?.get('startDate')
  const ldEnd = ld?.get('endDate')
  if (top === undefined || ldStart === undefined || ldEnd === undefined || ldEnd[1] > document.ldTo
    || bytes.compare(NO_OCCURRENCE, 0, NO_OCCURRENCE.length, document.ldFrom - NO_OCCURRENCE.length, document.ldFrom) !== 0) return null
  const occurrence: Span = [document.ldFrom - 4, document.ldFrom]
  const members = OCCURRENCE_KEYS.map((key) => (key === 'occurrence' ? occurrence : top.get(key) as Span))
  const value = (key: string): unknown => {
    const [from, to] = top.get(key) as Span
    return JSON.parse(bytes.toString('utf8', from, to))
  }
  const [timezone, allDay, startDate, endDate, restUrl] = ['timezone', 'all_day', 'start_date', 'end_date', 'rest_url'].map(value)
  if (typeof timezone !== 'string' || typeof allDay !== 'boolean' || typeof startDate !== 'string' || typeof endDate !== 'string'
    || typeof restUrl !== 'string') return null
  // The occurrence's values go nowhere near the places a read puts the terms in.
  const spans = [...members, ldStart, ldEnd]
  if (spans.some(([from, to]) => (from <= document.categoryAt && document.categoryAt <= to) || (from <= document.tagAt && document.tagAt <= to))) return null
  return {
    version: document.version, digest: document.digest, length: bytes.length,
    basis: { timezone, all_day: allDay, start_date: startDate, end_date: endDate, rest_url: restUrl }, members, ldStart, ldEnd,
    marks: spans.map(([from, to]) => [from, to, bytes[to] as number]),
  }
}


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
 * The answer to an anonymous read of occurrence `state` (one with no override) of the series whose document is
 * `document` (`slots`: where its values go), with the series' terms' current records and the series' ETag as a read
 * of it gives them: the occurrence's ETag and its bytes, as the assembled record would give them. Undefined when the
 * bytes cannot be made so (the read then goes the long way).
 */
export function occurrenceAnswer(ctx: AppContext, document: EventDocument, slots: SeriesSlots, state: OccurrenceState,
  categories: readonly Category[], tags: readonly Tag[], seriesEtag: string): { etag: string; body: () => Serialized<Event> } | undefined {
  const serialize = changedSerializer(ctx)
  if (serialize === undefined) return undefined
  // The members the occurrence changes, as `occurrenceRecord` makes them from what of the series they depend on.
  const changed = occurrenceRecord(slots.basis as Event, state, null)
  // The bytes: the document's with the changed members as the Event schema writes them, the JSON-LD's dates and
  // (singleBody) the terms' records in their arrays.
  const text = Buffer.from(serialize(Object.fromEntries(OCCURRENCE_KEYS.map((key) => [key, changed[key]]))))
  const values = membersUpTo(text, 0, OCCURRENCE_KEYS)
  const edits: BodyEdit[] = []
  for (const [i, key] of OCCURRENCE_KEYS.entries()) {
    const value = values?.get(key)
    const [from, to] = slots.members[i] as Span
    if (value === undefined) return undefined
    edits.push([from, to, [text.subarray(value[0], value[1])]])
  }
  const dates = jsonLdDates(changed)
  edits.push([slots.ldStart[0], slots.ldStart[1], [Buffer.from(JSON.stringify(dates.startDate))]],
    [slots.ldEnd[0], slots.ldEnd[1], [Buffer.from(JSON.stringify(dates.endDate))]])
  return {
    etag: occurrenceEtag(seriesEtag, document.id, document.version, state.id, 0, changed),
    body: () => singleBody(ctx, document, categories, tags, edits),
  }
}
