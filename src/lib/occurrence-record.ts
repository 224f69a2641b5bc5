/**
 * One occurrence of a series as a record (CONTRACT §17): the series' record as it stands for that
 * occurrence, with its dates (the override's when moved) and its own changes applied, and `occurrence`
 * naming it. `id`, `rest_url` and `recurrence` stay the series'. Pure: the override row and the records
 * of its venues and organizers are read by the caller.
 *
 * The occurrence's ETag is made from the series' ETag, the occurrence id and the override's version: any
 * change of the series or of this occurrence changes it.
 */
import { hash } from 'node:crypto'
import type { Event } from '../contract.js'
import { costDetails } from './cost.js'
import { dateDetails } from './dates.js'
import { tzAbbreviation } from './tz-abbreviation.js'

/** An occurrence's original dates, as the expansion gives them (wall times in the series' zone, and UTC). */
export interface OriginalOccurrence {
  id: string
  start: string
  end: string
  startUtc: string
  endUtc: string
}

/** The changes of one occurrence as `event_overrides` holds them (null: not changed). */
export interface OverrideColumns {
  title: string | null
  description: string | null
  excerpt: string | null
  start_date: string | null
  end_date: string | null
  start_utc: string | null
  end_utc: string | null
  cost: string | null
  website: string | null
  /** JSON arrays of ids, or null. */
  venues: string | null
  organizers: string | null
}

export const OVERRIDE_FIELDS = ['title', 'description', 'excerpt', 'start_date', 'end_date', 'start_utc', 'end_utc', 'cost', 'website', 'venues', 'organizers'] as const

/** The linked records an override shows instead of the series' (when it changes them). */
export interface OverrideLinks {
  venue?: Event['venue']
  organizer?: Event['organizer']
}

/** The URL of an occurrence: `{series rest_url}/occurrences/<id>`. */
export function occurrenceUrl(series: Pick<Event, 'rest_url'>, id: string): string {
  return `${series.rest_url}/occurrences/${id}`
}

/** The record of `occurrence` of `series`, with `override` (and the records of its links) applied. */
export function occurrenceRecord(series: Event, occurrence: OriginalOccurrence, override: OverrideColumns | undefined, links: OverrideLinks = {}): Event {
  const start = override?.start_date ?? occurrence.start
  const end = override?.end_date ?? occurrence.end
  const startUtc = override?.start_utc ?? occurrence.startUtc
  const endUtc = override?.end_utc ?? occurrence.endUtc
  const text = (value: string | null | undefined, fallback: string | null): string | null => (value === undefined || value === null ? fallback : value === '' ? null : value)
  const cost = override?.cost ?? series.cost
  const { recurrence, json_ld: _ld, ...rest } = series
  return {
    ...rest,
    title: override?.title ?? series.title,
    description: text(override?.description, series.description),
    excerpt: text(override?.excerpt, series.excerpt),
    start_date: start,
    start_date_details: dateDetails(start),
    end_date: end,
    end_date_details: dateDetails(end),
    utc_start_date: startUtc,
    utc_start_date_details: dateDetails(startUtc),
    utc_end_date: endUtc,
    utc_end_date_details: dateDetails(endUtc),
    timezone_abbr: tzAbbreviation(series.timezone, startUtc),
    cost,
    cost_details: override?.cost == null ? series.cost_details : costDetails(cost),
    website: text(override?.website, series.website),
    venue: links.venue ?? series.venue,
    organizer: links.organizer ?? series.organizer,
    recurrence,
    occurrence: {
      id: occurrence.id,
      original_start_date: occurrence.start.length === 10 ? `${occurrence.start} 00:00:00` : occurrence.start,
      original_utc_start_date: occurrence.startUtc,
      overridden: override !== undefined,
      rest_url: occurrenceUrl(series, occurrence.id),
    },
  }
}

/** The ETag of an occurrence: the series' ETag, the occurrence id and its override's version (0: none). */
export function occurrenceEtag(seriesEtag: string, id: string, overrideVersion: number): string {
  return `"occurrence-${hash('sha256', `${seriesEtag}|${id}|${overrideVersion}`, 'base64url').slice(0, 22)}"`
}
