/**
 * The events listing index covers what every list counts and filters on besides its order: `status`
 * (the caller's scope) and `end_utc` (the default window). Counting a wide window then reads the index
 * alone instead of looking up each matching row (at 1,000,000 events, the default window's 400,000
 * rows took ~1 s to count through the table).
 */
import type { Kysely } from 'kysely'

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.createIndex('events_listing_cover').on('events')
    .columns(['language', 'hide_from_listings', 'start_utc', 'id', 'status', 'end_utc']).execute()
  await db.schema.dropIndex('events_listing').execute()
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.createIndex('events_listing').on('events')
    .columns(['language', 'hide_from_listings', 'start_utc', 'id']).execute()
  await db.schema.dropIndex('events_listing_cover').execute()
}
