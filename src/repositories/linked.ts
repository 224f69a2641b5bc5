/**
 * Venues and organizers ("linked posts" of events) share every rule but their own fields: lists with
 * their filters, lookup by id or slug, create, partial update, trash and delete. The rules live here
 * once; `venues.ts` and `organizers.ts` describe their fields, rows and records as a `LinkedKind`.
 */
import { sql, type Expression, type Kysely, type SqlBool, type Transaction } from 'kysely'
import type { Database } from '../db/schema.js'
import { containsText } from '../db/dialect.js'
import { invalidParam } from '../http/errors.js'
import type { Language, WritableStatus } from '../contract.js'
import { formatUtc } from '../lib/dates.js'
import type { ListScope } from '../lib/rights.js'
import {
  checkAuthor, deletePost, freeSlug, imagesOf, isHttpUrl, modifiedNow, nowDates, provisionalSlug, publicationDates,
  resolveImage, resolvePostId, settleNewPost, translationGroupFor, trashPost, wantedSlug,
  type ImageRecord, type PostRef,
} from './posts.js'
import type { ReadCache } from './read-cache.js'
import { translationsOf } from './translations.js'

type Db = Kysely<Database> | Transaction<Database>

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

export interface RecordExtras {
  image: ImageRecord | null
  translations: Record<string, number>
  apiUrl: string
  geoloc: boolean
  /** Assembled records until the next change (none: always assembled). */
  cache?: ReadCache
}

/** Values the shared rules settle for a write; the kind adds its own fields. */
export interface CommonValues {
  name?: string
  description?: string | null
  author?: number | null
  status?: string
  slug?: string
  image_id?: number | null
  date?: string
  date_utc?: string
  modified: string
  modified_utc: string
}

export interface LinkedKind<Row extends LinkedRow, Rec, Create, Update, Own> {
  table: 'venues' | 'organizers'
  resource: 'venue' | 'organizer'
  collection: 'venues' | 'organizers'
  link: { table: 'event_venues' | 'event_organizers'; column: 'venue_id' | 'organizer_id' }
  /** Columns `search` looks into. */
  searchColumns: readonly string[]
  rows(db: Db, ids: readonly number[]): Promise<Row[]>
  toRecord(row: Row, extras: RecordExtras): Rec
  /** The name, description and the kind's own fields of a body, checked (400 naming a bad field). */
  fields(input: Create | Update, geoloc: boolean): { name?: string; description?: string | null; own: Own }
  insert(trx: Transaction<Database>, values: CommonValues & { language: string; translation_group: number | null; name: string; slug: string; status: string; date: string; date_utc: string }, own: Own): Promise<number>
  update(trx: Transaction<Database>, id: number, version: number, values: CommonValues, own: Own): Promise<boolean>
}

/** A kind seen only through what every kind shares (rows, records, tables). */
// The write-side type parameters do not matter to the read-side helpers.
type AnyKind<R extends LinkedRow, Rec = unknown> = Pick<LinkedKind<R, Rec, never, never, never>, 'table' | 'resource' | 'collection' | 'link' | 'searchColumns' | 'rows' | 'toRecord'>

export interface LinkedListQuery {
  language: Language
  scope: ListScope
  offset: number
  limit: number
  search?: string
  event?: number
  hasEvents?: boolean
  onlyWithUpcoming?: boolean
  nowUtc: string
}

export interface Repo {
  db: Kysely<Database>
  apiUrl: string
  siteTz: string
  defaultLanguage: Language
  geoloc: boolean
  /** Assembled records until the next change (none: always assembled). */
  cache?: ReadCache
}

/** Events that count for `has_events`: neither draft, pending nor trashed. */
const COUNTED_EVENT = sql<SqlBool>`e.status not in ('draft', 'pending', 'trash')`

function linkedEvents<R extends LinkedRow>(kind: AnyKind<R>, extra: Expression<SqlBool>): Expression<SqlBool> {
  return sql<SqlBool>`exists (select 1 from ${sql.table(kind.link.table)} l inner join events e on e.id = l.event_id
    where l.${sql.ref(kind.link.column)} = ${sql.ref(`${kind.table}.id`)} and ${COUNTED_EVENT} and ${extra})`
}

function listConditions<R extends LinkedRow>(repo: Repo, kind: AnyKind<R>, q: LinkedListQuery, scope: Expression<SqlBool>): Expression<SqlBool> {
  const ref = (column: string) => sql.ref(`${kind.table}.${column}`)
  const conditions: Expression<SqlBool>[] = [sql<SqlBool>`${ref('language')} = ${q.language}`, scope]
  if (q.search !== undefined && q.search !== '') conditions.push(containsText(repo.db, kind.searchColumns.map(ref), q.search))
  if (q.event !== undefined) {
    conditions.push(sql<SqlBool>`${ref('id')} in (select ${sql.ref(kind.link.column)} from ${sql.table(kind.link.table)} where event_id = ${q.event})`)
  }
  if (q.hasEvents === true) conditions.push(linkedEvents(kind, sql<SqlBool>`1 = 1`))
  if (q.hasEvents === false) conditions.push(sql<SqlBool>`not ${linkedEvents(kind, sql<SqlBool>`1 = 1`)}`)
  if (q.onlyWithUpcoming === true) conditions.push(linkedEvents(kind, sql<SqlBool>`e.start_utc >= ${q.nowUtc}`))
  return sql<SqlBool>`${sql.join(conditions, sql` and `)}`
}

