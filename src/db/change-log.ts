/**
 * Appending to the change log (CONTRACT §12), which the unit of work does for every write, in the
 * write's own transaction, just before it commits: what a write changed commits with it or not at all.
 * Repositories report each record they create, update or delete (`recordChange`); here the reports of
 * one unit of work become at most one entry per record (created and then updated is `created`; deleted
 * is `deleted`; created and deleted in one go leaves nothing), with the record's language, status and
 * author as the write left them, so that readers of the log can tell who could see the record without
 * reading it. Images and users are not resources of the API: they are not logged.
 *
 * Each entry then becomes the pending webhook deliveries its subscribers are owed (webhook-outbox.ts),
 * in the same transaction (on PostgreSQL in the same statement as the entries).
 *
 * The time of an entry is the clock of whoever writes (`useClock`, bound by `buildApp`), so that tests
 * and the retention that reads it agree on one clock.
 */
import { sql, type CompiledQuery, type Insertable, type Kysely } from 'kysely'
import { formatUtc } from '../lib/dates.js'
import type { ChangeAction, ChangeResource, ChangesTable, Database } from './schema.js'
import type { Tx } from './unit-of-work.js'
import { idListValue, inIdValue, isPostgres } from './dialect.js'
import { byShape, prepared } from './prepared.js'
import { appendWithDeliveries, appendWithDeliveriesQueries, enqueueDeliveries, type LoggedChange } from './webhook-outbox.js'

export type ChangedResource = 'event' | 'venue' | 'organizer' | 'category' | 'tag' | 'image' | 'user'

/** A record a write created, updated or deleted; a delete says the record's language (the row is gone). */
export type Change =
  | { resource: ChangedResource; id: number; action: 'create' | 'update' }
  | { resource: ChangedResource; id: number; action: 'delete'; language: string }

const RESOURCES: Partial<Record<ChangedResource, ChangeResource>> = {
  event: 'events', venue: 'venues', organizer: 'organizers', category: 'categories', tag: 'tags',
}

const clocks = new WeakMap<Kysely<Database>, () => Date>()

/** The clock whose time the entries of writes on `db` carry (default: the system's). */
export function useClock(db: Kysely<Database>, now: () => Date): void {
  clocks.set(db, now)
}

export function clockOf(db: Kysely<Database>): () => Date {
  return clocks.get(db) ?? (() => new Date())
}

/** A record's language, status and author (null for terms) as a write left it. */
export interface ChangeState {
  language: string
  status: string | null
  author: number | null
}

/** The states the writes that reported a change knew (`recordChange`'s third argument), by report. */
const knownStates = new WeakMap<Change, ChangeState>()

/** Notes the state a write left the record of `change` in (unit-of-work.ts `recordChange`). */
export function knownState(change: Change, state: ChangeState): void {
  knownStates.set(change, state)
}

interface Entry {
  resource: ChangeResource
  id: number
  action: ChangeAction
  language?: string
  /** The state the last report of the record gave; undefined when that report gave none (looked up). */
  state?: ChangeState
}

/** One entry per record, in the order the records were first reported. */
function collapse(changes: readonly Change[]): Entry[] {
  const entries = new Map<string, Entry>()
  for (const change of changes) {
    const resource = RESOURCES[change.resource]
    if (resource === undefined) continue
    const key = `${resource}:${change.id}`
    const known = entries.get(key)
    if (change.action === 'delete') {
      if (known?.action === 'created') entries.delete(key)
      else entries.set(key, { resource, id: change.id, action: 'deleted', language: change.language })
    } else if (known === undefined) {
      entries.set(key, { resource, id: change.id, action: change.action === 'create' ? 'created' : 'updated', state: knownStates.get(change) })
    } else if (known.action !== 'deleted') {
      // The last report decides: a write after the one that knew the state may have changed it.
      known.state = knownStates.get(change)
    }
  }
  return [...entries.values()]
}

/** Entries per INSERT: SQLite binds at most 32,766 parameters per statement. */
const CHUNK = 1000

/** Appends the changes of a unit of work to the log, in its transaction. */
export async function appendChanges(trx: Tx, db: Kysely<Database>, changes: readonly Change[]): Promise<void> {
  await appendEntries(trx, db, await entriesOf(trx, db, changes))
}

/** The log's rows for the changes of a unit of work (the records' states looked up where no report gave them), not yet appended. */
export type ChangeRows = ReadonlyArray<Insertable<ChangesTable>>

/**
 * The rows `appendEntries` will append for `changes`: what a unit of work that runs beside others (PostgreSQL) reads
 * before it takes the log lock, which it then holds only for the append (unit-of-work.ts).
 */
