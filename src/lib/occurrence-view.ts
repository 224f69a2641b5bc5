/**
 * "The record for an occurrence" (CONTRACT §17): the event record as it stands for one occurrence of its
 * series, the one function every list item, `/events/{id}/occurrences` and each occurrence route shows.
 * Its dates are the occurrence's (moved by its override if any), with everything a record derives from
 * them (`*_details`, `timezone_abbr`); its override's fields replace the series' (title, description,
 * excerpt, cost and `cost_details`, website, venues, organizers); and `occurrence` says which it is. `id`,
 * `rest_url` and `recurrence` stay the series'. A single event's one occurrence is its own row.
 */
import type { Event } from '../contract.js'
import { costDetails } from './cost.js'
import { dateDetails, utcToWall, wallToUtc } from './dates.js'
import { parseOccurrenceId } from './recurrence.js'
import { tzAbbreviation } from './tz-abbreviation.js'

/**
 * The members `occurrenceRecord` changes in its series' record for an occurrence without an override, in the
 * record's order (every other member is the series'): what an occurrence's ETag names besides the series' ETag
 * (http/etag.ts `occurrenceEtag`, from the texts they are made of), and what its read from the series' document puts
 * in (handlers/occurrence-documents.ts).
 */
export const OCCURRENCE_KEYS = ['start_date', 'start_date_details', 'end_date', 'end_date_details', 'utc_start_date', 'utc_start_date_details',
  'utc_end_date', 'utc_end_date_details', 'timezone_abbr', 'occurrence'] as const satisfies ReadonlyArray<keyof Event>

/** An occurrence as its row holds it: its id and its dates as they stand (UTC; moved ones too). */
export interface OccurrenceState {
  id: string
  startUtc: string
  endUtc: string
}

/**
 * The changes of one occurrence (`event_overrides`): undefined or null fields are not changed. The wall
 * dates, when given, are the moved dates in the event's zone (else derived from the instants).
 */
export interface OccurrenceOverride {
  title?: string | null
  description?: string | null
  excerpt?: string | null
  startDate?: string | null
  endDate?: string | null
  startUtc?: string | null
  endUtc?: string | null
  cost?: string | null
  website?: string | null
  /** The venues and organizers it shows instead of the series' (records as the event shows them). */
  venue?: Event['venue'] | null
  organizer?: Event['organizer'] | null
}

/** The occurrence's original start: its wall time in the event's zone and its UTC instant (from its id). */
export function originalStart(id: string, timezone: string, allDay: boolean): { wall: string; utc: string } | undefined {
  const parsed = parseOccurrenceId(id, allDay)
  if (parsed === null) return undefined
  if ('day' in parsed) {
    const wall = `${parsed.day} 00:00:00`
    return { wall, utc: wallToUtc(wall, timezone) }
  }
  return { wall: utcToWall(parsed.startUtc, timezone), utc: parsed.startUtc }
}

const DAY_MS = 86_400_000

/** Whole days from one `YYYY-MM-DD…` to another. */
function daysBetween(from: string, to: string): number {
  return Math.round((Date.parse(`${to.slice(0, 10)}T00:00:00Z`) - Date.parse(`${from.slice(0, 10)}T00:00:00Z`)) / DAY_MS)
}

function addDays(day: string, n: number): string {
  return new Date(Date.parse(`${day.slice(0, 10)}T00:00:00Z`) + n * DAY_MS).toISOString().slice(0, 10)
}

/**
 * The record of `series` (as the caller is shown it) for `occurrence`, with its override applied.
 * `occurrence.startUtc`/`endUtc` are the row's (an override's moved dates already in them).
 */
export function occurrenceRecord(series: Event, occurrence: OccurrenceState, override: OccurrenceOverride | null): Event {
  const tz = series.timezone
  const original = originalStart(occurrence.id, tz, series.all_day)
  let startWall: string
  let endWall: string
  if (override?.startDate != null && override.endDate != null) {
    startWall = override.startDate
    endWall = override.endDate
  } else if (series.all_day && original !== undefined && occurrence.startUtc === original.utc) {
    // An all-day occurrence where the rule put it: its days, as long as the first's.
    startWall = original.wall
    endWall = `${addDays(original.wall, daysBetween(series.start_date, series.end_date))} 23:59:59`
  } else {
    startWall = utcToWall(occurrence.startUtc, tz)
    endWall = utcToWall(occurrence.endUtc, tz)
  }
  const record: Event = {
    ...series,
    start_date: startWall,
    start_date_details: dateDetails(startWall),
    end_date: endWall,
    end_date_details: dateDetails(endWall),
    utc_start_date: occurrence.startUtc,
    utc_start_date_details: dateDetails(occurrence.startUtc),
    utc_end_date: occurrence.endUtc,
    utc_end_date_details: dateDetails(occurrence.endUtc),
    timezone_abbr: tzAbbreviation(tz, occurrence.startUtc),
    occurrence: {
      id: occurrence.id,
      original_start_date: original?.wall ?? startWall,
      original_utc_start_date: original?.utc ?? occurrence.startUtc,
      overridden: override !== null,
      rest_url: `${series.rest_url}/occurrences/${occurrence.id}`,
    },
  }
  if (override === null) return record
  if (override.title != null) record.title = override.title
  if (override.description != null) record.description = override.description
  if (override.excerpt != null) record.excerpt = override.excerpt
  if (override.cost != null) {
    record.cost = override.cost
    record.cost_details = costDetails(override.cost)
  }
  if (override.website != null) record.website = override.website
  if (override.venue != null) record.venue = override.venue
  if (override.organizer != null) record.organizer = override.organizer
  return record
}
