/**
 * Reading the occurrences of an event (CONTRACT §17): `GET /events/{id}/occurrences` (a page of them, with
 * `start_date`/`end_date` and no default window) and `GET /events/{id}/occurrences/{occurrence}` (one, with
 * its ETag). Each is the record lib/occurrence-view.ts makes; reading them needs what reading the event needs.
 */
import type { FastifyReply, FastifyRequest } from 'fastify'
import type { Event } from '../contract.js'
import type { DataVersion } from '../db/dialect.js'
import { invalidParam, notFound, occurrenceNotFound } from '../http/errors.js'
import { checkNotModified, eventEtag, occurrenceEtag } from '../http/etag.js'
import type { Handlers } from '../http/operations.js'
import { checkPage, listLinks, pageOf, sendList } from '../http/pagination.js'
import { asSent, sentQueryOf } from '../http/query.js'
import { sendSerialized, type Serialized } from '../http/serialized.js'
import { endOfDayUtc, isoWithOffset, parseFilterDate, startOfDayUtc } from '../lib/dates.js'
import { seenBy, withJsonLd } from '../lib/event-view.js'
import { occurrenceRecord } from '../lib/occurrence-view.js'
import { parseOccurrenceId } from '../lib/recurrence.js'
import type { Caller } from '../lib/rights.js'
import type { OccurrenceDocument } from '../repositories/event-documents.js'
import { findEvent, type StoredEvent } from '../repositories/event-records.js'
import { hotAnswer } from '../repositories/read-cache.js'
import { countOccurrences, occurrenceOf, occurrencePage, type OccurrenceWindow, type StoredOccurrence } from '../repositories/occurrences.js'
import type { AppContext } from './context.js'
import { refuseRead } from './events.js'
import { documentRecord, eventDocument } from './event-documents.js'
import { lookupLanguage } from './linked.js'
import { documentOccurrence } from './occurrence-documents.js'

type OccurrenceHandlers = Pick<Handlers, 'listEventOccurrences' | 'getEventOccurrence'>

