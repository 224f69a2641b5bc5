/**
 * The records the change log speaks of, as they are now and as a caller would see them in a list
 * (CONTRACT §12): what `GET /changes` shows each caller, and what webhook deliveries carry as
 * `data.record` (§13, as an administrator sees it). With each record, the status and author that
 * decide who may read it.
 */
import type { Category, Event, Organizer, Tag, Venue } from '../contract.js'
import type { ChangeResource } from '../db/schema.js'
import type { Db } from '../db/unit-of-work.js'
import { linkedSeenBy, listed, seenBy } from '../lib/event-view.js'
import type { Caller, Owned } from '../lib/rights.js'
import { storedEvents } from './event-records.js'
import { linkedRecords } from './linked.js'
import { ORGANIZER } from './organizers.js'
import type { Site } from './site.js'
import { CATEGORY, TAG, termRecords } from './terms.js'
import { VENUE } from './venues.js'

export type ChangeRecord = Event | Venue | Organizer | Category | Tag

/** The current records of one resource, as `caller` would see them in a list, by id (missing: gone). */
export async function currentRecords(db: Db, site: Site, caller: Caller | null, resource: ChangeResource, ids: number[]): Promise<Map<number, { record: ChangeRecord; state: Owned }>> {
  const out = new Map<number, { record: ChangeRecord; state: Owned }>()
  if (ids.length === 0) return out
  switch (resource) {
    case 'events':
      for (const s of await storedEvents(db, site, ids)) {
        out.set(s.record.id, { record: listed(seenBy(caller, s.record), s.password !== null), state: s.record })
      }
      break
    case 'venues':
      for (const r of await linkedRecords(db, site, VENUE, ids)) out.set(r.id, { record: linkedSeenBy(caller, r), state: r })
      break
    case 'organizers':
      for (const r of await linkedRecords(db, site, ORGANIZER, ids)) out.set(r.id, { record: linkedSeenBy(caller, r), state: r })
      break
    case 'categories':
      for (const r of await termRecords(db, site, CATEGORY, ids)) out.set(r.id, { record: r, state: { status: 'publish', author: null } })
      break
    case 'tags':
      for (const r of await termRecords(db, site, TAG, ids)) out.set(r.id, { record: r, state: { status: 'publish', author: null } })
      break
  }
  return out
}
