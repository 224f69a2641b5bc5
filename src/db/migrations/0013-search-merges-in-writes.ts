/**
 * SQLite: the search index's segments are merged by the writes themselves, a bounded share each, instead
 * of by FTS5's own automatic merging. FTS5 writes each transaction's terms as a new segment of its index
 * and merges segments as they pile up; left to itself (`automerge`, 4 segments a level by default) it
 * merged at the end of whichever write came along, and that write took 12–81 ms instead of 0.3 (4,000
 * PATCH-like writes on a copy of the benchmark's 20,000 events: p99.9 16 ms, max 64 ms): most of the p99
 * of the benchmark's mixed and create workloads. With `automerge` off on both tables (a setting FTS5 keeps
 * in the table, so it holds for every writer of the file), each write that changes the index asks for at
 * most SEARCH_MERGE_PAGES pages of merging (db/dialect.ts `writeEventSearch`): the same 4,000 writes
 * max 2.6 ms. A write that finds nothing to merge does none. FTS5's `crisismerge` still merges a level
 * that reaches 16 segments, should a writer that does not merge (an older build) leave them to pile up.
 * PostgreSQL has no such index (pg_trgm's GIN indexes keep a pending list of their own).
 */
import { PostgresAdapter, sql, type Kysely } from 'kysely'

/** FTS5's default `automerge`, which `down` puts back. */
const DEFAULT_AUTOMERGE = 4

async function setAutomerge(db: Kysely<any>, value: number): Promise<void> {
  for (const table of ['event_search', 'event_search_pairs']) {
    await sql`insert into ${sql.table(table)} (${sql.ref(table)}, rank) values ('automerge', ${sql.lit(value)})`.execute(db)
  }
}

export async function up(db: Kysely<any>): Promise<void> {
  if (db.getExecutor().adapter instanceof PostgresAdapter) return
  await setAutomerge(db, 0)
}

export async function down(db: Kysely<any>): Promise<void> {
  if (db.getExecutor().adapter instanceof PostgresAdapter) return
  await setAutomerge(db, DEFAULT_AUTOMERGE)
}
