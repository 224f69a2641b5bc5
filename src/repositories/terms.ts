/**
 * Categories and tags: one table, one set of queries, told apart by `taxonomy`. All SQL for terms lives
 * here; rows leave only as contract records, through their kind's `toRecord`.
 */
import { sql, type Expression, type ExpressionBuilder, type Kysely, type SqlBool, type Transaction } from 'kysely'
import { containsText, foldCase, inIdList, positionInIdList } from '../db/dialect.js'
import type { Database, Taxonomy, TermRow } from '../db/schema.js'
import { slugify, uniqueSlug, MAX_SLUG_LENGTH } from '../lib/slug.js'
import { asLanguage, type Language, type Schema } from '../contract.js'
import { ApiError, invalidParam, notFound, preconditionFailed } from '../http/errors.js'
import type { ReadCache } from './read-cache.js'
import { translationsOf } from './translations.js'

type Category = Schema<'Category'>
type Tag = Schema<'Tag'>

/** What differs between categories and tags: names, and the record shape (tags have no parent). */
export interface TermKind<R> {
  taxonomy: Taxonomy
  resource: 'category' | 'tag'
  collection: 'categories' | 'tags'
  toRecord(row: TermRow, count: number, translations: Record<string, number>, apiUrl: string): R
}

function urlsOf(collectionUrl: string, row: TermRow): Category['urls'] {
  const self = `${collectionUrl}/${row.id}`
  return row.parent === 0 ? { self, collection: collectionUrl } : { self, collection: collectionUrl, up: `${collectionUrl}/${row.parent}` }
}

export const CATEGORY: TermKind<Category> = {
  taxonomy: 'category',
  resource: 'category',
  collection: 'categories',
  toRecord(row, count, translations, apiUrl) {
    const urls = urlsOf(`${apiUrl}/categories`, row)
    return {
      id: row.id, name: row.name, slug: row.slug, description: row.description, parent: row.parent, count,
      rest_url: urls.self, urls, ml_language: asLanguage(row.language), translations,
    }
  },
}

export const TAG: TermKind<Tag> = {
  taxonomy: 'tag',
  resource: 'tag',
  collection: 'tags',
  toRecord(row, count, translations, apiUrl) {
    const urls = urlsOf(`${apiUrl}/tags`, row)
    return {
      id: row.id, name: row.name, slug: row.slug, description: row.description, count,
      rest_url: urls.self, urls, ml_language: asLanguage(row.language), translations,
    }
  },
}

export interface TermContext {
  db: Kysely<Database>
  /** `{base_url}/calendar/events/v1` */
  apiUrl: string
  /** Records and totals until the next change (none: always computed). */
  cache?: ReadCache
}

export interface TermListQuery {
  language: Language
  offset: number
  limit: number
  search?: string
  include?: number[]
  exclude?: number[]
  order: 'asc' | 'desc'
  orderby: 'id' | 'include' | 'name' | 'slug' | 'description' | 'count'
  hideEmpty: boolean
  parent?: number
  post?: number
  slug?: string
}

type Db = Kysely<Database> | Transaction<Database>

function listFilter(db: Db, taxonomy: Taxonomy, q: TermListQuery): (eb: ExpressionBuilder<Database, 'terms'>) => Expression<SqlBool> {
  return (eb) => {
    const conditions: Expression<SqlBool>[] = [
      eb('terms.taxonomy', '=', taxonomy),
      eb('terms.language', '=', q.language),
    ]
    if (q.search !== undefined && q.search !== '') conditions.push(containsText(db, [eb.ref('terms.name'), eb.ref('terms.slug')], q.search))
    if (q.include !== undefined) conditions.push(inIdList(db, eb.ref('terms.id'), q.include))
    if (q.exclude !== undefined && q.exclude.length > 0) conditions.push(eb.not(inIdList(db, eb.ref('terms.id'), q.exclude)))
    if (q.parent !== undefined) conditions.push(eb('terms.parent', '=', q.parent))
    if (q.slug !== undefined) conditions.push(eb('terms.slug', '=', q.slug))
    if (q.post !== undefined) {
      conditions.push(eb('terms.id', 'in', db.selectFrom('event_terms').select('event_terms.term_id').where('event_terms.event_id', '=', q.post)))
    }
    // Not EXISTS over the count: an aggregate always yields one row, so that would hide nothing.
    if (q.hideEmpty) conditions.push(eb('terms.event_count', '>', 0))
    return eb.and(conditions)
  }
}

