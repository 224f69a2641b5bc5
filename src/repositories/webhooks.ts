/**
 * Webhook subscriptions (CONTRACT §13): rows in, contract records out. The secret is stored as it was
 * made, since the server signs with it; the record shows only its last four characters (`secret_hint`),
 * and only `createWebhook` hands the secret back, once.
 */
import type { Schema } from '../contract.js'
import type { Db, Tx } from '../db/unit-of-work.js'
import type { WebhookRow, WebhooksTable } from '../db/schema.js'
import { subscriptionsWritten } from '../db/webhook-outbox.js'
import type { Updateable } from 'kysely'

export type Webhook = Schema<'Webhook'>

/** What a subscription is sent with: where, and the secret to sign with. */
export interface Receiver {
  id: number
  url: string
  secret: string
}

export function webhookRecord(row: WebhookRow): Webhook {
  return {
    id: row.id,
    url: row.url,
    events: JSON.parse(row.events) as Webhook['events'],
    description: row.description,
    active: row.active === 1,
    secret_hint: row.secret.slice(-4),
    created_utc: row.created_utc,
    modified_utc: row.modified_utc,
    failures: row.failures,
    disabled_utc: row.disabled_utc,
    disabled_reason: row.disabled_reason,
  }
}

export async function countWebhooks(db: Db): Promise<number> {
  const row = await db.selectFrom('webhooks').select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirst()
  return Number(row?.n ?? 0)
}

/** A page of subscriptions, oldest first. */
export async function listWebhooks(db: Db, limit: number, offset: number): Promise<Webhook[]> {
  const rows = await db.selectFrom('webhooks').selectAll().orderBy('id').limit(limit).offset(offset).execute()
  return rows.map(webhookRecord)
}

export async function findWebhook(db: Db, id: number): Promise<Webhook | undefined> {
  if (!Number.isSafeInteger(id)) return undefined
  const row = await db.selectFrom('webhooks').selectAll().where('id', '=', id).executeTakeFirst()
  return row === undefined ? undefined : webhookRecord(row)
}

export interface NewWebhook {
  url: string
  events: readonly string[]
  description: string | null
  active: boolean
  secret: string
  nowUtc: string
}

export async function insertWebhook(trx: Tx, values: NewWebhook): Promise<Webhook> {
  subscriptionsWritten(trx)
  const row = await trx.insertInto('webhooks').values({
    url: values.url, events: JSON.stringify(values.events), description: values.description, active: values.active ? 1 : 0,
    secret: values.secret, created_utc: values.nowUtc, modified_utc: values.nowUtc,
  }).returningAll().executeTakeFirstOrThrow()
  return webhookRecord(row)
}

export interface WebhookChanges {
  url?: string
  events?: readonly string[]
  description?: string | null
  active?: boolean
}

/**
 * Changes a subscription; `active: true` also clears what disabling it set (failures, when, why), so
 * that its pending deliveries go out again. A change that changes nothing (the same values, an empty body)
 * leaves it as it was, `modified_utc` included (CONTRACT §5). Undefined when there is no such subscription.
 */
export async function updateWebhook(trx: Tx, id: number, changes: WebhookChanges, nowUtc: string): Promise<Webhook | undefined> {
  const current = await trx.selectFrom('webhooks').selectAll().where('id', '=', id).executeTakeFirst()
  if (current === undefined) return undefined
  const set: Updateable<WebhooksTable> = {
    ...(changes.url !== undefined ? { url: changes.url } : {}),
    ...(changes.events !== undefined ? { events: JSON.stringify(changes.events) } : {}),
    ...(changes.description !== undefined ? { description: changes.description } : {}),
    ...(changes.active === false ? { active: 0 } : {}),
    ...(changes.active === true ? { active: 1, failures: 0, disabled_utc: null, disabled_reason: null } : {}),
  }
  const differs = Object.entries(set).some(([column, value]) => {
    const now: unknown = current[column as keyof WebhookRow]
    return typeof value === 'number' ? Number(now) !== value : now !== value
  })
  if (!differs) return webhookRecord(current)
  subscriptionsWritten(trx)
  const row = await trx.updateTable('webhooks').set({ ...set, modified_utc: nowUtc }).where('id', '=', id).returningAll().executeTakeFirst()
  return row === undefined ? undefined : webhookRecord(row)
}

/** Deletes a subscription with its deliveries and their attempts; the record as it was, or undefined. */
export async function deleteWebhook(trx: Tx, id: number): Promise<Webhook | undefined> {
  const row = await trx.deleteFrom('webhooks').where('id', '=', id).returningAll().executeTakeFirst()
  if (row === undefined) return undefined
  // Found through indexes, not a scan of the outbox (keyed by change, migration 0008): a finished
  // delivery has at least one attempt (its attempts are indexed by subscription), and a pending one is
  // in the due index. So the deliveries go first, while their attempts still name them.
  await trx.deleteFrom('webhook_deliveries')
    .where('id', 'in', (eb) => eb.selectFrom('webhook_attempts').select('delivery_id').where('webhook_id', '=', id)).execute()
  await trx.deleteFrom('webhook_deliveries').where('status', '=', 'pending').where('webhook_id', '=', id).execute()
  await trx.deleteFrom('webhook_attempts').where('webhook_id', '=', id).execute()
  return webhookRecord(row)
}

/** Where and with which secret the given subscriptions are sent, by id. */
export async function receivers(db: Db, ids: readonly number[]): Promise<Map<number, Receiver>> {
  if (ids.length === 0) return new Map()
  const rows = await db.selectFrom('webhooks').select(['id', 'url', 'secret']).where('id', 'in', [...ids]).execute()
  return new Map(rows.map((r) => [r.id, r]))
}
