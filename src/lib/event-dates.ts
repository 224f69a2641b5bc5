/**
 * The dates an event write stores (CONTRACT §5): start and end parsed in the event's time zone (or at
 * their offset) and kept both as wall time and in UTC, all-day events widened to whole days, and an end
 * before the start refused on the merged record. The zone is IANA or `UTC±N`, in its canonical spelling.
 */
import { parseBodyDate, utcToWall, wallToUtc } from './dates.js'
import { isValidTimezone } from './time-zones.js'

/** The date fields of a write body. */
export interface DateFields {
  timezone?: string | null
  all_day?: boolean
  start_date?: string
  end_date?: string
}

export interface EventDates {
  timezone: string
  all_day: boolean
  /** Wall time in `timezone`. */
  start_date: string
  end_date: string
  start_utc: string
  end_utc: string
}

/** A field the dates refuse, and why (a message key of the contract). */
export interface DateRefusal {
  field: 'timezone' | 'start_date' | 'end_date'
  reason: 'invalidTimezone' | 'invalidDate' | 'required' | 'endBeforeStart'
}

/** The zone a write names, canonically spelled; null or empty means the site's; undefined when unknown. */
export function canonicalTimezone(value: string | null, siteTz: string): string | undefined {
  if (value === null || value === '') return siteTz
  if (!isValidTimezone(value)) return undefined
  if (/^UTC[+-]/i.test(value)) return `UTC${value.slice(3)}`
  return new Intl.DateTimeFormat('en-US', { timeZone: value }).resolvedOptions().timeZone
}

/**
 * The dates to store for a body: all of them for a create (`current` undefined), none when an update
 * touches no date field, else the update merged with the `current` dates.
 */
export function eventDates(body: DateFields, current: EventDates | undefined, siteTz: string): Partial<EventDates> | DateRefusal {
  const touched = body.timezone !== undefined || body.all_day !== undefined || body.start_date !== undefined || body.end_date !== undefined
  if (current !== undefined && !touched) return {}
  const timezone = body.timezone !== undefined ? canonicalTimezone(body.timezone, siteTz) : current?.timezone ?? siteTz
  if (timezone === undefined) return { field: 'timezone', reason: 'invalidTimezone' }
  const allDay = body.all_day ?? (current?.all_day === true)
  const wall = (field: 'start_date' | 'end_date'): string | DateRefusal => {
    const value = body[field]
    if (value !== undefined) {
      const utc = parseBodyDate(value, timezone)
      return utc === null ? { field, reason: 'invalidDate' } : utcToWall(utc, timezone)
    }
    return current === undefined ? { field, reason: 'required' } : current[field]
  }
  let start = wall('start_date')
  if (typeof start !== 'string') return start
  let end = wall('end_date')
  if (typeof end !== 'string') return end
  if (allDay) {
    start = `${start.slice(0, 10)} 00:00:00`
    end = `${end.slice(0, 10)} 23:59:59`
  }
  const utc = (field: 'start_date' | 'end_date', value: string): string | DateRefusal => {
    try {
      return wallToUtc(value, timezone)
    } catch {
      return { field, reason: 'invalidDate' }
    }
  }
  const startUtc = utc('start_date', start)
  if (typeof startUtc !== 'string') return startUtc
  const endUtc = utc('end_date', end)
  if (typeof endUtc !== 'string') return endUtc
  if (endUtc < startUtc) return { field: 'end_date', reason: 'endBeforeStart' }
  return { timezone, all_day: allDay, start_date: start, end_date: end, start_utc: startUtc, end_utc: endUtc }
}

