/**
 * What an event's stored document is made of and how a read answers from it (the store itself:
 * repositories/event-documents.ts). A document is kept for every published event without a password, as
 * an anonymous caller is shown it (`seenBy(null, record)`: linked venues and organizers it may not read
 * left out); only anonymous reads use it. It holds the single-read JSON (JSON-LD included) with the categories and tags arrays empty; a read puts
 * the terms' current records there (the read cache keeps them) and makes the ETag from the document's
 * digest and theirs, the tag every read of the event makes (http/etag.ts `eventEtag`).
 */
import type { Category, Event, Tag } from '../contract.js'
import { composedEventEtag, eventDigest } from '../http/etag.js'
import type { Serialized, SerializedPieces } from '../http/serialized.js'
import { seenBy, withJsonLd } from '../lib/event-view.js'
import type { EventDocument, OfferedDocument } from '../repositories/event-documents.js'
import type { StoredEvent } from '../repositories/event-records.js'
import { CATEGORY, TAG, termRecords, type TermKind } from '../repositories/terms.js'
import type { AppContext } from './context.js'

const CATEGORIES = Buffer.from('"categories":[')
const TAGS = Buffer.from('"tags":[')
const COMMA = Buffer.from(',')

/** The offset just inside the one array `key` opens in `body`, or -1 when there is none or more than one. */
function insideOnly(body: Buffer, key: Buffer): number {
  const at = body.indexOf(key)
  if (at < 0 || body.indexOf(key, at + 1) >= 0) return -1
  return at + key.length
}

/**
 * The bytes a list leaves out of `single` to show `listed` (its JSON-LD): `[from, to)` such that `single`
 * without them is `listed`, or undefined when that is not so.
 */
function listCut(single: Buffer, listed: Buffer): { from: number; to: number } | undefined {
  const length = single.length - listed.length
  if (length <= 0) return undefined
  let from = 0
  while (from < listed.length && single[from] === listed[from]) from++
  const to = from + length
  return single.subarray(to).equals(listed.subarray(from)) ? { from, to } : undefined
}

const JSON_LD = Buffer.from(',"json_ld":')

/**
 * `listCut` without the list's form serialized (issue 49: a second serialization of the record, a fifth of a document's
 * making): the JSON-LD is the record's last member (the Event schema's last property), so the list's form is the single
 * one without `,"json_ld":…` up to its closing brace. Undefined when the body is not so (`listCut` then decides); a
 * quote inside a string is escaped, so the member's key is found only where it is a key.
 */
function jsonLdCut(single: Buffer): { from: number; to: number } | undefined {
  const from = single.indexOf(JSON_LD)
  if (from < 0 || single.indexOf(JSON_LD, from + 1) >= 0 || single[single.length - 1] !== 0x7d) return undefined
  return { from, to: single.length - 1 }
}

/**
 * The stored document of an event: what an anonymous single read shows (linked venues and organizers it
 * may not read left out), or undefined when an anonymous caller is not shown it (not published, protected).
 */
export function eventDocument(ctx: AppContext, stored: StoredEvent): OfferedDocument | undefined {
  if (stored.record.status !== 'publish' || stored.password !== null) return undefined
  const record = seenBy(null, stored.record)
  const body = ctx.json.event({ ...withJsonLd(record), categories: [], tags: [] })
  const categoryAt = insideOnly(body, CATEGORIES)
  const tagAt = insideOnly(body, TAGS)
  const cut = jsonLdCut(body) ?? listCut(body, ctx.json.event({ ...record, categories: [], tags: [] }))
  // The arrays are written empty (`[]`): each is found once, where its records go.
  if (categoryAt < 0 || tagAt < 0 || body[categoryAt] !== 0x5d || body[tagAt] !== 0x5d || cut === undefined) return undefined
  if ((cut.from <= categoryAt && categoryAt < cut.to) || (cut.from <= tagAt && tagAt < cut.to)) return undefined
  return {
    id: record.id, group: stored.group, version: stored.version, digest: eventDigest(record), body,
    categoryIds: record.categories.map((c) => c.id), tagIds: record.tags.map((t) => t.id), categoryAt, tagAt,
    ldFrom: cut.from, ldTo: cut.to, members: Object.values(stored.record.translations),
  }
}

