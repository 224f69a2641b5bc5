/**
 * Categories and tags: one table, one set of queries, told apart by `taxonomy`. Reads return contract
 * records through their kind's `toRecord` (remembered by the read cache); what a handler needs beyond
 * the record (the stored version and parent) comes with it as a `StoredTerm`.
 */
import { sql, type CompiledQuery, type Expression, type ExpressionBuilder, type SqlBool } from 'kysely'
import { asLanguage, type Category, type Language, type Tag } from '../contract.js'
import { bytewise, containsText, foldCase, idListValue, inIdList, inIdValue, positionInIdList } from '../db/dialect.js'
import { boundQuery, executeCompiled, prepared } from '../db/prepared.js'
import type { Database, Taxonomy, TermRow } from '../db/schema.js'
import type { Db } from '../db/unit-of-work.js'
import { recordsById, rememberedResult } from './read-cache.js'
import type { Site } from './site.js'
import { translationsOf } from './translations.js'

/** What differs between categories and tags: names, and the record shape (tags have no parent). */
export interface TermKind<R> {
  taxonomy: Taxonomy
  resource: 'category' | 'tag'
  collection: 'categories' | 'tags'
  toRecord(row: TermRow, translations: Record<string, number>, apiUrl: string): R
}

function urlsOf(collectionUrl: string, row: TermRow): Category['urls'] {
  const self = `${collectionUrl}/${row.id}`
  return row.parent === 0 ? { self, collection: collectionUrl } : { self, collection: collectionUrl, up: `${collectionUrl}/${row.parent}` }
}

export const CATEGORY: TermKind<Category> = {
  taxonomy: 'category',
  resource: 'category',
  collection: 'categories',
  toRecord(row, translations, apiUrl) {
    const urls = urlsOf(`${apiUrl}/categories`, row)
    return {
      id: row.id, name: row.name, slug: row.slug, description: row.description, parent: row.parent, count: row.event_count,
      rest_url: urls.self, urls, ml_language: asLanguage(row.language), translations,
    }
  },
}

export const TAG: TermKind<Tag> = {
  taxonomy: 'tag',
  resource: 'tag',
  collection: 'tags',
  toRecord(row, translations, apiUrl) {
    const urls = urlsOf(`${apiUrl}/tags`, row)
    return {
      id: row.id, name: row.name, slug: row.slug, description: row.description, count: row.event_count,
      rest_url: urls.self, urls, ml_language: asLanguage(row.language), translations,
    }
  },
}

