/**
 * Indexes of `events` that no statement reads any more, dropped: every event list reads `event_occurrences` since
 * migration 0017 (its listing indexes bound the dates, `featured` and the language) and looks the event's own row
 * up by its key for what only the row holds (`post_parent`, `modified_*`: repositories/event-filters.ts), so
 *
 * - `events_end (language, end_utc)` and `events_featured (language, featured, start_utc)` (0001), made for the
 *   lists' date and `featured` filters when lists read `events`, go on both engines;
 * - `events_modified (language, modified_utc, id)` (0003), made for `modified_after` / `modified_before` then, goes
 *   on SQLite, whose planner looks each listed occurrence's event up by its key whether the index is there or not;
 *   PostgreSQL's drives a narrow `modified_*` window from it (test/query-plans.test.ts), and keeps it.
 *
 * They only cost every write of an event its share: an entry each, and on SQLite a page each that a create's
 * commit writes (their keys fall anywhere in the index, so creates that share a commit rarely share that page).
 * Kept: `events_start` (venues' and organizers' `only_with_upcoming`), `events_parent` and `events_author` (the
 * foreign keys' lookups when an event or a user is deleted), `events_slug`, `events_translation`,
 * `events_by_id_listing` (the documents' fill) and `events_recurrence_through` (the horizon job).
 * test/query-plans.test.ts checks that every list filter is still served by an index on both engines.
 */
import { PostgresAdapter, type Kysely } from 'kysely'

const dropped = (db: Kysely<any>): string[] => ['events_end', 'events_featured',
  ...(db.getExecutor().adapter instanceof PostgresAdapter ? [] : ['events_modified'])]

export async function up(db: Kysely<any>): Promise<void> {
  for (const index of dropped(db)) await db.schema.dropIndex(index).execute()
}

const COLUMNS: Record<string, string[]> = {
  events_end: ['language', 'end_utc'],
  events_featured: ['language', 'featured', 'start_utc'],
  events_modified: ['language', 'modified_utc', 'id'],
}

export async function down(db: Kysely<any>): Promise<void> {
  for (const index of dropped(db)) await db.schema.createIndex(index).on('events').columns(COLUMNS[index] as string[]).execute()
}
