/**
 * Everything that differs between SQLite (the embedded default) and PostgreSQL (the scale-out engine)
 * lives here, behind named functions, so repositories and migrations stay portable.
 *
 * Also where the data stands for the read caches (`dataVersion`): the change log's head and the data
 * epoch, which triggers move exactly when a table the caches read is written (migration 0007), read by
 * one statement alike on both engines (on SQLite through a statement prepared on the connection). The
 * engines' own signals are not used: SQLite's `data_version` and `total_changes()` moved with every
 * webhook claim and attempt, PostgreSQL's snapshot xmax with every write anywhere in the cluster.
 */
import { EARTH_RADIUS_KM } from '../lib/geo.js'
import { FOLDS_INTO_ASCII, foldText } from '../lib/text.js'
import { CompiledQuery, PostgresAdapter, sql, type Compilable, type Expression, type Kysely, type QueryExecutorProvider, type SqlBool } from 'kysely'
import { boundQuery, byShape, executeCompiled, prepared } from './prepared.js'
import { DEFERRED, LOG_LOCK_THEN_VERSION, READ_AHEAD, logTailText, VERSION_IN_WRITE_POSTGRES, VERSION_THEN_COMMIT, withLiterals } from './postgres-dialect.js'
import type { Database } from './schema.js'

export function isPostgres(db: QueryExecutorProvider): boolean {
  return db.getExecutor().adapter instanceof PostgresAdapter
}

/**
 * A write whose answer its caller does not read (no rows, no count), in a transaction: on PostgreSQL sent with the
 * transaction's next statement that is answered, or its tail, or its commit, in one text (postgres-dialect.ts
 * `DEFERRED`: one round trip for both, issue 49); it runs before that statement, so everything after sees it, and
 * its failure fails that statement (a 23505 or a deadlock is still the unit of work's to run again). At once on
 * SQLite, outside a transaction, or when a value cannot be written into the text.
 */
/**
 * Reads the transaction will run next, one after the other with nothing in between, sent now together (with what is
 * ahead: a concurrent unit's begin, deferred writes) in one round trip on PostgreSQL (postgres-dialect.ts
 * `READ_AHEAD`): each then answered from what came back (issue 49: a create's checks). Any other statement run first
 * drops the answers, and a read not sent ahead runs as ever, so reads ahead change no result, only round trips.
 * Nothing on SQLite (its statements cost no round trip) or outside a transaction.
 */
export async function readAhead(trx: Kysely<Database>, reads: ReadonlyArray<CompiledQuery | undefined>): Promise<void> {
  if (!trx.isTransaction || !isPostgres(trx)) return
  const texts = reads.flatMap((read) => {
    const text = read === undefined ? undefined : withLiterals(read)
    return text === undefined ? [] : [text]
  })
  if (texts.length > 1) await executeCompiled(trx, CompiledQuery.raw(READ_AHEAD, texts))
}

export async function deferredWrite(trx: Kysely<Database>, query: CompiledQuery): Promise<void> {
  const text = trx.isTransaction && isPostgres(trx) ? withLiterals(query) : undefined
  await executeCompiled(trx, text === undefined ? query : CompiledQuery.raw(`${DEFERRED}${text}`, []))
}

/** NFC and full case folding (lib/text.ts), so a needle folded in JS meets a column folded in SQL. */
export function foldCase(text: string): string {
  return foldText(text)
}

/** Where `needle` first appears in `text` (1-based; 0: nowhere), in the engine's own words. */
export function textPosition(db: QueryExecutorProvider, text: Expression<unknown>, needle: Expression<unknown>): Expression<number> {
  return sql<number>`${isPostgres(db) ? sql.raw('strpos') : sql.raw('instr')}(${text}, ${needle})`
}

/**
 * A literal substring match of `needle` in any of `columns`, compared after NFC normalisation and full
 * case folding (CONTRACT §3). No LIKE: `%`, `_` and `\` are plain characters. SQLite's own lower() only
 * folds ASCII, so SQLite uses the `casefold` function registered in `openDatabase` (`foldCase`);
 * PostgreSQL folds with ICU (`folded_`).
 */
export function containsText(db: QueryExecutorProvider, columns: ReadonlyArray<Expression<unknown>>, needle: string): Expression<SqlBool> {
  const folded = foldCase(needle)
  const position = isPostgres(db) ? sql.raw('strpos') : sql.raw('instr')
  const tests = columns.map((column) => {
    const exact = sql<SqlBool>`coalesce(${position}(${folded_(db, column)}, ${folded}), 0) > 0`
    // SQLite refuses LIKE patterns over 50,000 bytes: a longer needle skips the pre-filter.
    if (isPostgres(db) || !ASCII.test(folded) || folded.length > MAX_PREFILTER_LENGTH) return exact
    // SQLite calls `casefold` (JavaScript) for every row; an ASCII needle first passes through LIKE, which
    // is native and folds ASCII letters alike. A text holding a character whose fold holds ASCII (`ß`,
    // `İ`, `K`, ligatures: FOLDS_INTO_ASCII) is always passed on (one native GLOB): the pre-filter keeps
    // every match.
    const pattern = `%${folded.replace(/[\\%_]/g, (c) => `\\${c}`)}%`
    return sql<SqlBool>`((${column} like ${pattern} escape '\\' or ${column} glob ${FOLDING_GLOB}) and ${exact})`
  })
  return sql<SqlBool>`(${sql.join(tests, sql` or `)})`
}