export function occurrenceHandlers(ctx: AppContext): OccurrenceHandlers {
  /** The event `id` (in `language` when given), refused as a read of it would be. */
  async function readable(req: FastifyRequest, id: number, language: Event['ml_language'] | undefined, password: string | undefined): Promise<StoredEvent> {
    const stored = await findEvent(ctx.db, ctx.site, { id }, lookupLanguage(ctx, { id }, language))
    if (stored === undefined) throw notFound('event', id, 'id')
    refuseRead(req.user, stored.record, stored.password, password)
    return stored
  }

  /** The record `caller` is shown for an occurrence of `stored`. */
  const shown = (caller: Caller | null, series: Event, occurrence: StoredOccurrence): Event =>
    seenBy(caller, occurrenceRecord(series, occurrence.state, occurrence.override))

  /** `start_date`/`end_date` as §4 reads them (whole site days unless `strict_dates`), without a default. */
  function windowOf(query: { start_date?: string; end_date?: string; strict_dates?: boolean }): OccurrenceWindow {
    const window: OccurrenceWindow = {}
    const tz = ctx.config.timezone
    for (const name of ['start_date', 'end_date'] as const) {
      const value = query[name]
      if (value === undefined) continue
      const parsed = parseFilterDate(value, tz, ctx.now())
      if (parsed === null) throw invalidParam(name, 'invalidFilterDate')
      const instant = query.strict_dates === true ? parsed.utc : name === 'start_date' ? startOfDayUtc(parsed.localDay, tz) : endOfDayUtc(parsed.localDay, tz)
      if (name === 'start_date') window.startGte = instant
      else window.endLte = instant
    }
    return window
  }

  async function list(req: Parameters<OccurrenceHandlers['listEventOccurrences']>[0], reply: FastifyReply) {
    const query = req.query ?? {}
    const window = windowOf(query)
    const stored = await readable(req, req.params.id, query.ml_language, query.password)
    const page = pageOf(query)
    const total = await countOccurrences(ctx.db, stored.record.id, window)
    const totalPages = checkPage('event', page, total)
    const rows = total === 0 ? [] : await occurrencePage(ctx.db, ctx.site, stored.record.id, window, page.offset, page.perPage)
    const items = rows.map((occurrence) => ctx.json.event(shown(req.user, stored.record, occurrence)))
    // After page and per_page: the effective window as instants with the site's offset (CONTRACT §3: `today` or
    // `now` sent names another day when the link is followed), then the rest of the query as sent (the password
    // left out of links).
    const windowShown: Array<[string, string]> = []
    if (window.startGte !== undefined) windowShown.push(['start_date', isoWithOffset(window.startGte, ctx.config.timezone)])
    if (window.endLte !== undefined) windowShown.push(['end_date', isoWithOffset(window.endLte, ctx.config.timezone)])
    const sent = sentQueryOf(req).filter((name) => name !== 'password' && name !== 'start_date' && name !== 'end_date')
      .map((name): [string, unknown] => [name, asSent(req, (query as Record<string, unknown>)[name])])
    const links = listLinks(`${ctx.apiUrl}/events/${stored.record.id}/occurrences`, page, totalPages, [...windowShown, ...sent])
    return sendList(reply, 'occurrences', { links, total, totalPages }, items)
  }

  /**
   * An anonymous read of an occurrence of an event with a stored document (published, no password), its row read
   * with the document in one statement (on PostgreSQL in the request's look at the data version too): an occurrence
   * without an override answered from the document's text (handlers/occurrence-documents.ts), one with an override
   * from the series' record read back from the document (`documentRecord`), neither assembling the series; the
   * same ETag and bytes as the assembled record gives. Undefined when there is no document or it cannot serve (the
   * read then assembles); with no document, `missed.version` says where the data stood before the assembly (what the
   * series' document assembled is offered with, as a read by id offers it: after a write of the series or of one of
   * its occurrences, reads of its occurrences store it again too).
   */
  async function fromDocument(req: Parameters<OccurrenceHandlers['getEventOccurrence']>[0], reply: FastifyReply,
    missed: { version?: DataVersion }): Promise<Serialized<Event> | undefined> {
    const eventId = req.params.id
    const id = req.params.occurrence
    let read: OccurrenceDocument | undefined
    const withVersion = ctx.documents.readOccurrenceWithVersion
    let looked = false
    if (withVersion !== undefined) {
      await hotAnswer(ctx.db, `answer:occurrence:${eventId}`, async () => {
        looked = true
        const both = await withVersion(eventId, ctx.apiUrl, id)
        read = both.read
        if (read === undefined && both.version !== undefined) missed.version = both.version
        return both.version
      })
    }
    if (!looked) read = await ctx.documents.readOccurrence(eventId, ctx.apiUrl, id)
    if (read === undefined && missed.version === undefined) {
      // No document (SQLite, or the look taken before): where the data stands, read now (before the assembly).
      const again = await ctx.documents.read(eventId, ctx.apiUrl)
      if (again?.found === false) missed.version = again.version
    }
    if (read === undefined) return undefined
    const made = await documentOccurrence(ctx, read, id)
    if (made === undefined) return undefined
    if (made === 'none') throw occurrenceNotFound(id)
    const { answer, terms } = made
    if (answer !== undefined) {
      // No override: the answer is the document's bytes with the occurrence's values put in.
      checkNotModified(req, reply, answer.etag)
      return sendSerialized(reply, answer.body())
    }
    const { document } = read
    const found = await occurrenceOf(ctx.db, ctx.site, document.id, id)
    const series = documentRecord(document, terms)
    if (found === undefined || series === undefined) return undefined
    const record = shown(null, series, found)
    checkNotModified(req, reply, occurrenceEtag(terms.etag, document.id, document.version, id, found.overrideVersion, record))
    return sendSerialized(reply, ctx.json.event(withJsonLd(record)))
  }

  async function get(req: Parameters<OccurrenceHandlers['getEventOccurrence']>[0], reply: FastifyReply): Promise<Serialized<Event>> {
    const query = req.query ?? {}
    const missed: { version?: DataVersion } = {}
    if (req.user === null && query.ml_language === undefined && Number.isSafeInteger(req.params.id)) {
      const answer = await fromDocument(req, reply, missed)
      if (answer !== undefined) return answer
    }
    const stored = await readable(req, req.params.id, query.ml_language, query.password)
    if (missed.version !== undefined) {
      // The series' document stored again (off the request path), as a read by id stores it (handlers/events.ts).
      const offered = eventDocument(ctx, stored)
      if (offered !== undefined) ctx.documents.offer(missed.version, ctx.apiUrl, offered)
    }
    const id = req.params.occurrence
    const found = parseOccurrenceId(id, stored.record.all_day) === null ? undefined : await occurrenceOf(ctx.db, ctx.site, stored.record.id, id)
    if (found === undefined) throw occurrenceNotFound(id)
    const record = shown(req.user, stored.record, found)
    const seriesEtag = eventEtag(seenBy(req.user, stored.record), stored.version)
    checkNotModified(req, reply, occurrenceEtag(seriesEtag, stored.record.id, stored.version, id, found.overrideVersion, record))
    return sendSerialized(reply, ctx.json.event(withJsonLd(record)))
  }

  return {
    listEventOccurrences: (req, reply) => list(req, reply),
    getEventOccurrence: (req, reply) => get(req, reply),
  }
}
