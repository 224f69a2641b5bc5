/**
 * The benchmark on PostgreSQL: the data set the loader built in a SQLite file, copied into a schema of
 * its own in a PostgreSQL database, so that both engines serve the very same rows (and the scenarios'
 * samples, read from the file, name records that exist on both).
 *
 * The schema is the app's (`openDatabase` migrates it); the rows go in table by table, parents before
 * children (SQLite's own foreign-key list decides the order), in multi-row INSERTs in one transaction;
 * identity sequences then continue after the highest id, and VACUUM ANALYZE gives the planner its statistics
 * and moves what GIN indexes hold pending into them, as autovacuum soon does after a bulk load.
 * The schema is `calendar_bench_<events>`, dropped first if it is there: the URL may not name one.
 */
import SQLite from 'better-sqlite3'
import pg from 'pg'
import { openDatabase } from '../../src/db/database.js'
import { searchPairList } from '../../src/db/dialect.js'

/** Parameters per INSERT: PostgreSQL binds at most 65,535. */
const MAX_PARAMETERS = 30_000

const quote = (name: string) => `"${name.replace(/"/g, '""')}"`

/**
 * The schema the benchmark of `events` events uses (`series`: the fraction of them made series, `--series`);
 * `base`: another name than `calendar_bench_<events>` (`--pg-schema`, for runs side by side on one server).
 */
export function benchSchema(events: number, series = 0, base = `calendar_bench_${events}`): string {
  return series > 0 ? `${base}_series${Math.round(series * 100)}` : base
}

/** `url` with the benchmark's schema (the server's DATABASE_URL). */
export function schemaUrl(url: string, schema: string): string {
  const parsed = new URL(url)
  if (parsed.searchParams.has('schema')) throw new Error('the benchmark uses a schema of its own (calendar_bench_<events>): leave schema out of the URL')
  parsed.searchParams.set('schema', schema)
  return parsed.toString()
}

async function withClient<T>(url: string, work: (client: pg.Client) => Promise<T>): Promise<T> {
  const parsed = new URL(url)
  parsed.searchParams.delete('schema')
  const client = new pg.Client({ connectionString: parsed.toString() })
  await client.connect()
  try {
    return await work(client)
  } finally {
    await client.end()
  }
}

/** Tables in an order where every table comes after those it refers to. */
function parentsFirst(sqlite: SQLite.Database, tables: readonly string[]): string[] {
  const ordered: string[] = []
  const visit = (table: string, path: ReadonlySet<string>) => {
    if (ordered.includes(table) || path.has(table)) return
    const parents = (sqlite.prepare(`select "table" as parent from pragma_foreign_key_list(?)`).all(table) as Array<{ parent: string }>)
      .map((r) => r.parent).filter((p) => p !== table && tables.includes(p))
    for (const parent of parents) visit(parent, new Set([...path, table]))
    ordered.push(table)
  }
  for (const table of tables) visit(table, new Set())
  return ordered
}

