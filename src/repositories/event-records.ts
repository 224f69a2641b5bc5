/**
 * Event records (CONTRACT §2): a row joined with its terms, venues, organizers, image and translations,
 * and the dates, costs and abbreviations derived from it. A page of records is assembled in a fixed
 * number of queries whatever its size, and remembered by the read cache. Records hold every linked
 * venue and organizer: what a caller may see of them is decided by the handler (lib/event-view.ts).
 */
import { sql } from 'kysely'
import type { Event, Image, Language } from '../contract.js'
import { bytewise } from '../db/dialect.js'
import type { EventRow, Flag } from '../db/schema.js'
import type { Db } from '../db/unit-of-work.js'
import { costDetails } from '../lib/cost.js'
import { dateDetails } from '../lib/dates.js'
import { tzAbbreviation } from '../lib/tz-abbreviation.js'
import { imagesOf } from './images.js'
import { linkedRecords } from './linked.js'
import { ORGANIZER } from './organizers.js'
import { postFields, resolvePostId, type PostRef } from './posts.js'
import { recordsById, rememberedRecord, rememberedResult } from './read-cache.js'
import type { Site } from './site.js'
import { CATEGORY, TAG, termRecords } from './terms.js'
import { translationsOf } from './translations.js'
import { VENUE } from './venues.js'

/** An event's record, with what reads and writes need that the record does not say. */
export interface StoredEvent {
  record: Event
  version: number
  /** The password that protects it, or null. */
  password: string | null
  /** The records it shows (`venue:3`, `category:7`, …): a change of any of them changes it too. */
  embeds: readonly string[]
}

/**
 * The id of the event `ref` names (see `resolvePostId`), from the read cache when it can tell: a
 * remembered record knows its language and the ids of its translations, and slugs resolved since the
 * last change are remembered.
 */
async function resolveEventId(db: Db, ref: PostRef, language: Language | undefined): Promise<number | undefined> {
  if ('id' in ref) {
    const hit = await rememberedRecord<StoredEvent>(db, 'event', ref.id)
    if (hit === undefined) return resolvePostId(db, 'events', ref, language)
    return language === undefined || hit.record.ml_language === language ? hit.record.id : hit.record.translations[language]
  }
  return rememberedResult(db, `lookup:events:slug:${language}:${ref.slug}`, () => resolvePostId(db, 'events', ref, language))
}

/** The event `ref` names in `language` (a slug is looked up in the language given), or undefined. */
export async function findEvent(db: Db, site: Site, ref: PostRef, language: Language | undefined): Promise<StoredEvent | undefined> {
  const id = await resolveEventId(db, ref, language)
  if (id === undefined) return undefined
  const [stored] = await storedEvents(db, site, [id])
  return stored
}

/** Stored events for ids, in that order (ids with no event left out). */
export async function storedEvents(db: Db, site: Site, ids: readonly number[]): Promise<StoredEvent[]> {
  return recordsById(db, 'event', ids, (missing) => assembleEvents(db, site, missing), (stored) => stored.embeds)
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

async function assembleEvents(db: Db, site: Site, ids: readonly number[]): Promise<Map<number, StoredEvent>> {
  const rows = await db.selectFrom('events').selectAll().where('id', 'in', [...ids]).execute()
  const byId = new Map(rows.map((r) => [r.id, r]))
  const ordered = ids.flatMap((id) => byId.get(id) ?? [])
  const eventIdList = ordered.map((r) => r.id)
  if (eventIdList.length === 0) return new Map()
  const [termLinks, venueLinks, organizerLinks, images, translations] = await Promise.all([
    db.selectFrom('event_terms').innerJoin('terms', 'terms.id', 'event_terms.term_id')
      .select(['event_terms.event_id', 'event_terms.term_id', 'terms.taxonomy'])
      .where('event_terms.event_id', 'in', eventIdList).orderBy(bytewise(db, sql.ref('terms.name_key'))).orderBy('terms.id').execute(),
    db.selectFrom('event_venues').select(['event_id', 'venue_id as id', 'position'])
      .where('event_id', 'in', eventIdList).orderBy('position').execute(),
    db.selectFrom('event_organizers').select(['event_id', 'organizer_id as id', 'position'])
      .where('event_id', 'in', eventIdList).orderBy('position').execute(),
    imagesOf(db, ordered.map((r) => r.image_id)),
    translationsOf(db, 'events', ordered),
  ])
  const unique = (values: number[]) => [...new Set(values)]
  const [categories, tags, venues, organizers] = await Promise.all([
    termRecords(db, site, CATEGORY, unique(termLinks.filter((l) => l.taxonomy === 'category').map((l) => l.term_id))),
    termRecords(db, site, TAG, unique(termLinks.filter((l) => l.taxonomy === 'tag').map((l) => l.term_id))),
    linkedRecords(db, site, VENUE, unique(venueLinks.map((l) => l.id))),
    linkedRecords(db, site, ORGANIZER, unique(organizerLinks.map((l) => l.id))),
  ])
  const mapOf = <T extends { id: number }>(list: T[]) => new Map(list.map((r) => [r.id, r]))
  const [categoryById, tagById, venueById, organizerById] = [mapOf(categories), mapOf(tags), mapOf(venues), mapOf(organizers)]
  const pick = <T>(links: ReadonlyArray<{ event_id: number; id: number }>, map: Map<number, T>, event: number): T[] =>
    links.filter((l) => l.event_id === event).flatMap((l) => map.get(l.id) ?? [])

  return new Map(ordered.map((row) => {
    const eventTerms = termLinks.filter((l) => l.event_id === row.id)
    const record = toEventRecord(site, row, {
      image: row.image_id === null ? null : images.get(row.image_id) ?? null,
      translations: translations.get(row.id) ?? {},
      categories: eventTerms.flatMap((l) => categoryById.get(l.term_id) ?? []),
      tags: eventTerms.flatMap((l) => tagById.get(l.term_id) ?? []),
      venue: pick(venueLinks, venueById, row.id),
      organizer: pick(organizerLinks, organizerById, row.id),
    })
    const embeds = [
      ...eventTerms.map((l) => `${l.taxonomy}:${l.term_id}`),
      ...venueLinks.filter((l) => l.event_id === row.id).map((l) => `venue:${l.id}`),
      ...organizerLinks.filter((l) => l.event_id === row.id).map((l) => `organizer:${l.id}`),
    ]
    return [row.id, { record, version: row.version, password: row.password, embeds }]
  }))
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
  }
}
