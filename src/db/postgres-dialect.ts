/**
 * Kysely's PostgreSQL dialect with write transactions that run one at a time per schema, as SQLite's
 * do: each takes a transaction-level advisory lock first (released at commit or rollback). So every
 * write sees everything committed before it (no lost update between a check and a write, no two
 * creates taking one slug), compare-and-swap writes behave as on SQLite, and the change log's
 * positions commit in the order they were taken, which is what lets a reader trust that nothing will
 * appear behind a cursor it was given. Reads take no lock; nodes scale out on reads. A transaction
 * that asks to be read-only takes no lock either.
 */
import { CompiledQuery, PostgresDialect, PostgresDriver, type DatabaseConnection, type Driver, type PostgresDialectConfig, type TransactionSettings } from 'kysely'

/** One lock per schema: nodes that share a schema share it; tests in their own schemas do not wait on each other. */
const WRITE_LOCK = "select pg_advisory_xact_lock(hashtext('calendar-writes:' || current_schema()))"

class WriteSerializingPostgresDriver extends PostgresDriver {
  override async beginTransaction(connection: DatabaseConnection, settings: TransactionSettings): Promise<void> {
    await super.beginTransaction(connection, settings)
    if (settings.accessMode === 'read only') return
    try {
      await connection.executeQuery(CompiledQuery.raw(WRITE_LOCK))
    } catch (error) {
      // The lock not taken (`lock_timeout`: CONTRACT §18's bounded wait) leaves the transaction open and aborted,
      // and Kysely ends only transactions whose begin succeeded: ended here, or the connection would go back to
      // the pool inside it and fail every statement after ("current transaction is aborted"). Best effort: a
      // connection that cannot roll back is broken, and the pool drops it on its error.
      await super.rollbackTransaction(connection).catch(() => undefined)
      throw error
    }
  }
}

export class WriteSerializingPostgresDialect extends PostgresDialect {
  readonly #config: PostgresDialectConfig

  constructor(config: PostgresDialectConfig) {
    super(config)
    this.#config = config
  }

  override createDriver(): Driver {
    return new WriteSerializingPostgresDriver(this.#config)
  }
}
