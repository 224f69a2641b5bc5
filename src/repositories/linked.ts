/**
 * Venues and organizers ("linked posts" of events) are stored alike but for their own columns: lists
 * with their filters, records by id (remembered by the read cache), create, partial update. The queries
 * live here once; `venues.ts` and `organizers.ts` describe their rows, records and own columns as a
 * `LinkedKind`.
 */
import { sql, type CompiledQuery, type Expression, type SqlBool } from 'kysely'
import type { Image, Language } from '../contract.js'
import { containsText, inIdList, probedPerRow } from '../db/dialect.js'
import { boundQuery, executeCompiled } from '../db/prepared.js'
import type { OrganizerRow, VenueRow } from '../db/schema.js'
import { recordChange, type Db, type Tx } from '../db/unit-of-work.js'
import type { ListScope } from '../lib/rights.js'
import { imagesOf, sameImage, storeImage, type ImageChoice } from './images.js'
import { changesRow, eventsShowingChanged, resolvePostId, settleNewPost, type PostRef } from './posts.js'
import { recordsById, rememberedResult } from './read-cache.js'
import type { Site } from './site.js'
import { freeSlug, provisionalSlug } from './slugs.js'
import { groupSeenOtherwise, translationsOf } from './translations.js'

/** Columns every linked post has, as read back from storage. */
export interface LinkedRow {
  id: number
  language: string
  translation_group: number | null
  author: number | null
  status: string
  name: string
  slug: string
  image_id: number | null
  version: number
}

/** Columns every linked post writes, as the handler decided them. */
export type CommonColumns = Pick<VenueRow & OrganizerRow, 'name' | 'description' | 'author' | 'status' | 'date' | 'date_utc' | 'modified' | 'modified_utc'>

export interface LinkedKind<Row extends LinkedRow, Rec, Own> {
  table: 'venues' | 'organizers'
  resource: 'venue' | 'organizer'
  link: { table: 'event_venues' | 'event_organizers'; column: 'venue_id' | 'organizer_id' }
  /** Columns `search` looks into. */
  searchColumns: readonly string[]
  rows(db: Db, ids: readonly number[]): Promise<Row[]>
  toRecord(row: Row, extras: { image: Image | null; translations: Record<string, number>; site: Site }): Rec
  insert(trx: Tx, values: CommonColumns & { language: string; translation_group: number | null; slug: string; image_id: number | null }, own: Own): Promise<number>
  /** The kind's own columns as a write stores them (what `insert` and `update` write of `own`). */
  ownColumns(own: Own): object
  update(trx: Tx, id: number, version: number, values: Partial<CommonColumns> & { slug?: string; image_id?: number | null; modified: string; modified_utc: string }, own: Own): Promise<boolean>
}

/** A kind seen only through what every kind shares (rows, records, tables). */
// The write-side type parameter does not matter to the read-side queries.
type AnyKind<R extends LinkedRow, Rec = unknown> = Pick<LinkedKind<R, Rec, never>, 'table' | 'resource' | 'link' | 'searchColumns' | 'rows' | 'toRecord'>

/** A record, with what its writes need that the record does not say. */
export interface StoredLinked<Rec> {
  record: Rec
  version: number
  name: string
}

export interface LinkedListQuery {
  language: Language
  scope: ListScope
  offset: number
  limit: number
  search?: string
  event?: number
  hasEvents?: boolean
  onlyWithUpcoming?: boolean
  /** The events the caller may read, which alone count for `hasEvents` and `onlyWithUpcoming` (CONTRACT §6; `countedEventsScope`). */
  eventReader: ListScope
  /** `modified_after` / `modified_before`: exact UTC instants compared with `modified_utc`. */
  modifiedAfter?: string
  modifiedBefore?: string
  nowUtc: string
}

/**
 * Events that count for `has_events` and `only_with_upcoming`: never draft, pending or trashed, and only
 * those the caller may read (CONTRACT §6): a private event counts for editors and for its own author, so
 * that an anonymous caller learns nothing of it from a venue's presence in the list.
 */
