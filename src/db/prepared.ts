/**
 * Statements of a fixed shape, built with the query builder once per engine and then run with each
 * call's values. Building and compiling a query costs the query builder 10–40 µs of JavaScript a time,
 * more than SQLite takes to run most of the statements every request sends (the API key's lookup, the
 * change log's bounds, an event's record): these are built once, and each call only binds its values to
 * the text compiled then (SQLite prepares each text once, db/database.ts).
 *
 * `build` receives a stand-in for each value, and must only place them in the query as values (it may
 * pass them around, slice the list of them, place one several times): not compute with them or branch
 * on them, since what it computed would be computed with the stand-in. The first build checks that every
 * stand-in became a parameter of the compiled statement, and a stand-in made into text throws; values
 * `build` writes itself are kept as compiled. The text is the same for a database and its transactions,
 * and for every database of an engine (PostgreSQL's schema is the connection's search path): one build
 * serves each engine.
 */
import { CompiledQuery, PostgresAdapter, type Kysely, type QueryResult } from 'kysely'
import type { Database } from './schema.js'

/** Runs a compiled statement on a SQLite connection at once, as Kysely's driver would (see `setStatementRunner`). */
export type StatementRunner = (text: string, parameters: readonly unknown[]) => QueryResult<unknown>

const runners = new WeakMap<object, StatementRunner>()

/**
 * Lets the transactions of `db` (a SQLite database: `openSqlite`) run prepared statements through `runner`, which runs
 * them on the connection at once (`runStatementsDirectly` names the transactions). Going through the query builder
 * cost each statement its chain of promises (the executor, the connection's provider and its lock, the driver: about
 * 4 % of a create's CPU, issue 49) where SQLite itself takes a few microseconds for most.
 */
export function setStatementRunner(db: Kysely<Database>, runner: StatementRunner): void {
  runners.set(db, runner)
}

/**
 * The prepared statements of `trx`, a write transaction on `db` that holds the connection until it ends (a unit of
 * work's), run through `db`'s runner (`setStatementRunner`), if it has one. Never the database itself: a statement
 * outside a transaction waits for the connection, which a transaction may hold.
 */
export function runStatementsDirectly(trx: Kysely<Database>, db: Kysely<Database>): void {
  const runner = runners.get(db)
  if (runner !== undefined && trx.isTransaction) runners.set(trx, runner)
}

/** A compiled statement on `db`: through its runner when it has one (`runStatementsDirectly`), else the builder's executor. */
export function executeCompiled<R>(db: Kysely<Database>, query: CompiledQuery<R>): Promise<QueryResult<R>> {
  const runner = runners.get(db)
  if (runner === undefined) return db.executeQuery(query)
  try {
    return Promise.resolve(runner(query.sql, query.parameters) as QueryResult<R>)
  } catch (error) {
    return Promise.reject(error as Error)
  }
}

/** A stand-in the build places as the value of parameter `index`. */
class StandIn {
  readonly index: number
  constructor(index: number) {
    this.index = index
  }
  toString(): string {
    throw new Error(`a prepared statement's value ${this.index} was used in its building, not placed as a value`)
  }
}

interface Compiled {
  text: string
  /** For each parameter: the index of the call's value, or -1 for a constant (in `constants`). */
  from: number[]
  constants: unknown[]
}

/** A query built, or a raw statement (`sql`), compiled for a database. */
interface Buildable<R> {
  compile(db: Kysely<Database>): CompiledQuery<R>
}

export function prepared<A extends unknown[], R>(
  values: number,
  build: (db: Kysely<Database>, ...values: A) => Buildable<R>,
): (db: Kysely<Database>, ...values: A) => Promise<QueryResult<R>> {
  const bound = boundQuery(values, build)
  return (db, ...args) => {
    let query: CompiledQuery<R>
    try {
      query = bound(db, ...args)
    } catch (error) {
      return Promise.reject(error as Error)
    }
    return executeCompiled(db, query)
  }
}

/**
 * As `prepared`, the statement compiled once per engine with each call's values bound, given as a compiled query to
 * run as the caller runs it (`db.executeQuery`: through the query builder's executor and its connection, as a built
 * query's `execute` runs), not on a unit of work's connection at once. Throws what the first build throws.
 */
export function boundQuery<A extends unknown[], R>(
  values: number,
  build: (db: Kysely<Database>, ...values: A) => Buildable<R>,
): (db: Kysely<Database>, ...values: A) => CompiledQuery<R> {
  const byEngine: { sqlite?: Compiled; postgres?: Compiled } = {}
  const compile = (db: Kysely<Database>): Compiled => {
    const standIns = Array.from({ length: values }, (_, i) => new StandIn(i))
    const query = build(db, ...(standIns as unknown as A)).compile(db)
    const from: number[] = []
    const constants: unknown[] = []
    const seen = new Set<number>()
    for (const parameter of query.parameters) {
      if (parameter instanceof StandIn) {
        from.push(parameter.index)
        constants.push(undefined)
        seen.add(parameter.index)
      } else {
        from.push(-1)
        constants.push(parameter)
      }
    }
    if (seen.size !== values) throw new Error(`a prepared statement placed ${seen.size} of its ${values} values as parameters`)
    return { text: query.sql, from, constants }
  }
  return (db, ...args) => {
    const engine = db.getExecutor().adapter instanceof PostgresAdapter ? 'postgres' : 'sqlite'
    const compiled = byEngine[engine] ??= compile(db)
    const parameters = compiled.from.map((index, i) => (index < 0 ? compiled.constants[i] : args[index]))
    return CompiledQuery.raw(compiled.text, parameters) as CompiledQuery<R>
  }
}

/**
 * A family of prepared statements whose shape follows a key (the columns an update sets, the rows an
 * insert writes): `make` prepares the one of a key the first time it is asked for; at most `max` are
 * kept (past that they are made again).
 */
export function byShape<F>(max: number, make: (key: string) => F): (key: string) => F {
  const made = new Map<string, F>()
  return (key) => {
    let statement = made.get(key)
    if (statement === undefined) {
      if (made.size >= max) made.clear()
      made.set(key, statement = make(key))
    }
    return statement
  }
}
