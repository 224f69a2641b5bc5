/**
 * A series' occurrences as anonymous lists show them, from the series' stored document (issue 45): the list form
 * of the document (handlers/event-documents.ts) with the values that differ from occurrence to occurrence put in
 * its bytes, where a list otherwise assembled the series' record and serialized it whole for every item
 * (`occurrenceRecord` then the Event serializer). Only an occurrence without an override is made so: its record is
 * the series' with its dates, everything derived from them and `occurrence` (lib/occurrence-view.ts), and what an
 * anonymous caller is shown of it (`seenBy`: venues, organizers, translations) is the series' own. An overridden
 * occurrence (its own texts, venues, organizers) is made from the record, as before.
 *
 * The places of those values are found once per document (a template, kept per series while its document's
 * bytes stay the same): the block from `"start_date"` to `"utc_end_date_details"`, `timezone_abbr`'s value and
 * `"occurrence":null`, each named once in the document and holding exactly the series' own values as they would
 * be written. The first occurrence of each kind (all-day, timed) an app makes so is also made the long way, from
 * the document's record, and used only when the bytes are the same; otherwise, or when anything is not where it
 * should be, the series' occurrences are made from its record.
 */
import type { Event } from '../contract.js'
import type { SerializedPieces } from '../http/serialized.js'
import { formatUtc, requireDateTimeMs } from '../lib/dates.js'
import { abbreviationJson, occurrenceBytes, type OccurrenceDates } from '../lib/occurrence-bytes.js'
import { occurrenceRecord, type OccurrenceState } from '../lib/occurrence-view.js'
import { formatOccurrenceId, occurrenceIdMs } from '../lib/recurrence.js'
import { DAY, SECOND, offsetFunction, wallMsToUtcMs, type OffsetAt } from '../lib/time-zones.js'
import { tzAbbreviationAt } from '../lib/tz-abbreviation.js'
import type { EventDocument } from '../repositories/event-documents.js'
import type { AppContext } from './context.js'
import type { BodyEdit, ListedDocument } from './event-documents.js'

/** What `occurrenceRecord` reads of a series: its zone, whether it is all-day, its first dates, its URL. */
type SeriesDates = Pick<Event, 'timezone' | 'all_day' | 'start_date' | 'end_date' | 'rest_url'>

/** Where an occurrence's values go in a series' document, and what they are made from. */
interface Template {
  /** The document's bytes it was made for (used only for the same bytes). */
  body: Buffer
  series: SeriesDates
  /** `"start_date":…` up to the end of `"utc_end_date_details":{…}`. */
  dates: readonly [number, number]
  /** `timezone_abbr`'s value. */
  abbr: readonly [number, number]
  /** `occurrence`'s value (`null` in the document). */
  occurrence: readonly [number, number]
  /** How each occurrence lasts and where it is (see `Lasting`), or null when its rows cannot be made from ids. */
  lasting: Lasting | null
  /** `"rest_url"` of each occurrence up to its id: the series' URL and `/occurrences/`, as JSON without the closing quote. */
  occurrenceUrl: Buffer
}

/**
 * What makes an occurrence's row from its id, as the expansion makes it (lib/recurrence.ts `occurrencesOf`): a timed
 * occurrence starts at the instant its id names and lasts `exactDuration` (its series' first's UTC end less its UTC
 * start); an all-day one starts at its day's first instant in the zone and ends `wallDuration` later in wall time
 * (the first's wall end less its wall start), its record's days as many as the first's (`days`: lib/occurrence-view.ts).
 */
interface Lasting {
  offsetAt: OffsetAt
  exactDuration: number
  wallDuration: number
  days: number
}

/** Templates kept per app, at most this many (the oldest made dropped first). */
const MAX_TEMPLATES = 4096
/**
 * Per app: the templates by series id (null: its document cannot make occurrences), and the kinds checked (`all_day`,
 * and whether the edits were made from a row read or from the occurrence's id: see `itemOf`).
 */
const templates = new WeakMap<AppContext, Kept>()

/** Occurrences made from documents by this process, and of those the ones whose rows were made from their ids (for the tests: that the paths are taken). */
let made = 0
let fromIds = 0
export function occurrencesMadeFromDocuments(): number {
  return made
}
export function occurrenceRowsFromIds(): number {
  return fromIds
}

