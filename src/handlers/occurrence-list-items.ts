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
import { formatUtc } from '../lib/dates.js'
import { occurrenceRecord, type OccurrenceState } from '../lib/occurrence-view.js'
import { parseOccurrenceId } from '../lib/recurrence.js'
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
  /** How long each occurrence of a timed series lasts, in ms (its first's UTC end less its UTC start). */
  exactDuration: number
}

/** Templates kept per app, at most this many (the oldest made dropped first). */
const MAX_TEMPLATES = 4096
/** Per app: the templates by series id (null: its document cannot make occurrences), and the kinds checked (`all_day`). */
const templates = new WeakMap<AppContext, { byId: Map<number, Template | null>; checked: Set<boolean> }>()

/** Occurrences made from documents by this process (for the tests: that the path is taken). */
let made = 0
export function occurrencesMadeFromDocuments(): number {
  return made
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
  const exactDuration = Date.parse(`${record.utc_end_date.replace(' ', 'T')}Z`) - Date.parse(`${record.utc_start_date.replace(' ', 'T')}Z`)
  if (!Number.isFinite(exactDuration)) return null
  return { template: { body, series, dates: slots[0] as [number, number], abbr: slots[1] as [number, number], occurrence: slots[2] as [number, number], exactDuration }, record }
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
  checked: Set<boolean>
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
 * The row of an occurrence of a timed series that is not changed alone, from its id and its series' document, or
 * undefined (all-day series, or a document that makes no template): the start its id names, and the end as long
 * after it as the series' first lasts (lib/recurrence.ts `occurrencesOf`: timed occurrences last `exactDuration`).
 * The caller knows it has no override (`overriddenKeys`), so its row was not moved.
 */
export function unchangedOccurrence(ctx: AppContext, document: EventDocument, id: string): OccurrenceState | undefined {
  const { template } = templateFor(keptOf(ctx), document)
  if (template === null || template.series.all_day) return undefined
  const parsed = parseOccurrenceId(id, false)
  if (parsed === null || !('startUtc' in parsed)) return undefined
  const end = new Date(Date.parse(`${parsed.startUtc.replace(' ', 'T')}Z`) + template.exactDuration)
  try {
    return { id, startUtc: parsed.startUtc, endUtc: formatUtc(end) }
  } catch {
    return undefined
  }
}

/**
 * The list item of `occurrence` (not overridden) of the series whose stored document is `document`, made from the
 * document (`listed`: its list form with the page's terms), or undefined when it cannot be (then from the record).
 */
export function occurrenceFromDocument(ctx: AppContext, listed: ListedDocument, document: EventDocument, occurrence: OccurrenceState): SerializedPieces<Event> | undefined {
  const kept = keptOf(ctx)
  const { template, record: parsed } = templateFor(kept, document)
  let record = parsed
  if (template === null) return undefined
  const pieces = listed(document, editsFor(template, occurrence))
  if (!kept.checked.has(template.series.all_day)) {
    // The first occurrence of its kind (all-day or timed) this app makes from a document, made the long way too: from
    // the document's record (what an anonymous caller is shown of the series, its terms' arrays empty as in the
    // document) without its JSON-LD, through `occurrenceRecord` and the Event serializer. The same bytes say that the
    // values put in are written as the serializer writes them and that nothing else of the record changes with the
    // occurrence; that each template's places hold its series' own values as so written is checked when it is made.
    record ??= JSON.parse(document.body.toString('utf8')) as Event
    const { json_ld: _ld, ...series } = record
    const expected = ctx.json.event(occurrenceRecord(series, occurrence, null))
    const first = listed({ ...document, categoryIds: [], tagIds: [] }, editsFor(template, occurrence))
    if (!Buffer.concat(first).equals(expected)) {
      kept.byId.set(document.id, null)
      return undefined
    }
    kept.checked.add(template.series.all_day)
  }
  made++
  return pieces
}
