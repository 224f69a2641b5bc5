/**
 * The one way to write. A unit of work is one transaction (on SQLite a savepoint of a transaction that
 * units of work queued together share, committed once for all of them: `shared` below), asked for by the
 * handler that decides the write; repositories take its transaction as their `db` and never open one of
 * their own, so that what a write causes (links, counts, inline records, images) commits with it or not at all.
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
 *   the data epoch) first and last inside its transaction, where no other writer can move it (a concurrent
 *   unit on PostgreSQL, `UnitOptions`: both under the log lock, once its work is done), and once
 *   committed keeps both with its changes in the journal of this process (`writtenBetween`). Between two
 *   versions this process read, the journal then tells whether only its own units of work wrote, and
 *   what they changed: an event document assembled at one version may still be stored at a later one
 *   when none of those changes touches it (repositories/event-documents.ts).
 */
import { CompiledQuery, type Kysely, type Transaction } from 'kysely'
import { appendChanges, appendEntries, appendQueries, entriesOf, knownState, type Change, type ChangeState } from './change-log.js'
import {
  isPostgres, isUniqueViolation, isWaitRunOut, isWriteConflict, journalInMemory, logLockThenVersion, logTailThenCommit, mergeSearchWrites, searchWritesDropped,
  searchWritesMark, stageSearchWrites, versionInWrite, versionThenCommit, type DataVersion,
} from './dialect.js'
import { CONCURRENT_ISOLATION, UNIT_OF_WORK_ISOLATION } from './postgres-dialect.js'
import { executeCompiled, runStatementsDirectly } from './prepared.js'
import type { Database } from './schema.js'

export type { Change, ChangedResource, ChangeState } from './change-log.js'

/** What repositories take first: the database, or the transaction of a unit of work. */
export type Db = Kysely<Database> | Transaction<Database>

/** The transaction of a unit of work: what every repository function that writes takes first. */
export type Tx = Transaction<Database>

type Listener = (changes: readonly Change[], committed: boolean) => void

const pending = new WeakMap<Tx, Change[]>()
/** The data version the unit of work running on a transaction found (its first look), when it looked first. */
const found = new WeakMap<Tx, DataVersion | undefined>()
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

/** How a unit of work may run. */
export interface UnitOptions {
  /**
   * SQLite: the unit changes few pages, whatever the data holds: a create, whose rows its body (at most BODY_LIMIT) and
   * MAX_OCCURRENCES bound, a key's claim. A shared transaction of such units only keeps its savepoints' journal in
   * memory (`journalInMemory`); other units never join it. A unit whose rows the data decides (an update whose
   * triggers reach every event of a term, a deletion, a batch of the retention or the horizon) is not small.
   */
  small?: boolean
  /**
   * PostgreSQL: beside other such units (issue 49): the schema's writes lock shared rather than exclusive, and the log
   * lock only for the change log's append and the commit (postgres-dialect.ts). Only for work whose reads need not see
   * what concurrent units write before they commit: what could clash is refused by a unique index (23505) or waits
   * for a row lock (a deadlock, 40P01), and the unit is then run again alone (exclusively), where it sees everything
   * committed before it. Today: creates of events, and PATCHes and deletes of events (their compare-and-swap is the
   * row's update, which waits for a write of the row in flight: handlers/compare-and-swap.ts). (SQLite runs every
   * unit alone anyway.)
   */
  concurrent?: boolean
}

/**
 * Runs `work` in one write transaction on `db`: committed when it resolves, rolled back when it throws.
 * `work` may run again after a write conflict, so it does nothing but read and write through `trx`.
 *
 * SQLite: units of work that queue for the write lock together share one transaction and its commit
 * (`shared`), each in a savepoint of its own; PostgreSQL: a transaction each.
 */
export async function withTransaction<T>(db: Kysely<Database>, work: (trx: Tx) => Promise<T>, options: UnitOptions = {}): Promise<T> {
  return isPostgres(db) ? alone(db, work, options) : shared(db, work, options.small === true)
}

/**
 * `work` in a transaction of its own: every unit of work on PostgreSQL; on SQLite, outside the shared commit (the
 * same unit of work either way, which test/unit-of-work checks on the engine the tests run).
 */
export const withOwnTransaction = <T>(db: Kysely<Database>, work: (trx: Tx) => Promise<T>, options: UnitOptions = {}): Promise<T> => alone(db, work, options)

