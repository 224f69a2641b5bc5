/**
 * Reading iCalendar feeds in tests with an independent parser (ical.js, Mozilla's): the VEVENTs of a
 * feed with their VTIMEZONEs registered, so that a DTSTART with a TZID converts to its instant by the
 * feed's own definitions; and the checks of the text itself (CRLF, lines of at most 75 octets, no
 * UTF-8 sequence split by folding).
 */
import ICAL from 'ical.js'

export interface ParsedFeed {
  calendar: ICAL.Component
  events: ICAL.Component[]
  /** The VEVENT whose UID starts with `<id>@`. */
  event(id: number): ICAL.Component
}

export function parseFeed(text: string): ParsedFeed {
  const calendar = new ICAL.Component(ICAL.parse(text))
  for (const zone of calendar.getAllSubcomponents('vtimezone')) ICAL.TimezoneService.register(zone)
  const events = calendar.getAllSubcomponents('vevent')
  return {
    calendar,
    events,
    event(id) {
      const found = events.find((e) => String(e.getFirstPropertyValue('uid')).startsWith(`${id}@`))
      if (found === undefined) throw new Error(`no VEVENT for event ${id}`)
      return found
    },
  }
}

/** A property's value as text (`undefined` when absent). */
export function text(component: ICAL.Component, name: string): string | undefined {
  const value = component.getFirstPropertyValue(name)
  return value === null ? undefined : String(value)
}

/** A DATE-TIME or DATE property as ical.js reads it. */
export function time(component: ICAL.Component, name: string): ICAL.Time {
  const value = component.getFirstPropertyValue(name)
  if (!(value instanceof ICAL.Time)) throw new Error(`${name} is not a date or date-time`)
  return value
}

/** `YYYY-MM-DD HH:MM:SS` of a time's own fields (its wall time in its zone). */
export function wall(t: ICAL.Time): string {
  const p = (n: number) => String(n).padStart(2, '0')
  return `${t.year}-${p(t.month)}-${p(t.day)} ${p(t.hour)}:${p(t.minute)}:${p(t.second)}`
}

/** The UTC instant of a time, `YYYY-MM-DD HH:MM:SS`. */
export function utcOf(t: ICAL.Time): string {
  return new Date(t.toUnixTime() * 1000).toISOString().slice(0, 19).replace('T', ' ')
}

/** What is wrong with the physical lines of a feed (empty when nothing). */
export function lineProblems(raw: Buffer): string[] {
  const problems: string[] = []
  const textOf = raw.toString('latin1')
  if (!textOf.endsWith('\r\n')) problems.push('the feed does not end with CRLF')
  if (/[^\r]\n/.test(textOf) || /\r(?!\n)/.test(textOf)) problems.push('a line ending other than CRLF')
  const decoder = new TextDecoder('utf-8', { fatal: true })
  let start = 0
  let n = 0
  while (start < raw.length) {
    let end = raw.indexOf('\r\n', start)
    if (end < 0) end = raw.length
    n += 1
    const line = raw.subarray(start, end)
    if (line.length > 75) problems.push(`line ${n} has ${line.length} octets`)
    try {
      decoder.decode(line)
    } catch {
      problems.push(`line ${n} splits a UTF-8 sequence`)
    }
    start = end + 2
  }
  return problems
}
