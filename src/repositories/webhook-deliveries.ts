/**
 * The webhook outbox (CONTRACT §13): pending deliveries claimed by a lease, attempts recorded, retries
 * scheduled, deliveries given up and subscriptions disabled after too many in a row. Instants of the
 * outbox (`next_attempt_utc`, `lease_until`) are ISO 8601 with milliseconds, so that they compare as
 * text and retries may be scheduled below a second; what the API shows is in the contract's format.
 *
 * A claim is one unit of work: on PostgreSQL its rows are locked with SKIP LOCKED, so nodes claiming
 * at once take different rows; on SQLite the write transaction excludes every other writer. A claimed
 * delivery carries the claimer's lease: no other node takes it until the lease runs out (a node that
 * crashed mid-attempt), and only the lease holder records its outcome.
 */

import { skippingLocked } from '../db/dialect.js'
import type { AttemptOutcome, AttemptRow, DeliveryRow } from '../db/schema.js'
import type { Db, Tx } from '../db/unit-of-work.js'
import { formatUtc } from '../lib/dates.js'

export type ClaimedDelivery = Pick<DeliveryRow, 'id' | 'webhook_id' | 'position' | 'type' | 'resource' | 'record_id' | 'language' | 'changed_utc' | 'attempts' | 'payload'>

export interface ClaimOptions {
  now: Date
  owner: string
  leaseMs: number
  /** Deliveries to claim at most. */
  limit: number
  /** Deliveries in flight per subscription (this node's), and how many one subscription may have. */
  busy: ReadonlyMap<number, number>
  perReceiver: number
}

/** Whether anything is due now for an active subscription (a cheap read before a claim). */
export async function anythingDue(db: Db, now: Date): Promise<boolean> {
  const at = now.toISOString()
  const row = await db.selectFrom('webhook_deliveries').select('id')
    .where('status', '=', 'pending').where('next_attempt_utc', '<=', at)
    .where((eb) => eb.or([eb('lease_until', 'is', null), eb('lease_until', '<', at)]))
    .where('webhook_id', 'in', (eb) => eb.selectFrom('webhooks').select('id').where('active', '=', 1))
    .limit(1).executeTakeFirst()
  return row !== undefined
}

/** Claims due deliveries of active subscriptions, within the receivers' limits, oldest due first. */
export async function claimDue(trx: Tx, options: ClaimOptions): Promise<ClaimedDelivery[]> {
  const at = options.now.toISOString()
  const candidates = await skippingLocked(trx, trx.selectFrom('webhook_deliveries')
    .select(['id', 'webhook_id', 'position', 'type', 'resource', 'record_id', 'language', 'changed_utc', 'attempts', 'payload'])
    .where('status', '=', 'pending').where('next_attempt_utc', '<=', at)
    .where((eb) => eb.or([eb('lease_until', 'is', null), eb('lease_until', '<', at)]))
    .where('webhook_id', 'in', (eb) => eb.selectFrom('webhooks').select('id').where('active', '=', 1))
    .orderBy('next_attempt_utc').orderBy('id')
    .limit(options.limit * 4)).execute()
  const inFlight = new Map(options.busy)
  const claimed: ClaimedDelivery[] = []
  for (const row of candidates) {
    if (claimed.length >= options.limit) break
    const busy = inFlight.get(row.webhook_id) ?? 0
    if (busy >= options.perReceiver) continue
    inFlight.set(row.webhook_id, busy + 1)
    claimed.push(row)
  }
  if (claimed.length === 0) return []
  const leaseUntil = new Date(options.now.getTime() + options.leaseMs).toISOString()
  await trx.updateTable('webhook_deliveries').set({ lease_owner: options.owner, lease_until: leaseUntil })
    .where('id', 'in', claimed.map((c) => c.id)).execute()
  return claimed
}

export interface AttemptResult {
  delivery: ClaimedDelivery
  owner: string
  payload: string
  attemptedAt: Date
  durationMs: number
  responseStatus: number | null
  error: string | null
  /** When to try again; undefined when delivered or given up. */
  retryAt?: Date
  outcome: AttemptOutcome
  /** Give-ups in a row that disable the subscription. */
  disableAfter: number
}

/**
 * Records an attempt and moves its delivery on: delivered, pending again until `retryAt`, or given up;
 * a subscription's failures in a row are counted (and reset by a delivery), and reaching the limit
 * disables it. Nothing but the attempt is recorded when the lease was lost meanwhile.
 */
export async function recordAttempt(trx: Tx, r: AttemptResult): Promise<void> {
  const attempt = r.delivery.attempts + 1
  const nowUtc = formatUtc(r.attemptedAt)
  await trx.insertInto('webhook_attempts').values({
    delivery_id: r.delivery.id, webhook_id: r.delivery.webhook_id, attempt, attempted_utc: nowUtc, outcome: r.outcome,
    response_status: r.responseStatus, error: r.error, duration_ms: Math.max(0, Math.round(r.durationMs)),
  }).execute()
  const moved = await trx.updateTable('webhook_deliveries').set({
    attempts: attempt, payload: r.payload, lease_owner: null, lease_until: null,
    ...(r.outcome === 'retrying' && r.retryAt !== undefined
      ? { next_attempt_utc: r.retryAt.toISOString() }
      : { status: r.outcome === 'delivered' ? 'delivered' : 'failed', finished_utc: nowUtc }),
  }).where('id', '=', r.delivery.id).where('lease_owner', '=', r.owner).where('status', '=', 'pending').executeTakeFirst()
  if (Number(moved.numUpdatedRows) === 0) return
  if (r.outcome === 'delivered') {
    await trx.updateTable('webhooks').set({ failures: 0 }).where('id', '=', r.delivery.webhook_id).where('failures', '>', 0).execute()
  } else if (r.outcome === 'failed') {
    await trx.updateTable('webhooks').set((eb) => ({ failures: eb('failures', '+', 1) })).where('id', '=', r.delivery.webhook_id).execute()
    await trx.updateTable('webhooks').set({
      active: 0, disabled_utc: nowUtc, disabled_reason: `${r.disableAfter} deliveries in a row were given up.`,
    }).where('id', '=', r.delivery.webhook_id).where('active', '=', 1).where('failures', '>=', r.disableAfter).execute()
  }
}

