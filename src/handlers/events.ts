/**
 * /events operations: lists with the filters of CONTRACT §4, single reads with status and password
 * protection (§6), and writes (§5), each one unit of work: the body checked (event-input.ts), the
 * record found and the caller's rights and `If-Match` checked, then the write, then the record read back (a create's
 * made from what it wrote, its linked records read: repositories/event-records.ts `writtenEventRecord`).
 * The three reads also answer as iCalendar (§14: `http/ical.ts` decides, `lib/ical.ts` writes).
 */
import type { FastifyReply, FastifyRequest } from 'fastify'
import type { Event, Language, Schema } from '../contract.js'
import { versionProbeOf } from '../db/dialect.js'
import type { Db, Tx } from '../db/unit-of-work.js'
import type { EventDates } from '../lib/event-dates.js'
import { ApiError, forbidden, inTrash, notFound } from '../http/errors.js'
import { checkNotModified, eventEtag, expectedVersion } from '../http/etag.js'
import { feedEtag, sendFeed, wantsIcal } from '../http/ical.js'
import { requestedLanguage } from '../http/language.js'
import type { Handlers } from '../http/operations.js'
import { setListHeaders, type ListEnvelope } from '../http/pagination.js'
import { sentQueryOf } from '../http/query.js'
import { sendSerialized, type Serialized } from '../http/serialized.js'
import { seenBy, withJsonLd } from '../lib/event-view.js'
import { FEED_FORMAT, feedShownDigest, icalFeed, type FeedEvent } from '../lib/ical.js'
import { samePassword } from '../lib/passwords.js'
import { modifiedNow } from '../lib/post-dates.js'
import { canEdit, canRead, editsAll, statusToStore, type Caller, type Owned } from '../lib/rights.js'
import { countEvents, eventIds } from '../repositories/event-filters.js'
import type { DocumentRead } from '../repositories/event-documents.js'
import {
  eventAccess, eventAfterWrite, findEvent, findEventSeen, storedEvents, writtenEventRecord, type SeenEvent, type StoredEvent,
} from '../repositories/event-records.js'
import { LookMoved, holdsHotAnswer, hotAnswer, hotAnswerNow, keepHotAnswer, lookHolds, onTrust, provisionalLook, withLook, type ProvisionalLook } from '../repositories/read-cache.js'
import { changedOccurrences, type ChangedOccurrence } from '../repositories/override-reads.js'
import { deleteEvent, insertEvent, trashEvent, updateEvent } from '../repositories/event-writes.js'
import type { PostRef } from '../repositories/posts.js'
import { lost, writeRead } from './compare-and-swap.js'
import type { AppContext } from './context.js'
import { createOnce } from './idempotency.js'
import { documentAnswer, eventDocument } from './event-documents.js'
import { askedBefore, hotListKey, listAnswer, type HotList } from './event-lists.js'
import { checkEventUpdate, checkNewEvent, datesOf, eventColumns, precheckEventUpdate, seriesChange, type EventBody } from './event-input.js'
import { eventFilterOf, windowKeyOf, type ListQuery } from './event-list-input.js'
import { byId, bySlug, lookupLanguage, writerOf } from './linked.js'

/** How PATCHes and deletes of events run: on PostgreSQL beside other creates, PATCHes and deletes of events (issue 49). */
const CONCURRENT_EVENT_WRITE = { concurrent: true }

type EventHandlers = Pick<Handlers,
  | 'listEvents' | 'createEvent'
  | 'getEvent' | 'updateEvent' | 'updateEventPut' | 'updateEventPost' | 'deleteEvent'
  | 'getEventBySlug' | 'updateEventBySlug' | 'updateEventBySlugPut' | 'updateEventBySlugPost' | 'deleteEventBySlug'>

/**
 * Refuses a single read the caller may not have (CONTRACT §6), in this order: a trashed event (410 for
 * everyone), one the caller may not read (403), a protected one without its password or edit rights (403).
 */
export function refuseRead(caller: Caller | null, event: Owned, protectedBy: string | null, password: string | undefined): void {
  if (event.status === 'trash') throw new ApiError(410, 'event-no-longer-available', 'noLongerAvailable')
  if (!canRead(caller, event)) throw new ApiError(403, 'event-not-accessible', 'notAccessible', { resource: 'event' })
  if (protectedBy !== null && !canEdit(caller, event) && (password === undefined || !samePassword(password, protectedBy))) {
    throw new ApiError(403, 'event-password-protected', 'passwordProtected')
  }
}

