/**
 * The one way to write. A unit of work is one transaction, asked for by the handler that decides the
 * write; repositories take its transaction as their `db` and never open one of their own, so that what
 * a write causes (links, counts, inline records, images) commits with it or not at all.
 *
 * Three things belong to every write and live here, once:
 * - how a write transaction begins and when it is tried again, which is the engine's business: the
 *   dialect's driver begins it (SQLite: `BEGIN IMMEDIATE`, sqlite-dialect.ts), and a unit of work that
 *   lost to another connection (`isWriteConflict` in dialect.ts) is run again, whole, a few times;
 * - what the write changed: repositories report each record they create, update or delete
 *   (`recordChange`), and the unit of work appends it to the change log in the same transaction, just
 *   before the commit (change-log.ts), then hands the list on when it ends;
 * - who must hear of it: the listeners given by `onWritten` (the read cache) learn of every unit of work
 *   once it has ended, committed or rolled back.
 */
import type { Kysely, Transaction } from 'kysely'
import { appendChanges, type Change } from './change-log.js'
import { isWriteConflict } from './dialect.js'
import type { Database } from './schema.js'

export type { Change, ChangedResource } from './change-log.js'

/** What repositories take first: the database, or the transaction of a unit of work. */
export type Db = Kysely<Database> | Transaction<Database>

/** The transaction of a unit of work: what every repository function that writes takes first. */
export type Tx = Transaction<Database>

type Listener = (changes: readonly Change[], committed: boolean) => void

const pending = new WeakMap<Tx, Change[]>()
const listeners = new WeakMap<Kysely<Database>, Listener[]>()

/** How many times a unit of work runs at most when it keeps losing to another connection. */
const ATTEMPTS = 3

/**
 * Runs `work` in one write transaction on `db`: committed when it resolves, rolled back when it throws.
 * `work` may run again after a write conflict, so it does nothing but read and write through `trx`.
 */
export async function withTransaction<T>(db: Kysely<Database>, work: (trx: Tx) => Promise<T>): Promise<T> {
  let changes: Change[] = []
  let committed = false
  try {
    for (let attempt = 1; ; attempt++) {
      changes = []
      try {
        const result = await db.transaction().execute(async (trx) => {
          pending.set(trx, changes)
          const result = await work(trx)
          await appendChanges(trx, db, changes)
          return result
        })
        committed = true
        return result
      } catch (error) {
        if (attempt >= ATTEMPTS || !isWriteConflict(error)) throw error
      }
    }
  } finally {
    for (const listener of listeners.get(db) ?? []) listener(changes, committed)
  }
}

/** Notes that the unit of work of `trx` changed a record. */
export function recordChange(trx: Tx, change: Change): void {
  const changes = pending.get(trx)
  if (changes === undefined) throw new Error('a write outside a unit of work (withTransaction)')
  changes.push(change)
}

/** Calls `listener` with the changes of every unit of work on `db` once it has ended. */
export function onWritten(db: Kysely<Database>, listener: Listener): void {
  listeners.set(db, [...(listeners.get(db) ?? []), listener])
}
