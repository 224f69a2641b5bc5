/**
 * Kysely's PostgreSQL dialect with write transactions ordered per schema by two transaction-level advisory locks
 * (released at commit or rollback), so that the change log's positions commit in the order they were taken, which
 * is what lets a reader trust that nothing will appear behind a cursor it was given, and so that writes that may
 * not run beside others run alone:
 * - the *writes* lock (`WRITES_LOCK`): taken exclusively, first, by every write transaction (then it sees everything
 *   committed before it: no lost update between a check and a write, compare-and-swap as on SQLite) except the
 *   units of work that ask to run concurrently (`CONCURRENT_ISOLATION`: creates, PATCHes and deletes of events, issue 49), which take it
 *   shared: they run beside each other, never beside an exclusive one;
 * - the *log* lock (`LOG_LOCK`): the order of commits. An exclusive transaction takes it with the writes lock, at
 *   its start; a concurrent unit of work only at its end, for its last round trip (`logTailText`: one text, since
 *   pg-ratios; three round trips before, `LOG_LOCK_THEN_VERSION` and then the append and `VERSION_THEN_COMMIT`): its
 *   first look at the data version, the change log's insert with the webhook outbox's, and the epoch's move with its
 *   last look and the commit. Everything before (checks, the record's rows, links, term
 *   counts, the slug) runs beside the other creates: what would clash there is refused by a unique index (a slug, a
 *   translation) or a row lock (term counts), and unit-of-work.ts runs such a unit again, alone.
 * Reads take no lock; nodes scale out on reads. A transaction that asks to be read-only takes no lock either.
 *
 * The units of work's transactions say they are the API's (`set local calendar.api = on`): the data epoch's triggers
 * then only note that a table the caches read was written, and the unit moves the epoch once, under the log lock,
 * with its last look (migration 0024); any other transaction moves it at once, as before.
 *
 * Round trips: a unit of work's `begin`, its locks and (exclusive) its first look at the data version go in one (a
 * simple-protocol text of several statements: READ COMMITTED takes a snapshot per statement, so the look, run once
 * the locks are granted, sees every write committed before), and its last look and the commit in another
 * (`VERSION_THEN_COMMIT`). Every other write transaction begins with `begin` and then both locks exclusively.
 */
import {
  CompiledQuery, PostgresDialect, PostgresDriver, type DatabaseConnection, type Driver, type PostgresDialectConfig, type QueryResult,
  type TransactionSettings,
} from 'kysely'
import pg from 'pg'

/**
 * The writes lock, one per schema: nodes that share a schema share it; tests in their own schemas do not wait on each
 * other. Its key is the one every write transaction took exclusively before issue 49, so that a node of the previous
 * release, during an upgrade, still excludes every other writer.
 */
const WRITES_KEY = "hashtext('calendar-writes:' || current_schema())"
/** The log lock's key, one per schema: the order of the change log's positions (and of commits of write transactions). */
const LOG_KEY = "hashtext('calendar-log:' || current_schema())"
const WRITES_LOCK = `select pg_advisory_xact_lock(${WRITES_KEY})`
const WRITES_LOCK_SHARED = `select pg_advisory_xact_lock_shared(${WRITES_KEY})`
const LOG_LOCK = `select pg_advisory_xact_lock(${LOG_KEY})`
/** What a unit of work's transaction says first: it is the API's (the epoch's triggers leave the epoch to it, migration 0024). */
const API_TRANSACTION = "set local calendar.api = 'on'"

/**
 * Where the data stands, read inside a write transaction (dialect.ts `versionInWrite`): the change log's head and
 * the epoch, its row locked so that no writer outside the write lock moves it until the transaction ends.
 */
export const VERSION_IN_WRITE_POSTGRES = 'select (select coalesce(max(position), 0) from changes) as h, n as e from data_epoch where id = 1 for update'

/**
 * The isolation a unit of work's transaction asks for: PostgreSQL's default, asked for by name so that the driver
 * knows the transaction's first statement will be the look at the data version, and reads it with the locks.
 */
export const UNIT_OF_WORK_ISOLATION = 'read committed'

/**
 * What a unit of work that runs beside others asks for (unit-of-work.ts `concurrent`): only a mark for the driver,
 * which begins it READ COMMITTED as any other (PostgreSQL runs READ UNCOMMITTED as READ COMMITTED anyway) with the
 * writes lock shared and no look; its first look is `LOG_LOCK_THEN_VERSION`, at its end.
 */
export const CONCURRENT_ISOLATION = 'read uncommitted'

/** A concurrent unit of work's log lock and then its first look at the data version, in one round trip (the look's snapshot taken once the lock is granted). */
export const LOG_LOCK_THEN_VERSION = `${LOG_LOCK}; ${VERSION_IN_WRITE_POSTGRES}`

