/**
 * Events: every query of the list filters, the record mapper (with its linked terms, venues and
 * organizers batched per page) and the all-or-nothing writes, inline venues and organizers included.
 */
import { sql, type Expression, type Kysely, type SqlBool, type Transaction } from 'kysely'
import { EARTH_RADIUS_KM, containsText, distanceKm, inIdList } from '../db/dialect.js'
import type { Database, EventRow, Flag } from '../db/schema.js'
import { invalidParam, preconditionFailed } from '../http/errors.js'
import { asLanguage, type Language, type Schema, asStatus, type WritableStatus } from '../contract.js'
import { costDetails } from '../lib/cost.js'
import { dateDetails, tzAbbreviation } from '../lib/dates.js'
import { canRead, type Caller, type ListScope } from '../lib/rights.js'
import { eventJsonLd } from '../lib/json-ld.js'
import { insertLinked, recordsOf, type Repo, type WriteContext } from './linked.js'
import { ORGANIZER } from './organizers.js'
import {
  checkAuthor, deletePost, freeSlug, imagesOf, isHttpUrl, modifiedNow, trashPost, nowDates, provisionalSlug, publicationDates, resolveImage, resolvePostId,
  scopeCondition, settleNewPost, translationGroupFor, wantedSlug, type ImageRecord, type PostRef,
} from './posts.js'
import { moveTermCounts, termIdsOfEvent } from './term-counts.js'
import { CATEGORY, TAG, termRecords } from './terms.js'
import type { ReadCache } from './read-cache.js'
import { withTransaction } from '../db/unit-of-work.js'
import { translationsOf } from './translations.js'
import { VENUE } from './venues.js'

type Event = Schema<'Event'>
type Db = Kysely<Database> | Transaction<Database>

/** The list filters after the handler resolved dates, slugs and defaults (all instants in UTC). */
export interface EventFilter {
  language: Language
  scope: ListScope
  include?: number[]
  startGte?: string
  endLte?: string
  startGt?: string
  startLt?: string
  endGt?: string
  endLt?: string
  search?: string
  categories?: number[]
  tags?: number[]
  venues?: number[]
  organizers?: number[]
  featured?: boolean
  postParent?: number
  /** `geoloc`: events with (true) or without (false) a published venue that has coordinates. */
  hasGeo?: boolean
  /** Events with a published venue within `km` of the point. */
  near?: { lat: number; lng: number; km: number }
}

type LinkFilter = readonly ['event_terms' | 'event_venues' | 'event_organizers', 'term_id' | 'venue_id' | 'organizer_id', number[]]

/** The link filters sent (venue, organizer, tags, categories), the most selective kinds first. */
function linkFilters(f: EventFilter): LinkFilter[] {
  const all: Array<readonly [LinkFilter[0], LinkFilter[1], number[] | undefined]> = [
    ['event_venues', 'venue_id', f.venues],
    ['event_organizers', 'organizer_id', f.organizers],
    ['event_terms', 'term_id', f.tags],
    ['event_terms', 'term_id', f.categories],
  ]
  return all.flatMap(([table, column, ids]) => (ids === undefined ? [] : [[table, column, ids] as const]))
}

/** An event linked to one of `ids` through `table`, checked per event. */
function linkedCondition(db: Db, [table, column, ids]: LinkFilter): Expression<SqlBool> {
  if (ids.length === 0) return sql<SqlBool>`1 = 0`
  return sql<SqlBool>`exists (select 1 from ${sql.table(table)} l where l.event_id = events.id and ${inIdList(db, sql.ref(`l.${column}`), ids)})`
}

/**
 * The events a list reads. `drive`: the events linked through the first link filter sent are read
 * first (from the link index) and each is looked up by id and checked: cheap when they are few, and
 * the only plan whose cost follows the links rather than the date window (a venue's events in a
 * year at 1,000,000 events: 0.4 ms against 66 ms when SQLite scanned the window and checked the
 * links per row, which it chose whatever the statistics said). The join is written as a CROSS JOIN,
 * which SQLite takes as the order to loop in and PostgreSQL plans like any inner join. Otherwise
 * every link filter is checked per event, for a scan of the listing index in list order.
 */
function eventsFrom(db: Kysely<Database>, f: EventFilter, drive: boolean) {
  const links = linkFilters(f)
  const driver = drive ? links[0] : undefined
  if (driver === undefined) return db.selectFrom('events').where(filterCondition(db, f, links))
  const [table, column, ids] = driver
  const linked = sql<{ id: number }>`(select distinct l.event_id as id from ${sql.table(table)} l where ${inIdList(db, sql.ref(`l.${column}`), ids)})`
  return db.selectFrom(linked.as('linked')).crossJoin('events')
    .where(sql<SqlBool>`events.id = linked.id`)
    .where(filterCondition(db, f, links.slice(1)))
}

