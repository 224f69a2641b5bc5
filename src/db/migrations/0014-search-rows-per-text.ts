/**
 * SQLite: the search index holds a row per text of an event instead of one per event, in `event_search`
 * and in `event_search_pairs` alike: the title's row is `2 × id` (its text in the `title` column), the
 * description's `2 × id + 1` (in the `description` column; none while the event has no description to
 * search). FTS5 writes a row whole: with one row per event, a new title deleted and wrote again every
 * trigram and pair of the description too (a 4 kB text: most of the index's entries), then merged them;
 * a title edit cost 2.7–2.8 ms of CPU against 1.6–1.7 ms for an edit of the cost. Now it writes the title's
 * row only. A row's event is its rowid halved (db/dialect.ts `titleRow`, `searchedIds`).
 *
 * Both tables are made again with their definitions (migrations 0005, 0012) and FTS5's own merging off
 * (0013), and filled from the index's own store of its texts (`event_search_content`: id, c0, c1), kept
 * meanwhile in a table of its own. PostgreSQL's index (a row per event, pg_trgm) is untouched.
 */
import { PostgresAdapter, sql, type Kysely, type RawBuilder } from 'kysely'

/** A text's distinct pairs of adjacent code points as tokens (as db/dialect.ts `searchPairs` makes them at the time of this migration). */
function pairs(text: string | null): string {
  if (text === null) return ''
  const tokens = new Set<string>()
  let previous: number | undefined
  for (const point of text) {
    const code = point.codePointAt(0) as number
    if (previous !== undefined) tokens.add(`${previous.toString(16)}g${code.toString(16)}`)
    previous = code
  }
  return [...tokens].join(' ')
}

const BATCH = 500

interface Texts {
  id: number
  title: string | null
  description: string | null
}

/** Makes both tables again, empty, as migrations 0005, 0012 and 0013 left them. */
async function recreate(db: Kysely<any>): Promise<void> {
  await sql`drop table event_search`.execute(db)
  await sql`drop table event_search_pairs`.execute(db)
  await sql`create virtual table event_search using fts5(title, description, tokenize = 'trigram case_sensitive 1')`.execute(db)
  await sql`create virtual table event_search_pairs using fts5(pairs, tokenize = 'ascii', detail = 'none', content = '', contentless_delete = 1)`.execute(db)
  for (const table of ['event_search', 'event_search_pairs']) {
    await sql`insert into ${sql.table(table)} (${sql.ref(table)}, rank) values ('automerge', 0)`.execute(db)
  }
}

/**
 * Moves the index's texts aside (`event_search_kept`: an event's title and description, as `texts` reads
 * them from the store of the index as it is), makes both tables again and writes `rows` of each event.
 */
async function rebuild(db: Kysely<any>, texts: RawBuilder<unknown>, rows: (event: Texts) => Array<{ rowid: number; title: string | null; description: string | null }>): Promise<void> {
  await sql`create table event_search_kept (id integer primary key, title text, description text)`.execute(db)
  await sql`insert into event_search_kept (id, title, description) ${texts}`.execute(db)
  await recreate(db)
  let after = -1
  for (;;) {
    const batch: Texts[] = (await sql<Texts>`select id, title, description from event_search_kept where id > ${after} order by id limit ${BATCH}`.execute(db)).rows
    if (batch.length === 0) break
    after = batch[batch.length - 1]?.id ?? after
    const written = batch.flatMap(rows)
    if (written.length === 0) continue
    await db.insertInto('event_search').values(written).execute()
    await db.insertInto('event_search_pairs').values(written.map((r) => ({ rowid: r.rowid, pairs: `${pairs(r.title)} ${pairs(r.description)}`.trim() }))).execute()
  }
  await sql`drop table event_search_kept`.execute(db)
  // Filled with FTS5's merging off, the tables hold many small segments: merged into one each, as the bulk
  // loader leaves them, so that the writes after this do not inherit the merging (each merges a little).
  for (const table of ['event_search', 'event_search_pairs']) await sql`insert into ${sql.table(table)} (${sql.ref(table)}) values ('optimize')`.execute(db)
}

export async function up(db: Kysely<any>): Promise<void> {
  if (db.getExecutor().adapter instanceof PostgresAdapter) return
  await rebuild(db, sql`select id, c0, c1 from event_search_content`, (e) => [
    ...(e.title === null ? [] : [{ rowid: e.id * 2, title: e.title, description: null }]),
    ...(e.description === null ? [] : [{ rowid: e.id * 2 + 1, title: null, description: e.description }]),
  ])
}

export async function down(db: Kysely<any>): Promise<void> {
  if (db.getExecutor().adapter instanceof PostgresAdapter) return
  await rebuild(db, sql`select id >> 1, max(c0), max(c1) from event_search_content group by id >> 1`, (e) =>
    [{ rowid: e.id, title: e.title, description: e.description }])
}