/** What begins the text of a concurrent unit of work's tail (`logTailText`), by which its connection knows it. */
const LOG_TAIL = '/* the log\'s tail */ '

/**
 * A concurrent unit of work's whole tail in one round trip (issue 49): the log lock and its first look
 * (`LOG_LOCK_THEN_VERSION`), the change log's appends with the outbox's (`appends`, compiled: their values written
 * into the text as literals, since a text of several statements takes no parameters), and the epoch's move, its last
 * look and the commit (`VERSION_THEN_COMMIT`): the server runs them one after the other without waiting for this
 * process, so the log lock is held for their run and the commit, not for two more round trips and this process's
 * turns between them. Undefined when a value cannot be written as a literal (never, for the log's rows: text,
 * numbers and nulls). The connection answers it with two rows, the first look's and the last's, and the transaction
 * committed (a statement that fails stops the text before the commit: the transaction is rolled back as any other).
 */
export function logTailText(appends: readonly CompiledQuery[]): string | undefined {
  const texts: string[] = []
  for (const append of appends) {
    const text = withLiterals(append)
    if (text === undefined) return undefined
    texts.push(text)
  }
  return `${LOG_TAIL}${[LOG_LOCK_THEN_VERSION, ...texts, VERSION_THEN_COMMIT].join('; ')}`
}

/**
 * A compiled statement with each parameter `$n` written as a quoted literal: untyped, as a parameter is (pg sends
 * every value as text of no declared type), so that the server gives it the type its place asks for. Only text,
 * finite numbers, nulls and arrays of them (in the array text pg itself sends for one: `{1,2}`, `{"a","b"}`);
 * undefined for anything else. The statements given hold no `$` but their parameters'.
 */
export function withLiterals(query: CompiledQuery): string | undefined {
  let written = true
  const text = query.sql.replace(/\$(\d+)/g, (_, n: string) => {
    const value = query.parameters[Number(n) - 1]
    if (value === null || value === undefined) return 'null'
    if (typeof value === 'string') return pg.escapeLiteral(value)
    if (isFinite(value)) return `'${value}'`
    if (Array.isArray(value)) {
      const elements = (value as unknown[]).map((element) => (element === null ? 'NULL'
        : typeof element === 'string' ? `"${element.replace(/(["\\])/g, '\\$1')}"` : isFinite(element) ? String(element) : undefined))
      if (elements.every((element) => element !== undefined)) return pg.escapeLiteral(`{${elements.join(',')}}`)
    }
    written = false
    return ''
  })
  return written ? text : undefined
}

const isFinite = (value: unknown): value is number | bigint => (typeof value === 'number' && Number.isFinite(value)) || typeof value === 'bigint'

/**
 * What marks a write whose answer its caller does not read (dialect.ts `deferredWrite`): its connection keeps it, its
 * values written as literals, and sends it in one text with the transaction's next statement that is answered (or its
 * tail, or its commit), one round trip for both (issue 49). Statements run in the order they were given, so a later
 * read sees the write; a deferred write that fails fails that text, and the transaction with it.
 */
export const DEFERRED = '/* deferred */ '

/**
 * What marks reads sent ahead (dialect.ts `readAhead`): its parameters are the reads' texts (values written as
 * literals), sent in one text (with what is ahead), their answers kept by the connection and given to the same reads
 * when they are run next, in the same transaction, with nothing else run in between (any other statement drops them).
 */
export const READ_AHEAD = '/* reads ahead */'

/**
 * A unit of work's last look at the data version and its commit, in one round trip (`versionThenCommit` in
 * dialect.ts), after the data epoch's move when the transaction wrote a table the caches read (migration 0024).
 */
export const VERSION_THEN_COMMIT = "update data_epoch set n = n + 1 where id = 1 and current_setting('calendar.api_wrote', true) = 'on'; "
  + `${VERSION_IN_WRITE_POSTGRES}; commit`

/** The rows a write's answer says it changed (Kysely's `numAffectedRows`), undefined for other statements. */
function affected(command: string | undefined, rowCount: number | null | undefined): bigint | undefined {
  return command === 'INSERT' || command === 'UPDATE' || command === 'DELETE' || command === 'MERGE' ? BigInt(rowCount ?? 0) : undefined
}

/**
 * A concurrent unit of work's begin, its writes lock shared: not sent on its own but ahead of the transaction's first
 * statement, in its text (issue 49: one round trip less a create, a PATCH, a delete of an event).
 */
const CONCURRENT_BEGIN = [beginText({ isolationLevel: UNIT_OF_WORK_ISOLATION }), API_TRANSACTION, WRITES_LOCK_SHARED]