/**
 * A column folded as `foldText` folds (lib/text.ts), in SQL: SQLite calls it (`casefold`, registered in
 * `openDatabase`); PostgreSQL runs the same steps with ICU's case mappings, which are the full ones
 * (`ß` → `SS`; the database's own collation may fold ASCII only): NFC, `ẞ` as `ß`, upper, lower, the
 * final sigma as `σ`, the dot above an `i` dropped, NFC.
 */
function folded_(db: QueryExecutorProvider, column: Expression<unknown>): Expression<string> {
  if (!isPostgres(db)) return sql<string>`casefold(${column})`
  return sql<string>`normalize(replace(replace(lower(upper(replace(normalize(${column}, NFC), 'ẞ', 'ß') collate "und-x-icu") collate "und-x-icu"), 'ς', 'σ'), 'i̇', 'i'), NFC)`
}


/**
 * What `search` looks into of an event (CONTRACT §3, §6), folded (`foldCase`) as the search index
 * holds it (migration 0005): the title, and the description unless the event is password-protected.
 */
export function eventSearchTexts(event: { title: string; description: string | null; password: string | null }): { title: string; description: string | null } {
  return { title: foldCase(event.title), description: event.password === null && event.description !== null ? foldCase(event.description) : null }
}

/** Writes an event's row of the search index (`eventSearchTexts`), replacing the one it had; in the write's transaction. */
export async function writeEventSearch(db: Kysely<Database>, id: number, texts: { title: string; description: string | null }, created = false): Promise<void> {
  if (isPostgres(db)) {
    await deferredWrite(db, searchRowUpserted(db, id, texts.title, texts.description, searchPairList(texts)))
    return
  }
  // FTS5 takes no upsert: the old row out, the new one in (an event created in this unit of work has none:
  // ids are never reused, AUTOINCREMENT). The pairs' table (contentless, deletes by rowid) replaces.
  const pairs = searchPairs(texts)
  await searchWrite(db, async () => {
    if (!created) await searchRowDeleted(db, id)
    await searchRowInserted(db, id, texts.title, texts.description)
    await searchPairsReplaced(db, id, pairs)
  })
}

/** Removes an event's row of the search index (PostgreSQL's goes with the event by its foreign key; SQLite's FTS5 tables have none). */
export async function deleteEventSearch(db: Kysely<Database>, id: number): Promise<void> {
  if (isPostgres(db)) {
    await searchRowOfEventDeleted(db, id)
    return
  }
  await searchWrite(db, async () => {
    await searchRowDeleted(db, id)
    await searchPairsDeleted(db, id)
  })
}

/** Pages of segments each write that changes SQLite's search index has merged (migration 0013). */
export const SEARCH_MERGE_PAGES = 8

/**
 * SQLite: the transactions whose writes changed the search index, with how many writes did. The merging of the
 * index's segments is done once a transaction, just before its commit (`mergeSearchWrites`), not once a write: a
 * shared commit (unit-of-work.ts) holds several writes, and a merge statement a write made each of them pay for
 * statements and pages that one merge of the transaction's share does once.
 */
const searchWrites = new WeakMap<object, number>()

/**
 * SQLite: the search index's statements of a shared transaction's units (unit-of-work.ts), in the order they were
 * asked for, held until just before its commit (`mergeSearchWrites` runs them). FTS5 writes what a transaction gave
 * it as a new segment of its index at every savepoint (it cannot roll back its pending terms otherwise), so run
 * inside their units, a shared transaction's creates made one segment each in both tables, and the merging was
 * mostly of those small segments; run together after the last unit, they make one segment a table. Nothing in a
 * unit of work reads the index (searches are reads, which wait for the connection), so running them later inside
 * the same transaction changes nothing anyone sees: they commit with the units that asked for them, or not at all.
 */
const searchStaged = new WeakMap<object, Array<() => Promise<void>>>()

/** SQLite: the search index's writes of `trx` held until just before its commit (a shared transaction, unit-of-work.ts). */
export function stageSearchWrites(trx: Kysely<Database>): void {
  searchStaged.set(trx, [])
}

/** Where the writes held for `trx` stand (`stageSearchWrites`): a unit of work's first, for `searchWritesDropped`. */
export function searchWritesMark(trx: Kysely<Database>): number {
  return searchStaged.get(trx)?.length ?? 0
}

/** The writes held for `trx` since `mark` dropped: the unit of work that asked for them was rolled back to its savepoint. */
export function searchWritesDropped(trx: Kysely<Database>, mark: number): void {
  const staged = searchStaged.get(trx)
  if (staged !== undefined) staged.length = mark
}

/** One write of the search index in `trx`: held when the transaction holds them (`stageSearchWrites`), else run now. */
async function searchWrite(trx: Kysely<Database>, write: () => Promise<void>): Promise<void> {
  searchWrites.set(trx, (searchWrites.get(trx) ?? 0) + 1)
  const staged = searchStaged.get(trx)
  if (staged !== undefined) staged.push(write)
  else await write()
}

/**
 * SQLite: a bounded share of the merging of the search index's segments, in the write's transaction, just before
 * it commits (unit-of-work.ts; migration 0013 turned FTS5's own merging off, which merged whole levels at the end
 * of some write): nothing when no write of `trx` changed the index or no level holds enough segments to merge,
 * else at most SEARCH_MERGE_PAGES pages of each table for each write that changed it (as much as each write
 * merged alone), in one statement a table.
 */
