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
 * series' (the document's) with the occurrence's id and the JSON of its dates, abbreviation and original start, from
 * which its ten members are made (http/etag.ts `occurrenceEtag`): no digest of the whole occurrence record, which a read
 * would otherwise have to make as text first.
 *
 * The ten members and the JSON-LD's dates are written straight into bytes from the occurrence's row as numbers
 * (`fastAnswer`, lib/occurrence-bytes.ts, as list items are written), and the ETag digests the same text made as
 * bytes: no record, no serializer, no JSON as strings (issue 45: a cold read of an occurrence cost some three times a
 * cold read by id in process, most of it there). The first occurrence of each kind (all-day, timed) an app answers so
 * is made the long way too (`slowAnswer`) and compared; anything out of the ordinary (a row not where its id says, a
 * sub-minute offset, a year before 1000) goes the long way.
 */
import fastJsonStringify from 'fast-json-stringify'
import type { Category, Event, Tag } from '../contract.js'
import { occurrenceEtag, unchangedOccurrenceEtag, unchangedOccurrencePrefix } from '../http/etag.js'
import type { Serialized } from '../http/serialized.js'
import { jsonLdDates } from '../lib/json-ld.js'
import { abbreviationJson, datesJson, jsonLdBytes, occurrenceBytes, type OccurrenceDates } from '../lib/occurrence-bytes.js'
import { DAY, MINUTE, SECOND, offsetFunction, wallMsToUtcMs, type OffsetAt } from '../lib/time-zones.js'
import { tzAbbreviationAt } from '../lib/tz-abbreviation.js'
import { OCCURRENCE_KEYS, occurrenceRecord, type OccurrenceState } from '../lib/occurrence-view.js'
import { occurrenceIdMs } from '../lib/recurrence.js'
import type { EventDocument, OccurrenceDocument } from '../repositories/event-documents.js'
import type { AppContext } from './context.js'
import { documentTerms, singleBody, type BodyEdit, type DocumentTerms } from './event-documents.js'

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
  /** What writes an occurrence's values straight into bytes (`fastAnswer`), or null when they are not so made for it. */
  fast: FastSlots | null
  /** The document's terms and its ETag as the last read of one of its occurrences found them (`documentTerms`' `last`). */
  terms: DocumentTerms | undefined
  /** The read cache's generation `terms` were read at, when a cold read read them (`documentOccurrence`). */
  termsGeneration: number | undefined
}

/** What `fastAnswer` needs besides the spans: where the dates block is, the series' zone and length in days, its occurrences' URL. */
interface FastSlots {
  /** `"start_date":…` up to the end of `utc_end_date_details`' value (the eight date members, one after the other). */
  dates: Span
  offsetAt: OffsetAt
  /** Whole days from the series' first day to its last (all-day occurrences last as many). */
  days: number
  /** `"<series' rest_url>/occurrences/` as JSON, without the closing quote. */
  urlJson: Buffer
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
    fast: fastSlots(bytes, members, timezone, startDate, endDate, restUrl),
    terms: undefined,
    termsGeneration: undefined,
  }
}

/** The dates block's members, in the document's order (the first eight of OCCURRENCE_KEYS). */
const DATE_KEYS = OCCURRENCE_KEYS.slice(0, 8)

/** `fastAnswer`'s slots of a document whose members' values are at `members`, or null when its dates are not one block. */
function fastSlots(bytes: Buffer, members: readonly Span[], timezone: string, startDate: string, endDate: string, restUrl: string): FastSlots | null {
  const key = (name: string, to: number): boolean => bytes.toString('latin1', to - name.length - 3, to) === `"${name}":`
  if (DATE_KEYS.some((name, i) => !key(name, (members[i] as Span)[0])
    || (i > 0 && (members[i] as Span)[0] !== (members[i - 1] as Span)[1] + name.length + 4))) return null
  let offsetAt: OffsetAt
  try {
    offsetAt = offsetFunction(timezone)
  } catch {
    return null
  }
  const days = Math.round((Date.parse(`${endDate.slice(0, 10)}T00:00:00Z`) - Date.parse(`${startDate.slice(0, 10)}T00:00:00Z`)) / DAY)
  if (!Number.isInteger(days)) return null
  return {
    dates: [(members[0] as Span)[0] - '"start_date":'.length, (members[7] as Span)[1]], offsetAt, days,
    urlJson: Buffer.from(JSON.stringify(`${restUrl}/occurrences/`).slice(0, -1)),
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

const DIGIT_0 = 48

/** The number the `width` digits of `text` at `at` write, or -1. */
function digitsAt(text: string, at: number, width: number): number {
  let value = 0
  for (let i = at; i < at + width; i++) {
    const d = text.charCodeAt(i) - DIGIT_0
    if (d < 0 || d > 9) return -1
    value = value * 10 + d
  }
  return value
}

const MONTH_DAYS = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31]

/** `'YYYY-MM-DD HH:MM:SS'` (years 1000–9999, a real date and time) in ms, else undefined (the long way then reads it). */
function rowMs(text: string): number | undefined {
  if (text.length !== 19 || text.charCodeAt(4) !== 0x2d || text.charCodeAt(7) !== 0x2d || text.charCodeAt(10) !== 0x20
    || text.charCodeAt(13) !== COLON || text.charCodeAt(16) !== COLON) return undefined
  const year = digitsAt(text, 0, 4)
  const month = digitsAt(text, 5, 2)
  const day = digitsAt(text, 8, 2)
  const hour = digitsAt(text, 11, 2)
  const minute = digitsAt(text, 14, 2)
  const second = digitsAt(text, 17, 2)
  if (year < 1000 || month < 1 || month > 12 || day < 1 || hour < 0 || hour > 23 || minute < 0 || minute > 59 || second < 0 || second > 59) return undefined
  const leap = month === 2 && year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0)
  if (day > (MONTH_DAYS[month - 1] as number) + (leap ? 1 : 0)) return undefined
  return Date.UTC(year, month - 1, day, hour, minute, second)
}

