/**
 * Idempotency keys (CONTRACT §18, migration 0016): the claims and remembered answers of creating POSTs
 * sent with `Idempotency-Key`. A claim is taken by insert or by compare-and-swap on the token of the
 * row it replaces (an expired key, a claim whose lease ran out), so that of two requests only one holds
 * a key; the answer is stored by compare-and-swap on the holder's token, in the unit of work of the
 * create, so that a create commits only while its request still holds the key. What a row means (in
 * use, replayable, expired) is the handler's to decide (handlers/idempotency.ts).
 */
import type { Db, Tx } from '../db/unit-of-work.js'
import type { IdempotencyKeyRow } from '../db/schema.js'

export type StoredKey = Omit<IdempotencyKeyRow, 'user_id' | 'key'>

/** What a request holding a key stores: who, which key, for which request, until when. */
export interface KeyClaim {
  userId: number
  key: string
  fingerprint: string
  token: string
  leaseUntil: string
  createdUtc: string
}

/** The answer a create gave, remembered for its retries. */
export interface RememberedAnswer {
  status: number
  location: string
  etag: string | null
  body: string
}

/** The row of `key` of user `userId`, or undefined. */
export async function findKey(db: Db, userId: number, key: string): Promise<StoredKey | undefined> {
  return db.selectFrom('idempotency_keys')
    .select(['fingerprint', 'token', 'lease_until', 'created_utc', 'status', 'location', 'etag', 'body'])
    .where('user_id', '=', userId).where('key', '=', key)
    .executeTakeFirst()
}

/**
 * Takes the key for `claim.token`: a new row, or, with `replacing`, the row still held by that token made
 * anew (its answer forgotten). False when another request got there first.
 */
export async function claimKey(trx: Tx, claim: KeyClaim, replacing?: string): Promise<boolean> {
  const values = {
    fingerprint: claim.fingerprint, token: claim.token, lease_until: claim.leaseUntil, created_utc: claim.createdUtc,
    status: null, location: null, etag: null, body: null,
  }
  if (replacing === undefined) {
    const result = await trx.insertInto('idempotency_keys').values({ user_id: claim.userId, key: claim.key, ...values })
      .onConflict((c) => c.columns(['user_id', 'key']).doNothing())
      .executeTakeFirst()
    return Number(result.numInsertedOrUpdatedRows ?? 0) === 1
  }
  const result = await trx.updateTable('idempotency_keys').set(values)
    .where('user_id', '=', claim.userId).where('key', '=', claim.key).where('token', '=', replacing)
    .executeTakeFirst()
  return Number(result.numUpdatedRows) === 1
}

/** Stores the answer of the request holding the key by `token`; false when it no longer holds it. */
export async function rememberAnswer(trx: Tx, userId: number, key: string, token: string, answer: RememberedAnswer): Promise<boolean> {
  const result = await trx.updateTable('idempotency_keys')
    .set({ status: answer.status, location: answer.location, etag: answer.etag, body: answer.body })
    .where('user_id', '=', userId).where('key', '=', key).where('token', '=', token).where('body', 'is', null)
    .executeTakeFirst()
  return Number(result.numUpdatedRows) === 1
}

/** Gives the key back: the claim of `token`, when it still holds it and has no answer. */
export async function releaseKey(trx: Tx, userId: number, key: string, token: string): Promise<void> {
  await trx.deleteFrom('idempotency_keys')
    .where('user_id', '=', userId).where('key', '=', key).where('token', '=', token).where('body', 'is', null)
    .execute()
}

/**
 * Deletes the oldest keys first used before `cutoff` (ISO UTC), about `batch` of them (those used at the
 * same instant as the last go together); returns how many went.
 */
export async function pruneKeysBatch(trx: Tx, cutoff: string, batch = 1000): Promise<number> {
  const last = await trx.selectFrom('idempotency_keys').select('created_utc')
    .where('created_utc', '<', cutoff).orderBy('created_utc').limit(1).offset(batch - 1).executeTakeFirst()
  let query = trx.deleteFrom('idempotency_keys').where('created_utc', '<', cutoff)
  if (last !== undefined) query = query.where('created_utc', '<=', last.created_utc)
  const result = await query.executeTakeFirst()
  return Number(result.numDeletedRows)
}
