/**
 * The rules a category or tag write must keep (CONTRACT §7), checked in the unit of work before anything
 * is written, in the contract's order: the parent (it exists, in the same language, not below the term
 * itself), then the name (free under its parent), then `translation_of`.
 */
import type { Category, Language, Schema, Tag } from '../contract.js'
import type { Db } from '../db/unit-of-work.js'
import { ApiError, invalidParam } from '../http/errors.js'
import { emptyToNull } from '../lib/text.js'
import type { NewTerm, TermUpdate } from '../repositories/term-writes.js'
import { nameKey, nameTaken, termAndAncestors, termLanguage, type StoredTerm, type TermKind } from '../repositories/terms.js'
import { groupHasLanguage, translationGroupOf } from '../repositories/translations.js'

/** A category's or tag's write body (a tag's is a category's without `parent`). */
export type TermBody = Schema<'CategoryUpdate'>

export const termExists = (): ApiError =>
  new ApiError(400, 'term_exists', 'termExists', {}, { reasons: { name: { key: 'termExists', vars: {} } } })

/** The values of a new term, or the first rule its body breaks. */
export async function checkNewTerm<R>(db: Db, kind: TermKind<R>, body: Schema<'CategoryCreate'>, language: Language, translationOf: number | undefined): Promise<NewTerm> {
  const parent = body.parent ?? 0
  await checkParent(db, kind, parent, language, undefined)
  if (await nameTaken(db, kind.taxonomy, language, parent, body.name, undefined)) throw termExists()
  let group: number | null = null
  if (translationOf !== undefined) {
    group = (await translationGroupOf(db, 'terms', translationOf, kind.taxonomy)) ?? null
    if (group === null) throw invalidParam('translation_of', 'translationOfMissing', { resource: kind.taxonomy })
    if (await groupHasLanguage(db, 'terms', group, language)) throw invalidParam('translation_of', 'translationExists')
  }
  return { language, name: body.name, description: emptyToNull(body.description) ?? null, slug: body.slug ?? '', parent, translationGroup: group }
}

/** The values of a term after a partial update, or the first rule the body breaks. */
export async function checkTermUpdate<R extends Category | Tag>(db: Db, kind: TermKind<R>, current: StoredTerm<R>, body: TermBody): Promise<TermUpdate> {
  const { record } = current
  const language = record.ml_language
  const parent = body.parent ?? current.parent
  const name = body.name ?? record.name
  if (body.parent !== undefined && body.parent !== current.parent) await checkParent(db, kind, parent, language, record.id)
  if (nameKey(name) !== nameKey(record.name) || parent !== current.parent) {
    if (await nameTaken(db, kind.taxonomy, language, parent, name, record.id)) throw termExists()
  }
  return {
    id: record.id,
    language,
    name,
    description: body.description === undefined ? record.description : emptyToNull(body.description) ?? null,
    parent,
    slug: body.slug,
    currentSlug: record.slug,
  }
}

/** A parent must exist in the term's language, and must not be the term itself nor one below it. */
async function checkParent<R>(db: Db, kind: TermKind<R>, parent: number, language: Language, self: number | undefined): Promise<void> {
  if (parent === 0) return
  const parentLanguage = await termLanguage(db, kind.taxonomy, parent)
  if (parentLanguage === undefined) throw invalidParam('parent', 'parentNotFound')
  if (parentLanguage !== language) throw invalidParam('parent', 'parentLanguage')
  if (self !== undefined && (await termAndAncestors(db, parent)).includes(self)) throw invalidParam('parent', 'parentCycle')
}