/** The dates block of an occurrence's record (or the series'), as the Event serializer writes it (checked per template). */
function datesJson(r: Pick<Event, 'start_date' | 'start_date_details' | 'end_date' | 'end_date_details' | 'utc_start_date'
  | 'utc_start_date_details' | 'utc_end_date' | 'utc_end_date_details'>): string {
  return JSON.stringify({
    start_date: r.start_date, start_date_details: r.start_date_details, end_date: r.end_date, end_date_details: r.end_date_details,
    utc_start_date: r.utc_start_date, utc_start_date_details: r.utc_start_date_details,
    utc_end_date: r.utc_end_date, utc_end_date_details: r.utc_end_date_details,
  }).slice(1, -1)
}

function occurrenceJson(r: Event): string {
  const o = r.occurrence
  if (o === null) return 'null'
  return JSON.stringify({ id: o.id, original_start_date: o.original_start_date, original_utc_start_date: o.original_utc_start_date, overridden: o.overridden, rest_url: o.rest_url })
}

/** The offset of `text` in `body` when it is there exactly once, else -1. */
function onlyAt(body: Buffer, text: string): number {
  const at = body.indexOf(text)
  return at < 0 || body.indexOf(text, at + 1) >= 0 ? -1 : at
}

/** Whether `body` holds `json` at `at`. */
function holds(body: Buffer, at: number, json: string): boolean {
  const bytes = Buffer.from(json)
  return at >= 0 && body.subarray(at, at + bytes.length).equals(bytes)
}

/** A series document's template, or null when its values are not where they should be. */
function templateOf(document: EventDocument): { template: Template; record: Event } | null {
  const body = document.body
  let record: Event
  try {
    record = JSON.parse(body.toString('utf8')) as Event
  } catch {
    return null
  }
  if (record.recurrence === null || record.occurrence !== null) return null
  const dates = datesJson(record)
  const datesAt = onlyAt(body, '"start_date":')
  const abbrKey = onlyAt(body, '"timezone_abbr":')
  const abbr = JSON.stringify(record.timezone_abbr)
  const occurrenceKey = onlyAt(body, '"occurrence":null')
  if (!holds(body, datesAt, dates) || !holds(body, datesAt + Buffer.byteLength(dates), ',"timezone":')) return null
  const abbrAt = abbrKey + Buffer.byteLength('"timezone_abbr":')
  if (abbrKey < 0 || !holds(body, abbrAt, abbr)) return null
  const occurrenceAt = occurrenceKey + Buffer.byteLength('"occurrence":')
  if (occurrenceKey < 0) return null
  const slots: Array<readonly [number, number]> = [
    [datesAt, datesAt + Buffer.byteLength(dates)],
    [abbrAt, abbrAt + Buffer.byteLength(abbr)],
    [occurrenceAt, occurrenceAt + 4],
  ]
  // None may touch the places the list form edits: the terms' arrays, the JSON-LD it leaves out.
  const inside = (at: number) => slots.some(([from, to]) => from <= at && at <= to)
  if (inside(document.categoryAt) || inside(document.tagAt) || slots.some(([from, to]) => to > document.ldFrom && from < document.ldTo)) return null
  const series: SeriesDates = { timezone: record.timezone, all_day: record.all_day, start_date: record.start_date, end_date: record.end_date, rest_url: record.rest_url }
  const occurrenceUrl = Buffer.from(JSON.stringify(`${record.rest_url}/occurrences/`).slice(0, -1))
  const template: Template = { body, series, dates: slots[0] as [number, number], abbr: slots[1] as [number, number], occurrence: slots[2] as [number, number], lasting: null, occurrenceUrl }
  template.lasting = lastingOf(template, record)
  return { template, record }
}

/**
 * How `record`'s occurrences last (`Lasting`), or null when its rows cannot be made from ids: the row its own first
 * occurrence would have (made from its id) must be its own dates, else (a date that is not one, a zone unknown) the
 * rows are read.
 */
