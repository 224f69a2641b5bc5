/**
 * Retention of the change log (CONTRACT §12, `CALENDAR_CHANGES_RETENTION_DAYS`): entries older than
 * the retention are pruned, oldest first, a batch per unit of work with a turn of the event loop in
 * between, so that requests and writes go on while a large backlog is pruned. The server runs it at
 * start and then every hour; cursors older than what is kept are answered 410 from then on. Webhook
 * deliveries delivered or given up before the same cutoff go too, with their attempts; and so do
 * Idempotency-Keys first used more than `CALENDAR_IDEMPOTENCY_HOURS` ago (CONTRACT §18), in batches alike.
 */
import type { Kysely } from 'kysely'
import type { Database } from './db/schema.js'
import { withTransaction, type Tx } from './db/unit-of-work.js'
import { formatUtc } from './lib/dates.js'
import { DAY } from './lib/time-zones.js'
import { pruneBatch } from './repositories/changes.js'
import { pruneKeysBatch } from './repositories/idempotency-keys.js'
import { pruneFinishedDeliveries } from './repositories/webhook-deliveries.js'

/** Prunes every entry older than `days` before `now`, and webhook deliveries finished before then; returns how many entries went. */
export async function pruneExpiredChanges(db: Kysely<Database>, now: Date, days: number): Promise<number> {
  const cutoff = formatUtc(new Date(now.getTime() - days * DAY))
  await inBatches(db, (trx) => pruneFinishedDeliveries(trx, cutoff))
  return inBatches(db, (trx) => pruneBatch(trx, cutoff))
}

const HOUR_MS = 60 * 60 * 1000

/** Prunes every Idempotency-Key first used more than `hours` before `now`; returns how many went. */
export async function pruneExpiredIdempotencyKeys(db: Kysely<Database>, now: Date, hours: number): Promise<number> {
  const cutoff = new Date(now.getTime() - hours * HOUR_MS).toISOString()
  return inBatches(db, (trx) => pruneKeysBatch(trx, cutoff))
}

/** Runs `batch` a unit of work at a time, with a turn of the event loop in between, until it prunes nothing. */
async function inBatches(db: Kysely<Database>, batch: (trx: Tx) => Promise<number>): Promise<number> {
  let pruned = 0
  for (;;) {
    const n = await withTransaction(db, batch)
    if (n === 0) return pruned
    pruned += n
    await new Promise<void>((resolve) => setImmediate(resolve))
  }
}

/** What is kept how long: the change log (days) and Idempotency-Keys (hours). */
export interface Retention {
  changesDays: number
  idempotencyHours: number
}

/** Prunes what `retention` no longer keeps: the change log's old entries, then expired Idempotency-Keys. */
export async function pruneExpired(db: Kysely<Database>, now: Date, retention: Retention): Promise<void> {
  await pruneExpiredChanges(db, now, retention.changesDays)
  await pruneExpiredIdempotencyKeys(db, now, retention.idempotencyHours)
}

/** Prunes now and every hour until the returned function is called. */
export function scheduleRetention(db: Kysely<Database>, now: () => Date, retention: Retention, onError: (error: unknown) => void): () => void {
  let running: Promise<unknown> = Promise.resolve()
  const run = () => {
    running = running.then(() => pruneExpired(db, now(), retention)).catch(onError)
  }
  run()
  const timer = setInterval(run, HOUR_MS)
  timer.unref()
  return () => clearInterval(timer)
}