/** Every filter but the link filters not in `links` (those a driving join applies). */
function filterCondition(db: Db, f: EventFilter, links: readonly LinkFilter[]): Expression<SqlBool> {
  const c: Expression<SqlBool>[] = [
    sql<SqlBool>`events.language = ${f.language}`,
    sql<SqlBool>`events.hide_from_listings = 0`,
    scopeCondition('events', f.scope),
  ]
  if (f.include !== undefined) c.push(inIdList(db, sql.ref('events.id'), f.include))
  if (f.startGte !== undefined) c.push(sql<SqlBool>`events.start_utc >= ${f.startGte}`)
  if (f.startGt !== undefined) c.push(sql<SqlBool>`events.start_utc > ${f.startGt}`)
  if (f.startLt !== undefined) c.push(sql<SqlBool>`events.start_utc < ${f.startLt}`)
  if (f.endLte !== undefined) c.push(sql<SqlBool>`events.end_utc <= ${f.endLte}`)
  if (f.endGt !== undefined) c.push(sql<SqlBool>`events.end_utc > ${f.endGt}`)
  if (f.endLt !== undefined) c.push(sql<SqlBool>`events.end_utc < ${f.endLt}`)
  if (f.search !== undefined && f.search !== '') {
    // A password-protected event is found by its title only: its description is protected text.
    const title = containsText(db, [sql.ref('events.title')], f.search)
    const description = containsText(db, [sql.ref('events.description')], f.search)
    c.push(sql<SqlBool>`(${title} or (events.password is null and ${description}))`)
  }
  for (const link of links) c.push(linkedCondition(db, link))
  if (f.featured !== undefined) c.push(sql<SqlBool>`events.featured = ${f.featured ? 1 : 0}`)
  if (f.postParent !== undefined) c.push(sql<SqlBool>`events.post_parent = ${f.postParent}`)
  if (f.hasGeo !== undefined) {
    const located = sql<SqlBool>`exists (select 1 from event_venues l inner join venues v on v.id = l.venue_id
      where l.event_id = events.id and v.status = 'publish' and v.geo_lat is not null and v.geo_lng is not null)`
    c.push(f.hasGeo ? located : sql<SqlBool>`not ${located}`)
  }
  if (f.near !== undefined) c.push(nearCondition(db, f.near))
  return sql<SqlBool>`${sql.join(c, sql` and `)}`
}

/**
 * Events with a published venue within `km` of the point: a bounding box on the coordinates index
 * first, then the exact great-circle distance. The box widens to every longitude when the circle
 * reaches a pole and wraps across the antimeridian. Its half-width in longitude is the circle's widest
 * point, asin(sin r / cos lat) (r the angular radius), which is wider than r / cos lat: the narrower box
 * lost venues due east or west of a point at high latitudes. A margin of 1e-9° keeps rounding from
 * cutting off a venue that the exact distance admits.
 */
function nearCondition(db: Db, near: { lat: number; lng: number; km: number }): Expression<SqlBool> {
  const deg = 180 / Math.PI
  const margin = 1e-9
  const radius = near.km / EARTH_RADIUS_KM
  const dLat = radius * deg + margin
  const minLat = near.lat - dLat
  const maxLat = near.lat + dLat
  const cosLat = Math.cos(near.lat / deg)
  const dLng = maxLat >= 90 || minLat <= -90 || cosLat < 1e-9
    ? 180
    : Math.min(180, Math.asin(Math.min(1, Math.sin(Math.min(radius, Math.PI / 2)) / cosLat)) * deg + margin)
  let lngRange: Expression<SqlBool>
  if (dLng >= 180) lngRange = sql<SqlBool>`1 = 1`
  else {
    const west = near.lng - dLng
    const east = near.lng + dLng
    if (west < -180) lngRange = sql<SqlBool>`(v.geo_lng >= ${west + 360} or v.geo_lng <= ${east})`
    else if (east > 180) lngRange = sql<SqlBool>`(v.geo_lng >= ${west} or v.geo_lng <= ${east - 360})`
    else lngRange = sql<SqlBool>`v.geo_lng between ${west} and ${east}`
  }
  return sql<SqlBool>`exists (select 1 from event_venues l inner join venues v on v.id = l.venue_id
    where l.event_id = events.id and v.status = 'publish'
      and v.geo_lat between ${Math.max(-90, minLat)} and ${Math.min(90, maxLat)} and ${lngRange}
      and ${distanceKm(db, sql.ref('v.geo_lat'), sql.ref('v.geo_lng'), near.lat, near.lng)} <= ${near.km})`
}