export async function mergeSearchWrites(trx: Kysely<Database>): Promise<void> {
  const staged = searchStaged.get(trx)
  if (staged !== undefined) {
    searchStaged.delete(trx)
    for (const write of staged) await write()
  }
  const writes = searchWrites.get(trx)
  if (writes === undefined) return
  searchWrites.delete(trx)
  const pages = SEARCH_MERGE_PAGES * Math.min(writes, MERGED_WRITES_MAX)
  await searchMerged(String(pages))(trx)
  await searchPairsMerged(String(pages))(trx)
}

/** Writes whose share of merging one transaction does at most (a shared commit holds 16; a bulk write's transaction is merged by later writes and, at worst, FTS5's crisis merge). */
const MERGED_WRITES_MAX = 16

/**
 * SQLite: the id the next row of `events` will be given (AUTOINCREMENT: one past every id it ever gave, as
 * `sqlite_sequence` keeps it, and past every row it holds), read inside the write transaction, where no other
 * writer can take it first: a new event's row is then written whole by its insert (its `event-<id>` slug, its own
 * id as its translation group) instead of being updated right after it (posts.ts `settleNewPost`), which moved its
 * entries in two indexes and fired the row's update triggers. PostgreSQL: the identity's next value, taken
 * (`nextval`: no other transaction is given it, whether this one commits or not), for the same row written whole.
 */
export async function nextEventId(trx: Kysely<Database>): Promise<number> {
  const { rows } = await executeCompiled(trx, nextEventIdRead(trx))
  return Number(rows[0]?.id)
}

/**
 * The statement of `nextEventId`: on PostgreSQL the identity's next value, taken (a create's insert then writes the
 * row whole, with its slug and group, and need not wait for its answer; sent ahead with its checks, issue 49).
 */
export function nextEventIdRead(trx: Kysely<Database>): CompiledQuery<{ id: number | string }> {
  return isPostgres(trx) ? nextIdentity(trx) : nextSqliteId(trx)
}

const nextSqliteId = boundQuery(0, () => sql<{ id: number }>`select max(coalesce((select seq from sqlite_sequence where name = 'events'), 0),
  coalesce((select max(id) from events), 0)) + 1 as id`)
const nextIdentity = boundQuery(0, () => sql<{ id: string }>`select nextval(pg_get_serial_sequence('events', 'id')) as id`)

// The search index's statements, built once per engine (db/prepared.ts).
const searchRowUpserted = boundQuery(4, (db, id: number, title: string, description: string | null, pairs: string[]) =>
  sql`insert into event_search (event_id, title, description, pairs) values (${id}, ${title}, ${description}, ${pairs}::text[])
    on conflict (event_id) do update set title = excluded.title, description = excluded.description, pairs = excluded.pairs`)
const searchRowOfEventDeleted = prepared(1, (db, id: number) => sql`delete from event_search where event_id = ${id}`)
const searchRowDeleted = prepared(1, (db, id: number) => sql`delete from event_search where rowid = ${id}`)
const searchRowInserted = prepared(3, (db, id: number, title: string, description: string | null) =>
  sql`insert into event_search (rowid, title, description) values (${id}, ${title}, ${description})`)
const searchPairsReplaced = prepared(2, (db, id: number, pairs: string) => sql`insert or replace into event_search_pairs (rowid, pairs) values (${id}, ${pairs})`)
const searchPairsDeleted = prepared(1, (db, id: number) => sql`delete from event_search_pairs where rowid = ${id}`)
// The number of pages is written into the statement (one per count of writes a transaction merges for).
const searchMerged = byShape(MERGED_WRITES_MAX, (pages) => prepared(0, () => sql`insert into event_search (event_search, rank) values ('merge', ${sql.lit(Number(pages))})`))
const searchPairsMerged = byShape(MERGED_WRITES_MAX, (pages) => prepared(0, () => sql`insert into event_search_pairs (event_search_pairs, rank) values ('merge', ${sql.lit(Number(pages))})`))

/**
 * SQLite: the events whose search texts hold `needle` when, folded, it is two code points, as listed by
 * the index of pairs (exact for two code points; undefined for other needles and on PostgreSQL): a
 * subquery with column `id`, in id order.
 */
function searchPairIds(db: QueryExecutorProvider, needle: string): Expression<{ id: number }> | undefined {
  if (isPostgres(db)) return undefined
  const points = [...foldCase(needle)]
  if (points.length !== 2) return undefined
  const token = pairToken(points[0]?.codePointAt(0) as number, points[1]?.codePointAt(0) as number)
  return sql<{ id: number }>`(select rowid as id from event_search_pairs where event_search_pairs match ${ftsPhrase(token)})`
}

/** The token of two adjacent code points in SQLite's index of pairs: their hexadecimal numbers joined by `g` (ASCII letters and digits, one token). */
function pairToken(first: number, second: number): string {
  return `${first.toString(16)}g${second.toString(16)}`
}

/**
 * Every pair of adjacent code points in the folded texts (`eventSearchTexts`), each once, as the tokens
 * SQLite's index of pairs holds (migration 0012): a two-character needle is in a text exactly when its
 * token is in the text's row. No pair spans the two texts.
 */