/** A transaction's first statement(s): `begin`, or `start transaction …` with the settings asked for. */
function beginText(settings: TransactionSettings): string {
  if (settings.isolationLevel === undefined && settings.accessMode === undefined) return 'begin'
  return ['start transaction', settings.isolationLevel === undefined ? '' : ` isolation level ${settings.isolationLevel}`,
    settings.accessMode === undefined ? '' : ` ${settings.accessMode}`].join('')
}

/** A connection of the pool as Kysely uses it (as Kysely's own), which can also send a text of several statements and keep their answers. */
class PostgresConnection implements DatabaseConnection {
  readonly client: pg.PoolClient
  /** The look at the data version taken with the lock, answered to the transaction's first `VERSION_IN_WRITE_POSTGRES`, if nothing ran before it. */
  versionAtBegin: QueryResult<unknown> | undefined
  /** The transaction was committed by `VERSION_THEN_COMMIT`: Kysely's commit that follows has nothing to do. */
  committed = false
  /**
   * What the connection sends before the transaction's next statement, in its text (issue 49): a concurrent unit's
   * begin (its statements: `CONCURRENT_BEGIN`) and the writes deferred since (one statement each), in order.
   */
  ahead: string[] = []
  /** The number of statements `ahead` holds (so that the answers of the statement sent after them are found). */
  aheadStatements = 0
  /** Whether `ahead` holds the transaction's begin: nothing was sent of it yet. */
  beginAhead = false
  /** The answers of reads sent ahead (`READ_AHEAD`), by their text with literals, until another statement runs. */
  readsAhead = new Map<string, QueryResult<unknown>>()

  constructor(client: pg.PoolClient) {
    this.client = client
  }

  async executeQuery<R>(query: CompiledQuery): Promise<QueryResult<R>> {
    const early = this.versionAtBegin
    this.versionAtBegin = undefined
    if (early !== undefined && query.sql === VERSION_IN_WRITE_POSTGRES) return early as QueryResult<R>
    if (this.readsAhead.size > 0) {
      const text = withLiterals(query)
      const answer = text === undefined ? undefined : this.readsAhead.get(text)
      if (answer !== undefined && text !== undefined) {
        this.readsAhead.delete(text)
        return answer as QueryResult<R>
      }
      // Anything else run: what was read ahead may no longer be what a read would find.
      this.readsAhead.clear()
    }
    if (query.sql === READ_AHEAD) {
      const texts = query.parameters as string[]
      const first = this.aheadStatements
      const results = await this.sendAhead(texts.join('; '))
      for (const [i, text] of texts.entries()) {
        const result = results[first + i]
        if (result !== undefined) this.readsAhead.set(text, result)
      }
      return { rows: [] }
    }
    if (query.sql.startsWith(DEFERRED)) {
      this.ahead.push(query.sql)
      this.aheadStatements += 1
      return { rows: [] }
    }
    if (query.sql === VERSION_THEN_COMMIT) {
      const results = await this.sendAhead(VERSION_THEN_COMMIT)
      this.committed = true
      return results[results.length - 2] as QueryResult<R>
    }
    if (query.sql.startsWith(LOG_TAIL)) {
      const first = this.aheadStatements + 1
      const results = await this.sendAhead(query.sql)
      this.committed = true
      // The first look (after the lock) and the last (before the commit).
      return { rows: [results[first]?.rows[0], results[results.length - 2]?.rows[0]] as R[] }
    }
    if (query.sql === LOG_LOCK_THEN_VERSION) {
      const results = await this.sendAhead(LOG_LOCK_THEN_VERSION)
      return results[results.length - 1] as QueryResult<R>
    }
    if (this.ahead.length > 0) {
      const text = withLiterals(query)
      if (text !== undefined) return (await this.sendAhead(text)).at(-1) as QueryResult<R>
      // A value no literal can carry: what is ahead goes first, on its own.
      await this.sendAhead(undefined)
    }
    const { command, rowCount, rows } = await this.client.query(query.sql, [...query.parameters])
    return { numAffectedRows: affected(command, rowCount), rows: (rows ?? []) as R[] }
  }

  /**
   * What is ahead (a begin, deferred writes) and then `text` (or nothing more), as one text of several statements in
   * one round trip; the answers of each. What was ahead is sent, whatever comes of it: an error aborts the transaction.
   */
  async sendAhead(text: string | undefined): Promise<Array<QueryResult<unknown>>> {
    const texts = [...this.ahead, ...(text === undefined ? [] : [text])]
    this.ahead = []
    this.aheadStatements = 0
    this.beginAhead = false
    return texts.length === 0 ? [] : this.several(texts.join('; '))
  }