/** How many events match: with link filters, counted from the linked events (see `eventsFrom`). */
export async function countEvents(db: Kysely<Database>, f: EventFilter): Promise<number> {
  const row = await eventsFrom(db, f, true).select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow()
  return Number(row.n)
}

/** Up to this many matches, a page with link filters is picked from the linked events and sorted. */
const SORT_LINKED_UP_TO = 5000

/**
 * The ids of a page, in list order. With link filters, the plan follows the total (already counted):
 * a few thousand matches at most are read from the links and sorted; more are found by reading the
 * listing index in order and checking the links per event, which stops once the page is full.
 */
export async function eventIds(db: Kysely<Database>, f: EventFilter, offset: number, limit: number, total: number): Promise<number[]> {
  const rows = await eventsFrom(db, f, total <= SORT_LINKED_UP_TO).select('events.id')
    .orderBy('events.start_utc', 'asc').orderBy('events.id', 'asc').limit(limit).offset(offset).execute()
  return rows.map((r) => r.id)
}

export interface EventView {
  caller: Caller | null
  /** Single reads carry `json_ld`; lists blank the protected fields of password-protected events. */
  single: boolean
  /** Protected events whose description and excerpt stay (write answers, whose caller may edit them). */
  unlocked?: (row: EventRow) => boolean
}

/** An event as the public sees it, as the read cache keeps it; its list and single forms made on first use. */
interface Assembled {
  row: EventRow
  record: Event
  /** Every linked venue and organizer is published: the record is the same for every caller. */
  sameForAll: boolean
  list?: Event
  single?: Event
}

/**
 * The id of the event `ref` names (see `resolvePostId`), from the read cache when it can tell: a
 * cached record knows its language and the ids of its translations, and slugs resolved since the
 * last change are remembered.
 */
async function resolveEventId(repo: Repo, ref: PostRef, language: Language | undefined, generation: number | undefined): Promise<number | undefined> {
  const { cache } = repo
  if (cache === undefined || generation === undefined) return resolvePostId(repo.db, 'events', ref, language, repo.defaultLanguage)
  if ('id' in ref) {
    const hit = cache.get<Assembled>(`events:${ref.id}`)
    if (hit === undefined) return resolvePostId(repo.db, 'events', ref, language, repo.defaultLanguage)
    return language === undefined || hit.row.language === language ? hit.row.id : hit.record.translations[language]
  }
  return cache.lookup(repo.db, `events:slug:${language ?? repo.defaultLanguage}:${ref.slug}`,
    () => resolvePostId(repo.db, 'events', ref, language, repo.defaultLanguage), generation)
}

/** The event `ref` names in `language` (see `resolvePostId`), in the form `view` asks for; undefined if none. */
export async function findEvent(repo: Repo, ref: PostRef, language: Language | undefined, view: EventView): Promise<EventFound | undefined> {
  const generation = repo.cache === undefined ? undefined : await repo.cache.sync(repo.db)
  const id = await resolveEventId(repo, ref, language, generation)
  if (id === undefined) return undefined
  const [found] = await eventRecords(repo, [id], view, generation)
  return found
}

/** A row and its record in the form asked for (the same object while it stays in the read cache). */
export interface EventFound {
  row: EventRow
  record: Event
}

/**
 * Records for event ids, in that order. Assembled in a fixed number of queries (links, images and
 * translations batched), or taken from the read cache; a record whose links some callers may not see
 * is assembled again for a signed-in caller, and write answers (`unlocked`) are always assembled anew.
 */