async function alone<T>(db: Kysely<Database>, work: (trx: Tx) => Promise<T>, options: UnitOptions): Promise<T> {
  let changes: Change[] = []
  let committed = false
  const postgres = isPostgres(db)
  // Run again after a clash, a concurrent unit runs alone (exclusively): it then sees what it clashed with.
  let concurrent = postgres && options.concurrent === true
  try {
    for (let attempt = 1; ; attempt++) {
      changes = []
      let before: DataVersion | undefined
      let after: DataVersion | undefined
      try {
        // PostgreSQL: the driver reads the first look with the locks (a concurrent unit: with the log lock, once its
        // work is done), and the last goes with the commit (postgres-dialect.ts).
        const isolation = concurrent ? CONCURRENT_ISOLATION : UNIT_OF_WORK_ISOLATION
        const result = await (postgres ? db.transaction().setIsolationLevel(isolation) : db.transaction()).execute(async (trx) => {
          runStatementsDirectly(trx, db)
          pending.set(trx, changes)
          if (!concurrent) {
            before = await versionInWrite(trx)
            found.set(trx, before)
          }
          const result = await work(trx)
          if (concurrent) {
            // The states the log needs read before the log lock; under it, the look, the append, the epoch's move, the
            // last look and the commit, in one round trip (the lock held for their run, not for this process's turns).
            const rows = await entriesOf(trx, db, changes)
            const tail = await logTailThenCommit(trx, appendQueries(trx, db, rows))
            if (tail !== undefined) {
              [before, after] = tail
              return result
            }
            before = await logLockThenVersion(trx)
            await appendEntries(trx, db, rows)
          } else {
            await appendChanges(trx, db, changes)
          }
          // SQLite's search merging before the last look (on PostgreSQL the look and the commit are one round trip).
          await mergeSearchWrites(trx)
          after = await versionThenCommit(trx)
          return result
        })
        committed = true
        if (before !== undefined && after !== undefined) keep(db, before, after, changes)
        return result
      } catch (error) {
        // A lock waited for past the busy timeout is not waited for again: no request waits longer (CONTRACT §18).
        if (attempt >= ATTEMPTS || !isRetried(error, concurrent)) throw error
        concurrent = false
      }
    }
  } finally {
    tell(db, changes, committed)
  }
}

/**
 * Whether a unit of work that failed with `error` is run again (a conflict lost, not a wait run out); a concurrent
 * one also after a unique index refused what it wrote (a slug or a translation another concurrent unit took first).
 */
const isRetried = (error: unknown, concurrent = false): boolean =>
  (isWriteConflict(error) && !isWaitRunOut(error)) || (concurrent && isUniqueViolation(error))

function tell(db: Kysely<Database>, changes: readonly Change[], committed: boolean): void {
  for (const listener of listeners.get(db) ?? []) listener(changes, committed)
}

/**
 * The shared commit (SQLite, issue 49). A commit costs about 10 µs a page it writes, and consecutive writes
 * dirty many of the same pages (the search index's newest segment, the change log's last leaf, the
 * rightmost leaves of the id-ordered indexes): ten creates in one transaction write 16 pages where ten
 * transactions write 97 (docs/performance.md). So the units of work that wait for the write lock while
 * one runs (SQLite has one connection here: they wait anyway) run after it in the same transaction, up
 * to SHARED_UNITS, each in a savepoint of its own:
 * - a unit that throws is rolled back to its savepoint alone (a conflict it lost is run again there, as
 *   `alone` would); the others go on;
 * - every unit is answered, and its listeners told, only once the shared commit has succeeded; a commit
 *   that fails (or an error that ended the transaction itself: SQLite rolls back by itself on a full
 *   disk, an I/O error) fails every unit in it, each told it did not commit; a conflict the whole
 *   transaction lost runs them all again, up to ATTEMPTS times;
 * - each unit reads the data version last inside its savepoint, and finds the one the unit before it left (the
 *   transaction's first reads it first too), so that the journal keeps it as if it had committed alone.
 * A unit sees what the units before it in the transaction wrote, as it would have had they committed
 * first; none of it is seen outside (reads wait for the connection) before the commit.
 */
interface Queued {
  work: (trx: Tx) => Promise<unknown>
  /** `UnitOptions.small`: a transaction holds only small units or none. */
  small: boolean
  resolve: (value: unknown) => void
  reject: (error: unknown) => void
  changes: Change[]
  outcome: { ok: true; value: unknown; before?: DataVersion; after?: DataVersion } | { ok: false; error: unknown } | undefined
}