export async function countTerms<R>(ctx: TermContext, kind: TermKind<R>, q: TermListQuery): Promise<number> {
  const taxonomy = kind.taxonomy
  const compute = async () => {
    const row = await ctx.db.selectFrom('terms')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where(listFilter(ctx.db, taxonomy, q))
      .executeTakeFirstOrThrow()
    return Number(row.n)
  }
  return ctx.cache === undefined ? compute() : ctx.cache.count(ctx.db, `terms:${taxonomy}:${JSON.stringify(q)}`, compute)
}

export async function listTerms<R extends { id: number }>(ctx: TermContext, kind: TermKind<R>, q: TermListQuery): Promise<R[]> {
  const { db } = ctx
  const taxonomy = kind.taxonomy
  let query = db.selectFrom('terms')
    .select('terms.id')
    .where(listFilter(db, taxonomy, q))
  const direction = q.order
  switch (q.orderby) {
    case 'id':
      query = query.orderBy('terms.id', direction)
      break
    case 'name':
      query = query.orderBy('terms.name_key', direction)
      break
    case 'slug':
      query = query.orderBy('terms.slug', direction)
      break
    case 'description':
      query = query.orderBy(sql`coalesce(terms.description, '')`, direction)
      break
    case 'count':
      query = query.orderBy('terms.event_count', direction)
      break
    case 'include': {
      const ids = q.include ?? []
      if (ids.length > 0) {
        query = query.orderBy(positionInIdList(db, sql.ref('terms.id'), ids), direction)
      }
      break
    }
  }
  const paged = query.orderBy('terms.id', 'asc').limit(q.limit).offset(q.offset)
  const page = async () => (await paged.execute()).map((r) => r.id)
  const ids = ctx.cache === undefined ? await page() : await ctx.cache.ids(db, `terms:${taxonomy}:${JSON.stringify(q)}`, page)
  const records = new Map((await termRecordsByIds(ctx, kind, ids)).map((r) => [r.id, r]))
  return ids.flatMap((id) => records.get(id) ?? [])
}

const termKey = (id: number) => `terms:${id}`

/**
 * Maps rows to records with their translations in one extra query for the whole page; records made
 * since the last change come from the read cache.
 */
async function toRecords<R>(ctx: TermContext, kind: TermKind<R>, rows: TermRow[]): Promise<R[]> {
  const { cache } = ctx
  const generation = cache === undefined ? undefined : await cache.sync(ctx.db)
  const hits = rows.map((row) => (generation === undefined ? undefined : cache?.get<R>(termKey(row.id))))
  const missing = rows.filter((_, i) => hits[i] === undefined)
  const translations = missing.length === 0 ? new Map<number, Record<string, number>>() : await translationsOf(ctx.db, 'terms', missing)
  return rows.map((row, i) => {
    const hit = hits[i]
    if (hit !== undefined) return hit
    const record = kind.toRecord(row, row.event_count, translations.get(row.id) ?? {}, ctx.apiUrl)
    cache?.set(generation, termKey(row.id), record)
    return record
  })
}

/** The stored row and record of a term, or a 404. With `language`, that language's version of it. */
export interface FoundTerm<R> {
  row: TermRow
  record: R
}

export async function findTerm<R>(ctx: TermContext, kind: TermKind<R>, id: number, language?: Language): Promise<FoundTerm<R>> {
  const row = await termRow(ctx.db, kind.taxonomy, id, language)
  if (row === undefined) throw notFound(kind.resource, id)
  const [record] = await withCounts(ctx, kind, [row])
  if (record === undefined) throw notFound(kind.resource, id)
  return { row, record }
}

