/**
 * The webhook dispatcher (CONTRACT §13): in the server process, beside the requests and never in their
 * way, it takes due deliveries from the outbox by a lease (one node at a time attempts a delivery),
 * sends them with bounded concurrency (per subscription and in all), records every attempt, and
 * schedules retries with growing delays and jitter until the last, after which the delivery is given up
 * (repositories/webhook-deliveries.ts decides the states).
 *
 * It looks for due work when a write of this process commits (`wake`), when an attempt ends, and
 * otherwise every `pollMs` (writes of other nodes, retries coming due). Requests come first: while
 * this node answers requests and its event loop is nearly always busy (`saturated`), a round claims at
 * most `busyConcurrency` deliveries and comes at most every BUSY_ROUND_MS, so that deliveries take a
 * small, bounded share of a saturated node and still go out; otherwise rounds follow each other as
 * work comes, with up to `concurrency` attempts in flight (measured in `npm run bench:webhooks`).
 * Attempts that end within RECORD_MS of each other are recorded in one transaction. Pending deliveries survive any
 * restart: they are rows. `stop` (SIGTERM) takes nothing new, lets attempts in flight finish within a
 * grace time, and gives the leases of those still running back (they are tried again, by any node).
 * `runOnce` does one round and waits for its attempts, for tests that move their clock instead of
 * waiting.
 */
import { randomUUID } from 'node:crypto'
import type { Kysely } from 'kysely'
import type { Database } from '../db/schema.js'
import { withTransaction } from '../db/unit-of-work.js'
import { retryDelay } from '../lib/retry-schedule.js'
import { anythingDue, claimDue, recordAttempts, releaseLeases, type AttemptResult, type ClaimedDelivery } from '../repositories/webhook-deliveries.js'
import { receivers } from '../repositories/webhooks.js'
import { buildPayload, messageId, signedHeaders, type PayloadSources } from './payload.js'
import { createSender, type Sender } from './sender.js'

export interface DispatcherOptions extends PayloadSources {
  db: Kysely<Database>
  retrySchedule: readonly number[]
  disableAfter: number
  allowPrivate: boolean
  /** The dispatcher's clock (due times, leases, `webhook-timestamp`). */
  now?: () => Date
  random?: () => number
  timeoutMs?: number
  /** Attempts in flight at most, in all and per subscription. */
  concurrency?: number
  perReceiver?: number
  /** Whether this node answers requests with its event loop nearly always busy (see above); default never. */
  saturated?: () => boolean
  busyConcurrency?: number
  pollMs?: number
  /** How long `stop` lets attempts in flight run before giving their leases back. */
  graceMs?: number
  onError?: (error: unknown) => void
  /** Told of every attempt's outcome (metrics). */
  onAttempt?: (outcome: 'delivered' | 'retrying' | 'failed') => void
}

export interface Dispatcher {
  start(): void
  wake(): void
  /** Claims what is due now and sends it; resolves when those attempts are recorded. How many there were. */
  runOnce(): Promise<number>
  stop(): Promise<void>
}

/** How long a wake waits for more writes to come along before it claims. */
const WAKE_MS = 20
/** How long an attempt's outcome waits for others to be recorded with. */
const RECORD_MS = 20
/** While the node is saturated, the least time between two rounds. */
const BUSY_ROUND_MS = 200

/** The request timeout of CONTRACT §13. */
export const DELIVERY_TIMEOUT_MS = 10_000

