/**
 * Event writes, in the transaction of a unit of work: the row (booleans stored as 0/1), its slug, its
 * links (in chunks that stay within SQLite's parameter limit, venues and organizers created inline
 * with it), the term counts it moves and its row of the search index (the folded texts `search` looks
 * into). What is written has been checked by the handler.
 */
import type { Language } from '../contract.js'
import type { Insertable, Updateable } from 'kysely'
import { deferredWrite, deleteEventSearch, eventSearchTexts, nextEventId, nextEventIdRead, readAhead, writeEventSearch } from '../db/dialect.js'
import { boundQuery, byShape, prepared } from '../db/prepared.js'
import type { EventRow, EventsTable, Flag, TermRow } from '../db/schema.js'
import { recordChange, type Tx } from '../db/unit-of-work.js'
import { sameImage, storeImage, type ImageChoice } from './images.js'
import { insertLinked, type LinkedRow, type NewLinked } from './linked.js'
import { ORGANIZER, type OrganizerColumns } from './organizers.js'
import { changesRow, deletePost, joinedGroup, settledSlug, trashPost } from './posts.js'
import { freeSlug, freeSlugRead } from './slugs.js'
import { singleRowOf, writeOccurrences, type SeriesRows } from './occurrence-writes.js'
import { moveTermCounts, termIdsOfEvent } from './term-counts.js'
import { groupSeenOtherwise } from './translations.js'
import { VENUE, type VenueColumns } from './venues.js'

type FlagColumn = 'all_day' | 'show_map' | 'show_map_link' | 'hide_from_listings' | 'sticky' | 'featured'

/** The columns an event write sets, as the handler decided them (flags as booleans). */
export type EventColumns = Partial<Omit<EventRow, 'id' | 'version' | 'language' | 'translation_group' | 'slug' | 'image_id' | 'post_parent' | FlagColumn>>
  & Partial<Record<FlagColumn, boolean>>
  & { modified: string; modified_utc: string }

/** An event's links as a write sets them: ids checked, inline venues and organizers checked as creates. */
export interface EventLinks {
  categories?: number[]
  tags?: number[]
  venues?: Array<number | NewLinked<VenueColumns>>
  organizers?: Array<number | NewLinked<OrganizerColumns>>
  /**
   * The rows of the existing venues and organizers linked by id, as the checks read them in the write's transaction
   * (handlers/event-input.ts `checkedLinks`): a create's answer is made from them (event-records.ts
   * `writtenEventRecord`); linking changes no venue's or organizer's row.
   */
  read?: { venues: ReadonlyMap<number, LinkedRow>; organizers: ReadonlyMap<number, LinkedRow> }
}

export interface NewEvent {
  language: Language
  translationGroup: number | null
  columns: EventColumns & Pick<EventRow, 'title' | 'status' | 'date' | 'date_utc' | 'timezone' | 'start_date' | 'end_date' | 'start_utc' | 'end_utc'>
  /** The slug asked for (empty: from the title, else `event-<id>`). */
  slug: string
  image: ImageChoice
  links: EventLinks
  now: Date
  /** The series (CONTRACT §17): its `recurrence` column and rows; undefined for a single event. */
  series?: SeriesWrite
}

/** A write of an event's series: the `recurrence` column and the occurrence rows (null: the event is single again). */
export interface SeriesWrite {
  recurrence: string | null
  rows: SeriesRows | null
}

/** The columns whose change makes a series' set be written again. */
const SERIES_COLUMNS = ['recurrence', 'timezone', 'all_day', 'start_date', 'end_date', 'start_utc', 'end_utc'] as const

function stored(columns: EventColumns): Updateable<EventsTable> {
  const out: Updateable<EventsTable> = {}
  for (const [name, value] of Object.entries(columns)) {
    if (value === undefined) continue
    const flag: Flag | undefined = typeof value === 'boolean' ? (value ? 1 : 0) : undefined
    Object.assign(out, { [name]: flag ?? value })
  }
  return out
}

/** `insert into events (<columns>) values (…)` for the columns its key lists (the id among them). */
const eventInsert = byShape(64, (key) => {
  const columns = key.split(',')
  return boundQuery(columns.length, (db, ...values: unknown[]) => db.insertInto('events')
    .values(Object.fromEntries(columns.map((column, i) => [column, values[i]])) as Insertable<EventsTable>))
})


