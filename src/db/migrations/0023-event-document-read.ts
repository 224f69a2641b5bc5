/**
 * PostgreSQL: an anonymous read of one event by id (`GET /events/{id}`, repositories/event-documents.ts
 * `readWithVersion`) as a function of the schema, `event_document`: where the data stands (the change log's head and
 * the data epoch) and beside it the event's stored document of a context (nulls when there is none), one row, one
 * statement and one snapshot, as the statement it replaces read them. And `data_version()`: where the data stands alone
 * (dialect.ts `VERSION_QUERY`, `dataVersion`), the look a request takes before a cached read when its answer is
 * cached already (a read by id seen before is that one statement), as that statement read it.
 *
 * Why a function: as migration 0022 (`occurrence_document`) says for an occurrence's read. Sent as text, that
 * statement cost the database server 313–487 µs of CPU a read, most of it parsing and planning (an unnamed statement
 * keeps no plan), against some 100 µs once planned (docs/performance.md "pg-occ-read", "pg-byid-function"). PL/pgSQL
 * keeps the plan of the statement it runs for the rest of the session (a connection of the pool), so each read plans
 * only the call; a function is a statement like any other for PgBouncer in transaction mode (docs/scaling.md), where
 * named prepared statements are not. Tables are named as the caller's search path finds them (the schema's own, where
 * this makes the function). `stable`: it reads in the snapshot of the statement that calls it. SQLite: nothing (its
 * statements are prepared once).
 */
import { PostgresAdapter, sql, type Kysely } from 'kysely'

export async function up(db: Kysely<any>): Promise<void> {
  if (!(db.getExecutor().adapter instanceof PostgresAdapter)) return
  await sql`create or replace function event_document(p_event bigint, p_context text)
    returns table (h bigint, e bigint, event_id bigint, grp bigint, version integer, digest text, category_ids text, tag_ids text,
      category_at integer, tag_at integer, ld_from integer, ld_to integer, body bytea)
    language plpgsql stable as $$
    #variable_conflict use_column
    begin
      return query select v.h, v.e, d.event_id, d.grp, d.version, d.digest, d.category_ids, d.tag_ids, d.category_at, d.tag_at,
        d.ld_from, d.ld_to, d.body
      from (select (select coalesce(max(position), 0) from changes)::bigint as h, (select coalesce(max(n), 0) from data_epoch)::bigint as e) as v
      left join event_documents as d on d.event_id = p_event and d.context = p_context;
    end
    $$`.execute(db)
  await sql`create or replace function data_version() returns table (h bigint, e bigint)
    language plpgsql stable as $$
    begin
      return query select (select coalesce(max(position), 0) from changes)::bigint, (select coalesce(max(n), 0) from data_epoch)::bigint;
    end
    $$`.execute(db)
}

export async function down(db: Kysely<any>): Promise<void> {
  if (!(db.getExecutor().adapter instanceof PostgresAdapter)) return
  await sql`drop function if exists data_version()`.execute(db)
  await sql`drop function if exists event_document(bigint, text)`.execute(db)
}