export async function eventRecords(repo: Repo, ids: readonly number[], view: EventView, synced?: number): Promise<EventFound[]> {
  if (ids.length === 0) return []
  const { cache } = repo
  const fresh = (row: EventRow, record: Event): EventFound => ({ row, record })
  if (cache === undefined || view.unlocked !== undefined) {
    return (await assembleEvents(repo, ids, view.caller)).map((a) => fresh(a.row, shaped(a.row, a.record, view)))
  }
  // The generation of a lookup just made (findEvent) saves a second look at the data version.
  const generation = synced ?? await cache.sync(repo.db)
  const key = (id: number) => `events:${id}`
  const byId = new Map<number, Assembled>()
  if (generation !== undefined) {
    for (const id of ids) {
      const hit = cache.get<Assembled>(key(id))
      if (hit !== undefined) byId.set(id, hit)
    }
  }
  const missing = byId.size === 0 ? ids : ids.filter((id) => !byId.has(id))
  for (const assembled of await assembleEvents(repo, missing, null)) {
    byId.set(assembled.row.id, assembled)
    cache.set(generation, key(assembled.row.id), assembled)
  }
  const personal = view.caller === null ? [] : ids.filter((id) => byId.get(id)?.sameForAll === false)
  const own = new Map((await assembleEvents(repo, personal, view.caller)).map((a) => [a.row.id, a]))
  return ids.flatMap((id): EventFound[] => {
    const mine = own.get(id)
    if (mine !== undefined) return [fresh(mine.row, shaped(mine.row, mine.record, view))]
    const shared = byId.get(id)
    if (shared === undefined) return []
    const record = view.single
      ? (shared.single ??= shaped(shared.row, shared.record, view))
      : (shared.list ??= shaped(shared.row, shared.record, view))
    return [{ row: shared.row, record }]
  })
}

/** A record in the form `view` asks for, as a new object: single reads carry JSON-LD, lists blank protected text. */
function shaped(row: EventRow, record: Event, view: EventView): Event {
  if (view.single) return { ...record, json_ld: eventJsonLd(record) }
  if (row.password !== null && !(view.unlocked?.(row) ?? false)) return { ...record, description: null, excerpt: null }
  return record
}

/** Rows and records for event ids as `caller` sees them (linked venues and organizers it cannot read left out). */
async function assembleEvents(repo: Repo, ids: readonly number[], caller: Caller | null): Promise<Assembled[]> {
  if (ids.length === 0) return []
  const { db } = repo
  const rows = await db.selectFrom('events').selectAll().where('id', 'in', [...ids]).execute()
  const byId = new Map(rows.map((r) => [r.id, r]))
  const ordered = ids.flatMap((id) => byId.get(id) ?? [])
  const eventIdList = ordered.map((r) => r.id)
  const [termLinks, venueLinks, organizerLinks, images, translations] = await Promise.all([
    db.selectFrom('event_terms').innerJoin('terms', 'terms.id', 'event_terms.term_id')
      .select(['event_terms.event_id', 'event_terms.term_id', 'terms.taxonomy'])
      .where('event_terms.event_id', 'in', eventIdList).orderBy('terms.name_key').orderBy('terms.id').execute(),
    db.selectFrom('event_venues').select(['event_id', 'venue_id as id', 'position'])
      .where('event_id', 'in', eventIdList).orderBy('position').execute(),
    db.selectFrom('event_organizers').select(['event_id', 'organizer_id as id', 'position'])
      .where('event_id', 'in', eventIdList).orderBy('position').execute(),
    imagesOf(db, ordered.map((r) => r.image_id)),
    translationsOf(db, 'events', ordered),
  ])
  const unique = (values: number[]) => [...new Set(values)]
  const [categories, tags, venues, organizers] = await Promise.all([
    termRecords(repo.db, repo, CATEGORY, unique(termLinks.filter((l) => l.taxonomy === 'category').map((l) => l.term_id))),
    termRecords(repo.db, repo, TAG, unique(termLinks.filter((l) => l.taxonomy === 'tag').map((l) => l.term_id))),
    recordsOf(repo, VENUE, unique(venueLinks.map((l) => l.id))),
    recordsOf(repo, ORGANIZER, unique(organizerLinks.map((l) => l.id))),
  ])
  const categoryById = new Map(categories.map((r) => [r.id, r]))
  const tagById = new Map(tags.map((r) => [r.id, r]))
  const visible = <T extends { id: number } & Parameters<typeof canRead>[1]>(list: T[]) => new Map(list.filter((r) => canRead(caller, r)).map((r) => [r.id, r]))
  // Linked venues and organizers the caller could not read directly are left out.
  const venueById = visible(venues)
  const organizerById = visible(organizers)
  const pick = <T>(links: ReadonlyArray<{ event_id: number; id: number }>, map: Map<number, T>, event: number): T[] =>
    links.filter((l) => l.event_id === event).flatMap((l) => map.get(l.id) ?? [])
  const published = (links: ReadonlyArray<{ event_id: number; id: number }>, list: Array<{ id: number; status: string }>, event: number) =>
    links.every((l) => l.event_id !== event || list.find((r) => r.id === l.id)?.status === 'publish')

  return ordered.map((row) => {
    const eventTerms = termLinks.filter((l) => l.event_id === row.id)
    const record = toEventRecord(repo, row, {
      image: row.image_id === null ? null : images.get(row.image_id) ?? null,
      translations: translations.get(row.id) ?? {},
      categories: eventTerms.flatMap((l) => categoryById.get(l.term_id) ?? []),
      tags: eventTerms.flatMap((l) => tagById.get(l.term_id) ?? []),
      venue: pick(venueLinks, venueById, row.id),
      organizer: pick(organizerLinks, organizerById, row.id),
    })
    const sameForAll = published(venueLinks, venues, row.id) && published(organizerLinks, organizers, row.id)
    return { row, record, sameForAll }
  })
}

