/**
 * The events' search index: `event_search` holds, per event, what `search` looks into (CONTRACT §3,
 * §6) folded once, on write: the title, and the description unless the event is password-protected,
 * each NFC-normalised and fully case-folded. A search folds its needle alike and looks for it as a
 * plain substring of those texts, served by a trigram index:
 *
 * - SQLite: an FTS5 table with the trigram tokenizer (case-sensitive: the text is folded already),
 *   keyed by the event id (its rowid), holding the folded texts itself;
 * - PostgreSQL: a table with a GIN `gin_trgm_ops` index on each text (extension pg_trgm, created
 *   here when missing, in `public`; the operator class is named with the schema it is in, since a
 *   test schema's search path holds only that schema).
 *
 * Rows that exist are filled here, folded in JavaScript in batches on both engines: the same fold as
 * the app's (src/lib/text.ts, `foldText`), written out here since a migration never changes. That fold
 * now takes the capital sharp s `ẞ` as `ß` (so as `ss`), which it did not: the terms whose name holds
 * one get their folded name key again.
 */
import { PostgresAdapter, sql, type Kysely } from 'kysely'

/** NFC and full case folding, as `foldText` in src/lib/text.ts folds at the time of this migration. */
function fold(text: string): string {
  return text.normalize('NFC').replace(/ẞ/g, 'ß').toUpperCase().toLowerCase().replace(/ς/g, 'σ').replace(/i\u0307/g, 'i').normalize('NFC')
}

const BATCH = 1000

export async function up(db: Kysely<any>): Promise<void> {
  const postgres = db.getExecutor().adapter instanceof PostgresAdapter
  if (postgres) {
    const trgm = await trigramSchema(db)
    await db.schema.createTable('event_search')
      .addColumn('event_id', 'integer', (c) => c.primaryKey().references('events.id').onDelete('cascade'))
      .addColumn('title', 'text', (c) => c.notNull())
      .addColumn('description', 'text')
      .execute()
    for (const column of ['title', 'description']) {
      await sql`create index ${sql.id(`event_search_${column}`)} on event_search using gin (${sql.id(column)} ${sql.id(trgm)}.gin_trgm_ops)`.execute(db)
    }
  } else {
    await sql`create virtual table event_search using fts5(title, description, tokenize = 'trigram case_sensitive 1')`.execute(db)
  }
  let after = 0
  for (;;) {
    const rows: Array<{ id: number; title: string; description: string | null; password: string | null }> = await db.selectFrom('events')
      .select(['id', 'title', 'description', 'password']).where('id', '>', after).orderBy('id').limit(BATCH).execute()
    if (rows.length === 0) break
    after = rows[rows.length - 1]?.id ?? after
    const values = rows.map((r) => ({
      [postgres ? 'event_id' : 'rowid']: r.id,
      title: fold(r.title),
      description: r.password === null && r.description !== null ? fold(r.description) : null,
    }))
    await db.insertInto('event_search').values(values).execute()
  }
  // Term names are unique by the same fold (`name_key`), which took `ẞ` for `ß` and not for `ss` before.
  const terms: Array<{ id: number; name: string }> = await db.selectFrom('terms').select(['id', 'name']).where('name', 'like', '%ẞ%').execute()
  for (const term of terms) {
    await db.updateTable('terms').set({ name_key: fold(term.name.trim().replace(/\s+/g, ' ')) }).where('id', '=', term.id).execute()
  }
}

/**
 * The schema pg_trgm is in, created in `public` when missing (one creator at a time: test schemas
 * migrate in parallel in one database). Refused (the role may not create it, or the server lacks the
 * contrib package): an error that says what to run.
 */
async function trigramSchema(db: Kysely<any>): Promise<string> {
  await sql`select pg_advisory_xact_lock(hashtext('calendar-extension:pg_trgm'))`.execute(db)
  const find = async () => (await sql<{ schema: string }>`select n.nspname as schema from pg_extension e
    join pg_namespace n on n.oid = e.extnamespace where e.extname = 'pg_trgm'`.execute(db)).rows[0]?.schema
  const found = await find()
  if (found !== undefined) return found
  try {
    await sql`create extension if not exists pg_trgm with schema public`.execute(db)
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error)
    throw new Error('PostgreSQL: the search index needs the pg_trgm extension, which is not installed in this database '
      + `and could not be created (${reason}). Run "CREATE EXTENSION pg_trgm WITH SCHEMA public;" in this database as a role `
      + 'that may (a superuser, or its owner); the extension ships with PostgreSQL\'s contrib modules (Debian: postgresql-contrib).', { cause: error })
  }
  return (await find()) ?? 'public'
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('event_search').execute()
}
