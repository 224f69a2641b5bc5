/**
 * Writes of one occurrence of a series (CONTRACT §17, docs/recurrence.md): its override (`event_overrides`,
 * migration 0018) upserted or deleted, its row in `event_occurrences` flagged and moved, and the series'
 * row touched (version + 1, `modified`) so that its ETag, its stored document (migration 0009's trigger on
 * `events`) and the change log (`updated`, which also drives webhooks) follow. Cancels and splits rewrite
 * the series' `recurrence` and set with `writeOccurrences` (occurrence-writes.ts). Every function runs in the
 * unit of work of the request; the compare-and-swap on the series' version is the caller's guard.
 */
import { sql, type Updateable } from 'kysely'
import { foldCase } from '../db/dialect.js'
import { prepared } from '../db/prepared.js'
import type { EventOverridesTable, EventsTable } from '../db/schema.js'
import { recordChange, type Db, type Tx } from '../db/unit-of-work.js'
import { writeOccurrences, type SeriesRows } from './occurrence-writes.js'

/** The changes of one occurrence as `event_overrides` holds them (null: not changed; venues and organizers as JSON arrays of ids). */
export type OverrideColumns = Pick<EventOverridesTable, (typeof OVERRIDE_FIELDS)[number]>

export const OVERRIDE_FIELDS = ['title', 'description', 'excerpt', 'start_date', 'end_date', 'start_utc', 'end_utc', 'cost', 'website', 'venues', 'organizers'] as const

/** An override as stored: its columns and version. */
export type StoredOverride = OverrideColumns & { version: number }

const overrideRow = prepared(2, (db, eventId: number, occurrence: string) => db.selectFrom('event_overrides')
  .select([...OVERRIDE_FIELDS, 'version']).where('event_id', '=', eventId).where('occurrence', '=', occurrence))

/** The override of one occurrence, or undefined. */
export async function findOverride(db: Db, eventId: number, occurrence: string): Promise<StoredOverride | undefined> {
  return (await overrideRow(db, eventId, occurrence)).rows[0]
}

const occurrenceRow = prepared(2, (db, eventId: number, occurrence: string) => db.selectFrom('event_occurrences')
  .select(['start_utc', 'end_utc', 'overridden']).where('event_id', '=', eventId).where('occurrence', '=', occurrence))

/** Whether the event has this occurrence (a row in `event_occurrences`). */
export async function hasOccurrence(db: Db, eventId: number, occurrence: string): Promise<boolean> {
  return (await occurrenceRow(db, eventId, occurrence)).rows.length === 1
}

/** The series' row touched: version + 1 and `modified`, if the version is still `version` (compare-and-swap). */
async function touchSeries(trx: Tx, id: number, version: number, set: Updateable<EventsTable>): Promise<boolean> {
  const result = await trx.updateTable('events').set({ ...set, version: version + 1 }).where('id', '=', id).where('version', '=', version).executeTakeFirst()
  if (Number(result.numUpdatedRows) !== 1) return false
  recordChange(trx, { resource: 'event', id, action: 'update' })
  return true
}

/**
 * Sets the override of one occurrence to `columns` (all null: no override), its row's dates to `startUtc` and
 * `endUtc` (the override's, or the original ones) and touches the series. False when the series' version moved on.
 */
export async function writeOverride(
  trx: Tx, eventId: number, occurrence: string, columns: OverrideColumns, dates: { startUtc: string; endUtc: string },
  version: number, stamp: { modified: string; modified_utc: string }, passwordProtected: boolean,
): Promise<boolean> {
  if (!(await touchSeries(trx, eventId, version, stamp))) return false
  const empty = OVERRIDE_FIELDS.every((field) => columns[field] === null)
  if (empty) {
    // Its link rows go with it (migration 0019: on delete cascade).
    await trx.deleteFrom('event_overrides').where('event_id', '=', eventId).where('occurrence', '=', occurrence).execute()
  } else {
    // The texts as the search index folds the event's (a protected event's description is not searched).
    const searched = {
      search_title: columns.title === null ? null : foldCase(columns.title),
      search_description: columns.description === null || passwordProtected ? null : foldCase(columns.description),
    }
    await trx.insertInto('event_overrides').values({ event_id: eventId, occurrence, ...columns, ...searched, version: 1 })
      .onConflict((oc) => oc.columns(['event_id', 'occurrence']).doUpdateSet({ ...columns, ...searched, version: sql`event_overrides.version + 1` }))
      .execute()
    await trx.deleteFrom('event_override_links').where('event_id', '=', eventId).where('occurrence', '=', occurrence).execute()
    const links = [
      ...(columns.venues === null ? [] : (JSON.parse(columns.venues) as number[]).map((id) => ({ kind: 'venue' as const, target_id: id }))),
      ...(columns.organizers === null ? [] : (JSON.parse(columns.organizers) as number[]).map((id) => ({ kind: 'organizer' as const, target_id: id }))),
    ]
    if (links.length > 0) await trx.insertInto('event_override_links').values(links.map((l) => ({ event_id: eventId, occurrence, ...l }))).execute()
  }
  await trx.updateTable('event_occurrences').set({ overridden: empty ? 0 : 1, start_utc: dates.startUtc, end_utc: dates.endUtc })
    .where('event_id', '=', eventId).where('occurrence', '=', occurrence).execute()
  return true
}

/**
 * A series' `recurrence` and set rewritten (a cancel, the first half of a split): the column stored, the
 * series touched, its rows made `rows` (the overrides of occurrences no longer in it deleted). False when the
 * series' version moved on.
 */
export async function rewriteSeries(
  trx: Tx, eventId: number, recurrence: string, rows: SeriesRows, version: number, stamp: { modified: string; modified_utc: string },
): Promise<boolean> {
  if (!(await touchSeries(trx, eventId, version, { ...stamp, recurrence, recurrence_through_utc: rows.throughUtc }))) return false
  await writeOccurrences(trx, eventId, rows.occurrences)
  return true
}

/** The overrides of `occurrences` moved from one series to another (a split: their ids stay). */
export async function moveOverrides(trx: Tx, fromId: number, toId: number, occurrences: readonly string[]): Promise<void> {
  for (let i = 0; i < occurrences.length; i += 500) {
    const chunk = occurrences.slice(i, i + 500)
    await trx.updateTable('event_overrides').set({ event_id: toId }).where('event_id', '=', fromId).where('occurrence', 'in', chunk).execute()
  }
}

/** A new event's password, set as the one it was split from had it (an insert never sets one). */
export async function setPassword(trx: Tx, eventId: number, password: string): Promise<void> {
  await trx.updateTable('events').set({ password }).where('id', '=', eventId).execute()
}
