/**
 * What events, venues and organizers share in storage: lookup by id or slug in a language, the final
 * slug and translation group of a new record, the list scope of a caller, trash and delete
 * (compare-and-swap on the version).
 */
import { sql, type Expression, type SqlBool } from 'kysely'
import { asLanguage, asStatus, type Image, type Language } from '../contract.js'
import { deferredWrite } from '../db/dialect.js'
import { boundQuery } from '../db/prepared.js'
import type { PostRow } from '../db/schema.js'
import { recordChange, type Db, type Tx } from '../db/unit-of-work.js'
import { utcToWall } from '../lib/dates.js'
import type { ListScope } from '../lib/rights.js'
import type { Site } from './site.js'
import { freeSlug } from './slugs.js'
import { groupSeenOtherwise, reportGroupChanged } from './translations.js'

export type PostTable = 'events' | 'venues' | 'organizers'

export type PostRef = { id: number } | { slug: string }

/**
 * The id of the record that `ref` names: by id, that record (or, with `language`, its version in that
 * language); by slug, the record with that slug in `language` (which a slug lookup must be given).
 */
export async function resolvePostId(db: Db, table: PostTable, ref: PostRef, language: Language | undefined): Promise<number | undefined> {
  if ('slug' in ref) {
    if (language === undefined) throw new Error('a slug is looked up in a language')
    // No slug holds U+0000 (PostgreSQL cannot even be asked for one).
    if (ref.slug.includes('\u0000')) return undefined
    const row = await db.selectFrom(table).select('id')
      .where('language', '=', language).where('slug', '=', ref.slug).executeTakeFirst()
    return row?.id
  }
  if (!Number.isSafeInteger(ref.id)) return undefined
  const row = await db.selectFrom(table).select(['id', 'language', 'translation_group']).where('id', '=', ref.id).executeTakeFirst()
  if (row === undefined || language === undefined || row.language === language) return row?.id
  const version = await db.selectFrom(table).select('id')
    .where('translation_group', '=', row.translation_group ?? row.id).where('language', '=', language).executeTakeFirst()
  return version?.id
}

/** A new record's slug and translation group, set. */
const slugAndGroupOf = (table: PostTable) => boundQuery(3, (db, slug: string, group: number, id: number) =>
  db.updateTable(table).set({ slug, translation_group: group }).where('id', '=', id))
const slugAndGroupSet = { events: slugAndGroupOf('events'), venues: slugAndGroupOf('venues'), organizers: slugAndGroupOf('organizers') }

/**
 * Gives a new record its final slug and translation group once its id is known: the slug `<singular>-<id>`
 * when the name gave none, and its own id as group unless it joined another's. Returns the slug.
 */
export async function settleNewPost(trx: Tx, table: PostTable, id: number, singular: string, language: string, slug: string, group: number | null): Promise<string> {
  const settled = await settledSlug(trx, table, singular, language, slug, id)
  // Its answer is not read: sent with the next statement on PostgreSQL (`deferredWrite`).
  await deferredWrite(trx, slugAndGroupSet[table](trx, settled, group ?? id, id))
  await joinedGroup(trx, table, id, group)
  return settled
}

/** The slug a new record settles on: the one its name gave, else `<singular>-<id>` (made free in its language). */
export async function settledSlug(trx: Tx, table: PostTable, singular: string, language: string, slug: string, id: number): Promise<string> {
  return slug === '' ? freeSlug(trx, table, language, `${singular}-${id}`, id) : slug
}

/** A new record that joined translation group `group` (null: its own): the group's other versions are told. */
export async function joinedGroup(trx: Tx, table: PostTable, id: number, group: number | null): Promise<void> {
  if (group !== null) await reportGroupChanged(trx, table, RESOURCE[table], group, id)
}

/** The list condition for a caller's scope (see `listScope`). */
export function scopeCondition(table: PostTable | 'o', scope: ListScope): Expression<SqlBool> {
  const status = sql.ref(`${table}.status`)
  if (scope.kind === 'refused') return sql<SqlBool>`1 = 0`
  const inStatuses = sql<SqlBool>`${status} in (${sql.join(scope.statuses.map((s) => sql`${s}`))})`
  if (scope.kind === 'all') return inStatuses
  return sql<SqlBool>`(${inStatuses} and (${status} = 'publish' or ${sql.ref(`${table}.author`)} = ${scope.owner}))`
}

/** Moves a record to the trash if its version is still `version` (compare-and-swap); false when it moved on. */
export async function trashPost(trx: Tx, table: PostTable, id: number, version: number, stamp: { modified: string; modified_utc: string }): Promise<boolean> {
  const result = await trx.updateTable(table)
    .set({ status: 'trash', version: version + 1, ...stamp })
    .where('id', '=', id).where('version', '=', version)
    .executeTakeFirst()
  if (Number(result.numUpdatedRows) !== 1) return false
  recordChange(trx, { resource: RESOURCE[table], id, action: 'update' })
  await groupSeenOtherwise(trx, table, RESOURCE[table], id)
  if (table !== 'events') await eventsShowingChanged(trx, table, id)
  return true
}

