/**
 * Safe retries of creating POSTs (CONTRACT §18): `Idempotency-Key` (IETF draft-ietf-httpapi-idempotency-key-header,
 * as Stripe uses it). A request with a key first claims it in a short unit of work of its own, then
 * creates in another, which also stores the answer (status, body, `Location`, `ETag`): a create that
 * committed always has its answer remembered, and one that failed stored nothing and gives the key back.
 * A retry with the same key, method, path (query included) and body bytes is given the first answer with
 * `Idempotent-Replayed: true` and creates nothing; another request under the same key is 422; a key
 * still held by a request in progress is 409. A claim holds for CLAIM_LEASE_MS: one whose request died
 * with its node runs out, and the next request with the key takes it over (the one that died, should it
 * come back, finds its claim gone and writes nothing: its answer is stored by compare-and-swap on its
 * claim's token, in the unit of work of the create). A request that failed gives its key back; when the
 * database fails for that too (503), the node remembers the claim as abandoned and its next request with
 * the key takes it over at once.
 * Keys belong to the caller (the user of the API key) and live `CALENDAR_IDEMPOTENCY_HOURS` from their
 * first use; retention.ts prunes them.
 */
import { createHash, randomUUID } from 'node:crypto'
import type { FastifyReply, FastifyRequest } from 'fastify'
import { withTransaction, type Db, type Tx, type UnitOptions } from '../db/unit-of-work.js'
import { ApiError } from '../http/errors.js'
import { idempotencyKeyOf } from '../http/idempotency-key.js'
import { sendSerialized, type Serialized } from '../http/serialized.js'
import { claimKey, findKey, releaseKey, rememberAnswer, type StoredKey } from '../repositories/idempotency-keys.js'
import type { AppContext } from './context.js'

/** How long a claim holds a key without its answer: well past any request's time (a dead node's claim runs out). */
export const CLAIM_LEASE_MS = 60_000

const HOUR_MS = 60 * 60 * 1000

/** What a create answers: the record's JSON as sent, its URL and, for records that have one, its tag. */
export interface Created<T> {
  body: Serialized<T>
  location: string
  etag?: string
}

/**
 * Claims whose request ended without an answer and that could not be given back (the database failed under the
 * request and again for the release: a 503), by caller and key: their request is no longer in progress, so the
 * next request with the key on this node takes the claim over instead of waiting out its lease (409). Other
 * nodes do not know it and wait out the lease. Bounded; the oldest are forgotten first (their leases run out).
 */
const abandoned = new Map<string, string>()
const ABANDONED_MAX = 10_000
const claimId = (userId: number, key: string) => `${userId}\n${key}`

function abandon(userId: number, key: string, token: string): void {
  const id = claimId(userId, key)
  abandoned.delete(id)
  abandoned.set(id, token)
  if (abandoned.size > ABANDONED_MAX) abandoned.delete(abandoned.keys().next().value as string)
}

const inUse = () => new ApiError(409, 'rest_idempotency_key_in_use', 'idempotencyKeyInUse')
const mismatch = () => new ApiError(422, 'rest_idempotency_key_mismatch', 'idempotencyKeyMismatch')

/** The digest a key's requests are compared by: method, path with its query, and the body's bytes. */
function fingerprintOf(req: FastifyRequest): string {
  return createHash('sha256').update(`${req.method} ${req.url}\n${req.bodyDigest ?? ''}`).digest('hex')
}

type Claim = { token: string } | { replay: StoredKey }

/** A key's claim and its release write one row: small units of work (`UnitOptions.small`). */
const SMALL = { small: true } as const

/**
 * Answers a create: `write` in a unit of work, then `answer` from what it wrote, 201. With an
 * `Idempotency-Key`, once per key: the answer is built and stored inside the unit of work of the write.
 * `options`: how the create's unit of work runs (unit-of-work.ts: `concurrent` on PostgreSQL, `small` on SQLite when
 * its rows are bounded whatever the data holds; the key's claim and release are small units of work, run alone).
 */
