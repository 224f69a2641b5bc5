/**
 * What several nodes on one database need (issue 14).
 *
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
 *
 * And on PostgreSQL, `data_version`: one row whose counter every statement that writes a table the read
 * caches show moves (a statement-level trigger), committed with the write. It is the engine's signal of
 * writes that bypass the change log (dialect.ts `dataVersion`), in this schema only: the transaction
 * counter it replaces moved with every write anywhere in the cluster, and emptied every node's cache
 * whenever another database was written. SQLite has its own (`data_version`, `total_changes()`).
 */
import { PostgresAdapter, sql, type Kysely } from 'kysely'

/** The tables the read caches show rows of, whose every write moves `data_version` on PostgreSQL. */
const SHOWN = ['users', 'images', 'events', 'venues', 'organizers', 'terms', 'event_terms', 'event_venues', 'event_organizers']

export async function up(db: Kysely<any>): Promise<void> {
  for (const table of ['venues', 'organizers']) {
    await db.schema.createIndex(`${table}_listing_cover`).on(table).columns(['language', 'status', 'date_utc', 'id', 'author']).execute()
    await db.schema.dropIndex(`${table}_listing`).execute()
  }
  await db.schema.createIndex('events_start').on('events').columns(['start_utc', 'status', 'id']).execute()
  if (!(db.getExecutor().adapter instanceof PostgresAdapter)) return
  await sql`create table data_version (id integer primary key, v bigint not null)`.execute(db)
  await sql`insert into data_version (id, v) values (1, 0)`.execute(db)
  // The schema's own row, whatever the search path of the session that writes (`from current`).
  await sql`create function data_version_moves() returns trigger language plpgsql set search_path from current as $$
    begin update data_version set v = v + 1 where id = 1; return null; end $$`.execute(db)
  for (const table of SHOWN) {
    await sql`create trigger ${sql.id(`${table}_data_version`)} after insert or update or delete or truncate on ${sql.table(table)}
      for each statement execute function data_version_moves()`.execute(db)
  }
}

export async function down(db: Kysely<any>): Promise<void> {
  if (db.getExecutor().adapter instanceof PostgresAdapter) {
    for (const table of SHOWN) await sql`drop trigger ${sql.id(`${table}_data_version`)} on ${sql.table(table)}`.execute(db)
    await sql`drop function data_version_moves()`.execute(db)
    await sql`drop table data_version`.execute(db)
  }
  await db.schema.dropIndex('events_start').execute()
  for (const table of ['venues', 'organizers']) {
    await db.schema.createIndex(`${table}_listing`).on(table).columns(['language', 'status', 'date_utc', 'id']).execute()
    await db.schema.dropIndex(`${table}_listing_cover`).execute()
  }
}
