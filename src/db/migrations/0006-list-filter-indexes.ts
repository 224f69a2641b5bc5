/**
 * Indexes for two list filters that had none to bind them on some engine (test/query-plans.test.ts
 * checks every list filter on both):
 *
 * - The venue and organizer listing indexes cover the author too: an author's list shows what is
 *   published and what is their own (`status = 'publish' or author = ?`), and its count then reads the
 *   index alone, bound by language and status, instead of every row of the table (SQLite chose a scan
 *   of the table once its statistics said most rows share a language).
 * - Events by start alone (`events_start`): `only_with_upcoming` on venues and organizers asks for
 *   events that start from now on whatever their language, which no index led by language binds;
 *   PostgreSQL read every event for it. Status and id ride along, so the index alone answers.
 */
import type { Kysely } from 'kysely'

export async function up(db: Kysely<any>): Promise<void> {
  for (const table of ['venues', 'organizers']) {
    await db.schema.createIndex(`${table}_listing_cover`).on(table).columns(['language', 'status', 'date_utc', 'id', 'author']).execute()
    await db.schema.dropIndex(`${table}_listing`).execute()
  }
  await db.schema.createIndex('events_start').on('events').columns(['start_utc', 'status', 'id']).execute()
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropIndex('events_start').execute()
  for (const table of ['venues', 'organizers']) {
    await db.schema.createIndex(`${table}_listing`).on(table).columns(['language', 'status', 'date_utc', 'id']).execute()
    await db.schema.dropIndex(`${table}_listing_cover`).execute()
  }
}