interface EventLinks {
  image: ImageRecord | null
  translations: Record<string, number>
  categories: Event['categories']
  tags: Event['tags']
  venue: Event['venue']
  organizer: Event['organizer']
}

function toEventRecord(repo: Repo, row: EventRow, links: EventLinks): Event {
  const flag = (value: Flag): boolean => value === 1
  return {
    id: row.id,
    global_id: `${new URL(repo.apiUrl).host}?id=${row.id}`,
    author: row.author,
    status: asStatus(row.status),
    date: row.date,
    date_utc: row.date_utc,
    modified: row.modified,
    modified_utc: row.modified_utc,
    rest_url: `${repo.apiUrl}/events/${row.id}`,
    title: row.title,
    description: row.description,
    excerpt: row.excerpt,
    slug: row.slug,
    image: links.image,
    all_day: flag(row.all_day),
    start_date: row.start_date,
    start_date_details: dateDetails(row.start_date),
    end_date: row.end_date,
    end_date_details: dateDetails(row.end_date),
    utc_start_date: row.start_utc,
    utc_start_date_details: dateDetails(row.start_utc),
    utc_end_date: row.end_utc,
    utc_end_date_details: dateDetails(row.end_utc),
    timezone: row.timezone,
    timezone_abbr: tzAbbreviation(row.timezone, row.start_utc),
    cost: row.cost,
    cost_details: costDetails(row.cost),
    website: row.website,
    show_map: flag(row.show_map),
    show_map_link: flag(row.show_map_link),
    hide_from_listings: flag(row.hide_from_listings),
    sticky: flag(row.sticky),
    featured: flag(row.featured),
    categories: links.categories,
    tags: links.tags,
    venue: links.venue,
    organizer: links.organizer,
    ml_language: asLanguage(row.language),
    translations: links.translations,
  }
}

/** The stored columns of an event write, settled by the handler (dates resolved, flags as 0/1). */
export interface EventValues {
  title?: string
  description?: string | null
  excerpt?: string | null
  slug?: string
  author?: number
  status?: string
  password?: string | null
  timezone?: string
  all_day?: Flag
  start_date?: string
  end_date?: string
  start_utc?: string
  end_utc?: string
  cost?: string | null
  website?: string | null
  show_map?: Flag
  show_map_link?: Flag
  hide_from_listings?: Flag
  sticky?: Flag
  featured?: Flag
  date?: string
  date_utc?: string
  image?: number | string | null
}

export type VenueEntry = number | Schema<'VenueCreate'>
export type OrganizerEntry = number | Schema<'OrganizerCreate'>

export interface EventLinksInput {
  categories?: Array<number | string>
  tags?: Array<number | string>
  venue?: VenueEntry[]
  organizer?: OrganizerEntry[]
}

/**
 * The term ids for `categories`/`tags` entries of a write: ids, slugs or names (case-insensitive), in
 * the event's language; anything unknown is a 400 naming the field.
 */
async function termIds(db: Db, taxonomy: 'category' | 'tag', field: string, entries: Array<number | string>, language: string): Promise<number[]> {
  const ids: number[] = []
  for (const entry of entries) {
    const text = String(entry).trim()
    let row: { id: number } | undefined
    if (typeof entry === 'number' || /^\d+$/.test(text)) {
      const id = Number(text)
      row = Number.isSafeInteger(id)
        ? await db.selectFrom('terms').select('id').where('id', '=', id).where('taxonomy', '=', taxonomy).where('language', '=', language).executeTakeFirst()
        : undefined
    } else {
      row = await db.selectFrom('terms').select('id').where('taxonomy', '=', taxonomy).where('language', '=', language)
        .where((eb) => eb.or([eb('slug', '=', text.toLowerCase()), eb('name_key', '=', text.toLowerCase().replace(/\s+/g, ' '))]))
        .orderBy('id').executeTakeFirst()
    }
    if (row === undefined) throw invalidParam(field, 'unknownTerm', { value: text })
    if (!ids.includes(row.id)) ids.push(row.id)
  }
  return ids
}

