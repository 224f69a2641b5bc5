/**
 * Users and their API keys. A user is created together with its first key by the api-key command.
 */
import type { Kysely } from 'kysely'
import { hashKey, isRole, type Role } from '../lib/api-keys.js'
import { keyEpochProbeOf } from '../db/dialect.js'
import { prepared } from '../db/prepared.js'
import type { Database } from '../db/schema.js'
import { recordChange, type Db, type Tx } from '../db/unit-of-work.js'

export interface User {
  id: number
  name: string
  role: Role
}

export interface KeyListing {
  user_id: number
  name: string
  role: Role
  created_at: string
  revoked_at: string | null
}

/** The active user holding the key whose hash is given (every authenticated request asks). */
const userOfKeyHash = prepared(1, (db, keyHash: string) => db.selectFrom('api_keys')
  .innerJoin('users', 'users.id', 'api_keys.user_id')
  .select(['users.id', 'users.name', 'users.role'])
  .where('api_keys.key_hash', '=', keyHash)
  .where('api_keys.revoked_at', 'is', null))

/** The active user holding `key`, or undefined for an unknown or revoked key. */
export async function findUserByKey(db: Kysely<Database>, key: string): Promise<User | undefined> {
  const row = (await userOfKeyHash(db, hashKey(key))).rows[0]
  if (row === undefined || !isRole(row.role)) return undefined
  return { id: row.id, name: row.name, role: row.role }
}

/** Keys a process keeps verified at most (a bound on its memory, whatever keys are sent). */
const KEYS_KEPT = 1000

/**
 * The active user holding a key, as `findUserByKey` finds it, with the keys found kept in memory (by their hash)
 * beside the key epoch (migration 0026) read before they were looked up: a key is taken from memory only while the
 * epoch has not moved, that is while no process has written a key or a user since, so that a key revoked or a role
 * changed anywhere is refused from the next request on. Answered at once (no promise) when kept. Without a probe of
 * the epoch (PostgreSQL: a look would cost the round trip the lookup costs), or when it cannot be told at once, every
 * key is looked up. Unknown and revoked keys are not kept (the failed-authentication throttle counts them).
 */
export function keyCallers(db: Kysely<Database>): (key: string) => User | undefined | Promise<User | undefined> {
  const probe = keyEpochProbeOf(db)
  if (probe === undefined) return (key) => findUserByKey(db, key)
  const kept = new Map<string, User>()
  let keptAt: number | undefined
  return (key) => {
    const epoch = probe()
    if (epoch !== keptAt) {
      kept.clear()
      keptAt = epoch
    }
    const hash = hashKey(key)
    const user = epoch === undefined ? undefined : kept.get(hash)
    if (user !== undefined) return user
    return userOfKeyHash(db, hash).then(({ rows }) => {
      const row = rows[0]
      if (row === undefined || !isRole(row.role)) return undefined
      const found: User = { id: row.id, name: row.name, role: row.role }
      // Kept only when nothing moved the epoch since it was read before the lookup (the lookup saw at least that).
      if (epoch !== undefined && keptAt === epoch) {
        if (kept.size >= KEYS_KEPT) kept.clear()
        kept.set(hash, found)
      }
      return found
    })
  }
}

/** Whether a user with this id exists (an `author` must name one). */
export async function userExists(db: Db, id: number): Promise<boolean> {
  if (!Number.isSafeInteger(id)) return false
  const row = await db.selectFrom('users').select('id').where('id', '=', id).executeTakeFirst()
  return row !== undefined
}

export class DuplicateNameError extends Error {}

/**
 * Creates a user with `role` and its key (stored hashed), in a unit of work. The name defaults to
 * `<role>-<id>`; a name already taken is a `DuplicateNameError`.
 */
export async function createUserWithKey(trx: Tx, role: Role, key: string, now: string, name?: string): Promise<User> {
  if (name !== undefined) {
    const taken = await trx.selectFrom('users').select('id').where('name', '=', name).executeTakeFirst()
    if (taken !== undefined) throw new DuplicateNameError(`a key named "${name}" already exists`)
  }
  const placeholder = name ?? `pending-${hashKey(key).slice(0, 16)}`
  const { id } = await trx.insertInto('users').values({ name: placeholder, role, created_at: now })
    .returning('id').executeTakeFirstOrThrow()
  // `<role>-<id>`, unless a user was given that name by hand (`--name editor-10`): then the first free
  // `<role>-<id>-<n>`. Ids of rolled-back inserts come back, so the plain name alone could fail for ever.
  let finalName = name ?? `${role}-${id}`
  for (let n = 2; name === undefined && (await trx.selectFrom('users').select('id').where('name', '=', finalName).executeTakeFirst()) !== undefined; n++) {
    finalName = `${role}-${id}-${n}`
  }
  if (name === undefined) await trx.updateTable('users').set({ name: finalName }).where('id', '=', id).execute()
  await trx.insertInto('api_keys').values({ user_id: id, key_hash: hashKey(key), created_at: now, revoked_at: null }).execute()
  recordChange(trx, { resource: 'user', id, action: 'create' })
  return { id, name: finalName, role }
}

export async function listKeys(db: Kysely<Database>): Promise<KeyListing[]> {
  const rows = await db.selectFrom('api_keys')
    .innerJoin('users', 'users.id', 'api_keys.user_id')
    .select(['users.id as user_id', 'users.name', 'users.role', 'api_keys.created_at', 'api_keys.revoked_at'])
    .orderBy('api_keys.id')
    .execute()
  return rows.flatMap((r) => (isRole(r.role) ? [{ ...r, role: r.role }] : []))
}

/** Revokes every active key of the user named `name`, in a unit of work; returns how many were revoked. */
export async function revokeKeys(trx: Tx, name: string, now: string): Promise<number> {
  const result = await trx.updateTable('api_keys')
    .set({ revoked_at: now })
    .where('revoked_at', 'is', null)
    .where('user_id', 'in', trx.selectFrom('users').select('id').where('name', '=', name))
    .executeTakeFirst()
  return Number(result.numUpdatedRows)
}