/**
 * The events linked to venue or organizer `id`, whose status or author just changed: who may read it
 * changed, so what the events show changed (it leaves or joins their `venue` or `organizer` arrays,
 * their iCalendar LOCATION or ORGANIZER). Each is updated as when it loses a link (`eventsLostLink`).
 */
export async function eventsShowingChanged(trx: Tx, table: 'venues' | 'organizers', id: number): Promise<void> {
  const linked = table === 'venues'
    ? await trx.selectFrom('event_venues').select('event_id').where('venue_id', '=', id).execute()
    : await trx.selectFrom('event_organizers').select('event_id').where('organizer_id', '=', id).execute()
  await eventsLostLink(trx, [...linked.map((l) => l.event_id), ...await seriesOverridingWith(trx, table, id)])
}

/**
 * The series with a changed occurrence that links venue or organizer `id` on its own (CONTRACT §17: the
 * override's links, `event_override_links`, read by target): what they show changes with that record too.
 */
async function seriesOverridingWith(trx: Tx, table: 'venues' | 'organizers', id: number): Promise<number[]> {
  const rows = await trx.selectFrom('event_override_links').select('event_id').distinct()
    .where('kind', '=', table === 'venues' ? 'venue' : 'organizer').where('target_id', '=', id).execute()
  return rows.map((r) => r.event_id)
}

/**
 * Deletes a record for good if its version is still `version` (false when it moved on); its links go
 * with it (foreign keys cascade), so the events that showed a venue or organizer change, and so do the
 * other versions of its translation group.
 */
export async function deletePost(trx: Tx, table: PostTable, id: number, version: number): Promise<boolean> {
  const linkedEvents = table === 'venues'
    ? await trx.selectFrom('event_venues').select('event_id').where('venue_id', '=', id).execute()
    : table === 'organizers'
      ? await trx.selectFrom('event_organizers').select('event_id').where('organizer_id', '=', id).execute()
      : []
  const overriding = table === 'events' ? [] : await seriesOverridingWith(trx, table, id)
  const deleted = await trx.deleteFrom(table).where('id', '=', id).where('version', '=', version)
    .returning(['language', 'translation_group']).executeTakeFirst()
  if (deleted === undefined) return false
  recordChange(trx, { resource: RESOURCE[table], id, action: 'delete', language: deleted.language })
  await eventsLostLink(trx, [...linkedEvents.map((l) => l.event_id), ...overriding])
  if (deleted.translation_group !== null) await reportGroupChanged(trx, table, RESOURCE[table], deleted.translation_group, id)
  return true
}

/**
 * The events that lost a link to a record deleted for good (foreign keys cascade): each is updated (a
 * change-log entry, CONTRACT §12) and its version moves on, as with any other update of its links, so
 * that what counts the event's updates (the ETag's version, the iCalendar SEQUENCE, §14) counts this
 * one too. Its `modified` stays: nobody edited the event.
 */
export async function eventsLostLink(trx: Tx, eventIds: readonly number[]): Promise<void> {
  const ids = [...new Set(eventIds)]
  if (ids.length === 0) return
  // In chunks: a term may be linked to more events than a statement takes parameters.
  for (let i = 0; i < ids.length; i += 1000) {
    await trx.updateTable('events').set((eb) => ({ version: eb('version', '+', 1) })).where('id', 'in', ids.slice(i, i + 1000)).execute()
  }
  for (const id of ids) recordChange(trx, { resource: 'event', id, action: 'update' })
}

/**
 * Whether writing `set` would change `row`: a column it names holds another value. The stamps of a
 * write (`modified`, `modified_utc`, `version`) are not changes of their own.
 */
export function changesRow(row: object, set: object): boolean {
  const before = new Map<string, unknown>(Object.entries(row))
  return Object.entries(set).some(([column, value]) =>
    value !== undefined && !STAMPS.has(column) && before.get(column) !== value)
}

const STAMPS = new Set(['modified', 'modified_utc', 'version'])

const RESOURCE = { events: 'event', venues: 'venue', organizers: 'organizer' } as const

/**
 * The fields every event, venue and organizer record has, mapped once for the three. `date` and `modified`
 * are the UTC instants' wall time in the site's zone as it is now (§2): the columns hold the wall time in the
 * zone of the write, which a later `CALENDAR_TIMEZONE` does not change.
 */
export function postFields(row: PostRow, site: Site, table: PostTable, image: Image | null, translations: Record<string, number>) {
  return {
    id: row.id,
    author: row.author,
    status: asStatus(row.status),
    date: siteWall(row.date_utc, row.date, site.timeZone),
    date_utc: row.date_utc,
    modified: siteWall(row.modified_utc, row.modified, site.timeZone),
    modified_utc: row.modified_utc,
    rest_url: `${site.apiUrl}/${table}/${row.id}`,
    description: row.description,
    slug: row.slug,
    image,
    ml_language: asLanguage(row.language),
    translations,
  }
}

/**
 * `utc` as wall time in `timeZone`; `stored` (the wall time the write stored) when that is past the years a
 * date may have (9999-12-31 23:30 UTC is in the year 10000 at +14:00).
 */
function siteWall(utc: string, stored: string, timeZone: string): string {
  try {
    return utcToWall(utc, timeZone)
  } catch {
    return stored
  }
}
