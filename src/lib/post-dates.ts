/**
 * The dates every event, venue and organizer carries (CONTRACT §5): its publication date, given as site
 * wall time (`date`) or UTC (`date_utc`; both together must name the same instant), else now; and the
 * time of its last change.
 */
import { formatUtc, parseBodyDate, utcToWall } from './dates.js'

export interface PublicationDates {
  date: string
  date_utc: string
}

/** A value with an explicit offset or `Z` names one instant; without, it is a wall time. */
const WITH_OFFSET = /[Tt ]\d{2}:\d{2}(:\d{2}([.,]\d+)?)?([Zz]|[+-]\d{2}(:?\d{2})?)$/

/**
 * Publication dates from `date` or `date_utc`, else `fallback` (now on create, the stored ones on an
 * update); `invalid` names the field that is not a date (or has no wall time in the site's zone), and
 * `date_utc` when both are sent and do not name the same instant (a wall time repeated by a DST change
 * names either of its instants).
 */
export function publicationDates(input: { date?: string; date_utc?: string }, siteTz: string, fallback: PublicationDates): PublicationDates | { invalid: 'date' | 'date_utc'; disagree?: true } {
  let utc: string | undefined
  if (input.date !== undefined) {
    utc = parseBodyDate(input.date, siteTz) ?? undefined
    if (utc === undefined) return { invalid: 'date' }
  }
  if (input.date_utc !== undefined) {
    const exact = parseBodyDate(input.date_utc, 'UTC') ?? undefined
    if (exact === undefined) return { invalid: 'date_utc' }
    if (utc !== undefined && input.date !== undefined && exact !== utc) {
      let wall: string | undefined
      try {
        wall = utcToWall(exact, siteTz)
      } catch {
        wall = undefined
      }
      if (WITH_OFFSET.test(input.date) || wall !== utcToWall(utc, siteTz)) return { invalid: 'date_utc', disagree: true }
    }
    utc = exact
  }
  if (utc === undefined) return fallback
  try {
    return { date: utcToWall(utc, siteTz), date_utc: utc }
  } catch {
    // An instant at the edge of years 0001–9999 with no wall time in the site's zone.
    return { invalid: input.date_utc !== undefined ? 'date_utc' : 'date' }
  }
}

/** Now, as publication dates. */
export function nowDates(now: Date, siteTz: string): PublicationDates {
  const utc = formatUtc(now)
  return { date: utcToWall(utc, siteTz), date_utc: utc }
}

/** The stamp of a change made now. */
export function modifiedNow(now: Date, siteTz: string): { modified: string; modified_utc: string } {
  const utc = formatUtc(now)
  return { modified: utcToWall(utc, siteTz), modified_utc: utc }
}
