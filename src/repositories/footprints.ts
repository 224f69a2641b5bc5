/**
 * What a list may ask of a changed event, read once when the read cache takes a change in (read-cache.ts
 * `takeIn`): the targets it is linked to (its categories and tags, venues and organizers, and its occurrences' own
 * venues and organizers: `event_override_links`), and the first and last start of its occurrences. A remembered list
 * that can be rechecked asks whether a changed event may matter to it (`Relevant`): one linked to none of its
 * driving targets, or with no occurrence starting in its date window, that it did not hold before, matches it
 * neither before nor now, and is not rechecked at all. Under the 90/10 mix (a PATCH of a random event every ten
 * requests) nearly every changed event is such for nearly every list.
 */
import { sql } from 'kysely'
import { inIdList } from '../db/dialect.js'
import type { Db } from '../db/unit-of-work.js'

/** A changed event as it stands: its link targets (`<link table>:<id>`), its occurrences' first and last start (UTC text). */
export interface Footprint {
  targets: ReadonlySet<string>
  first?: string
  last?: string
}

/** The footprint of an event with no rows left (deleted): linked to nothing, no occurrence. */
export const NO_FOOTPRINT: Footprint = { targets: new Set() }

/** The key of a link target in a footprint: `event_terms:12`, `event_venues:3`, `event_organizers:5`. */
export const targetKey = (table: string, id: number): string => `${table}:${id}`

/** The footprints of the events `ids` as they stand now (those with no row: none); one statement. */
export async function footprintsOf(db: Db, ids: readonly number[]): Promise<Map<number, Footprint>> {
  const found = new Map<number, { targets: Set<string>; first?: string; last?: string }>()
  if (ids.length === 0) return found
  const these = (column: string) => inIdList(db, sql.ref(column), ids)
  const { rows } = await sql<{ id: number | string; k: string; t: number | string | null; s: string | null }>`
    select event_id as id, 'event_terms' as k, term_id as t, cast(null as text) as s from event_terms where ${these('event_id')}
    union all select event_id, 'event_venues', venue_id, cast(null as text) from event_venues where ${these('event_id')}
    union all select event_id, 'event_organizers', organizer_id, cast(null as text) from event_organizers where ${these('event_id')}
    union all select event_id, case when kind = 'venue' then 'event_venues' else 'event_organizers' end, target_id, cast(null as text)
      from event_override_links where ${these('event_id')}
    union all select event_id, 'first', cast(null as bigint), min(start_utc) from event_occurrences where ${these('event_id')} group by event_id
    union all select event_id, 'last', cast(null as bigint), max(start_utc) from event_occurrences where ${these('event_id')} group by event_id`.execute(db)
  for (const row of rows) {
    const id = Number(row.id)
    let fp = found.get(id)
    if (fp === undefined) found.set(id, (fp = { targets: new Set() }))
    if (row.k === 'first') fp.first = row.s ?? undefined
    else if (row.k === 'last') fp.last = row.s ?? undefined
    else fp.targets.add(targetKey(row.k, Number(row.t)))
  }
  return found
}