function lastingOf(template: Template, record: Event): Lasting | null {
  try {
    const startWallMs = requireDateTimeMs(record.start_date, 'start_date')
    const startUtcMs = requireDateTimeMs(record.utc_start_date, 'utc_start_date')
    const lasting: Lasting = {
      offsetAt: offsetFunction(record.timezone),
      exactDuration: requireDateTimeMs(record.utc_end_date, 'utc_end_date') - startUtcMs,
      wallDuration: requireDateTimeMs(record.end_date, 'end_date') - startWallMs,
      days: Math.round((Date.parse(`${record.end_date.slice(0, 10)}T00:00:00Z`) - Date.parse(`${record.start_date.slice(0, 10)}T00:00:00Z`)) / DAY),
    }
    const first = rowOf({ ...template, lasting }, formatOccurrenceId(record.utc_start_date, record.start_date, record.all_day))
    return first?.startUtc === record.utc_start_date && first.endUtc === record.utc_end_date ? lasting : null
  } catch {
    return null
  }
}

/** Dates this side of 0001-01-01 and 9999-12-31 23:59:59 (what `utcToWall` and `dateDetails` accept). */
const FIRST_MS = new Date(0).setUTCFullYear(1, 0, 1)
const LAST_MS = Date.UTC(9999, 11, 31, 23, 59, 59)

/** The dates of the occurrence `id` (not overridden) of `template`'s series, made from its id (see `Lasting`); undefined when it names none. */
function rowMsOf(template: Template, id: string): OccurrenceDates | undefined {
  const lasting = template.lasting
  if (lasting === null) return undefined
  const allDay = template.series.all_day
  const at = occurrenceIdMs(id, allDay)
  if (at === null) return undefined
  let row: OccurrenceDates
  if (allDay) {
    // lib/occurrence-view.ts: an all-day occurrence where the rule put it shows its day's 00:00:00 and the last of its days' 23:59:59.
    row = { startWall: at, endWall: at + lasting.days * DAY + DAY - SECOND, startUtc: wallMsToUtcMs(at, lasting.offsetAt), endUtc: wallMsToUtcMs(at + lasting.wallDuration, lasting.offsetAt) }
  } else {
    const endUtc = at + lasting.exactDuration
    row = { startWall: at + lasting.offsetAt(at), endWall: endUtc + lasting.offsetAt(endUtc), startUtc: at, endUtc }
  }
  for (const ms of [row.startWall, row.endWall, row.startUtc, row.endUtc]) if (!(ms >= FIRST_MS && ms < LAST_MS + SECOND)) return undefined
  return row
}

/** The row of the occurrence `id` (not overridden) of `template`'s series, made from its id; undefined when it names none. */
function rowOf(template: Template, id: string): OccurrenceState | undefined {
  const row = rowMsOf(template, id)
  return row === undefined ? undefined : { id, startUtc: formatUtc(new Date(row.startUtc)), endUtc: formatUtc(new Date(row.endUtc)) }
}

/**
 * The edits that make `template`'s document show the occurrence `id` (not overridden), made from its id: what
 * `editsFor` makes from the row and `occurrenceRecord`, written directly (the first of each kind an app makes is
 * compared with the long way: `unchangedItem`). Undefined when the rows cannot be made from ids.
 */
function unchangedEdits(template: Template, id: string): BodyEdit[] | undefined {
  const dates = rowMsOf(template, id)
  if (dates === undefined) return undefined
  const made = occurrenceBytes(dates, abbreviationJson(tzAbbreviationAt(template.series.timezone, dates.startUtc)), id, template.occurrenceUrl)
  if (made === undefined) return undefined
  const { bytes, datesEnd, abbrEnd } = made
  return [
    [template.dates[0], template.dates[1], [bytes.subarray(0, datesEnd)]],
    [template.abbr[0], template.abbr[1], [bytes.subarray(datesEnd, abbrEnd)]],
    [template.occurrence[0], template.occurrence[1], [bytes.subarray(abbrEnd)]],
  ]
}

/** The edits that make `template`'s document show `occurrence` (not overridden). */
function editsFor(template: Template, occurrence: OccurrenceState): BodyEdit[] {
  // `occurrenceRecord` reads only the fields of `SeriesDates` from the series (and copies the rest, here none).
  const r = occurrenceRecord(template.series as Event, occurrence, null)
  return [
    [template.dates[0], template.dates[1], [Buffer.from(datesJson(r))]],
    [template.abbr[0], template.abbr[1], [Buffer.from(JSON.stringify(r.timezone_abbr))]],
    [template.occurrence[0], template.occurrence[1], [Buffer.from(occurrenceJson(r))]],
  ]
}

