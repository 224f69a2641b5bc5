/**
 * The bytes a series' occurrence puts into its series' stored document in an anonymous list (issue 45,
 * handlers/occurrence-list-items.ts): its dates block (`"start_date"` … `"utc_end_date_details":{…}`), its
 * `timezone_abbr` and its `occurrence`, written as the Event serializer writes what `occurrenceRecord` makes
 * (lib/occurrence-view.ts), from the dates as numbers. Written straight into bytes: made as strings (the dates
 * formatted, their details, the blocks joined, then encoded), a list page of occurrences made some 40 kB of
 * garbage a request, a third of what a random filtered list with series made more than one without.
 */
import { DAY, SECOND } from './time-zones.js'

/** An occurrence's dates, each in ms of whole seconds: its wall start and end (as its record shows them), its UTC start and end. */
export interface OccurrenceDates {
  startWall: number
  endWall: number
  startUtc: number
  endUtc: number
}

/** The occurrence's bytes, one buffer: its dates block up to `datesEnd`, its abbreviation's JSON up to `abbrEnd`, its `occurrence` JSON after. */
export interface OccurrenceBytes {
  bytes: Buffer
  datesEnd: number
  abbrEnd: number
}

/**
 * Where the values of the members the bytes hold are in them (`[from, to)` in turn, in lib/occurrence-view.ts
 * `OCCURRENCE_KEYS`' order: the dates and their details, the abbreviation, `occurrence`; then `occurrence`'s
 * `original_start_date` and `original_utc_start_date`), as the last `occurrenceBytes` wrote them (read before the next call).
 */
export const valueSpans = new Int32Array(24)

/** Where the bytes are written before they are copied out at their length (an occurrence's take some 700). */
const scratch = Buffer.allocUnsafe(16 * 1024)

/** Room kept for what is not its URL: the dates block (at most 8 × 70), the abbreviation, `occurrence`'s other keys and values. */
const ROOM = 2048

/** The calendar fields of the last date split (`fieldsOf`): year, month, day, hour, minutes, seconds. */
const fields = new Int32Array(6)

/** The UTC calendar fields of `ms` into `fields` (proleptic Gregorian, as `Date`'s: days from 1970 to civil dates, H. Hinnant's algorithm). */
function fieldsOf(ms: number): void {
  const days = Math.floor(ms / DAY)
  const secondOfDay = Math.floor((ms - days * DAY) / SECOND)
  const z = days + 719468
  const era = Math.floor(z / 146097)
  const dayOfEra = z - era * 146097
  const yearOfEra = Math.floor((dayOfEra - Math.floor(dayOfEra / 1460) + Math.floor(dayOfEra / 36524) - Math.floor(dayOfEra / 146096)) / 365)
  const dayOfYear = dayOfEra - (365 * yearOfEra + Math.floor(yearOfEra / 4) - Math.floor(yearOfEra / 100))
  const shifted = Math.floor((5 * dayOfYear + 2) / 153)
  const month = shifted < 10 ? shifted + 3 : shifted - 9
  fields[0] = yearOfEra + era * 400 + (month <= 2 ? 1 : 0)
  fields[1] = month
  fields[2] = dayOfYear - Math.floor((153 * shifted + 2) / 5) + 1
  fields[3] = Math.floor(secondOfDay / 3600)
  fields[4] = Math.floor((secondOfDay % 3600) / 60)
  fields[5] = secondOfDay % 60
}

/** ASCII `text` at `at` (written by character: short texts, where a native write costs more than it copies); where it ends. */
function text(at: number, value: string): number {
  for (let i = 0; i < value.length; i++) scratch[at + i] = value.charCodeAt(i)
  return at + value.length
}

/** `n` (0 ≤ n < 10,000) in `width` digits at least, zeros before. */
function digits(at: number, n: number, width: number): number {
  const length = Math.max(width, n >= 1000 ? 4 : n >= 100 ? 3 : n >= 10 ? 2 : 1)
  let rest = n
  for (let i = length - 1; i >= 0; i--) {
    scratch[at + i] = 48 + (rest % 10)
    rest = Math.floor(rest / 10)
  }
  return at + length
}