/**
 * What a create wrote: the event's row as its insert left it (version 1), and the ids it links, in the order they
 * were written (categories, tags, venues and organizers by position; inline ones created). The record is made from
 * it (event-records.ts `writtenEventRecord`) instead of being read back whole.
 */
export interface WrittenEvent {
  id: number
  row: EventRow
  /** The image's URL when the write made its record (an image named by id is read with the record). */
  imageUrl: string | undefined
  links: { categories: number[]; tags: number[]; venues: number[]; organizers: number[] }
  /**
   * The rows the write left of what the answer shows and the write read or wrote anyway, by id: the terms whose
   * counts it moved (their update's rows), and the existing venues and organizers the checks read, when a list
   * created none inline (an inline translation may move its source's row).
   */
  known: { terms: ReadonlyMap<number, TermRow>; venues: ReadonlyMap<number, LinkedRow>; organizers: ReadonlyMap<number, LinkedRow> }
}

const NONE: ReadonlyMap<number, LinkedRow> = new Map()

/** Creates an event with its links; inline venues and organizers are created with it. */
export async function insertEvent(trx: Tx, event: NewEvent): Promise<WrittenEvent> {
  const { language } = event
  // Its slugs taken and its id read together (PostgreSQL: one round trip, issue 49). The id only now, once every check
  // passed: a create refused takes none (ids follow each other as on SQLite).
  await readAhead(trx, [event.slug === '' ? undefined : freeSlugRead(trx, 'events', language, event.slug, undefined), nextEventIdRead(trx)])
  const slug = event.slug === '' ? '' : await freeSlug(trx, 'events', language, event.slug, undefined)
  // The id the insert gives, known first, so that the row is written whole (dialect.ts `nextEventId`).
  const id = await nextEventId(trx)
  const image = await storeImage(trx, event.image, event.now)
  const columns = event.columns
  const row: Insertable<EventsTable> = {
    author: null, description: null, excerpt: null, cost: null, website: null,
    all_day: 0, show_map: 0, show_map_link: 0, hide_from_listings: 0, sticky: 0, featured: 0,
    ...stored(columns),
    title: columns.title,
    status: columns.status,
    date: columns.date,
    date_utc: columns.date_utc,
    timezone: columns.timezone,
    start_date: columns.start_date,
    end_date: columns.end_date,
    start_utc: columns.start_utc,
    end_utc: columns.end_utc,
    modified: columns.modified,
    modified_utc: columns.modified_utc,
    id,
    language,
    translation_group: event.translationGroup ?? id,
    password: null,
    slug: await settledSlug(trx, 'events', 'event', language, slug, id),
    image_id: image ?? null,
    post_parent: null,
    recurrence: event.series?.recurrence ?? null,
    recurrence_through_utc: event.series?.rows?.throughUtc ?? null,
  }
  const columnNames = (Object.keys(row) as Array<keyof EventsTable>).filter((column) => row[column] !== undefined)
  // Its answer is not read (PostgreSQL: sent with the next statement that is, `deferredWrite`).
  await deferredWrite(trx, eventInsert(columnNames.join(','))(trx, ...columnNames.map((column) => row[column])))
  // A series' rows are its own to write (the insert trigger writes a single event's).
  if (event.series?.rows != null) await writeOccurrences(trx, id, event.series.rows.occurrences)
  await writeEventSearch(trx, id, eventSearchTexts({ title: columns.title, description: columns.description ?? null, password: null }), true)
  const written = { ...row, id, version: 1 } as EventRow
  await joinedGroup(trx, 'events', id, event.translationGroup)
  // Its state as the write leaves it, for the change log (no look of its own).
  recordChange(trx, { resource: 'event', id, action: 'create' }, { language, status: columns.status, author: written.author })
  const links = await writeLinks(trx, id, event.links, true)
  // A new event's terms are the ones just linked.
  const moved = columns.status === 'publish' ? await moveTermCounts(trx, [], [...(event.links.categories ?? []), ...(event.links.tags ?? [])]) : []
  // Rows read by the checks, for lists of existing records only (no inline record written meanwhile).
  const read = (entries: ReadonlyArray<number | object> | undefined, rows: ReadonlyMap<number, LinkedRow> | undefined): ReadonlyMap<number, LinkedRow> =>
    rows === undefined || entries === undefined || entries.some((entry) => typeof entry !== 'number') ? NONE : rows
  return {
    id, row: written, imageUrl: event.image !== null && event.image !== undefined && 'url' in event.image ? event.image.url : undefined,
    links: { categories: event.links.categories ?? [], tags: event.links.tags ?? [], venues: links.venues ?? [], organizers: links.organizers ?? [] },
    known: {
      terms: new Map(moved.map((row) => [row.id, row])),
      venues: read(event.links.venues, event.links.read?.venues),
      organizers: read(event.links.organizers, event.links.read?.organizers),
    },
  }
}