export async function listLinked<R extends LinkedRow, Rec>(repo: Repo, kind: AnyKind<R, Rec>, q: LinkedListQuery, scope: Expression<SqlBool>): Promise<{ total: number; records: () => Promise<Rec[]> }> {
  const where = listConditions(repo, kind, q, scope)
  const counting = repo.db.selectFrom(kind.table).select((eb) => eb.fn.countAll<number>().as('n')).where(where)
  const compute = async () => Number((await counting.executeTakeFirstOrThrow()).n)
  // The compiled statement and its parameters say exactly what is counted.
  const compiled = counting.compile()
  const key = `${compiled.sql}\u0000${JSON.stringify(compiled.parameters)}`
  const total = repo.cache === undefined ? await compute() : await repo.cache.count(repo.db, key, compute)
  return {
    total,
    records: async () => {
      const page = async () => (await repo.db.selectFrom(kind.table).select('id').where(where)
        .orderBy('date_utc', 'desc').orderBy('id', 'asc').limit(q.limit).offset(q.offset).execute()).map((r) => r.id)
      const ids = repo.cache === undefined ? await page() : await repo.cache.ids(repo.db, `${key}:${q.offset}:${q.limit}`, page)
      return recordsOf(repo, kind, ids)
    },
  }
}

export interface Found<R, Rec> {
  row: R
  record: Rec
}

/**
 * Rows and records for ids, in that order, with images and translations batched (a bounded number of
 * queries); what was assembled since the last change comes from the read cache.
 */
export async function foundOf<R extends LinkedRow, Rec>(repo: Pick<Repo, 'db' | 'apiUrl' | 'geoloc' | 'cache'>, kind: AnyKind<R, Rec>, ids: readonly number[]): Promise<Array<Found<R, Rec>>> {
  if (ids.length === 0) return []
  const { cache } = repo
  const generation = cache === undefined ? undefined : await cache.sync(repo.db)
  const key = (id: number) => `${kind.table}:${id}`
  const byId = new Map<number, Found<R, Rec>>()
  if (cache !== undefined && generation !== undefined) {
    for (const id of ids) {
      const hit = cache.get<Found<R, Rec>>(key(id))
      if (hit !== undefined) byId.set(id, hit)
    }
  }
  const missing = byId.size === 0 ? ids : ids.filter((id) => !byId.has(id))
  if (missing.length > 0) {
    const rows = await kind.rows(repo.db, missing)
    const [images, translations] = await Promise.all([imagesOf(repo.db, rows.map((r) => r.image_id)), translationsOf(repo.db, kind.table, rows)])
    for (const row of rows) {
      const record = kind.toRecord(row, {
        image: row.image_id === null ? null : images.get(row.image_id) ?? null,
        translations: translations.get(row.id) ?? {},
        apiUrl: repo.apiUrl,
        geoloc: repo.geoloc,
      })
      const found = { row, record }
      byId.set(row.id, found)
      cache?.set(generation, key(row.id), found)
    }
  }
  return ids.flatMap((id) => byId.get(id) ?? [])
}

/** Records for ids, in that order (see `foundOf`). */
export async function recordsOf<R extends LinkedRow, Rec>(repo: Pick<Repo, 'db' | 'apiUrl' | 'geoloc' | 'cache'>, kind: AnyKind<R, Rec>, ids: readonly number[]): Promise<Rec[]> {
  return (await foundOf(repo, kind, ids)).map((f) => f.record)
}

/** The record `ref` names in `language`, or undefined. */
export async function findLinked<R extends LinkedRow, Rec>(repo: Repo, kind: AnyKind<R, Rec>, ref: PostRef, language: Language | undefined): Promise<Found<R, Rec> | undefined> {
  const id = await resolvePostId(repo.db, kind.table, ref, language, repo.defaultLanguage)
  if (id === undefined) return undefined
  const [found] = await foundOf(repo, kind, [id])
  return found
}

export interface WriteInput {
  author?: number
  date?: string
  date_utc?: string
  status?: WritableStatus
  slug?: string
  image?: number | string | null
}

export interface WriteContext {
  callerId: number
  mayAssignAuthor: boolean
  status: string | undefined
  now: Date
  /** The status of a venue or organizer created inline by an event write, from its own `status` (CONTRACT §5). */
  inlineStatus?: (requested: WritableStatus | undefined) => string
}