export function searchPairs(texts: { title: string; description: string | null }): string {
  const tokens = new Set<string>()
  for (const text of [texts.title, texts.description]) {
    if (text === null) continue
    let previous: number | undefined
    for (const point of text) {
      const code = point.codePointAt(0) as number
      if (previous !== undefined) tokens.add(pairToken(previous, code))
      previous = code
    }
  }
  return [...tokens].join(' ')
}

/**
 * PostgreSQL's index of pairs (migration 0021, `event_search.pairs`): every distinct pair of adjacent code points
 * in the folded texts (`eventSearchTexts`), each a text of two characters: a two-character needle is in a text
 * exactly when it is one of them. No pair spans the two texts.
 */
export function searchPairList(texts: { title: string; description: string | null }): string[] {
  const pairs = new Set<string>()
  for (const text of [texts.title, texts.description]) {
    if (text === null) continue
    let previous: string | undefined
    for (const point of text) {
      if (previous !== undefined) pairs.add(previous + point)
      previous = point
    }
  }
  return [...pairs]
}

/**
 * The events `search` finds: `ids`, a subquery (column `id`); `holds(id)`, the same as a condition on an
 * event id; `indexed`, whether the trigram index serves it.
 */
export interface SearchedIds {
  ids: Expression<{ id: number }>
  holds: (id: Expression<unknown>) => Expression<SqlBool>
  /** Whether an index lists `ids` (so that, when they are few, they may drive a list). */
  indexed: boolean
  /**
   * SQLite, a needle matched as one phrase: `holds` by a lookup of the one event in the index, which costs
   * more per event than `holds` (a probe of the match list, made once per statement) but makes no list: a
   * page of a needle common in the window reads a few dozen events in list order (`event-filters.ts`).
   */
  looksUp?: (id: Expression<unknown>) => Expression<SqlBool>
}

/**
 * The events whose folded title or description (`eventSearchTexts`) holds `needle`, folded alike, as a
 * plain substring (`%`, `_`, `\`, quotes are characters like any other). PostgreSQL: LIKE with the
 * needle escaped, which pg_trgm's GIN indexes serve for needles of three characters or more.
 * SQLite: the FTS5 trigram index, the needle as one phrase (quoted, so that nothing in it is query
 * syntax): the trigram tokenizer makes a token at every character, so a phrase of the needle's trigrams
 * in sequence within one column is the needle as a substring there, nothing more to check. A needle of
 * fewer than three characters (code points) has no trigram: a needle of two is listed by an index of
 * adjacent pairs (SQLite: migration 0012, so that when it is rare its events drive the list; PostgreSQL:
 * migration 0021, which also serves its checks per event); SQLite checks it per event in the texts, and
 * both engines read the texts for a needle of one, still without folding anything per row.
 */
export function searchedIds(db: QueryExecutorProvider, needle: string): SearchedIds {
  const folded = foldCase(needle)
  const indexed = [...folded].length >= 3
  if (isPostgres(db)) {
    const pairs = [...folded].length === 2
    const pattern = `%${folded.replace(/[\\%_]/g, (c) => `\\${c}`)}%`
    // Two code points: the index of pairs (migration 0021) lists the events holding them, exactly, no text read.
    const ids = pairs
      ? sql<{ id: number }>`(select event_id as id from event_search where pairs @> array[${folded}::text])`
      : sql<{ id: number }>`(select event_id as id from event_search where title like ${pattern} or description like ${pattern})`
    return { ids, holds: (id) => sql<SqlBool>`${id} in ${ids}`, indexed: indexed || pairs }
  }
  if (!indexed) {
    // Checked per event rather than listed first: a page read in list order stops once full, instead of
    // reading the texts of every event of every date first. Read from the FTS5 table's own store of its
    // texts (`<table>_content`: id, c0, c1…), a plain table, at a third of the cost of going through
    // the virtual table; with LIKE (native, faster than instr), exact on folded text: it would fold
    // ASCII letters only, and folded text holds no upper-case letter.
    const pattern = `%${folded.replace(/[\\%_]/g, (c) => `\\${c}`)}%`
    const contains = sql<SqlBool>`(c0 like ${pattern} escape '\\' or c1 like ${pattern} escape '\\')`
    const holds = (id: Expression<unknown>) => sql<SqlBool>`exists (select 1 from event_search_content where id = ${id} and ${contains})`
    const pairIds = searchPairIds(db, needle)
    // Two code points: the index of adjacent pairs lists the events holding them, exactly. Checked per
    // event they are still read from the texts: a LIKE per event of a window costs less than listing
    // thousands of ids first (a common pair: 4.0 against 5.4 ms at 20,000 events).
    if (pairIds !== undefined) return { ids: pairIds, holds, indexed: true }
    return { ids: sql`(select id from event_search_content where ${contains})`, holds, indexed }
  }
  const points = [...folded]
  if (points.length <= MAX_PHRASE_LENGTH) {
    const ids = sql<{ id: number }>`(select rowid as id from event_search where event_search match ${ftsPhrase(folded)})`
    const looksUp = (id: Expression<unknown>) => sql<SqlBool>`exists (select 1 from event_search where event_search match ${ftsPhrase(folded)} and rowid = ${id})`
    return { ids, holds: (id) => sql<SqlBool>`${id} in ${ids}`, indexed, looksUp }
  }
  // A long needle: FTS5 matches a phrase by comparing the positions of each of its trigrams with the
  // next one's, which costs the needle's length times the occurrences of its trigrams in a text (a
  // 10,000-character needle of one letter took 5 s against a text of that letter). Instead, the texts
  // holding a few of its trigrams (each a one-token phrase, no positions compared), then the needle
  // itself looked for in their folded text (`instr`: SQLite's LIKE refuses patterns over 50,000 bytes).
  const ids = sql<{ id: number }>`(select c.id as id from event_search s join event_search_content c on c.id = s.rowid
    where event_search match ${sampledTrigrams(points)} and (instr(c.c0, ${folded}) > 0 or instr(c.c1, ${folded}) > 0))`
  return { ids, holds: (id) => sql<SqlBool>`${id} in ${ids}`, indexed }
}