const SINGLE_TAIL = Buffer.from(',"recurrence":null,"occurrence":null')

/**
 * Whether a document is a single event's (`"recurrence":null` closes its record before the JSON-LD): a
 * series' list items are its occurrences, made from its record instead.
 */
export function isSingleDocument(document: EventDocument): boolean {
  return document.ldFrom >= SINGLE_TAIL.length && document.body.subarray(document.ldFrom - SINGLE_TAIL.length, document.ldFrom).equals(SINGLE_TAIL)
}

/** The JSON of `items`, comma-separated. */
function joined(items: readonly Buffer[]): Buffer[] {
  return items.flatMap((item, i) => (i === 0 ? [item] : [COMMA, item]))
}

type Form = 'single' | 'list'

/** An edit of a document's body: the bytes `[at, up to)` replaced by what goes there. */
export type BodyEdit = readonly [number, number, readonly Buffer[]]

/** A document's terms as JSON, its categories' and its tags' (comma-separated). */
type TermsJson = readonly [readonly Buffer[], readonly Buffer[]]

function termsJson(ctx: AppContext, categories: readonly Category[], tags: readonly Tag[]): TermsJson {
  return [joined(categories.map((c) => ctx.json.category(c))), joined(tags.map((t) => ctx.json.tag(t)))]
}

/**
 * The bytes of a document in `form`, its terms' records put in (`terms`), as pieces (slices of the document and the
 * terms' JSON); `extra`: more edits of its body (an occurrence's values: handlers/occurrence-list-items.ts), none inside another.
 */
function piecesOf(document: EventDocument, terms: TermsJson, form: Form, extra: readonly BodyEdit[] = []): SerializedPieces<Event> {
  // Edits in `body`'s offsets, none inside another: [at, up to, what goes there].
  const edits: BodyEdit[] = [
    [document.categoryAt, document.categoryAt, terms[0]],
    [document.tagAt, document.tagAt, terms[1]],
    ...extra,
  ]
  if (form === 'list') edits.push([document.ldFrom, document.ldTo, []])
  edits.sort((a, b) => a[0] - b[0])
  const parts: Buffer[] = []
  let from = 0
  for (const [at, to, items] of edits) {
    parts.push(document.body.subarray(from, at), ...items)
    from = to
  }
  parts.push(document.body.subarray(from))
  return parts as unknown as SerializedPieces<Event>
}

/**
 * The bytes of a single read of a document with `categories` and `tags` put in, and `extra` edits of its body (none
 * inside another): written into one buffer of their length, the document's bytes between the edits copied from it (no
 * piece made of each: an occurrence's answer has seven edits).
 */
export function singleBody(ctx: AppContext, document: EventDocument, categories: readonly Category[], tags: readonly Tag[], extra: readonly BodyEdit[]): Serialized<Event> {
  const [categoryItems, tagItems] = termsJson(ctx, categories, tags)
  const edits: BodyEdit[] = [[document.categoryAt, document.categoryAt, categoryItems], [document.tagAt, document.tagAt, tagItems], ...extra]
  edits.sort((a, b) => a[0] - b[0])
  const { body } = document
  let length = body.length
  for (const [at, to, items] of edits) {
    length -= to - at
    for (const item of items) length += item.length
  }
  const out = Buffer.allocUnsafe(length)
  let from = 0
  let written = 0
  for (const [at, to, items] of edits) {
    written += body.copy(out, written, from, at)
    for (const item of items) written += item.copy(out, written)
    from = to
  }
  body.copy(out, written, from)
  return out as Serialized<Event>
}

