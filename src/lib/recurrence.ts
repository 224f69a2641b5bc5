/**
 * Recurring events (CONTRACT §17): a series' `recurrence` checked, its occurrences expanded, and the
 * occurrence ids that name them. The rule's periods and BY parts are rrule-temporal's, expanded on wall
 * times (floating, as if UTC); the time zone is applied here, with time-zones.ts like every other date of
 * the API, so that the contract's DST rules hold exactly: a local start in a gap is skipped and not
 * counted (COUNT counts real occurrences only), an ambiguous one is the first of its two instants
 * (RFC 5545 §3.3.5, §3.3.10). DTSTART, the event's own start, is always the first occurrence and counts.
 *
 * Every date string is `'YYYY-MM-DD HH:MM:SS'` (days `'YYYY-MM-DD'`), wall times in the event's zone or
 * instants in UTC, as in dates.ts. Plain functions: no state, no clock (the horizon is an argument).
 */
import { RRuleTemporal, type TemporalZonedDateTimeInput } from 'rrule-temporal'
import { pad, requireDateTimeMs } from './dates.js'
import { MAX_OCCURRENCES, WEEKDAYS, fieldsMs, parseRule, type Rule, type RuleRefusal, type Until } from './recurrence-rule.js'
import { DAY, SECOND, offsetFunction, utcMsToWallMs, wallMsToUtcMs, type OffsetAt } from './time-zones.js'

export { MAX_OCCURRENCES, parseRule, type Rule, type RuleRefusal } from './recurrence-rule.js'

/** A `recurrence` value as a body sends it. */
export interface RecurrenceInput {
  rule: string | null
  rdates?: string[]
  exdates?: string[]
}

/** A checked `recurrence`: returned as stored (rule upper-cased), with the parsed rule. */
export interface Recurrence {
  rule: string | null
  rdates: string[]
  exdates: string[]
  parsed: Rule | null
}

/** Why a `recurrence` or its expansion is refused; each is a 400 naming `recurrence`. */
export type RecurrenceRefusal =
  | RuleRefusal
  | 'malformedDate' // an rdate or exdate not in the event's form (all-day: `YYYY-MM-DD`)
  | 'tooManyDates' // over 1,000 rdates and exdates together
  | 'untilBeforeStart'
  | 'rdateBeforeStart' // an rdate before the event's own start, which is the first occurrence
  | 'noOccurrences' // every occurrence excluded
  | 'tooSparse' // a rule whose next occurrence is more periods away than the expansion visits

export interface Refused {
  refused: RecurrenceRefusal
}

/** The most rdates and exdates together. */
export const MAX_DATES = 1000

/** What the expansion needs of the event: its zone and first occurrence (DTSTART). */
export interface SeriesStart {
  /** IANA name or `UTC±H[:MM]`, as the API accepts (time-zones.ts). */
  timezone: string
  allDay: boolean
  /** Wall times in `timezone` (all-day: the first day's 00:00:00 and the last day's end). */
  start: string
  end: string
  /** The first occurrence's instants (UTC). */
  startUtc: string
  endUtc: string
}

export interface Occurrence {
  /** `YYYYMMDDTHHMMSSZ` (its original UTC start), all-day `YYYYMMDD` (its original local day). */
  id: string
  /** Wall times in the series' zone. */
  start: string
  end: string
  startUtc: string
  endUtc: string
}

const WALL_RE = /^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}$/
const DAY_RE = /^\d{4}-\d{2}-\d{2}$/
const LAST_MS = Date.UTC(9999, 11, 31, 23, 59, 59)

function msToString(ms: number): string {
  const d = new Date(ms)
  return (
    `${pad(d.getUTCFullYear(), 4)}-${pad(d.getUTCMonth() + 1)}-${pad(d.getUTCDate())} ` +
    `${pad(d.getUTCHours())}:${pad(d.getUTCMinutes())}:${pad(d.getUTCSeconds())}`
  )
}

/** A wall time or day of an rdate or exdate → wall ms, or null when not in the series' form. */
function datesMs(value: string, allDay: boolean): number | null {
  if (allDay ? !DAY_RE.test(value) : !WALL_RE.test(value)) return null
  const [y, mo, d, h, mi, s] = value.split(/[- :]/).map(Number) as [number, number, number, number?, number?, number?]
  return fieldsMs(y, mo, d, h, mi, s)
}

