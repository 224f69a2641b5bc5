/**
 * What events, venues and organizers share in storage: lookup by id or slug in a language, slugs unique
 * per language, translation groups, publication dates, images, trash and conditional writes.
 */
import { sql, type Expression, type Kysely, type SqlBool, type Transaction } from 'kysely'
import type { Database } from '../db/schema.js'
import { ApiError, invalidParam, preconditionFailed } from '../http/errors.js'
import type { Language } from '../contract.js'
import { formatUtc, parseBodyDate, utcToWall } from '../lib/dates.js'
import type { ListScope } from '../lib/rights.js'
import { MAX_SLUG_LENGTH, slugify, uniqueSlug } from '../lib/slug.js'

export type PostTable = 'events' | 'venues' | 'organizers'
type Db = Kysely<Database> | Transaction<Database>

export type PostRef = { id: number } | { slug: string }

/**
 * The id of the record that `ref` names: by id, that record (or, with `language`, its version in that
 * language); by slug, the record with that slug in `language`.
 */
export async function resolvePostId(db: Db, table: PostTable, ref: PostRef, language: Language | undefined, defaultLanguage: Language): Promise<number | undefined> {
  if ('slug' in ref) {
    const row = await db.selectFrom(table).select('id')
      .where('language', '=', language ?? defaultLanguage).where('slug', '=', ref.slug).executeTakeFirst()
    return row?.id
  }
  if (!Number.isSafeInteger(ref.id)) return undefined
  const row = await db.selectFrom(table).select(['id', 'language', 'translation_group']).where('id', '=', ref.id).executeTakeFirst()
  if (row === undefined || language === undefined || row.language === language) return row?.id
  const version = await db.selectFrom(table).select('id')
    .where('translation_group', '=', row.translation_group ?? row.id).where('language', '=', language).executeTakeFirst()
  return version?.id
}

/** `wanted`, or the first free `wanted-N`, among the table's slugs in this language. */
export async function freeSlug(db: Db, table: PostTable, language: string, wanted: string, self: number | undefined): Promise<string> {
  const prefix = wanted.slice(0, MAX_SLUG_LENGTH - 12)
  let query = db.selectFrom(table).select('slug').where('language', '=', language)
    // Slugs hold only [a-z0-9-], all below '~': this range is "starts with prefix", served by the index.
    .where('slug', '>=', prefix).where('slug', '<', `${prefix}~`)
  if (self !== undefined) query = query.where('id', '!=', self)
  const taken = new Set((await query.execute()).map((r) => r.slug))
  return uniqueSlug(wanted, taken)
}

/** A slug from the explicit one, else from the name; `<singular>-<id>` comes later when nothing is left. */
export function wantedSlug(explicit: string | undefined, name: string): string {
  return slugify(explicit ?? '') || slugify(name)
}

/**
 * Gives a new record its final slug and translation group once its id is known: the slug `<singular>-<id>`
 * when the name gave none, and its own id as group unless it joined another's.
 */
export async function settleNewPost(trx: Transaction<Database>, table: PostTable, id: number, singular: string, language: string, slug: string, group: number | null): Promise<void> {
  const finalSlug = slug === '' ? await freeSlug(trx, table, language, `${singular}-${id}`, id) : slug
  await trx.updateTable(table).set({ slug: finalSlug, translation_group: group ?? id }).where('id', '=', id).execute()
}

/** A slug that cannot clash while the real one waits for the new id. */
export function provisionalSlug(singular: string, slug: string): string {
  return slug === '' ? `${singular}--provisional-${process.hrtime.bigint().toString(36)}` : slug
}

/** The translation group to join for `translation_of`, refusing a second version in one language. */
export async function translationGroupFor(db: Db, table: PostTable, resource: string, source: number, language: string): Promise<number> {
  const row = Number.isSafeInteger(source)
    ? await db.selectFrom(table).select(['id', 'translation_group']).where('id', '=', source).executeTakeFirst()
    : undefined
  if (row === undefined) throw invalidParam('translation_of', 'translationOfMissing', { resource })
  const group = row.translation_group ?? row.id
  const clash = await db.selectFrom(table).select('id').where('translation_group', '=', group).where('language', '=', language).executeTakeFirst()
  if (clash !== undefined) throw invalidParam('translation_of', 'translationExists')
  return group
}

export interface PublicationDates {
  date: string
  date_utc: string
}

/**
 * Publication dates from `date` (site wall time) or `date_utc` (UTC; wins when both are sent), else
 * `fallback` (now on create, the stored ones on update).
 */