/** Dates this side of 0001-01-01 and 9999-12-31 23:59:59 (what `utcToWall` and `dateDetails` accept). */
const FIRST_MS = new Date(0).setUTCFullYear(1, 0, 1)
const LAST_MS = Date.UTC(9999, 11, 31, 23, 59, 59)

/** `+HH:MM` of whole-minute offsets (lib/dates.ts `isoOffset`), kept by offset. */
const offsetTexts = new Map<number, string>()
function offsetText(offsetMs: number): string {
  let text = offsetTexts.get(offsetMs)
  if (text === undefined) {
    const minutes = Math.abs(offsetMs) / MINUTE
    text = `${offsetMs < 0 ? '-' : '+'}${String(Math.floor(minutes / 60)).padStart(2, '0')}:${String(minutes % 60).padStart(2, '0')}`
    if (offsetTexts.size >= 256) offsetTexts.clear()
    offsetTexts.set(offsetMs, text)
  }
  return text
}

/**
 * `occurrenceAnswer`'s ETag and edits made straight into bytes (lib/occurrence-bytes.ts, as list items are), without
 * the occurrence's record, its members' JSON as a string nor the Event serializer: its dates from its row as numbers,
 * as `occurrenceRecord` makes them when the occurrence starts where its id says (else, or a date out of range, a
 * sub-minute offset, undefined: the long way). The ETag digests the same text as `occurrenceEtag`, written as bytes.
 */
function fastAnswer(document: EventDocument, slots: SeriesSlots, fast: FastSlots, state: OccurrenceState, seriesEtag: string): { etag: string; edits: BodyEdit[] } | undefined {
  const startUtc = rowMs(state.startUtc)
  const endUtc = rowMs(state.endUtc)
  const allDay = slots.basis.all_day
  const at = occurrenceIdMs(state.id, allDay)
  if (startUtc === undefined || endUtc === undefined || at === null) return undefined
  const { offsetAt } = fast
  let dates: OccurrenceDates
  let startOffset = ''
  let endOffset = ''
  if (allDay) {
    // lib/occurrence-view.ts: an all-day occurrence where the rule put it shows its day's 00:00:00 and the last of its days' 23:59:59.
    if (wallMsToUtcMs(at, offsetAt) !== startUtc) return undefined
    dates = { startWall: at, endWall: at + fast.days * DAY + DAY - SECOND, startUtc, endUtc }
  } else {
    if (at !== startUtc) return undefined
    const startAt = offsetAt(startUtc)
    const endAt = offsetAt(endUtc)
    // lib/dates.ts `isoWithOffset` cuts a sub-minute offset (and moves the wall time): the long way.
    if (startAt % MINUTE !== 0 || endAt % MINUTE !== 0) return undefined
    dates = { startWall: startUtc + startAt, endWall: endUtc + endAt, startUtc, endUtc }
    startOffset = offsetText(startAt)
    endOffset = offsetText(endAt)
  }
  for (const ms of [dates.startWall, dates.endWall, dates.startUtc, dates.endUtc]) if (!(ms >= FIRST_MS && ms < LAST_MS + SECOND)) return undefined
  const made = occurrenceBytes(dates, abbreviationJson(tzAbbreviationAt(slots.basis.timezone, startUtc)), state.id, fast.urlJson)
  const digested = made === undefined ? undefined : datesJson(unchangedOccurrencePrefix(seriesEtag, state.id), made.bytes)
  if (made === undefined || digested === undefined) return undefined
  const etag = unchangedOccurrenceEtag(document.id, document.version, digested)
  const { bytes, datesEnd, abbrEnd } = made
  const { ld, startLength } = jsonLdBytes(bytes, allDay, startOffset, endOffset)
  const abbr = slots.members[8] as Span
  const occurrence = slots.members[9] as Span
  return {
    etag,
    edits: [
      [fast.dates[0], fast.dates[1], [bytes.subarray(0, datesEnd)]],
      [abbr[0], abbr[1], [bytes.subarray(datesEnd, abbrEnd)]],
      [occurrence[0], occurrence[1], [bytes.subarray(abbrEnd)]],
      [slots.ldStart[0], slots.ldStart[1], [ld.subarray(0, startLength)]],
      [slots.ldEnd[0], slots.ldEnd[1], [ld.subarray(startLength)]],
    ],
  }
}

