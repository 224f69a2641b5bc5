/**
 * The changes of single occurrences (`event_overrides`, migration 0018) as the reads that show a whole series
 * need them: an iCalendar feed writes one VEVENT per changed occurrence of each series it holds (CONTRACT §14,
 * §17), made from the record as it stands for that occurrence. Rows are written by the occurrence routes
 * (another file); here they are only read: every series of a feed in one statement per 500 events, and the
 * venues and organizers the overrides name in one more each.
 */
import type { Selectable } from 'kysely'
import type { Event } from '../contract.js'
import type { EventOverridesTable } from '../db/schema.js'
import type { Db } from '../db/unit-of-work.js'
import { costDetails } from '../lib/cost.js'
import { dateDetails, utcToWall, wallToUtc } from '../lib/dates.js'
import { parseOccurrenceId } from '../lib/recurrence.js'
import { tzAbbreviation } from '../lib/tz-abbreviation.js'
import { linkedRecords } from './linked.js'
import { ORGANIZER } from './organizers.js'
import type { Site } from './site.js'
import { VENUE } from './venues.js'

/** An override with the dates its occurrence has now (its row in `event_occurrences`; null if it has none). */
export type OverrideRow = Selectable<EventOverridesTable> & { now_start_utc: string | null; now_end_utc: string | null }

/** Events per statement: one parameter each. */
const IDS_PER_READ = 500

/** The overrides of each of `eventIds` (only those that have some), each event's in order of occurrence id. */
export async function overridesOf(db: Db, eventIds: readonly number[]): Promise<Map<number, OverrideRow[]>> {
  const found = new Map<number, OverrideRow[]>()
  for (let i = 0; i < eventIds.length; i += IDS_PER_READ) {
    const ids = eventIds.slice(i, i + IDS_PER_READ)
    if (ids.length === 0) continue
    const rows = await db.selectFrom('event_overrides as v')
      .leftJoin('event_occurrences as o', (join) => join.onRef('o.event_id', '=', 'v.event_id').onRef('o.occurrence', '=', 'v.occurrence'))
      .selectAll('v').select(['o.start_utc as now_start_utc', 'o.end_utc as now_end_utc'])
      .where('v.event_id', 'in', ids)
      .orderBy('v.event_id').orderBy('v.occurrence').execute()
    for (const row of rows) {
      const id = Number(row.event_id)
      const list = found.get(id)
      if (list === undefined) found.set(id, [{ ...row, event_id: id }])
      else list.push({ ...row, event_id: id })
    }
  }
  return found
}

/** A changed occurrence as a feed shows it: the record as it stands for it, its original start, its override's version. */
export interface ChangedOccurrence {
  record: Event
  original: { start: string; startUtc: string }
  version: number
}

/** The original start an occurrence id names, as a wall time in the series' zone and an instant (undefined when malformed). */
export function originalStart(id: string, timezone: string, allDay: boolean): { start: string; startUtc: string } | undefined {
  const parsed = parseOccurrenceId(id, allDay)
  if (parsed === null) return undefined
  if ('day' in parsed) {
    const start = `${parsed.day} 00:00:00`
    return { start, startUtc: wallToUtc(start, timezone) }
  }
  return { start: utcToWall(parsed.startUtc, timezone), startUtc: parsed.startUtc }
}

/**
 * The changed occurrences of each series of `series` (records as read, with their overrides from
 * {@link overridesOf}): each the series' record with what its override changes (title, description, excerpt,
 * dates, cost, website, venues, organizers), in order of occurrence id.
 */
export async function changedOccurrences(db: Db, site: Site, series: readonly Event[], overrides: ReadonlyMap<number, readonly OverrideRow[]>): Promise<Map<number, ChangedOccurrence[]>> {
  const ids = (column: 'venues' | 'organizers') => [...new Set(series.flatMap((e) => (overrides.get(e.id) ?? [])
    .flatMap((o) => (o[column] === null ? [] : JSON.parse(o[column]) as number[]))))]
  const [venueIds, organizerIds] = [ids('venues'), ids('organizers')]
  const [venues, organizers] = await Promise.all([
    venueIds.length === 0 ? [] : linkedRecords(db, site, VENUE, venueIds),
    organizerIds.length === 0 ? [] : linkedRecords(db, site, ORGANIZER, organizerIds),
  ])
  const venueById = new Map(venues.map((v) => [v.id, v]))
  const organizerById = new Map(organizers.map((o) => [o.id, o]))
  const found = new Map<number, ChangedOccurrence[]>()
  for (const record of series) {
    const changed: ChangedOccurrence[] = []
    for (const o of overrides.get(record.id) ?? []) {
      const original = originalStart(o.occurrence, record.timezone, record.all_day)
      // An override outlives no occurrence (writes delete it with its row): one without a row is not shown.
      if (original === undefined || o.now_start_utc === null || o.now_end_utc === null) continue
      // The occurrence's dates as they stand: the override's where it moved them, else its row's (the rule's).
      const startUtc = o.start_utc ?? o.now_start_utc
      const endUtc = o.end_utc ?? o.now_end_utc
      const start = o.start_date ?? utcToWall(startUtc, record.timezone)
      const end = o.end_date ?? utcToWall(endUtc, record.timezone)
      const linked = <T>(column: string | null, byId: Map<number, T>, own: T[]): T[] =>
        column === null ? own : (JSON.parse(column) as number[]).flatMap((id) => byId.get(id) ?? [])
      changed.push({
        original,
        version: Number(o.version),
        record: {
          ...record,
          title: o.title ?? record.title,
          description: o.description ?? record.description,
          excerpt: o.excerpt ?? record.excerpt,
          start_date: start,
          start_date_details: dateDetails(start),
          end_date: end,
          end_date_details: dateDetails(end),
          utc_start_date: startUtc,
          utc_start_date_details: dateDetails(startUtc),
          utc_end_date: endUtc,
          utc_end_date_details: dateDetails(endUtc),
          timezone_abbr: tzAbbreviation(record.timezone, startUtc),
          cost: o.cost ?? record.cost,
          cost_details: o.cost === null ? record.cost_details : costDetails(o.cost),
          website: o.website ?? record.website,
          venue: linked(o.venues, venueById, record.venue),
          organizer: linked(o.organizers, organizerById, record.organizer),
        },
      })
    }
    if (changed.length > 0) found.set(record.id, changed)
  }
  return found
}
