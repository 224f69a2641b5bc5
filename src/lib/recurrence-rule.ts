/**
 * The RRULE subset a recurring event may carry (CONTRACT §17): parsed and checked part by part, every
 * refusal named. Supported: FREQ (DAILY, WEEKLY, MONTHLY, YEARLY), INTERVAL, COUNT, UNTIL, BYDAY (ordinals
 * for monthly and yearly rules), BYMONTHDAY (negative too), BYMONTH, BYSETPOS, WKST. The expansion is
 * recurrence.ts's.
 */

export const WEEKDAYS = ['MO', 'TU', 'WE', 'TH', 'FR', 'SA', 'SU'] as const
export type Weekday = (typeof WEEKDAYS)[number]

export type Frequency = 'DAILY' | 'WEEKLY' | 'MONTHLY' | 'YEARLY'

/** Where a rule ends, as written: an instant (`…Z`), a wall time in the event's zone, or a local day. */
export type Until =
  | { kind: 'instant'; ms: number }
  | { kind: 'wall'; ms: number }
  | { kind: 'day'; ms: number }

export interface ByDay {
  /** The ordinal (`1SU`, `-1FR`), or undefined for every such weekday of the period. */
  ordinal?: number
  weekday: Weekday
}

export interface Rule {
  /** The rule as it is returned: as sent, parts and values upper-cased. */
  text: string
  freq: Frequency
  interval: number
  count?: number
  until?: Until
  byDay?: ByDay[]
  byMonthDay?: number[]
  byMonth?: number[]
  bySetPos?: number[]
  wkst?: Weekday
}

/** Why a rule is refused; the handler answers each with 400 naming `recurrence`. */
export type RuleRefusal =
  | 'malformedRule' // not `PART=VALUE` parts joined by `;`
  | 'missingFrequency'
  | 'finerFrequency' // HOURLY, MINUTELY, SECONDLY
  | 'unsupportedPart' // BYHOUR, BYMINUTE, BYSECOND, BYWEEKNO, BYYEARDAY, RSCALE, SKIP
  | 'unknownPart'
  | 'repeatedPart'
  | 'malformedValue'
  | 'partNotForFrequency' // BYMONTHDAY in a weekly rule, an ordinal BYDAY in a daily or weekly one
  | 'bySetPosAlone' // BYSETPOS without another BY part (RFC 5545 §3.3.10)
  | 'countWithUntil'
  | 'tooManyOccurrences' // a COUNT over the series limit

/** The most occurrences a series may have (CONTRACT §17; sabre/vobject's anti-abuse cap too). */
export const MAX_OCCURRENCES = 3500

/** The largest INTERVAL: keeps every period the expansion visits within Temporal's years. */
export const MAX_INTERVAL = 10000

const SUPPORTED = new Set(['FREQ', 'INTERVAL', 'COUNT', 'UNTIL', 'BYDAY', 'BYMONTHDAY', 'BYMONTH', 'BYSETPOS', 'WKST'])
const UNSUPPORTED = new Set(['BYHOUR', 'BYMINUTE', 'BYSECOND', 'BYWEEKNO', 'BYYEARDAY', 'RSCALE', 'SKIP'])
const FINER = new Set(['HOURLY', 'MINUTELY', 'SECONDLY'])
const FREQUENCIES = new Set<string>(['DAILY', 'WEEKLY', 'MONTHLY', 'YEARLY'])

const PART_RE = /^([A-Z0-9-]+)=(.*)$/
const INTEGER_RE = /^[+-]?\d{1,9}$/
const POSITIVE_RE = /^\d{1,9}$/
const BYDAY_RE = /^([+-]?\d{1,2})?(MO|TU|WE|TH|FR|SA|SU)$/
const UNTIL_RE = /^(\d{4})(\d{2})(\d{2})(?:T(\d{2})(\d{2})(\d{2})(Z)?)?$/

/** Fields → ms as if UTC, or null when out of range (years 0001–9999, real days). */
export function fieldsMs(year: number, month: number, day: number, hour = 0, minute = 0, second = 0): number | null {
  if (year < 1 || year > 9999 || month < 1 || month > 12 || day < 1 || hour > 23 || minute > 59 || second > 59) return null
  const d = new Date(0)
  d.setUTCFullYear(year, month - 1, day)
  d.setUTCHours(hour, minute, second, 0)
  return d.getUTCDate() === day && d.getUTCMonth() === month - 1 ? d.getTime() : null
}

/** A comma list of integers, each accepted by `ok`, or null. */
function integers(value: string, ok: (n: number) => boolean): number[] | null {
  const items = value.split(',')
  const out: number[] = []
  for (const item of items) {
    if (!INTEGER_RE.test(item)) return null
    const n = Number(item)
    if (!ok(n)) return null
    out.push(n)
  }
  return out
}

