/**
 * What a venue or organizer write body means once checked: the common post fields (name, description,
 * author, dates, slug, image, translation) and the kind's own fields (`venue-input.ts`,
 * `organizer-input.ts`), in the order of CONTRACT §1 (every field's 400 before the right to set `author`,
 * 403). Used by the venue and organizer routes and by event writes that create them inline.
 */
import type { Language, Schema } from '../contract.js'
import type { Db } from '../db/unit-of-work.js'
import { invalidParam } from '../http/errors.js'
import { modifiedNow, nowDates, type PublicationDates } from '../lib/post-dates.js'
import { wantedSlug } from '../lib/slug.js'
import type { Caller } from '../lib/rights.js'
import type { CommonColumns, LinkedUpdate, NewLinked } from '../repositories/linked.js'
import { checkAuthorExists, checkedImage, checkMayAssignAuthor, postDates, translationGroup } from './post-input.js'

/** The name, description and the kind's own fields of a body. */
export interface LinkedFields<Own> {
  name?: string
  description?: string | null
  own: Own
}

/** The fields every linked post body may carry besides its kind's own (alike for venues and organizers). */
export type LinkedBody = Pick<Schema<'VenueUpdate'> | Schema<'OrganizerUpdate'>, 'author' | 'date' | 'date_utc' | 'status' | 'slug' | 'image'>

/** How a kind's body is checked. */
export interface LinkedInput<Body, Own> {
  table: 'venues' | 'organizers'
  resource: 'venue' | 'organizer'
  fields(input: Body, geoloc: boolean): LinkedFields<Own>
}

/** Who writes, when, and under which site settings. */
export interface Writer {
  callerId: number
  /** The caller itself (what it may read). */
  caller: Caller
  /** Whether the caller may name another author (editors). */
  mayAssignAuthor: boolean
  now: Date
  siteTz: string
  geoloc: boolean
}

/** A new venue or organizer, checked; `status` is the one to store (see `statusToStore`). */
export async function checkNewLinked<Body extends LinkedBody, Own>(
  db: Db, input: LinkedInput<Body, Own>, body: Body, language: Language, translationOf: number | undefined, status: string, writer: Writer,
): Promise<NewLinked<Own>> {
  const fields = input.fields(body, writer.geoloc)
  const name = fields.name
  if (name === undefined) throw invalidParam(input.resource, 'required')
  await checkAuthorExists(db, body.author, writer.callerId)
  const group = translationOf === undefined ? null : await translationGroup(db, input.table, input.resource, translationOf, language, writer.caller)
  const dates = postDates(body, writer.siteTz, nowDates(writer.now, writer.siteTz))
  const image = await checkedImage(db, body.image)
  checkMayAssignAuthor(body.author, writer.callerId, writer.mayAssignAuthor)
  const columns: CommonColumns = {
    name,
    description: fields.description ?? null,
    author: body.author ?? writer.callerId,
    status,
    ...dates,
    ...modifiedNow(writer.now, writer.siteTz),
  }
  return { language, translationGroup: group, columns, slug: wantedSlug(body.slug, name), image, own: fields.own, now: writer.now }
}

/**
 * The checks of an update body that need no record, made before it is looked up (CONTRACT §1: fields
 * are 400 before 404/410, 403 and 412): the kind's own fields, dates, the image and the author named.
 */
export async function precheckLinkedUpdate<Body extends LinkedBody, Own>(db: Db, input: LinkedInput<Body, Own>, body: Body, writer: Writer): Promise<void> {
  input.fields(body, writer.geoloc)
  postDates(body, writer.siteTz, { date: '', date_utc: '' })
  await checkedImage(db, body.image)
  await checkAuthorExists(db, body.author)
}

/** The record a partial update starts from. */
export interface CurrentLinked {
  id: number
  name: string
  slug: string
  language: string
  dates: PublicationDates
}

/** A partial update, checked against the record; `status` is the one to store, if the body changes it. */
export async function checkLinkedUpdate<Body extends LinkedBody, Own>(
  db: Db, input: LinkedInput<Body, Own>, current: CurrentLinked, body: Body, status: string | undefined, writer: Writer,
): Promise<LinkedUpdate<Own>> {
  const fields = input.fields(body, writer.geoloc)
  await checkAuthorExists(db, body.author, writer.callerId)
  checkMayAssignAuthor(body.author, writer.callerId, writer.mayAssignAuthor)
  const columns: LinkedUpdate<Own>['columns'] = { ...modifiedNow(writer.now, writer.siteTz) }
  if (fields.name !== undefined) columns.name = fields.name
  if (fields.description !== undefined) columns.description = fields.description
  if (body.author !== undefined) columns.author = body.author
  if (status !== undefined) columns.status = status
  if (body.date !== undefined || body.date_utc !== undefined) Object.assign(columns, postDates(body, writer.siteTz, current.dates))
  const slug = body.slug === undefined ? undefined : wantedSlug(body.slug, fields.name ?? current.name) || `${input.resource}-${current.id}`
  const image = await checkedImage(db, body.image)
  return { id: current.id, language: current.language, columns, slug, currentSlug: current.slug, image, own: fields.own, now: writer.now }
}