/** The records of terms `ids` (in that order), or undefined when one is gone. */
async function termsOf<R>(ctx: AppContext, kind: TermKind<R>, ids: readonly number[]): Promise<Map<number, R> | undefined> {
  const records = await termRecords(ctx.db, ctx.site, kind, [...new Set(ids)])
  const byId = new Map(records.map((r) => [(r as { id: number }).id, r]))
  return ids.every((id) => byId.has(id)) ? byId : undefined
}

/**
 * The answer a document gives to a single read: its ETag, and its bytes with the terms' current records put
 * in (made only when sent, not for a 304). Undefined when a term it names is gone (the read then assembles).
 */
export async function documentAnswer(ctx: AppContext, document: EventDocument): Promise<{ etag: string; body: () => Serialized<Event> } | undefined> {
  const [categoryById, tagById] = await Promise.all([termsOf(ctx, CATEGORY, document.categoryIds), termsOf(ctx, TAG, document.tagIds)])
  if (categoryById === undefined || tagById === undefined) return undefined
  const categories = document.categoryIds.map((id) => categoryById.get(id) as Category)
  const tags = document.tagIds.map((id) => tagById.get(id) as Tag)
  return {
    etag: composedEventEtag(document.id, document.version, document.digest, categories, tags),
    body: () => Buffer.concat(piecesOf(document, termsJson(ctx, categories, tags), 'single')) as Serialized<Event>,
  }
}

/** A page's document in list form with its terms' current records, `extra` edits of its body made too. */
export type ListedDocument = (document: EventDocument, extra?: readonly BodyEdit[]) => SerializedPieces<Event>

/**
 * The list form of `documents` (a page's), their terms read in one go; undefined when a term one names is gone
 * (their records are then assembled). A document's terms are written once for the page (a series' occurrences
 * are made from one document again and again).
 */
export async function documentsListed(ctx: AppContext, documents: readonly EventDocument[]): Promise<ListedDocument | undefined> {
  const [categoryById, tagById] = await Promise.all([
    termsOf(ctx, CATEGORY, documents.flatMap((d) => d.categoryIds)),
    termsOf(ctx, TAG, documents.flatMap((d) => d.tagIds)),
  ])
  if (categoryById === undefined || tagById === undefined) return undefined
  const written = new Map<EventDocument, TermsJson>()
  return (d, extra) => {
    let terms = written.get(d)
    if (terms === undefined) {
      terms = termsJson(ctx, d.categoryIds.map((id) => categoryById.get(id) as Category), d.tagIds.map((id) => tagById.get(id) as Tag))
      written.set(d, terms)
    }
    return piecesOf(d, terms, 'list', extra)
  }
}

/**
 * The key order of an assembled record (repositories/posts.ts `postFields`, then event-records.ts `toEventRecord`,
 * venues.ts, organizers.ts): a stored document's JSON is in the contract's order instead, and an ETag's digest is
 * of a record's `JSON.stringify`, which follows its object's order. test/occurrence-document.test.ts pins them.
 */
const POST_KEYS = ['id', 'author', 'status', 'date', 'date_utc', 'modified', 'modified_utc', 'rest_url', 'description', 'slug', 'image', 'ml_language', 'translations']
export const EVENT_KEYS: readonly string[] = [...POST_KEYS, 'global_id', 'title', 'excerpt', 'all_day', 'start_date', 'start_date_details', 'end_date',
  'end_date_details', 'utc_start_date', 'utc_start_date_details', 'utc_end_date', 'utc_end_date_details', 'timezone', 'timezone_abbr', 'cost',
  'cost_details', 'website', 'show_map', 'show_map_link', 'hide_from_listings', 'sticky', 'featured', 'categories', 'tags', 'venue', 'organizer',
  'recurrence', 'occurrence']
