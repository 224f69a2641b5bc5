/**
 * PostgreSQL: an anonymous read of one occurrence (`GET /events/{id}/occurrences/{occurrence}`,
 * repositories/event-documents.ts `readOccurrenceWithVersion`) as a function of the schema, `occurrence_document`:
 * where the data stands (the change log's head and the data epoch), the series' stored document of a context and
 * beside it its occurrence's dates (`start|end`) and its override's version, one row, one statement and one snapshot,
 * as the statement it replaces read them.
 *
 * Why a function: sent as text, that statement cost the database server some 0.5 ms of CPU a read, nearly all of it
 * parsing and planning (four subqueries and a join, each read planned again: an unnamed statement keeps no plan),
 * against 0.35 ms for a read by id's and 0.1 ms once planned (docs/performance.md "pg-occ-read"). PL/pgSQL keeps
 * the plan of the statement it runs for the rest of the session (a connection of the pool), so each read plans
 * only the call. Named prepared statements would keep it too, but PgBouncer in transaction mode passes them on only
 * when told to (docs/scaling.md: the server names none); a function is a statement like any other there. Tables are
 * named as the caller's search path finds them (the schema's own, where this makes the function). `stable`: it
 * reads in the snapshot of the statement that calls it. SQLite: nothing (its statements are prepared once).
 */
import { PostgresAdapter, sql, type Kysely } from 'kysely'

export async function up(db: Kysely<any>): Promise<void> {
  if (!(db.getExecutor().adapter instanceof PostgresAdapter)) return
  await sql`create or replace function occurrence_document(p_occurrence text, p_event bigint, p_context text)
    returns table (h bigint, e bigint, event_id bigint, grp bigint, version integer, digest text, category_ids text, tag_ids text,
      category_at integer, tag_at integer, ld_from integer, ld_to integer, body bytea, o_dates text, o_override integer)
    language plpgsql stable as $$
    #variable_conflict use_column
    begin
      return query select v.h, v.e, d.event_id, d.grp, d.version, d.digest, d.category_ids, d.tag_ids, d.category_at, d.tag_at,
        d.ld_from, d.ld_to, d.body,
        (select o.start_utc || '|' || o.end_utc from event_occurrences as o where o.event_id = d.event_id and o.occurrence = p_occurrence),
        (select x.version from event_overrides as x where x.event_id = d.event_id and x.occurrence = p_occurrence)
      from (select (select coalesce(max(position), 0) from changes)::bigint as h, (select coalesce(max(n), 0) from data_epoch)::bigint as e) as v
      left join event_documents as d on d.event_id = p_event and d.context = p_context;
    end
    $$`.execute(db)
}

export async function down(db: Kysely<any>): Promise<void> {
  if (!(db.getExecutor().adapter instanceof PostgresAdapter)) return
  await sql`drop function if exists occurrence_document(text, bigint, text)`.execute(db)
}
