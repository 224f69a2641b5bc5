/**
 * An event list's page (CONTRACT §3, §4) as bytes with what its headers say, made from the data: for the full path
 * (handlers/events.ts `listEvents`) and, for a plain anonymous JSON list, before routing (http/replay.ts "Cold lists",
 * `coldList`: the query parsed, normalised and validated as the route does it, the same read cache's hot answer used
 * under the same key; a list asked again goes the full path, which keeps and records it). Either path makes the same
 * bytes from the same functions.
 */
import type { Event } from '../contract.js'
import { checkPage, listBodyOf, listLinks, pageOf, type ListEnvelope, type ListPage } from '../http/pagination.js'
import { asSentWith } from '../http/query.js'
import type { Serialized, SerializedPieces } from '../http/serialized.js'
import { listed, seenBy } from '../lib/event-view.js'
import { occurrenceRecord } from '../lib/occurrence-view.js'
import type { Caller } from '../lib/rights.js'
import { countEvents, eventEntries, type ListEntry } from '../repositories/event-filters.js'
import { rememberedEvents, storedEvents, type StoredEvent } from '../repositories/event-records.js'
import { LookMoved, hotAnswer, hotAnswerNow, lookHolds, type ProvisionalLook } from '../repositories/read-cache.js'
import { entryKey, occurrencesOf, overriddenKeys } from '../repositories/occurrences.js'
import type { AppContext } from './context.js'
import { documentsListed, eventDocument, isSingleDocument } from './event-documents.js'
import { occurrenceFromDocument, unchangedItem } from './occurrence-list-items.js'
import { eventFilterOf, windowKeyOf, type ListQuery } from './event-list-input.js'

/** An anonymous JSON list's answer (one URL, one window), kept as bytes while the data stays as it was. */
export interface HotList {
  /** What its X-Total, X-Total-Pages and Link headers say. */
  page: ListPage
  body: Serialized<ListEnvelope<'events', Event>>
}

/** How a list's query was sent: its parameters' names in order, and the digits of integers sent beyond 2^53. */
export interface SentQuery {
  names: readonly string[]
  digits: ReadonlyMap<number, string>
}

/** The read cache's key of an anonymous JSON list's hot answer: its URL as sent and the window the clock makes of it. */
export const hotListKey = (ctx: AppContext, url: string, windowKey: string): string => `answer:events:${ctx.apiUrl} ${url} ${windowKey}`

/** Slots of the table of lists made (a power of two): a list asked again within a few thousand others is kept. */
const LIST_SLOTS = 4096

/** The slot of LIST_SLOTS for a hot answer's key (FNV-1a over its UTF-16 units). */
function slotOf(key: string): number {
  let hash = 0x811c9dc5
  for (let i = 0; i < key.length; i++) hash = Math.imul(hash ^ key.charCodeAt(i), 0x01000193)
  return (hash ^ (hash >>> 15)) & (LIST_SLOTS - 1)
}

/** Per app: the hot answer key last made in each slot of LIST_SLOTS. */
const listsMade = new WeakMap<AppContext, Array<string | undefined>>()

/**
 * Whether a list made now is kept as its hot answer (and so recorded for replay): only when the same URL and window
 * was made before, as http/replay.ts records cold reads by id; for the full path and the cold lists alike. Issue 49:
 * kept at their first read, lists asked at random (30–40 kB of body each, up to 8 MB of them kept) lived through
 * collections and died old: mark-compacts (13–30 ms each) 3.2–3.8 per 1,000 random filtered lists and 0.7–0.84 per
 * 1,000 searches, against 1.8–2.4 and 0.32–0.38 when kept at the second read. A URL asked again is kept at its second
 * read, answered hot from its third.
 */
export function askedBefore(ctx: AppContext, key: string): boolean {
  let made = listsMade.get(ctx)
  if (made === undefined) {
    made = new Array<string | undefined>(LIST_SLOTS)
    listsMade.set(ctx, made)
  }
  const slot = slotOf(key)
  const again = made[slot] === key
  made[slot] = key
  return again
}

/**
 * A list page as `caller` is shown it, from its checked `query` (`sent`: as it was sent) at `now`; `look`: a look taken
 * on trust (PostgreSQL, handlers/events.ts `madeList`), LookMoved when the data moved under it. Throws the list's
 * refusals (400, the page past the last 404).
 */
