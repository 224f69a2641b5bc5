/**
 * Kysely's SQLite dialect with write transactions that take the write lock up front. Its driver begins
 * every transaction with a plain (deferred) `BEGIN`: such a transaction reads first, and when another
 * process commits before it writes, it can neither upgrade its lock nor wait for it (SQLITE_BUSY at
 * once, SQLITE_BUSY_SNAPSHOT in WAL mode), whatever the busy timeout says. `BEGIN IMMEDIATE` takes the
 * lock before the first read, waiting on the busy timeout while another process writes, so a write
 * queues behind the other instead of failing. A transaction that asks to be read-only stays deferred.
 *
 * Its compiler binds every value as `+?` (SQLite's unary plus, which changes no value) rather than a bare
 * `?`. SQLite marks a bare parameter whose value could change the plan (a LIMIT or OFFSET, an equality the
 * planner compares with others, as in a join) and prepares the statement again whenever that parameter is
 * bound, which for a cached statement is every execution: 5–15 µs for a simple statement, more for a
 * list's, and up to 60 µs right after a write. With the plus, the value is an expression the planner does
 * not look into: one plan, prepared once (the query-plan tests hold those plans). Nothing else changes: the
 * value keeps its type and has no affinity, as a bare parameter; an index serves `column = +?` as it
 * serves `column = ?` (the plus keeps an index from serving only when put on the column); it costs nothing
 * per row (`coalesce(?, null)`, tried first, cost 4 % more on searches over 1,000,000 events); the LIKEs
 * that take a bound pattern all begin it with `%`, which no index serves.
 */
import {
  CompiledQuery, SqliteDialect, SqliteDriver, SqliteQueryCompiler, type DatabaseConnection, type Driver, type QueryCompiler,
  type SqliteDialectConfig, type TransactionSettings,
} from 'kysely'

class WriteLockingSqliteDriver extends SqliteDriver {
  readonly #beforeWrite: () => void
  readonly #began: (write: boolean | undefined) => void

  constructor(config: SqliteDialectConfig, beforeWrite: () => void, began: (write: boolean | undefined) => void) {
    super(config)
    this.#beforeWrite = beforeWrite
    this.#began = began
  }

  override async beginTransaction(connection: DatabaseConnection, settings?: TransactionSettings): Promise<void> {
    const write = settings?.accessMode !== 'read only'
    if (write) this.#beforeWrite()
    // Undefined until it has begun: `began` is told once the begin has been awaited.
    this.#began(undefined)
    await connection.executeQuery(CompiledQuery.raw(write ? 'begin immediate' : 'begin'))
    this.#began(write)
  }

  /**
   * SQLite rolls a transaction back by itself on some errors (SQLITE_FULL, SQLITE_IOERR, SQLITE_NOMEM,
   * SQLITE_BUSY on a commit): the rollback that follows then fails with "no transaction is active", and
   * that error took the place of the real one (a full disk was logged as a failed rollback).
   */
  override async rollbackTransaction(connection: DatabaseConnection): Promise<void> {
    try {
      await super.rollbackTransaction(connection)
    } catch (error) {
      if (!(error instanceof Error && /no transaction is active/.test(error.message))) throw error
    }
  }
}

class SteadyPlanSqliteQueryCompiler extends SqliteQueryCompiler {
  protected override appendValue(parameter: unknown): void {
    this.append('+')
    super.appendValue(parameter)
  }
}

export class WriteLockingSqliteDialect extends SqliteDialect {
  readonly #config: SqliteDialectConfig
  readonly #beforeWrite: () => void
  readonly #began: (write: boolean | undefined) => void

  /**
   * `beforeWrite` runs before every write transaction begins, and refuses it by throwing (a lost file: file-watch.ts);
   * `began` once a transaction has begun (`write`: with the write lock, so that what it reads first is what is
   * committed, and no other connection commits until it ends), before anything runs in it; and with undefined just
   * before it begins (the begin is awaited).
   */
  constructor(config: SqliteDialectConfig, beforeWrite: () => void = () => undefined, began: (write: boolean | undefined) => void = () => undefined) {
    super(config)
    this.#config = config
    this.#beforeWrite = beforeWrite
    this.#began = began
  }

  override createDriver(): Driver {
    return new WriteLockingSqliteDriver(this.#config, this.#beforeWrite, this.#began)
  }

  override createQueryCompiler(): QueryCompiler {
    return new SteadyPlanSqliteQueryCompiler()
  }
}