/** The dates of the block, in order: what comes before each one's text, and between it and its details' first value. */
const NAMES = ['start_date', 'end_date', 'utc_start_date', 'utc_end_date'].map((name) => [`"${name}":"`, `","${name}_details":{"year":`] as const)

/** `"<name>":"YYYY-MM-DD HH:MM:SS","<name>_details":{"year":…,"seconds":…}` of `ms` (`name`: the `NAMES` entry), as `dateDetails` and the serializer write them. */
function date(at: number, name: number, ms: number): number {
  fieldsOf(ms)
  const [before, between] = NAMES[name] as readonly [string, string]
  let to = text(at, before)
  valueSpans[4 * name] = to - 1
  to = digits(to, fields[0] as number, 4)
  scratch[to++] = 0x2d
  to = digits(to, fields[1] as number, 2)
  scratch[to++] = 0x2d
  to = digits(to, fields[2] as number, 2)
  scratch[to++] = 0x20
  to = digits(to, fields[3] as number, 2)
  scratch[to++] = 0x3a
  to = digits(to, fields[4] as number, 2)
  scratch[to++] = 0x3a
  to = digits(to, fields[5] as number, 2)
  valueSpans[4 * name + 1] = to + 1
  to = text(to, between)
  valueSpans[4 * name + 2] = to - 8
  to = digits(to, fields[0] as number, 1)
  to = text(to, ',"month":')
  to = digits(to, fields[1] as number, 1)
  to = text(to, ',"day":')
  to = digits(to, fields[2] as number, 1)
  to = text(to, ',"hour":')
  to = digits(to, fields[3] as number, 1)
  to = text(to, ',"minutes":')
  to = digits(to, fields[4] as number, 1)
  to = text(to, ',"seconds":')
  to = digits(to, fields[5] as number, 1)
  scratch[to++] = 0x7d
  valueSpans[4 * name + 3] = to
  return to
}

/** `YYYY-MM-DD HH:MM:SS` of `ms` (copied from what `date` wrote at `from`: the text after `"<name>":"`). */
function copyText(at: number, from: number): number {
  scratch.copy(scratch, at, from, from + 19)
  return at + 19
}

/**
 * The bytes of an unchanged occurrence (`overridden: false`) with `dates` (years 0001–9999), its abbreviation as JSON
 * (`abbrJson`), its id (`YYYYMMDDTHHMMSSZ` or `YYYYMMDD`: nothing to escape) and its URL up to the id (`urlJson`: the
 * series' URL and `/occurrences/` as JSON without the closing quote); undefined when they do not fit.
 */
export function occurrenceBytes(dates: OccurrenceDates, abbrJson: Buffer, id: string, urlJson: Buffer): OccurrenceBytes | undefined {
  if (ROOM + abbrJson.length + urlJson.length + 2 * id.length > scratch.length) return undefined
  const startWallAt = 14
  let at = date(0, 0, dates.startWall)
  scratch[at++] = 0x2c
  at = date(at, 1, dates.endWall)
  scratch[at++] = 0x2c
  const startUtcAt = at + 18
  at = date(at, 2, dates.startUtc)
  scratch[at++] = 0x2c
  at = date(at, 3, dates.endUtc)
  const datesEnd = at
  at += abbrJson.copy(scratch, at)
  const abbrEnd = at
  at = text(at, '{"id":"')
  at = text(at, id)
  at = text(at, '","original_start_date":"')
  valueSpans[20] = at - 1
  at = copyText(at, startWallAt)
  valueSpans[21] = at + 1
  at = text(at, '","original_utc_start_date":"')
  valueSpans[22] = at - 1
  at = copyText(at, startUtcAt)
  valueSpans[23] = at + 1
  at = text(at, '","overridden":false,"rest_url":')
  at += urlJson.copy(scratch, at)
  at = text(at, id)
  at = text(at, '"}')
  valueSpans[16] = datesEnd
  valueSpans[17] = abbrEnd
  valueSpans[18] = abbrEnd
  valueSpans[19] = at
  const bytes = Buffer.allocUnsafe(at)
  scratch.copy(bytes, 0, 0, at)
  return { bytes, datesEnd, abbrEnd }
}