async function termRow(db: Db, taxonomy: Taxonomy, id: number, language?: Language): Promise<TermRow | undefined> {
  if (!Number.isSafeInteger(id)) return undefined
  const row = await db.selectFrom('terms').selectAll().where('id', '=', id).where('taxonomy', '=', taxonomy).executeTakeFirst()
  if (row === undefined || language === undefined || row.language === language) return row
  if (row.translation_group === null) return undefined
  return db.selectFrom('terms').selectAll()
    .where('translation_group', '=', row.translation_group)
    .where('language', '=', language)
    .where('taxonomy', '=', taxonomy)
    .executeTakeFirst()
}

async function withCounts<R>(ctx: TermContext, kind: TermKind<R>, rows: TermRow[]): Promise<R[]> {
  return toRecords(ctx, kind, rows)
}

export interface TermInput {
  name?: string
  description?: string | null
  slug?: string
  parent?: number
}

export interface TermCreate extends TermInput {
  name: string
  language: Language
  translationOf?: number
}

/** Creates a term in one transaction: name unique per parent, slug unique, parent and translation checked. */
export async function createTerm<R>(ctx: TermContext, kind: TermKind<R>, input: TermCreate): Promise<FoundTerm<R>> {
  const { taxonomy, resource } = kind
  const row = await ctx.db.transaction().execute(async (trx) => {
    const parent = input.parent ?? 0
    await checkParent(trx, taxonomy, parent, input.language, undefined)
    await checkNameFree(trx, taxonomy, input.language, parent, input.name, undefined)
    let group: number | null = null
    if (input.translationOf !== undefined) group = await translationGroupFor(trx, taxonomy, input.translationOf, input.language)
    const wanted = slugify(input.slug ?? '') || slugify(input.name)
    const placeholder = `${resource}-pending-${Date.now()}-${Math.random().toString(36).slice(2)}`
    const slug = wanted === '' ? placeholder : await freeSlug(trx, taxonomy, input.language, wanted, undefined)
    const { id } = await trx.insertInto('terms').values({
      taxonomy,
      language: input.language,
      translation_group: group,
      name: input.name,
      name_key: nameKey(input.name),
      slug,
      description: emptyToNull(input.description),
      parent,
    }).returning('id').executeTakeFirstOrThrow()
    const finalSlug = wanted === '' ? await freeSlug(trx, taxonomy, input.language, `${resource}-${id}`, id) : slug
    await trx.updateTable('terms')
      .set({ translation_group: group ?? id, slug: finalSlug })
      .where('id', '=', id)
      .execute()
    return id
  })
  return findTerm(ctx, kind, row)
}

/**
 * Applies a partial update as compare-and-swap on `version`: when `expectedVersion` is given (from
 * If-Match) and the stored version differs, nothing is written and the caller gets a 412.
 */
export async function updateTerm<R>(ctx: TermContext, kind: TermKind<R>, current: TermRow, input: TermInput, expectedVersion: number | undefined): Promise<FoundTerm<R>> {
  const { taxonomy, resource } = kind
  await ctx.db.transaction().execute(async (trx) => {
    const parent = input.parent ?? current.parent
    const name = input.name ?? current.name
    if (input.parent !== undefined && input.parent !== current.parent) {
      await checkParent(trx, taxonomy, parent, asLanguage(current.language), current.id)
    }
    if (nameKey(name) !== current.name_key || parent !== current.parent) {
      await checkNameFree(trx, taxonomy, asLanguage(current.language), parent, name, current.id)
    }
    let slug = current.slug
    if (input.slug !== undefined) {
      const wanted = slugify(input.slug) || slugify(name) || `${resource}-${current.id}`
      slug = wanted === current.slug ? wanted : await freeSlug(trx, taxonomy, asLanguage(current.language), wanted, current.id)
    }
    const result = await trx.updateTable('terms')
      .set({
        name,
        name_key: nameKey(name),
        slug,
        parent,
        description: input.description === undefined ? current.description : emptyToNull(input.description),
        version: current.version + 1,
      })
      .where('id', '=', current.id)
      .where('version', '=', expectedVersion ?? current.version)
      .executeTakeFirst()
    if (Number(result.numUpdatedRows) !== 1) throw preconditionFailed()
  })
  return findTerm(ctx, kind, current.id)
}

/**
 * Deletes a term for good: its events lose the link, its children move up to its parent. When a child
 * has the name of a term already under that parent, the move would break name uniqueness: the delete
 * is refused with `term_exists` and nothing changes.
 */
