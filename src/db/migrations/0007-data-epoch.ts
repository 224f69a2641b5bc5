/**
 * The data epoch: one row (`data_epoch.n`) that moves, committed with the write, whenever a table the
 * read caches read is written, on both engines, by any connection and any statement (the API's units
 * of work, another process, raw SQL). The caches read it beside the change log's head (dialect.ts
 * `dataVersion`): the log names what changed; the epoch moving while the log stays put says rows
 * changed outside it, and drops everything.
 *
 * It replaces the engines' own signals, which moved with writes the caches never read: SQLite's
 * `total_changes()` and `data_version` with every claim and attempt of the webhook dispatcher;
 * PostgreSQL's snapshot xmax with every writing transaction anywhere in the cluster (other schemas,
 * other databases, retention).
 *
 * SQLite: row-level triggers after INSERT, UPDATE and DELETE. PostgreSQL: statement-level triggers
 * (INSERT, UPDATE, DELETE and TRUNCATE) calling one function, which writes the row of its own schema
 * whatever the search path of the session that writes (`set search_path from current`).
 *
 * Not on the change log, the webhook tables, API keys or users (no cached read shows them: a record
 * names its author by id), nor on the migration history: test/data-epoch.test.ts lists why for each.
 *
 * A `data_version` row with its triggers (PostgreSQL's earlier form of this signal, migration 0006) is
 * dropped if present: the epoch replaces it on both engines.
 */
import { PostgresAdapter, sql, type Kysely } from 'kysely'

/** The tables whose every write moves the epoch, as of this migration. */
const TRIGGERED = ['events', 'venues', 'organizers', 'terms', 'event_terms', 'event_venues', 'event_organizers', 'images']
/** The tables the PostgreSQL-only `data_version` row was moved by. */
const DATA_VERSION_TABLES = ['users', 'images', 'events', 'venues', 'organizers', 'terms', 'event_terms', 'event_venues', 'event_organizers']

export async function up(db: Kysely<any>): Promise<void> {
  const postgres = db.getExecutor().adapter instanceof PostgresAdapter
  await db.schema.createTable('data_epoch')
    .addColumn('id', 'integer', (c) => c.primaryKey())
    .addColumn('n', postgres ? 'bigint' : 'integer', (c) => c.notNull())
    .execute()
  await sql`insert into data_epoch (id, n) values (1, 0)`.execute(db)
  if (postgres) {
    for (const table of DATA_VERSION_TABLES) await sql`drop trigger if exists ${sql.id(`${table}_data_version`)} on ${sql.table(table)}`.execute(db)
    await sql`drop function if exists data_version_moves()`.execute(db)
    await sql`drop table if exists data_version`.execute(db)
    await sql`create function data_epoch_moves() returns trigger language plpgsql set search_path from current as $$
      begin update data_epoch set n = n + 1 where id = 1; return null; end $$`.execute(db)
    for (const table of TRIGGERED) {
      await sql`create trigger ${sql.id(`${table}_data_epoch`)} after insert or update or delete or truncate on ${sql.table(table)}
        for each statement execute function data_epoch_moves()`.execute(db)
    }
    return
  }
  for (const table of TRIGGERED) {
    for (const action of ['insert', 'update', 'delete']) {
      await sql`create trigger ${sql.id(`${table}_data_epoch_${action}`)} after ${sql.raw(action)} on ${sql.table(table)}
        begin update data_epoch set n = n + 1 where id = 1; end`.execute(db)
    }
  }
}

export async function down(db: Kysely<any>): Promise<void> {
  const postgres = db.getExecutor().adapter instanceof PostgresAdapter
  for (const table of TRIGGERED) {
    if (postgres) await sql`drop trigger ${sql.id(`${table}_data_epoch`)} on ${sql.table(table)}`.execute(db)
    else for (const action of ['insert', 'update', 'delete']) await sql`drop trigger ${sql.id(`${table}_data_epoch_${action}`)}`.execute(db)
  }
  if (postgres) await sql`drop function data_epoch_moves()`.execute(db)
  await db.schema.dropTable('data_epoch').execute()
}
