/**
 * A term's `count` is the number of published events linked to it, kept in `terms.event_count` and
 * moved by every event write that can change it (links, status, trash, delete), in its transaction:
 * recounting each term instead read all its events (2-5 ms per write at 100,000 events).
 */
import { sql } from 'kysely'
import { idListValue, inIdValue } from '../db/dialect.js'
import { prepared } from '../db/prepared.js'
import type { TermRow } from '../db/schema.js'
import { recordChange, type Db, type Tx } from '../db/unit-of-work.js'

/** Moves the counts of the terms a list of ids names (`idListValue`) by `step`, and their versions. */
const countsMoved = (step: 1 | -1) => prepared(1, (db, list: number[] | string) => db.updateTable('terms')
  .set((eb) => ({ event_count: eb('event_count', '+', step), version: eb('version', '+', 1) }))
  .where(inIdValue(db, sql.ref('id'), list)).returningAll())
const countedUp = countsMoved(1)
const countedDown = countsMoved(-1)

/**
 * Moves the counts as one event's share changes: `before` and `after` are the terms it counted for (its
 * linked terms while published, none otherwise). Returns the rows of the terms it moved, as the statement left
 * them (a create's answer shows them: event-records.ts `writtenEventRecord`).
 */
export async function moveTermCounts(trx: Tx, before: readonly number[], after: readonly number[]): Promise<TermRow[]> {
  const was = new Set(before)
  const is = new Set(after)
  const added = [...is].filter((id) => !was.has(id))
  const removed = [...was].filter((id) => !is.has(id))
  const rows: TermRow[] = []
  for (const [ids, step] of [[added, 1], [removed, -1]] as const) {
    if (ids.length === 0) continue
    // The version moves too: a term's ETag changes with every write that moves its count (CONTRACT §5).
    const list = idListValue(trx, ids)
    if (list === undefined) continue
    const { rows: moved } = await (step === 1 ? countedUp : countedDown)(trx, list)
    // Its state for the change log (a term has no status or author), known from the statement.
    for (const term of moved) recordChange(trx, { resource: term.taxonomy, id: term.id, action: 'update' }, { language: term.language, status: null, author: null })
    rows.push(...moved)
  }
  return rows
}

/** The terms linked to an event (whose counts its next write may change). */
export async function termIdsOfEvent(db: Db, eventId: number): Promise<number[]> {
  const rows = await db.selectFrom('event_terms').select('term_id').where('event_id', '=', eventId).execute()
  return rows.map((r) => r.term_id)
}
