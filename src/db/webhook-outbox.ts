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
import { sql, type CompiledQuery, type Insertable, type Kysely, type RawBuilder } from 'kysely'
import { WEBHOOK_RESOURCES } from '../lib/webhook-types.js'
import { textPosition } from './dialect.js'
import { boundQuery, byShape, executeCompiled, prepared } from './prepared.js'
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
  status: string | null
}

/** Changes per statement (8 parameters each: SQLite binds at most 32,766 per statement). */
const CHUNK = 1000

/**
 * A change's action as an administrator is told of it (CONTRACT §13: the record "as in §12, as an administrator
 * sees it"; §12: a record that became invisible is `deleted`, one that became visible `created`): an update that
 * put a record in the trash is `deleted`, one that took it out (its previous entry in the log left it there)
 * `created`. Asked per delivery only: a write without subscribers looks up nothing.
 */
const ADMINISTRATOR_ACTION = sql`case
    when c.action = 'updated' and c.status = 'trash' then 'deleted'
    when c.action = 'updated' and c.status is not null and (select p.status from changes p
      where p.resource = c.resource and p.record_id = c.record_id and p.position < c.position order by p.position desc limit 1) = 'trash' then 'created'
    else c.action end`

/** The deliveries of the changes in `c` (position, singular, action, status, resource, record_id, language, changed_utc). */
function deliveriesOf(trx: Kysely<Database>, c: RawBuilder<unknown>, dueUtc: string): RawBuilder<unknown> {
  const wants = (pattern: RawBuilder<unknown>) => sql`${textPosition(trx, sql.ref('w.events'), pattern)} > 0`
  return sql`with ${c},
    d as (select c.position, c.singular || '.' || ${ADMINISTRATOR_ACTION} as type, c.singular, c.resource, c.record_id, c.language, c.changed_utc from c)
    insert into webhook_deliveries (webhook_id, position, type, resource, record_id, language, changed_utc, next_attempt_utc)
    select w.id, d.position, d.type, d.resource, d.record_id, d.language, d.changed_utc, cast(${dueUtc} as text)
    from d inner join webhooks w on w.active = 1
      and (${wants(sql`'"*"'`)} or ${wants(sql`'"' || d.type || '"'`)} or ${wants(sql`'"' || d.singular || '.*"'`)})
    order by d.position, w.id`
}

/** Whether an active subscription exists: one statement, whatever the subscriptions. */
const activeSubscription = prepared(0, (db) => db.selectFrom('webhooks').select('id').where('active', '=', 1).limit(1))

/** Per transaction: whether it found an active subscription (`subscribed`). */
const subscribedIn = new WeakMap<object, boolean>()

/**
 * SQLite: whether the transaction of `trx` holds an active subscription, looked up once a transaction (issue 49: the
 * deliveries' statement ran for every write even when nobody subscribed). The write transaction holds the write lock
 * from its begin: no other connection adds or activates a subscription until it ends, and this process's own writes of
 * subscriptions in it say so (`subscriptionsWritten`), so what it found at its first look holds to its commit.
 */
async function subscribed(trx: Tx): Promise<boolean> {
  let found = subscribedIn.get(trx)
  if (found === undefined) {
    found = (await activeSubscription(trx)).rows.length > 0
    subscribedIn.set(trx, found)
  }
  return found
}

/** A write of subscriptions in the transaction of `trx`: the outbox looks again before its next write's deliveries. */
export function subscriptionsWritten(trx: Tx): void {
  subscribedIn.delete(trx)
}

/**
 * Writes the pending deliveries of `changes` (logged already) for the active subscriptions that want them; due at
 * once. Nothing when no subscription is active.
 */
export async function enqueueDeliveries(trx: Tx, changes: readonly LoggedChange[], dueUtc: string): Promise<void> {
  if (changes.length === 0 || !(await subscribed(trx))) return
  for (let i = 0; i < changes.length; i += CHUNK) {
    const chunk = changes.slice(i, i + CHUNK)
    const values = chunk.flatMap((change) => [
      change.position, WEBHOOK_RESOURCES[change.resource], change.action, change.status, change.resource, change.record_id, change.language, change.changed_utc,
    ])
    await deliveriesOfValues(String(chunk.length))(trx, dueUtc, ...values)
  }
}

/** The statement of `enqueueDeliveries` for as many changes as its key says (8 values each, then the due time). */
const deliveriesOfValues = byShape(64, (key) => prepared(1 + 8 * Number(key), (db, dueUtc: string, ...values: unknown[]) => {
  // Typed, so that PostgreSQL would know each column of the list from its first row.
  const rows = Array.from({ length: Number(key) }, (_, r) => {
    const [position, singular, action, status, resource, recordId, language, changedUtc] = values.slice(8 * r, 8 * r + 8)
    return sql`(cast(${position} as bigint), cast(${singular} as text), cast(${action} as text), cast(${status} as text), cast(${resource} as text),
      cast(${recordId} as integer), cast(${language} as text), cast(${changedUtc} as text))`
  })
  return deliveriesOf(db, sql`c (position, singular, action, status, resource, record_id, language, changed_utc) as (values ${sql.join(rows)})`, dueUtc)
}))

/** The singular of a resource of the log, as delivery types name it (`events` → `event`), in SQL. */
const SINGULAR = sql`case l.resource ${sql.join(Object.entries(WEBHOOK_RESOURCES).map(([plural, singular]) => sql`when ${sql.lit(plural)} then ${sql.lit(singular)}`), sql` `)} end`

/**
 * PostgreSQL: appends `rows` to the change log (positions in their order) and writes their pending
 * deliveries, in one statement per CHUNK rows.
 */
export async function appendWithDeliveries(trx: Tx, rows: ReadonlyArray<Insertable<ChangesTable>>, dueUtc: string): Promise<void> {
  for (const query of appendWithDeliveriesQueries(trx, rows, dueUtc)) await executeCompiled(trx, query)
}

/** The statements of `appendWithDeliveries`, compiled, not run (a concurrent unit of work sends them with its commit: postgres-dialect.ts `logTailText`). */
export function appendWithDeliveriesQueries(trx: Tx, rows: ReadonlyArray<Insertable<ChangesTable>>, dueUtc: string): CompiledQuery[] {
  const queries: CompiledQuery[] = []
  for (let i = 0; i < rows.length; i += CHUNK) {
    const chunk = rows.slice(i, i + CHUNK)
    const values = chunk.flatMap((r) => [r.resource, r.record_id, r.language, r.action, r.changed_utc, r.status ?? null, r.author ?? null])
    queries.push(appendedWithDeliveries(String(chunk.length))(trx, dueUtc, ...values))
  }
  return queries
}

/** The statement of `appendWithDeliveries` for as many rows as its key says (7 values each, then the due time). */
const appendedWithDeliveries = byShape(64, (key) => boundQuery(1 + 7 * Number(key), (db, dueUtc: string, ...values: unknown[]) => {
  const rows = Array.from({ length: Number(key) }, (_, r) => sql`(${sql.join(values.slice(7 * r, 7 * r + 7))})`)
  const c = sql`l as (insert into changes (resource, record_id, language, action, changed_utc, status, author) values ${sql.join(rows)}
      returning position, resource, record_id, language, action, changed_utc, status),
    c as (select l.position, ${SINGULAR} as singular, l.action, l.status, l.resource, l.record_id, l.language, l.changed_utc from l)`
  return deliveriesOf(db, c, dueUtc)
}))