/** Units of work one shared transaction runs at most: reads wait for the connection meanwhile. */
export const SHARED_UNITS = 16

interface Queue {
  waiting: Queued[]
  running: boolean
}

const queues = new WeakMap<Kysely<Database>, Queue>()

function shared<T>(db: Kysely<Database>, work: (trx: Tx) => Promise<T>, small: boolean): Promise<T> {
  let queue = queues.get(db)
  if (queue === undefined) queues.set(db, queue = { waiting: [], running: false })
  const promise = new Promise<T>((resolve, reject) => {
    queue.waiting.push({ work, small, resolve: resolve as (value: unknown) => void, reject, changes: [], outcome: undefined })
  })
  if (!queue.running) {
    queue.running = true
    void drain(db, queue)
  }
  return promise
}

/** Runs the queue's units, a shared transaction at a time, until none waits. */
async function drain(db: Kysely<Database>, queue: Queue): Promise<void> {
  try {
    while (queue.waiting.length > 0) await runShared(db, queue, taken(queue, SHARED_UNITS, (queue.waiting[0] as Queued).small))
  } finally {
    queue.running = false
  }
}

/** The units at the head of the queue, at most `max`, as long as they are `small` or not as asked (first come, first run). */
function taken(queue: Queue, max: number, small: boolean): Queued[] {
  let n = 0
  while (n < max && n < queue.waiting.length && (queue.waiting[n] as Queued).small === small) n++
  return queue.waiting.splice(0, n)
}

/** An error after which the transaction itself is gone (SQLite rolled it back): the shared transaction fails with it. */
class TransactionLost extends Error {
  readonly error: unknown
  constructor(error: unknown) {
    super('the shared transaction ended with a unit of work')
    this.error = error
  }
}

/** The first unit of work of a transaction failed (run without a savepoint): the transaction is rolled back, and the units after it run in another. */
class FirstFailed extends Error {}

async function runShared(db: Kysely<Database>, queue: Queue, units: Queued[]): Promise<void> {
  let failure: unknown
  // Units before `first` failed alone, each the first of a transaction rolled back for it.
  let first = 0
  const small = (units[0] as Queued).small
  for (let attempt = 1; first < units.length;) {
    failure = undefined
    // Small units' savepoints journal in memory: SQLite takes the setting as the transaction begins, and its reads
    // meanwhile (temporary b-trees) go on with the default.
    if (small) journalInMemory(db, true)
    try {
      await db.transaction().execute(async (trx) => {
        if (small) journalInMemory(db, false)
        runStatementsDirectly(trx, db)
        // The search index's writes run after the last unit, together (dialect.ts `stageSearchWrites`).
        stageSearchWrites(trx)
        const at: Where = {}
        for (let i = first; i < units.length; i++) {
          // The first runs without a savepoint (a savepoint's journal costs a lone write 10-15 %): should it
          // fail, the transaction holds nothing else and is rolled back for it.
          await runUnit(db, trx, units[i] as Queued, i > first, at)
          if (i === units.length - 1 && units.length < SHARED_UNITS) {
            // A unit of work runs to its end without giving the event loop a turn (SQLite's statements are
            // synchronous): requests that came meanwhile are given one, and those that reach a unit of work join.
            if (queue.waiting.length === 0) await new Promise((resolve) => setImmediate(resolve))
            units.push(...taken(queue, SHARED_UNITS - units.length, small))
          }
        }
        // The search index's writes the units asked for, and its merging, once for the transaction (dialect.ts):
        // should they fail, the commit would have failed with them (a full disk, an I/O error), and every unit fails.
        await mergeSearchWrites(trx)
      })
      break
    } catch (error) {
      if (error instanceof FirstFailed) {
        first += 1
        continue
      }
      failure = error instanceof TransactionLost ? error.error : error
      if (attempt >= ATTEMPTS || !isRetried(failure)) break
      attempt += 1
    }
  }
  // The default again, had the transaction not begun or the switch inside it failed.
  if (small) journalInMemory(db, false)
  units.forEach((unit, i) => {
    const outcome = unit.outcome
    const lost = i < first ? undefined : failure
    const committed = lost === undefined && outcome?.ok === true
    try {
      if (committed && outcome.before !== undefined && outcome.after !== undefined) keep(db, outcome.before, outcome.after, unit.changes)
      tell(db, unit.changes, committed)
    } catch (error) {
      // A listener that throws fails the unit it was told of, as it failed `alone`'s caller.
      unit.reject(error)
      return
    }
    if (committed) unit.resolve(outcome.value)
    else unit.reject(lost ?? (outcome?.ok === false ? outcome.error : new Error('a unit of work did not run')))
  })
}

