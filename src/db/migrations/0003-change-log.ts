/**
 * The change log (CONTRACT §12): every write appends one entry per record it changed, in its own
 * transaction, at a position that only grows and is never reused. Sync clients (`GET /changes`), the
 * read caches of every node, webhooks and iCalendar's SEQUENCE read it. Each entry keeps what a reader
 * needs to tell, without the record, whom the record was visible to after that change (its status and
 * author) and in which language it is.
 *
 * `change_log` holds one row: the highest position pruned by retention, so that a cursor older than
 * the retained history is known to be expired even when no entry is left.
 *
 * The lists of events, venues and organizers filter on `modified_utc` (`modified_after`/`_before`):
 * indexed per language, as every list filters on language.
 */
import { PostgresAdapter, sql, type Kysely } from 'kysely'

export async function up(db: Kysely<any>): Promise<void> {
  const postgres = db.getExecutor().adapter instanceof PostgresAdapter
  await db.schema.createTable('changes')
    .addColumn('position', postgres ? 'bigint' : 'integer', (c) =>
      postgres ? c.primaryKey().generatedAlwaysAsIdentity() : c.primaryKey().autoIncrement())
    .addColumn('resource', 'text', (c) => c.notNull())
    .addColumn('record_id', 'integer', (c) => c.notNull())
    .addColumn('language', 'text', (c) => c.notNull())
    .addColumn('action', 'text', (c) => c.notNull())
    .addColumn('changed_utc', 'text', (c) => c.notNull())
    .addColumn('status', 'text')
    .addColumn('author', 'integer')
    .execute()
  await db.schema.createIndex('changes_record').on('changes').columns(['resource', 'record_id', 'position']).execute()
  await db.schema.createIndex('changes_time').on('changes').columns(['changed_utc']).execute()

  await db.schema.createTable('change_log')
    .addColumn('id', 'integer', (c) => c.primaryKey())
    .addColumn('pruned_through', postgres ? 'bigint' : 'integer', (c) => c.notNull())
    .execute()
  await sql`insert into change_log (id, pruned_through) values (1, 0)`.execute(db)

  for (const table of ['events', 'venues', 'organizers']) {
    await db.schema.createIndex(`${table}_modified`).on(table).columns(['language', 'modified_utc', 'id']).execute()
  }
}

export async function down(db: Kysely<any>): Promise<void> {
  for (const table of ['events', 'venues', 'organizers']) await db.schema.dropIndex(`${table}_modified`).execute()
  await db.schema.dropTable('change_log').execute()
  await db.schema.dropTable('changes').execute()
}