function countedEvent(reader: ListScope): Expression<SqlBool> {
  if (reader.kind === 'refused') return sql<SqlBool>`1 = 0`
  const readable = reader.statuses.filter((s) => s === 'publish' || s === 'private')
  if (readable.length === 0) return sql<SqlBool>`1 = 0`
  const inStatuses = sql<SqlBool>`e.status in (${sql.join(readable.map((s) => sql`${s}`))})`
  if (reader.kind === 'all') return inStatuses
  return sql<SqlBool>`(${inStatuses} and (e.status = 'publish' or e.author = ${reader.owner}))`
}

/**
 * Whether a counted event (and `extra`) links the venue or organizer. `perRow`: checked for each record
 * through the links' index (`probedPerRow`), for `has_events`, whose events are bound by status alone,
 * too many to start from; `only_with_upcoming` may start from the events in its window.
 */
function linkedEvents<R extends LinkedRow>(db: Db, kind: AnyKind<R>, reader: ListScope, extra: Expression<SqlBool>, perRow = false): Expression<SqlBool> {
  return sql<SqlBool>`exists (select 1 from ${sql.table(kind.link.table)} l inner join events e on e.id = l.event_id
    where l.${sql.ref(kind.link.column)} = ${sql.ref(`${kind.table}.id`)} and ${countedEvent(reader)} and ${extra}${perRow ? probedPerRow(db) : sql``})`
}

function listConditions<R extends LinkedRow>(db: Db, kind: AnyKind<R>, q: LinkedListQuery, scope: Expression<SqlBool>): Expression<SqlBool> {
  const ref = (column: string) => sql.ref(`${kind.table}.${column}`)
  const conditions: Expression<SqlBool>[] = [sql<SqlBool>`${ref('language')} = ${q.language}`, scope]
  if (q.search !== undefined && q.search !== '') conditions.push(containsText(db, kind.searchColumns.map(ref), q.search))
  if (q.event !== undefined) {
    conditions.push(sql<SqlBool>`${ref('id')} in (select ${sql.ref(kind.link.column)} from ${sql.table(kind.link.table)} where event_id = ${q.event})`)
  }
  if (q.hasEvents === true) conditions.push(linkedEvents(db, kind, q.eventReader, sql<SqlBool>`1 = 1`, true))
  if (q.hasEvents === false) conditions.push(sql<SqlBool>`not ${linkedEvents(db, kind, q.eventReader, sql<SqlBool>`1 = 1`, true)}`)
  if (q.onlyWithUpcoming === true) conditions.push(linkedEvents(db, kind, q.eventReader, sql<SqlBool>`e.start_utc >= ${q.nowUtc}`))
  if (q.modifiedAfter !== undefined) conditions.push(sql<SqlBool>`${ref('modified_utc')} > ${q.modifiedAfter}`)
  if (q.modifiedBefore !== undefined) conditions.push(sql<SqlBool>`${ref('modified_utc')} < ${q.modifiedBefore}`)
  return sql<SqlBool>`${sql.join(conditions, sql` and `)}`
}

/** A list's total, and its page's records when asked for (not at all past the last page). */
export async function listLinked<R extends LinkedRow, Rec>(db: Db, site: Site, kind: AnyKind<R, Rec>, q: LinkedListQuery, scope: Expression<SqlBool>): Promise<{ total: number; records: () => Promise<Rec[]> }> {
  const where = listConditions(db, kind, q, scope)
  const counting = db.selectFrom(kind.table).select((eb) => eb.fn.countAll<number>().as('n')).where(where)
  // The compiled statement and its parameters say exactly what is counted.
  const compiled = counting.compile()
  const key = `${kind.table}:${compiled.sql}\u0000${JSON.stringify(compiled.parameters)}`
  const total = await rememberedResult(db, `count:${key}`, async () => Number((await counting.executeTakeFirstOrThrow()).n))
  return {
    total,
    records: async () => {
      const ids = await rememberedResult(db, `ids:${key}:${q.offset}:${q.limit}`, async () => (await db.selectFrom(kind.table).select('id').where(where)
        .orderBy('date_utc', 'desc').orderBy('id', 'asc').limit(q.limit).offset(q.offset).execute()).map((r) => r.id))
      return linkedRecords(db, site, kind, ids)
    },
  }
}

