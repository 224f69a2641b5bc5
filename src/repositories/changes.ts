/**
 * Reading the change log (CONTRACT §12): where it stands, what changed between two positions (for the
 * read caches), the latest change of each record after a cursor (for `GET /changes`, in position
 * order, without reading what comes after the page), each record's state as of a cursor (to tell a
 * caller whether it could see the record then), and pruning by retention. Appending is the unit of
 * work's (db/change-log.ts).
 */
import { sql } from 'kysely'
import { inIdList } from '../db/dialect.js'
import { prepared } from '../db/prepared.js'
import type { ChangeAction, ChangeResource, ChangeRow } from '../db/schema.js'
import type { Db, Tx } from '../db/unit-of-work.js'
import type { ChangedRecord } from './read-cache.js'

/** The log's bounds (`logBounds`). */
const bounds = prepared(0, (db) => db.selectFrom('change_log')
  .select((eb) => [
    'pruned_through',
    eb.selectFrom('changes').select(sql<number>`coalesce(max(position), 0)`.as('h')).as('head'),
  ])
  .where('id', '=', 1))

/** The log's last position (0 when empty) and the highest position retention pruned. */
export async function logBounds(db: Db): Promise<{ head: number; prunedThrough: number }> {
  const row = (await bounds(db)).rows[0]
  return { head: Number(row?.head ?? 0), prunedThrough: Number(row?.pruned_through ?? 0) }
}

/** More changes than this between two looks of a read cache: it drops everything instead. */
const MAX_PICKED = 5000

/** The records changed after a position up to another, in order, one more than may be picked at most. */
const changedRecords = prepared(2, (db, from: number, to: number) => db.selectFrom('changes').select(['resource', 'record_id'])
  .where('position', '>', from).where('position', '<=', to)
  .orderBy('position').limit(MAX_PICKED + 1))

/** The records changed after `from` up to `to` (see `ChangesBetween` in read-cache.ts). */
export async function changesBetween(db: Db, from: number, to: number): Promise<readonly ChangedRecord[] | undefined> {
  const { prunedThrough } = await logBounds(db)
  if (from < prunedThrough) return undefined
  const { rows } = await changedRecords(db, from, to)
  return rows.length > MAX_PICKED ? undefined : rows
}

/** An entry of the log, as read. */
export type LogEntry = ChangeRow

export interface LatestQuery {
  /** Entries after this position … */
  since: number
  /** … up to this one. */
  head: number
  resources: readonly ChangeResource[]
  language?: string
  limit: number
}

/**
 * The latest entry of each record changed after `since` (up to `head`), in position order, at most
 * `limit`: entries are read in order and one is kept when no later entry (up to `head`) names its
 * record, an index probe each (`changes_record`), so a page reads about as many entries as it skips.
 */
export async function latestChanges(db: Db, q: LatestQuery): Promise<LogEntry[]> {
  let query = db.selectFrom('changes as c').selectAll('c')
    .where('c.position', '>', q.since).where('c.position', '<=', q.head)
    .where('c.resource', 'in', [...q.resources])
    .where(({ not, exists, selectFrom }) => not(exists(selectFrom('changes as later').select('later.position')
      .whereRef('later.resource', '=', 'c.resource').whereRef('later.record_id', '=', 'c.record_id')
      .whereRef('later.position', '>', 'c.position').where('later.position', '<=', q.head))))
  if (q.language !== undefined) query = query.where('c.language', '=', q.language)
  const rows = await query.orderBy('c.position').limit(q.limit).execute()
  return rows.map((r) => ({ ...r, position: Number(r.position), record_id: Number(r.record_id) }))
}

/** What the log knows of a record as of a cursor. */
export type PriorState =
  | { known: true; existed: false }
  | { known: true; existed: true; action: ChangeAction; status: string | null; author: number | null }
  | { known: false }

/**
 * The state of each of `records` (of one resource) as of position `since`: its latest entry up to
 * there; none, but created after it: it did not exist; neither: the log no longer knows (retention).
 */
export async function priorStates(db: Db, resource: ChangeResource, ids: readonly number[], since: number): Promise<Map<number, PriorState>> {
  const states = new Map<number, PriorState>()
  if (ids.length === 0) return states
  const [before, created] = await Promise.all([
    db.selectFrom('changes as p').select(['p.record_id', 'p.action', 'p.status', 'p.author'])
      .where('p.resource', '=', resource).where(inIdList(db, sql.ref('p.record_id'), ids)).where('p.position', '<=', since)
      .where(({ not, exists, selectFrom }) => not(exists(selectFrom('changes as q').select('q.position')
        .whereRef('q.resource', '=', 'p.resource').whereRef('q.record_id', '=', 'p.record_id')
        .whereRef('q.position', '>', 'p.position').where('q.position', '<=', since))))
      .execute(),
    db.selectFrom('changes').select('record_id')
      .where('resource', '=', resource).where(inIdList(db, sql.ref('record_id'), ids))
      .where('position', '>', since).where('action', '=', 'created')
      .execute(),
  ])
  for (const row of before) {
    states.set(Number(row.record_id), { known: true, existed: true, action: row.action, status: row.status, author: row.author })
  }
  const createdAfter = new Set(created.map((r) => Number(r.record_id)))
  for (const id of ids) {
    if (!states.has(id)) states.set(id, createdAfter.has(id) ? { known: true, existed: false } : { known: false })
  }
  return states
}

/** Entries pruned per statement: a prune never holds the write lock for long. */
const PRUNE_BATCH = 2000

/**
 * Drops entries older than `cutoffUtc`, oldest first, at most a batch (the caller runs one unit of work
 * per batch, so that requests go on in between); returns how many it dropped (0: nothing left to
 * prune). Only whole prefixes are pruned, so that `pruned_through` says exactly which cursors expired.
 * A pass whose prefix is all pruned already returns 0 too.
 */
export async function pruneBatch(trx: Tx, cutoffUtc: string): Promise<number> {
  const last = await trx.selectFrom('changes').select('position')
    .where('changed_utc', '<', cutoffUtc).orderBy('position').limit(1).offset(PRUNE_BATCH - 1).executeTakeFirst()
  let through = last !== undefined ? Number(last.position) : Number((await trx.selectFrom('changes')
    .select(sql<number>`max(position)`.as('p')).where('changed_utc', '<', cutoffUtc).executeTakeFirst())?.p ?? 0)
  // The newest entry always stays: the log's last position (every node's view of where the data stands,
  // and the cursor of an up-to-date client) never goes back.
  const newest = Number((await trx.selectFrom('changes').select(sql<number>`coalesce(max(position), 0)`.as('p')).executeTakeFirst())?.p ?? 0)
  through = Math.min(through, newest - 1)
  if (through <= 0) return 0
  const { numDeletedRows } = await trx.deleteFrom('changes').where('position', '<=', through).executeTakeFirst()
  await trx.updateTable('change_log')
    .set({ pruned_through: sql<number>`case when pruned_through < ${through} then ${through} else pruned_through end` })
    .where('id', '=', 1).execute()
  return Number(numDeletedRows)
}