export async function listAnswer(ctx: AppContext, caller: Caller | null, query: ListQuery, sent: SentQuery, now: Date, look?: ProvisionalLook): Promise<HotList> {
  const { filter, shown } = await eventFilterOf(ctx, caller, query, now)
  const page = pageOf(query)
  const total = await countEvents(ctx.db, filter)
  const totalPages = checkPage('event', page, total)
  const entries = total === 0 ? [] : await eventEntries(ctx.db, filter, page.offset, page.perPage, total)
  // `include` lists wholes (CONTRACT §17): one item per event named, `occurrence: null`.
  const items = await listedEvents(ctx, caller, entries, filter.include !== undefined, look)
  // The effective window replaces the date filters sent; one ignored (under include) still shows as sent.
  const windowNames = new Set(shown.map(([name]) => name))
  const sentPairs = sent.names
    .filter((name) => !windowNames.has(name))
    .map((name): [string, unknown] => [name, asSentWith(sent.digits, (query as Record<string, unknown>)[name])])
  const links = listLinks(`${ctx.apiUrl}/events`, page, totalPages, [...shown, ...sentPairs])
  if (look !== undefined && !(await lookHolds(ctx.db, look))) throw new LookMoved()
  const pageInfo = { links, total, totalPages }
  return { page: pageInfo, body: listBodyOf('events', pageInfo, items) }
}

/**
 * A plain anonymous JSON list answered before routing (http/replay.ts "Cold lists"): `url` as sent, its `query`
 * checked as the route checks it (`sent`: how it was sent). The hot answer of its URL and window when the data has not
 * moved, else made when its URL and window were not asked before (kept by nothing: `askedBefore`); undefined when the
 * full path is to answer (asked before: the full path keeps and records it; an iCalendar feed, a date that is none,
 * any refusal, a fault: the full path answers it, with its body).
 */
export async function coldList(ctx: AppContext, url: string, query: ListQuery, sent: SentQuery): Promise<HotList | undefined> {
  if (query.ical !== undefined) return undefined
  const now = ctx.now()
  const windowKey = windowKeyOf(ctx, query, now)
  if (windowKey === undefined) return undefined
  const key = hotListKey(ctx, url, windowKey)
  const hot = hotAnswerNow<HotList>(ctx.db, key) ?? await hotAnswer<HotList>(ctx.db, key)
  if (hot.value !== undefined) return hot.value
  // Asked before: the full path makes it, keeps it and records it (http/replay.ts), so a URL asked again is replayed.
  if (askedBefore(ctx, key)) return undefined
  try {
    return await listAnswer(ctx, null, query, sent, now)
  } catch {
    return undefined
  }
}

/**
 * The records of a list page as `caller` is shown them, as JSON: for anonymous callers from the events'
 * stored documents where there are some (a series' occurrences without an override too, their values put in
 * its document's bytes: handlers/occurrence-list-items.ts), the others assembled (and offered to be stored).
 * Each entry of a series shows its occurrence (lib/occurrence-view.ts), unless the page lists `wholes`.
 */
