/**
 * VTIMEZONE definitions for iCalendar feeds, from timezones-ical-library (the IANA database compiled
 * into RFC 5545 components with the current DST rules as RRULEs), not written by hand. An event's zone
 * is named in a feed by the TZID of that definition, which for a legacy alias is the canonical name
 * (`Asia/Calcutta` → `Asia/Kolkata`), so that every TZID in a feed has its VTIMEZONE. A WordPress
 * manual offset (`UTC+2`, `UTC+5:30`, `UTC-3.5`), which the library does not know, has a fixed-offset
 * VTIMEZONE of its own, named by its offset (`UTC+0200`, `UTC+0530`: a TZID without `:`, which a
 * parameter value could not hold unquoted).
 */
import { tzlib_get_ical_block, tzlib_get_timezones } from 'timezones-ical-library'
import { canonicalZoneCase, manualOffsetMs } from './time-zones.js'

let known: ReadonlySet<string> | undefined
const blocks = new Map<string, { tzid: string; block: string } | null>()

function definition(zone: string): { tzid: string; block: string } | null {
  let found = blocks.get(zone)
  if (found !== undefined) return found
  known ??= new Set(list(tzlib_get_timezones()))
  // Asked only for zones it lists: for others the library logs an error and answers nothing.
  const answer = known.has(zone) ? tzlib_get_ical_block(zone) : ''
  const [block, tzidLine] = Array.isArray(answer) ? answer : []
  found = typeof block === 'string' && block !== '' && typeof tzidLine === 'string' && tzidLine.startsWith('TZID=')
    ? { tzid: tzidLine.slice('TZID='.length), block }
    : null
  blocks.set(zone, found)
  return found
}

function list(value: string[] | string): string[] {
  return Array.isArray(value) ? value : []
}

/**
 * The TZID that names `zone` in a feed, or undefined when it has no definition (write UTC). A zone is kept as
 * it was sent (`timezone` comes back as written), which ICU matches in any case (`europe/zurich`) and for
 * aliases the library does not list (`US/Pacific-New`): then the definition of the zone ICU resolves it to.
 */
export function zoneId(zone: string): string | undefined {
  const manual = manualOffsetMs(zone)
  if (manual !== null) return fixedTzid(manual)
  const found = definition(zone) ?? definition(icuName(zone, canonicalZoneCase)) ?? definition(icuName(zone, resolvedZone))
  return found?.tzid
}

/** The zone ICU takes `zone` for (its canonical name). */
function resolvedZone(zone: string): string {
  return new Intl.DateTimeFormat('en-US', { timeZone: zone }).resolvedOptions().timeZone
}

/** `name(zone)`, or `zone` when ICU knows no such zone. */
function icuName(zone: string, name: (zone: string) => string): string {
  try {
    return name(zone)
  } catch {
    return zone
  }
}

/** The VTIMEZONE component of a TZID given by `zoneId` (ical-generator's timezone generator). */
export function vtimezone(tzid: string): string | null {
  return fixedBlock(tzid) ?? definition(tzid)?.block ?? null
}

const FIXED = /^UTC([+-])(\d{2})(\d{2})$/

/** `UTC±HHMM` for an offset in ms. */
function fixedTzid(offsetMs: number): string {
  const minutes = Math.abs(offsetMs) / 60_000
  return `UTC${offsetMs < 0 ? '-' : '+'}${String(Math.floor(minutes / 60)).padStart(2, '0')}${String(minutes % 60).padStart(2, '0')}`
}

/** The VTIMEZONE of a fixed offset's TZID (`fixedTzid`): one STANDARD observance, never changing. */
function fixedBlock(tzid: string): string | null {
  const m = FIXED.exec(tzid)
  if (m === null) return null
  const offset = `${m[1] ?? '+'}${m[2] ?? '00'}${m[3] ?? '00'}`
  return ['BEGIN:VTIMEZONE', `TZID:${tzid}`, 'BEGIN:STANDARD', 'DTSTART:19700101T000000', `TZOFFSETFROM:${offset}`,
    `TZOFFSETTO:${offset}`, `TZNAME:${tzid}`, 'END:STANDARD', 'END:VTIMEZONE'].join('\r\n')
}