/** An anonymous single read's answer from an event's document, kept as bytes while the data stays as it was. */
interface HotEvent {
  /** The API's URL its links were made for. */
  apiUrl: string
  etag: string
  body: Serialized<Event>
}

export function eventHandlers(ctx: AppContext): EventHandlers {
  /** The ETag of the event as `caller` sees it. */
  const etag = (stored: StoredEvent, caller: Caller | null): string => eventEtag(seenBy(caller, stored.record), stored.version)

  async function find(ref: PostRef, language: Language | undefined, reader: Db = ctx.db): Promise<StoredEvent> {
    const stored = await findEvent(reader, ctx.site, ref, lookupLanguage(ctx, ref, language))
    if (stored === undefined) throw notFound('event', 'id' in ref ? ref.id : ref.slug, 'id' in ref ? 'id' : 'slug')
    return stored
  }

  /**
   * A write's answer: the record as its writer sees it (protected text and all, no JSON-LD), read inside the
   * write's unit of work (`reader`), so that nothing after the commit can turn a write that was made into an
   * error (CONTRACT §18: a read back on another connection failing answered a committed create 500).
   */
  async function written(id: number, caller: Caller, reader: Db): Promise<{ record: Event; etag: string }> {
    const stored = await find({ id }, undefined, reader)
    return { record: seenBy(caller, stored.record), etag: etag(stored, caller) }
  }

  /**
   * An update's answer (as `written`): the event read back inside its unit of work, its linked records taken from
   * the read before it (`before`) when nothing else wrote between (event-records.ts `eventAfterWrite`): a PATCH's
   * event assembled once (issue 49).
   */
  async function updated(id: number, caller: Caller, trx: Tx, before: SeenEvent | undefined): Promise<{ record: Event; etag: string }> {
    const stored = await eventAfterWrite(trx, ctx.site, id, before)
    if (stored === undefined) throw notFound('event', id, 'id')
    return { record: seenBy(caller, stored.record), etag: etag(stored, caller) }
  }

  /**
   * The feed of `events` as `caller` sees them (UIDs on the host of `{base_url}`), or 304: the tag is
   * made from what the feed is made of, before any of it is written. SEQUENCE is the stored version,
   * which starts at 1 and grows with every update of the event (its links lost to a delete included).
   * A series (CONTRACT §17) comes with its changed occurrences, each a VEVENT of its own: their overrides
   * are read here, and their versions go into the tag, so a change of one occurrence is a new feed.
   */
  async function feed(req: FastifyRequest, reply: FastifyReply, events: readonly StoredEvent[], caller: Caller | null, name: string): Promise<string> {
    const options = { host: new URL(ctx.publicUrl).host, name, siteZone: ctx.config.timezone }
    const series = events.filter((stored) => stored.record.recurrence !== null).map((stored) => stored.record)
    const changed = series.length === 0 ? new Map<number, ChangedOccurrence[]>() : await changedOccurrences(ctx.db, ctx.site, series)
    const shown = events.map((stored): FeedEvent => {
      const event: FeedEvent = { record: seenBy(caller, stored.record), sequence: stored.version - 1, passwordProtected: stored.password !== null }
      const recurrence = stored.record.recurrence
      if (recurrence === null) return event
      const occurrences = (changed.get(stored.record.id) ?? []).map((c) => ({ record: seenBy(caller, c.record), original: c.original }))
      return { ...event, series: { recurrence, changed: occurrences } }
    })
    // Each event by its id, version (SEQUENCE) and a digest of what its VEVENT shows of it as the caller sees it
    // (`feedShownDigest`: a new translation or a term's count moving is no new feed, a renamed venue is); a
    // changed occurrence likewise, so a venue or organizer linked by that occurrence alone counts too.
    const tag = feedEtag([FEED_FORMAT, options.host, options.name, options.siteZone,
      ...shown.map((e, i) => `${e.record.id}:${events[i]?.version ?? 0}:${feedShownDigest(e.record)}${e.passwordProtected ? 'p' : ''}${
        (e.series?.changed ?? []).map((c, j) => ` ${c.record.occurrence?.id ?? ''}:${changed.get(e.record.id)?.[j]?.version ?? 0}:${feedShownDigest(c.record)}`).join('')}`)])
    return sendFeed(req, reply, tag, () => icalFeed(shown, options))
  }

  /** A list as a feed (§14): the JSON list's filters and order, no pages, at most CALENDAR_ICAL_MAX_EVENTS. */
  async function listFeed(req: FastifyRequest, query: ListQuery, reply: FastifyReply): Promise<string> {
    const listed = await eventFilterOf(ctx, req.user, query)
    // The list's rows are occurrences: a series is in the feed once (its VEVENT holds them all), at the place of its
    // first matching occurrence (`hide_subsequent_recurrences`), so the cap and X-Total count events (CONTRACT §14).
    const filter = listed.filter.include === undefined ? { ...listed.filter, hideSubsequent: true } : listed.filter
    const total = await countEvents(ctx.db, filter)
    const ids = total === 0 ? [] : await eventIds(ctx.db, filter, 0, Math.min(total, ctx.config.icalMaxEvents), total)
    const events = await storedEvents(ctx.db, ctx.site, [...new Set(ids)])
    // One page holding every match up to the cap; X-Total counts them all.
    reply.header('X-Total', String(total)).header('X-Total-Pages', total === 0 ? '0' : '1')
    // X-WR-CALNAME: "Events – <host>" in the request's language (the language of error texts).
    const name = ctx.catalog.translate(requestedLanguage(req) ?? ctx.config.defaultLanguage, 'calendarName', { host: new URL(ctx.publicUrl).host })
    return feed(req, reply, events, req.user, name)
  }

  function list(req: FastifyRequest, query: ListQuery, reply: FastifyReply): Promise<Serialized<ListEnvelope<'events', Event>> | string> | Serialized<ListEnvelope<'events', Event>> {
    if (wantsIcal(req, reply, query.ical)) return listFeed(req, query, reply)
    // An anonymous JSON list: the answer sent last for the same URL and window if the data has not changed
    // since (kept as bytes by the read cache, with its headers' values), else made from the data. Answered at
    // once when the look at the data version is (SQLite), without a promise.
    const now = ctx.now()
    const windowKey = req.user === null ? windowKeyOf(ctx, query, now) : undefined
    const hotKey = windowKey === undefined ? '' : hotListKey(ctx, req.url, windowKey)
    const looked = windowKey === undefined ? undefined : hotAnswerNow<HotList>(ctx.db, hotKey)
    // Replayed before routing (http/replay.ts) while its generation is the current one and the clock keeps its window.
    if (windowKey !== undefined) req.replayHolds = () => windowKeyOf(ctx, query, ctx.now()) === windowKey
    if (looked?.value !== undefined) return sendHotList(req, reply, looked.value, looked.generation)
    return madeList(req, query, reply, now, hotKey, windowKey === undefined ? undefined : looked)
  }

  /** The hot answer of `generation`, sent (and marked replayable: http/replay.ts). */
  function sendHotList(req: FastifyRequest, reply: FastifyReply, hot: HotList, generation: number | undefined): Serialized<ListEnvelope<'events', Event>> {
    setListHeaders(reply, hot.page.total, hot.page.totalPages, hot.page.links)
    req.replayable = generation
    return sendSerialized(reply, hot.body)
  }

  /**
   * A JSON list made from the data (see `list`); `hotKey` names its hot answer when it may have one, '' when
   * not, and `looked` is that answer's look if it was taken.
   */
  async function madeList(
    req: FastifyRequest, query: ListQuery, reply: FastifyReply, now: Date,
    hotKey: string, looked: { generation: number | undefined; value: HotList | undefined } | undefined,
  ): Promise<Serialized<ListEnvelope<'events', Event>>> {
    // PostgreSQL: an anonymous page with no hot answer kept reads on a look taken on trust (read-cache.ts
    // `provisionalLook`): its cached reads ask no version of their own, the statement of its event documents
    // settles the look (else a look of its own before it answers, or before an error is sent); when the data had
    // moved, the page is read again after a real look.
    const look = req.user === null && !holdsHotAnswer(ctx.db, hotKey) ? provisionalLook(ctx.db) : undefined
    if (look !== undefined) {
      try {
        return await onTrust(look, () => listPage(req, query, reply, now, hotKey, look.generation, look))
      } catch (error) {
        if (!(error instanceof LookMoved) && (await lookHolds(ctx.db, look))) throw error
      }
    }
    const hot = hotKey === '' ? undefined : looked ?? await hotAnswer<HotList>(ctx.db, hotKey)
    if (hot?.value !== undefined) return sendHotList(req, reply, hot.value, hot.generation)
    // PostgreSQL: the page's cached reads use that look (taken after the request arrived) while its generation is the
    // current one (read-cache.ts `withLook`): each asked the engine again whenever another request had arrived since,
    // a round trip each (4–5 a page with ten requests in flight, where one at a time asks none). SQLite's look is the
    // connection's probe, which answers at once.
    if (hot !== undefined && versionProbeOf(ctx.db) === undefined) return withLook(ctx.db, hot.generation, () => listPage(req, query, reply, now, hotKey, hot.generation))
    return listPage(req, query, reply, now, hotKey, hot?.generation)
  }

  /** A page made from the data; kept as the hot answer `hotKey` (if not '') of `generation`; `look`: see `madeList`. */
  async function listPage(
    req: FastifyRequest, query: ListQuery, reply: FastifyReply, now: Date, hotKey: string, generation: number | undefined, look?: ProvisionalLook,
  ): Promise<Serialized<ListEnvelope<'events', Event>>> {
    const made = await listAnswer(ctx, req.user, query, { names: sentQueryOf(req), digits: req.sentDigits }, now, look)
    setListHeaders(reply, made.page.total, made.page.totalPages, made.page.links)
    const body = sendSerialized(reply, made.body)
    if (hotKey !== '' && askedBefore(ctx, hotKey)) {
      keepHotAnswer(ctx.db, generation, hotKey, made satisfies HotList, body.length)
      req.replayable = generation
    }
    return body
  }

  function get(req: FastifyRequest, ref: PostRef, language: Language | undefined, password: string | undefined, ical: boolean | undefined, reply: FastifyReply): Promise<Serialized<Event> | string> | Serialized<Event> {
    const asFeed = wantsIcal(req, reply, ical)
    // An anonymous JSON read by id in the event's own language: the answer sent last if the data has not
    // changed since (kept as bytes by the read cache), else its stored document when there is one. Answered
    // at once when the look at the data version is (SQLite), without a promise.
    const fromDocument = req.user === null && !asFeed && 'id' in ref && language === undefined && Number.isSafeInteger(ref.id)
    const hotKey = fromDocument ? `answer:event:${(ref as { id: number }).id}` : ''
    const looked = fromDocument ? hotAnswerNow<HotEvent>(ctx.db, hotKey) : undefined
    if (looked?.value !== undefined && looked.value.apiUrl === ctx.apiUrl) {
      checkNotModified(req, reply, looked.value.etag)
      req.replayable = looked.generation
      return sendSerialized(reply, looked.value.body)
    }
    return made(req, ref, language, password, asFeed, reply, fromDocument, hotKey, looked)
  }

  /** A single read made from the data (see `get`); `looked`: the hot answer's look, if it was taken. */
  async function made(
    req: FastifyRequest, ref: PostRef, language: Language | undefined, password: string | undefined, asFeed: boolean, reply: FastifyReply,
    fromDocument: boolean, hotKey: string, looked: { generation: number | undefined; value: HotEvent | undefined } | undefined,
  ): Promise<Serialized<Event> | string> {
    const caller = req.user
    // PostgreSQL: the request's look at the data version reads the document too, in one statement (the
    // snapshot the look sees), unless a hot answer is kept for this URL; the last look made is the one used.
    let read: DocumentRead | undefined
    const withVersion = ctx.documents.readWithVersion
    const id = (ref as { id: number }).id
    const look = fromDocument && withVersion !== undefined ? async () => {
      const both = await withVersion(id, ctx.apiUrl)
      read = both.read
      return both.version
    } : undefined
    const hot = fromDocument ? looked ?? await hotAnswer<HotEvent>(ctx.db, hotKey, look) : undefined
    if (hot?.value !== undefined && hot.value.apiUrl === ctx.apiUrl) {
      checkNotModified(req, reply, hot.value.etag)
      req.replayable = hot.generation
      return sendSerialized(reply, hot.value.body)
    }
    const document = fromDocument ? read ?? await ctx.documents.read(id, ctx.apiUrl) : undefined
    if (document?.found === true) {
      const answer = await documentAnswer(ctx, document.document)
      if (answer !== undefined) {
        checkNotModified(req, reply, answer.etag)
        const body = answer.body()
        keepHotAnswer(ctx.db, hot?.generation, hotKey, { apiUrl: ctx.apiUrl, etag: answer.etag, body } satisfies HotEvent, body.length)
        // The hot answer of that generation: replayed before routing while it is the current one (http/replay.ts).
        req.replayable = hot?.generation
        return sendSerialized(reply, body)
      }
    }
    if (document?.found === false && 'id' in ref) {
      // No document: an event the anonymous caller may not read is refused from its row alone (no assembly).
      const access = await eventAccess(ctx.db, ref.id)
      if (access === undefined) throw notFound('event', ref.id, 'id')
      refuseRead(caller, access, access.password, password)
    }
    const stored = await find(ref, language)
    const { record } = stored
    refuseRead(caller, record, stored.password, password)
    if (asFeed) return await feed(req, reply, [stored], caller, record.title)
    if (document?.found === false) {
      const offered = eventDocument(ctx, stored)
      if (offered !== undefined) ctx.documents.offer(document.version, ctx.apiUrl, offered)
    }
    checkNotModified(req, reply, etag(stored, caller))
    return sendSerialized(reply, ctx.json.event(withJsonLd(seenBy(caller, record))))
  }

  /**
   * Whether a create is a small unit of work (unit-of-work.ts `UnitOptions.small`): its rows are bounded by its body
   * and MAX_OCCURRENCES, and its triggers reach its own translation group's documents alone, unless it creates a venue
   * or organizer inline as a translation (their triggers drop the documents of every event of that group's records).
   */
  function smallCreate(body: Schema<'EventCreate'>): boolean {
    const inlineTranslation = (value: unknown): boolean => (Array.isArray(value) ? value as unknown[] : [value]).some((entry) =>
      typeof entry === 'object' && entry !== null && 'translation_of' in entry && entry.translation_of !== undefined && entry.translation_of !== null)
    return !inlineTranslation(body.venue) && !inlineTranslation(body.organizer)
  }

  async function create(req: FastifyRequest, body: Schema<'EventCreate'>, reply: FastifyReply): Promise<Serialized<Event>> {
    const caller = req.user
    if (caller === null) throw forbidden(401)
    const language = requestedLanguage(req) ?? ctx.config.defaultLanguage
    const writer = writerOf(ctx, caller)
    const columns = eventColumns(body, undefined, ctx.config.timezone)
    // The series expanded before the unit of work (pure); the dates are all there on a create.
    const series = seriesChange(body, columns as EventDates, undefined, writer.now, ctx.config.recurrenceHorizonDays)
    return createOnce(ctx, req, reply,
      async (trx) => insertEvent(trx, { ...await checkNewEvent(trx, body, columns, language, caller, writer), series }),
      async (reader, made) => {
        // The record made from what the write wrote (its linked records read), as a read back would make it.
        const stored = await writtenEventRecord(reader, ctx.site, made)
        const record = seenBy(caller, stored.record)
        return { body: ctx.json.event(record), location: record.rest_url, etag: etag(stored, caller) }
      },
      // Beside other creates on PostgreSQL (issue 49): a slug or translation taken meanwhile is refused by its unique
      // index, and the create runs again alone. SQLite: a small unit of work, unless it makes a translation inline.
      { concurrent: true, small: smallCreate(body) })
  }

  async function update(req: FastifyRequest, ref: PostRef, body: EventBody, reply: FastifyReply): Promise<Event> {
    const caller = req.user
    if (caller === null) throw forbidden(401)
    const writer = writerOf(ctx, caller)
    // Fields first (400), then the record (404/410), rights (403) and If-Match (412): CONTRACT §1.
    await precheckEventUpdate(ctx.db, body, writer)
    const answer = await writeRead(ctx.db, req, async (reader, write) => {
      // Read outside the unit of work (the first attempt): with the data version it holds at, for the answer.
      const seen = reader === ctx.db ? await findEventSeen(reader, ctx.site, ref, lookupLanguage(ctx, ref, requestedLanguage(req))) : undefined
      const current = seen?.stored ?? await find(ref, requestedLanguage(req), reader)
      const { record } = current
      if (record.status === 'trash' && body.status === undefined) throw inTrash('event')
      if (!canEdit(caller, record) && !(record.status === 'trash' && editsAll(caller))) throw forbidden(403)
      // Setting another author is a right on the record (403), checked before If-Match (412).
      if (body.author !== undefined && body.author !== caller.id && !editsAll(caller)) throw forbidden(403)
      const expected = expectedVersion(req, () => etag(current, caller), current.version) ?? current.version
      const status = body.status === undefined ? undefined : statusToStore(caller, body.status, record.status)
      const columns = eventColumns(body, datesOf(record), ctx.config.timezone)
      const series = seriesChange(body, { ...datesOf(record), ...columns } as EventDates, record.recurrence, writer.now, ctx.config.recurrenceHorizonDays)
      return write(async (trx) => {
        const changes = await checkEventUpdate(trx, record, body, columns, status, caller, writer)
        if (!(await updateEvent(trx, { ...changes, series }, expected))) lost()
        return updated(record.id, caller, trx, seen)
      })
      // Beside other writes on PostgreSQL (issue 49): the event's row locked for the compare (updateEvent); a slug taken
      // meanwhile or a deadlock runs it again alone, a compare lost reads again inside a unit that runs alone.
    }, CONCURRENT_EVENT_WRITE)
    reply.header('ETag', answer.etag)
    return answer.record
  }

  async function remove(req: FastifyRequest, reply: FastifyReply, ref: PostRef, force: boolean): Promise<Event | Schema<'EventDeleted'>> {
    const caller = req.user
    if (caller === null) throw forbidden(401)
    const answer = await writeRead(ctx.db, req, async (reader, write) => {
      const current = await find(ref, requestedLanguage(req), reader)
      const { record } = current
      if (record.status === 'trash' && !force) throw inTrash('event')
      if (!canEdit(caller, record) && !editsAll(caller)) throw forbidden(403)
      const expected = expectedVersion(req, () => etag(current, caller), current.version) ?? current.version
      const trashed = await write(async (trx) => {
        const done = force
          ? await deleteEvent(trx, record.id, record.status, expected)
          : await trashEvent(trx, record.id, record.status, expected, modifiedNow(ctx.now(), ctx.config.timezone))
        if (!done) lost()
        return force ? undefined : written(record.id, caller, trx)
      })
      return { record, trashed }
      // Beside other writes on PostgreSQL: the update or delete of the row compares its version once any write of it
      // in flight has committed (READ COMMITTED re-reads a row it waited for).
    }, CONCURRENT_EVENT_WRITE)
    if (answer.trashed === undefined) return { deleted: true, previous: seenBy(caller, answer.record) }
    // A trash answer is a single-record answer: the trashed record's ETag (CONTRACT §5).
    reply.header('ETag', answer.trashed.etag)
    return answer.trashed.record
  }

  return {
    listEvents: (req, reply) => list(req, req.query ?? {}, reply),
    createEvent: (req, reply) => create(req, req.body, reply),
    getEvent: (req, reply) => get(req, byId(req.params), req.query?.ml_language, req.query?.password, req.query?.ical, reply),
    updateEvent: (req, reply) => update(req, byId(req.params), req.body, reply),
    updateEventPut: (req, reply) => update(req, byId(req.params), req.body, reply),
    updateEventPost: (req, reply) => update(req, byId(req.params), req.body, reply),
    deleteEvent: (req, reply) => remove(req, reply, byId(req.params), req.query?.force ?? false),
    getEventBySlug: (req, reply) => get(req, bySlug(req.params), req.query?.ml_language, undefined, req.query?.ical, reply),
    updateEventBySlug: (req, reply) => update(req, bySlug(req.params), req.body, reply),
    updateEventBySlugPut: (req, reply) => update(req, bySlug(req.params), req.body, reply),
    updateEventBySlugPost: (req, reply) => update(req, bySlug(req.params), req.body, reply),
    deleteEventBySlug: (req, reply) => remove(req, reply, bySlug(req.params), req.query?.force ?? false),
  }
}