/** Per app, the kinds of occurrence (all-day, timed) whose first `fastAnswer` was found the same as the long way's. */
const checked = new WeakMap<AppContext, Set<boolean>>()

/** Answers this process made by `fastAnswer` (for the tests: that the way is taken). */
let written = 0
export function occurrenceAnswersWritten(): number {
  return written
}

/**
 * The answer to an anonymous read of occurrence `state` (one with no override) of the series whose document is
 * `document` (`slots`: where its values go), with the series' terms' current records and the series' ETag as a read
 * of it gives them: the occurrence's ETag and its bytes, as the assembled record would give them. Undefined when the
 * bytes cannot be made so (the read then goes the long way).
 */
export function occurrenceAnswer(ctx: AppContext, document: EventDocument, slots: SeriesSlots, state: OccurrenceState,
  categories: readonly Category[], tags: readonly Tag[], seriesEtag: string): { etag: string; body: () => Serialized<Event> } | undefined {
  const fast = slots.fast === null ? undefined : fastAnswer(document, slots, slots.fast, state, seriesEtag)
  if (fast === undefined) return slowAnswer(ctx, document, slots, state, categories, tags, seriesEtag)
  let kinds = checked.get(ctx)
  if (kinds === undefined) checked.set(ctx, (kinds = new Set()))
  if (!kinds.has(slots.basis.all_day)) {
    // The first of its kind this app makes so, made the long way too: the same tag and bytes say that the values are
    // written as the serializer writes them (else this document's occurrences are made the long way).
    const slow = slowAnswer(ctx, document, slots, state, categories, tags, seriesEtag)
    if (slow === undefined || slow.etag !== fast.etag || !slow.body().equals(singleBody(ctx, document, categories, tags, fast.edits))) {
      slots.fast = null
      return slow
    }
    kinds.add(slots.basis.all_day)
  }
  written++
  return { etag: fast.etag, body: () => singleBody(ctx, document, categories, tags, fast.edits) }
}

/** `occurrenceAnswer` the long way: the occurrence's members as `occurrenceRecord` makes them, written by the Event schema's serializer. */
function slowAnswer(ctx: AppContext, document: EventDocument, slots: SeriesSlots, state: OccurrenceState,
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

/** What a read of one occurrence finds in its series' document (`documentOccurrence`). */
export type DocumentOccurrence =
  /** The occurrence: its answer when it has no override and the bytes could be made so (else undefined: made from the series' record). */
  | { terms: NonNullable<Awaited<ReturnType<typeof documentTerms>>>; answer: { etag: string; body: () => Serialized<Event> } | undefined }
  /** The series has no such occurrence (404). */
  | 'none'

/**
 * What an anonymous read of occurrence `id` gives from `read` (its series' document and its row, `readOccurrence`;
 * `generation`: the read cache's look a cold read was read after):
 * the series' terms and, for an occurrence without an override, its answer (`occurrenceAnswer`); 'none' when the
 * series has no such occurrence; undefined when the document cannot serve (no slots, a term gone: the read assembles).
 * What the full path (handlers/event-occurrences.ts) and the cold read (handlers/cold-reads.ts) both answer with.
 */
export async function documentOccurrence(ctx: AppContext, read: OccurrenceDocument, id: string, generation?: number): Promise<DocumentOccurrence | undefined> {
  const { document, occurrence } = read
  const slots = slotsOf(ctx, document)
  if (slots === null) return undefined
  if (occurrence === undefined || occurrenceIdMs(id, slots.basis.all_day) === null) return 'none'
  // The slots are the same document's (its event, version, digest and length): its terms' ETag made once while they
  // stay. A cold read after a look of the generation they were read at (nothing taken in since: the same term records)
  // takes them as they are, without asking the read cache for each term again.
  let terms = generation !== undefined && slots.termsGeneration === generation ? slots.terms : undefined
  if (terms === undefined) {
    terms = await documentTerms(ctx, document, slots.terms)
    if (terms === undefined) return undefined
    slots.terms = terms
    slots.termsGeneration = generation
  }
  const answer = occurrence.overridden ? undefined : occurrenceAnswer(ctx, document, slots, { id, ...occurrence }, terms.categories, terms.tags, terms.etag)
  return { terms, answer }
}