export const VENUE_KEYS: readonly string[] = [...POST_KEYS, 'venue', 'address', 'city', 'country', 'province', 'state', 'zip', 'phone', 'website',
  'stateprovince', 'show_map', 'show_map_link', 'geo_lat', 'geo_lng']
export const ORGANIZER_KEYS: readonly string[] = [...POST_KEYS, 'organizer', 'phone', 'website', 'email']

/** `value`'s own keys in `order` (any others after them, as they were), `json_ld` left out. */
function inOrder(value: Record<string, unknown>, order: readonly string[]): Record<string, unknown> {
  const out: Record<string, unknown> = {}
  for (const key of order) if (key in value) out[key] = value[key]
  for (const key in value) if (!(key in out) && key !== 'json_ld') out[key] = value[key]
  return out
}

/** A document's terms' records and the ETag a read of its event gives with them (`documentTerms`). */
export interface DocumentTerms {
  categories: Category[]
  tags: Tag[]
  etag: string
}

/** Whether `a` and `b` hold the same objects in the same order. */
function sameObjects(a: readonly object[], b: readonly object[]): boolean {
  if (a.length !== b.length) return false
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false
  return true
}

/**
 * A document's terms' current records and the ETag a read of its event gives with them; undefined when a term it names
 * is gone. `last`: what this gave for the same document before (its event, version and digest), given again when the
 * records are the same objects (the read cache's, unchanged: an ETag is of the records' digests, once per object), its
 * ETag not digested again (reads of a series' occurrences, one after the other).
 */
export async function documentTerms(ctx: AppContext, document: EventDocument, last?: DocumentTerms): Promise<DocumentTerms | undefined> {
  const [categoryById, tagById] = await Promise.all([termsOf(ctx, CATEGORY, document.categoryIds), termsOf(ctx, TAG, document.tagIds)])
  if (categoryById === undefined || tagById === undefined) return undefined
  const categories = document.categoryIds.map((id) => categoryById.get(id) as Category)
  const tags = document.tagIds.map((id) => tagById.get(id) as Tag)
  if (last !== undefined && sameObjects(last.categories, categories) && sameObjects(last.tags, tags)) return last
  return { categories, tags, etag: composedEventEtag(document.id, document.version, document.digest, categories, tags) }
}

/**
 * The record of the event a document was made from, as an anonymous caller is shown it (`seenBy(null, …)`), with
 * `terms` (`documentTerms`): what an assembly would give, read back from the document's JSON (its keys put in the
 * assembled order). Undefined when the record read back is not the one the document's digest names (the JSON of
 * the record without its terms, http/etag.ts `eventDigest`): every record used is proved, by its digest, to
 * stringify as the assembled one does (the read then assembles).
 */
export function documentRecord(document: EventDocument, terms: { categories: Category[]; tags: Tag[] }): Event | undefined {
  const parsed = JSON.parse(document.body.toString()) as Record<string, unknown>
  const linked = (name: 'venue' | 'organizer', order: readonly string[]) => {
    const list = parsed[name]
    if (Array.isArray(list)) parsed[name] = list.map((item: Record<string, unknown>) => inOrder(item, order))
  }
  linked('venue', VENUE_KEYS)
  linked('organizer', ORGANIZER_KEYS)
  const bare = inOrder(parsed, EVENT_KEYS) as unknown as Event
  if (eventDigest(bare) !== document.digest) return undefined
  return { ...bare, categories: terms.categories, tags: terms.tags }
}

/**
 * A page's records as lists show them to anonymous callers, from `documents` where there is one (their
 * terms read in one go); undefined for the others (and for all when a term one names is gone).
 */
export async function listedFromDocuments(ctx: AppContext, documents: readonly EventDocument[]): Promise<Map<number, SerializedPieces<Event>>> {
  const listed = await documentsListed(ctx, documents)
  if (listed === undefined) return new Map()
  return new Map(documents.map((d) => [d.id, listed(d)]))
}
