/**
 * The engine under test: SQLite unless `TEST_DATABASE=postgres`, then PostgreSQL at `TEST_POSTGRES_URL`
 * (default the local server). On PostgreSQL every fresh database is a schema of its own, so that test
 * files stay independent and run in parallel; a schema a finished test used is emptied (TRUNCATE …
 * RESTART IDENTITY, the state a new migrated database has) and used again by the next test of the same
 * file, since creating and migrating one costs far more than emptying it. The schemas of test processes
 * that have ended are dropped by the next one.
 */
import { randomBytes } from 'node:crypto'
import type { Test } from 'tap'
import pg from 'pg'
import { openDatabase, openSqlite, type DatabaseHandle, type Engine } from '../../src/db/database.js'
import { recordChange, withTransaction } from '../../src/db/unit-of-work.js'

export const TEST_ENGINE: Engine = process.env.TEST_DATABASE === 'postgres' ? 'postgres' : 'sqlite'

/**
 * Registers a test of one engine's own mechanics (a plan, a lock, a driver's round trips) on that engine's leg only:
 * the other leg has nothing of it to run, so it is not listed there rather than counted as skipped.
 */
export function engineTest(engine: Engine, t: Test, name: string, fn: (t: Test) => unknown, options: { skip?: string | false } = {}): void {
  if (TEST_ENGINE === engine) void t.test(name, options, fn)
}

export const TEST_POSTGRES_URL = process.env.TEST_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/test'

/** Schemas made by this process, and those whose test has ended (to empty and use again). */
const made: string[] = []
const used: string[] = []

function urlOf(schema: string): string {
  const url = new URL(TEST_POSTGRES_URL)
  url.searchParams.set('schema', schema)
  // Tests do not outlive a crash of the database server: commits need not wait for the disk.
  if (!url.searchParams.has('options')) url.searchParams.set('options', '-c synchronous_commit=off')
  return url.toString()
}

async function withClient<T>(work: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: TEST_POSTGRES_URL })
  await client.connect()
  try {
    return await work(client)
  } finally {
    await client.end()
  }
}

/** Per schema, the one text that empties it (its tables and sequences, read from the catalog once). */
const resets = new Map<string, string>()

/**
 * Empties a used schema back to a freshly migrated state; false when it could not (then a new one is made).
 * Its tables hold a test's few rows: DELETE of every one, with the triggers off (`session_replication_role =
 * replica`, as TRUNCATE fires no row trigger), costs about a tenth of a TRUNCATE of the 21 tables (each given new
 * files: 0.25–0.7 s a test on a loaded machine against 5–40 ms), in one round trip; the sequences restart (RESTART
 * IDENTITY) and the two epochs move (what the truncation's statement triggers did). A role that may not set the
 * replication role (not a superuser) truncates, as before.
 */
async function empty(schema: string): Promise<boolean> {
  try {
    return await withClient(async (client) => {
      await client.query("set lock_timeout = '10s'")
      // The data epoch's row stays, and the key epoch's: the truncation moves them, as any write to their tables does.
      const { rows } = await client.query<{ name: string }>(
        "select table_name as name from information_schema.tables where table_schema = $1 and table_type = 'BASE TABLE' and table_name not like 'kysely%' and table_name not in ('data_epoch', 'key_epoch')", [schema])
      if (rows.length === 0) return true
      await client.query(`truncate ${rows.map((r) => `"${schema}"."${r.name}"`).join(', ')} restart identity cascade`)
      await client.query(`insert into "${schema}".change_log (id, pruned_through) values (1, 0)`)
      return true
    })
  } catch {
    return false
  }
}

