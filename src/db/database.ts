/**
 * Opens the database `DATABASE_URL` names, migrated, for Kysely.
 *
 * SQLite (a file path or `:memory:`, the embedded default): WAL, foreign keys, a busy timeout that
 * write transactions wait on (they take the write lock up front, see sqlite-dialect.ts) and a cache of
 * prepared statements (Kysely prepares every query anew, which costs more than running it).
 *
 * PostgreSQL (`postgres://` or `postgresql://`, the scale-out engine): a pool of `pg` connections,
 * 64-bit integers and counts read as numbers, write transactions one at a time per schema
 * (postgres-dialect.ts), and migrations in one transaction under an advisory lock, so that nodes
 * starting together migrate once (safe behind a pooler in transaction mode too: docs/scaling.md). A `schema` query parameter (`…/calendar?schema=site_a`) keeps the tables in that
 * schema, created if missing.
 */
import { accessSync, constants, existsSync, mkdirSync } from 'node:fs'
import { dirname } from 'node:path'
import SQLite from 'better-sqlite3'
import { Kysely, sql, type LogEvent, type SqliteDatabase, type SqliteStatement } from 'kysely'
import pg from 'pg'
import { VERSION_QUERY, foldCase, haversineKm, isWriteConflict, setIdLister, setJournalStore, setKeyEpochProbe, setVersionProbe, versionOf, type DataVersion } from './dialect.js'
import { faultCause } from './faults.js'
import { watchFile, type FileWatch } from './file-watch.js'
import { markMigrated, migrateToLatest, migrationMayBeRetried, migrationsApplied, migrationsCurrent, migrationsKnown } from './migrate.js'
import { WriteSerializingPostgresDialect } from './postgres-dialect.js'
import { setStatementRunner } from './prepared.js'
import { WriteLockingSqliteDialect } from './sqlite-dialect.js'
import type { Database } from './schema.js'

export type Engine = 'sqlite' | 'postgres'

export interface DatabaseHandle {
  db: Kysely<Database>
  engine: Engine
  /** SQLite's raw connection, for pragmas and integrity checks in tools and tests (undefined on PostgreSQL). */
  sqlite: SQLite.Database | undefined
  close(): Promise<void>
}

export interface OpenOptions {
  /** PostgreSQL connections at most (DATABASE_POOL_SIZE). */
  poolSize?: number
  /** Told of every statement run, with its parameters (diagnostics; the query-plan test reads what lists run). */
  log?: Logger
  /**
   * How long a statement, a lock wait or the wait for a pooled connection may take (CALENDAR_DATABASE_TIMEOUT_MS):
   * PostgreSQL's `statement_timeout` and `lock_timeout` and the pool's acquire timeout, SQLite's busy timeout.
   * Unset, PostgreSQL waits as long as it takes (tools loading data) and SQLite 5 s.
   */
  timeoutMs?: number
  /** SQLite's page cache, MB (CALENDAR_SQLITE_CACHE_MB; default DEFAULT_SQLITE_CACHE_MB). */
  sqliteCacheMb?: number
  /** How much of the SQLite file is read through a memory map, MB (CALENDAR_SQLITE_MMAP_MB; default DEFAULT_SQLITE_MMAP_MB, 0: off). */
  sqliteMmapMb?: number
  /**
   * `:memory:` only: the database starts as a copy of this image (`serialize()` of a migrated in-memory database)
   * instead of empty, so that it is not migrated again (the tests' many databases: test/helpers/database.ts).
   */
  sqliteImage?: Buffer
}

/**
 * SQLite's page cache per connection, MB: the process's own (anonymous) memory, 16 MB as SQLite's build makes it
 * (`SQLITE_DEFAULT_CACHE_SIZE=-16000`). With the file read through a memory map (below) a read takes its pages from
 * the map and the cache holds mostly what a write changes, so a few MB do (docs/performance.md "Memory and start").
 */
export const DEFAULT_SQLITE_CACHE_MB = 16
/** SQLite's build maps at most this much of a file (`SQLITE_MAX_MMAP_SIZE=0x7fff0000`, MB). */
export const MAX_SQLITE_MMAP_MB = 2047
/**
 * How much of the SQLite file is read through a memory map, MB: its pages are the operating system's page cache
 * (file-backed, shared, given back under pressure), read in place instead of copied into SQLite's cache. Off unless
 * told: through a map, an I/O error or a file truncated in place by another program is a signal that ends the
 * process, not an error SQLite can return (CONTRACT §18: no database fault ends the server); at 1,000,000 events the
 * anonymous memory is within issue 49's limit without it (docs/performance.md "Memory and start").
 */
