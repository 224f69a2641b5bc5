/**
 * The one way to write. A unit of work is one transaction, asked for by the handler that decides the
 * write; repositories take its transaction as their `db` and never open one of their own, so that what
 * a write causes (links, counts, inline records, images) commits with it or not at all.
 *
 * Three things belong to every write and live here, once:
 * - how a write transaction begins and when it is tried again, which is the engine's business: the
 *   dialect's driver begins it (SQLite: `BEGIN IMMEDIATE`, sqlite-dialect.ts), and a unit of work that
 *   lost to another connection (`isWriteConflict` in dialect.ts) is run again, whole, a few times, unless
 *   it lost by waiting out SQLite's busy timeout (`isWaitRunOut`): that wait is the longest a request takes;
 * - what the write changed: repositories report each record they create, update or delete
 *   (`recordChange`), and the unit of work appends it to the change log in the same transaction, just
 *   before the commit (change-log.ts), then hands the list on when it ends;
 * - who must hear of it: the listeners given by `onWritten` (the read cache) learn of every unit of work
 *   once it has ended, committed or rolled back;
 * - where it took the data from and to: each unit of work reads the data version (the log's head and
 *   the data epoch) first and last inside its transaction, where no other writer can move it, and once
 *   committed keeps both with its changes in the journal of this process (`writtenBetween`). Between two
 *   versions this process read, the journal then tells whether only its own units of work wrote, and
 *   what they changed: an event document assembled at one version may still be stored at a later one
 *   when none of those changes touches it (repositories/event-documents.ts).
 */
import type { Kysely, Transaction } from 'kysely'
import { appendChanges, type Change } from './change-log.js'
import { isWaitRunOut, isWriteConflict, versionInWrite, type DataVersion } from './dialect.js'
import type { Database } from './schema.js'

export type { Change, ChangedResource } from './change-log.js'

/** What repositories take first: the database, or the transaction of a unit of work. */
export type Db = Kysely<Database> | Transaction<Database>

/** The transaction of a unit of work: what every repository function that writes takes first. */
export type Tx = Transaction<Database>

type Listener = (changes: readonly Change[], committed: boolean) => void

const pending = new WeakMap<Tx, Change[]>()
const listeners = new WeakMap<Kysely<Database>, Listener[]>()

/** A committed unit of work of this process: the data version it found and left, and what it changed. */
interface Written {
  before: DataVersion
  after: DataVersion
  /** Null when it changed more than a journal keeps of one unit of work (JOURNAL_CHANGES_EACH). */
  changes: readonly Change[] | null
}

/** Units of work the journal keeps, the latest (about a minute of writes at the benchmark's rate)… */
const JOURNAL_KEPT = 4096
/** …and changes, all of them together at most (a bound on its memory, whatever the writes)… */
const JOURNAL_CHANGES_KEPT = 50_000
/** …and of one unit of work (more than anyone asks `writtenBetween` for). */
const JOURNAL_CHANGES_EACH = 1000

/** Per database: the units of work it keeps, by the version each found (`versionKey`), oldest first, and their changes counted. */
const journals = new WeakMap<Kysely<Database>, { written: Map<string, Written>; changes: number }>()

const versionKey = (v: DataVersion): string => `${v.head}:${v.epoch}`

function keep(db: Kysely<Database>, before: DataVersion, after: DataVersion, changes: readonly Change[]): void {
  // One that moved neither the log nor the epoch changed nothing a version names.
  if (versionKey(before) === versionKey(after)) return
  let journal = journals.get(db)
  if (journal === undefined) {
    journal = { written: new Map(), changes: 0 }
    journals.set(db, journal)
  }
  const kept = changes.length > JOURNAL_CHANGES_EACH ? null : changes
  journal.written.set(versionKey(before), { before, after, changes: kept })
  journal.changes += kept?.length ?? 0
  while (journal.written.size > JOURNAL_KEPT || journal.changes > JOURNAL_CHANGES_KEPT) {
    const [key, oldest] = journal.written.entries().next().value as [string, Written]
    journal.written.delete(key)
    journal.changes -= oldest.changes?.length ?? 0
  }
}

/**
 * What this process's units of work changed from version `from` to version `to`, when they alone moved
 * the data between them (each found the version the one before left, from `from` to `to`), at most `limit`
 * changes; undefined when another writer moved it (another process or node, raw SQL), when the journal no
 * longer reaches back to `from`, or past `limit`.
 */
export function writtenBetween(db: Kysely<Database>, from: DataVersion, to: DataVersion, limit: number): Change[] | undefined {
  const journal = journals.get(db)
  const changes: Change[] = []
  let at = from
  for (let steps = 0; versionKey(at) !== versionKey(to); steps++) {
    const written = steps < JOURNAL_KEPT ? journal?.written.get(versionKey(at)) : undefined
    if (written === undefined || written.changes === null) return undefined
    changes.push(...written.changes)
    if (changes.length > limit) return undefined
    at = written.after
  }
  return changes
}

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
      let before: DataVersion | undefined
      let after: DataVersion | undefined
      try {
        const result = await db.transaction().execute(async (trx) => {
          pending.set(trx, changes)
          before = await versionInWrite(trx)
          const result = await work(trx)
          await appendChanges(trx, db, changes)
          after = await versionInWrite(trx)
          return result
        })
        committed = true
        if (before !== undefined && after !== undefined) keep(db, before, after, changes)
        return result
      } catch (error) {
        // A lock waited for past the busy timeout is not waited for again: no request waits longer (CONTRACT §18).
        if (attempt >= ATTEMPTS || !isWriteConflict(error) || isWaitRunOut(error)) throw error
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
