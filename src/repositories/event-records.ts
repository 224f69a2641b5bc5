/**
 * Event records (CONTRACT §2): a row joined with its terms, venues, organizers, image and translations,
 * and the dates, costs and abbreviations derived from it. A page of records is assembled in a fixed
 * number of queries whatever its size, and remembered by the read cache. Records hold every linked
 * venue and organizer: what a caller may see of them is decided by the handler (lib/event-view.ts).
 */
import { sql } from 'kysely'
import type { Category, Event, Image, Language, Tag } from '../contract.js'
import { bytewise, fromJson, idListValue, inIdValue, jsonArrayAgg, jsonArrayOf, jsonObjectAgg } from '../db/dialect.js'
import { prepared } from '../db/prepared.js'
import type { EventRow, Flag } from '../db/schema.js'
import type { DataVersion } from '../db/dialect.js'
import { writtenSince, type Db, type Tx } from '../db/unit-of-work.js'
import { costDetails } from '../lib/cost.js'
import { dateDetails } from '../lib/dates.js'
import { tzAbbreviation } from '../lib/tz-abbreviation.js'
import { withVersionStates } from '../lib/translation-view.js'
import type { WrittenEvent } from './event-writes.js'
import { imageOf, imagesOf } from './images.js'
import { linkedRecords, linkedRecordsOf, linkedRows } from './linked.js'
import { ORGANIZER } from './organizers.js'
import { postFields, resolvePostId, type PostRef } from './posts.js'
import { recordsById, recordsSeen, rememberedRecords, rememberedResult } from './read-cache.js'
import type { Site } from './site.js'
import { CATEGORY, TAG, shownTermRows, shownTerms, termRecords } from './terms.js'
import { linkedTranslations } from './translations.js'
import { VENUE } from './venues.js'

/** An event's record, with what reads and writes need that the record does not say. */
export interface StoredEvent {
  record: Event
  version: number
  /** Its translation group: `coalesce(translation_group, id)` (what the group's documents are found by). */
  group: number
  /** The password that protects it, or null. */
  password: string | null
  /** The records it shows (`venue:3`, `category:7`, …): a change of any of them changes it too. */
  embeds: readonly string[]
}

/**
 * The id of the event `ref` names (see `resolvePostId`). By id, no statement of its own: the event's
 * record (remembered, or assembled and then remembered for the read that follows) knows its language
 * and the ids of its translations. Slugs resolved since the last change are remembered.
 */
async function resolveEventId(db: Db, site: Site, ref: PostRef, language: Language | undefined): Promise<number | undefined> {
  if ('id' in ref) {
    if (!Number.isSafeInteger(ref.id)) return undefined
    if (language === undefined) return ref.id
    const [stored] = await storedEvents(db, site, [ref.id])
    if (stored === undefined) return undefined
    return stored.record.ml_language === language ? stored.record.id : stored.record.translations[language]
  }
  return rememberedResult(db, `lookup:events:slug:${language}:${ref.slug}`, () => resolvePostId(db, 'events', ref, language))
}

/** The event `ref` names in `language` (a slug is looked up in the language given), or undefined. */
export async function findEvent(db: Db, site: Site, ref: PostRef, language: Language | undefined): Promise<StoredEvent | undefined> {
  const id = await resolveEventId(db, site, ref, language)
  if (id === undefined) return undefined
  const [stored] = await storedEvents(db, site, [id])
  return stored
}

/** An event as read before a write (`findEventSeen`), and the data version that read holds at (undefined: not known). */
export interface SeenEvent {
  stored: StoredEvent
  version: DataVersion | undefined
}

/**
 * `findEvent` by id, and the data version the record holds at (read-cache.ts `recordsSeen`): what a write's unit of
 * work may take its linked records from when it finds that version (`eventAfterWrite`).
 */
export async function findEventSeen(db: Db, site: Site, ref: PostRef, language: Language | undefined): Promise<SeenEvent | undefined> {
  const id = await resolveEventId(db, site, ref, language)
  if (id === undefined) return undefined
  const { records: [stored], version } = await recordsSeen(db, 'event', [id], (missing) => assembleEvents(db, site, missing), (s) => s.embeds)
  return stored === undefined ? undefined : { stored, version }
}

/**
 * Event `id` read back inside the unit of work that wrote it (`trx`): its row, links, translations and image read
 * again (one statement), its linked venues, organizers and terms taken from `before` (the record read before the
 * unit, at its version) when the unit found that version and did not change them itself (unit-of-work.ts
 * `writtenSince`: a term whose count the write moved, an inline venue it made, are read); else assembled whole. The
 * same record either way (test/patch-answer.test.ts compares it with a read after the write).
 */
