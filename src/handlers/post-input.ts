/**
 * The checks that event, venue and organizer writes share (CONTRACT §5): the `author` named (a user
 * that exists; only editors may name another), the image (an image id, or an absolute http(s) URL),
 * `translation_of`, and the publication dates. Each refuses with the error the contract names.
 */
import type { Language } from '../contract.js'
import type { Db } from '../db/unit-of-work.js'
import { forbidden, invalidParam } from '../http/errors.js'
import { publicationDates, type PublicationDates } from '../lib/post-dates.js'
import { canRead, type Caller } from '../lib/rights.js'
import { normalisedHttpUrl } from '../lib/urls.js'
import { imageExists, type ImageChoice } from '../repositories/images.js'
import type { PostTable } from '../repositories/posts.js'
import { groupHasLanguage, translationSource } from '../repositories/translations.js'
import { userExists } from '../repositories/users.js'

/** An `author` (other than the caller, when given) must name an existing user (400). */
export async function checkAuthorExists(db: Db, author: number | undefined, callerId?: number): Promise<void> {
  if (author === undefined || author === callerId) return
  if (!(await userExists(db, author))) throw invalidParam('author', 'unknownUser')
}

/** Only callers who may assign authors name another one (403, after every field's 400: CONTRACT §1). */
export function checkMayAssignAuthor(author: number | undefined, callerId: number, mayAssign: boolean): void {
  if (author !== undefined && author !== callerId && !mayAssign) throw forbidden(403)
}

/** The image a write names: an existing image id (digits too), an absolute http(s) URL, null, or no change. */
export async function checkedImage(db: Db, value: number | string | null | undefined): Promise<ImageChoice> {
  if (value === undefined || value === null) return value
  if (typeof value === 'number' || /^\d+$/.test(value)) {
    const id = Number(value)
    if (!(await imageExists(db, id))) throw invalidParam('image', 'unknownImage')
    return { id }
  }
  // Stored in its normalised form, always a valid `uri` (CONTRACT §2); what does not parse is 400.
  const url = normalisedHttpUrl(value)
  if (url === undefined) throw invalidParam('image', 'invalidImage')
  return { url }
}

/**
 * The translation group a new record joins (`translation_of`), refusing a second version in one language. A
 * record the caller may not read (another author's draft) or one in the trash is refused like one that does
 * not exist (CONTRACT §6): joining it would tell the caller it exists, show its id in the group's
 * `translations`, and take its language from its owner.
 */
export async function translationGroup(db: Db, table: PostTable, resource: string, source: number, language: Language, caller: Caller): Promise<number> {
  const found = await translationSource(db, table, source)
  if (found === undefined || found.status === 'trash' || !canRead(caller, found)) throw invalidParam('translation_of', 'translationOfMissing', { resource })
  if (await groupHasLanguage(db, table, found.group, language)) throw invalidParam('translation_of', 'translationExists')
  return found.group
}

/** Publication dates from `date`/`date_utc`, else `fallback`; a field that is no date is a 400 naming it. */
export function postDates(input: { date?: string; date_utc?: string }, siteTz: string, fallback: PublicationDates): PublicationDates {
  const dates = publicationDates(input, siteTz, fallback)
  if ('invalid' in dates) throw invalidParam(dates.invalid, dates.disagree === true ? 'datesDisagree' : 'invalidDate')
  return dates
}
