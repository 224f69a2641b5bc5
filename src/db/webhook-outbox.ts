/**
 * The webhook outbox's intake (CONTRACT §13): each change the change log takes in becomes a pending
 * delivery for every active subscription that wants its type, in the same transaction as the write, so
 * that a change acknowledged to its writer is never lost to its subscribers, whatever crashes after.
 *
 * One statement per write, whatever the number of subscriptions and changes (up to CHUNK changes): the
 * changes go in as a list of values, and the database pairs each with the active subscriptions whose
 * `events` (a JSON array of patterns from a closed list, none holding a quote) name its type, its
 * resource's `*` or `*`, found as quoted text in that array. Writes with no subscriber insert nothing.
 */
import { sql } from 'kysely'
import { deliveryType } from '../lib/webhook-types.js'
import { textPosition } from './dialect.js'
import type { ChangeAction, ChangeResource } from './schema.js'
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

/** Changes per INSERT (8 parameters each: SQLite binds at most 32,766 per statement). */
const CHUNK = 1000

/** Writes the pending deliveries of `changes` for the active subscriptions that want them; due at once. */
export async function enqueueDeliveries(trx: Tx, changes: readonly LoggedChange[], dueUtc: string): Promise<void> {
  for (let i = 0; i < changes.length; i += CHUNK) {
    const values = changes.slice(i, i + CHUNK).map((change) => {
      const type = deliveryType(change.resource, change.action)
      const resourcePattern = `"${type.slice(0, type.indexOf('.'))}.*"`
      // Typed, so that PostgreSQL knows each column of the list from its first row.
      return sql`(cast(${change.position} as bigint), cast(${type} as text), cast(${change.resource} as text), cast(${change.record_id} as integer),
        cast(${change.language} as text), cast(${change.changed_utc} as text), cast(${`"${type}"`} as text), cast(${resourcePattern} as text))`
    })
    const wants = (pattern: ReturnType<typeof sql>) => sql`${textPosition(trx, sql.ref('w.events'), pattern)} > 0`
    await sql`with c (position, type, resource, record_id, language, changed_utc, type_pattern, resource_pattern) as (values ${sql.join(values)})
      insert into webhook_deliveries (webhook_id, position, type, resource, record_id, language, changed_utc, next_attempt_utc)
      select w.id, c.position, c.type, c.resource, c.record_id, c.language, c.changed_utc, cast(${dueUtc} as text)
      from c inner join webhooks w on w.active = 1
        and (${wants(sql`'"*"'`)} or ${wants(sql.ref('c.type_pattern'))} or ${wants(sql.ref('c.resource_pattern'))})
      order by c.position, w.id`.execute(trx)
  }
}