export async function eventAfterWrite(trx: Tx, site: Site, id: number, before: SeenEvent | undefined): Promise<StoredEvent | undefined> {
  const changed = before === undefined || before.stored.record.id !== id ? undefined : writtenSince(trx, before.version)
  if (changed === undefined || before === undefined) return (await storedEvents(trx, site, [id], false))[0]
  const { record } = before.stored
  const kept = <T extends { id: number }>(kind: string, list: readonly T[]): ReadonlyMap<number, T> =>
    new Map(list.filter((r) => !changed.has(`${kind}:${r.id}`)).map((r) => [r.id, r]))
  const known: KnownLinked = {
    categories: kept('category', record.categories),
    tags: kept('tag', record.tags),
    venues: kept('venue', record.venue),
    organizers: kept('organizer', record.organizer),
  }
  return (await assembleEvents(trx, site, [id], known)).get(id)
}

/** The stored events of `ids` the read cache holds now (none assembled). */
export async function rememberedEvents(db: Db, ids: readonly number[]): Promise<Map<number, StoredEvent>> {
  return rememberedRecords<StoredEvent>(db, 'event', ids)
}

/**
 * Stored events for ids, in that order (ids with no event left out); those assembled are remembered by the
 * read cache unless `remember` is false (see `recordsById`).
 */
export async function storedEvents(db: Db, site: Site, ids: readonly number[], remember = true): Promise<StoredEvent[]> {
  return recordsById(db, 'event', ids, (missing) => assembleEvents(db, site, missing), (stored) => stored.embeds, remember)
}

/** What the right to read the event with this id depends on (its author, status and password), or undefined. */
export async function eventAccess(db: Db, id: number): Promise<{ author: number | null; status: string; password: string | null } | undefined> {
  if (!Number.isSafeInteger(id)) return undefined
  return db.selectFrom('events').select(['author', 'status', 'password']).where('id', '=', id).executeTakeFirst()
}

/** Whether an event with this id exists (the `post`/`event` filters must name one). */
export async function eventExists(db: Db, id: number): Promise<boolean> {
  return (await eventOwner(db, id)) !== undefined
}

/** The author and status of the event with this id (what the rights to read it depend on), or undefined. */
export async function eventOwner(db: Db, id: number): Promise<{ author: number | null; status: string } | undefined> {
  if (!Number.isSafeInteger(id)) return undefined
  return db.selectFrom('events').select(['author', 'status']).where('id', '=', id).executeTakeFirst()
}

/** An event row with its links, as the one statement of `assembleEvents` reads them. */
type AssembledRow = EventRow & {
  /** `[term id, taxonomy]` in the order terms are shown (by name, bytewise, then id). */
  term_links: unknown
  venue_ids: unknown
  organizer_ids: unknown
  /** Language → id of every version in the event's translation group. */
  translation_ids: unknown
  translation_states: unknown
  image_url: string | null
}

/**
 * Events' rows with their links (see `assembleEvents`), the ids one parameter (`idListValue`). The
 * versions' states are read by id, their ids found in the translation index (as `translations.ts`
 * does for venues and organizers): most events are in no group, so the statistics make a lookup by group
 * look as dear as reading the table for the two columns the index lacks.
 */
const assembledRows = prepared(1, (db, list: number[] | string) => sql<AssembledRow>`select e.*,
      (select ${jsonArrayAgg(db, jsonArrayOf(db, [sql.ref('l.term_id'), sql.ref('t.taxonomy')]), sql`${bytewise(db, sql.ref('t.name_key'))}, t.id`)}
        from event_terms l inner join terms t on t.id = l.term_id where l.event_id = e.id) as term_links,
      (select ${jsonArrayAgg(db, sql.ref('l.venue_id'), sql.ref('l.position'))} from event_venues l where l.event_id = e.id) as venue_ids,
      (select ${jsonArrayAgg(db, sql.ref('l.organizer_id'), sql.ref('l.position'))} from event_organizers l where l.event_id = e.id) as organizer_ids,
      (select ${jsonObjectAgg(db, sql.ref('m.language'), sql.ref('m.id'), sql.ref('m.id'))} from events m
        where m.translation_group = coalesce(e.translation_group, e.id)) as translation_ids,
      (select ${jsonArrayAgg(db, jsonArrayOf(db, [sql.ref('m.id'), sql.ref('m.status'), sql.ref('m.author')]), sql.ref('m.id'))} from events m
        where m.id in (select g.id from events g where g.translation_group = coalesce(e.translation_group, e.id))) as translation_states,
      (select i.url from images i where i.id = e.image_id) as image_url
    from events e where ${inIdValue(db, sql.ref('e.id'), list)}`)

