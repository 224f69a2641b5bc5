/**
 * The dates an event write stores (CONTRACT §5): start and end parsed in the event's time zone (or at
 * their offset) and kept both as wall time and in UTC, all-day events widened to whole days, and an end
 * before the start refused on the merged record. The zone is IANA or `UTC±N`, spelled as sent.
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

/**
 * The zone a write names, exactly as sent (CONTRACT §2: `Asia/Kolkata` never becomes ICU's `Asia/Calcutta`);
 * null or empty means the site's; undefined when unknown.
 */
export function writtenTimezone(value: string | null, siteTz: string): string | undefined {
  if (value === null || value === '') return siteTz
  return isValidTimezone(value) ? value : undefined
}

/**
 * The dates to store for a body: all of them for a create (`current` undefined), none when an update
 * touches no date field, else the update merged with the `current` dates. A date sent is one instant
 * (parsed once, as the publication date is): with an offset or `Z` it is exact, even in a DST overlap;
 * only a wall time without offset is resolved in the zone. A date kept keeps its instant while the
 * zone stays; all-day dates and dates kept across a change of zone are wall times read in the zone.
 */
export function eventDates(body: DateFields, current: EventDates | undefined, siteTz: string): Partial<EventDates> | DateRefusal {
  const touched = body.timezone !== undefined || body.all_day !== undefined || body.start_date !== undefined || body.end_date !== undefined
  if (current !== undefined && !touched) return {}
  const timezone = body.timezone !== undefined ? writtenTimezone(body.timezone, siteTz) : current?.timezone ?? siteTz
  if (timezone === undefined) return { field: 'timezone', reason: 'invalidTimezone' }
  const allDay = body.all_day ?? (current?.all_day === true)
  const resolve = (field: 'start_date' | 'end_date'): { wall: string; utc: string } | DateRefusal => {
    const value = body[field]
    let wall: string
    let utc: string | undefined
    if (value !== undefined) {
      utc = parseBodyDate(value, timezone) ?? undefined
      if (utc === undefined) return { field, reason: 'invalidDate' }
      wall = utcToWall(utc, timezone)
    } else if (current === undefined) {
      return { field, reason: 'required' }
    } else {
      wall = current[field]
      if (timezone === current.timezone) utc = field === 'start_date' ? current.start_utc : current.end_utc
    }
    if (allDay) {
      const widened = `${wall.slice(0, 10)} ${field === 'start_date' ? '00:00:00' : '23:59:59'}`
      if (widened !== wall) utc = undefined
      wall = widened
    }
    if (utc === undefined) {
      try {
        utc = wallToUtc(wall, timezone)
      } catch {
        return { field, reason: 'invalidDate' }
      }
    }
    return { wall, utc }
  }
  const start = resolve('start_date')
  if ('reason' in start) return start
  const end = resolve('end_date')
  if ('reason' in end) return end
  if (end.utc < start.utc) return { field: 'end_date', reason: 'endBeforeStart' }
  return { timezone, all_day: allDay, start_date: start.wall, end_date: end.wall, start_utc: start.utc, end_utc: end.utc }
}