/**
 * Records the attempts of one batch: every attempt row in one insert, the deliveries that arrived moved
 * on by one update (and their subscriptions' failures in a row reset by another), the others one by one
 * (`recordAttempt`: each has its own next time or give-up). A handful of statements for many deliveries,
 * so that the dispatcher holds the write lock briefly. Attempts of deliveries deleted meanwhile (their
 * subscription was) are left out, so that no attempt row outlives its subscription.
 */
export async function recordAttempts(trx: Tx, results: readonly AttemptResult[]): Promise<void> {
  if (results.length === 0) return
  // A delivery gone meanwhile went with its subscription (deleted with its history): its attempt is not recorded.
  const present = new Set((await trx.selectFrom('webhook_deliveries').select('id')
    .where('id', 'in', results.map((r) => r.delivery.id)).execute()).map((row) => row.id))
  const kept = results.filter((r) => present.has(r.delivery.id))
  const delivered = kept.filter((r) => r.outcome === 'delivered')
  for (const r of kept) if (r.outcome !== 'delivered') await recordAttempt(trx, r)
  if (delivered.length === 0) return
  await trx.insertInto('webhook_attempts').values(delivered.map((r) => ({
    delivery_id: r.delivery.id, webhook_id: r.delivery.webhook_id, attempt: r.delivery.attempts + 1, attempted_utc: formatUtc(r.attemptedAt),
    outcome: r.outcome, response_status: r.responseStatus, error: r.error, duration_ms: Math.max(0, Math.round(r.durationMs)),
  }))).execute()
  const owner = delivered[0]!.owner
  const moved = await trx.updateTable('webhook_deliveries')
    .set((eb) => ({ attempts: eb('attempts', '+', 1), status: 'delivered', finished_utc: formatUtc(delivered[0]!.attemptedAt), lease_owner: null, lease_until: null }))
    .where('id', 'in', delivered.map((r) => r.delivery.id)).where('lease_owner', '=', owner).where('status', '=', 'pending')
    .returning('webhook_id').execute()
  const webhooks = [...new Set(moved.map((m) => m.webhook_id))]
  if (webhooks.length > 0) await trx.updateTable('webhooks').set({ failures: 0 }).where('id', 'in', webhooks).where('failures', '>', 0).execute()
}

/** Gives claimed deliveries back without an attempt (a node stopping): due again at once, for any node. */
export async function releaseLeases(trx: Tx, owner: string, ids: readonly number[]): Promise<void> {
  if (ids.length === 0) return
  await trx.updateTable('webhook_deliveries').set({ lease_owner: null, lease_until: null })
    .where('id', 'in', [...ids]).where('lease_owner', '=', owner).execute()
}

/** Deliveries still pending (the backlog), over every subscription. */
export async function pendingCount(db: Db): Promise<number> {
  const row = await db.selectFrom('webhook_deliveries').select((eb) => eb.fn.countAll<number>().as('n')).where('status', '=', 'pending').executeTakeFirst()
  return Number(row?.n ?? 0)
}

/** An attempt with what its delivery is now (position, type, record; status, attempts and when it is due). */
export type AttemptListing = AttemptRow
  & Pick<DeliveryRow, 'position' | 'type' | 'resource' | 'record_id' | 'status' | 'attempts' | 'next_attempt_utc'>

export async function countAttempts(db: Db, webhookId: number): Promise<number> {
  const row = await db.selectFrom('webhook_attempts').select((eb) => eb.fn.countAll<number>().as('n')).where('webhook_id', '=', webhookId).executeTakeFirst()
  return Number(row?.n ?? 0)
}

/** A page of a subscription's attempts, newest first, with what their delivery is now. */
export async function listAttempts(db: Db, webhookId: number, limit: number, offset: number): Promise<AttemptListing[]> {
  return db.selectFrom('webhook_attempts as a').innerJoin('webhook_deliveries as d', 'd.id', 'a.delivery_id')
    .select(['a.id', 'a.delivery_id', 'a.webhook_id', 'd.position', 'd.type', 'd.resource', 'd.record_id', 'a.attempt',
      'a.attempted_utc', 'a.outcome', 'a.response_status', 'a.error', 'a.duration_ms', 'd.status', 'd.attempts', 'd.next_attempt_utc'])
    .where('a.webhook_id', '=', webhookId)
    .orderBy('a.id', 'desc').limit(limit).offset(offset).execute()
}

/** Deliveries finished (delivered or given up) before `cutoffUtc`, with their attempts, a batch at a time; how many went. */
export async function pruneFinishedDeliveries(trx: Tx, cutoffUtc: string, batch = 1000): Promise<number> {
  const ids = (await trx.selectFrom('webhook_deliveries').select('id').where('status', '!=', 'pending')
    .where('finished_utc', '<', cutoffUtc).orderBy('id').limit(batch).execute()).map((r) => r.id)
  if (ids.length === 0) return 0
  await trx.deleteFrom('webhook_attempts').where('delivery_id', 'in', ids).execute()
  await trx.deleteFrom('webhook_deliveries').where('id', 'in', ids).execute()
  return ids.length
}