export async function deleteTerm(ctx: TermContext, current: TermRow, expectedVersion: number | undefined): Promise<void> {
  await ctx.db.transaction().execute(async (trx) => {
    const result = await trx.deleteFrom('terms')
      .where('id', '=', current.id)
      .where('version', '=', expectedVersion ?? current.version)
      .executeTakeFirst()
    if (Number(result.numDeletedRows) !== 1) throw preconditionFailed()
    const clash = await trx.selectFrom('terms as child')
      .innerJoin('terms as sibling', (join) => join
        .onRef('sibling.taxonomy', '=', 'child.taxonomy')
        .onRef('sibling.language', '=', 'child.language')
        .onRef('sibling.name_key', '=', 'child.name_key'))
      .select('child.id')
      .where('child.parent', '=', current.id)
      .where('sibling.parent', '=', current.parent)
      .executeTakeFirst()
    if (clash !== undefined) throw termExistsError()
    await trx.updateTable('terms')
      .set((eb) => ({ parent: current.parent, version: eb('version', '+', 1) }))
      .where('parent', '=', current.id)
      .execute()
  })
}

/** Whether an event with this id exists (the `post`/`event` filter must name one). */
export async function eventExists(db: Kysely<Database>, id: number): Promise<boolean> {
  if (!Number.isSafeInteger(id)) return false
  const row = await db.selectFrom('events').select('id').where('id', '=', id).executeTakeFirst()
  return row !== undefined
}

/** Whether a category with this id exists in this language (the `parent` filter must name one). */
export async function termExists(db: Kysely<Database>, taxonomy: Taxonomy, id: number, language: Language): Promise<boolean> {
  if (!Number.isSafeInteger(id)) return false
  const row = await db.selectFrom('terms').select('id').where('id', '=', id).where('taxonomy', '=', taxonomy).where('language', '=', language).executeTakeFirst()
  return row !== undefined
}

function nameKey(name: string): string {
  return foldCase(name.trim().replace(/\s+/g, ' '))
}

function emptyToNull(value: string | null | undefined): string | null {
  return value === undefined || value === null || value === '' ? null : value
}

async function checkParent(trx: Transaction<Database>, taxonomy: Taxonomy, parent: number, language: Language, self: number | undefined): Promise<void> {
  if (parent === 0) return
  const row = await trx.selectFrom('terms').select(['id', 'language']).where('id', '=', parent).where('taxonomy', '=', taxonomy).executeTakeFirst()
  if (row === undefined) throw invalidParam('parent', 'parentNotFound')
  if (row.language !== language) throw invalidParam('parent', 'parentLanguage')
  if (self === undefined) return
  // The new parent must not be the term itself nor one of its descendants.
  const ancestors = await trx.withRecursive('chain(id, parent)', (db) =>
    db.selectFrom('terms').select(['id', 'parent']).where('id', '=', parent)
      .unionAll(db.selectFrom('terms').innerJoin('chain', 'chain.parent', 'terms.id').select(['terms.id', 'terms.parent'])))
    .selectFrom('chain').select('id').execute()
  if (ancestors.some((a) => a.id === self)) throw invalidParam('parent', 'parentCycle')
}

async function checkNameFree(trx: Transaction<Database>, taxonomy: Taxonomy, language: Language, parent: number, name: string, self: number | undefined): Promise<void> {
  let query = trx.selectFrom('terms').select('id')
    .where('taxonomy', '=', taxonomy).where('language', '=', language)
    .where('parent', '=', parent).where('name_key', '=', nameKey(name))
  if (self !== undefined) query = query.where('id', '!=', self)
  if ((await query.executeTakeFirst()) !== undefined) throw termExistsError()
}

function termExistsError(): ApiError {
  return new ApiError(400, 'term_exists', 'termExists', {}, { reasons: { name: { key: 'termExists', vars: {} } } })
}

