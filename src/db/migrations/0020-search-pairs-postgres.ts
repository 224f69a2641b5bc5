/**
 * PostgreSQL: an index of the adjacent pairs of characters in the events' folded search texts, for
 * two-character searches, which pg_trgm's indexes cannot serve (a needle of two has no trigram: LIKE then read
 * every event's texts, twice a searched list, the count and the page: most of a random search's time on the
 * database server, docs/performance.md "pg-reads2"). What SQLite's index of pairs (migration 0012) is there.
 *
 * `search_pairs(title, description)` is every pair of adjacent characters (code points: PostgreSQL's text is
 * UTF-8, `substr` counts characters) of the folded title and of the folded description as `event_search` holds
 * them (the description is null when protected), no pair spanning the two; a GIN index over it (`array_ops`)
 * lists the events holding a pair: a two-character needle is a substring of a text exactly when it is one of its
 * pairs, so `search_pairs(title, description) @> array[needle]` is exact and needs no recheck. An index over an
 * expression, not a column: every write of `event_search` keeps it as it is (no statement changes), and rows
 * that exist are indexed by its creation. The function uses only built-ins (found whatever the search path), is
 * immutable (as an index needs), and is created in the schema being migrated, where the app's statements find it.
 * SQLite: nothing (migration 0012 made its own).
 */
import { PostgresAdapter, sql, type Kysely } from 'kysely'

export async function up(db: Kysely<any>): Promise<void> {
  if (!(db.getExecutor().adapter instanceof PostgresAdapter)) return
  await sql`create function search_pairs(title text, description text) returns text[] language sql immutable parallel safe as $$
    select array(select substr(title, i, 2) from generate_series(1, length(title) - 1) i
      union all select substr(description, i, 2) from generate_series(1, length(description) - 1) i)
  $$`.execute(db)
  await sql`create index event_search_pairs on event_search using gin (search_pairs(title, description))`.execute(db)
}

export async function down(db: Kysely<any>): Promise<void> {
  if (!(db.getExecutor().adapter instanceof PostgresAdapter)) return
  await sql`drop index event_search_pairs`.execute(db)
  await sql`drop function search_pairs(text, text)`.execute(db)
}
