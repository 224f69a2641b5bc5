/**
 * `npm run backup -- <file>`: a consistent copy of the SQLite database at `DATABASE_URL` (the same
 * variables as the server), taken while servers run, through SQLite's online backup (better-sqlite3's
 * `db.backup`). The copy is one snapshot: every write committed before it began is in it, none that
 * committed after. It is written beside its target first and renamed into place once `PRAGMA
 * integrity_check` passes on it, so the target never holds half a copy; an existing file is never
 * overwritten. A PostgreSQL URL is refused with a pointer to `pg_dump`.
 * Restore: stop every server on the database, copy the backup over the database file (and delete its
 * `-wal` and `-shm` files), start again.
 */
import { existsSync, renameSync, rmSync } from 'node:fs'
import { basename, dirname, join, resolve } from 'node:path'
import { pathToFileURL } from 'node:url'
import SQLite from 'better-sqlite3'
import { ConfigError, loadConfig } from '../src/config.js'
import { isPostgresUrl, shownUrl } from '../src/db/database.js'

const USAGE = 'usage: npm run -s backup -- <file>   (copies the SQLite database at DATABASE_URL into <file>)'

class BackupError extends Error {}

/** How long the copy waits for a lock another connection holds (a checkpoint), as the server's connections do. */
const BUSY_TIMEOUT_MS = 5_000

export interface BackupResult {
  pages: number
  file: string
}

/** Copies the SQLite database file `source` into `target` (a new file), checked; resolves with its page count. */
export async function backupSqlite(source: string, target: string): Promise<BackupResult> {
  if (source === ':memory:') throw new BackupError('DATABASE_URL is :memory:: there is no file to back up')
  if (!existsSync(source)) throw new BackupError(`${source} does not exist: nothing to back up (is DATABASE_URL the server's?)`)
  if (existsSync(target)) throw new BackupError(`${target} already exists: give a new file name (a backup never overwrites)`)
  if (resolve(source) === resolve(target)) throw new BackupError('the backup must go to another file than the database')
  if (!existsSync(dirname(resolve(target)))) throw new BackupError(`the folder of ${target} does not exist`)
  const partial = join(dirname(resolve(target)), `.${basename(target)}.partial-${String(process.pid)}`)
  const db = new SQLite(source, { fileMustExist: true })
  try {
    db.pragma(`busy_timeout = ${String(BUSY_TIMEOUT_MS)}`)
    // Every page in one step after the first: one read transaction, so one snapshot, and no restart when
    // servers write meanwhile (in WAL mode a reader blocks no writer).
    const progress = await db.backup(partial, { progress: () => 0x7fffffff })
    const copy = new SQLite(partial, { fileMustExist: true })
    try {
      const check = copy.pragma('integrity_check', { simple: true })
      if (check !== 'ok') throw new BackupError(`the copy failed its integrity check: ${String(check)}`)
      // The copy is a database of its own: back to a single file, nothing left in a write-ahead log.
      copy.pragma('journal_mode = DELETE')
    } finally {
      copy.close()
    }
    renameSync(partial, target)
    return { pages: progress.totalPages, file: target }
  } finally {
    db.close()
    for (const leftover of [partial, `${partial}-wal`, `${partial}-shm`, `${partial}-journal`]) rmSync(leftover, { force: true })
  }
}

async function main(args: string[]): Promise<void> {
  const [target, ...rest] = args
  if (target === undefined || target === '' || rest.length > 0 || target.startsWith('--')) throw new BackupError(USAGE)
  const config = loadConfig()
  if (isPostgresUrl(config.databaseUrl)) {
    throw new BackupError(`${shownUrl(config.databaseUrl)} is PostgreSQL: back it up with its own tools, ` +
      '`pg_dump -Fc -f calendar.dump <database>` (consistent while servers run), restored with `pg_restore --clean -d <database> calendar.dump`')
  }
  const { pages } = await backupSqlite(config.databaseUrl, target)
  process.stdout.write(`Backed up ${config.databaseUrl} into ${target} (${String(pages)} pages, integrity ok).\n` +
    'To restore: stop the servers, copy it over the database file (deleting its -wal and -shm files), start them again.\n')
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) main(process.argv.slice(2)).catch((error: unknown) => {
  const known = error instanceof BackupError || error instanceof ConfigError
  process.stderr.write(`${known ? error.message : error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`)
  process.exit(known ? 2 : 1)
})