/** A partial update of an event, as the handler checked it. */
export interface EventUpdate {
  id: number
  language: Language
  /** The stored status (whether the event counts for its terms until now). */
  status: string
  columns: EventColumns
  /** The slug asked for, or undefined to keep `currentSlug`. */
  slug: string | undefined
  currentSlug: string
  image: ImageChoice
  links: EventLinks
  now: Date
  /** The series as the write makes it (CONTRACT §17), or undefined when its occurrences stay as they are. */
  series?: SeriesWrite
}

/** An event's row. */
const eventRow = prepared(1, (db, id: number) => db.selectFrom('events').selectAll().where('id', '=', id))

/** `update events set <columns> where id = ? and version = ?` for the columns its key lists (then the id and the version). */
const eventUpdate = byShape(256, (key) => {
  const columns = key.split(',')
  return prepared(columns.length + 2, (db, ...values: unknown[]) => db.updateTable('events')
    .set(Object.fromEntries(columns.map((column, i) => [column, values[i]])) as Updateable<EventsTable>)
    .where('id', '=', values[columns.length] as number).where('version', '=', values[columns.length + 1] as number))
})

/**
 * Applies a partial update and its links if the version is still `version` (compare-and-swap); false
 * when it moved on. An update that would change nothing writes nothing (CONTRACT §5: `modified`, the
 * version and the change log stay as they were).
 */
export async function updateEvent(trx: Tx, update: EventUpdate, version: number): Promise<boolean> {
  const row = (await eventRow(trx, update.id)).rows[0]
  if (row === undefined || row.version !== version) return false
  const set: Updateable<EventsTable> = { ...stored(update.columns), version: version + 1 }
  const series = update.series
  if (series !== undefined) set.recurrence = series.recurrence
  if (update.slug !== undefined) {
    set.slug = update.slug === update.currentSlug ? update.slug : await freeSlug(trx, 'events', update.language, update.slug, update.id)
  }
  const image = await sameImage(trx, row.image_id, update.image) ? undefined : update.image
  if (!changesRow(row, set) && image === undefined && !(await changesLinks(trx, update.id, update.links))) return true
  const imageId = await storeImage(trx, image, update.now)
  if (imageId !== undefined) set.image_id = imageId
  // The set is written again when the series or its dates change (a body repeating them changes nothing).
  const seriesMoved = series !== undefined && SERIES_COLUMNS.some((column) => set[column] !== undefined && set[column] !== row[column])
  if (seriesMoved) set.recurrence_through_utc = series.rows?.throughUtc ?? null
  const columns = (Object.keys(set) as Array<keyof EventsTable>).filter((column) => set[column] !== undefined)
  const result = await eventUpdate(columns.join(','))(trx, ...columns.map((column) => set[column]), update.id, version)
  if (Number(result.numAffectedRows) !== 1) return false
  recordChange(trx, { resource: 'event', id: update.id, action: 'update' })
  if (seriesMoved) {
    if (series.rows !== null) await writeOccurrences(trx, update.id, series.rows.occurrences)
    else {
      // Single again: the one row a single event has, from its dates as they now are.
      const dates = { all_day: set.all_day ?? row.all_day, start_date: set.start_date ?? row.start_date, start_utc: set.start_utc ?? row.start_utc, end_utc: set.end_utc ?? row.end_utc }
      await writeOccurrences(trx, update.id, [singleRowOf(dates)], true)
    }
  }
  if ((set.status !== undefined && set.status !== row.status) || (set.author !== undefined && set.author !== row.author)) {
    await groupSeenOtherwise(trx, 'events', 'event', update.id)
  }
  // The searched texts come from the title, the description and the password: folded only when one is set.
  if (set.title !== undefined || set.description !== undefined || set.password !== undefined) {
    const searched = eventSearchTexts(row)
    const texts = eventSearchTexts({
      title: set.title ?? row.title,
      description: set.description !== undefined ? set.description : row.description,
      password: set.password !== undefined ? set.password : row.password,
    })
    if (texts.title !== searched.title || texts.description !== searched.description) await writeEventSearch(trx, update.id, texts)
  }
  // The terms the event counts for: its links while published (read before the links change).
  const termsLinked = update.links.categories !== undefined || update.links.tags !== undefined
  const wasPublished = update.status === 'publish'
  const isPublished = (set.status ?? update.status) === 'publish'
  const before = wasPublished && (termsLinked || !isPublished) ? await termIdsOfEvent(trx, update.id) : []
  await writeLinks(trx, update.id, update.links, false)
  if (wasPublished !== isPublished || termsLinked) {
    await moveTermCounts(trx, before, isPublished ? await termIdsOfEvent(trx, update.id) : [])
  }
  return true
}

