/**
 * Writes of categories and tags, in the transaction of a unit of work: slugs unique per taxonomy and
 * language, names kept with their comparison key, versions compare-and-swapped, children moved up when
 * their parent goes. What may be written (parents, free names, translations) is the handler's to decide.
 */
import type { Taxonomy } from '../db/schema.js'
import { recordChange, type Db, type Tx } from '../db/unit-of-work.js'
import { slugify } from '../lib/slug.js'
import { changesRow, eventsLostLink } from './posts.js'
import { freeSlug } from './slugs.js'
import { reportGroupChanged } from './translations.js'
import { nameKey, type TermKind } from './terms.js'

export interface NewTerm {
  language: string
  name: string
  description: string | null
  /** The slug asked for (empty: from the name, else `<resource>-<id>`). */
  slug: string
  parent: number
  /** The translation group to join; null for a group of its own. */
  translationGroup: number | null
}

/** Creates a term; returns its id. */
export async function insertTerm<R>(trx: Tx, kind: TermKind<R>, term: NewTerm): Promise<number> {
  const { taxonomy, resource } = kind
  const wanted = slugify(term.slug) || slugify(term.name)
  const placeholder = `${resource}-pending-${Date.now()}-${Math.random().toString(36).slice(2)}`
  const slug = wanted === '' ? placeholder : await freeSlug(trx, 'terms', term.language, wanted, undefined, taxonomy)
  const { id } = await trx.insertInto('terms').values({
    taxonomy,
    language: term.language,
    translation_group: term.translationGroup,
    name: term.name,
    name_key: nameKey(term.name),
    slug,
    description: term.description,
    parent: term.parent,
  }).returning('id').executeTakeFirstOrThrow()
  const finalSlug = wanted === '' ? await freeSlug(trx, 'terms', term.language, `${resource}-${id}`, id, taxonomy) : slug
  await trx.updateTable('terms')
    .set({ translation_group: term.translationGroup ?? id, slug: finalSlug })
    .where('id', '=', id)
    .execute()
  recordChange(trx, { resource, id, action: 'create' })
  if (term.translationGroup !== null) await reportGroupChanged(trx, 'terms', resource, term.translationGroup, id)
  return id
}

export interface TermUpdate {
  id: number
  language: string
  name: string
  description: string | null
  parent: number
  /** The slug asked for, or undefined to keep `currentSlug`. */
  slug: string | undefined
  currentSlug: string
}

/**
 * Writes a term's new values if its version is still `version` (compare-and-swap); false when it moved
 * on. Values that change nothing write nothing (CONTRACT §5: the version and the change log stay).
 */
export async function updateTerm<R>(trx: Tx, kind: TermKind<R>, term: TermUpdate, version: number): Promise<boolean> {
  const { taxonomy, resource } = kind
  const row = await trx.selectFrom('terms').selectAll().where('id', '=', term.id).executeTakeFirst()
  if (row === undefined || row.version !== version) return false
  let slug = term.currentSlug
  if (term.slug !== undefined) {
    const wanted = slugify(term.slug) || slugify(term.name) || `${resource}-${term.id}`
    slug = wanted === term.currentSlug ? wanted : await freeSlug(trx, 'terms', term.language, wanted, term.id, taxonomy)
  }
  const values = { name: term.name, name_key: nameKey(term.name), slug, parent: term.parent, description: term.description }
  if (!changesRow(row, values)) return true
  const result = await trx.updateTable('terms')
    .set({ ...values, version: version + 1 })
    .where('id', '=', term.id)
    .where('version', '=', version)
    .executeTakeFirst()
  if (Number(result.numUpdatedRows) !== 1) return false
  recordChange(trx, { resource, id: term.id, action: 'update' })
  return true
}

/**
 * Deletes a term for good if its version is still `version` (false when it moved on); its events lose
 * the link (they change), and so do the other versions of its translation group.
 */
export async function deleteTerm<R>(trx: Tx, kind: TermKind<R>, id: number, version: number): Promise<boolean> {
  const linkedEvents = await trx.selectFrom('event_terms').select('event_id').where('term_id', '=', id).execute()
  const deleted = await trx.deleteFrom('terms').where('id', '=', id).where('version', '=', version)
    .returning(['language', 'translation_group']).executeTakeFirst()
  if (deleted === undefined) return false
  recordChange(trx, { resource: kind.resource, id, action: 'delete', language: deleted.language })
  await eventsLostLink(trx, linkedEvents.map((l) => l.event_id))
  if (deleted.translation_group !== null) await reportGroupChanged(trx, 'terms', kind.resource, deleted.translation_group, id)
  return true
}

/**
 * Moves the children of a deleted term up to its parent (asked after the term is deleted: a child may
 * share its name with the term itself). A child whose name a term under that parent already has is
 * renamed as a new term's slug is made unique: `Jazz` becomes `Jazz 2`, `Jazz 3`… (the first name free
 * there); its slug, unique in its language already, stays.
 */
export async function moveChildrenUp<R>(trx: Tx, kind: TermKind<R>, id: number, parent: number): Promise<void> {
  const children = await trx.selectFrom('terms').select(['id', 'taxonomy', 'language', 'name', 'version'])
    .where('parent', '=', id).orderBy('id').execute()
  for (const child of children) {
    let name = child.name
    for (let n = 2; await nameUnder(trx, child.taxonomy, child.language, parent, name); n++) name = `${child.name} ${n}`
    await trx.updateTable('terms')
      .set({ parent, name, name_key: nameKey(name), version: child.version + 1 })
      .where('id', '=', child.id)
      .execute()
    recordChange(trx, { resource: kind.resource, id: child.id, action: 'update' })
  }
}

/** Whether a term under `parent` already has this name (compared by `nameKey`). */
async function nameUnder(db: Db, taxonomy: Taxonomy, language: string, parent: number, name: string): Promise<boolean> {
  const row = await db.selectFrom('terms').select('id').where('taxonomy', '=', taxonomy).where('language', '=', language)
    .where('parent', '=', parent).where('name_key', '=', nameKey(name)).executeTakeFirst()
  return row !== undefined
}