export function publicationDates(input: { date?: string; date_utc?: string }, siteTz: string, fallback: PublicationDates): PublicationDates {
  let utc: string | undefined
  if (input.date_utc !== undefined) {
    utc = parseBodyDate(input.date_utc, 'UTC') ?? undefined
    if (utc === undefined) throw invalidParam('date_utc', 'invalidDate')
  } else if (input.date !== undefined) {
    utc = parseBodyDate(input.date, siteTz) ?? undefined
    if (utc === undefined) throw invalidParam('date', 'invalidDate')
  }
  if (utc === undefined) return fallback
  try {
    return { date: utcToWall(utc, siteTz), date_utc: utc }
  } catch {
    // An instant at the edge of years 0001–9999 with no wall time in the site's zone.
    throw invalidParam(input.date_utc !== undefined ? 'date_utc' : 'date', 'invalidDate')
  }
}

export function modifiedNow(now: Date, siteTz: string): { modified: string; modified_utc: string } {
  const utc = formatUtc(now)
  return { modified: utcToWall(utc, siteTz), modified_utc: utc }
}

export function nowDates(now: Date, siteTz: string): PublicationDates {
  const utc = formatUtc(now)
  return { date: utcToWall(utc, siteTz), date_utc: utc }
}

/**
 * The image to store for a write's `image`: undefined keeps it, null removes it, an id must name an
 * image record, an absolute http(s) URL becomes a new image record.
 */
export async function resolveImage(db: Db, value: number | string | null | undefined, now: Date): Promise<number | null | undefined> {
  if (value === undefined || value === null) return value
  if (typeof value === 'number') {
    const row = Number.isSafeInteger(value) ? await db.selectFrom('images').select('id').where('id', '=', value).executeTakeFirst() : undefined
    if (row === undefined) throw invalidParam('image', 'unknownImage')
    return row.id
  }
  if (/^\d+$/.test(value)) return resolveImage(db, Number(value), now)
  if (!isHttpUrl(value)) throw invalidParam('image', 'invalidImage')
  const { id } = await db.insertInto('images').values({ url: value, created_at: formatUtc(now) }).returning('id').executeTakeFirstOrThrow()
  return id
}

export interface ImageRecord {
  id: number
  url: string
}

/** The image records of a page of rows, in one query. */
export async function imagesOf(db: Db, ids: ReadonlyArray<number | null>): Promise<Map<number, ImageRecord>> {
  const wanted = [...new Set(ids.filter((id): id is number => id !== null))]
  if (wanted.length === 0) return new Map()
  const rows = await db.selectFrom('images').select(['id', 'url']).where('id', 'in', wanted).execute()
  return new Map(rows.map((r) => [r.id, r]))
}

export function isHttpUrl(value: string): boolean {
  if (!/^https?:\/\//i.test(value)) return false
  try {
    const url = new URL(value)
    return (url.protocol === 'http:' || url.protocol === 'https:') && url.hostname !== ''
  } catch {
    return false
  }
}

/**
 * Checks `author` on a write: only editors may set it, and only to an existing user. An unknown user is a
 * field error (400), which comes before the right to set it (403): CONTRACT §1.
 */
export async function checkAuthor(db: Db, author: number | undefined, callerId: number, mayAssign: boolean): Promise<void> {
  if (author === undefined || author === callerId) return
  const row = Number.isSafeInteger(author) ? await db.selectFrom('users').select('id').where('id', '=', author).executeTakeFirst() : undefined
  if (row === undefined) throw invalidParam('author', 'unknownUser')
  if (!mayAssign) throw new ApiError(403, 'rest_forbidden', 'forbidden')
}

/** The list condition for a caller's scope (see `listScope`). */
export function scopeCondition(table: PostTable, scope: ListScope): Expression<SqlBool> {
  const status = sql.ref(`${table}.status`)
  if (scope.kind === 'refused') return sql<SqlBool>`1 = 0`
  const inStatuses = sql<SqlBool>`${status} in (${sql.join(scope.statuses.map((s) => sql`${s}`))})`
  if (scope.kind === 'all') return inStatuses
  return sql<SqlBool>`(${inStatuses} and (${status} = 'publish' or ${sql.ref(`${table}.author`)} = ${scope.owner}))`
}

/** Moves a record to the trash (compare-and-swap on its version). */
export async function trashPost(db: Db, table: PostTable, id: number, version: number, stamp: { modified: string; modified_utc: string }): Promise<void> {
  const result = await db.updateTable(table)
    .set({ status: 'trash', version: version + 1, ...stamp })
    .where('id', '=', id).where('version', '=', version)
    .executeTakeFirst()
  if (Number(result.numUpdatedRows) !== 1) throw preconditionFailed()
}

/** Deletes a record for good (compare-and-swap on its version); links go with it (foreign keys cascade). */
export async function deletePost(db: Db, table: PostTable, id: number, version: number): Promise<void> {
  const result = await db.deleteFrom(table).where('id', '=', id).where('version', '=', version).executeTakeFirst()
  if (Number(result.numDeletedRows) !== 1) throw preconditionFailed()
}

export function emptyToNull(value: string | null | undefined): string | null | undefined {
  return value === '' ? null : value
}
