/**
 * Every event ends at or after its start, in the database as in the API (which refuses an `end_date`
 * before `start_date` on the merged record: lib/event-dates.ts). Held here too, whoever writes: PostgreSQL
 * a CHECK constraint, SQLite triggers on insert and on an update of either instant (a CHECK cannot be
 * added to an existing SQLite table without rebuilding it).
 *
 * Lists rely on it: an event that ends at or before X starts at or before X, so an end bound is also a
 * start bound, which the listing index (language, hide_from_listings, start_utc, …) can stop at: counting
 * a 30-day window read the index from the window's start to the last event of all (11,293 entries at
 * 20,000 events) instead of the window's 620 (repositories/event-filters.ts).
 *
 * A database that already holds an event ending before its start (written by raw SQL: the API never
 * wrote one) is not migrated: the error says which and what to do.
 */
import { PostgresAdapter, sql, type Kysely } from 'kysely'

const MESSAGE = 'events: end_utc before start_utc'

export async function up(db: Kysely<any>): Promise<void> {
  const inverted = await db.selectFrom('events').select('id').where(sql<boolean>`end_utc < start_utc`).orderBy('id').limit(10).execute()
  if (inverted.length > 0) {
    throw new Error(`migration 0010: events ${inverted.map((r: { id: number }) => r.id).join(', ')}${inverted.length === 10 ? ' (and maybe more)' : ''} `
      + 'end before they start, which no write of the API makes; correct their start_utc/end_utc (and start_date/end_date) or delete them, '
      + 'then start again ("select id from events where end_utc < start_utc" lists them)')
  }
  if (db.getExecutor().adapter instanceof PostgresAdapter) {
    await sql`alter table events add constraint events_end_not_before_start check (end_utc >= start_utc)`.execute(db)
    return
  }
  await sql`create trigger events_end_not_before_start_insert before insert on events
    when new.end_utc < new.start_utc begin select raise(abort, ${sql.lit(MESSAGE)}); end`.execute(db)
  await sql`create trigger events_end_not_before_start_update before update of start_utc, end_utc on events
    when new.end_utc < new.start_utc begin select raise(abort, ${sql.lit(MESSAGE)}); end`.execute(db)
}

export async function down(db: Kysely<any>): Promise<void> {
  if (db.getExecutor().adapter instanceof PostgresAdapter) {
    await sql`alter table events drop constraint events_end_not_before_start`.execute(db)
    return
  }
  await sql`drop trigger events_end_not_before_start_insert`.execute(db)
  await sql`drop trigger events_end_not_before_start_update`.execute(db)
}
