/**
 * PostgreSQL: an index of the adjacent pairs of characters in the events' folded search texts, for
 * two-character searches, which pg_trgm's indexes cannot serve (a needle of two has no trigram: LIKE then read
 * every event's texts, twice a searched list, the count and the page: most of a random search's time on the
 * database server, docs/performance.md "pg-reads2"). What SQLite's index of pairs (migration 0012) is there.
 *
 * `event_search.pairs` holds every distinct pair of adjacent characters (code points) of the folded title and of
 * the folded description as the row holds them (none for a protected event's, whose description is null), no
 * pair spanning the two, each pair a text of two characters; a GIN index over it (`array_ops`) lists the events
 * holding a pair. A two-character needle is a substring of a text exactly when it is one of its pairs, so
 * `pairs @> array[needle]` is exact, and the index answers it without reading a row. Written with the row by the
 * app (db/dialect.ts `writeEventSearch`); rows that exist are filled here, their pairs made in JavaScript in batches
 * (written out here, since a migration never changes: as db/dialect.ts `searchPairList` makes them now). Not an
 * index over an expression: made by SQL, the pairs cost 0.3 ms a row (every write, and every row a plan checks),
 * where JavaScript makes them in microseconds. SQLite: nothing (migration 0012 made its own).
 */
import { PostgresAdapter, sql, type Kysely } from 'kysely'

/** The distinct pairs of adjacent code points of each text, none spanning two. */
function pairs(texts: ReadonlyArray<string | null>): string[] {
  const found = new Set<string>()
  for (const text of texts) {
    if (text === null) continue
    let previous: string | undefined
    for (const point of text) {
      if (previous !== undefined) found.add(previous + point)
      previous = point
    }
  }
  return [...found]
}

const BATCH = 1000

export async function up(db: Kysely<any>): Promise<void> {
  if (!(db.getExecutor().adapter instanceof PostgresAdapter)) return
  await sql`alter table event_search add column pairs text[]`.execute(db)
  let after = 0
  for (;;) {
    const { rows } = await sql<{ id: number; title: string; description: string | null }>`select event_id as id, title, description from event_search
      where event_id > ${after} order by event_id limit ${BATCH}`.execute(db)
    if (rows.length === 0) break
    after = rows[rows.length - 1]?.id ?? after
    const batch = JSON.stringify(Object.fromEntries(rows.map((r) => [r.id, pairs([r.title, r.description])])))
    await sql`update event_search s set pairs = array(select jsonb_array_elements_text(b.value)) from jsonb_each(${batch}::jsonb) b
      where s.event_id = b.key::integer`.execute(db)
  }
  await sql`alter table event_search alter column pairs set not null`.execute(db)
  // No statistics for the column: the planner then takes any pair as rare (0.5 % of the rows) and always lists it
  // through the index. With them, it read a common pair's rows whole instead (a pair in 99 % of the events: a
  // sequential scan comparing each row's ~150 pairs, 76–220 ms at 20,000 events on a loaded machine, where the
  // index and a visit of the rows' pages took 26–50 ms).
  await sql`alter table event_search alter column pairs set statistics 0`.execute(db)
  await sql`create index event_search_pairs on event_search using gin (pairs)`.execute(db)
}

export async function down(db: Kysely<any>): Promise<void> {
  if (!(db.getExecutor().adapter instanceof PostgresAdapter)) return
  await sql`drop index event_search_pairs`.execute(db)
  await sql`alter table event_search drop column pairs`.execute(db)
}
