/**
 * /events operations: the list filters of CONTRACT §4 (dates, time zones, terms, links, geolocation),
 * single reads with status and password protection (§6), and writes with their date rules (§5).
 */
import { createHash, timingSafeEqual } from 'node:crypto'
import type { FastifyReply, FastifyRequest } from 'fastify'
import type { EventRow, Flag } from '../db/schema.js'
import { ApiError, forbidden, inTrash, invalidParam, notFound } from '../http/errors.js'
import { checkNotModified, etagOf, expectedVersion } from '../http/etag.js'
import type { Language, Schema, WritableStatus } from '../contract.js'
import { requestedLanguage } from '../http/language.js'
import type { Handlers } from '../http/operations.js'
import { checkPage, listLinks, pageOf, setListHeaders } from '../http/pagination.js'
import { sentQueryOf } from '../http/query.js'
import { listBody, sendSerialized, type Serialized } from '../http/serialized.js'
import {
  addYears, endOfDayUtc, isValidTimezone, parseBodyDate, parseFilterDate, startOfDayUtc, utcToWall, wallToUtc,
} from '../lib/dates.js'
import { canEdit, canRead, editsAll, listScope, statusToStore, type Caller } from '../lib/rights.js'
import {
  checkEventInput, checkIdsExist, countEvents, deleteEvent, eventIds, eventRecords, filterTermIds, findEvent, insertEvent, trashEvent, updateEvent,
  type EventFilter, type EventFound, type EventLinksInput, type EventValues, type EventView,
} from '../repositories/events.js'
import { geolocInactive } from '../repositories/venues.js'
import {
  emptyToNull, isHttpUrl, publicationDates, type PostRef,
} from '../repositories/posts.js'
import type { AppContext } from './context.js'
import { byId, bySlug, repoOf } from './linked.js'

type Event = Schema<'Event'>
type ListQuery = NonNullable<Parameters<Handlers['listEvents']>[0]['query']>
type EventBody = Schema<'EventCreate'> | Schema<'EventUpdate'> | Schema<'EventUpdateBySlug'>

const DATE_FILTERS = ['start_date', 'end_date', 'starts_before', 'starts_after', 'ends_before', 'ends_after'] as const

type EventHandlers = Pick<Handlers,
  | 'listEvents' | 'createEvent'
  | 'getEvent' | 'updateEvent' | 'updateEventPut' | 'updateEventPost' | 'deleteEvent'
  | 'getEventBySlug' | 'updateEventBySlug' | 'updateEventBySlugPut' | 'updateEventBySlugPost' | 'deleteEventBySlug'>

/** Compares a password in constant time (over digests, so lengths leak nothing either). */
function samePassword(given: string, stored: string): boolean {
  const digest = (s: string) => createHash('sha256').update(s, 'utf8').digest()
  return timingSafeEqual(digest(given), digest(stored))
}

const flag = (value: boolean | undefined): Flag | undefined => (value === undefined ? undefined : value ? 1 : 0)