/** Needles up to this many code points are matched as one FTS5 phrase (exact); longer ones are checked after a pre-filter. */
const MAX_PHRASE_LENGTH = 24
/** How many of a long needle's distinct trigrams its pre-filter asks for. */
const SAMPLED_TRIGRAMS = 12

/** `text` as one FTS5 phrase: quoted, so that nothing in it is query syntax. */
function ftsPhrase(text: string): string {
  return `"${text.replace(/"/g, '""')}"`
}

/**
 * An FTS5 query for the texts holding up to SAMPLED_TRIGRAMS of the distinct trigrams of `points`
 * (spread from its start to its end): every text holding the needle matches it.
 */
function sampledTrigrams(points: readonly string[]): string {
  const distinct = [...new Set(points.slice(0, -2).map((_p, i) => points.slice(i, i + 3).join('')))]
  const step = Math.max(1, (distinct.length - 1) / (SAMPLED_TRIGRAMS - 1))
  const picked = new Set<string>()
  for (let at = 0; Math.round(at) < distinct.length && picked.size < SAMPLED_TRIGRAMS; at += step) picked.add(distinct[Math.round(at)]!)
  return [...picked].map(ftsPhrase).join(' AND ')
}

const ASCII = /^\p{ASCII}*$/u
const FOLDING_GLOB = `*[${FOLDS_INTO_ASCII}]*`
const MAX_PREFILTER_LENGTH = 1000

/**
 * `column IN (ids)` for a list of any length: a query string can carry more ids than the 32,766
 * parameters SQLite binds per statement, so the ids travel as one parameter, a JSON array read with
 * `json_each` (PostgreSQL: one array parameter). Ids that are not safe integers match nothing.
 */
export function inIdList(db: QueryExecutorProvider, column: Expression<unknown>, ids: readonly number[]): Expression<SqlBool> {
  const list = idListValue(db, ids)
  return list === undefined ? sql<SqlBool>`1 = 0` : inIdValue(db, column, list)
}

/**
 * Ends a correlated subquery that is to stay one, probed through its indexes for each row of the outer
 * query: PostgreSQL's `offset 0` keeps it from being pulled up into a join, whose plan the planner then
 * picks by a cost that may tie with reading the outer table whole; SQLite runs such subqueries per row
 * already (nothing to add).
 */
export function probedPerRow(db: QueryExecutorProvider): Expression<unknown> {
  return isPostgres(db) ? sql` offset 0` : sql``
}

/** The one parameter `inIdList` binds for `ids`, undefined when none is a safe integer (for prepared statements). */
export function idListValue(db: QueryExecutorProvider, ids: readonly number[]): number[] | string | undefined {
  const list = ids.filter((id) => Number.isSafeInteger(id))
  if (list.length === 0) return undefined
  return isPostgres(db) ? list : JSON.stringify(list)
}

/** `column` is one of the ids `list` (the value `idListValue` gave) holds. */
export function inIdValue(db: QueryExecutorProvider, column: Expression<unknown>, list: number[] | string): Expression<SqlBool> {
  if (isPostgres(db)) return sql<SqlBool>`${column} = any(${list}::bigint[])`
  return sql<SqlBool>`${column} in (select value from json_each(${list}))`
}

/**
 * Where `column` first appears in `ids`, for ORDER BY, as one parameter like `inIdList`: its offset in
 * the text `,id,id,…,` (in the order of the list; a scan of that text per row, no statement per id).
 */
export function positionInIdList(db: QueryExecutorProvider, column: Expression<unknown>, ids: readonly number[]): Expression<number> {
  const list = `,${ids.map((id) => (Number.isSafeInteger(id) ? id : 0)).join(',')},`
  const position = isPostgres(db) ? sql.raw('strpos') : sql.raw('instr')
  return sql<number>`${position}(${list}, ',' || ${column} || ',')`
}

/**
 * Text in code-point order, as SQLite compares it (BINARY): PostgreSQL's order follows the database's
 * collation (en_US ignores case and punctuation at first), so names and slugs sort alike on every
 * engine only in the "C" collation.
 */
export function bytewise(db: QueryExecutorProvider, text: Expression<unknown>): Expression<string> {
  return isPostgres(db) ? sql<string>`${text} collate "C"` : sql<string>`${text}`
}

/**
 * A JSON array of `value` over the rows of a subquery, in `order` (`[]` when there are none): read back
 * with `fromJson`. SQLite answers JSON as text, PostgreSQL as a parsed value.
 */
export function jsonArrayAgg(db: QueryExecutorProvider, value: Expression<unknown>, order: Expression<unknown>): Expression<string> {
  return isPostgres(db) ? sql<string>`coalesce(json_agg(${value} order by ${order}), '[]'::json)` : sql<string>`json_group_array(${value} order by ${order})`
}