/**
 * Checks a `recurrence` value for an event that is all-day or not (CONTRACT §17): the rule's parts,
 * the forms of rdates and exdates, their number. Limits that need the event's dates are checked by
 * {@link expandSeries}.
 */
export function checkRecurrence(input: RecurrenceInput, allDay: boolean): Recurrence | Refused {
  const rdates = input.rdates ?? []
  const exdates = input.exdates ?? []
  if (rdates.length + exdates.length > MAX_DATES) return { refused: 'tooManyDates' }
  for (const value of [...rdates, ...exdates]) if (datesMs(value, allDay) === null) return { refused: 'malformedDate' }
  let parsed: Rule | null = null
  if (input.rule !== null) {
    const rule = parseRule(input.rule)
    if (typeof rule === 'string') return { refused: rule }
    parsed = rule
  }
  return { rule: parsed?.text ?? null, rdates, exdates, parsed }
}

/** An occurrence's start: its wall time in the zone and its instant, both as ms (dates.ts). */
interface Start {
  wallMs: number
  utcMs: number
}

/** Whether a start is within the rule's UNTIL, read as written (instant, wall time, or whole local day). */
function withinUntil(until: Until | undefined, start: Start): boolean {
  if (until === undefined) return true
  if (until.kind === 'instant') return start.utcMs <= until.ms
  if (until.kind === 'wall') return start.wallMs <= until.ms
  return start.wallMs < until.ms + DAY
}

/** Where the library may stop visiting periods: past UNTIL (a day's margin for offsets) or the horizon. */
function lastWallMs(rule: Rule, horizonWallMs: number | undefined): number {
  let last = LAST_MS
  if (rule.until !== undefined) last = rule.until.ms + 2 * DAY
  else if (rule.count === undefined && horizonWallMs !== undefined) last = horizonWallMs + 2 * DAY
  return Math.min(last, LAST_MS)
}

function floating(ms: number): TemporalZonedDateTimeInput {
  const text = `${msToString(ms).replace(' ', 'T')}+00:00[UTC]`
  return { timeZoneId: 'UTC', toString: () => text }
}

/**
 * The wall starts (ms) the rule makes after DTSTART (and from `fromWallMs`), in order, until `visit` returns
 * false or the periods end; false when the library gave up (more periods without an occurrence than it visits).
 */
function ruleWallStarts(rule: Rule, dtstartWallMs: number, lastMs: number, visit: (wallMs: number) => boolean, fromWallMs = dtstartWallMs): boolean {
  const expansion = new RRuleTemporal({
    freq: rule.freq,
    interval: rule.interval,
    dtstart: floating(dtstartWallMs),
    until: floating(lastMs),
    tzid: 'UTC',
    cache: false,
    ...(rule.byDay !== undefined ? { byDay: rule.byDay.map((d) => `${d.ordinal ?? ''}${d.weekday}`) } : {}),
    ...(rule.byMonthDay !== undefined ? { byMonthDay: rule.byMonthDay } : {}),
    ...(rule.byMonth !== undefined ? { byMonth: rule.byMonth } : {}),
    ...(rule.bySetPos !== undefined ? { bySetPos: rule.bySetPos } : {}),
    ...(rule.wkst !== undefined ? { wkst: rule.wkst } : {}),
  })
  const inYear = yearOrdinals(rule)
  // Windows that double in length: between() visits only the periods of its window, where all()
  // with a callback costs a second for ten years of dailies.
  let from = fromWallMs
  let span = 400 * DAY
  while (from <= lastMs) {
    const to = Math.min(from + span, lastMs)
    let dates
    try {
      dates = expansion.between(new Date(from), new Date(to), true)
    } catch (error) {
      if (error instanceof Error && /Maximum (iterations|candidate)/.test(error.message)) return false
      throw error
    }
    for (const date of dates) {
      const ms = date.epochMilliseconds
      if (ms > dtstartWallMs && ms >= from && (inYear === undefined || inYear(ms)) && !visit(ms)) return true
    }
    from = to + SECOND
    span *= 2
  }
  return true
}

