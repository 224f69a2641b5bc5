/**
 * The webhook outbox's intake (CONTRACT §13): each change the change log takes in becomes a pending
 * delivery for every active subscription that wants its type, in the same transaction as the write, so
 * that a change acknowledged to its writer is never lost to its subscribers, whatever crashes after.
 * Two statements per write at most, whatever the number of subscriptions: one read of the active
 * subscriptions (a small table) and, when any wants the changes, one insert of their deliveries.
 */
import type { Insertable } from 'kysely'
import { deliveryType, wantsType } from '../lib/webhook-types.js'
import type { ChangeAction, ChangeResource, WebhookDeliveriesTable } from './schema.js'
import type { Tx } from './unit-of-work.js'

/** A change as the log took it in. */
export interface LoggedChange {
  position: number
  resource: ChangeResource
  record_id: number
  language: string
  action: ChangeAction
  changed_utc: string
}

/** Deliveries per INSERT (SQLite binds at most 32,766 parameters per statement). */
const CHUNK = 1000

/** Writes the pending deliveries of `changes` for the active subscriptions that want them; due at once. */
export async function enqueueDeliveries(trx: Tx, changes: readonly LoggedChange[], dueUtc: string): Promise<void> {
  if (changes.length === 0) return
  const subscriptions = await trx.selectFrom('webhooks').select(['id', 'events']).where('active', '=', 1).execute()
  if (subscriptions.length === 0) return
  const wanted = subscriptions.map((s) => ({ id: s.id, patterns: JSON.parse(s.events) as string[] }))
  const rows: Array<Insertable<WebhookDeliveriesTable>> = []
  for (const change of changes) {
    const type = deliveryType(change.resource, change.action)
    for (const subscription of wanted) {
      if (!wantsType(subscription.patterns, type)) continue
      rows.push({
        webhook_id: subscription.id, position: change.position, type, resource: change.resource,
        record_id: change.record_id, language: change.language, changed_utc: change.changed_utc, next_attempt_utc: dueUtc,
      })
    }
  }
  for (let i = 0; i < rows.length; i += CHUNK) await trx.insertInto('webhook_deliveries').values(rows.slice(i, i + CHUNK)).execute()
}