/** A JSON array of the values given, in one row. */
export function jsonArrayOf(db: QueryExecutorProvider, values: ReadonlyArray<Expression<unknown>>): Expression<string> {
  return sql<string>`${isPostgres(db) ? sql.raw('json_build_array') : sql.raw('json_array')}(${sql.join(values)})`
}

/** A JSON object of `key` → `value` over the rows of a subquery, in `order` (a later key wins when read with `fromJson`). */
export function jsonObjectAgg(db: QueryExecutorProvider, key: Expression<unknown>, value: Expression<unknown>, order: Expression<unknown>): Expression<string> {
  return isPostgres(db)
    ? sql<string>`coalesce(json_object_agg(${key}, ${value} order by ${order}), '{}'::json)`
    : sql<string>`json_group_object(${key}, ${value} order by ${order})`
}

/** A value `jsonArrayAgg`, `jsonArrayOf` or `jsonObjectAgg` made, as JavaScript. */
export function fromJson<T>(value: unknown): T {
  return (typeof value === 'string' ? JSON.parse(value) : value) as T
}

// The sphere and the distance every engine computes alike (SQLite calls `haversineKm` itself).
export { EARTH_RADIUS_KM, haversineKm } from '../lib/geo.js'

/**
 * The distance in km between a row's coordinates and a point. SQLite uses the `distance_km` function
 * registered in `openDatabase` (it may lack trigonometry); PostgreSQL computes the haversine itself.
 */
export function distanceKm(db: QueryExecutorProvider, lat: Expression<unknown>, lng: Expression<unknown>, pointLat: number, pointLng: number): Expression<number> {
  if (!isPostgres(db)) return sql<number>`distance_km(${lat}, ${lng}, ${pointLat}, ${pointLng})`
  // Parameters typed: PostgreSQL would infer an integer from `2 * $1` and refuse 6371.0088.
  const float = (value: number) => sql`cast(${value} as double precision)`
  return sql<number>`(2 * ${float(EARTH_RADIUS_KM)} * asin(least(1, sqrt(
    power(sin(radians(${lat} - ${float(pointLat)}) / 2), 2)
    + cos(radians(${float(pointLat)})) * cos(radians(${lat})) * power(sin(radians(${lng} - ${float(pointLng)}) / 2), 2)))))`
}

/**
 * Where the data stands: `head`, the change log's last position (every write through a unit of work
 * moves it, on any node), and `epoch`, the data epoch (migration 0007): moved, committed with the
 * write, by every statement that writes a table the read caches read, by any connection, whether it
 * goes through the log or not. Nothing else moves either: not the webhook dispatcher's claims and
 * attempts, not retention's pruning of the log, not writes to other schemas or databases.
 */
export interface DataVersion {
  head: number
  epoch: number
}

const versionProbes = new WeakMap<object, () => DataVersion>()

/**
 * Lets `dataVersion` read the version of `db`'s connection through `probe` (a statement prepared once
 * on the connection itself, run synchronously: every read asks, and going through the query builder
 * cost more than the statement). Set by `openDatabase` on SQLite.
 */
export function setVersionProbe(db: QueryExecutorProvider, probe: () => DataVersion): void {
  versionProbes.set(db, probe)
}

/** Where the key epoch stands (migration 0026), or undefined when it cannot be told at once (see `setKeyEpochProbe`). */
export type KeyEpochProbe = () => number | undefined

const keyEpochProbes = new WeakMap<object, KeyEpochProbe>()

/**
 * Lets authentication read the key epoch of `db`'s connection at once (a statement prepared on the connection
 * itself, run synchronously), to tell whether a key it verified may have changed since. Set by `openDatabase` on
 * SQLite; PostgreSQL has none (a look would cost the round trip the lookup costs).
 */
export function setKeyEpochProbe(db: QueryExecutorProvider, probe: KeyEpochProbe): void {
  keyEpochProbes.set(db, probe)
}

export function keyEpochProbeOf(db: QueryExecutorProvider): KeyEpochProbe | undefined {
  return keyEpochProbes.get(db)
}

/** Where the write transaction begun next keeps its savepoints' journal: in memory (true) or SQLite's default (see `setJournalStore`). */
export type JournalStore = (inMemory: boolean) => void

const journalStores = new WeakMap<object, JournalStore>()

/**
 * Lets `journalInMemory` switch where `db`'s connection keeps the journal of the write transaction it begins next
 * (SQLite's `temp_store`, which a transaction takes as it begins). Set by `openDatabase` on SQLite.
 */
export function setJournalStore(db: QueryExecutorProvider, store: JournalStore): void {
  journalStores.set(db, store)
}

/**
 * SQLite: the write transaction begun next on `db` keeps its savepoints' and statements' journal in memory (`true`),
 * or where SQLite keeps it by default (`false`: in memory up to 64 KiB, then in a temporary file). A savepoint
 * journals the original of every page it changes; a create changes about 40 (160 kB), so each unit of work of a
 * shared commit after the first wrote them to a file, two system calls a page (issue 49: 0.1–0.25 ms of system
 * CPU a create). Only units of work that change few pages may ask for it (unit-of-work.ts `small`): in memory,
 * a write that changes a whole table would journal it all in anonymous memory. Nothing on PostgreSQL.
 */
export function journalInMemory(db: QueryExecutorProvider, inMemory: boolean): void {
  journalStores.get(db)?.(inMemory)
}