/**
 * A yearly rule's BYDAY ordinals without BYMONTH count weekdays of the year (RFC 5545 §3.3.10): the library
 * carries a 53rd Monday of a year that has 52 into the next one (2027's "53MO" on 2028-01-03). The check
 * keeps a date only when one of the rule's BYDAY entries names it in its own year; undefined when no such
 * ordinal is in the rule.
 */
function yearOrdinals(rule: Rule): ((wallMs: number) => boolean) | undefined {
  if (rule.freq !== 'YEARLY' || rule.byMonth !== undefined || rule.byDay?.some((d) => d.ordinal !== undefined) !== true) return undefined
  const byDay = rule.byDay
  return (wallMs) => {
    const date = new Date(wallMs)
    const year = date.getUTCFullYear()
    const dayOfYear = Math.floor((wallMs - Date.UTC(year, 0, 1)) / DAY) + 1
    const daysInYear = Math.round((Date.UTC(year + 1, 0, 1) - Date.UTC(year, 0, 1)) / DAY)
    const weekday = WEEKDAYS[(date.getUTCDay() + 6) % 7]
    const fromStart = Math.floor((dayOfYear - 1) / 7) + 1
    const fromEnd = -(Math.floor((daysInYear - dayOfYear) / 7) + 1)
    return byDay.some((d) => d.weekday === weekday && (d.ordinal === undefined || d.ordinal === fromStart || d.ordinal === fromEnd))
  }
}

/** A wall start in the zone: its first instant, or null in a gap. */
function resolve(wallMs: number, offsetAt: OffsetAt, allDay: boolean): Start | null {
  const utcMs = wallMsToUtcMs(wallMs, offsetAt)
  // An all-day occurrence starts when its day does, past a gap at midnight.
  if (!allDay && utcMsToWallMs(utcMs, offsetAt) !== wallMs) return null
  return { wallMs, utcMs }
}

/** The id of an occurrence: `YYYYMMDDTHHMMSSZ` of its original UTC start, all-day `YYYYMMDD` of its day. */
export function formatOccurrenceId(startUtc: string, startWall: string, allDay: boolean): string {
  if (allDay) return startWall.slice(0, 10).replaceAll('-', '')
  return `${startUtc.slice(0, 10).replaceAll('-', '')}T${startUtc.slice(11).replaceAll(':', '')}Z`
}

/** An occurrence id's original start: a UTC instant (timed) or a local day (all-day); null when malformed. */
export function parseOccurrenceId(id: string, allDay: boolean): { startUtc: string } | { day: string } | null {
  const ms = occurrenceIdMs(id, allDay)
  if (ms === null) return null
  return allDay ? { day: msToString(ms).slice(0, 10) } : { startUtc: msToString(ms) }
}

/** An occurrence id's original start in ms: the UTC instant (timed), or the local day's midnight as if UTC (all-day); null when malformed. */
export function occurrenceIdMs(id: string, allDay: boolean): number | null {
  // `YYYYMMDD` or `YYYYMMDDTHHMMSSZ`, read by character (a read of one occurrence reads its id twice or so).
  if (id.length !== (allDay ? 8 : 16) || (!allDay && (id.charCodeAt(8) !== 0x54 || id.charCodeAt(15) !== 0x5a))) return null
  const year = idDigits(id, 0, 4)
  const month = idDigits(id, 4, 2)
  const day = idDigits(id, 6, 2)
  const hour = allDay ? 0 : idDigits(id, 9, 2)
  const minute = allDay ? 0 : idDigits(id, 11, 2)
  const second = allDay ? 0 : idDigits(id, 13, 2)
  if (year < 0 || month < 0 || day < 0 || hour < 0 || minute < 0 || second < 0) return null
  return fieldsMs(year, month, day, hour, minute, second)
}

/** The number the `width` digits of `id` at `at` write, or -1. */
function idDigits(id: string, at: number, width: number): number {
  let value = 0
  for (let i = at; i < at + width; i++) {
    const d = id.charCodeAt(i) - 48
    if (d < 0 || d > 9) return -1
    value = value * 10 + d
  }
  return value
}