/** Creates a linked post in `trx` (also used for venues and organizers created inline by an event). */
export async function insertLinked<R extends LinkedRow, Create extends WriteInput, O>(
  trx: Transaction<Database>, repo: Repo, kind: LinkedKind<R, unknown, Create, unknown, O>, input: Create,
  language: Language, translationOf: number | undefined, write: WriteContext,
): Promise<number> {
  const fields = kind.fields(input, repo.geoloc)
  const name = fields.name
  if (name === undefined) throw invalidParam(kind.resource, 'required')
  // The author named must exist (400) before the row refers to it; the right to name one comes last.
  await checkAuthor(trx, input.author, write.callerId, true)
  const group = translationOf === undefined ? null : await translationGroupFor(trx, kind.table, kind.resource, translationOf, language)
  const dates = publicationDates(input, repo.siteTz, nowDates(write.now, repo.siteTz))
  const wanted = wantedSlug(input.slug, name)
  const slug = wanted === '' ? '' : await freeSlug(trx, kind.table, language, wanted, undefined)
  const imageId = await resolveImage(trx, input.image, write.now)
  // The right to set `author` (403) after every field of the body (400): CONTRACT §1.
  await checkAuthor(trx, input.author, write.callerId, write.mayAssignAuthor)
  const id = await kind.insert(trx, {
    language,
    translation_group: group,
    name,
    description: fields.description ?? null,
    author: input.author ?? write.callerId,
    status: write.status ?? 'draft',
    slug: provisionalSlug(kind.resource, slug),
    image_id: imageId ?? null,
    ...dates,
    ...modifiedNow(write.now, repo.siteTz),
  }, fields.own)
  await settleNewPost(trx, kind.table, id, kind.resource, language, slug, group)
  return id
}

/**
 * The checks of an update body that need no record, run before the record is looked up (CONTRACT §1:
 * fields are 400 before 404/410, 403 and 412): the kind's own fields, dates, the image and the author
 * named. Writes nothing; `updateLinked` applies the same rules again when it writes.
 */
export async function checkUpdateInput<R extends LinkedRow, Update extends WriteInput, O>(
  repo: Repo, kind: LinkedKind<R, unknown, unknown, Update, O>, input: Update,
): Promise<void> {
  kind.fields(input, repo.geoloc)
  publicationDates(input, repo.siteTz, { date: '', date_utc: '' })
  const image = input.image
  if (typeof image === 'number' || (typeof image === 'string' && /^\d+$/.test(image))) {
    const id = Number(image)
    const row = Number.isSafeInteger(id) ? await repo.db.selectFrom('images').select('id').where('id', '=', id).executeTakeFirst() : undefined
    if (row === undefined) throw invalidParam('image', 'unknownImage')
  } else if (typeof image === 'string' && !isHttpUrl(image)) {
    throw invalidParam('image', 'invalidImage')
  }
  if (input.author !== undefined) {
    const author = input.author
    const row = Number.isSafeInteger(author) ? await repo.db.selectFrom('users').select('id').where('id', '=', author).executeTakeFirst() : undefined
    if (row === undefined) throw invalidParam('author', 'unknownUser')
  }
}

/** Applies a partial update (compare-and-swap on `expectedVersion`); false when the version moved on. */
export async function updateLinked<R extends LinkedRow, Update extends WriteInput, O>(
  trx: Transaction<Database>, repo: Repo, kind: LinkedKind<R, unknown, unknown, Update, O>, current: R & { date: string; date_utc: string },
  input: Update, expectedVersion: number, write: WriteContext,
): Promise<boolean> {
  const fields = kind.fields(input, repo.geoloc)
  if (input.author !== undefined) await checkAuthor(trx, input.author, write.callerId, write.mayAssignAuthor)
  const values: CommonValues = { ...modifiedNow(write.now, repo.siteTz) }
  if (fields.name !== undefined) values.name = fields.name
  if (fields.description !== undefined) values.description = fields.description
  if (input.author !== undefined) values.author = input.author
  if (write.status !== undefined) values.status = write.status
  if (input.date !== undefined || input.date_utc !== undefined) Object.assign(values, publicationDates(input, repo.siteTz, current))
  if (input.slug !== undefined) {
    const wanted = wantedSlug(input.slug, fields.name ?? current.name) || `${kind.resource}-${current.id}`
    values.slug = wanted === current.slug ? wanted : await freeSlug(trx, kind.table, current.language, wanted, current.id)
  }
  const image = await resolveImage(trx, input.image, write.now)
  if (image !== undefined) values.image_id = image
  return kind.update(trx, current.id, expectedVersion, values, fields.own)
}

export async function trashLinked(repo: Repo, kind: AnyKind<LinkedRow>, row: LinkedRow, version: number, now: Date): Promise<void> {
  await trashPost(repo.db, kind.table, row.id, version, modifiedNow(now, repo.siteTz))
}

export async function deleteLinked(repo: Repo, kind: AnyKind<LinkedRow>, row: LinkedRow, version: number): Promise<void> {
  await deletePost(repo.db, kind.table, row.id, version)
}

/** Whether an event with this id exists (the `event` filter must name one). */
export async function isEvent(db: Kysely<Database>, id: number): Promise<boolean> {
  if (!Number.isSafeInteger(id)) return false
  return (await db.selectFrom('events').select('id').where('id', '=', id).executeTakeFirst()) !== undefined
}

export function nowUtc(now: Date): string {
  return formatUtc(now)
}
