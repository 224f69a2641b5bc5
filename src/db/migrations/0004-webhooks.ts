/**
 * Webhooks (CONTRACT §13): subscriptions, and an outbox of deliveries with every attempt recorded.
 *
 * `webhooks` holds a subscription: its URL, the types it wants (a JSON array of `<resource>.<action>`,
 * `<resource>.*` or `*`), and the signing secret as it was given, since the server signs with it (it
 * is never shown again). `failures` counts the deliveries given up in a row; reaching the limit
 * disables the subscription (`active` 0, `disabled_utc`, `disabled_reason`).
 *
 * `webhook_deliveries` is the outbox: one row per change of the log and subscription that wants it,
 * written in the transaction of the write that made the change. The dispatcher takes due rows by a
 * lease (`lease_owner`, `lease_until`), so that one node at a time attempts a delivery and a crashed
 * node's leases run out; `payload` is the body, fixed at the first attempt so that every retry sends the
 * same body under the same `webhook-id`. `webhook_attempts` records every attempt.
 */
import { PostgresAdapter, type Kysely } from 'kysely'

export async function up(db: Kysely<any>): Promise<void> {
  const postgres = db.getExecutor().adapter instanceof PostgresAdapter
  const bigint = postgres ? 'bigint' : 'integer'
  const id = (c: any) => postgres ? c.primaryKey().generatedAlwaysAsIdentity() : c.primaryKey().autoIncrement()
  await db.schema.createTable('webhooks')
    .addColumn('id', 'integer', id)
    .addColumn('url', 'text', (c) => c.notNull())
    .addColumn('events', 'text', (c) => c.notNull())
    .addColumn('description', 'text')
    .addColumn('active', 'integer', (c) => c.notNull().defaultTo(1))
    .addColumn('secret', 'text', (c) => c.notNull())
    .addColumn('created_utc', 'text', (c) => c.notNull())
    .addColumn('modified_utc', 'text', (c) => c.notNull())
    .addColumn('failures', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('disabled_utc', 'text')
    .addColumn('disabled_reason', 'text')
    .execute()

  await db.schema.createTable('webhook_deliveries')
    .addColumn('id', bigint, id)
    .addColumn('webhook_id', 'integer', (c) => c.notNull())
    .addColumn('position', bigint, (c) => c.notNull())
    .addColumn('type', 'text', (c) => c.notNull())
    .addColumn('resource', 'text', (c) => c.notNull())
    .addColumn('record_id', 'integer', (c) => c.notNull())
    .addColumn('language', 'text', (c) => c.notNull())
    .addColumn('changed_utc', 'text', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull().defaultTo('pending'))
    .addColumn('attempts', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('next_attempt_utc', 'text', (c) => c.notNull())
    .addColumn('lease_owner', 'text')
    .addColumn('lease_until', 'text')
    .addColumn('payload', 'text')
    .addColumn('finished_utc', 'text')
    .execute()
  await db.schema.createIndex('webhook_deliveries_due').on('webhook_deliveries').columns(['status', 'next_attempt_utc']).execute()
  await db.schema.createIndex('webhook_deliveries_change').on('webhook_deliveries').columns(['webhook_id', 'position']).unique().execute()

  await db.schema.createTable('webhook_attempts')
    .addColumn('id', bigint, id)
    .addColumn('delivery_id', bigint, (c) => c.notNull())
    .addColumn('webhook_id', 'integer', (c) => c.notNull())
    .addColumn('attempt', 'integer', (c) => c.notNull())
    .addColumn('attempted_utc', 'text', (c) => c.notNull())
    .addColumn('outcome', 'text', (c) => c.notNull())
    .addColumn('response_status', 'integer')
    .addColumn('error', 'text')
    .addColumn('duration_ms', 'integer', (c) => c.notNull())
    .execute()
  await db.schema.createIndex('webhook_attempts_latest').on('webhook_attempts').columns(['webhook_id', 'id']).execute()
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('webhook_attempts').execute()
  await db.schema.dropTable('webhook_deliveries').execute()
  await db.schema.dropTable('webhooks').execute()
}
