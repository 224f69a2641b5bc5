/**
 * The outbox's uniqueness (one delivery per subscription and change) keyed by the change first:
 * `(position, webhook_id)` instead of `(webhook_id, position)`. A write owed to N subscriptions inserts N
 * deliveries of one position; keyed by subscription first, their entries landed on N leaves of the index
 * (the last leaf of each subscription), keyed by position first they land on one, the last. Each leaf a
 * commit touches is a page written (SQLite's WAL, PostgreSQL's buffers and WAL): on SQLite the intake of a
 * write owed to five subscriptions went from about 57 to 37 µs (`npm run bench:webhooks` has the effect on
 * writes). Nothing needs deliveries by subscription first: the dispatcher claims through the due index,
 * and deleting a subscription finds its finished deliveries through their attempts (indexed by
 * subscription) and its pending ones through the due index (repositories/webhooks.ts).
 */
import type { Kysely } from 'kysely'

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.dropIndex('webhook_deliveries_change').execute()
  await db.schema.createIndex('webhook_deliveries_change').on('webhook_deliveries').columns(['position', 'webhook_id']).unique().execute()
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropIndex('webhook_deliveries_change').execute()
  await db.schema.createIndex('webhook_deliveries_change').on('webhook_deliveries').columns(['webhook_id', 'position']).unique().execute()
}