/** How every occurrence of a series lasts: as long as the first (all-day: the same wall duration), in its zone. */
interface Lasting {
  allDay: boolean
  offsetAt: OffsetAt
  wallDuration: number
  exactDuration: number
}

/** The occurrences that start at `starts`, in order of UTC start then id; one that would end past the year 9999 (the last date the API can write) is not one. */
function occurrencesOf(starts: Iterable<Start>, { allDay, offsetAt, wallDuration, exactDuration }: Lasting): Occurrence[] {
  const occurrences: Occurrence[] = []
  for (const { wallMs, utcMs } of starts) {
    const endUtcMs = allDay ? wallMsToUtcMs(wallMs + wallDuration, offsetAt) : utcMs + exactDuration
    const endWallMs = allDay ? wallMs + wallDuration : utcMsToWallMs(endUtcMs, offsetAt)
    if (Math.max(endUtcMs, endWallMs) > LAST_MS) continue
    const start = msToString(wallMs)
    const startUtc = msToString(utcMs)
    occurrences.push({ id: formatOccurrenceId(startUtc, start, allDay), start, end: msToString(endWallMs), startUtc, endUtc: msToString(endUtcMs) })
  }
  return occurrences.sort((a, b) => (a.startUtc < b.startUtc ? -1 : a.startUtc > b.startUtc ? 1 : a.id < b.id ? -1 : a.id > b.id ? 1 : 0))
}

/**
 * Every occurrence of a series, in order of UTC start then id: DTSTART, the rule's occurrences (gaps
 * skipped and not counted; up to COUNT, UNTIL, or for a rule with neither, starts before `horizonUtc`),
 * the rdates (one in a DST gap skipped, as the rule's are), less the exdates (by
 * wall time; one that matches nothing changes nothing). Each lasts as long as the first (all-day: the
 * same wall duration). Refused past {@link MAX_OCCURRENCES}, with UNTIL before DTSTART, or when every
 * occurrence is excluded.
 */
export function expandSeries(series: SeriesStart, recurrence: Recurrence, horizonUtc: string): Occurrence[] | Refused {
  const offsetAt = offsetFunction(series.timezone)
  const allDay = series.allDay
  const startWallMs = requireDateTimeMs(series.start, 'series start')
  const startUtcMs = requireDateTimeMs(series.startUtc, 'series startUtc')
  const wallDuration = requireDateTimeMs(series.end, 'series end') - startWallMs
  const exactDuration = requireDateTimeMs(series.endUtc, 'series endUtc') - startUtcMs
  const horizonMs = requireDateTimeMs(horizonUtc, 'horizon')
  const rule = recurrence.parsed
  const first: Start = { wallMs: startWallMs, utcMs: startUtcMs }
  if (rule !== null && !withinUntil(rule.until, first)) return { refused: 'untilBeforeStart' }

  const excluded = new Set(recurrence.exdates.map((d) => datesMs(d, allDay)))
  const starts = new Map<number, Start>([[startWallMs, first]])
  // Past this many, exdates cannot bring the series back under the limit.
  const enough = MAX_OCCURRENCES + recurrence.exdates.length + 1
  const lastMs = rule === null ? 0 : lastWallMs(rule, utcMsToWallMs(horizonMs, offsetAt))
  if (rule !== null && rule.count !== 1 && lastMs > startWallMs) {
    let counted = 1
    const complete = ruleWallStarts(rule, startWallMs, lastMs, (wallMs) => {
      const start = resolve(wallMs, offsetAt, allDay)
      if (start === null) return true
      if (!withinUntil(rule.until, start)) return false
      if (rule.count === undefined && rule.until === undefined && start.utcMs >= horizonMs) return false
      starts.set(wallMs, start)
      counted++
      return counted < (rule.count ?? Infinity) && starts.size < enough
    })
    if (!complete) return { refused: 'tooSparse' }
  }
  for (const rdate of recurrence.rdates) {
    const wallMs = datesMs(rdate, allDay) as number
    // An rdate is an occurrence like the rule's: one whose local start does not exist (a DST gap) is skipped.
    const start = starts.has(wallMs) ? null : resolve(wallMs, offsetAt, allDay)
    // The event's own start is the first occurrence (CONTRACT §17): nothing comes before it.
    if (start !== null && start.utcMs < startUtcMs) return { refused: 'rdateBeforeStart' }
    if (start !== null) starts.set(wallMs, start)
  }
  for (const wallMs of excluded) if (wallMs !== null) starts.delete(wallMs)
  if (starts.size > MAX_OCCURRENCES) return { refused: 'tooManyOccurrences' }
  if (starts.size === 0) return { refused: 'noOccurrences' }

  return occurrencesOf(starts.values(), { allDay, offsetAt, wallDuration, exactDuration })
}