export function createDispatcher(options: DispatcherOptions): Dispatcher {
  const now = options.now ?? (() => new Date())
  const random = options.random ?? Math.random
  const timeoutMs = options.timeoutMs ?? DELIVERY_TIMEOUT_MS
  const concurrency = options.concurrency ?? 64
  const perReceiver = options.perReceiver ?? 16
  const busyConcurrency = Math.min(concurrency, options.busyConcurrency ?? 8)
  const saturated = options.saturated ?? (() => false)
  const pollMs = options.pollMs ?? 1000
  const graceMs = options.graceMs ?? 5000
  const onError = options.onError ?? (() => undefined)
  // A lease outlives an attempt: no other node takes a delivery while its attempt may still run.
  const leaseMs = timeoutMs + 5000
  const owner = randomUUID()
  const sender: Sender = createSender({ allowPrivate: options.allowPrivate, timeoutMs })
  const inFlight = new Map<number, { webhookId: number; done: Promise<void> }>()
  const stopping = new AbortController()
  let started = false
  let timer: NodeJS.Timeout | undefined
  let timerDue = 0
  let round: Promise<number> | undefined
  let again = false
  let stopped: Promise<void> | undefined

  const busy = () => {
    const counts = new Map<number, number>()
    for (const { webhookId } of inFlight.values()) counts.set(webhookId, (counts.get(webhookId) ?? 0) + 1)
    return counts
  }

  /** One attempt of a claimed delivery, recorded. */
  async function attempt(delivery: ClaimedDelivery, url: string | undefined, secret: string | undefined, body: () => Promise<string>): Promise<void> {
    const payload = delivery.payload ?? await body()
    const attemptedAt = now()
    const started = performance.now()
    const result = url === undefined || secret === undefined
      ? { status: null, error: 'the subscription is gone', delivered: false }
      : await sender.send(url, signedHeaders(secret, messageId(delivery.webhook_id, delivery.position), attemptedAt, payload), payload, stopping.signal)
    if (stopping.signal.aborted && !result.delivered) {
      // Cut short by the stop: not an attempt of the receiver's; any node tries it again.
      await withTransaction(options.db, (trx) => releaseLeases(trx, owner, [delivery.id]))
      return
    }
    const delay = result.delivered ? undefined : retryDelay(options.retrySchedule, delivery.attempts + 1, random())
    const outcome = result.delivered ? 'delivered' : delay === undefined ? 'failed' : 'retrying'
    await record({
      delivery, owner, payload, attemptedAt, durationMs: performance.now() - started,
      responseStatus: result.status, error: result.error, outcome, disableAfter: options.disableAfter,
      ...(delay !== undefined ? { retryAt: new Date(now().getTime() + delay) } : {}),
    })
    options.onAttempt?.(outcome)
  }

  /**
   * Records an attempt together with the others that end within RECORD_MS: one write transaction for
   * many attempts, so that deliveries take the write lock (and write pages) as little as they can.
   */
  let batch: { results: AttemptResult[]; written: Promise<void> } | undefined
  function record(result: AttemptResult): Promise<void> {
    if (batch === undefined) {
      const results: AttemptResult[] = []
      const written = new Promise<void>((resolve) => setTimeout(resolve, RECORD_MS)).then(() => {
        batch = undefined
        return withTransaction(options.db, (trx) => recordAttempts(trx, results))
      })
      batch = { results, written }
    }
    batch.results.push(result)
    return batch.written
  }

  /** Claims what is due within the limits and starts its attempts; the attempts' promises. */
  async function claimAndSend(): Promise<Array<Promise<void>>> {
    const free = (saturated() ? busyConcurrency : concurrency) - inFlight.size
    if (free <= 0 || stopping.signal.aborted) return []
    const at = now()
    if (!await anythingDue(options.db, at)) return []
    const claimed = await withTransaction(options.db, (trx) => claimDue(trx, { now: at, owner, leaseMs, limit: free, busy: busy(), perReceiver }))
    if (claimed.length === 0) return []
    const targets = await receivers(options.db, [...new Set(claimed.map((c) => c.webhook_id))])
    // One change sent to several subscriptions: its body is made once.
    const bodies = new Map<number, Promise<string>>()
    const bodyOf = (delivery: ClaimedDelivery) => () => {
      let body = bodies.get(delivery.position)
      if (body === undefined) bodies.set(delivery.position, body = buildPayload(options, delivery))
      return body
    }
    return claimed.map((delivery) => {
      const target = targets.get(delivery.webhook_id)
      const done = attempt(delivery, target?.url, target?.secret, bodyOf(delivery)).catch(onError).finally(() => {
        inFlight.delete(delivery.id)
        if (started) wake()
      })
      inFlight.set(delivery.id, { webhookId: delivery.webhook_id, done })
      return done
    })
  }

  /** When the next round may come: soon, or after BUSY_ROUND_MS while the node is saturated. */
  const soon = () => (saturated() ? BUSY_ROUND_MS : WAKE_MS)

  /** Runs a round in `ms`, unless one is planned sooner already. */
  function schedule(ms: number): void {
    if (!started || stopping.signal.aborted) return
    const due = performance.now() + ms
    if (timer !== undefined && timerDue <= due) return
    if (timer !== undefined) clearTimeout(timer)
    timerDue = due
    timer = setTimeout(tick, ms)
    timer.unref()
  }

  function tick(): void {
    timer = undefined
    if (round !== undefined) {
      again = true
      return
    }
    round = claimAndSend().then((sent) => sent.length, (error: unknown) => {
      onError(error)
      return 0
    }).finally(() => {
      round = undefined
      const more = again
      again = false
      schedule(more ? soon() : pollMs)
    })
  }

  /** A write committed: look soon, once for the writes of a short while rather than once for each. */
  function wake(): void {
    if (round !== undefined) again = true
    else schedule(soon())
  }

  return {
    start() {
      if (started) return
      started = true
      schedule(0)
    },
    wake,
    async runOnce() {
      const sent = await claimAndSend()
      await Promise.all(sent)
      return sent.length
    },
    stop() {
      stopped ??= halt()
      return stopped
    },
  }

  /** The work of `stop`, done once however often it is asked for. */
  async function halt(): Promise<void> {
    started = false
    if (timer !== undefined) clearTimeout(timer)
    await round
    const running = [...inFlight.values()].map((f) => f.done)
    let graceTimer: NodeJS.Timeout | undefined
    const grace = new Promise<void>((resolve) => { graceTimer = setTimeout(resolve, graceMs) })
    await Promise.race([Promise.all(running), grace])
    clearTimeout(graceTimer)
    stopping.abort()
    await Promise.all(running)
    await sender.close()
  }
}
