/**
 * The changes of single occurrences (`event_overrides`, migration 0018) as the reads that show a whole series
 * need them: an iCalendar feed writes one VEVENT per changed occurrence of each series it holds (CONTRACT §14,
 * §17). Rows are written by the occurrence routes (another file); here they are only read, every series of a
 * feed in one statement per 500 events.
 */
import type { Db } from '../db/unit-of-work.js'
import type { EventOverridesTable } from '../db/schema.js'
import type { Selectable } from 'kysely'

export type OverrideRow = Selectable<EventOverridesTable>

/** Events per statement: one parameter each. */
const IDS_PER_READ = 500

/** The overrides of each of `eventIds` (only those that have some), each event's in order of occurrence id. */
export async function overridesOf(db: Db, eventIds: readonly number[]): Promise<Map<number, OverrideRow[]>> {
  const found = new Map<number, OverrideRow[]>()
  for (let i = 0; i < eventIds.length; i += IDS_PER_READ) {
    const ids = eventIds.slice(i, i + IDS_PER_READ)
    if (ids.length === 0) continue
    const rows = await db.selectFrom('event_overrides').selectAll().where('event_id', 'in', ids)
      .orderBy('event_id').orderBy('occurrence').execute()
    for (const row of rows) {
      const id = Number(row.event_id)
      const list = found.get(id)
      if (list === undefined) found.set(id, [{ ...row, event_id: id }])
      else list.push({ ...row, event_id: id })
    }
  }
  return found
}