/** The occurrences that start in [fromUtc, toUtc): a page of the series, or what a horizon move adds. */
export function occurrencesBetween(occurrences: readonly Occurrence[], fromUtc: string, toUtc: string): Occurrence[] {
  return occurrences.filter((o) => o.startUtc >= fromUtc && o.startUtc < toUtc)
}

/**
 * The occurrences of a series that start in [fromUtc, toUtc), however many there are and however many came
 * before: what the horizon job (horizon.ts) adds when it moves an unbounded series' horizon from `fromUtc` to
 * `toUtc`. The rule's periods are visited from a couple of days before the window only (rrule-temporal's
 * `between` reads the periods of its window, whose phase it takes from DTSTART), so the cost follows the
 * window, not the series' age, and no limit applies (CONTRACT §17 limits what a write may ask, docs/recurrence.md).
 * Equal to `occurrencesBetween(expandSeries(…), fromUtc, toUtc)` where that is under the limit. A rule with a
 * COUNT is refused (its occurrences depend on every earlier one): bounded series have all their rows already.
 */
export function occurrencesInWindow(series: SeriesStart, recurrence: Recurrence, fromUtc: string, toUtc: string): Occurrence[] {
  const rule = recurrence.parsed
  if (rule?.count !== undefined) throw new Error('occurrencesInWindow: a rule with COUNT is expanded whole (expandSeries)')
  const offsetAt = offsetFunction(series.timezone)
  const allDay = series.allDay
  const startWallMs = requireDateTimeMs(series.start, 'series start')
  const startUtcMs = requireDateTimeMs(series.startUtc, 'series startUtc')
  const wallDuration = requireDateTimeMs(series.end, 'series end') - startWallMs
  const exactDuration = requireDateTimeMs(series.endUtc, 'series endUtc') - startUtcMs
  const fromMs = requireDateTimeMs(fromUtc, 'window start')
  const toMs = requireDateTimeMs(toUtc, 'window end')
  const inWindow = (utcMs: number) => utcMs >= fromMs && utcMs < toMs
  const starts = new Map<number, Start>()
  if (inWindow(startUtcMs)) starts.set(startWallMs, { wallMs: startWallMs, utcMs: startUtcMs })
  if (rule !== null && toMs > fromMs) {
    // Wall times are within a day of their instants: two days' margin either side.
    const fromWallMs = Math.max(startWallMs, utcMsToWallMs(fromMs, offsetAt) - 2 * DAY)
    const lastMs = Math.min(lastWallMs(rule, utcMsToWallMs(toMs, offsetAt)), utcMsToWallMs(toMs, offsetAt) + 2 * DAY)
    if (lastMs > fromWallMs) {
      ruleWallStarts(rule, startWallMs, lastMs, (wallMs) => {
        const start = resolve(wallMs, offsetAt, allDay)
        if (start === null) return true
        if (!withinUntil(rule.until, start)) return false
        if (inWindow(start.utcMs)) starts.set(wallMs, start)
        return true
      }, fromWallMs)
    }
  }
  for (const rdate of recurrence.rdates) {
    const wallMs = datesMs(rdate, allDay) as number
    const start = resolve(wallMs, offsetAt, allDay)
    if (start !== null && inWindow(start.utcMs) && !starts.has(wallMs)) starts.set(wallMs, start)
  }
  for (const exdate of recurrence.exdates) starts.delete(datesMs(exdate, allDay) as number)
  return occurrencesOf(starts.values(), { allDay, offsetAt, wallDuration, exactDuration })
}