/**
 * Stored records for ids, in that order, with images and translations batched (a bounded number of
 * queries); remembered by the read cache.
 */
async function storedLinked<R extends LinkedRow, Rec>(db: Db, site: Site, kind: AnyKind<R, Rec>, ids: readonly number[]): Promise<Array<StoredLinked<Rec>>> {
  return recordsById(db, kind.resource, ids, async (missing) => {
    const rows = await kind.rows(db, missing)
    const [images, translations] = await Promise.all([imagesOf(db, rows.map((r) => r.image_id)), translationsOf(db, kind.table, rows)])
    return new Map(rows.map((row) => [row.id, {
      record: kind.toRecord(row, {
        image: row.image_id === null ? null : images.get(row.image_id) ?? null,
        translations: translations.get(row.id) ?? {},
        site,
      }),
      version: row.version,
      name: row.name,
    }]))
  })
}

/**
 * The rows of venues or organizers by id, for a write's answer: `known`, rows of `kind.table` the caller read whole in
 * the same transaction and unchanged since (not read again); the others read (not remembered).
 */
export async function linkedRows<R extends LinkedRow>(db: Db, kind: AnyKind<R>, ids: readonly number[], known: ReadonlyMap<number, LinkedRow>): Promise<R[]> {
  const unknown = known.size === 0 ? ids : ids.filter((id) => !known.has(id))
  const rows = unknown.length === 0 ? [] : await kind.rows(db, unknown)
  if (unknown !== ids) for (const id of ids) if (known.has(id)) rows.push(known.get(id) as R)
  return rows
}

/** Records of `rows` for `ids`, in that order, with their images and `translations` (read by the caller). */
export function linkedRecordsOf<R extends LinkedRow, Rec>(
  site: Site, kind: AnyKind<R, Rec>, ids: readonly number[], rows: readonly R[], images: ReadonlyMap<number, Image>, translations: ReadonlyMap<number, Record<string, number>>,
): Rec[] {
  const byId = new Map(rows.map((row) => [row.id, row]))
  return ids.flatMap((id) => {
    const row = byId.get(id)
    return row === undefined ? [] : [kind.toRecord(row, { image: row.image_id === null ? null : images.get(row.image_id) ?? null, translations: translations.get(row.id) ?? {}, site })]
  })
}

/** Records for ids, in that order (see `storedLinked`). */
export async function linkedRecords<R extends LinkedRow, Rec>(db: Db, site: Site, kind: AnyKind<R, Rec>, ids: readonly number[]): Promise<Rec[]> {
  return (await storedLinked(db, site, kind, ids)).map((s) => s.record)
}

/** The record `ref` names in `language` (see `resolvePostId`), or undefined. */
export async function findLinked<R extends LinkedRow, Rec>(db: Db, site: Site, kind: AnyKind<R, Rec>, ref: PostRef, language: Language | undefined): Promise<StoredLinked<Rec> | undefined> {
  const id = await resolvePostId(db, kind.table, ref, language)
  if (id === undefined) return undefined
  const [stored] = await storedLinked(db, site, kind, [id])
  return stored
}

/** A new linked post, as the handler checked it. */
export interface NewLinked<Own> {
  language: string
  translationGroup: number | null
  columns: CommonColumns
  /** The slug asked for (empty: from the name, else `<resource>-<id>`). */
  slug: string
  image: ImageChoice
  own: Own
  now: Date
}

/** Creates a linked post (also for venues and organizers created inline by an event write); returns its id. */
export async function insertLinked<R extends LinkedRow, Own>(trx: Tx, kind: LinkedKind<R, unknown, Own>, post: NewLinked<Own>): Promise<number> {
  const slug = post.slug === '' ? '' : await freeSlug(trx, kind.table, post.language, post.slug, undefined)
  const imageId = await storeImage(trx, post.image, post.now)
  const id = await kind.insert(trx, {
    ...post.columns,
    language: post.language,
    translation_group: post.translationGroup,
    slug: provisionalSlug(kind.resource, slug),
    image_id: imageId ?? null,
  }, post.own)
  await settleNewPost(trx, kind.table, id, kind.resource, post.language, slug, post.translationGroup)
  recordChange(trx, { resource: kind.resource, id, action: 'create' }, { language: post.language, status: post.columns.status, author: post.columns.author ?? null })
  return id
}

