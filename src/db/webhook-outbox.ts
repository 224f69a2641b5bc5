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
import { sql, type Insertable, type Kysely, type RawBuilder } from 'kysely'
import { deliveryType, WEBHOOK_RESOURCES } from '../lib/webhook-types.js'
import { textPosition } from './dialect.js'
import { byShape, prepared } from './prepared.js'
import type { ChangeAction, ChangeResource, ChangesTable, Database } from './schema.js'
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
function deliveriesOf(trx: Kysely<Database>, c: RawBuilder<unknown>, dueUtc: string): RawBuilder<unknown> {
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
    const chunk = changes.slice(i, i + CHUNK)
    const values = chunk.flatMap((change) => {
      const type = deliveryType(change.resource, change.action)
      return [change.position, type, change.resource, change.record_id, change.language, change.changed_utc, `"${type}"`, `"${type.slice(0, type.indexOf('.'))}.*"`]
    })
    await deliveriesOfValues(String(chunk.length))(trx, dueUtc, ...values)
  }
}

/** The statement of `enqueueDeliveries` for as many changes as its key says (8 values each, then the due time). */
const deliveriesOfValues = byShape(64, (key) => prepared(1 + 8 * Number(key), (db, dueUtc: string, ...values: unknown[]) => {
  // Typed, so that PostgreSQL would know each column of the list from its first row.
  const rows = Array.from({ length: Number(key) }, (_, r) => {
    const [position, type, resource, recordId, language, changedUtc, typePattern, resourcePattern] = values.slice(8 * r, 8 * r + 8)
    return sql`(cast(${position} as bigint), cast(${type} as text), cast(${resource} as text), cast(${recordId} as integer),
      cast(${language} as text), cast(${changedUtc} as text), cast(${typePattern} as text), cast(${resourcePattern} as text))`
  })
  return deliveriesOf(db, sql`c (position, type, resource, record_id, language, changed_utc, type_pattern, resource_pattern) as (values ${sql.join(rows)})`, dueUtc)
}))

/** The singular of a resource of the log, as delivery types name it (`events` → `event`), in SQL. */
const SINGULAR = sql`case l.resource ${sql.join(Object.entries(WEBHOOK_RESOURCES).map(([plural, singular]) => sql`when ${sql.lit(plural)} then ${sql.lit(singular)}`), sql` `)} end`

/**
 * PostgreSQL: appends `rows` to the change log (positions in their order) and writes their pending
 * deliveries, in one statement per CHUNK rows.
 */
export async function appendWithDeliveries(trx: Tx, rows: ReadonlyArray<Insertable<ChangesTable>>, dueUtc: string): Promise<void> {
  for (let i = 0; i < rows.length; i += CHUNK) {
    const chunk = rows.slice(i, i + CHUNK)
    const values = chunk.flatMap((r) => [r.resource, r.record_id, r.language, r.action, r.changed_utc, r.status ?? null, r.author ?? null])
    await appendedWithDeliveries(String(chunk.length))(trx, dueUtc, ...values)
  }
}

/** The statement of `appendWithDeliveries` for as many rows as its key says (7 values each, then the due time). */
const appendedWithDeliveries = byShape(64, (key) => prepared(1 + 7 * Number(key), (db, dueUtc: string, ...values: unknown[]) => {
  const rows = Array.from({ length: Number(key) }, (_, r) => sql`(${sql.join(values.slice(7 * r, 7 * r + 7))})`)
  const c = sql`l as (insert into changes (resource, record_id, language, action, changed_utc, status, author) values ${sql.join(rows)}
      returning position, resource, record_id, language, action, changed_utc),
    t as (select l.position, ${SINGULAR} as singular, l.action, l.resource, l.record_id, l.language, l.changed_utc from l),
    c as (select position, singular || '.' || action as type, resource, record_id, language, changed_utc,
      '"' || singular || '.' || action || '"' as type_pattern, '"' || singular || '.*"' as resource_pattern from t)`
  return deliveriesOf(db, c, dueUtc)
}))
