/**
 * PostgreSQL: the look at the data version of the anonymous reads of occurrences held in one turn of the event loop
 * and answered before routing (http/replay.ts "Cold reads of occurrences", repositories/event-documents.ts
 * `readOccurrencesWithVersion`) as a function of the schema, `occurrence_documents_read`: where the data stands (the
 * change log's head and the data epoch) and beside it, for each occurrence asked (`p_events[i]`, `p_occurrences[i]`),
 * its series' stored document of a context, the occurrence's dates (`start|end`) and its override's version, one
 * statement and one snapshot, as `occurrence_document` (migration 0022) reads one: a row per occurrence whose series
 * has a document (the occurrence id on it), the version on each; one row of nulls beside the version when none has. A
 * turn holding several such reads took one look with the first one's and read the others one statement each after it
 * (issue 45: 1.0 statement a cold read of an occurrence against 0.4 a cold read by id, whose look reads them all,
 * migration 0025).
 *
 * Why a function: as 0022, 0023 and 0025 say (PL/pgSQL keeps its statement's plan for the session; a function is a
 * statement like any other for PgBouncer in transaction mode, where named prepared statements are not). The pairs as
 * two arrays of one length, unnested together: one statement whatever their count. `stable`: it reads in the snapshot
 * of the statement that calls it. SQLite: nothing (its look is a probe).
 */
import { PostgresAdapter, sql, type Kysely } from 'kysely'

export async function up(db: Kysely<any>): Promise<void> {
  if (!(db.getExecutor().adapter instanceof PostgresAdapter)) return
  await sql`create or replace function occurrence_documents_read(p_events bigint[], p_occurrences text[], p_context text)
    returns table (h bigint, e bigint, event_id bigint, grp bigint, version integer, digest text, category_ids text, tag_ids text,
      category_at integer, tag_at integer, ld_from integer, ld_to integer, body bytea, o_id text, o_dates text, o_override integer)
    language plpgsql stable as $$
    #variable_conflict use_column
    begin
      return query select v.h, v.e, d.event_id, d.grp, d.version, d.digest, d.category_ids, d.tag_ids, d.category_at, d.tag_at,
        d.ld_from, d.ld_to, d.body, q.occurrence,
        (select o.start_utc || '|' || o.end_utc from event_occurrences as o where o.event_id = d.event_id and o.occurrence = q.occurrence),
        (select x.version from event_overrides as x where x.event_id = d.event_id and x.occurrence = q.occurrence)
      from (select (select coalesce(max(position), 0) from changes)::bigint as h, (select coalesce(max(n), 0) from data_epoch)::bigint as e) as v
      left join (unnest(p_events, p_occurrences) as q(event_id, occurrence)
        join event_documents as d on d.event_id = q.event_id and d.context = p_context) on true;
    end
    $$`.execute(db)
}

export async function down(db: Kysely<any>): Promise<void> {
  if (!(db.getExecutor().adapter instanceof PostgresAdapter)) return
  await sql`drop function if exists occurrence_documents_read(bigint[], text[], text)`.execute(db)
}
