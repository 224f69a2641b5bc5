/**
 * What an event list query asks for once checked (CONTRACT §4): the caller's scope, the date window,
 * the `geoloc` filters, and the venues, organizers, parent, categories and tags it names resolved to
 * ids. Every refusal names the parameter, in the order the contract checks them.
 */
import type { Language, QueryOf } from '../contract.js'
import { ApiError, geolocInactive, invalidParam } from '../http/errors.js'
import { dateWindow } from '../lib/date-window.js'
import { modifiedShown, modifiedWindow } from '../lib/modified-window.js'
import { canReadLinked, listScope, type Caller } from '../lib/rights.js'
import { linkedOwners } from '../repositories/linked.js'
import { filterTermId, firstUnknownId, type EventFilter } from '../repositories/event-filters.js'
import type { AppContext } from './context.js'

export type ListQuery = QueryOf<'listEvents'>

/**
 * The filter of a list query, and the window's bounds as the list's `rest_url` shows them; `now` is the clock
 * the date and `modified_*` windows are read at (`today`, `now`, the default window).
 */
export async function eventFilterOf(ctx: AppContext, caller: Caller | null, query: ListQuery, now = ctx.now()): Promise<{ filter: EventFilter; shown: Array<[string, string]> }> {
  if (query.ticketed === true) {
    throw new ApiError(400, 'event-tickets-not-active', 'ticketsInactive', {}, { reasons: { ticketed: { key: 'ticketsInactive', vars: {} } } })
  }
  const geo = geoFilter(ctx, query)
  const scope = listScope(caller, query.status)
  if (scope.kind === 'refused') throw invalidParam('status', 'statusNotAllowed')
  const language = query.ml_language ?? ctx.config.defaultLanguage
  const window = dateWindow(query, ctx.config.timezone, now)
  if ('invalid' in window) throw invalidParam(window.invalid, 'invalidFilterDate')
  const { bounds, shown } = window
  const modified = modifiedWindow(query, ctx.config.timezone, now)
  if ('invalid' in modified) throw invalidParam(modified.invalid, 'invalidFilterDate')
  const nonEmpty = <T>(list: T[] | undefined): T[] | undefined => (list === undefined || list.length === 0 ? undefined : list)
  const categories = nonEmpty(query.categories)
  const tags = nonEmpty(query.tags)
  const venues = nonEmpty(query.venue)
  const organizers = nonEmpty(query.organizer)
  // A venue or organizer in the trash matches no event (CONTRACT §5): only the others filter.
  const venueIds = venues === undefined ? undefined : await checkReadable(ctx, caller, 'venues', 'venue', venues, language)
  const organizerIds = organizers === undefined ? undefined : await checkReadable(ctx, caller, 'organizers', 'organizer', organizers, language)
  if (query.post_parent !== undefined) await checkKnown(ctx, 'events', 'post_parent', [query.post_parent])
  const include = nonEmpty(query.include)
  const filter: EventFilter = {
    language,
    scope,
    ...geo,
    ...(include !== undefined ? { include } : {}),
    ...(bounds.start_date !== undefined ? { startGte: bounds.start_date } : {}),
    ...(bounds.end_date !== undefined ? { endLte: bounds.end_date } : {}),
    ...(bounds.starts_after !== undefined ? { startGt: bounds.starts_after } : {}),
    ...(bounds.starts_before !== undefined ? { startLt: bounds.starts_before } : {}),
    ...(bounds.ends_after !== undefined ? { endGt: bounds.ends_after } : {}),
    ...(bounds.ends_before !== undefined ? { endLt: bounds.ends_before } : {}),
    ...(query.search !== undefined ? { search: query.search } : {}),
    ...(categories !== undefined ? { categories: await termIds(ctx, 'category', 'categories', categories, language) } : {}),
    ...(tags !== undefined ? { tags: await termIds(ctx, 'tag', 'tags', tags, language) } : {}),
    ...(venueIds !== undefined ? { venues: venueIds } : {}),
    ...(organizerIds !== undefined ? { organizers: organizerIds } : {}),
    ...(query.featured !== undefined ? { featured: query.featured } : {}),
    ...(query.post_parent !== undefined ? { postParent: query.post_parent } : {}),
    ...(query.hide_subsequent_recurrences === true ? { hideSubsequent: true } : {}),
    ...modified,
  }
  return { filter, shown: [...shown, ...modifiedShown(modified, ctx.config.timezone)] }
}