interface Kept {
  byId: Map<number, Template | null>
  checked: Set<string>
}

function keptOf(ctx: AppContext): Kept {
  let kept = templates.get(ctx)
  if (kept === undefined) templates.set(ctx, (kept = { byId: new Map(), checked: new Set() }))
  return kept
}

/** The template of a series' document (made when there is none for these bytes), and its record when just parsed. */
function templateFor(kept: Kept, document: EventDocument): { template: Template | null; record?: Event } {
  const template = kept.byId.get(document.id)
  if (template === null || (template !== undefined && template.body.equals(document.body))) return { template }
  const found = templateOf(document)
  kept.byId.delete(document.id)
  if (kept.byId.size >= MAX_TEMPLATES) kept.byId.delete(kept.byId.keys().next().value as number)
  kept.byId.set(document.id, found?.template ?? null)
  return { template: found?.template ?? null, record: found?.record }
}

/**
 * The list item of the occurrence `id` of the series whose stored document is `document`, when it has no override
 * (the caller knows: `overriddenKeys`, so its row was not moved): its row made from its id and its series' document
 * (`Lasting`), its values written into the document's list form (`listed`: with the page's terms) without a statement
 * or a record. Undefined when it cannot be made so (then its row is read and the item made from it: below).
 */
export function unchangedItem(ctx: AppContext, listed: ListedDocument, document: EventDocument, id: string): SerializedPieces<Event> | undefined {
  const kept = keptOf(ctx)
  const { template, record } = templateFor(kept, document)
  if (template === null) return undefined
  const edits = unchangedEdits(template, id)
  if (edits === undefined) return undefined
  const item = itemOf(ctx, kept, listed, document, template, record, edits, () => rowOf(template, id), 'id')
  if (item !== undefined) fromIds++
  return item
}

/**
 * The list item of `occurrence` (not overridden) of the series whose stored document is `document`, made from the
 * document (`listed`: its list form with the page's terms), or undefined when it cannot be (then from the record).
 */
export function occurrenceFromDocument(ctx: AppContext, listed: ListedDocument, document: EventDocument, occurrence: OccurrenceState): SerializedPieces<Event> | undefined {
  const kept = keptOf(ctx)
  const { template, record } = templateFor(kept, document)
  if (template === null) return undefined
  return itemOf(ctx, kept, listed, document, template, record, editsFor(template, occurrence), () => occurrence, 'row')
}

/**
 * The list item `edits` make of `document` for `occurrence`; the first of each kind (all-day or timed, edits made from a
 * row read or from the occurrence's id: `maker`) an app makes is checked the long way.
 */
function itemOf(ctx: AppContext, kept: Kept, listed: ListedDocument, document: EventDocument, template: Template, parsed: Event | undefined,
  edits: BodyEdit[], occurrence: () => OccurrenceState | undefined, maker: 'row' | 'id'): SerializedPieces<Event> | undefined {
  let record = parsed
  const pieces = listed(document, edits)
  const kind = `${maker} ${template.series.all_day}`
  if (!kept.checked.has(kind)) {
    // The first occurrence of its kind (all-day or timed) this app makes from a document, made the long way too: from
    // the document's record (what an anonymous caller is shown of the series, its terms' arrays empty as in the
    // document) without its JSON-LD, through `occurrenceRecord` and the Event serializer. The same bytes say that the
    // values put in are written as the serializer writes them and that nothing else of the record changes with the
    // occurrence; that each template's places hold its series' own values as so written is checked when it is made.
    record ??= JSON.parse(document.body.toString('utf8')) as Event
    const { json_ld: _ld, ...series } = record
    const state = occurrence()
    if (state === undefined) return undefined
    const expected = ctx.json.event(occurrenceRecord(series, state, null))
    const first = listed({ ...document, categoryIds: [], tagIds: [] }, edits)
    if (!Buffer.concat(first).equals(expected)) {
      kept.byId.set(document.id, null)
      return undefined
    }
    kept.checked.add(kind)
  }
  made++
  return pieces
}
