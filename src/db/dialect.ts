/**
 * Everything that differs between SQLite (the embedded default) and PostgreSQL (the scale-out engine)
 * lives here, behind named functions, so repositories and migrations stay portable.
 */
import { PostgresAdapter, sql, type CreateTableBuilder, type Expression, type Kysely, type SqlBool } from 'kysely'

export function isPostgres(db: Kysely<any>): boolean {
  return db.getExecutor().adapter instanceof PostgresAdapter
}

/** An `id` primary key that only ever grows: ids are never reused, even after the highest is deleted. */
export function idColumn<T extends string>(db: Kysely<any>, table: CreateTableBuilder<T, never>): CreateTableBuilder<T, 'id'> {
  return isPostgres(db)
    ? table.addColumn('id', 'integer', (c) => c.primaryKey().generatedByDefaultAsIdentity())
    : table.addColumn('id', 'integer', (c) => c.primaryKey().autoIncrement())
}

/** Lower-cases the way JavaScript does, so a needle folded in JS meets a column folded in SQL. */
export function foldCase(text: string): string {
  return text.toLowerCase()
}

/**
 * A case-insensitive literal substring match of `needle` in any of `columns`. No LIKE: `%`, `_` and `\`
 * are plain characters. SQLite's own lower() only folds ASCII, so SQLite uses the `casefold` function
 * registered in `openDatabase`; PostgreSQL's lower() folds Unicode.
 */
export function containsText(db: Kysely<any>, columns: ReadonlyArray<Expression<unknown>>, needle: string): Expression<SqlBool> {
  const folded = foldCase(needle)
  const fold = isPostgres(db) ? sql.raw('lower') : sql.raw('casefold')
  const position = isPostgres(db) ? sql.raw('strpos') : sql.raw('instr')
  const tests = columns.map((column) => sql<SqlBool>`coalesce(${position}(${fold}(${column}), ${folded}), 0) > 0`)
  return sql<SqlBool>`(${sql.join(tests, sql` or `)})`
}