/**
 * The checks of an event update that need no record (CONTRACT §1: fields are 400 before 404/410, 403 and
 * 412): the image and the author named, and the fields of inline venues and organizers. Writes nothing;
 * the write applies the same rules again.
 */
export async function checkEventInput(repo: Repo, image: number | string | null | undefined, author: number | undefined, links: EventLinksInput): Promise<void> {
  if (typeof image === 'number' || (typeof image === 'string' && /^\d+$/.test(image))) {
    const id = Number(image)
    const row = Number.isSafeInteger(id) ? await repo.db.selectFrom('images').select('id').where('id', '=', id).executeTakeFirst() : undefined
    if (row === undefined) throw invalidParam('image', 'unknownImage')
  } else if (typeof image === 'string' && !isHttpUrl(image)) {
    throw invalidParam('image', 'invalidImage')
  }
  if (author !== undefined) {
    const row = Number.isSafeInteger(author) ? await repo.db.selectFrom('users').select('id').where('id', '=', author).executeTakeFirst() : undefined
    if (row === undefined) throw invalidParam('author', 'unknownUser')
  }
  for (const entry of links.venue ?? []) if (typeof entry !== 'number') VENUE.fields(entry, repo.geoloc)
  for (const entry of links.organizer ?? []) if (typeof entry !== 'number') ORGANIZER.fields(entry, repo.geoloc)
}

/** The id of an existing linked record: not trashed and in the event's language; else a 400 naming the field. */
async function existingLinked(trx: Transaction<Database>, table: 'venues' | 'organizers', field: string, id: number, language: Language): Promise<number> {
  const row = Number.isSafeInteger(id)
    ? await trx.selectFrom(table).select('id').where('id', '=', id).where('language', '=', language).where('status', '!=', 'trash').executeTakeFirst()
    : undefined
  if (row === undefined) throw invalidParam(field, 'unknownLinked', { value: String(id) })
  return row.id
}

/**
 * A venue or organizer created inline takes its own `status`, else the caller's default, like any create
 * (CONTRACT §5): not the event's status, and not `draft` when an update leaves the event's status alone.
 */
function inlineWrite(write: WriteContext, entry: { status?: WritableStatus }): WriteContext {
  return write.inlineStatus === undefined ? write : { ...write, status: write.inlineStatus(entry.status) }
}

async function venueIds(trx: Transaction<Database>, repo: Repo, entries: VenueEntry[], language: Language, write: WriteContext): Promise<number[]> {
  const ids: number[] = []
  for (const entry of entries) {
    const id = typeof entry === 'number'
      ? await existingLinked(trx, 'venues', 'venue', entry, language)
      : await insertLinked(trx, repo, VENUE, entry, language, undefined, inlineWrite(write, entry))
    if (!ids.includes(id)) ids.push(id)
  }
  return ids
}

async function organizerIds(trx: Transaction<Database>, repo: Repo, entries: OrganizerEntry[], language: Language, write: WriteContext): Promise<number[]> {
  const ids: number[] = []
  for (const entry of entries) {
    const id = typeof entry === 'number'
      ? await existingLinked(trx, 'organizers', 'organizer', entry, language)
      : await insertLinked(trx, repo, ORGANIZER, entry, language, undefined, inlineWrite(write, entry))
    if (!ids.includes(id)) ids.push(id)
  }
  return ids
}

/** Link rows per INSERT: SQLite binds at most 32,766 parameters per statement, and a body may link more. */
const LINK_CHUNK = 1000

function chunks<T>(list: readonly T[]): T[][] {
  const out: T[][] = []
  for (let i = 0; i < list.length; i += LINK_CHUNK) out.push(list.slice(i, i + LINK_CHUNK))
  return out
}

async function writeLinks(trx: Transaction<Database>, repo: Repo, eventId: number, language: Language, links: EventLinksInput, write: WriteContext): Promise<void> {
  for (const [taxonomy, field] of [['category', 'categories'], ['tag', 'tags']] as const) {
    const entries = links[field]
    if (entries === undefined) continue
    const ids = await termIds(trx, taxonomy, field, entries, language)
    await trx.deleteFrom('event_terms').where('event_id', '=', eventId)
      .where('term_id', 'in', trx.selectFrom('terms').select('id').where('taxonomy', '=', taxonomy)).execute()
    for (const chunk of chunks(ids)) await trx.insertInto('event_terms').values(chunk.map((term_id) => ({ event_id: eventId, term_id }))).execute()
  }
  if (links.venue !== undefined) {
    const ids = await venueIds(trx, repo, links.venue, language, write)
    await trx.deleteFrom('event_venues').where('event_id', '=', eventId).execute()
    for (const [n, chunk] of chunks(ids).entries()) {
      await trx.insertInto('event_venues').values(chunk.map((venue_id, i) => ({ event_id: eventId, venue_id, position: n * LINK_CHUNK + i }))).execute()
    }
  }
  if (links.organizer !== undefined) {
    const ids = await organizerIds(trx, repo, links.organizer, language, write)
    await trx.deleteFrom('event_organizers').where('event_id', '=', eventId).execute()
    for (const [n, chunk] of chunks(ids).entries()) {
      await trx.insertInto('event_organizers').values(chunk.map((organizer_id, i) => ({ event_id: eventId, organizer_id, position: n * LINK_CHUNK + i }))).execute()
    }
  }
}