export function eventHandlers(ctx: AppContext): EventHandlers {
  const repo = repoOf(ctx)
  const siteTz = ctx.config.timezone
  const etag = (row: EventRow): string => etagOf('event', row.id, row.version)

  async function find(ref: PostRef, language: Language | undefined, view: EventView): Promise<EventFound> {
    const found = await findEvent(repo, ref, language, view)
    if (found === undefined) throw notFound('event', 'id' in ref ? ref.id : ref.slug, 'id' in ref ? 'id' : 'slug')
    return found
  }

  /** Resolves the list's date filters to UTC bounds, with the defaults and whole-day widening of §4. */
  function dateWindow(query: ListQuery): { bounds: Partial<Record<(typeof DATE_FILTERS)[number], string>>; shown: Array<[string, string]> } {
    const bounds: Partial<Record<(typeof DATE_FILTERS)[number], string>> = {}
    if (query.include !== undefined && query.include.length > 0) return { bounds, shown: [] }
    const now = ctx.now()
    const strict = query.strict_dates ?? false
    for (const name of DATE_FILTERS) {
      const value = query[name]
      if (value === undefined) continue
      const parsed = parseFilterDate(value, siteTz, now)
      if (parsed === null) throw invalidParam(name, 'invalidFilterDate')
      bounds[name] = strict ? parsed.utc : name === 'start_date' ? startOfDayUtc(parsed.localDay, siteTz) : endOfDayUtc(parsed.localDay, siteTz)
    }
    const relative = ['starts_before', 'starts_after', 'ends_before', 'ends_after'].some((n) => query[n as keyof ListQuery] !== undefined)
    if (!relative) {
      const today = parseFilterDate('today', siteTz, now)
      if (today !== null) {
        bounds.start_date ??= startOfDayUtc(today.localDay, siteTz)
        bounds.end_date ??= endOfDayUtc(addYears(today.localDay, 2), siteTz)
      }
    }
    const shown: Array<[string, string]> = []
    if (bounds.start_date !== undefined) shown.push(['start_date', utcToWall(bounds.start_date, siteTz)])
    if (bounds.end_date !== undefined) shown.push(['end_date', utcToWall(bounds.end_date, siteTz)])
    return { bounds, shown }
  }

  function geoFilter(query: ListQuery): Pick<EventFilter, 'hasGeo' | 'near'> {
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

  async function list(req: FastifyRequest, query: ListQuery, reply: FastifyReply) {
    if (query.ticketed === true) {
      throw new ApiError(400, 'event-tickets-not-active', 'ticketsInactive', {}, { reasons: { ticketed: { key: 'ticketsInactive', vars: {} } } })
    }
    const geo = geoFilter(query)
    const scope = listScope(req.user, query.status)
    if (scope.kind === 'refused') throw invalidParam('status', 'statusNotAllowed')
    const language = query.ml_language ?? ctx.config.defaultLanguage
    const { bounds, shown } = dateWindow(query)
    const nonEmpty = <T>(list: T[] | undefined): T[] | undefined => (list === undefined || list.length === 0 ? undefined : list)
    const categories = nonEmpty(query.categories)
    const tags = nonEmpty(query.tags)
    const venues = nonEmpty(query.venue)
    const organizers = nonEmpty(query.organizer)
    // One look at the data version for the whole list: lookups, total, page and records.
    const generation = await ctx.cache.sync(ctx.db)
    const lookups = { cache: ctx.cache, generation }
    if (venues !== undefined) await checkIdsExist(ctx.db, 'venues', 'venue', venues, lookups)
    if (organizers !== undefined) await checkIdsExist(ctx.db, 'organizers', 'organizer', organizers, lookups)
    if (query.post_parent !== undefined) await checkIdsExist(ctx.db, 'events', 'post_parent', [query.post_parent], lookups)
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
      ...(categories !== undefined ? { categories: await filterTermIds(ctx.db, 'category', 'categories', categories, language, lookups) } : {}),
      ...(tags !== undefined ? { tags: await filterTermIds(ctx.db, 'tag', 'tags', tags, language, lookups) } : {}),
      ...(venues !== undefined ? { venues } : {}),
      ...(organizers !== undefined ? { organizers } : {}),
      ...(query.featured !== undefined ? { featured: query.featured } : {}),
      ...(query.post_parent !== undefined ? { postParent: query.post_parent } : {}),
    }
    const page = pageOf(query)
    const key = `events:${JSON.stringify(filter)}`
    const total = await ctx.cache.count(ctx.db, key, () => countEvents(ctx.db, filter), generation)
    const totalPages = checkPage('event', page, total)
    const ids = total === 0 ? [] : await ctx.cache.ids(ctx.db, `${key}:${page.offset}:${page.perPage}`, () => eventIds(ctx.db, filter, page.offset, page.perPage, total), generation)
    const caller = req.user
    // In lists a protected event keeps its place with description and excerpt null, for every caller (§6).
    const found = await eventRecords(repo, ids, { caller, single: false }, generation)
    // The effective window replaces the start_date/end_date sent; one ignored (under include) still shows as sent.
    const windowNames = new Set(shown.map(([name]) => name))
    const sent = sentQueryOf(req)
      .filter((name) => !windowNames.has(name))
      .map((name): [string, unknown] => [name, (query as Record<string, unknown>)[name]])
    const links = listLinks(`${ctx.apiUrl}/events`, page, totalPages, [...shown, ...sent])
    setListHeaders(reply, total, totalPages, links)
    // The records' JSON text is made once per cached record; the envelope by the route's schema.
    return sendSerialized(reply, listBody(reply, { events: [] as Event[], ...links, total, total_pages: totalPages }, 'events', found.map((f) => ctx.json.event(f.record))))
  }

  async function get(req: FastifyRequest, ref: PostRef, language: Language | undefined, password: string | undefined, reply: FastifyReply): Promise<Serialized<Event>> {
    const caller = req.user
    const found = await find(ref, language, { caller, single: true })
    const { row } = found
    if (row.status === 'trash') throw new ApiError(410, 'event-no-longer-available', 'noLongerAvailable')
    if (!canRead(caller, row)) throw new ApiError(403, 'event-not-accessible', 'notAccessible', { resource: 'event' })
    if (row.password !== null && !canEdit(caller, row) && (password === undefined || !samePassword(password, row.password))) {
      throw new ApiError(403, 'event-password-protected', 'passwordProtected')
    }
    checkNotModified(req, reply, etag(row))
    return sendSerialized(reply, ctx.json.event(found.record))
  }

  /** The time zone a write names: IANA or `UTC±N`, in its canonical spelling; null means the site's. */
  function timezoneOf(value: string | null): string {
    if (value === null || value === '') return siteTz
    if (!isValidTimezone(value)) throw invalidParam('timezone', 'invalidTimezone')
    if (/^UTC[+-]/i.test(value)) return `UTC${value.slice(3)}`
    return new Intl.DateTimeFormat('en-US', { timeZone: value }).resolvedOptions().timeZone
  }

  /**
   * The stored dates of a write: body dates parsed in the event's zone (or at their offset), all-day
   * events widened to whole days, and end before start refused on the merged record.
   */
  function datesOf(body: EventBody, current: EventRow | undefined): Pick<EventValues, 'timezone' | 'all_day' | 'start_date' | 'end_date' | 'start_utc' | 'end_utc'> {
    const touched = body.timezone !== undefined || body.all_day !== undefined || body.start_date !== undefined || body.end_date !== undefined
    if (current !== undefined && !touched) return {}
    const timezone = body.timezone !== undefined ? timezoneOf(body.timezone) : current?.timezone ?? siteTz
    const allDay = body.all_day ?? (current?.all_day === 1)
    const wall = (field: 'start_date' | 'end_date'): string => {
      const value = body[field]
      if (value !== undefined) {
        const utc = parseBodyDate(value, timezone)
        if (utc === null) throw invalidParam(field, 'invalidDate')
        return utcToWall(utc, timezone)
      }
      if (current === undefined) throw invalidParam(field, 'required')
      return field === 'start_date' ? current.start_date : current.end_date
    }
    let start = wall('start_date')
    let end = wall('end_date')
    if (allDay) {
      start = `${start.slice(0, 10)} 00:00:00`
      end = `${end.slice(0, 10)} 23:59:59`
    }
    const utc = (field: 'start_date' | 'end_date', value: string): string => {
      try {
        return wallToUtc(value, timezone)
      } catch {
        throw invalidParam(field, 'invalidDate')
      }
    }
    const startUtc = utc('start_date', start)
    const endUtc = utc('end_date', end)
    if (endUtc < startUtc) throw invalidParam('end_date', 'endBeforeStart')
    return { timezone, all_day: allDay ? 1 : 0, start_date: start, end_date: end, start_utc: startUtc, end_utc: endUtc }
  }

  function valuesOf(body: EventBody, current: EventRow | undefined): EventValues {
    const values: EventValues = { ...datesOf(body, current) }
    if (body.title !== undefined) values.title = body.title
    if (body.description !== undefined) values.description = emptyToNull(body.description) ?? null
    if (body.excerpt !== undefined) values.excerpt = emptyToNull(body.excerpt) ?? null
    if (body.slug !== undefined) values.slug = body.slug
    if (body.author !== undefined) values.author = body.author
    if (body.date !== undefined) values.date = body.date
    if (body.date_utc !== undefined) values.date_utc = body.date_utc
    if (body.image !== undefined) values.image = body.image
    if (body.cost !== undefined) values.cost = body.cost === null || body.cost === '' ? null : String(body.cost)
    if (body.website !== undefined) {
      const website = emptyToNull(body.website) ?? null
      if (website !== null && !isHttpUrl(website)) throw invalidParam('website', 'invalidUrl')
      values.website = website
    }
    if ('password' in body && body.password !== undefined) values.password = emptyToNull(body.password) ?? null
    const flags = { show_map: flag(body.show_map), show_map_link: flag(body.show_map_link), hide_from_listings: flag(body.hide_from_listings), sticky: flag(body.sticky), featured: flag(body.featured) }
    for (const [name, value] of Object.entries(flags)) if (value !== undefined) Object.assign(values, { [name]: value })
    return values
  }

  /**
   * The checks of an update body that need no record, run before it is looked up: the time zone, the
   * syntax of dates, the website, the image and author named, inline venues and organizers. What depends
   * on the record (end before start, terms and links in its language) is checked when it is written.
   */
  async function checkInput(body: EventBody): Promise<void> {
    if (body.timezone !== undefined) timezoneOf(body.timezone)
    for (const field of ['start_date', 'end_date'] as const) {
      const value = body[field]
      if (value !== undefined && parseBodyDate(value, siteTz) === null) throw invalidParam(field, 'invalidDate')
    }
    const website = emptyToNull(body.website)
    if (website !== null && website !== undefined && !isHttpUrl(website)) throw invalidParam('website', 'invalidUrl')
    publicationDates(body, siteTz, { date: '', date_utc: '' })
    await checkEventInput(repo, body.image, body.author, linksOf(body))
  }

  function linksOf(body: EventBody): EventLinksInput {
    return {
      ...(body.categories !== undefined ? { categories: body.categories } : {}),
      ...(body.tags !== undefined ? { tags: body.tags } : {}),
      ...(body.venue !== undefined ? { venue: body.venue } : {}),
      ...(body.organizer !== undefined ? { organizer: body.organizer } : {}),
    }
  }

  function writer(caller: Caller, status: string | undefined) {
    return {
      callerId: caller.id, mayAssignAuthor: editsAll(caller), status, now: ctx.now(),
      inlineStatus: (requested: WritableStatus | undefined) => statusToStore(caller, requested),
    }
  }

  const editorView = (caller: Caller): EventView => ({ caller, single: false, unlocked: () => true })

  async function create(req: FastifyRequest, body: Schema<'EventCreate'>, reply: FastifyReply): Promise<Event> {
    const caller = req.user
    if (caller === null) throw forbidden(401)
    const language = requestedLanguage(req) ?? ctx.config.defaultLanguage
    const values = valuesOf(body, undefined)
    const { timezone, start_date, end_date, start_utc, end_utc } = values
    if (timezone === undefined || start_date === undefined || end_date === undefined || start_utc === undefined || end_utc === undefined) {
      throw invalidParam('start_date', 'required')
    }
    const id = await insertEvent(repo, { ...values, title: body.title, timezone, start_date, end_date, start_utc, end_utc },
      linksOf(body), language, body.translation_of, writer(caller, statusToStore(caller, body.status)))
    const found = await find({ id }, undefined, editorView(caller))
    reply.code(201).header('Location', found.record.rest_url).header('ETag', etag(found.row))
    return found.record
  }

  async function update(req: FastifyRequest, ref: PostRef, body: EventBody, reply: FastifyReply): Promise<Event> {
    const caller = req.user
    if (caller === null) throw forbidden(401)
    // Fields first (400), then the record (404/410), rights (403) and If-Match (412): CONTRACT §1.
    await checkInput(body)
    const current = await find(ref, requestedLanguage(req), editorView(caller))
    const { row } = current
    if (row.status === 'trash' && body.status === undefined) throw inTrash('event')
    if (!canEdit(caller, row) && !(row.status === 'trash' && editsAll(caller))) throw forbidden(403)
    // Setting another author is a right on the record (403), checked before If-Match (412).
    if (body.author !== undefined && body.author !== caller.id && !editsAll(caller)) throw forbidden(403)
    const expected = expectedVersion(req, etag(row), row.version) ?? row.version
    const status = body.status === undefined ? undefined : statusToStore(caller, body.status, row.status)
    await updateEvent(repo, row, valuesOf(body, row), linksOf(body), expected, writer(caller, status))
    const found = await find({ id: row.id }, undefined, editorView(caller))
    reply.header('ETag', etag(found.row))
    return found.record
  }

  async function remove(req: FastifyRequest, ref: PostRef, force: boolean): Promise<Event | { deleted: true; previous: Event }> {
    const caller = req.user
    if (caller === null) throw forbidden(401)
    const current = await find(ref, requestedLanguage(req), editorView(caller))
    const { row } = current
    if (row.status === 'trash' && !force) throw inTrash('event')
    if (!canEdit(caller, row) && !editsAll(caller)) throw forbidden(403)
    const expected = expectedVersion(req, etag(row), row.version) ?? row.version
    if (force) {
      await deleteEvent(repo, row, expected)
      return { deleted: true, previous: current.record }
    }
    await trashEvent(repo, row, expected, ctx.now())
    return (await find({ id: row.id }, undefined, editorView(caller))).record
  }

  return {
    listEvents: (req, reply) => list(req, req.query ?? {}, reply),
    createEvent: (req, reply) => create(req, req.body, reply),
    getEvent: (req, reply) => get(req, byId(req.params), req.query?.ml_language, req.query?.password, reply),
    updateEvent: (req, reply) => update(req, byId(req.params), req.body, reply),
    updateEventPut: (req, reply) => update(req, byId(req.params), req.body, reply),
    updateEventPost: (req, reply) => update(req, byId(req.params), req.body, reply),
    deleteEvent: (req) => remove(req, byId(req.params), req.query?.force ?? false),
    getEventBySlug: (req, reply) => get(req, bySlug(req.params), req.query?.ml_language, undefined, reply),
    updateEventBySlug: (req, reply) => update(req, bySlug(req.params), req.body, reply),
    updateEventBySlugPut: (req, reply) => update(req, bySlug(req.params), req.body, reply),
    updateEventBySlugPost: (req, reply) => update(req, bySlug(req.params), req.body, reply),
    deleteEventBySlug: (req) => remove(req, bySlug(req.params), req.query?.force ?? false),
  }
}
