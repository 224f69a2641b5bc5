/**
 * The webhook outbox's intake (CONTRACT §13): each change the change log takes in becomes a pending
 * delivery for every active subscription that wants its type, in the same transaction as the write, so
 * that a change acknowledged to its writer is never lost to its subscribers, whatever crashes after.
 *
 * One statement per write, whatever the number of subscriptions and changes (up to CHUNK changes): the
 * changes, as a relation `c`, are paired with the active subscriptions whose `events` (a JSON array of
 * patterns from a closed list, none holding a quote) name their type, their resource's `*` or `*`, found
 * as quoted text in that array. Writes with no subscriber insert nothing. On SQLite `c` is a list of
 * values (the entries the log returned); on PostgreSQL the log's INSERT is a data-modifying part of the
 * same statement (`appendWithDeliveries`), so that a write pays one round trip to the server for both.
 */
import { sql, type Insertable, type RawBuilder } from 'kysely'
import { deliveryType, WEBHOOK_RESOURCES } from '../lib/webhook-types.js'
import { textPosition } from './dialect.js'
import type { ChangeAction, ChangeResource, ChangesTable } from './schema.js'
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

/** Changes per statement (8 parameters each: SQLite binds at most 32,766 per statement). */
const CHUNK = 1000

/** The deliveries of the changes in `c` (position, type, resource, record_id, language, changed_utc, type_pattern, resource_pattern). */
function deliveriesOf(trx: Tx, c: RawBuilder<unknown>, dueUtc: string): RawBuilder<unknown> {
  const wants = (pattern: RawBuilder<unknown>) => sql`${textPosition(trx, sql.ref('w.events'), pattern)} > 0`
  return sql`with ${c}
    insert into webhook_deliveries (webhook_id, position, type, resource, record_id, language, changed_utc, next_attempt_utc)
    select w.id, c.position, c.type, c.resource, c.record_id, c.language, c.changed_utc, cast(${dueUtc} as text)
    from c inner join webhooks w on w.active = 1
      and (${wants(sql`'"*"'`)} or ${wants(sql.ref('c.type_pattern'))} or ${wants(sql.ref('c.resource_pattern'))})
    order by c.position, w.id`
}

/** Writes the pending deliveries of `changes` (logged already) for the active subscriptions that want them; due at once. */
export async function enqueueDeliveries(trx: Tx, changes: readonly LoggedChange[], dueUtc: string): Promise<void> {
  for (let i = 0; i < changes.length; i += CHUNK) {
    const values = changes.slice(i, i + CHUNK).map((change) => {
      const type = deliveryType(change.resource, change.action)
      const resourcePattern = `"${type.slice(0, type.indexOf('.'))}.*"`
      // Typed, so that PostgreSQL would know each column of the list from its first row.
      return sql`(cast(${change.position} as bigint), cast(${type} as text), cast(${change.resource} as text), cast(${change.record_id} as integer),
        cast(${change.language} as text), cast(${change.changed_utc} as text), cast(${`"${type}"`} as text), cast(${resourcePattern} as text))`
    })
    await deliveriesOf(trx, sql`c (position, type, resource, record_id, language, changed_utc, type_pattern, resource_pattern) as (values ${sql.join(values)})`, dueUtc).execute(trx)
  }
}

/** The singular of a resource of the log, as delivery types name it (`events` → `event`), in SQL. */
const SINGULAR = sql`case l.resource ${sql.join(Object.entries(WEBHOOK_RESOURCES).map(([plural, singular]) => sql`when ${sql.lit(plural)} then ${sql.lit(singular)}`), sql` `)} end`

/**
 * PostgreSQL: appends `rows` to the change log (positions in their order) and writes their pending
 * deliveries, in one statement per CHUNK rows.
 */
export async function appendWithDeliveries(trx: Tx, rows: ReadonlyArray<Insertable<ChangesTable>>, dueUtc: string): Promise<void> {
  for (let i = 0; i < rows.length; i += CHUNK) {
    const values = rows.slice(i, i + CHUNK).map((r) => sql`(${r.resource}, ${r.record_id}, ${r.language}, ${r.action}, ${r.changed_utc}, ${r.status ?? null}, ${r.author ?? null})`)
    const c = sql`l as (insert into changes (resource, record_id, language, action, changed_utc, status, author) values ${sql.join(values)}
        returning position, resource, record_id, language, action, changed_utc),
      t as (select l.position, ${SINGULAR} as singular, l.action, l.resource, l.record_id, l.language, l.changed_utc from l),
      c as (select position, singular || '.' || action as type, resource, record_id, language, changed_utc,
        '"' || singular || '.' || action || '"' as type_pattern, '"' || singular || '.*"' as resource_pattern from t)`
    await deliveriesOf(trx, c, dueUtc).execute(trx)
  }
}