/**
 * What the clock makes of a list query at `now`: the UTC bounds its date and `modified_*` windows resolve to
 * (the default window is the site's day … two years on), as text; undefined when a date is not one (the
 * list answers 400). All else a list answers is a function of its URL, its caller and the data, so a hot
 * answer keyed by the URL and this is never served after its window moved (at midnight, or a `now` a second on).
 */
export function windowKeyOf(ctx: AppContext, query: ListQuery, now: Date): string | undefined {
  const window = dateWindow(query, ctx.config.timezone, now)
  if ('invalid' in window) return undefined
  const modified = modifiedWindow(query, ctx.config.timezone, now)
  if ('invalid' in modified) return undefined
  const bounds = window.bounds
  return [bounds.start_date, bounds.end_date, bounds.starts_after, bounds.starts_before, bounds.ends_after, bounds.ends_before,
    modified.modifiedAfter, modified.modifiedBefore].map((b) => b ?? '').join(' ')
}

function geoFilter(ctx: AppContext, query: ListQuery): Pick<EventFilter, 'hasGeo' | 'near'> {
  const sent = (['geoloc', 'geoloc_lat', 'geoloc_lng'] as const).filter((n) => query[n] !== undefined)
  const first = sent[0]
  if (first === undefined) return {}
  if (!ctx.config.extensions.has('geoloc')) throw geolocInactive(first)
  const out: Pick<EventFilter, 'hasGeo' | 'near'> = {}
  if (query.geoloc !== undefined) out.hasGeo = query.geoloc
  if ((query.geoloc_lat === undefined) !== (query.geoloc_lng === undefined)) {
    throw invalidParam(query.geoloc_lat === undefined ? 'geoloc_lat' : 'geoloc_lng', 'geolocPair')
  }
  if (query.geoloc_lat !== undefined && query.geoloc_lng !== undefined) {
    out.near = { lat: query.geoloc_lat, lng: query.geoloc_lng, km: ctx.config.geofenceKm }
  }
  return out
}

/**
 * Every id must name a venue or organizer of the list's language that the caller may read: one it may not is
 * refused like an unknown id (CONTRACT §6), and so is one of another language, which no event of the list can
 * link (§7: links point to records in the event's language), as slugs of another language are. Returns
 * those not in the trash: a trashed one matches no event (§5).
 */
async function checkReadable(ctx: AppContext, caller: Caller | null, table: 'venues' | 'organizers', field: string, ids: number[], language: Language): Promise<number[]> {
  const owners = await linkedOwners(ctx.db, table, ids)
  const linkable: number[] = []
  for (const id of ids) {
    const owner = owners.get(id)
    if (owner === undefined || owner.language !== language || !canReadLinked(caller, owner)) throw invalidParam(field, 'unknownLinked', { value: String(id) })
    if (owner.status !== 'trash') linkable.push(id)
  }
  return linkable
}

/** Every id must name an existing record of `table` (the parent filter). */
async function checkKnown(ctx: AppContext, table: 'venues' | 'organizers' | 'events', field: string, ids: number[]): Promise<void> {
  const unknown = await firstUnknownId(ctx.db, table, ids)
  if (unknown !== undefined) throw invalidParam(field, 'unknownLinked', { value: String(unknown) })
}

/** The ids of the terms `categories`/`tags` entries name (ids or slugs, of terms in the list's language). */
async function termIds(ctx: AppContext, taxonomy: 'category' | 'tag', field: string, entries: Array<number | string>, language: Language): Promise<number[]> {
  const ids: number[] = []
  for (const entry of entries) {
    const id = await filterTermId(ctx.db, taxonomy, entry, language)
    if (id === undefined) throw invalidParam(field, 'unknownTerm', { value: String(entry) })
    ids.push(id)
  }
  return ids
}
