/**
 * PostgreSQL: the data epoch's triggers (migration 0007's `data_epoch_moves()`, on every table the caches read) no
 * longer move the epoch in a transaction of the API's units of work, which says so with `set local calendar.api = on`
 * (postgres-dialect.ts): there the trigger only notes that the transaction wrote such a table
 * (`calendar.api_wrote`, local to the transaction), and the unit of work moves the epoch once, at its end, under
 * the lock that orders the change log (issue 49: the epoch's row, updated by the first write statement and held
 * until the commit, serialized every writer from its first write on). Every other transaction (raw SQL, another
 * program, the migrations) moves it as before, at once. SQLite: nothing (its writes run one at a time anyway).
 */
import { PostgresAdapter, sql, type Kysely } from 'kysely'

export async function up(db: Kysely<any>): Promise<void> {
  if (!(db.getExecutor().adapter instanceof PostgresAdapter)) return
  await sql`create or replace function data_epoch_moves() returns trigger language plpgsql set search_path from current as $$
    begin
      if current_setting('calendar.api', true) = 'on' then
        perform set_config('calendar.api_wrote', 'on', true);
      else
        update data_epoch set n = n + 1 where id = 1;
      end if;
      return null;
    end $$`.execute(db)
}

export async function down(db: Kysely<any>): Promise<void> {
  if (!(db.getExecutor().adapter instanceof PostgresAdapter)) return
  await sql`create or replace function data_epoch_moves() returns trigger language plpgsql set search_path from current as $$
      begin update data_epoch set n = n + 1 where id = 1; return null; end $$`.execute(db)
}
