/**
 * Reading occurrences (CONTRACT §17): the rows of `event_occurrences` a page or a series' list shows, each with
 * its override (`event_overrides`: the changes of that occurrence alone, its venues and organizers as records).
 * What a caller is shown of them is lib/occurrence-view.ts's `occurrenceRecord`.
 */
import { sql, type Expression, type SqlBool } from 'kysely'
import { fromJson, inIdList, isPostgres } from '../db/dialect.js'
import type { Db } from '../db/unit-of-work.js'
import type { OccurrenceOverride, OccurrenceState } from '../lib/occurrence-view.js'
import type { ListEntry } from './event-filters.js'
import { linkedRecords } from './linked.js'
import { rememberedResult } from './read-cache.js'
import { ORGANIZER } from './organizers.js'
import type { Site } from './site.js'
import { VENUE } from './venues.js'

/** An occurrence with its override (null when it has none) and the override's version (0 without one). */
export interface StoredOccurrence {
  eventId: number
  state: OccurrenceState
  override: OccurrenceOverride | null
  overrideVersion: number
}

interface OccurrenceRow {
  event_id: number
  occurrence: string
  start_utc: string
  end_utc: string
  title: string | null
  description: string | null
  excerpt: string | null
  start_date: string | null
  end_date: string | null
  cost: string | null
  website: string | null
  venues: string | null
  organizers: string | null
  version: number | null
}

/** The columns every read of occurrences selects: the row, and its override's (all null without one). */
const COLUMNS = sql`o.event_id, o.occurrence, o.start_utc, o.end_utc, v.title, v.description, v.excerpt, v.start_date, v.end_date,
  v.cost, v.website, v.venues, v.organizers, v.version`
const FROM = sql`event_occurrences o left join event_overrides v on v.event_id = o.event_id and v.occurrence = o.occurrence`

/** The key of an entry in the maps below. */
export const entryKey = (id: number, occurrence: string): string => `${id} ${occurrence}`

/** Rows with their overrides' venues and organizers read as records (one read for all). */
async function stored(db: Db, site: Site, rows: readonly OccurrenceRow[]): Promise<StoredOccurrence[]> {
  const ids = (column: 'venues' | 'organizers') => [...new Set(rows.flatMap((r) => (r[column] === null ? [] : fromJson<number[]>(r[column]))))]
  const [venues, organizers] = await Promise.all([
    linkedRecords(db, site, VENUE, ids('venues')),
    linkedRecords(db, site, ORGANIZER, ids('organizers')),
  ])
  const venueById = new Map(venues.map((v) => [v.id, v]))
  const organizerById = new Map(organizers.map((o) => [o.id, o]))
  return rows.map((r) => {
    const state = { id: r.occurrence, startUtc: r.start_utc, endUtc: r.end_utc }
    if (r.version === null) return { eventId: Number(r.event_id), state, override: null, overrideVersion: 0 }
    const override: OccurrenceOverride = {
      title: r.title, description: r.description, excerpt: r.excerpt, startDate: r.start_date, endDate: r.end_date,
      startUtc: r.start_utc, endUtc: r.end_utc, cost: r.cost, website: r.website,
      venue: r.venues === null ? null : fromJson<number[]>(r.venues).flatMap((id) => venueById.get(id) ?? []),
      organizer: r.organizers === null ? null : fromJson<number[]>(r.organizers).flatMap((id) => organizerById.get(id) ?? []),
    }
    return { eventId: Number(r.event_id), state, override, overrideVersion: Number(r.version) }
  })
}

/** The occurrences of page entries (each an event and an occurrence id), by `entryKey`; one statement. */
export async function occurrencesOf(db: Db, site: Site, entries: readonly ListEntry[]): Promise<Map<string, StoredOccurrence>> {
  if (entries.length === 0) return new Map()
  const pairs: Expression<SqlBool> = isPostgres(db)
    ? sql<SqlBool>`(o.event_id, o.occurrence) in (select * from unnest(${entries.map((e) => e.id)}::bigint[], ${entries.map((e) => e.occurrence)}::text[]))`
    : sql<SqlBool>`(o.event_id, o.occurrence) in (select json_extract(value, '$[0]'), json_extract(value, '$[1]') from json_each(${JSON.stringify(entries.map((e) => [e.id, e.occurrence]))}))`
  const { rows } = await sql<OccurrenceRow>`select ${COLUMNS} from ${FROM} where ${pairs}`.execute(db)
  return new Map((await stored(db, site, rows)).map((s) => [entryKey(s.eventId, s.state.id), s]))
}