/** Whether the links a write sets differ from the event's: terms as sets, venues and organizers in order, inline ones always. */
async function changesLinks(trx: Tx, eventId: number, links: EventLinks): Promise<boolean> {
  for (const [taxonomy, field] of [['category', 'categories'], ['tag', 'tags']] as const) {
    const ids = links[field]
    if (ids === undefined) continue
    const current = (await trx.selectFrom('event_terms').innerJoin('terms', 'terms.id', 'event_terms.term_id')
      .select('event_terms.term_id').where('event_terms.event_id', '=', eventId).where('terms.taxonomy', '=', taxonomy).execute()).map((r) => r.term_id)
    const wanted = new Set(ids)
    if (wanted.size !== current.length || current.some((id) => !wanted.has(id))) return true
  }
  for (const [entries, table, column] of [[links.venues, 'event_venues', 'venue_id'], [links.organizers, 'event_organizers', 'organizer_id']] as const) {
    if (entries === undefined) continue
    const ids: number[] = []
    for (const entry of entries) {
      if (typeof entry !== 'number') return true
      if (!ids.includes(entry)) ids.push(entry)
    }
    const current = (await trx.selectFrom(table).select(`${column} as id`).where('event_id', '=', eventId).orderBy('position').execute()).map((r) => r.id)
    if (current.length !== ids.length || current.some((id, i) => id !== ids[i])) return true
  }
  return false
}

/** Moves an event to the trash (compare-and-swap; false when the version moved on); its terms no longer count it. */
export async function trashEvent(trx: Tx, id: number, status: string, version: number, stamp: { modified: string; modified_utc: string }): Promise<boolean> {
  if (!(await trashPost(trx, 'events', id, version, stamp))) return false
  if (status === 'publish') await moveTermCounts(trx, await termIdsOfEvent(trx, id), [])
  return true
}

/** Deletes an event for good (compare-and-swap; false when the version moved on); its links go with it. */
export async function deleteEvent(trx: Tx, id: number, status: string, version: number): Promise<boolean> {
  const terms = status === 'publish' ? await termIdsOfEvent(trx, id) : []
  if (!(await deletePost(trx, 'events', id, version))) return false
  await deleteEventSearch(trx, id)
  await moveTermCounts(trx, terms, [])
  return true
}

/** Link rows per INSERT: SQLite binds at most 32,766 parameters per statement, and a body may link more. */
const LINK_CHUNK = 1000

function chunks<T>(list: readonly T[]): T[][] {
  const out: T[][] = []
  for (let i = 0; i < list.length; i += LINK_CHUNK) out.push(list.slice(i, i + LINK_CHUNK))
  return out
}

/**
 * Writes the links `links` names; `created`: the event is new in this unit of work (it has none to replace).
 * Returns the ids of the venues and organizers linked (inline ones created), in order, for those it wrote.
 */
