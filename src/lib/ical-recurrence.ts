/**
 * A series' recurrence as iCalendar properties (CONTRACT §14, §17; RFC 5545 §3.8.5): RRULE, RDATE and
 * EXDATE for the VEVENT whose DTSTART carries the event's TZID (all-day series: dates), and the RECURRENCE-ID
 * of each VEVENT of a changed occurrence ({@link recurrenceId}); ical.ts writes them into feeds.
 *
 * RFC 5545 wants UNTIL in UTC when DTSTART has a TZID, and a DATE when DTSTART is one: an UNTIL written
 * otherwise is converted to the same bound (a wall time or a local day's end to its instant; for all-day
 * series, an instant or wall time to its local day). The dates follow the zone rule of the event's DTSTART
 * (ical.ts, `zoneId`): the TZID of the zone's VTIMEZONE, a fixed offset such as `UTC+2` included (its own
 * fixed-offset VTIMEZONE, `UTC+0200`); in UTC only for a zone without a definition (none that ICU knows).
 */
import { wallToUtc, utcToWall } from './dates.js'
import { DAY } from './time-zones.js'

/** `YYYY-MM-DD HH:MM:SS` → `YYYYMMDDTHHMMSS`; a day → `YYYYMMDD`. */
function basic(text: string): string {
  const day = text.slice(0, 10).replaceAll('-', '')
  return text.length === 10 ? day : `${day}T${text.slice(11, 19).replaceAll(':', '')}`
}

const fromBasic = (value: string): string =>
  `${value.slice(0, 4)}-${value.slice(4, 6)}-${value.slice(6, 8)} ${value.slice(9, 11) || '00'}:${value.slice(11, 13) || '00'}:${value.slice(13, 15) || '00'}`

/** The day after a `YYYY-MM-DD`. */
const nextDay = (day: string): string => new Date(Date.parse(`${day}T00:00:00Z`) + DAY).toISOString().slice(0, 10)

/** The rule with UNTIL as RFC 5545 wants it for this DTSTART. */
function ruleLine(rule: string, timezone: string, allDay: boolean): string {
  return rule.replace(/(^|;)UNTIL=([0-9TZ]+)/, (_, lead: string, until: string) => {
    const wall = fromBasic(until)
    let value: string
    if (allDay) {
      // Occurrences are days: the last local day the bound reaches.
      value = basic((until.endsWith('Z') ? utcToWall(wall, timezone) : wall).slice(0, 10))
    } else if (until.endsWith('Z')) {
      value = until
    } else if (until.length === 8) {
      // Every occurrence on that local day: up to the last second before the next day starts.
      const end = new Date(Date.parse(`${wallToUtc(`${nextDay(wall.slice(0, 10))} 00:00:00`, timezone).replace(' ', 'T')}Z`) - 1000)
      value = `${basic(end.toISOString().slice(0, 19).replace('T', ' '))}Z`
    } else {
      value = `${basic(wallToUtc(wall, timezone))}Z`
    }
    return `${lead}UNTIL=${value}`
  })
}

/**
 * RDATE or EXDATE: one property per value, in the series' TZID (or UTC, or as dates), those in a DST gap left out. RFC 5545 allows a
 * list in one property, but ical.js 2.2 reads only the first value of a list with a TZID as in that zone.
 */
function datesLines(name: 'RDATE' | 'EXDATE', values: readonly string[], timezone: string, tzid: string | undefined, allDay: boolean): string[] {
  if (allDay) return values.map((v) => `${name};VALUE=DATE:${basic(v)}`)
  // A wall time in a DST gap is no occurrence (CONTRACT §17: skipped, and an exdate there matches nothing), but a
  // reader takes it as the instant after the gap (RFC 5545 §3.3.5): such dates are left out of the feed.
  const real = values.filter((v) => utcToWall(wallToUtc(v, timezone), timezone) === v)
  if (tzid !== undefined) return real.map((v) => `${name};TZID=${tzid}:${basic(v)}`)
  return real.map((v) => `${name}:${basic(wallToUtc(v, timezone))}Z`)
}

/**
 * The RRULE, RDATE and EXDATE lines of a series (unfolded, without CRLF), for a VEVENT whose DTSTART is
 * written with `tzid` (undefined: in UTC) or as a date (`allDay`).
 */
export function recurrenceLines(recurrence: { rule: string | null; rdates: readonly string[]; exdates: readonly string[] }, timezone: string, tzid: string | undefined, allDay: boolean): string[] {
  return [
    ...(recurrence.rule === null ? [] : [`RRULE:${ruleLine(recurrence.rule, timezone, allDay)}`]),
    ...datesLines('RDATE', recurrence.rdates, timezone, tzid, allDay),
    ...datesLines('EXDATE', recurrence.exdates, timezone, tzid, allDay),
  ]
}

/** The RECURRENCE-ID of a changed occurrence: its original start, as the series' DTSTART is written. */
export function recurrenceId(original: { start: string; startUtc: string }, tzid: string | undefined, allDay: boolean): string {
  if (allDay) return `RECURRENCE-ID;VALUE=DATE:${basic(original.start.slice(0, 10))}`
  if (tzid !== undefined) return `RECURRENCE-ID;TZID=${tzid}:${basic(original.start)}`
  return `RECURRENCE-ID:${basic(original.startUtc)}Z`
}