/** A statement's first column, every row, as numbers (see `setIdLister`). */
export type IdLister = (text: string, parameters: readonly unknown[]) => number[]

const idListers = new WeakMap<object, IdLister>()

/**
 * Lets `listIds` read ids on `db`'s connection through `lister` (statements prepared on the connection
 * itself, each row's first value taken as it is: the query builder makes an object of every row, which
 * for thousands of ids cost more than the statement). Set by `openDatabase` on SQLite.
 */
export function setIdLister(db: QueryExecutorProvider, lister: IdLister): void {
  idListers.set(db, lister)
}

/**
 * Ids joined in one text by commas (PostgreSQL's `string_agg(id::text, ',')`, SQLite's `group_concat`) as numbers; none
 * for null or ''. Read digit by digit, where `split(',').map(Number)` made a string of every id first: a common needle's
 * 4,000–20,000 ids were some 8 % of the API's CPU of random searches on PostgreSQL (issue 49, pg-reads3). A text of
 * anything but ids of up to 15 digits (which a number holds exactly) each followed by a comma but the last is read
 * the old way.
 */
export function joinedIds(text: string | null | undefined): number[] {
  if (text == null || text === '') return []
  const ids: number[] = []
  let id = 0
  let digits = 0
  for (let i = 0; i < text.length; i++) {
    const digit = text.charCodeAt(i) - 48
    if (digit >= 0 && digit <= 9 && digits < 15) {
      id = id * 10 + digit
      digits += 1
    } else if (digit === -4 && digits > 0) {
      ids.push(id)
      id = 0
      digits = 0
    } else return text.split(',').map(Number)
  }
  if (digits === 0) return text.split(',').map(Number)
  ids.push(id)
  return ids
}

/**
 * The `id` of every row `query` selects. Through the connection's lister when it has one, holding the
 * connection meanwhile (as any statement of the query builder does: never between the statements of
 * another flow's transaction); on PostgreSQL as one row, the ids joined in one text (`string_agg`): pg makes
 * an object of every row it receives, and the database sends each as a message of its own (a common needle's
 * 19,881 events were 19,881 rows); else through the query builder.
 */
export async function listIds(db: Kysely<Database>, query: Compilable<{ id: number }> & { execute(): Promise<Array<{ id: number }>> }): Promise<number[]> {
  const lister = db.isTransaction ? undefined : idListers.get(db)
  if (lister === undefined && isPostgres(db)) {
    const { sql: text, parameters } = query.compile()
    const { rows } = await db.executeQuery<{ ids: string | null }>(CompiledQuery.raw(`select string_agg(q.id::text, ',') as ids from (${text}) as q`, [...parameters]))
    return joinedIds(rows[0]?.ids)
  }
  if (lister === undefined) return (await query.execute()).map((r) => Number(r.id))
  const { sql: text, parameters } = query.compile()
  return db.connection().execute(async () => lister(text, parameters))
}

/** What `dataVersion` reads: the same statement on every engine (PostgreSQL: kept planned in `VERSION_CALL`'s function). */
export const VERSION_QUERY = 'select (select coalesce(max(position), 0) from changes) as h, '
  + '(select coalesce(max(n), 0) from data_epoch) as e'

/**
 * PostgreSQL: `VERSION_QUERY` as a call of the schema's function `data_version()` (migration 0023, which says why:
 * PL/pgSQL keeps its statement planned per connection, where a statement sent as text is planned on every execution).
 */
export const VERSION_CALL = 'select h, e from data_version()'

let versionsRead = 0

/**
 * How many versions this process has read (every read of one passes through `versionOf`). The read cache
 * uses a look again only while no other read of the version happened since its own: what is computed after
 * such a read (an event document offered at that version, the fill's pass) then comes from a look at least
 * as new as it.
 */
export function versionsReadSoFar(): number {
  return versionsRead
}

let versionRead: ((version: DataVersion) => void) | undefined

/**
 * Tells `listener` of every version read (the read cache: a read on a look taken on trust that reads another version
 * than the look's asks the engine for its reads after it: read-cache.ts `withLook`). One listener at most.
 */
export function onVersionRead(listener: (version: DataVersion) => void): void {
  versionRead = listener
}

/** A version row as `DataVersion` (PostgreSQL may give its bigints as text). */
export function versionOf(row: { h: number | string; e: number | string }): DataVersion {
  versionsRead += 1
  const version = { head: Number(row.h), epoch: Number(row.e) }
  versionRead?.(version)
  return version
}

/**
 * The connection's own version probe (`setVersionProbe`), which answers at once, or undefined (PostgreSQL:
 * `dataVersion` then asks through the query builder). A reader that looks through it has its answer before
 * anything else runs: two reads that ask one after the other without yielding (`Promise.all`) find the
 * first's look taken in, where an awaited answer would let the second ask again.
 */
export function versionProbeOf(db: QueryExecutorProvider): (() => DataVersion) | undefined {
  return versionProbes.get(db)
}

/** Where the data stands (see `DataVersion`): one statement, read before a request's first cached read (read-cache.ts). */
export async function dataVersion(db: QueryExecutorProvider): Promise<DataVersion | undefined> {
  const probe = versionProbes.get(db)
  if (probe !== undefined) return probe()
  const { rows } = await sql<{ h: number | string; e: number | string }>`${sql.raw(isPostgres(db) ? VERSION_CALL : VERSION_QUERY)}`.execute(db)
  const row = rows[0]
  return row === undefined ? undefined : versionOf(row)
}