export const DEFAULT_SQLITE_MMAP_MB = 0

/** A fault of the database met outside any request (a pooled connection closed, the SQLite file lost): logged by whoever listens. */
export interface DatabaseFault {
  level: 'warn' | 'error'
  message: string
  error: unknown
}

type FaultListener = (fault: DatabaseFault) => void

const faultListeners = new WeakMap<object, FaultListener[]>()

/** Calls `listener` with every fault of `db` met outside a request (app.ts logs them; server.ts stops the checkpointer on a lost file). */
export function onDatabaseFault(db: Kysely<Database>, listener: FaultListener): void {
  faultListeners.set(db, [...(faultListeners.get(db) ?? []), listener])
}

function reportFault(db: Kysely<Database>, fault: DatabaseFault): void {
  for (const listener of faultListeners.get(db) ?? []) listener(fault)
}

/** The SQLite file a database was opened on, watched for being deleted or replaced (undefined on PostgreSQL and `:memory:`). */
const watches = new WeakMap<object, FileWatch>()

/**
 * Whether the database can serve (readiness, CONTRACT §16, §18): SQLite's file still the one opened, and a
 * statement answered. A PostgreSQL pool whose every connection is busy answers without asking: its
 * connections are live (a broken one leaves the pool), and asking would wait for one of them, so that
 * readiness flipped with the load.
 */
export async function databaseReady(db: Kysely<Database>): Promise<boolean> {
  const watch = watches.get(db)
  if (watch !== undefined && watch.lost() !== undefined) return false
  if (saturated(db)) return true
  await sql`select 1`.execute(db)
  return true
}

/** Whether the migrations are applied (readiness): as last found while every connection of the pool is busy (see `databaseReady`). */
export async function migrationsReady(db: Kysely<Database>): Promise<boolean> {
  return saturated(db) ? migrationsKnown(db) ?? false : migrationsApplied(db)
}

/** Whether every connection of a PostgreSQL pool is in use (false on SQLite). */
function saturated(db: Kysely<Database>): boolean {
  const pool = pools.get(db)
  return pool !== undefined && pool.idleCount === 0 && pool.totalCount >= (pool.options.max ?? 10)
}

/** A PostgreSQL pool's connections (for metrics). */
export interface PoolStats {
  total: number
  idle: number
  waiting: number
}

const pools = new WeakMap<object, pg.Pool>()

/** The connections of the pool behind `db`, undefined on SQLite (one connection, no pool). */
export function poolStats(db: Kysely<Database>): PoolStats | undefined {
  const pool = pools.get(db)
  return pool === undefined ? undefined : { total: pool.totalCount, idle: pool.idleCount, waiting: pool.waitingCount }
}

export function isPostgresUrl(url: string): boolean {
  return /^postgres(ql)?:\/\//i.test(url)
}

/** `url` as it may be shown (in an error, a log line): a PostgreSQL URL without its password. */
export function shownUrl(url: string): string {
  if (!isPostgresUrl(url)) return url
  const shown = new URL(url)
  if (shown.password !== '') shown.password = '***'
  return shown.toString()
}

/** Opens and migrates the database at `url`: a PostgreSQL URL, a file path (its folder created if needed) or `:memory:`. */
export async function openDatabase(url: string, options: OpenOptions = {}): Promise<DatabaseHandle> {
  return isPostgresUrl(url)
    ? openPostgres(url, options.poolSize ?? 10, options.log, options.timeoutMs)
    : openSqlite(url, options.log, options.timeoutMs, { cacheMb: options.sqliteCacheMb, mmapMb: options.sqliteMmapMb, image: options.sqliteImage })
}

/** How long a SQLite connection waits for a lock another connection holds (SQLite's busy timeout) unless told. */
const BUSY_TIMEOUT_MS = 5000

/**
 * Puts the file in WAL mode (a no-op when it is already). SQLite answers SQLITE_BUSY at once, without
 * waiting out the busy timeout, when another connection holds the file's write lock in rollback mode (a
 * process making the same new file at that moment): it would deadlock otherwise. Asked again, a few
 * milliseconds apart, until the busy timeout has passed.
 */