function parseUntil(value: string): Until | null {
  const m = UNTIL_RE.exec(value)
  if (m === null) return null
  const [year, month, day] = [Number(m[1]), Number(m[2]), Number(m[3])]
  if (m[4] === undefined) {
    const ms = fieldsMs(year, month, day)
    return ms === null ? null : { kind: 'day', ms }
  }
  const ms = fieldsMs(year, month, day, Number(m[4]), Number(m[5]), Number(m[6]))
  if (ms === null) return null
  return { kind: m[7] === 'Z' ? 'instant' : 'wall', ms }
}

function parseByDay(value: string, freq: Frequency): ByDay[] | RuleRefusal {
  const out: ByDay[] = []
  for (const item of value.split(',')) {
    const m = BYDAY_RE.exec(item)
    if (m === null) return 'malformedValue'
    const weekday = m[2] as Weekday
    if (m[1] === undefined) {
      out.push({ weekday })
      continue
    }
    const ordinal = Number(m[1])
    const most = freq === 'MONTHLY' ? 5 : 53
    if (ordinal === 0 || Math.abs(ordinal) > most) return 'malformedValue'
    if (freq !== 'MONTHLY' && freq !== 'YEARLY') return 'partNotForFrequency'
    out.push({ ordinal, weekday })
  }
  return out
}

/**
 * Parses an RRULE value (without `RRULE:`) of the supported subset. Parts and values are taken
 * case-insensitively and returned upper-cased; nothing else is rewritten.
 */
export function parseRule(sent: string): Rule | RuleRefusal {
  const text = sent.toUpperCase()
  if (text === '') return 'malformedRule'
  const parts = new Map<string, string>()
  for (const part of text.split(';')) {
    const m = PART_RE.exec(part)
    if (m === null) return 'malformedRule'
    const [, name, value] = m as unknown as [string, string, string]
    if (parts.has(name)) return 'repeatedPart'
    if (UNSUPPORTED.has(name)) return 'unsupportedPart'
    if (!SUPPORTED.has(name)) return 'unknownPart'
    parts.set(name, value)
  }
  const freqText = parts.get('FREQ')
  if (freqText === undefined) return 'missingFrequency'
  if (FINER.has(freqText)) return 'finerFrequency'
  if (!FREQUENCIES.has(freqText)) return 'malformedValue'
  const freq = freqText as Frequency
  const rule: Rule = { text, freq, interval: 1 }
  for (const [name, value] of parts) {
    switch (name) {
      case 'INTERVAL': {
        if (!POSITIVE_RE.test(value)) return 'malformedValue'
        const n = Number(value)
        if (n < 1 || n > MAX_INTERVAL) return 'malformedValue'
        rule.interval = n
        break
      }
      case 'COUNT': {
        if (!POSITIVE_RE.test(value) || Number(value) < 1) return 'malformedValue'
        rule.count = Number(value)
        break
      }
      case 'UNTIL': {
        const until = parseUntil(value)
        if (until === null) return 'malformedValue'
        rule.until = until
        break
      }
      case 'BYDAY': {
        const byDay = parseByDay(value, freq)
        if (typeof byDay === 'string') return byDay
        rule.byDay = byDay
        break
      }
      case 'BYMONTHDAY': {
        const days = integers(value, (n) => n !== 0 && Math.abs(n) <= 31)
        if (days === null) return 'malformedValue'
        if (freq === 'WEEKLY') return 'partNotForFrequency'
        rule.byMonthDay = days
        break
      }
      case 'BYMONTH': {
        const months = integers(value, (n) => n >= 1 && n <= 12)
        if (months === null) return 'malformedValue'
        rule.byMonth = months
        break
      }
      case 'BYSETPOS': {
        const positions = integers(value, (n) => n !== 0 && Math.abs(n) <= 366)
        if (positions === null) return 'malformedValue'
        rule.bySetPos = positions
        break
      }
      case 'WKST': {
        if (!(WEEKDAYS as readonly string[]).includes(value)) return 'malformedValue'
        rule.wkst = value as Weekday
        break
      }
    }
  }
  if (rule.count !== undefined && rule.until !== undefined) return 'countWithUntil'
  if (rule.bySetPos !== undefined && rule.byDay === undefined && rule.byMonthDay === undefined && rule.byMonth === undefined) {
    return 'bySetPosAlone'
  }
  if (rule.count !== undefined && rule.count > MAX_OCCURRENCES) return 'tooManyOccurrences'
  return rule
}