  /** A text of several statements in one round trip (the simple protocol: no parameters); the rows of each. */
  async several(text: string): Promise<Array<QueryResult<unknown>>> {
    const results = (await this.client.query(text)) as unknown as pg.QueryResult | pg.QueryResult[]
    return (Array.isArray(results) ? results : [results]).map((r) => ({ rows: r.rows ?? [], numAffectedRows: affected(r.command, r.rowCount) }))
  }

  /** Forgets what is ahead (the transaction ends without it) and what was read ahead. */
  forget(): void {
    this.readsAhead.clear()
    this.ahead = []
    this.aheadStatements = 0
    this.beginAhead = false
  }

  // eslint-disable-next-line require-yield
  async *streamQuery<R>(): AsyncIterableIterator<QueryResult<R>> {
    throw new Error('streaming is not used with PostgreSQL here (no cursor configured)')
  }
}

class WriteSerializingPostgresDriver extends PostgresDriver {
  readonly #pool: pg.Pool
  readonly #connections = new WeakMap<pg.PoolClient, PostgresConnection>()

  constructor(config: PostgresDialectConfig & { pool: pg.Pool }) {
    super(config)
    this.#pool = config.pool
  }

  override async acquireConnection(): Promise<DatabaseConnection> {
    const client = await this.#pool.connect()
    let connection = this.#connections.get(client)
    if (connection === undefined) this.#connections.set(client, connection = new PostgresConnection(client))
    return connection
  }

  override async releaseConnection(connection: DatabaseConnection): Promise<void> {
    const own = connection as PostgresConnection
    own.versionAtBegin = undefined
    own.committed = false
    own.forget()
    own.client.release()
  }

  override async beginTransaction(connection: DatabaseConnection, settings: TransactionSettings): Promise<void> {
    const own = connection as PostgresConnection
    own.versionAtBegin = undefined
    own.committed = false
    own.forget()
    if (settings.accessMode === 'read only') {
      await super.beginTransaction(connection, settings)
      return
    }
    const unitOfWork = settings.isolationLevel === UNIT_OF_WORK_ISOLATION && settings.accessMode === undefined
    const concurrent = settings.isolationLevel === CONCURRENT_ISOLATION && settings.accessMode === undefined
    try {
      if (unitOfWork) {
        const [, , , , version] = await own.several(`${beginText(settings)}; ${API_TRANSACTION}; ${WRITES_LOCK}; ${LOG_LOCK}; ${VERSION_IN_WRITE_POSTGRES}`)
        own.versionAtBegin = version
      } else if (concurrent) {
        // Sent with the first statement (a lock not taken fails that statement: the unit of work rolls back then).
        own.ahead.push(...CONCURRENT_BEGIN)
        own.aheadStatements += CONCURRENT_BEGIN.length
        own.beginAhead = true
      } else {
        await own.several(`${beginText(settings)}; ${WRITES_LOCK}; ${LOG_LOCK}`)
      }
    } catch (error) {
      // The lock not taken (`lock_timeout`: CONTRACT §18's bounded wait) leaves the transaction open and aborted,
      // and Kysely ends only transactions whose begin succeeded: ended here, or the connection would go back to
      // the pool inside it and fail every statement after ("current transaction is aborted"). Best effort: a
      // connection that cannot roll back is broken, and the pool drops it on its error.
      await super.rollbackTransaction(connection).catch(() => undefined)
      throw error
    }
  }

  override async commitTransaction(connection: DatabaseConnection): Promise<void> {
    const own = connection as PostgresConnection
    if (own.committed) {
      own.committed = false
      return
    }
    await super.commitTransaction(connection)
  }

  override async rollbackTransaction(connection: DatabaseConnection): Promise<void> {
    const own = connection as PostgresConnection
    own.versionAtBegin = undefined
    // A begin never sent: the server has no transaction to roll back. Writes deferred are dropped with it.
    const begun = !own.beginAhead
    own.forget()
    if (!begun) {
      own.committed = false
      return
    }
    // Committed and then failed after (nothing runs after `VERSION_THEN_COMMIT` in a unit of work): nothing to roll back.
    if (own.committed) {
      own.committed = false
      return
    }
    await super.rollbackTransaction(connection)
  }
}

export class WriteSerializingPostgresDialect extends PostgresDialect {
  readonly #config: PostgresDialectConfig & { pool: pg.Pool }

  /** `pool`: the pool itself (not a function making one). */
  constructor(config: PostgresDialectConfig & { pool: pg.Pool }) {
    super(config)
    this.#config = config
  }

  override createDriver(): Driver {
    return new WriteSerializingPostgresDriver(this.#config)
  }
}