async function switchToWal(sqlite: SQLite.Database, busyTimeoutMs: number): Promise<void> {
  const deadline = Date.now() + busyTimeoutMs
  for (let attempt = 1; ; attempt++) {
    try {
      sqlite.pragma('journal_mode = WAL')
      return
    } catch (error) {
      if (!isWriteConflict(error) || Date.now() >= deadline) throw error
      await new Promise((resolve) => setTimeout(resolve, Math.min(attempt, 10) * (2 + Math.random() * 3)))
    }
  }
}

/** Pages written to SQLite's WAL between two checkpoints (see `openSqlite`). */
export const WAL_AUTOCHECKPOINT_PAGES = 10_000

/** Opens and migrates a SQLite database (a file path or `:memory:`). */
export async function openSqlite(
  url: string, log?: Logger, timeoutMs = BUSY_TIMEOUT_MS,
  memory: { cacheMb?: number | undefined; mmapMb?: number | undefined; image?: Buffer | undefined } = {},
): Promise<DatabaseHandle & { sqlite: SQLite.Database }> {
  if (url !== ':memory:') {
    mkdirSync(dirname(url), { recursive: true })
    refuseUnwritable(url)
  }
  const sqlite = url === ':memory:' && memory.image !== undefined ? new SQLite(memory.image) : new SQLite(url)
  // The busy timeout first: switching a new file to WAL takes its lock, which another process opening it
  // at once (a node starting beside others, migrating) may hold; without it, that open failed at once.
  sqlite.pragma(`busy_timeout = ${timeoutMs}`)
  try {
    await switchToWal(sqlite, timeoutMs)
  } catch (error) {
    sqlite.close()
    throw error
  }
  sqlite.pragma('synchronous = NORMAL')
  // The WAL is copied back into the database (and both synced) every 10,000 pages written instead of
  // SQLite's 1,000: a page every write changes (the change log's last, an index's, the search index's
  // structure) is copied back once per round, so fewer rounds copy less (3,000 creates in process: 1.96–2.2
  // → 1.72–1.85 ms each). The WAL file grows to about 40 MB between rounds.
  sqlite.pragma(`wal_autocheckpoint = ${WAL_AUTOCHECKPOINT_PAGES}`)
  // Memory (docs/operations.md#memory): SQLite's own cache kept small, the file read through a memory map.
  sqlite.pragma(`cache_size = ${-1024 * (memory.cacheMb ?? DEFAULT_SQLITE_CACHE_MB)}`)
  if (url !== ':memory:') sqlite.pragma(`mmap_size = ${1024 * 1024 * (memory.mmapMb ?? DEFAULT_SQLITE_MMAP_MB)}`)
  sqlite.pragma('foreign_keys = ON')
  sqlite.function('casefold', { deterministic: true }, (value: unknown) =>
    typeof value === 'string' ? foldCase(value) : value)
  sqlite.function('distance_km', { deterministic: true }, (latA: unknown, lngA: unknown, latB: unknown, lngB: unknown) =>
    typeof latA === 'number' && typeof lngA === 'number' && typeof latB === 'number' && typeof lngB === 'number'
      ? haversineKm(latA, lngA, latB, lngB) : null)
  // The file as opened: a write transaction first checks it is still the file at the path (file-watch.ts).
  let watch: FileWatch | undefined
  // What the probes learn as a transaction begins (`withVersionProbe`).
  const begins: Begins = {}
  const beforeWrite = (): void => {
    const lost = watch?.check()
    if (lost !== undefined) throw lost
  }
  const statements = withStatementCache(sqlite)
  const began = (write: boolean | undefined): void => begins.began?.(write)
  const db = new Kysely<Database>({ dialect: new WriteLockingSqliteDialect({ database: statements }, beforeWrite, began), ...logged(log) })
  // A unit of work's prepared statements run on the connection at once (prepared.ts), as Kysely's driver runs them,
  // each told to `log` as Kysely's option tells it.
  setStatementRunner(db, (text, parameters) => {
    try {
      const statement = statements.prepare(text)
      if (statement.reader) return { rows: statement.all(parameters) as unknown[] }
      const { changes, lastInsertRowid } = statement.run(parameters)
      return { numAffectedRows: BigInt(changes), insertId: BigInt(lastInsertRowid), rows: [] }
    } finally {
      log?.({ sql: text, parameters })
    }
  })
  if (url !== ':memory:') {
    watch = watchFile(url, (lost) => {
      // What this process committed is copied into the file it opened and the WAL at the path emptied:
      // left behind, the next start would apply it to whatever file is at the path now.
      try {
        sqlite.pragma('wal_checkpoint(TRUNCATE)')
      } catch {
        // The WAL went with the file.
      }
      reportFault(db, { level: 'error', message: lost.message, error: lost })
    })
    watches.set(db, watch)
  }
  try {
    if (await migrationsCurrent(db)) return withVersionProbe(db, sqlite, watch, begins)
    // One write transaction for all of it (the write lock taken first): processes that open one new file
    // at once migrate it once, one after the other (Kysely takes no lock on SQLite, and runs each
    // migration on its own).
    await inOneTransaction(db, 'begin immediate', (connection) => migrateToLatest(connection, undefined, { ownTransaction: false }))
  } catch (error) {
    watch?.stop()
    await db.destroy()
    throw error
  }
  return withVersionProbe(db, sqlite, watch, begins)
}