const SAVEPOINT = CompiledQuery.raw('savepoint unit_of_work')
const RELEASE = CompiledQuery.raw('release unit_of_work')
const ROLLBACK_TO = CompiledQuery.raw('rollback to unit_of_work')

/**
 * Where the data stands between the units of a shared transaction, once a unit has looked: nothing runs in the
 * transaction between two units, so the version one unit left (or, rolled back, found) is the one the next finds.
 */
interface Where {
  version?: DataVersion | undefined
}

/**
 * One unit of work of the shared transaction, in a savepoint of its own unless it is the transaction's first;
 * its outcome kept on it. The data version it finds is the one the unit before it left (`at`): one look a unit.
 */
async function runUnit(db: Kysely<Database>, trx: Tx, unit: Queued, savepoint: boolean, at: Where): Promise<void> {
  for (let attempt = 1; ; attempt++) {
    const changes: Change[] = []
    unit.changes = changes
    pending.set(trx, changes)
    if (savepoint) await executeCompiled(trx, SAVEPOINT)
    const searchMark = searchWritesMark(trx)
    const before = 'version' in at ? at.version : await versionInWrite(trx)
    found.set(trx, before)
    // Until this unit has ended: should it fail before its release (or its rollback), the next unit looks again.
    delete at.version
    try {
      const value = await unit.work(trx)
      await appendChanges(trx, db, changes)
      const after = await versionInWrite(trx)
      if (savepoint) await executeCompiled(trx, RELEASE)
      at.version = after
      unit.outcome = { ok: true, value, before, after }
      return
    } catch (error) {
      if (!savepoint) {
        // The transaction is rolled back: run again whole (a conflict lost), or this unit's failure alone.
        if (isRetried(error)) throw error
        unit.outcome = { ok: false, error }
        throw new FirstFailed()
      }
      try {
        await executeCompiled(trx, ROLLBACK_TO)
        await executeCompiled(trx, RELEASE)
      } catch {
        // No savepoint left: SQLite ended the transaction (see TransactionLost).
        throw new TransactionLost(error)
      }
      // Its writes of the search index, held for the commit, go with the rest.
      searchWritesDropped(trx, searchMark)
      // Rolled back to where it began.
      at.version = before
      if (attempt >= ATTEMPTS || !isRetried(error)) {
        unit.outcome = { ok: false, error }
        return
      }
    }
  }
}

/**
 * Notes that the unit of work of `trx` changed a record; `state`: its language, status and author as this write
 * left it, when the write knows them (the change log then looks nothing up for it, unless a later report without
 * a state names the record again).
 */
export function recordChange(trx: Tx, change: Change, state?: ChangeState): void {
  const changes = pending.get(trx)
  if (changes === undefined) throw new Error('a write outside a unit of work (withTransaction)')
  if (state !== undefined) knownState(change, state)
  changes.push(change)
}

/**
 * The keys (`<resource>:<id>`: `venue:3`, `category:7`) of the records the unit of work of `trx` changed so far,
 * when the data stood at `version` as it began (its first look found that version: nothing else wrote between a
 * read made at `version` and this unit); undefined when it found another, or has not looked yet (a concurrent unit
 * on PostgreSQL looks only once its work is done). A read made at `version` then still holds inside the unit for
 * every record not named here (a PATCH's event read back: handlers/events.ts).
 */
export function writtenSince(trx: Tx, version: DataVersion | undefined): ReadonlySet<string> | undefined {
  const first = found.get(trx)
  if (version === undefined || first === undefined || first.head !== version.head || first.epoch !== version.epoch) return undefined
  return new Set((pending.get(trx) ?? []).map((change) => `${change.resource}:${change.id}`))
}

/** Calls `listener` with the changes of every unit of work on `db` once it has ended. */
export function onWritten(db: Kysely<Database>, listener: Listener): void {
  listeners.set(db, [...(listeners.get(db) ?? []), listener])
}
