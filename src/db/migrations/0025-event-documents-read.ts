/**
 * PostgreSQL: the look at the data version of the anonymous reads by id held in one turn of the event loop and
 * answered before routing (http/replay.ts "Cold reads", repositories/event-documents.ts `readManyWithVersion`) as a
 * function of the schema, `event_documents_read`: where the data stands (the change log's head and the data epoch) and
 * beside it the stored documents of a context of several events, one statement and one snapshot, as `event_document`
 * (migration 0023) reads one: a row per document found, the version on each; one row of nulls beside the version when
 * none is. A turn holding several such reads took one look with the first one's document and read the others' one
 * statement each after it (unplanned text).
 *
 * Why a function: as 0022 and 0023 say (PL/pgSQL keeps its statement's plan for the session; an unnamed statement sent
 * as text is parsed and planned at every execution; a function is a statement like any other for PgBouncer in
 * transaction mode, where named prepared statements are not). The ids as one array: one statement whatever their count.
 * `stable`: it reads in the snapshot of the statement that calls it. SQLite: nothing (its look is a probe).
 */
import { PostgresAdapter, sql, type Kysely } from 'kysely'

export async function up(db: Kysely<any>): Promise<void> {
  if (!(db.getExecutor().adapter instanceof PostgresAdapter)) return
  await sql`create or replace function event_documents_read(p_events bigint[], p_context text)
    returns table (h bigint, e bigint, event_id bigint, grp bigint, version integer, digest text, category_ids text, tag_ids text,
      category_at integer, tag_at integer, ld_from integer, ld_to integer, body bytea)
    language plpgsql stable as $$
    #variable_conflict use_column
    begin
      return query select v.h, v.e, d.event_id, d.grp, d.version, d.digest, d.category_ids, d.tag_ids, d.category_at, d.tag_at,
        d.ld_from, d.ld_to, d.body
      from (select (select coalesce(max(position), 0) from changes)::bigint as h, (select coalesce(max(n), 0) from data_epoch)::bigint as e) as v
      left join event_documents as d on d.event_id = any(p_events) and d.context = p_context;
    end
    $$`.execute(db)
}

export async function down(db: Kysely<any>): Promise<void> {
  if (!(db.getExecutor().adapter instanceof PostgresAdapter)) return
  await sql`drop function if exists event_documents_read(bigint[], text)`.execute(db)
}