/**
 * Refuses a database file the process may not write (CONTRACT §18), as SQLite would only at the first write:
 * it opens such a file read-only without a word. A folder it may not write is refused by SQLite itself (WAL).
 */
function refuseUnwritable(url: string): void {
  if (!existsSync(url)) return
  try {
    accessSync(url, constants.R_OK | constants.W_OK)
  } catch {
    throw new Error(`the database file ${url} may not be written by this process (user ${process.getuid?.() ?? 'unknown'}): give it write permission or run as its owner`)
  }
}

/** What the probes learn as a transaction begins: with undefined just before (the begin is awaited), and once it has begun. */
interface Begins {
  began?: (write: boolean | undefined) => void
}

/** The handle of an open, migrated SQLite database, its data-version probe prepared (the log's and the epoch's tables exist). */
function withVersionProbe(
  db: Kysely<Database>, sqlite: SQLite.Database, watch: FileWatch | undefined, begins: Begins,
): DatabaseHandle & { sqlite: SQLite.Database } {
  markMigrated(db)
  const version = sqlite.prepare(VERSION_QUERY)
  // Inside a write transaction the connection would read what its units of work wrote and have not committed
  // (a shared transaction gives the event loop a turn before its commit: unit-of-work.ts), which may yet be
  // rolled back: a read then takes the version committed when the transaction began, read in it as it has
  // begun (`began`), before anything runs in it: it holds the write lock, so that is what stays committed until
  // it ends, older than or the same as what it will read once the commit lets it have the connection, and never
  // older than a write this process or another has answered. Not read before the begin: `begin immediate` waits
  // there for another process's write lock, and that process's commit, answered to its client, was then missed
  // for the whole transaction (a read on this node took the version from before it, and served records cached
  // before it: a translation's original without it, its feed's ETag another node's). While the begin is awaited
  // (`beginning`) nothing has run in it yet, and a read of the version is that same one.
  const read = (): DataVersion => versionOf(version.get() as { h: number; e: number })
  let committed = read()
  let beginning = false
  const keyEpoch = sqlite.prepare('select n from key_epoch where id = 1').pluck()
  let keysAtBegin: number | undefined
  setVersionProbe(db, () => !sqlite.inTransaction || beginning ? committed = read() : committed)
  // The key epoch (migration 0026), read at once by authentication (repositories/users.ts `keyCallers`). Inside a
  // transaction the connection would read what its units of work wrote and have not committed (they may yet be rolled
  // back, and leave the epoch at a value it will take again): there it answers the epoch read as the write transaction
  // began, which is what is committed until it ends (it holds the write lock); none inside a read transaction, nor
  // while a begin is awaited (a read of the probe then must not take the epoch an earlier transaction read).
  begins.began = (write) => {
    beginning = write === undefined
    if (write === true) committed = read()
    keysAtBegin = write === true ? keyEpoch.get() as number : undefined
  }
  setKeyEpochProbe(db, () => sqlite.inTransaction ? keysAtBegin : keyEpoch.get() as number)
  // Where a write transaction keeps its journal (`journalInMemory`): SQLite reads `temp_store` as a transaction
  // begins, and a pragma acts as it is prepared, so each switch is a statement prepared anew (never cached).
  const tempStore = Number(sqlite.pragma('temp_store', { simple: true }))
  let inMemory = false
  setJournalStore(db, (memory) => {
    if (memory === inMemory) return
    try {
      sqlite.pragma(`temp_store = ${memory ? 2 : tempStore}`)
      inMemory = memory
    } catch {
      // Refused inside a transaction once the connection has a temporary schema (this one makes none): the
      // setting stays, and the unit of work asks again once the transaction is over.
    }
  })
  // Its own statements (the query builder's cache must not be switched to plucking): a few list shapes.
  const listers = new Map<string, SQLite.Statement>()
  setIdLister(db, (text, parameters) => {
    let statement = listers.get(text)
    if (statement === undefined) {
      if (listers.size >= 100) listers.clear()
      statement = sqlite.prepare(text).pluck()
      listers.set(text, statement)
    }
    return statement.all(...parameters) as number[]
  })
  return {
    db, engine: 'sqlite', sqlite,
    close: async () => {
      watch?.stop()
      // Closing checkpoints the WAL into the file: into a lost file it would only write what is lost already.
      await db.destroy()
    },
  }
}

