/**
 * The key epoch: one row (`key_epoch.n`) that moves, committed with the write, whenever `api_keys` or `users` is
 * written, on both engines, by any connection and any statement (the api-key command in another process, raw SQL).
 * Authentication keeps the keys it verified in memory beside the epoch it read before verifying them
 * (repositories/users.ts `keyCallers`): a key is taken from memory only while the epoch has not moved since, so that
 * a key revoked, or a user's role changed, by any process is refused from that process's next request on (issue 49:
 * the lookup cost a write about 32 µs). Not the data epoch (migration 0007): every write of an event moves that one.
 *
 * SQLite: row-level triggers after INSERT, UPDATE and DELETE. PostgreSQL: statement-level triggers (INSERT, UPDATE,
 * DELETE and TRUNCATE), as 0007's, writing the row of its own schema whatever the session's search path.
 */
import { PostgresAdapter, sql, type Kysely } from 'kysely'

/** The tables whose every write moves the key epoch. */
const TRIGGERED = ['api_keys', 'users']

export async function up(db: Kysely<any>): Promise<void> {
  const postgres = db.getExecutor().adapter instanceof PostgresAdapter
  await db.schema.createTable('key_epoch')
    .addColumn('id', 'integer', (c) => c.primaryKey())
    .addColumn('n', postgres ? 'bigint' : 'integer', (c) => c.notNull())
    .execute()
  await sql`insert into key_epoch (id, n) values (1, 0)`.execute(db)
  if (postgres) {
    await sql`create function key_epoch_moves() returns trigger language plpgsql set search_path from current as $$
      begin update key_epoch set n = n + 1 where id = 1; return null; end $$`.execute(db)
    for (const table of TRIGGERED) {
      await sql`create trigger ${sql.id(`${table}_key_epoch`)} after insert or update or delete or truncate on ${sql.table(table)}
        for each statement execute function key_epoch_moves()`.execute(db)
    }
    return
  }
  for (const table of TRIGGERED) {
    for (const action of ['insert', 'update', 'delete']) {
      await sql`create trigger ${sql.id(`${table}_key_epoch_${action}`)} after ${sql.raw(action)} on ${sql.table(table)}
        begin update key_epoch set n = n + 1 where id = 1; end`.execute(db)
    }
  }
}

export async function down(db: Kysely<any>): Promise<void> {
  const postgres = db.getExecutor().adapter instanceof PostgresAdapter
  for (const table of TRIGGERED) {
    if (postgres) await sql`drop trigger ${sql.id(`${table}_key_epoch`)} on ${sql.table(table)}`.execute(db)
    else for (const action of ['insert', 'update', 'delete']) await sql`drop trigger ${sql.id(`${table}_key_epoch_${action}`)}`.execute(db)
  }
  if (postgres) await sql`drop function key_epoch_moves()`.execute(db)
  await db.schema.dropTable('key_epoch').execute()
}