/** Linked records known to hold (`eventAfterWrite`), by id: those the assembly need not read. */
interface KnownLinked {
  categories: ReadonlyMap<number, Category>
  tags: ReadonlyMap<number, Tag>
  venues: ReadonlyMap<number, Event['venue'][number]>
  organizers: ReadonlyMap<number, Event['organizer'][number]>
}

/** The records of `ids` (in no particular order): those `known` holds, and the others from `load`. */
async function knownOr<T>(ids: readonly number[], known: ReadonlyMap<number, T> | undefined, load: (ids: readonly number[]) => Promise<T[]>): Promise<T[]> {
  if (known === undefined || known.size === 0) return load(ids)
  const missing = ids.filter((id) => !known.has(id))
  const found = ids.flatMap((id) => known.get(id) ?? [])
  return missing.length === 0 ? found : [...found, ...(await load(missing))]
}

/**
 * The records of events `ids`: one statement reads each event's row with the ids of its terms, venues
 * and organizers in order, its translations and its image (JSON aggregates in correlated subqueries,
 * `db/dialect.ts`); the linked venues, organizers and terms come from their own records (remembered).
 */
async function assembleEvents(db: Db, site: Site, ids: readonly number[], known?: KnownLinked): Promise<Map<number, StoredEvent>> {
  const list = idListValue(db, ids)
  if (list === undefined) return new Map()
  const rows = await assembledRows(db, list)
  const byId = new Map(rows.rows.map((r) => [r.id, r]))
  const ordered = ids.flatMap((id) => byId.get(id) ?? [])
  if (ordered.length === 0) return new Map()
  const links = new Map(ordered.map((row) => [row.id, {
    terms: fromJson<Array<[number, string]>>(row.term_links),
    venues: fromJson<number[]>(row.venue_ids),
    organizers: fromJson<number[]>(row.organizer_ids),
  }]))
  const all = [...links.values()]
  const unique = (values: number[]) => [...new Set(values)]
  const termIds = (taxonomy: string) => unique(all.flatMap((l) => l.terms.filter(([, t]) => t === taxonomy).map(([id]) => id)))
  const [categories, tags, venues, organizers] = await Promise.all([
    knownOr(termIds('category'), known?.categories, (missing) => termRecords(db, site, CATEGORY, missing)),
    knownOr(termIds('tag'), known?.tags, (missing) => termRecords(db, site, TAG, missing)),
    knownOr(unique(all.flatMap((l) => l.venues)), known?.venues, (missing) => linkedRecords(db, site, VENUE, missing)),
    knownOr(unique(all.flatMap((l) => l.organizers)), known?.organizers, (missing) => linkedRecords(db, site, ORGANIZER, missing)),
  ])
  const mapOf = <T extends { id: number }>(list: T[]) => new Map(list.map((r) => [r.id, r]))
  const [categoryById, tagById, venueById, organizerById] = [mapOf(categories), mapOf(tags), mapOf(venues), mapOf(organizers)]
  const pick = <T>(ids: readonly number[], map: Map<number, T>): T[] => ids.flatMap((id) => map.get(id) ?? [])

  return new Map(ordered.map((row) => {
    const { terms, venues: venueIds, organizers: organizerIds } = links.get(row.id) as { terms: Array<[number, string]>; venues: number[]; organizers: number[] }
    const translations = fromJson<Record<string, number>>(row.translation_ids)
    const record = toEventRecord(site, eventRowOf(row), {
      image: row.image_id === null ? null : imageOf(row.image_id, row.image_url),
      // A record alone in its group (no version names it) is its own only translation.
      translations: Object.keys(translations).length === 0 ? { [row.language]: row.id } : withVersionStates(translations, new Map(
        fromJson<Array<[number, string, number | null]>>(row.translation_states).map(([id, status, author]) => [id, { status, author }]))),
      categories: pick(terms.filter(([, t]) => t === 'category').map(([id]) => id), categoryById),
      tags: pick(terms.filter(([, t]) => t === 'tag').map(([id]) => id), tagById),
      venue: pick(venueIds, venueById),
      organizer: pick(organizerIds, organizerById),
    })
    const embeds = [
      ...terms.map(([id, taxonomy]) => `${taxonomy}:${id}`),
      ...venueIds.map((id) => `venue:${id}`),
      ...organizerIds.map((id) => `organizer:${id}`),
    ]
    return [row.id, { record, version: row.version, group: row.translation_group ?? row.id, password: row.password, embeds }]
  }))
}

