/**
 * Lists that filter occurrences changed on their own (CONTRACT §17: `search` over an occurrence's own title and
 * description, `venue`, `organizer` and `geoloc*` over its own venues and organizers; repositories/event-filters.ts):
 *
 * - `event_override_links`: the venues and organizers an override shows instead of the series' (the ids of its
 *   `venues`/`organizers` JSON), one row per (event, occurrence, kind, target), so that a `venue`/`organizer` filter
 *   finds the occurrences that link a target through an index (`override_links_by_target`), as `event_venues`
 *   serves the series'. Written with the override (repositories/occurrence-overrides.ts); its key refers to the
 *   override's (`on delete cascade`, `on update cascade`: an override dropped or moved by a split takes its rows).
 * - `event_overrides.search_title`, `search_description`: the override's texts folded as the search index folds
 *   the event's (db/dialect.ts `eventSearchTexts`), null where the override keeps the series' text.
 * - The occurrences' two listing indexes gain `overridden` (both engines), so that the lists' per-occurrence checks
 *   (`o.overridden = 0` first: only overridden occurrences pay) stay within the index they read.
 * - The data epoch (migration 0007) moves with `event_override_links` too.
 */
import { PostgresAdapter, sql, type Kysely } from 'kysely'

export async function up(db: Kysely<any>): Promise<void> {
  const postgres = db.getExecutor().adapter instanceof PostgresAdapter
  await db.schema.alterTable('event_overrides').addColumn('search_title', 'text').execute()
  await db.schema.alterTable('event_overrides').addColumn('search_description', 'text').execute()
  await db.schema.createTable('event_override_links')
    .addColumn('event_id', 'integer', (c) => c.notNull())
    .addColumn('occurrence', 'text', (c) => c.notNull())
    .addColumn('kind', 'text', (c) => c.notNull())
    .addColumn('target_id', 'integer', (c) => c.notNull())
    .addPrimaryKeyConstraint('event_override_links_pk', ['event_id', 'occurrence', 'kind', 'target_id'])
    .addForeignKeyConstraint('event_override_links_override', ['event_id', 'occurrence'], 'event_overrides', ['event_id', 'occurrence'],
      (fk) => fk.onDelete('cascade').onUpdate('cascade'))
    .execute()
  await db.schema.createIndex('override_links_by_target').on('event_override_links').columns(['kind', 'target_id', 'event_id']).execute()

  await db.schema.dropIndex('occurrences_listing_cover').execute()
  await db.schema.createIndex('occurrences_listing_cover').on('event_occurrences')
    .columns(['language', 'hide_from_listings', 'start_utc', 'event_id', 'occurrence', 'status', 'end_utc', 'overridden']).execute()
  await db.schema.dropIndex('occurrences_by_event_start').execute()
  await db.schema.createIndex('occurrences_by_event_start').on('event_occurrences')
    .columns(['event_id', 'start_utc', 'occurrence', 'language', 'hide_from_listings', 'status', 'end_utc', 'featured', 'author', 'overridden']).execute()

  if (postgres) {
    await sql`create trigger event_override_links_data_epoch after insert or update or delete or truncate on event_override_links
      for each statement execute function data_epoch_moves()`.execute(db)
    return
  }
  for (const action of ['insert', 'update', 'delete']) {
    await sql`create trigger ${sql.id(`event_override_links_data_epoch_${action}`)} after ${sql.raw(action)} on event_override_links
      begin update data_epoch set n = n + 1 where id = 1; end`.execute(db)
  }
}

/** Undoes what `up` made: the indexes as migrations 0017 made them. */
export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('event_override_links').execute()
  await db.schema.alterTable('event_overrides').dropColumn('search_description').execute()
  await db.schema.alterTable('event_overrides').dropColumn('search_title').execute()
  await db.schema.dropIndex('occurrences_listing_cover').execute()
  await db.schema.createIndex('occurrences_listing_cover').on('event_occurrences')
    .columns(['language', 'hide_from_listings', 'start_utc', 'event_id', 'occurrence', 'status', 'end_utc']).execute()
  await db.schema.dropIndex('occurrences_by_event_start').execute()
  await db.schema.createIndex('occurrences_by_event_start').on('event_occurrences')
    .columns(['event_id', 'start_utc', 'occurrence', 'language', 'hide_from_listings', 'status', 'end_utc', 'featured', 'author']).execute()
}