export interface NewEventValues extends EventValues {
  title: string
  timezone: string
  start_date: string
  end_date: string
  start_utc: string
  end_utc: string
}

/** Creates an event with its links in one transaction; inline venues and organizers are created with it. */
export async function insertEvent(repo: Repo, values: NewEventValues, links: EventLinksInput, language: Language, translationOf: number | undefined, write: WriteContext): Promise<number> {
  return withTransaction(repo.db, async (trx) => {
    // The author named must exist (400) before the row refers to it; the right to name one comes last.
    await checkAuthor(trx, values.author, write.callerId, true)
    const group = translationOf === undefined ? null : await translationGroupFor(trx, 'events', 'event', translationOf, language)
    const wanted = wantedSlug(values.slug, values.title)
    const slug = wanted === '' ? '' : await freeSlug(trx, 'events', language, wanted, undefined)
    const image = await resolveImage(trx, values.image, write.now)
    const { id } = await trx.insertInto('events').values({
      language,
      translation_group: group,
      author: values.author ?? write.callerId,
      status: write.status ?? 'draft',
      password: null,
      title: values.title,
      description: values.description ?? null,
      excerpt: values.excerpt ?? null,
      slug: provisionalSlug('event', slug),
      image_id: image ?? null,
      ...publicationDates(values, repo.siteTz, nowDates(write.now, repo.siteTz)),
      ...modifiedNow(write.now, repo.siteTz),
      all_day: values.all_day ?? 0,
      start_date: values.start_date,
      end_date: values.end_date,
      start_utc: values.start_utc,
      end_utc: values.end_utc,
      timezone: values.timezone,
      cost: values.cost ?? null,
      website: values.website ?? null,
      show_map: values.show_map ?? 0,
      show_map_link: values.show_map_link ?? 0,
      hide_from_listings: values.hide_from_listings ?? 0,
      sticky: values.sticky ?? 0,
      featured: values.featured ?? 0,
      post_parent: null,
    }).returning('id').executeTakeFirstOrThrow()
    await settleNewPost(trx, 'events', id, 'event', language, slug, group)
    await writeLinks(trx, repo, id, language, links, write)
    if (write.status === 'publish') await moveTermCounts(trx, [], await termIdsOfEvent(trx, id))
    // The right to set `author` (403) comes after every field of the body (400), CONTRACT §1; the
    // transaction undoes what was written.
    await checkAuthor(trx, values.author, write.callerId, write.mayAssignAuthor)
    return id
  })
}

/** Applies a partial update and its links in one transaction, compare-and-swap on the version. */
export async function updateEvent(repo: Repo, current: EventRow, values: EventValues, links: EventLinksInput, expectedVersion: number, write: WriteContext): Promise<void> {
  await withTransaction(repo.db, async (trx) => {
    if (values.author !== undefined) await checkAuthor(trx, values.author, write.callerId, write.mayAssignAuthor)
    const { image, date, date_utc, slug: wanted, ...columns } = values
    const set: Partial<EventRow> = { ...columns, ...modifiedNow(write.now, repo.siteTz), version: current.version + 1 }
    if (write.status !== undefined) set.status = write.status
    if (date !== undefined || date_utc !== undefined) {
      Object.assign(set, publicationDates({ ...(date !== undefined ? { date } : {}), ...(date_utc !== undefined ? { date_utc } : {}) }, repo.siteTz, current))
    }
    if (wanted !== undefined) {
      const slug = wantedSlug(wanted, values.title ?? current.title) || `event-${current.id}`
      set.slug = slug === current.slug ? slug : await freeSlug(trx, 'events', current.language, slug, current.id)
    }
    const imageId = await resolveImage(trx, image, write.now)
    if (imageId !== undefined) set.image_id = imageId
    const result = await trx.updateTable('events').set(set)
      .where('id', '=', current.id).where('version', '=', expectedVersion).executeTakeFirst()
    if (Number(result.numUpdatedRows) !== 1) throw preconditionFailed()
    // The terms the event counts for: its links while published (read before the links change).
    const termsLinked = links.categories !== undefined || links.tags !== undefined
    const wasPublished = current.status === 'publish'
    const isPublished = (set.status ?? current.status) === 'publish'
    const before = wasPublished && (termsLinked || !isPublished) ? await termIdsOfEvent(trx, current.id) : []
    await writeLinks(trx, repo, current.id, asLanguage(current.language), links, write)
    if (wasPublished !== isPublished || termsLinked) {
      await moveTermCounts(trx, before, isPublished ? await termIdsOfEvent(trx, current.id) : [])
    }
  })
}