export async function entriesOf(trx: Tx, db: Kysely<Database>, changes: readonly Change[]): Promise<ChangeRows> {
  const entries = collapse(changes)
  if (entries.length === 0) return []
  const changedUtc = formatUtc(clockOf(db)())
  const states = await currentStates(trx, entries)
  return entries.flatMap((entry): Array<Insertable<ChangesTable>> => {
    if (entry.action === 'deleted') {
      return [{ resource: entry.resource, record_id: entry.id, language: entry.language ?? '', action: entry.action, changed_utc: changedUtc, status: null, author: null }]
    }
    const state = entry.state ?? states.get(`${entry.resource}:${entry.id}`)
    // Reported, then gone within the same unit of work (a cascade): its delete is reported too.
    if (state === undefined) return []
    return [{ resource: entry.resource, record_id: entry.id, language: state.language, action: entry.action, changed_utc: changedUtc, status: state.status, author: state.author }]
  })
}

/** Appends the rows `entriesOf` made to the log, with the webhook deliveries they are owed, in the unit of work's transaction. */
export async function appendEntries(trx: Tx, db: Kysely<Database>, rows: ChangeRows): Promise<void> {
  if (rows.length === 0) return
  // What the write changed becomes, in the same transaction, the deliveries its subscribers are owed
  // (on PostgreSQL in the same statement: one round trip for both).
  const dueUtc = clockOf(db)().toISOString()
  if (isPostgres(trx)) {
    await appendWithDeliveries(trx, rows, dueUtc)
    return
  }
  const logged: LoggedChange[] = []
  for (let i = 0; i < rows.length; i += CHUNK) {
    const chunk = rows.slice(i, i + CHUNK)
    const values = chunk.flatMap((r) => [r.resource, r.record_id, r.language, r.action, r.changed_utc, r.status ?? null, r.author ?? null])
    logged.push(...(await insertedChanges(String(chunk.length))(trx, ...values)).rows)
  }
  await enqueueDeliveries(trx, logged, dueUtc)
}

/**
 * PostgreSQL: the statements `appendEntries` would run for `rows`, compiled, not run: a unit of work that runs beside
 * others sends them with its log lock and its commit, in one round trip (dialect.ts `logTailThenCommit`).
 */
export function appendQueries(trx: Tx, db: Kysely<Database>, rows: ChangeRows): CompiledQuery[] {
  return rows.length === 0 ? [] : appendWithDeliveriesQueries(trx, rows, clockOf(db)().toISOString())
}

/** The log's INSERT for as many entries as its key says (7 values each), returning what deliveries need. */
const insertedChanges = byShape(64, (key) => prepared(7 * Number(key), (db, ...values: unknown[]) => db.insertInto('changes')
  .values(Array.from({ length: Number(key) }, (_, r) => {
    const [resource, recordId, language, action, changedUtc, status, author] = values.slice(7 * r, 7 * r + 7)
    return { resource, record_id: recordId, language, action, changed_utc: changedUtc, status, author } as Insertable<ChangesTable>
  }))
  .returning(['position', 'resource', 'record_id', 'language', 'action', 'changed_utc', 'status'])))

interface State {
  language: string
  status: string | null
  author: number | null
}

/** Language, status and author of the records entries name that still exist, by `resource:id`. */
async function currentStates(trx: Tx, entries: readonly Entry[]): Promise<Map<string, State>> {
  const states = new Map<string, State>()
  // Only the records whose state no report gave.
  const idsOf = (resource: ChangeResource) => entries.filter((e) => e.resource === resource && e.action !== 'deleted' && e.state === undefined).map((e) => e.id)
  for (const table of ['events', 'venues', 'organizers'] as const) {
    const ids = idsOf(table)
    for (let i = 0; i < ids.length; i += CHUNK) {
      const list = idListValue(trx, ids.slice(i, i + CHUNK))
      if (list === undefined) continue
      const { rows } = await statesOf[table](trx, list)
      for (const row of rows) states.set(`${table}:${row.id}`, { language: row.language, status: row.status, author: row.author })
    }
  }
  const terms = [...idsOf('categories'), ...idsOf('tags')]
  for (let i = 0; i < terms.length; i += CHUNK) {
    const list = idListValue(trx, terms.slice(i, i + CHUNK))
    if (list === undefined) continue
    const { rows } = await termStatesOf(trx, list)
    for (const row of rows) {
      states.set(`${row.taxonomy === 'category' ? 'categories' : 'tags'}:${row.id}`, { language: row.language, status: null, author: null })
    }
  }
  return states
}

/** Language, status and author of the events, venues or organizers a list of ids names (`idListValue`). */
const stateOf = (table: 'events' | 'venues' | 'organizers') => prepared(1, (db, list: number[] | string) =>
  db.selectFrom(table).select(['id', 'language', 'status', 'author']).where(inIdValue(db, sql.ref('id'), list)))
const statesOf = { events: stateOf('events'), venues: stateOf('venues'), organizers: stateOf('organizers') }
const termStatesOf = prepared(1, (db, list: number[] | string) =>
  db.selectFrom('terms').select(['id', 'taxonomy', 'language']).where(inIdValue(db, sql.ref('id'), list)))
