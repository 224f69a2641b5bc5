/**
 * The whole storage design for the five resources, their links, statuses and trash, authors, languages
 * and translation groups, images and API keys. Frozen once landed: later changes are new migrations.
 *
 * Portable to PostgreSQL: instants are `YYYY-MM-DD HH:MM:SS` text (sortable, exact), booleans are 0/1
 * integers, coordinates double precision; only the identity column differs by dialect (`idColumn`).
 */
import { PostgresAdapter, type CreateTableBuilder, type Kysely } from 'kysely'

/**
 * An `id` primary key that only ever grows: ids are never reused, even after the highest is deleted.
 * Written here, not imported: a migration never changes, whatever becomes of the app's code.
 */
function idColumn<T extends string>(db: Kysely<any>, table: CreateTableBuilder<T, never>): CreateTableBuilder<T, 'id'> {
  return db.getExecutor().adapter instanceof PostgresAdapter
    ? table.addColumn('id', 'integer', (c) => c.primaryKey().generatedByDefaultAsIdentity())
    : table.addColumn('id', 'integer', (c) => c.primaryKey().autoIncrement())
}

export async function up(db: Kysely<any>): Promise<void> {
  await idColumn(db, db.schema.createTable('users'))
    .addColumn('name', 'text', (c) => c.notNull().unique())
    .addColumn('role', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .execute()

  await idColumn(db, db.schema.createTable('api_keys'))
    .addColumn('user_id', 'integer', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('key_hash', 'text', (c) => c.notNull().unique())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('revoked_at', 'text')
    .execute()
  await db.schema.createIndex('api_keys_user').on('api_keys').column('user_id').execute()

  await idColumn(db, db.schema.createTable('images'))
    .addColumn('url', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .execute()

  await idColumn(db, db.schema.createTable('events'))
    .addColumn('language', 'text', (c) => c.notNull())
    .addColumn('translation_group', 'integer')
    .addColumn('author', 'integer', (c) => c.references('users.id').onDelete('set null'))
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('password', 'text')
    .addColumn('title', 'text', (c) => c.notNull())
    .addColumn('description', 'text')
    .addColumn('excerpt', 'text')
    .addColumn('slug', 'text', (c) => c.notNull())
    .addColumn('image_id', 'integer', (c) => c.references('images.id').onDelete('set null'))
    .addColumn('date', 'text', (c) => c.notNull())
    .addColumn('date_utc', 'text', (c) => c.notNull())
    .addColumn('modified', 'text', (c) => c.notNull())
    .addColumn('modified_utc', 'text', (c) => c.notNull())
    .addColumn('all_day', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('start_date', 'text', (c) => c.notNull())
    .addColumn('end_date', 'text', (c) => c.notNull())
    .addColumn('start_utc', 'text', (c) => c.notNull())
    .addColumn('end_utc', 'text', (c) => c.notNull())
    .addColumn('timezone', 'text', (c) => c.notNull())
    .addColumn('cost', 'text')
    .addColumn('website', 'text')
    .addColumn('show_map', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('show_map_link', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('hide_from_listings', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('sticky', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('featured', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('post_parent', 'integer', (c) => c.references('events.id').onDelete('set null'))
    .addColumn('version', 'integer', (c) => c.notNull().defaultTo(1))
    .execute()
  await db.schema.createIndex('events_slug').on('events').columns(['language', 'slug']).unique().execute()
  await db.schema.createIndex('events_translation').on('events').columns(['translation_group', 'language']).unique().execute()
  // Lists always filter on language and hide_from_listings and order by UTC start, then id.
  await db.schema.createIndex('events_listing').on('events')
    .columns(['language', 'hide_from_listings', 'start_utc', 'id']).execute()
  await db.schema.createIndex('events_end').on('events').columns(['language', 'end_utc']).execute()
  await db.schema.createIndex('events_featured').on('events').columns(['language', 'featured', 'start_utc']).execute()
  await db.schema.createIndex('events_parent').on('events').column('post_parent').execute()
  await db.schema.createIndex('events_author').on('events').columns(['author', 'status']).execute()

  await idColumn(db, db.schema.createTable('venues'))
    .addColumn('language', 'text', (c) => c.notNull())
    .addColumn('translation_group', 'integer')
    .addColumn('author', 'integer', (c) => c.references('users.id').onDelete('set null'))
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('description', 'text')
    .addColumn('slug', 'text', (c) => c.notNull())
    .addColumn('image_id', 'integer', (c) => c.references('images.id').onDelete('set null'))
    .addColumn('date', 'text', (c) => c.notNull())
    .addColumn('date_utc', 'text', (c) => c.notNull())
    .addColumn('modified', 'text', (c) => c.notNull())
    .addColumn('modified_utc', 'text', (c) => c.notNull())
    .addColumn('address', 'text')
    .addColumn('city', 'text')
    .addColumn('country', 'text')
    .addColumn('province', 'text')
    .addColumn('state', 'text')
    .addColumn('zip', 'text')
    .addColumn('phone', 'text')
    .addColumn('website', 'text')
    .addColumn('stateprovince', 'text')
    .addColumn('show_map', 'integer', (c) => c.notNull().defaultTo(1))
    .addColumn('show_map_link', 'integer', (c) => c.notNull().defaultTo(1))
    .addColumn('geo_lat', 'double precision')
    .addColumn('geo_lng', 'double precision')
    .addColumn('version', 'integer', (c) => c.notNull().defaultTo(1))
    .execute()
  await db.schema.createIndex('venues_slug').on('venues').columns(['language', 'slug']).unique().execute()
  await db.schema.createIndex('venues_translation').on('venues').columns(['translation_group', 'language']).unique().execute()
  await db.schema.createIndex('venues_listing').on('venues').columns(['language', 'status', 'date_utc', 'id']).execute()
  await db.schema.createIndex('venues_geo').on('venues').columns(['geo_lat', 'geo_lng']).execute()
  await db.schema.createIndex('venues_author').on('venues').columns(['author', 'status']).execute()

  await idColumn(db, db.schema.createTable('organizers'))
    .addColumn('language', 'text', (c) => c.notNull())
    .addColumn('translation_group', 'integer')
    .addColumn('author', 'integer', (c) => c.references('users.id').onDelete('set null'))
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('description', 'text')
    .addColumn('slug', 'text', (c) => c.notNull())
    .addColumn('image_id', 'integer', (c) => c.references('images.id').onDelete('set null'))
    .addColumn('date', 'text', (c) => c.notNull())
    .addColumn('date_utc', 'text', (c) => c.notNull())
    .addColumn('modified', 'text', (c) => c.notNull())
    .addColumn('modified_utc', 'text', (c) => c.notNull())
    .addColumn('phone', 'text')
    .addColumn('website', 'text')
    .addColumn('email', 'text')
    .addColumn('version', 'integer', (c) => c.notNull().defaultTo(1))
    .execute()
  await db.schema.createIndex('organizers_slug').on('organizers').columns(['language', 'slug']).unique().execute()
  await db.schema.createIndex('organizers_translation').on('organizers').columns(['translation_group', 'language']).unique().execute()
  await db.schema.createIndex('organizers_listing').on('organizers').columns(['language', 'status', 'date_utc', 'id']).execute()
  await db.schema.createIndex('organizers_author').on('organizers').columns(['author', 'status']).execute()

  // Categories and tags share one table: the same shape, rules and queries, told apart by taxonomy.
  await idColumn(db, db.schema.createTable('terms'))
    .addColumn('taxonomy', 'text', (c) => c.notNull())
    .addColumn('language', 'text', (c) => c.notNull())
    .addColumn('translation_group', 'integer')
    .addColumn('name', 'text', (c) => c.notNull())
    // Case-folded name: names are unique per taxonomy, language and parent regardless of case.
    .addColumn('name_key', 'text', (c) => c.notNull())
    .addColumn('slug', 'text', (c) => c.notNull())
    .addColumn('description', 'text')
    .addColumn('parent', 'integer', (c) => c.notNull().defaultTo(0))
    // Published events linked to the term (its `count`), kept by every event write in the same
    // transaction, so that reads never count links.
    .addColumn('event_count', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('version', 'integer', (c) => c.notNull().defaultTo(1))
    .execute()
  await db.schema.createIndex('terms_slug').on('terms').columns(['taxonomy', 'language', 'slug']).unique().execute()
  await db.schema.createIndex('terms_name').on('terms').columns(['taxonomy', 'language', 'parent', 'name_key']).unique().execute()
  await db.schema.createIndex('terms_translation').on('terms').columns(['translation_group', 'language']).unique().execute()
  await db.schema.createIndex('terms_listing').on('terms').columns(['taxonomy', 'language', 'name_key', 'id']).execute()
  await db.schema.createIndex('terms_count').on('terms').columns(['taxonomy', 'language', 'event_count', 'id']).execute()
  await db.schema.createIndex('terms_parent').on('terms').column('parent').execute()

  await db.schema.createTable('event_terms')
    .addColumn('event_id', 'integer', (c) => c.notNull().references('events.id').onDelete('cascade'))
    .addColumn('term_id', 'integer', (c) => c.notNull().references('terms.id').onDelete('cascade'))
    .addPrimaryKeyConstraint('event_terms_pk', ['event_id', 'term_id'])
    .execute()
  await db.schema.createIndex('event_terms_term').on('event_terms').columns(['term_id', 'event_id']).execute()

  for (const [table, column, target] of [
    ['event_venues', 'venue_id', 'venues'],
    ['event_organizers', 'organizer_id', 'organizers'],
  ] as const) {
    await db.schema.createTable(table)
      .addColumn('event_id', 'integer', (c) => c.notNull().references('events.id').onDelete('cascade'))
      .addColumn(column, 'integer', (c) => c.notNull().references(`${target}.id`).onDelete('cascade'))
      // Order of the linked records as written on the event.
      .addColumn('position', 'integer', (c) => c.notNull())
      .addPrimaryKeyConstraint(`${table}_pk`, ['event_id', column])
      .execute()
    await db.schema.createIndex(`${table}_target`).on(table).columns([column, 'event_id']).execute()
  }
}

export async function down(db: Kysely<any>): Promise<void> {
  for (const table of ['event_organizers', 'event_venues', 'event_terms', 'terms', 'organizers', 'venues', 'events', 'images', 'api_keys', 'users']) {
    await db.schema.dropTable(table).execute()
  }
}