// 64-bit integers (positions, counts) and numerics as JavaScript numbers: every value this schema
// holds is far below 2^53.
const INT8 = 20
const NUMERIC = 1700
const parsers: pg.CustomTypesConfig = {
  getTypeParser: ((oid: number, format?: string) => (oid === INT8 || oid === NUMERIC
    ? (value: string) => Number(value)
    : pg.types.getTypeParser(oid, format as 'text'))) as pg.CustomTypesConfig['getTypeParser'],
}

/** Opens and migrates a PostgreSQL database (see the file's opening comment for `schema`). */
async function openPostgres(url: string, poolSize: number, log?: Logger, timeoutMs?: number): Promise<DatabaseHandle> {
  const parsed = new URL(url)
  const schema = parsed.searchParams.get('schema') ?? undefined
  const sessionOptions = parsed.searchParams.get('options')
  // Both go to the pool on their own: pg would let the URL's `options` replace the search path.
  parsed.searchParams.delete('schema')
  parsed.searchParams.delete('options')
  if (schema !== undefined && !/^[a-z_][a-z0-9_]{0,62}$/.test(schema)) throw new Error(`DATABASE_URL: schema must be a lower-case SQL name, got ${schema}`)
  const connectionString = parsed.toString()
  if (schema !== undefined) {
    const client = new pg.Client({ connectionString, ...(timeoutMs !== undefined ? { connectionTimeoutMillis: timeoutMs } : {}) })
    // An error of the connection after a query failed (the server closing it) is that query's: no crash.
    client.on('error', () => undefined)
    await client.connect()
    try {
      await client.query(`create schema if not exists "${schema}"`)
    } catch (error) {
      // Two nodes creating the schema at once: one wins, the other finds it there.
      if (!(typeof error === 'object' && error !== null && 'code' in error && error.code === '23505')) throw error
    } finally {
      await client.end()
    }
  }
  // Session settings from the URL (`options=-c …`) are kept beside the schema's search path.
  const options = [sessionOptions, schema === undefined ? null : `-c search_path=${schema}`]
    .filter((o): o is string => o !== null && o !== '').join(' ')
  const pool = new pg.Pool({
    connectionString, max: poolSize, types: parsers, ...(options !== '' ? { options } : {}),
    // Bounded waits (CONTRACT §18): for a connection of the pool (the acquire timeout, which also bounds
    // opening one), for a lock (`lock_timeout`: a table locked elsewhere, the write lock of postgres-dialect.ts)
    // and for any statement (`statement_timeout`, reads too). Past them the unit of work fails and rolls back.
    ...(timeoutMs !== undefined ? { connectionTimeoutMillis: timeoutMs, statement_timeout: timeoutMs, lock_timeout: timeoutMs } : {}),
  })
  const db = new Kysely<Database>({ dialect: new WriteSerializingPostgresDialect({ pool }), ...logged(log) })
  pools.set(db, pool)
  // A connection closed by the server or the network (a restart, a failover, a pooler or firewall dropping
  // an idle connection, pg_terminate_backend) is an 'error' event: without a listener it ended the process.
  // An idle connection's is the pool's (which drops it); one in use is also told on the client itself,
  // where the query in flight fails with it and the pool drops the client when it comes back. New
  // connections are opened as they are needed: the pool reconnects by itself.
  pool.on('error', (error) => reportFault(db, { level: 'warn', message: `an idle PostgreSQL connection failed and was dropped: ${faultCause(error)}`, error }))
  // A connection in use has no listener of the pool's: its failure reaches the caller through its next
  // query (answered 503), and the listener only keeps the event from ending the process.
  // JIT off for the session (the first statement of every new connection, queued before any other): a list's
  // statement over tens of thousands of occurrences passes `jit_above_cost`, and compiling it took 0.6 s of a
  // 0.07 s count (docs/performance.md "Issue 45: random reads with recurring events"). Not a startup option,
  // which PgBouncer refuses (docs/scaling.md): behind a pooler in transaction mode, set it on the role as well.
  pool.on('connect', (client) => {
    client.on('error', () => undefined)
    client.query('set jit = off').catch(() => undefined)
  })
  try {
    // One transaction for all of it, under a transaction-level lock: a connection pooler in transaction
    // mode (PgBouncer) keeps a transaction on one server connection, so every lock taken in it (Kysely
    // takes a session-level one of its own around its work, and releases it) is released on the
    // connection that took it; a lock held across transactions could be left behind on another.
    for (let attempt = 1; !(await migrationsCurrent(db)); attempt++) {
      try {
        await inOneTransaction(db, 'begin', async (connection) => {
          // A migration may take longer than a request may wait, and waits for another node's.
          await sql`set local statement_timeout = 0`.execute(connection)
          await sql`set local lock_timeout = 0`.execute(connection)
          await sql`select pg_advisory_xact_lock(hashtext('calendar-migrations:' || current_schema()))`.execute(connection)
          const { rows } = await sql<{ s: string }>`select current_schema() as s`.execute(connection)
          await migrateToLatest(connection, rows[0]?.s ?? 'public', { ownTransaction: false })
        })
        break
      } catch (error) {
        if (attempt >= 5 || !migrationMayBeRetried(error)) throw error
      }
    }
  } catch (error) {
    await db.destroy()
    throw error
  }
  markMigrated(db)
  return { db, engine: 'postgres', sqlite: undefined, close: () => db.destroy() }
}