/** Abbreviations as JSON, by abbreviation (a site's zones have few). */
const abbreviations = new Map<string, Buffer>()

/** `JSON.stringify(abbreviation)` as bytes, kept (boundedly). */
export function abbreviationJson(abbreviation: string): Buffer {
  let json = abbreviations.get(abbreviation)
  if (json === undefined) {
    if (abbreviations.size >= 1024) abbreviations.clear()
    abbreviations.set(abbreviation, (json = Buffer.from(JSON.stringify(abbreviation))))
  }
  return json
}

/** Where `datesJson` writes (its answer is a view of it). */
const datesScratch = Buffer.allocUnsafe(1024)

/** The spans of `valueSpans` `datesJson` writes, in http/etag.ts `unchangedOccurrenceDates`' order (the first of each pair). */
const DATES_SPANS = [0, 4, 8, 12, 16, 20, 22]

/**
 * `prefix` and then the JSON array of the occurrence's dates, abbreviation and original start (wall, UTC) as `bytes`
 * (the last `occurrenceBytes`' answer) holds them (`valueSpans`): the text http/etag.ts `occurrenceEtag` digests of an
 * occurrence without an override (`unchangedOccurrenceDates`); a view valid until the next call. Undefined when it
 * does not fit.
 */
export function datesJson(prefix: string, bytes: Buffer): Buffer | undefined {
  const out = datesScratch
  let length = prefix.length + 8
  for (const i of DATES_SPANS) length += (valueSpans[i + 1] as number) - (valueSpans[i] as number)
  if (length > out.length) return undefined
  // The prefix (an ETag and an occurrence id: ASCII) by character, the values from where `occurrenceBytes` wrote them.
  let at = 0
  for (let i = 0; i < prefix.length; i++) {
    const c = prefix.charCodeAt(i)
    if (c >= 0x80) return undefined
    out[at++] = c
  }
  out[at++] = 0x5b
  for (let n = 0; n < DATES_SPANS.length; n++) {
    const i = DATES_SPANS[n] as number
    if (n > 0) out[at++] = 0x2c
    at += bytes.copy(out, at, valueSpans[i] as number, valueSpans[i + 1] as number)
  }
  out[at++] = 0x5d
  return out.subarray(0, at)
}

/**
 * The JSON-LD's `startDate` and `endDate` (lib/json-ld.ts `jsonLdDates`) of the occurrence `bytes` (the last
 * `occurrenceBytes`' answer) holds, as JSON strings, one after the other in one buffer (the first `startLength` bytes
 * the start's): an all-day occurrence's days, else its wall times with `T` and their offsets (`startOffset`,
 * `endOffset`: `+HH:MM`, whole minutes, the offsets the wall times were made with).
 */
export function jsonLdBytes(bytes: Buffer, allDay: boolean, startOffset: string, endOffset: string): { ld: Buffer; startLength: number } {
  const startAt = (valueSpans[0] as number) + 1
  const endAt = (valueSpans[4] as number) + 1
  const length = allDay ? 12 : 21 + startOffset.length
  const ld = Buffer.allocUnsafe(allDay ? 24 : 42 + startOffset.length + endOffset.length)
  let at = 0
  for (const [from, offset] of [[startAt, startOffset], [endAt, endOffset]] as const) {
    ld[at++] = 0x22
    at += bytes.copy(ld, at, from, from + (allDay ? 10 : 19))
    if (!allDay) {
      ld[at - 9] = 0x54
      at += ld.write(offset, at, 'latin1')
    }
    ld[at++] = 0x22
  }
  return { ld, startLength: length }
}