async function listedEvents(ctx: AppContext, caller: Caller | null, entries: readonly ListEntry[], wholes: boolean, look?: ProvisionalLook): Promise<Array<Serialized<Event> | SerializedPieces<Event>>> {
  const ids = [...new Set(entries.map((e) => e.id))]
  // In lists a protected event keeps its place with description and excerpt null, for every caller (§6).
  const shown = (stored: StoredEvent) => ctx.json.event(listed(seenBy(caller, stored.record), stored.password !== null))
  // Anonymous: the records the read cache holds (their JSON made once), then stored documents, then assembled.
  const remembered = caller === null ? await rememberedEvents(ctx.db, ids) : new Map<number, StoredEvent>()
  // A series' record remembered serves its overridden occurrences; its document, read all the same, the others.
  const rest = remembered.size === 0 ? ids : ids.filter((id) => !remembered.has(id) || (!wholes && remembered.get(id)?.record.recurrence != null))
  const documents = caller === null && rest.length > 0 ? await ctx.documents.readMany(rest, ctx.apiUrl, look) : undefined
  const found = documents === undefined ? [] : [...documents.found.values()]
  const singles = found.filter((d) => wholes || isSingleDocument(d))
  // A series' document serves its occurrences without an override (its record is read only for the others).
  const seriesDocuments = new Map(wholes ? [] : found.filter((d) => !isSingleDocument(d)).map((d) => [d.id, d]))
  const fromDocuments = new Map<number, SerializedPieces<Event>>()
  const listedDocument = singles.length + seriesDocuments.size === 0 ? undefined : await documentsListed(ctx, [...singles, ...seriesDocuments.values()])
  if (listedDocument === undefined) seriesDocuments.clear()
  else for (const d of singles) fromDocuments.set(d.id, listedDocument(d))
  const assembled = new Map<number, StoredEvent>()
  const assemble = async (missing: readonly number[]) => {
    for (const stored of await storedEvents(ctx.db, ctx.site, missing)) {
      if (documents?.version !== undefined && !documents.found.has(stored.record.id)) {
        const offered = eventDocument(ctx, stored)
        if (offered !== undefined) ctx.documents.offer(documents.version, ctx.apiUrl, offered)
      }
      assembled.set(stored.record.id, stored)
    }
  }
  await assemble(rest.filter((id) => !remembered.has(id) && !fromDocuments.has(id) && !seriesDocuments.has(id)))
  const storedOf = (id: number) => remembered.get(id) ?? assembled.get(id)
  // The occurrences a series' entries show, their overrides with them (one statement for the page).
  const ofSeries = wholes ? [] : entries.filter((e) => seriesDocuments.has(e.id) || storedOf(e.id)?.record.recurrence != null)
  // An occurrence of a series with a document and no override: its row from its id and the series, its item from the
  // document (no statement, no record); the others' rows are read (one statement for the page) and their items made
  // from the document (not overridden) or from the record.
  const overridden = seriesDocuments.size === 0 || listedDocument === undefined ? undefined : await overriddenKeys(ctx.db)
  const fromDocument = new Map<string, SerializedPieces<Event>>()
  for (const entry of overridden === undefined ? [] : ofSeries) {
    const document = seriesDocuments.get(entry.id)
    const key = entryKey(entry.id, entry.occurrence)
    if (document === undefined || listedDocument === undefined || overridden?.has(key) !== false) continue
    const item = unchangedItem(ctx, listedDocument, document, entry.occurrence)
    if (item !== undefined) fromDocument.set(key, item)
  }
  const occurrences = await occurrencesOf(ctx.db, ctx.site, fromDocument.size === 0 ? ofSeries : ofSeries.filter((e) => !fromDocument.has(entryKey(e.id, e.occurrence))))
  // Entries of a series made from its document, by `entryKey`; those it cannot make (overridden ones) are made
  // from its record, read for them.
  const fromRecord = new Set<number>()
  for (const entry of ofSeries) {
    const key = entryKey(entry.id, entry.occurrence)
    if (fromDocument.has(key)) continue
    const document = seriesDocuments.get(entry.id)
    const occurrence = occurrences.get(key)
    const item = document !== undefined && listedDocument !== undefined && occurrence?.override === null
      ? occurrenceFromDocument(ctx, listedDocument, document, occurrence.state) : undefined
    if (item !== undefined) fromDocument.set(key, item)
    else if (!remembered.has(entry.id)) fromRecord.add(entry.id)
  }
  if (fromRecord.size > 0) await assemble([...fromRecord].filter((id) => !assembled.has(id)))
  const items: Array<Serialized<Event> | SerializedPieces<Event>> = []
  for (const entry of entries) {
    const key = entryKey(entry.id, entry.occurrence)
    const made = fromDocument.get(key)
    if (made !== undefined) {
      items.push(made)
      continue
    }
    const stored = storedOf(entry.id)
    const occurrence = occurrences.get(key)
    if (stored !== undefined && occurrence !== undefined) {
      const record = occurrenceRecord(stored.record, occurrence.state, occurrence.override)
      items.push(ctx.json.event(listed(seenBy(caller, record), stored.password !== null)))
      continue
    }
    const item = stored !== undefined ? shown(stored) : fromDocuments.get(entry.id)
    if (item !== undefined) items.push(item)
  }
  return items
}