/** A statement run, with its parameters, as `OpenOptions.log` is told of it. */
export interface LoggedStatement {
  sql: string
  parameters: readonly unknown[]
}
export type Logger = (statement: LoggedStatement) => void

/** Kysely's `log` option calling `log` with each statement that ran (none when `log` is undefined). */
function logged(log: Logger | undefined): { log?: (event: LogEvent) => void } {
  return log === undefined ? {} : { log: (event) => log({ sql: event.query.sql, parameters: event.query.parameters }) }
}

/** Runs `work` on one connection inside one transaction begun with `begin`: committed, or rolled back if it throws. */
async function inOneTransaction(db: Kysely<Database>, begin: 'begin' | 'begin immediate', work: (connection: Kysely<Database>) => Promise<void>): Promise<void> {
  await db.connection().execute(async (connection) => {
    await sql`${sql.raw(begin)}`.execute(connection)
    try {
      await work(connection)
      await sql`commit`.execute(connection)
    } catch (error) {
      await sql`rollback`.execute(connection).catch(() => undefined)
      throw error
    }
  })
}

/**
 * Reuses one prepared statement per SQL text. Safe because Kysely's SQLite driver runs one query at a
 * time on its single connection; the cache is bounded so ad-hoc SQL cannot grow it without limit.
 */
function withStatementCache(sqlite: SQLite.Database, max = 1000): SqliteDatabase {
  const cache = new Map<string, SqliteStatement>()
  return {
    close: () => sqlite.close(),
    prepare(text: string): SqliteStatement {
      let statement = cache.get(text)
      if (statement === undefined) {
        statement = sqlite.prepare(text)
        if (cache.size >= max) {
          const oldest = cache.keys().next()
          if (oldest.done !== true) cache.delete(oldest.value)
        }
        cache.set(text, statement)
      }
      return statement
    },
  }
}