async function writeLinks(trx: Tx, eventId: number, links: EventLinks, created: boolean): Promise<{ venues?: number[]; organizers?: number[] }> {
  const terms: number[] = []
  for (const [taxonomy, field] of [['category', 'categories'], ['tag', 'tags']] as const) {
    const ids = links[field]
    if (ids === undefined) continue
    // The event's links of this taxonomy: each of its few links checked, not every term of the taxonomy listed.
    if (!created) await deferredWrite(trx, termLinksDeleted(trx, eventId, taxonomy))
    terms.push(...ids)
  }
  // Categories and tags in one statement (their ids differ: one table holds both).
  // Links are written without waiting for their answers (PostgreSQL: sent with the next statement, `deferredWrite`).
  for (const chunk of chunks(terms)) await deferredWrite(trx, termLinksInserted(String(chunk.length))(trx, eventId, ...chunk))
  const written: { venues?: number[]; organizers?: number[] } = {}
  if (links.venues !== undefined) {
    const ids = await linkedIds(links.venues, (post) => insertLinked(trx, VENUE, post))
    await replaceLinks(trx, 'event_venues', eventId, ids, created)
    written.venues = ids
  }
  if (links.organizers !== undefined) {
    const ids = await linkedIds(links.organizers, (post) => insertLinked(trx, ORGANIZER, post))
    await replaceLinks(trx, 'event_organizers', eventId, ids, created)
    written.organizers = ids
  }
  return written
}

/** An event's venues or organizers become `ids`, in order. */
async function replaceLinks(trx: Tx, table: 'event_venues' | 'event_organizers', eventId: number, ids: readonly number[], created: boolean): Promise<void> {
  if (!created) await deferredWrite(trx, linksDeleted[table](trx, eventId))
  for (const [n, chunk] of chunks(ids).entries()) {
    await deferredWrite(trx, linksInserted[table](String(chunk.length))(trx, eventId, ...chunk.flatMap((id, i) => [id, n * LINK_CHUNK + i])))
  }
}

/** An event's links to the terms of a taxonomy, deleted: its few links checked, not every term of the taxonomy listed. */
const termLinksDeleted = boundQuery(2, (db, eventId: number, taxonomy: 'category' | 'tag') => db.deleteFrom('event_terms').where('event_id', '=', eventId)
  .where(({ exists, selectFrom }) => exists(selectFrom('terms').select('terms.id').whereRef('terms.id', '=', 'event_terms.term_id').where('terms.taxonomy', '=', taxonomy))))

/** An event's links to as many terms as the key says. */
const termLinksInserted = byShape(64, (key) => boundQuery(1 + Number(key), (db, eventId: number, ...termIds: number[]) =>
  db.insertInto('event_terms').values(termIds.map((termId) => ({ event_id: eventId, term_id: termId })))))

/** An event's venues or organizers, deleted. */
const linksDeleted = {
  event_venues: boundQuery(1, (db, eventId: number) => db.deleteFrom('event_venues').where('event_id', '=', eventId)),
  event_organizers: boundQuery(1, (db, eventId: number) => db.deleteFrom('event_organizers').where('event_id', '=', eventId)),
}

/** An event's links to as many venues or organizers as the key says (each an id and its position). */
const linksInserted = {
  event_venues: byShape(64, (key) => boundQuery(1 + 2 * Number(key), (db, eventId: number, ...pairs: number[]) =>
    db.insertInto('event_venues').values(Array.from({ length: Number(key) }, (_, i) => ({ event_id: eventId, venue_id: pairs[2 * i] as number, position: pairs[2 * i + 1] as number }))))),
  event_organizers: byShape(64, (key) => boundQuery(1 + 2 * Number(key), (db, eventId: number, ...pairs: number[]) =>
    db.insertInto('event_organizers').values(Array.from({ length: Number(key) }, (_, i) => ({ event_id: eventId, organizer_id: pairs[2 * i] as number, position: pairs[2 * i + 1] as number }))))),
}

/** The venues or organizers of an occurrence's change (CONTRACT §17): their ids, the inline ones created in `trx`. */
export async function occurrenceLinkIds(trx: Tx, field: 'venue' | 'organizer', entries: Array<number | NewLinked<VenueColumns>> | Array<number | NewLinked<OrganizerColumns>>): Promise<number[]> {
  return field === 'venue'
    ? linkedIds(entries as Array<number | NewLinked<VenueColumns>>, (post) => insertLinked(trx, VENUE, post))
    : linkedIds(entries as Array<number | NewLinked<OrganizerColumns>>, (post) => insertLinked(trx, ORGANIZER, post))
}

/** The ids to link, in order and without repeats, creating the inline records on the way. */
async function linkedIds<Own>(entries: Array<number | NewLinked<Own>>, create: (post: NewLinked<Own>) => Promise<number>): Promise<number[]> {
  const ids: number[] = []
  for (const entry of entries) {
    const id = typeof entry === 'number' ? entry : await create(entry)
    if (!ids.includes(id)) ids.push(id)
  }
  return ids
}
