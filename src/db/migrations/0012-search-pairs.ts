/**
 * SQLite: an index of the adjacent pairs of code points in the events' folded search texts, for
 * two-character searches, which the trigram index cannot serve (a needle of two has no trigram). Without
 * it, such a search read the texts of every event of its window to count them (5 ms at 20,000 events, the
 * larger part of the CPU a mix of random searches took). `event_search_pairs` is an FTS5 table keyed by the
 * event id (its rowid), contentless (it keeps no text, only which events hold each pair; rows are deleted
 * by rowid) and without positions (`detail = none`); each row is the distinct pairs of the event's texts as
 * `event_search` holds them (the folded title, and the description unless the event is protected), each
 * pair one token: the two code points in hexadecimal joined by `g` (`ab` is `61g62`). It is written beside
 * `event_search` (db/dialect.ts `writeEventSearch`), and filled here from that index's own store of its texts.
 * PostgreSQL gets none: pg_trgm serves the other needles there, and two characters are read from the texts.
 */
import { PostgresAdapter, sql, type Kysely } from 'kysely'

/** The row of an event: its texts' distinct pairs as tokens (as db/dialect.ts `searchPairs` makes them at the time of this migration). */
function pairs(texts: ReadonlyArray<string | null>): string {
  const tokens = new Set<string>()
  for (const text of texts) {
    if (text === null) continue
    let previous: number | undefined
    for (const point of text) {
      const code = point.codePointAt(0) as number
      if (previous !== undefined) tokens.add(`${previous.toString(16)}g${code.toString(16)}`)
      previous = code
    }
  }
  return [...tokens].join(' ')
}

const BATCH = 500

export async function up(db: Kysely<any>): Promise<void> {
  if (db.getExecutor().adapter instanceof PostgresAdapter) return
  await sql`create virtual table event_search_pairs using fts5(pairs, tokenize = 'ascii', detail = 'none', content = '', contentless_delete = 1)`.execute(db)
  let after = 0
  for (;;) {
    const { rows } = await sql<{ id: number; c0: string | null; c1: string | null }>`select id, c0, c1 from event_search_content where id > ${after} order by id limit ${BATCH}`.execute(db)
    if (rows.length === 0) break
    after = rows[rows.length - 1]?.id ?? after
    await db.insertInto('event_search_pairs').values(rows.map((r) => ({ rowid: r.id, pairs: pairs([r.c0, r.c1]) }))).execute()
  }
}

export async function down(db: Kysely<any>): Promise<void> {
  if (db.getExecutor().adapter instanceof PostgresAdapter) return
  await sql`drop table event_search_pairs`.execute(db)
}