const keySets = new WeakMap<readonly string[], ReadonlySet<string>>()

/**
 * The occurrences changed alone (`event_overrides`: few), as `entryKey`s, remembered; one statement over the
 * overrides. A change of an occurrence is one of its series: kept across changes of events when each changed event's
 * overrides are still exactly those held (a probe of the overrides' key per changed event), where a statement over
 * every override (0.5 ms with the benchmark's 297) ran again after any write to any event.
 */
export async function overriddenKeys(db: Db): Promise<ReadonlySet<string>> {
  const keys = await rememberedResult(db, 'ids:events:overridden-occurrences', async () =>
    (await db.selectFrom('event_overrides').select(['event_id', 'occurrence']).execute()).map((r) => entryKey(Number(r.event_id), r.occurrence)),
  async (held, changed) => {
    const ids = [...new Set(changed)].filter((id) => Number.isSafeInteger(id))
    const now = (await db.selectFrom('event_overrides').select(['event_id', 'occurrence']).where(inIdList(db, sql.ref('event_id'), ids)).execute())
      .map((r) => entryKey(Number(r.event_id), r.occurrence))
    const changedIds = new Set(ids)
    const before = held.filter((k) => changedIds.has(Number(k.slice(0, k.indexOf(' ')))))
    const heldNow = new Set(now)
    return before.length === now.length && before.every((k) => heldNow.has(k))
  })
  let set = keySets.get(keys)
  if (set === undefined) keySets.set(keys, (set = new Set(keys)))
  return set
}

/** One occurrence of an event, or undefined when it has none with this id. */
export async function occurrenceOf(db: Db, site: Site, eventId: number, occurrence: string): Promise<StoredOccurrence | undefined> {
  const { rows } = await sql<OccurrenceRow>`select ${COLUMNS} from ${FROM} where o.event_id = ${eventId} and o.occurrence = ${occurrence}`.execute(db)
  return (await stored(db, site, rows))[0]
}

/** The start bounds of `GET /events/{id}/occurrences` (UTC; CONTRACT §4's `start_date`/`end_date`, no default window). */
export interface OccurrenceWindow {
  startGte?: string
  endLte?: string
}

function windowCondition(w: OccurrenceWindow): Expression<SqlBool> {
  const c: Array<Expression<SqlBool>> = []
  if (w.startGte !== undefined) c.push(sql<SqlBool>`o.start_utc >= ${w.startGte}`)
  if (w.endLte !== undefined) c.push(sql<SqlBool>`o.end_utc <= ${w.endLte}`)
  return c.length === 0 ? sql<SqlBool>`1 = 1` : sql<SqlBool>`${sql.join(c, sql` and `)}`
}

/** How many occurrences of the event are in the window. */
export async function countOccurrences(db: Db, eventId: number, w: OccurrenceWindow): Promise<number> {
  const { rows } = await sql<{ n: number | string }>`select count(*) as n from event_occurrences o where o.event_id = ${eventId} and ${windowCondition(w)}`.execute(db)
  return Number(rows[0]?.n ?? 0)
}

/** A page of the event's occurrences in the window, in order of start, then occurrence id. */
export async function occurrencePage(db: Db, site: Site, eventId: number, w: OccurrenceWindow, offset: number, limit: number): Promise<StoredOccurrence[]> {
  const { rows } = await sql<OccurrenceRow>`select ${COLUMNS} from ${FROM} where o.event_id = ${eventId} and ${windowCondition(w)}
    order by o.start_utc, o.occurrence limit ${limit} offset ${offset}`.execute(db)
  return stored(db, site, rows)
}
