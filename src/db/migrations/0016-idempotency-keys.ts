/**
 * Idempotency keys (CONTRACT §18, "Safe retries"): one row per caller and `Idempotency-Key` of a creating
 * POST, kept `CALENDAR_IDEMPOTENCY_HOURS` from its first use (retention.ts prunes older ones by
 * `created_utc`, hence its index).
 *
 * A row is first a claim: `token` names the request that holds it and `lease_until` how long it holds
 * it (a crashed node's claim runs out instead of blocking the key for ever); `fingerprint` is the digest
 * of the request's method, path and body. Once the write commits, in its own transaction, the row holds
 * the answer: `status`, `location`, `etag` and `body` (the JSON sent), which a retry is given again. The
 * primary key (user, key) is what lets only one request hold a key, on every node.
 */
import type { Kysely } from 'kysely'

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.createTable('idempotency_keys')
    .addColumn('user_id', 'integer', (c) => c.notNull())
    .addColumn('key', 'text', (c) => c.notNull())
    .addColumn('fingerprint', 'text', (c) => c.notNull())
    .addColumn('token', 'text', (c) => c.notNull())
    .addColumn('lease_until', 'text', (c) => c.notNull())
    .addColumn('created_utc', 'text', (c) => c.notNull())
    .addColumn('status', 'integer')
    .addColumn('location', 'text')
    .addColumn('etag', 'text')
    .addColumn('body', 'text')
    .addPrimaryKeyConstraint('idempotency_keys_pk', ['user_id', 'key'])
    .execute()
  await db.schema.createIndex('idempotency_keys_created').on('idempotency_keys').column('created_utc').execute()
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('idempotency_keys').execute()
}