async function translationGroupFor(trx: Transaction<Database>, taxonomy: Taxonomy, source: number, language: Language): Promise<number> {
  const row = Number.isSafeInteger(source)
    ? await trx.selectFrom('terms').select(['id', 'translation_group']).where('id', '=', source).where('taxonomy', '=', taxonomy).executeTakeFirst()
    : undefined
  if (row === undefined) throw invalidParam('translation_of', 'translationOfMissing', { resource: taxonomy })
  const group = row.translation_group ?? row.id
  const clash = await trx.selectFrom('terms').select('id').where('translation_group', '=', group).where('language', '=', language).executeTakeFirst()
  if (clash !== undefined) throw invalidParam('translation_of', 'translationExists')
  return group
}

/** `wanted`, or the first free `wanted-N`, among this taxonomy's slugs in this language. */
async function freeSlug(trx: Transaction<Database>, taxonomy: Taxonomy, language: Language, wanted: string, self: number | undefined): Promise<string> {
  const prefix = wanted.slice(0, MAX_SLUG_LENGTH - 12)
  let query = trx.selectFrom('terms').select('slug')
    .where('taxonomy', '=', taxonomy).where('language', '=', language)
    // Slugs hold only [a-z0-9-], all below '~': this range is "starts with prefix", served by the index.
    .where('slug', '>=', prefix).where('slug', '<', `${prefix}~`)
  if (self !== undefined) query = query.where('id', '!=', self)
  const taken = new Set((await query.execute()).map((r) => r.slug))
  return uniqueSlug(wanted, taken)
}

/** Records of the terms with these ids (for the terms linked to a page of events), counts batched. */
export async function termRecordsByIds<R>(ctx: TermContext, kind: TermKind<R>, ids: readonly number[]): Promise<R[]> {
  if (ids.length === 0) return []
  const { cache } = ctx
  const generation = cache === undefined ? undefined : await cache.sync(ctx.db)
  const hits = ids.flatMap((id) => (generation === undefined ? [] : cache?.get<R>(termKey(id)) ?? []))
  if (hits.length === ids.length) return hits
  const rows = await ctx.db.selectFrom('terms').selectAll().where(inIdList(ctx.db, sql.ref('id'), ids)).execute()
  return toRecords(ctx, kind, rows.filter((r) => r.taxonomy === kind.taxonomy))
}

/**
 * Moves the counts of published events per term (their `count`) as one event's share changes: `before`
 * and `after` are the terms it counted for (its linked terms while published, none otherwise). Every
 * event write that can change a count (links, status, trash, delete) calls it in its transaction, so
 * the counts stay exact; recounting each term instead read all its events (2-5 ms per write at
 * 100,000 events, for writes that changed nothing the counts depend on).
 */
export async function moveTermCounts(db: Db, before: readonly number[], after: readonly number[]): Promise<void> {
  const was = new Set(before)
  const is = new Set(after)
  const added = [...is].filter((id) => !was.has(id))
  const removed = [...was].filter((id) => !is.has(id))
  if (added.length > 0) {
    await db.updateTable('terms').set((eb) => ({ event_count: eb('event_count', '+', 1) })).where(inIdList(db, sql.ref('id'), added)).execute()
  }
  if (removed.length > 0) {
    await db.updateTable('terms').set((eb) => ({ event_count: eb('event_count', '-', 1) })).where(inIdList(db, sql.ref('id'), removed)).execute()
  }
}

/**
 * Recounts the published events of these terms (their `count`) from the links: for data put into
 * storage without the API's writes (bulk loads, test fixtures).
 */
export async function refreshTermCounts(db: Db, termIds: readonly number[]): Promise<void> {
  const ids = [...new Set(termIds)]
  if (ids.length === 0) return
  await db.updateTable('terms')
    .set((eb) => ({
      event_count: eb.selectFrom('event_terms')
        .innerJoin('events', 'events.id', 'event_terms.event_id')
        .select((inner) => inner.fn.countAll<number>().as('n'))
        .whereRef('event_terms.term_id', '=', 'terms.id')
        .where('events.status', '=', 'publish'),
    }))
    .where(inIdList(db, sql.ref('id'), ids))
    .execute()
}

/** The terms linked to an event (whose counts its next write may change). */
export async function termIdsOfEvent(db: Db, eventId: number): Promise<number[]> {
  const rows = await db.selectFrom('event_terms').select('term_id').where('event_id', '=', eventId).execute()
  return rows.map((r) => r.term_id)
}