/** Copies every table of the SQLite file into the benchmark's schema (`benchSchema`); returns the server's DATABASE_URL. */
export async function copyToPostgres(file: string, url: string, schema: string, log: (message: string) => void): Promise<string> {
  const target = schemaUrl(url, schema)
  await withClient(url, (client) => client.query(`drop schema if exists ${quote(schema)} cascade`))
  const migrated = await openDatabase(target)
  await migrated.close()
  const started = performance.now()
  const sqlite = new SQLite(file, { readonly: true, fileMustExist: true })
  try {
    const present = (sqlite.prepare("select name from sqlite_master where type = 'table' and name not like 'sqlite_%' and name not like 'kysely_%'").all() as Array<{ name: string }>).map((r) => r.name)
    await withClient(url, async (client) => {
      // The tables of both engines (SQLite's FTS5 search index keeps tables of its own; PostgreSQL's
      // search index, which refers to events, is copied last, its event id from FTS5's rowid).
      const shared = new Set((await client.query<{ name: string }>(
        "select table_name as name from information_schema.tables where table_schema = $1 and table_type = 'BASE TABLE'", [schema])).rows.map((r) => r.name))
      // The single events' occurrences are not copied: the events' insert trigger (migrations 0017, 0018) writes them as
      // the events come. A series' rows (the trigger leaves them to the app) are copied after the events, all of them.
      const tables = present.filter((t) => shared.has(t) && t !== 'event_search' && t !== 'event_occurrences')
      const searchIndex = present.includes('event_search') && shared.has('event_search')
      // PostgreSQL's index of pairs (migration 0021), made from the texts as the app makes it.
      const searchPairs = searchIndex && (await client.query(
        "select 1 from information_schema.columns where table_schema = $1 and table_name = 'event_search' and column_name = 'pairs'", [schema])).rowCount === 1
      await client.query(`set search_path = ${quote(schema)}`)
      await client.query('begin')
      await client.query(`truncate ${[...tables, ...(searchIndex ? ['event_search'] : [])].map(quote).join(', ')} cascade`)
      const seriesOccurrences = present.includes('event_occurrences') && shared.has('event_occurrences')
      for (const table of [...parentsFirst(sqlite, tables), ...(searchIndex ? ['event_search'] : []), ...(seriesOccurrences ? ['event_occurrences'] : [])]) {
        const search = table === 'event_search'
        const occurrences = table === 'event_occurrences'
        const columns = search ? ['event_id', 'title', 'description', ...(searchPairs ? ['pairs'] : [])]
          : (sqlite.prepare('select name from pragma_table_info(?) order by cid').all(table) as Array<{ name: string }>).map((r) => r.name)
        const identity = (await client.query<{ column_name: string }>(
          "select column_name from information_schema.columns where table_schema = $1 and table_name = $2 and is_identity = 'YES'", [schema, table])).rows.map((r) => r.column_name)
        const perInsert = Math.max(1, Math.floor(MAX_PARAMETERS / columns.length))
        const head = `insert into ${quote(table)} (${columns.map(quote).join(', ')})${identity.length > 0 ? ' overriding system value' : ''} values `
        const order = columns.includes('id') ? ' order by id' : ''
        let batch: unknown[][] = []
        let copied = 0
        const flush = async () => {
          if (batch.length === 0) return
          const values = batch.map((row, r) => `(${row.map((_, c) => `$${r * columns.length + c + 1}`).join(', ')})`).join(', ')
          await client.query(head + values, batch.flat())
          copied += batch.length
          batch = []
        }
        const select = search ? 'select rowid, title, description from event_search order by rowid'
          : occurrences ? `select ${columns.map((c) => `o.${quote(c)}`).join(', ')} from events e join event_occurrences o on o.event_id = e.id where e.recurrence is not null order by o.event_id, o.occurrence`
            : `select ${columns.map(quote).join(', ')} from ${quote(table)}${order}`
        for (const row of sqlite.prepare(select).raw().iterate() as Iterable<unknown[]>) {
          if (search && searchPairs) row.push(searchPairList({ title: row[1] as string, description: row[2] as string | null }))
          batch.push(row)
          if (batch.length >= perInsert) await flush()
        }
        await flush()
        for (const column of identity) {
          await client.query(`select setval(pg_get_serial_sequence($1, $2), coalesce((select max(${quote(column)}) from ${quote(table)}), 0) + 1, false)`, [`${quote(schema)}.${quote(table)}`, column])
        }
        if (copied > 0) log(`  ${table}: ${copied.toLocaleString('en')} rows`)
      }
      await client.query('commit')
      // Vacuumed as well as analyzed, as autovacuum soon does after a bulk load: a GIN index (the search index's
      // trigrams) keeps what was inserted in a pending list that every scan reads until a vacuum moves it into the
      // index, and the planner prices that in (a needle found nowhere was read from every event's texts, 39 ms,
      // instead of 0.05 ms through the index). The search index's table too, whose GIN indexes those are (it was left out).
      for (const table of [...tables, ...(searchIndex ? ['event_search'] : []), 'event_occurrences']) await client.query(`vacuum (analyze) ${quote(table)}`)
    })
  } finally {
    sqlite.close()
  }
  log(`copied into PostgreSQL schema ${schema} in ${((performance.now() - started) / 1000).toFixed(1)} s`)
  return target
}

/** Drops the benchmark's schema. */
export async function dropBenchSchema(url: string, schema: string): Promise<void> {
  await withClient(url, (client) => client.query(`drop schema if exists ${quote(schema)} cascade`))
}
