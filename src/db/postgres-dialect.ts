/**
 * Kysely's PostgreSQL dialect with write transactions that run one at a time per schema, as SQLite's
 * do: each takes a transaction-level advisory lock first (released at commit or rollback). So every
 * write sees everything committed before it (no lost update between a check and a write, no two
 * creates taking one slug), compare-and-swap writes behave as on SQLite, and the change log's
 * positions commit in the order they were taken, which is what lets a reader trust that nothing will
 * appear behind a cursor it was given. Reads take no lock; nodes scale out on reads. A transaction
 * that asks to be read-only takes no lock either.
 *
 * The lock is held until the commit is answered, so every round trip inside it is one the whole cluster's
 * writes wait for (issue 49: across a network of 0.5 ms a round trip, about 28 of them a create). A unit of
 * work's transaction (unit-of-work.ts, which asks for it by `UNIT_OF_WORK_ISOLATION`) therefore spends two
 * fewer: its `begin`, the lock and its first look at the data version go in one round trip (a simple-protocol
 * text of three statements: READ COMMITTED takes a snapshot per statement, so the look, run once the lock is
 * granted, sees every write committed before), and its last look and the commit in another
 * (`VERSION_THEN_COMMIT`). Every other write transaction begins as before, `begin` and then the lock.
 */
import {
  CompiledQuery, PostgresDialect, PostgresDriver, type DatabaseConnection, type Driver, type PostgresDialectConfig, type QueryResult,
  type TransactionSettings,
} from 'kysely'
import type pg from 'pg'

/** One lock per schema: nodes that share a schema share it; tests in their own schemas do not wait on each other. */
const WRITE_LOCK = "select pg_advisory_xact_lock(hashtext('calendar-writes:' || current_schema()))"

/**
 * Where the data stands, read inside a write transaction (dialect.ts `versionInWrite`): the change log's head and
 * the epoch, its row locked so that no writer outside the write lock moves it until the transaction ends.
 */
export const VERSION_IN_WRITE_POSTGRES = 'select (select coalesce(max(position), 0) from changes) as h, n as e from data_epoch where id = 1 for update'

/**
 * The isolation a unit of work's transaction asks for: PostgreSQL's default, asked for by name so that the driver
 * knows the transaction's first statement will be the look at the data version, and reads it with the lock.
 */
export const UNIT_OF_WORK_ISOLATION = 'read committed'

/** A unit of work's last look at the data version and its commit, in one round trip (`versionThenCommit` in dialect.ts). */
export const VERSION_THEN_COMMIT = `${VERSION_IN_WRITE_POSTGRES}; commit`

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

  constructor(client: pg.PoolClient) {
    this.client = client
  }

  async executeQuery<R>(query: CompiledQuery): Promise<QueryResult<R>> {
    const early = this.versionAtBegin
    this.versionAtBegin = undefined
    if (early !== undefined && query.sql === VERSION_IN_WRITE_POSTGRES) return early as QueryResult<R>
    if (query.sql === VERSION_THEN_COMMIT) {
      const [version] = await this.several(VERSION_THEN_COMMIT)
      this.committed = true
      return version as QueryResult<R>
    }
    const { command, rowCount, rows } = await this.client.query(query.sql, [...query.parameters])
    return {
      numAffectedRows: command === 'INSERT' || command === 'UPDATE' || command === 'DELETE' || command === 'MERGE' ? BigInt(rowCount ?? 0) : undefined,
      rows: (rows ?? []) as R[],
    }
  }

  /** A text of several statements in one round trip (the simple protocol: no parameters); the rows of each. */
  async several(text: string): Promise<Array<QueryResult<unknown>>> {
    const results = (await this.client.query(text)) as unknown as pg.QueryResult | pg.QueryResult[]
    return (Array.isArray(results) ? results : [results]).map((r) => ({ rows: r.rows ?? [] }))
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
    own.client.release()
  }

  override async beginTransaction(connection: DatabaseConnection, settings: TransactionSettings): Promise<void> {
    const own = connection as PostgresConnection
    own.versionAtBegin = undefined
    own.committed = false
    if (settings.accessMode === 'read only') {
      await super.beginTransaction(connection, settings)
      return
    }
    const unitOfWork = settings.isolationLevel === UNIT_OF_WORK_ISOLATION && settings.accessMode === undefined
    try {
      if (unitOfWork) {
        const [, , version] = await own.several(`${beginText(settings)}; ${WRITE_LOCK}; ${VERSION_IN_WRITE_POSTGRES}`)
        own.versionAtBegin = version
      } else {
        await own.several(`${beginText(settings)}; ${WRITE_LOCK}`)
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
