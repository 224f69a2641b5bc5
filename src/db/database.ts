/**
 * Opens the embedded SQLite database for Kysely: WAL, foreign keys, a busy timeout that write
 * transactions wait on (they take the write lock up front, see sqlite-dialect.ts) and a cache of
 * prepared statements (Kysely prepares every query anew, which costs more than running it).
 */
import { mkdirSync } from 'node:fs'
import { dirname } from 'node:path'
import SQLite from 'better-sqlite3'
import { Kysely, type SqliteDatabase, type SqliteStatement } from 'kysely'
import { SQLITE_VERSION_QUERY, foldCase, haversineKm, setVersionProbe, sqliteVersion } from './dialect.js'
import { migrateToLatest } from './migrate.js'
import { WriteLockingSqliteDialect } from './sqlite-dialect.js'
import type { Database } from './schema.js'

export interface DatabaseHandle {
  db: Kysely<Database>
  /** The raw connection, for pragmas and integrity checks in tools and tests. */
  sqlite: SQLite.Database
  close(): Promise<void>
}

/** Opens (creating the folder if needed) and migrates the database at `url`: a file path or `:memory:`. */
export async function openDatabase(url: string): Promise<DatabaseHandle> {
  if (url !== ':memory:') mkdirSync(dirname(url), { recursive: true })
  const sqlite = new SQLite(url)
  sqlite.pragma('journal_mode = WAL')
  sqlite.pragma('synchronous = NORMAL')
  sqlite.pragma('foreign_keys = ON')
  sqlite.pragma('busy_timeout = 5000')
  sqlite.function('casefold', { deterministic: true }, (value: unknown) =>
    typeof value === 'string' ? foldCase(value) : value)
  sqlite.function('distance_km', { deterministic: true }, (latA: unknown, lngA: unknown, latB: unknown, lngB: unknown) =>
    typeof latA === 'number' && typeof lngA === 'number' && typeof latB === 'number' && typeof lngB === 'number'
      ? haversineKm(latA, lngA, latB, lngB) : null)
  const db = new Kysely<Database>({ dialect: new WriteLockingSqliteDialect({ database: withStatementCache(sqlite) }) })
  try {
    await migrateToLatest(db)
  } catch (error) {
    await db.destroy()
    throw error
  }
  // Prepared once the log's table exists.
  const version = sqlite.prepare(SQLITE_VERSION_QUERY)
  setVersionProbe(db, () => sqliteVersion(version.get() as { h: number; v: number; c: number }))
  return { db, sqlite, close: () => db.destroy() }
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
