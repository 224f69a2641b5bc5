/**
 * Kysely's SQLite dialect with write transactions that take the write lock up front. Its driver begins
 * every transaction with a plain (deferred) `BEGIN`: such a transaction reads first, and when another
 * process commits before it writes, it can neither upgrade its lock nor wait for it (SQLITE_BUSY at
 * once, SQLITE_BUSY_SNAPSHOT in WAL mode), whatever the busy timeout says. `BEGIN IMMEDIATE` takes the
 * lock before the first read, waiting on the busy timeout while another process writes, so a write
 * queues behind the other instead of failing. A transaction that asks to be read-only stays deferred.
 */
import { CompiledQuery, SqliteDialect, SqliteDriver, type DatabaseConnection, type Driver, type SqliteDialectConfig, type TransactionSettings } from 'kysely'

class WriteLockingSqliteDriver extends SqliteDriver {
  override async beginTransaction(connection: DatabaseConnection, settings?: TransactionSettings): Promise<void> {
    await connection.executeQuery(CompiledQuery.raw(settings?.accessMode === 'read only' ? 'begin' : 'begin immediate'))
  }
}

export class WriteLockingSqliteDialect extends SqliteDialect {
  readonly #config: SqliteDialectConfig

  constructor(config: SqliteDialectConfig) {
    super(config)
    this.#config = config
  }

  override createDriver(): Driver {
    return new WriteLockingSqliteDriver(this.#config)
  }
}