/** A partial update of a linked post, as the handler checked it. */
export interface LinkedUpdate<Own> {
  id: number
  language: string
  columns: Partial<CommonColumns> & { modified: string; modified_utc: string }
  /** The slug asked for, or undefined to keep `currentSlug`. */
  slug: string | undefined
  currentSlug: string
  image: ImageChoice
  own: Own
  now: Date
}

/**
 * Applies a partial update if the version is still `version` (compare-and-swap); false when it moved on.
 * An update that would change nothing writes nothing (CONTRACT §5: `modified`, the version and the
 * change log stay as they were).
 */
export async function updateLinked<R extends LinkedRow, Own>(trx: Tx, kind: LinkedKind<R, unknown, Own>, update: LinkedUpdate<Own>, version: number): Promise<boolean> {
  const [row] = await kind.rows(trx, [update.id])
  if (row === undefined || row.version !== version) return false
  const values: Parameters<LinkedKind<R, unknown, Own>['update']>[3] = { ...update.columns }
  if (update.slug !== undefined) {
    values.slug = update.slug === update.currentSlug ? update.slug : await freeSlug(trx, kind.table, update.language, update.slug, update.id)
  }
  const imageChoice = await sameImage(trx, row.image_id, update.image) ? undefined : update.image
  if (imageChoice === undefined && !changesRow(row, { ...values, ...kind.ownColumns(update.own) })) return true
  const image = await storeImage(trx, imageChoice, update.now)
  if (image !== undefined) values.image_id = image
  if (!(await kind.update(trx, update.id, version, values, update.own))) return false
  recordChange(trx, { resource: kind.resource, id: update.id, action: 'update' })
  const seenOtherwise = (values.status !== undefined && values.status !== row.status) || (values.author !== undefined && values.author !== row.author)
  if (seenOtherwise) {
    await eventsShowingChanged(trx, kind.table, update.id)
    await groupSeenOtherwise(trx, kind.table, kind.resource, update.id)
  }
  return true
}

/**
 * The author and status of a record of `table` with this id that could be linked to an event in
 * `language` (it exists there, not in the trash), or undefined; whether the caller may read it is the
 * handler's to decide.
 */
export async function linkable(db: Db, table: 'venues' | 'organizers', id: number, language: Language): Promise<LinkedRow | undefined> {
  if (!Number.isSafeInteger(id)) return undefined
  return (await executeCompiled(db, linkableRow[table](db, id, language))).rows[0]
}

/** The statement with which `linkable` reads (none for an id no row can have), for a read sent ahead (dialect.ts `readAhead`). */
export function linkableRead(db: Db, table: 'venues' | 'organizers', id: number, language: Language): CompiledQuery | undefined {
  return Number.isSafeInteger(id) ? linkableRow[table](db, id, language) : undefined
}

/**
 * The row of a venue or organizer in a language, unless in the trash: its author and status say whether it may be
 * linked, and the whole row is what a create's answer shows of it (event-records.ts `writtenEventRecord`).
 */
const linkableOf = (table: 'venues' | 'organizers') => boundQuery(2, (db, id: number, language: Language) =>
  db.selectFrom(table).selectAll().where('id', '=', id).where('language', '=', language).where('status', '!=', 'trash'))
const linkableRow = { venues: linkableOf('venues'), organizers: linkableOf('organizers') }

/**
 * The author and status of each record of `table` with one of these ids (the list filters check them), by
 * id; remembered until the table changes (never to be changed by the caller).
 */
export async function linkedOwners(db: Db, table: 'venues' | 'organizers', ids: readonly number[]): Promise<ReadonlyMap<number, { author: number | null; status: string; language: string }>> {
  return rememberedResult(db, `owners:${table}:${JSON.stringify(ids)}`, async () => {
    const rows = await db.selectFrom(table).select(['id', 'author', 'status', 'language']).where(inIdList(db, sql.ref('id'), ids)).execute()
    return new Map(rows.map((r) => [r.id, { author: r.author, status: r.status, language: r.language }]))
  })
}