/** `empty` by deleting every row in one round trip; false when this role cannot (then `empty` truncates). */
async function emptyByDelete(schema: string): Promise<boolean> {
  try {
    return await withClient(async (client) => {
      let reset = resets.get(schema)
      if (reset === undefined) {
        const tables = await client.query<{ name: string }>(
          "select c.relname as name from pg_class c join pg_namespace n on n.oid = c.relnamespace where n.nspname = $1 and c.relkind in ('r', 'p') and c.relname not like 'kysely%' and c.relname not in ('data_epoch', 'key_epoch')", [schema])
        if (tables.rows.length === 0) return false
        const q = (name: string) => `"${schema}"."${name}"`
        reset = ["set lock_timeout = '10s'", 'begin', 'set local session_replication_role = replica',
          ...tables.rows.map((r) => `delete from ${q(r.name)}`),
          `select setval(c.oid, s.seqstart, false) from pg_sequence s join pg_class c on c.oid = s.seqrelid join pg_namespace n on n.oid = c.relnamespace where n.nspname = '${schema}'`,
          `insert into ${q('change_log')} (id, pruned_through) values (1, 0)`,
          `update ${q('data_epoch')} set n = n + 1 where id = 1`, `update ${q('key_epoch')} set n = n + 1 where id = 1`, 'commit'].join(';\n')
        resets.set(schema, reset)
      }
      await client.query(reset)
      return true
    })
  } catch {
    return false
  }
}

/**
 * Drops the schemas test processes left behind that are gone now (their pid no longer runs), once per
 * process: a process cannot wait for anything as it exits, so each cleans up after earlier ones.
 */
let swept: Promise<void> | undefined
function sweep(): Promise<void> {
  swept ??= withClient(async (client) => {
    const { rows } = await client.query<{ name: string }>("select nspname as name from pg_namespace where nspname ~ '^t_[0-9]+_[0-9]+_[0-9a-f]+$'")
    for (const { name } of rows) {
      const pid = Number(name.split('_')[1])
      if (pid === process.pid || alive(pid)) continue
      await client.query(`drop schema if exists "${name}" cascade`)
    }
  }).catch(() => undefined)
  return swept
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0)
    return true
  } catch {
    return false
  }
}

/**
 * A URL for a new, empty database of the engine under test: on SQLite `file` (default `:memory:`), on
 * PostgreSQL an empty schema of its own until `t` ends.
 */
export async function freshDatabaseUrl(t: Test, file = ':memory:'): Promise<string> {
  if (TEST_ENGINE === 'sqlite') return file
  await sweep()
  let schema = used.pop()
  if (schema === undefined || !((await emptyByDelete(schema)) || (await empty(schema)))) {
    schema = `t_${process.pid}_${made.length + 1}_${randomBytes(3).toString('hex')}`
    made.push(schema)
  }
  const mine = schema
  t.teardown(() => {
    used.push(mine)
  })
  return urlOf(mine)
}

/**
 * SQLite: the image of a migrated in-memory database, made once per process: each test's `:memory:` database starts
 * as a copy of it (`sqliteImage` of openDatabase) rather than migrated again (5–8 ms against 40–80 ms an open,
 * and a test process opens dozens). The migrations still run, once, in every process.
 */
let image: Promise<Buffer> | undefined
export function migratedSqliteImage(): Promise<Buffer> {
  image ??= openSqlite(':memory:').then(async (handle) => {
    const bytes = handle.sqlite.serialize()
    await handle.close()
    return bytes
  })
  return image
}

/** Opens a new, migrated database of the engine under test (closed in teardown by the caller). */
export async function openTestDatabase(t: Test, file?: string): Promise<DatabaseHandle> {
  const url = await freshDatabaseUrl(t, file)
  return openDatabase(url, url === ':memory:' ? { sqliteImage: await migratedSqliteImage() } : {})
}

/**
 * A unit of work on a second handle on the database at `url`, as another process or node writes: it sets the
 * excerpt of event `id` and logs the change (the journal of the first handle does not know of it).
 */
export async function writeFromAnotherHandle(url: string, id: number): Promise<void> {
  const other = await openDatabase(url)
  try {
    await withTransaction(other.db, async (trx) => {
      await trx.updateTable('events').set({ excerpt: 'written elsewhere' }).where('id', '=', id).execute()
      recordChange(trx, { resource: 'event', id, action: 'update' })
    })
  } finally {
    await other.close()
  }
}

/**
 * A raw write on a second handle on the database at `url`, outside the change log (as SQL run by hand): it sets
 * the excerpt of event `id` to 'raw'; only the data's own version shows it.
 */
export async function rawWriteFromAnotherHandle(url: string, id: number): Promise<void> {
  const other = await openDatabase(url)
  try {
    await withTransaction(other.db, async (trx) => { await trx.updateTable('events').set({ excerpt: 'raw' }).where('id', '=', id).execute() })
  } finally {
    await other.close()
  }
}