/** UTF-8 bytes in order: how `bytewise` compares text on both engines (SQLite's BINARY, PostgreSQL's "C"). */
const byBytes = (a: string, b: string): number => Buffer.compare(Buffer.from(a, 'utf8'), Buffer.from(b, 'utf8'))

/**
 * The stored event a create wrote (event-writes.ts `insertEvent`), made from what it wrote instead of read back
 * whole: its row as inserted; the records of the terms, venues and organizers it links read (a term's count and
 * version moved in the write, an inline venue or organizer was made by it), in the order the assembled record shows
 * them (terms by name bytewise, then id; venues and organizers by position); its image's URL when the write did not
 * make it. An event that joined another's translation group is read back (its group's versions are read). The same
 * record `assembleEvents` reads (test/events-create-answer.test.ts compares them).
 */
export async function writtenEventRecord(db: Db, site: Site, written: WrittenEvent): Promise<StoredEvent> {
  const { row, links } = written
  if (row.translation_group !== row.id) {
    const [stored] = await storedEvents(db, site, [row.id], false)
    if (stored === undefined) throw new Error(`the new event ${row.id} was not found`)
    return stored
  }
  // Rows the write read or wrote already in this transaction (the terms' counts moved, the venues and organizers
  // checked) are not read again; the others are read, then the translations of all three kinds in one statement, and
  // the images of the event (unless the write made it), its venues and organizers in one.
  const { known } = written
  const termRows = await shownTermRows(db, [...links.categories, ...links.tags], known.terms)
  const venueRows = await linkedRows(db, VENUE, links.venues, known.venues)
  const organizerRows = await linkedRows(db, ORGANIZER, links.organizers, known.organizers)
  const imageIds = [...venueRows.map((r) => r.image_id), ...organizerRows.map((r) => r.image_id)]
  if (row.image_id !== null && written.imageUrl === undefined) imageIds.push(row.image_id)
  const translations = await linkedTranslations(db, termRows, venueRows, organizerRows)
  const images = await imagesOf(db, imageIds)
  const terms = shownTerms(site, termRows, translations.terms)
  const venues = linkedRecordsOf(site, VENUE, links.venues, venueRows, images, translations.venues)
  const organizers = linkedRecordsOf(site, ORGANIZER, links.organizers, organizerRows, images, translations.organizers)
  terms.sort((a, b) => byBytes(a.nameKey, b.nameKey) || a.id - b.id)
  const image = row.image_id === null ? null : written.imageUrl !== undefined ? imageOf(row.image_id, written.imageUrl) : images.get(row.image_id) ?? null
  const record = toEventRecord(site, row, {
    image,
    // Alone in its group: the record is its own only translation, with its state.
    translations: withVersionStates({ [row.language]: row.id }, new Map([[row.id, { status: row.status, author: row.author }]])),
    categories: terms.filter((t) => t.taxonomy === 'category').map((t) => t.record as Category),
    tags: terms.filter((t) => t.taxonomy === 'tag').map((t) => t.record as Tag),
    venue: venues,
    organizer: organizers,
  })
  const embeds = [
    ...terms.map((t) => `${t.taxonomy}:${t.id}`),
    ...links.venues.map((id) => `venue:${id}`),
    ...links.organizers.map((id) => `organizer:${id}`),
  ]
  return { record, version: row.version, group: row.id, password: row.password, embeds }
}

/** The event row of an assembled row (its aggregates left out). */
function eventRowOf(row: AssembledRow): EventRow {
  const { term_links: _terms, venue_ids: _venues, organizer_ids: _organizers, translation_ids: _translations, translation_states: _states, image_url: _image, ...event } = row
  return event
}

interface EventLinks {
  image: Image | null
  translations: Record<string, number>
  categories: Event['categories']
  tags: Event['tags']
  venue: Event['venue']
  organizer: Event['organizer']
}

/** The one mapper from an event row (and its links) to the contract's record. */
function toEventRecord(site: Site, row: EventRow, links: EventLinks): Event {
  const flag = (value: Flag): boolean => value === 1
  return {
    ...postFields(row, site, 'events', links.image, links.translations),
    global_id: `${new URL(site.apiUrl).host}?id=${row.id}`,
    title: row.title,
    excerpt: row.excerpt,
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
    recurrence: recurrenceOf(row.recurrence),
    occurrence: null,
  }
}

/** The stored `recurrence` column (JSON text `{"rule","rdates","exdates"}`, or null for a single event) as the record shows it. */
export function recurrenceOf(stored: string | null): Event['recurrence'] {
  if (stored === null) return null
  const { rule, rdates, exdates } = JSON.parse(stored) as { rule: string | null; rdates: string[]; exdates: string[] }
  return { rule, rdates, exdates }
}