/**
 * Where the data stands, read inside a write transaction (the unit of work's journal, unit-of-work.ts):
 * not counted by `versionsReadSoFar`, since no cached read follows it. PostgreSQL: the epoch's row is
 * locked (`for update`) as it is read, so no writer outside the API's write lock (raw SQL, another
 * program) moves the epoch until the transaction ends: what moved it between two such reads of one
 * transaction is that transaction. SQLite's write transaction already excludes every other writer.
 */
export async function versionInWrite(trx: Kysely<Database>): Promise<DataVersion | undefined> {
  const { rows } = await executeCompiled(trx, CompiledQuery.raw(isPostgres(trx) ? VERSION_IN_WRITE_POSTGRES : VERSION_QUERY, []) as
    CompiledQuery<{ h: number | string; e: number | string }>)
  const row = rows[0]
  return row === undefined ? undefined : { head: Number(row.h), epoch: Number(row.e) }
}

/**
 * A unit of work's last look at the data version (as `versionInWrite`), and on PostgreSQL its commit in the same
 * round trip (postgres-dialect.ts `VERSION_THEN_COMMIT`: the write lock is held one round trip less); nothing may
 * run in the transaction after it. SQLite: the look alone (the commit is the caller's).
 */
export async function versionThenCommit(trx: Kysely<Database>): Promise<DataVersion | undefined> {
  if (!isPostgres(trx)) return versionInWrite(trx)
  const { rows } = await trx.executeQuery<{ h: number | string; e: number | string }>(CompiledQuery.raw(VERSION_THEN_COMMIT, []))
  const row = rows[0]
  return row === undefined ? undefined : { head: Number(row.h), epoch: Number(row.e) }
}

/**
 * PostgreSQL, a unit of work that ran beside others (unit-of-work.ts `concurrent`): the log lock, then its first look
 * at the data version (as `versionInWrite`), in one round trip (postgres-dialect.ts `LOG_LOCK_THEN_VERSION`).
 */
export async function logLockThenVersion(trx: Kysely<Database>): Promise<DataVersion | undefined> {
  const { rows } = await trx.executeQuery<{ h: number | string; e: number | string }>(CompiledQuery.raw(LOG_LOCK_THEN_VERSION, []))
  const row = rows[0]
  return row === undefined ? undefined : { head: Number(row.h), epoch: Number(row.e) }
}

/**
 * PostgreSQL, a unit of work that ran beside others: its log lock, first look, the change log's `appends` (compiled:
 * change-log.ts `appendQueries`), the epoch's move, its last look and its commit, in one round trip (postgres-dialect.ts
 * `logTailText`): the first look and the last; nothing may run in the transaction after it. Undefined, and nothing
 * sent, when the appends cannot be sent so (the caller then takes `logLockThenVersion`'s three round trips).
 */
export async function logTailThenCommit(trx: Kysely<Database>, appends: readonly CompiledQuery[]): Promise<[DataVersion | undefined, DataVersion | undefined] | undefined> {
  const text = logTailText(appends)
  if (text === undefined) return undefined
  const { rows } = await trx.executeQuery<{ h: number | string; e: number | string } | undefined>(CompiledQuery.raw(text, []))
  const version = (row: { h: number | string; e: number | string } | undefined): DataVersion | undefined =>
    row === undefined ? undefined : { head: Number(row.h), epoch: Number(row.e) }
  return [version(rows[0]), version(rows[1])]
}

/** Whether a statement failed because a unique index refused its row (PostgreSQL's 23505). */
export function isUniqueViolation(error: unknown): boolean {
  return typeof error === 'object' && error !== null && 'code' in error && error.code === '23505'
}

/**
 * Whether a write failed only because another connection held what it needed, so that the whole unit
 * of work may be tried again: SQLite's SQLITE_BUSY (and its variants) once the busy timeout ran out,
 * PostgreSQL's serialization failure (40001) and deadlock (40P01).
 */
export function isWriteConflict(error: unknown): boolean {
  const code = typeof error === 'object' && error !== null && 'code' in error ? error.code : undefined
  return typeof code === 'string' && (code.startsWith('SQLITE_BUSY') || code === '40001' || code === '40P01')
}

/**
 * Whether a write conflict is SQLite's busy timeout run out (`SQLITE_BUSY` itself, `SQLITE_BUSY_TIMEOUT`):
 * the unit of work already waited as long as a request may (CALENDAR_DATABASE_TIMEOUT_MS, CONTRACT §18),
 * so it is answered, not tried again to wait as long once more.
 */
export function isWaitRunOut(error: unknown): boolean {
  const code = typeof error === 'object' && error !== null && 'code' in error ? error.code : undefined
  return code === 'SQLITE_BUSY' || code === 'SQLITE_BUSY_TIMEOUT'
}

/**
 * A select that locks the rows it reads, skipping rows another transaction holds (PostgreSQL's
 * `FOR UPDATE SKIP LOCKED`: several nodes claim different rows at once). SQLite's write transaction
 * (`BEGIN IMMEDIATE`) already excludes every other writer, so it needs no row locks.
 */
export function skippingLocked<Q extends { forUpdate(): Q; skipLocked(): Q }>(db: QueryExecutorProvider, query: Q): Q {
  return isPostgres(db) ? query.forUpdate().skipLocked() : query
}
