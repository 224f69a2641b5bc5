/**
 * Updates and deletes of one record: read it (404, 410, rights, `If-Match`), then write it in a unit of
 * work whose statements compare its version with the one read (`update … where id = ? and version = ?`).
 *
 * The read comes before the write's transaction, so that the write lock (SQLite's one writer, PostgreSQL's
 * advisory lock) is not held while reading. A concurrent write of the same record can then come between
 * (two nodes, a PostgreSQL pool running requests side by side, or on PostgreSQL a PATCH or delete of an event run
 * beside other writes, issue 49): the compare finds another version. With
 * an `If-Match` naming a tag, that is the precondition failing (412). Without one (or with `*`), the caller
 * asked to change the record as it is, so the attempt is made again, reading inside the write's unit of
 * work, where no other write can come between (CONTRACT §5 gives 412 for a stale `If-Match` only).
 */
import type { Kysely } from 'kysely'
import type { Database } from '../db/schema.js'
import { withTransaction, type Db, type Tx, type UnitOptions } from '../db/unit-of-work.js'
import { preconditionFailed } from '../http/errors.js'
import { namesTags } from '../http/etag.js'
import type { FastifyRequest } from 'fastify'

/** Thrown by `lost` inside the write: rolls back what the unit of work wrote before its compare failed. */
class LostRace extends Error {}

/** The compare of a write found another version: call inside the unit of work, instead of going on. */
export function lost(): never {
  throw new LostRace('the record changed since it was read')
}

/**
 * Runs `attempt` (read with `reader`, check, then `write` its unit of work, calling `lost()` when its compare
 * fails) and returns its result; once more reading inside the unit of work when the first lost the race and
 * the request's `If-Match` names no tag. `options`: how the first attempt's unit of work runs (PostgreSQL,
 * `concurrent`: beside other writes, its compare made on the record's row locked; unit-of-work.ts); the second,
 * which reads inside, always runs alone.
 */
export async function writeRead<T>(
  db: Kysely<Database>,
  req: FastifyRequest,
  attempt: (reader: Db, write: <W>(work: (trx: Tx) => Promise<W>) => Promise<W>) => Promise<T>,
  options: UnitOptions = {},
): Promise<T> {
  try {
    return await attempt(db, (work) => withTransaction(db, work, options))
  } catch (error) {
    if (!(error instanceof LostRace)) throw error
    if (namesTags(req)) throw preconditionFailed()
  }
  try {
    return await withTransaction(db, (trx) => attempt(trx, (work) => work(trx)))
  } catch (error) {
    // Read inside the unit of work, no other write came between: not reached while the write lock holds.
    if (error instanceof LostRace) throw preconditionFailed()
    throw error
  }
}
