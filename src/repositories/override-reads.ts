/**
 * The changed occurrences of series as the reads that show a whole series need them: an iCalendar feed writes
 * one VEVENT per changed occurrence of each series it holds (CONTRACT §14, §17), made from the record as it
 * stands for that occurrence (lib/occurrence-view.ts `occurrenceRecord`, the one such function). The overrides
 * (`event_overrides`) are written by the occurrence routes; here they are only read: which occurrences of the
 * series are changed (one statement per 500 series), then those occurrences with their overrides
 * (repositories/occurrences.ts, one statement and the venues and organizers they name).
 */
import type { Event } from '../contract.js'
import type { Db } from '../db/unit-of-work.js'
import { occurrenceRecord, originalStart } from '../lib/occurrence-view.js'
import type { ListEntry } from './event-filters.js'
import { entryKey, occurrencesOf } from './occurrences.js'
import type { Site } from './site.js'

/** A changed occurrence as a feed shows it: the record as it stands for it, its original start, its override's version. */
export interface ChangedOccurrence {
  record: Event
  /** The original start: its wall time in the series' zone (all-day: the day's 00:00:00) and its instant. */
  original: { start: string; startUtc: string }
  version: number
}

/** Series per statement: one parameter each. */
const IDS_PER_READ = 500

/** The changed occurrences of each of `series` (records as read; only those with some), each series' in order of occurrence id. */
export async function changedOccurrences(db: Db, site: Site, series: readonly Event[]): Promise<Map<number, ChangedOccurrence[]>> {
  const keys: ListEntry[] = []
  for (let i = 0; i < series.length; i += IDS_PER_READ) {
    const ids = series.slice(i, i + IDS_PER_READ).map((e) => e.id)
    const rows = await db.selectFrom('event_overrides').select(['event_id', 'occurrence']).where('event_id', 'in', ids)
      .orderBy('event_id').orderBy('occurrence').execute()
    keys.push(...rows.map((r) => ({ id: Number(r.event_id), occurrence: r.occurrence })))
  }
  const found = new Map<number, ChangedOccurrence[]>()
  if (keys.length === 0) return found
  const stored = await occurrencesOf(db, site, keys)
  const byId = new Map(series.map((e) => [e.id, e]))
  for (const key of keys) {
    const record = byId.get(key.id)
    const occurrence = stored.get(entryKey(key.id, key.occurrence))
    // An override outlives no occurrence (writes delete it with its row): one without a row is not shown.
    if (record === undefined || occurrence === undefined) continue
    const original = originalStart(key.occurrence, record.timezone, record.all_day)
    if (original === undefined) continue
    const list = found.get(key.id) ?? []
    list.push({ record: occurrenceRecord(record, occurrence.state, occurrence.override), original: { start: original.wall, startUtc: original.utc }, version: occurrence.overrideVersion })
    found.set(key.id, list)
  }
  return found
}