/** A term's record, with what its writes need that the record does not say. */
export interface StoredTerm<R> {
  record: R
  version: number
  /** 0 for a top-level term (and every tag). */
  parent: number
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

export async function countTerms<R>(db: Db, kind: TermKind<R>, q: TermListQuery): Promise<number> {
  const taxonomy = kind.taxonomy
  return rememberedResult(db, `count:terms:${taxonomy}:${JSON.stringify(q)}`, async () => {
    const row = await db.selectFrom('terms')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where(listFilter(db, taxonomy, q))
      .executeTakeFirstOrThrow()
    return Number(row.n)
  })
}

/** The records of a list page, in list order. */
export async function listTerms<R>(db: Db, site: Site, kind: TermKind<R>, q: TermListQuery): Promise<R[]> {
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
      query = query.orderBy(bytewise(db, sql.ref('terms.name_key')), direction)
      break
    case 'slug':
      query = query.orderBy(bytewise(db, sql.ref('terms.slug')), direction)
      break
    case 'description':
      query = query.orderBy(bytewise(db, sql`coalesce(terms.description, '')`), direction)
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
  const ids = await rememberedResult(db, `ids:terms:${taxonomy}:${JSON.stringify(q)}`, async () => (await paged.execute()).map((r) => r.id))
  return (await storedTerms(db, site, kind, ids)).map((s) => s.record)
}

/** Terms' rows by id (a list of ids: `idListValue`), the statement built once (db/prepared.ts). */
const termRowsById = prepared(1, (db, list: number[] | string) => db.selectFrom('terms').selectAll().where(inIdValue(db, sql.ref('id'), list)))

/** Stored terms for ids (of this kind), in that order, translations batched; remembered by the read cache. */
async function storedTerms<R>(db: Db, site: Site, kind: TermKind<R>, ids: readonly number[]): Promise<Array<StoredTerm<R>>> {
  return recordsById(db, kind.taxonomy, ids, async (missing) => {
    const list = idListValue(db, missing)
    const rows = (list === undefined ? [] : (await termRowsById(db, list)).rows).filter((r) => r.taxonomy === kind.taxonomy)
    const translations = await translationsOf(db, 'terms', rows)
    return new Map(rows.map((row) => [row.id, {
      record: kind.toRecord(row, translations.get(row.id) ?? {}, site.apiUrl),
      version: row.version,
      parent: row.parent,
    }]))
  })
}

/** A term an event shows, with what its place among the event's terms is ordered by (`nameKey`, then `id`). */
export interface ShownTerm {
  id: number
  taxonomy: Taxonomy
  nameKey: string
  record: Category | Tag
}

/**
 * The rows of the terms `ids` names, categories and tags together (one statement), for a write's answer (their counts
 * and versions moved in it: not remembered); `known`, rows the caller has as its transaction left them (a create's
 * terms whose counts it moved: not read again). Ids with no term left out.
 */
export async function shownTermRows(db: Db, ids: readonly number[], known?: ReadonlyMap<number, TermRow>): Promise<TermRow[]> {
  const unknown = known === undefined || known.size === 0 ? ids : ids.filter((id) => !known.has(id))
  const rows: TermRow[] = []
  if (unknown.length > 0) {
    const list = idListValue(db, unknown)
    if (list !== undefined) rows.push(...(await termRowsById(db, list)).rows)
  }
  if (unknown !== ids) for (const id of ids) { const row = known?.get(id); if (row !== undefined) rows.push(row) }
  return rows
}

/** The terms of `shownTermRows` as an answer shows them, with their `translations` (translations.ts `linkedTranslations`). */
export function shownTerms(site: Site, rows: readonly TermRow[], translations: ReadonlyMap<number, Record<string, number>>): ShownTerm[] {
  return rows.map((row) => ({
    id: row.id, taxonomy: row.taxonomy, nameKey: row.name_key,
    record: (row.taxonomy === 'category' ? CATEGORY : TAG).toRecord(row, translations.get(row.id) ?? {}, site.apiUrl),
  }))
}

/** Records of the terms of this kind with these ids (those linked to a page of events), in that order. */
export async function termRecords<R>(db: Db, site: Site, kind: TermKind<R>, ids: readonly number[]): Promise<R[]> {
  return (await storedTerms(db, site, kind, ids)).map((s) => s.record)
}

/** The term with this id; with `language`, its version in that language. Undefined when there is none. */
export async function findTerm<R>(db: Db, site: Site, kind: TermKind<R>, id: number, language?: Language): Promise<StoredTerm<R> | undefined> {
  const found = await termId(db, kind.taxonomy, id, language)
  if (found === undefined) return undefined
  const [stored] = await storedTerms(db, site, kind, [found])
  return stored
}

async function termId(db: Db, taxonomy: Taxonomy, id: number, language?: Language): Promise<number | undefined> {
  if (!Number.isSafeInteger(id)) return undefined
  const row = await db.selectFrom('terms').select(['id', 'language', 'translation_group']).where('id', '=', id).where('taxonomy', '=', taxonomy).executeTakeFirst()
  if (row === undefined || language === undefined || row.language === language) return row?.id
  if (row.translation_group === null) return undefined
  const version = await db.selectFrom('terms').select('id')
    .where('translation_group', '=', row.translation_group)
    .where('language', '=', language)
    .where('taxonomy', '=', taxonomy)
    .executeTakeFirst()
  return version?.id
}

/** The language of the term of this taxonomy with this id, or undefined when there is none. */
export async function termLanguage(db: Db, taxonomy: Taxonomy, id: number): Promise<string | undefined> {
  if (!Number.isSafeInteger(id)) return undefined
  const row = await db.selectFrom('terms').select('language').where('id', '=', id).where('taxonomy', '=', taxonomy).executeTakeFirst()
  return row?.language
}

/** Whether a term of this taxonomy with this id exists in this language (the `parent` filter must name one). */
export async function termExists(db: Db, taxonomy: Taxonomy, id: number, language: Language): Promise<boolean> {
  if (!Number.isSafeInteger(id)) return false
  const row = await db.selectFrom('terms').select('id').where('id', '=', id).where('taxonomy', '=', taxonomy).where('language', '=', language).executeTakeFirst()
  return row !== undefined
}

/** The ids of a term and of every term above it, up to the top. */
export async function termAndAncestors(db: Db, id: number): Promise<number[]> {
  const rows = await db.withRecursive('chain(id, parent)', (qb) =>
    qb.selectFrom('terms').select(['id', 'parent']).where('id', '=', id)
      .unionAll(qb.selectFrom('terms').innerJoin('chain', 'chain.parent', 'terms.id').select(['terms.id', 'terms.parent'])))
    .selectFrom('chain').select('id').execute()
  return rows.map((r) => r.id)
}

/** How names compare for uniqueness and order: trimmed, spaces collapsed, NFC-normalised and case-folded (CONTRACT §5). */
export function nameKey(name: string): string {
  return foldCase(name.trim().replace(/\s+/g, ' '))
}

/** Whether another term (not `self`) under `parent` has this name (compared by `nameKey`). */
export async function nameTaken(db: Db, taxonomy: Taxonomy, language: Language, parent: number, name: string, self: number | undefined): Promise<boolean> {
  let query = db.selectFrom('terms').select('id')
    .where('taxonomy', '=', taxonomy).where('language', '=', language)
    .where('parent', '=', parent).where('name_key', '=', nameKey(name))
  if (self !== undefined) query = query.where('id', '!=', self)
  return (await query.executeTakeFirst()) !== undefined
}

type TermLists = ReadonlyArray<{ taxonomy: Taxonomy; entries: ReadonlyArray<number | string> }>

/** An entry of `categories` or `tags` as an id, if it is one. */
function asId(entry: number | string): number | undefined {
  const text = String(entry).trim()
  return typeof entry === 'number' || /^\d+$/.test(text) ? Number(text) : undefined
}

/**
 * The statement with which `termIdsNamed` looks up the entries that are ids (none when there are none), for a read
 * sent ahead (dialect.ts `readAhead`).
 */
export function termIdsNamedRead(db: Db, lists: TermLists): CompiledQuery<{ id: number; taxonomy: Taxonomy; language: string }> | undefined {
  const wanted = [...new Set(lists.flatMap((l) => l.entries).map(asId).filter((id): id is number => id !== undefined && Number.isSafeInteger(id)))]
  // By id alone (the primary key; with the taxonomy and language in the statement, SQLite scans the index on those).
  const list = idListValue(db, wanted)
  return list === undefined ? undefined : termsNamedById(db, list)
}

/** The taxonomy and language of the terms a list of ids names (`idListValue`). */
const termsNamedById = boundQuery(1, (db, list: number[] | string) => db.selectFrom('terms').select(['id', 'taxonomy', 'language']).where(inIdValue(db, sql.ref('id'), list)))

/**
 * The ids of the terms a write's `categories` and `tags` entries name in `language`, in order, one list for each
 * list of entries (with its taxonomy): each an id, a slug, or a name (case and spacing as `nameKey` compares them);
 * undefined for one that names none. The entries that are ids, of every list, are looked up in one statement.
 */
export async function termIdsNamed(db: Db, lists: TermLists, language: string): Promise<Array<Array<number | undefined>>> {
  const read = termIdsNamedRead(db, lists)
  const rows = read === undefined ? [] : (await executeCompiled(db, read)).rows
  const known = new Map(rows.filter((r) => r.language === language).map((r) => [r.id, r.taxonomy]))
  const lookedUp: Array<Array<number | undefined>> = []
  for (const { taxonomy, entries } of lists) {
    const found: Array<number | undefined> = []
    for (const entry of entries) {
      const id = asId(entry)
      if (id !== undefined) {
        found.push(known.get(id) === taxonomy ? id : undefined)
        continue
      }
      const text = String(entry).trim()
      const row = await db.selectFrom('terms').select('id').where('taxonomy', '=', taxonomy).where('language', '=', language)
        .where((eb) => eb.or([eb('slug', '=', text.toLowerCase()), eb('name_key', '=', nameKey(text))]))
        .orderBy('id').executeTakeFirst()
      found.push(row?.id)
    }
    lookedUp.push(found)
  }
  return lookedUp
}