export async function createOnce<T, W>(
  ctx: AppContext, req: FastifyRequest, reply: FastifyReply,
  write: (trx: Tx) => Promise<W>, answer: (reader: Db, written: W) => Promise<Created<T>>, options: UnitOptions = {},
): Promise<Serialized<T>> {
  const key = idempotencyKeyOf(req)
  const user = req.user
  // The answer is read inside the unit of work: nothing after the commit may turn a write into an error (CONTRACT §18).
  if (key === undefined || user === null) return send(reply, await withTransaction(ctx.db, async (trx) => answer(trx, await write(trx)), options))
  const fingerprint = fingerprintOf(req)
  const claim = await claimFor(ctx, user.id, key, fingerprint)
  if ('replay' in claim) return replay(reply, claim.replay)
  const { token } = claim
  let created: Created<T>
  try {
    created = await withTransaction(ctx.db, async (trx) => {
      const made = await answer(trx, await write(trx))
      const remembered = { status: 201, location: made.location, etag: made.etag ?? null, body: made.body.toString('utf8') }
      // The claim ran out and another request took the key over: this one writes nothing.
      if (!(await rememberAnswer(trx, user.id, key, token, remembered))) throw inUse()
      return made
    }, options)
  } catch (error) {
    // Only answers that wrote something are remembered: the key is given back; if that fails too, this node
    // takes the claim over at the key's next request (and other nodes once its lease runs out).
    await withTransaction(ctx.db, (trx) => releaseKey(trx, user.id, key, token), SMALL).catch(() => abandon(user.id, key, token))
    throw error
  }
  return send(reply, created)
}

/** Claims `key` for a new request, or finds the answer to give again; refuses a key in use or sent with another request. */
async function claimFor(ctx: AppContext, userId: number, key: string, fingerprint: string): Promise<Claim> {
  const now = ctx.now()
  const nowIso = now.toISOString()
  const expiredBefore = new Date(now.getTime() - ctx.config.idempotencyHours * HOUR_MS).toISOString()
  const token = randomUUID()
  const claim = { userId, key, fingerprint, token, leaseUntil: new Date(now.getTime() + CLAIM_LEASE_MS).toISOString(), createdUtc: nowIso }
  const claimed = await withTransaction(ctx.db, async (trx): Promise<Claim> => {
    const found = await findKey(trx, userId, key)
    // A key past its lifetime (not pruned yet) is a new key.
    if (found === undefined || found.created_utc < expiredBefore) {
      if (!(await claimKey(trx, claim, found?.token))) throw inUse()
      return { token }
    }
    if (found.fingerprint !== fingerprint) throw mismatch()
    if (found.body !== null) return { replay: found }
    if (found.lease_until > nowIso && abandoned.get(claimId(userId, key)) !== found.token) throw inUse()
    // Its request died (its node stopped or crashed before it wrote) or ended here without giving the key
    // back: this one takes the key over.
    if (!(await claimKey(trx, claim, found.token))) throw inUse()
    return { token }
  }, SMALL)
  // The key is this request's now: a claim abandoned under it is gone.
  if ('token' in claimed) abandoned.delete(claimId(userId, key))
  return claimed
}

function send<T>(reply: FastifyReply, created: Created<T>): Serialized<T> {
  reply.code(201).header('Location', created.location)
  if (created.etag !== undefined) reply.header('ETag', created.etag)
  return sendSerialized(reply, created.body)
}

function replay<T>(reply: FastifyReply, stored: StoredKey): Serialized<T> {
  reply.code(stored.status ?? 201).header('Idempotent-Replayed', 'true')
  if (stored.location !== null) reply.header('Location', stored.location)
  if (stored.etag !== null) reply.header('ETag', stored.etag)
  // The bytes the first answer sent, made by the contract's schema then.
  return sendSerialized(reply, Buffer.from(stored.body ?? '', 'utf8') as Serialized<T>)
}