/** Moves an event to the trash (compare-and-swap); its terms no longer count it. */
export async function trashEvent(repo: Repo, row: EventRow, expectedVersion: number, now: Date): Promise<void> {
  await withTransaction(repo.db, async (trx) => {
    await trashPost(trx, 'events', row.id, expectedVersion, modifiedNow(now, repo.siteTz))
    if (row.status === 'publish') await moveTermCounts(trx, await termIdsOfEvent(trx, row.id), [])
  })
}

/** Deletes an event for good (compare-and-swap); its links go with it and its terms are recounted. */
export async function deleteEvent(repo: Repo, row: EventRow, expectedVersion: number): Promise<void> {
  await withTransaction(repo.db, async (trx) => {
    const terms = row.status === 'publish' ? await termIdsOfEvent(trx, row.id) : []
    await deletePost(trx, 'events', row.id, expectedVersion)
    await moveTermCounts(trx, terms, [])
  })
}

export async function eventRow(db: Kysely<Database>, id: number): Promise<EventRow | undefined> {
  return db.selectFrom('events').selectAll().where('id', '=', id).executeTakeFirst()
}

/** What the list filters look up, remembered by the read cache when one is given (see `ReadCache.lookup`). */
export interface FilterLookups {
  cache: ReadCache
  generation: number | undefined
}

/** Ids of terms named by `categories`/`tags` filter entries (ids or slugs) in a language; unknown → 400. */
export async function filterTermIds(db: Kysely<Database>, taxonomy: 'category' | 'tag', field: string, entries: Array<number | string>, language: Language, lookups?: FilterLookups): Promise<number[]> {
  const ids: number[] = []
  for (const entry of entries) {
    const text = String(entry)
    const isId = typeof entry === 'number' || /^\d+$/.test(text)
    const id = Number(text)
    if (isId && !Number.isSafeInteger(id)) throw invalidParam(field, 'unknownTerm', { value: text })
    const find = async () => (await db.selectFrom('terms').select('id').where('taxonomy', '=', taxonomy)
      .where(isId ? sql<SqlBool>`id = ${id}` : sql<SqlBool>`language = ${language} and slug = ${text}`)
      .executeTakeFirst())?.id
    const key = isId ? `term:${taxonomy}:id:${id}` : `term:${taxonomy}:${language}:slug:${text}`
    const found = lookups === undefined ? await find() : await lookups.cache.lookup(db, key, find, lookups.generation)
    if (found === undefined) throw invalidParam(field, 'unknownTerm', { value: text })
    ids.push(found)
  }
  return ids
}

/** Checks that every id names an existing record of `table` (the venue/organizer filters); unknown → 400. */
export async function checkIdsExist(db: Kysely<Database>, table: 'venues' | 'organizers' | 'events', field: string, ids: number[], lookups?: FilterLookups): Promise<void> {
  const firstMissing = async () => {
    const found = await db.selectFrom(table).select('id').where(inIdList(db, sql.ref('id'), ids)).execute()
    const known = new Set(found.map((r) => r.id))
    return ids.find((id) => !known.has(id))
  }
  const allKnown = async () => ((await firstMissing()) === undefined ? ids.length : undefined)
  if (lookups !== undefined && await lookups.cache.lookup(db, `exist:${table}:${JSON.stringify(ids)}`, allKnown, lookups.generation) !== undefined) return
  const missing = await firstMissing()
  if (missing !== undefined) throw invalidParam(field, 'unknownLinked', { value: String(missing) })
}

/** Whether an event with this id exists (the `post`/`event` filters must name one). */
export async function eventExists(db: Kysely<Database>, id: number): Promise<boolean> {
  if (!Number.isSafeInteger(id)) return false
  return (await db.selectFrom('events').select('id').where('id', '=', id).executeTakeFirst()) !== undefined
}
