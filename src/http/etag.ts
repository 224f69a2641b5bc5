/**
 * Strong ETags naming the version of everything an answer shows (CONTRACT §5): the record's own stored
 * version and a digest of the record as the caller sees it, so that a change of what it embeds (an
 * event's venue renamed, a term's count moved) changes the ETag too, on every node, without touching
 * the record's row. `If-None-Match` on reads gives 304, a stale `If-Match` on writes gives 412; the
 * version check itself is compare-and-swap in SQL.
 *
 * The tag computed here names the uncompressed representation; a compressed answer carries it with its
 * coding appended (`compression.ts`), and both forms are accepted in `If-None-Match` and `If-Match`.
 */
import { hash } from 'node:crypto'
import type { FastifyReply, FastifyRequest } from 'fastify'
import type { Event } from '../contract.js'
import { preconditionFailed } from './errors.js'

// Records are never changed once made, and the read cache keeps them: a digest is made once per object.
const digests = new WeakMap<object, string>()
const ownDigests = new WeakMap<object, string>()

const sha256 = (text: string): string => hash('sha256', text, 'base64url').slice(0, 16)

/** The digest of a record (its JSON), once per record object. */
function digestOf(record: object): string {
  let digest = digests.get(record)
  if (digest === undefined) {
    digest = sha256(JSON.stringify(record))
    digests.set(record, digest)
  }
  return digest
}

/** The ETag of `record` (as the caller sees it, without JSON-LD) at its stored `version`. */
export function etagOf(resource: string, record: { id: number }, version: number): string {
  return `"${resource}-${record.id}-${version}-${digestOf(record)}"`
}

/** What of an event its ETag is made from: the event, and the terms it shows apart. */
interface EventParts {
  id: number
  categories: readonly object[]
  tags: readonly object[]
}

/**
 * The digest of an event without its categories and tags (what a stored document keeps, its terms being
 * read with it: repositories/event-documents.ts), once per record object.
 */
export function eventDigest(record: EventParts): string {
  let digest = ownDigests.get(record)
  if (digest === undefined) {
    digest = sha256(JSON.stringify({ ...record, categories: [], tags: [] }))
    ownDigests.set(record, digest)
  }
  return digest
}

/**
 * The ETag of an event (as the caller sees it, without JSON-LD) at its stored `version`, from the digest
 * of the event without its terms and the digests of the term records it shows: the same tag whether the
 * record was assembled or read from its stored document with its terms' current records.
 */
export function composedEventEtag(id: number, version: number, digest: string, categories: readonly object[], tags: readonly object[]): string {
  const parts = [digest, categories.map(digestOf).join(','), tags.map(digestOf).join(',')]
  return `"event-${id}-${version}-${sha256(parts.join('|'))}"`
}

/** The ETag of an event record (see `composedEventEtag`). */
export function eventEtag(record: EventParts, version: number): string {
  return composedEventEtag(record.id, version, eventDigest(record), record.categories, record.tags)
}

/**
 * The ETag of one occurrence of a series (CONTRACT §17): a digest of the series' ETag (as the caller sees it: the
 * series' version, and the digests of its record and of the terms it shows), the occurrence id, its override's
 * version (0 without one) and what the occurrence shows of its own, so that a change of the series, of the occurrence
 * alone or of what its record shows changes it:
 * - without an override, its record is the series' with the members of OCCURRENCE_KEYS changed (lib/occurrence-view.ts
 *   `occurrenceRecord`) and every other member the series' own, which the series' ETag names; and those ten members
 *   are made from seven short texts (`unchangedOccurrenceDates`): its four dates (each `*_details` is its date's
 *   fields), its `timezone_abbr`, and its `occurrence`'s original start wall and UTC (its `id` is the occurrence id,
 *   `overridden` false, `rest_url` the series' and the id). Their JSON, some 170 bytes (the ten members' is some 750,
 *   which a read from the series' document would otherwise write out and digest: handlers/occurrence-documents.ts);
 * - with one, its texts, venues and organizers may be its own (a venue it shows can be renamed without the override's
 *   version moving): the digest of the whole record.
 * The JSON-LD, the language and the coding follow: the JSON-LD is made from the record, another language is another
 * series record (another ETag), and a compressed answer's tag names its coding (`codedEtag`).
 */
export function occurrenceEtag(seriesEtag: string, id: number, version: number, occurrence: string, overrideVersion: number, record: Event): string {
  const own = overrideVersion === 0 && record.occurrence?.overridden === false
    ? `dates:${JSON.stringify(unchangedOccurrenceDates(record))}`
    : `record:${digestOf(record)}`
  return `"event-${id}-${version}-${sha256([seriesEtag, occurrence, String(overrideVersion), own].join('|'))}"`
}

/**
 * What an occurrence without an override (`record`, lib/occurrence-view.ts `occurrenceRecord`) shows of its own beside
 * its id and its series' record, in the order `occurrenceEtag` digests them: every one of its ten OCCURRENCE_KEYS
 * members is a function of these, the occurrence id and the series' record.
 */
export function unchangedOccurrenceDates(record: Event): unknown[] {
  return [record.start_date, record.end_date, record.utc_start_date, record.utc_end_date, record.timezone_abbr,
    record.occurrence?.original_start_date, record.occurrence?.original_utc_start_date]
}

/** What `occurrenceEtag` digests of an occurrence without an override before the JSON of its `unchangedOccurrenceDates` (`unchangedOccurrenceEtag`). */
export function unchangedOccurrencePrefix(seriesEtag: string, occurrence: string): string {
  return `${seriesEtag}|${occurrence}|0|dates:`
}

/**
 * `occurrenceEtag` of an occurrence without an override of event `id` at `version`, from the text it digests already
 * made as UTF-8 bytes (`unchangedOccurrencePrefix` and the JSON of its `unchangedOccurrenceDates`: lib/occurrence-bytes.ts
 * `datesJson`): the same tag, without the members as values nor their JSON as a string.
 */
export function unchangedOccurrenceEtag(id: number, version: number, digested: Buffer): string {
  return `"event-${id}-${version}-${hash('sha256', digested, 'base64url').slice(0, 16)}"`
}

/** The content codings answers may be sent in (compression.ts), most preferred first. */
export const CODINGS = ['br', 'gzip', 'deflate'] as const
export type Coding = (typeof CODINGS)[number]

/** The tag of the representation `etag` names, sent in `coding`: `"…-br"`. */
export function codedEtag(etag: string, coding: Coding): string {
  return `${etag.slice(0, -1)}-${coding}"`
}

/** Whether `sent` (an entity tag from a request) names `etag`, in identity or any coding. */
function names(sent: string, etag: string): boolean {
  return sent === etag || CODINGS.some((c) => sent === codedEtag(etag, c))
}

/** A 304 answer, thrown so that handlers keep returning only contract bodies. */
export class NotModified extends Error {
  readonly etag: string

  constructor(etag: string) {
    super('not modified')
    this.etag = etag
  }
}

function tags(header: string): string[] {
  return header.split(',').map((t) => t.trim()).filter((t) => t !== '')
}

/**
 * Sets the ETag and answers 304 when `If-None-Match` names it (weak comparison, RFC 9110), in any
 * coding; the 304 repeats the tag the client holds.
 */
export function checkNotModified(req: FastifyRequest, reply: FastifyReply, etag: string): void {
  reply.header('ETag', etag)
  const header = req.headers['if-none-match']
  if (header === undefined) return
  const list = tags(header)
  if (list.includes('*')) throw new NotModified(etag)
  const held = list.map((t) => t.replace(/^W\//, '')).find((t) => names(t, etag))
  if (held !== undefined) throw new NotModified(held)
}

/**
 * The version a conditional write must still find: the current one when `If-Match` names the current
 * ETag (strong comparison), none when there is no `If-Match`; a stale one is 412 at once. `etag` makes
 * the current ETag, asked for only when there is an `If-Match` to compare it with.
 */
export function expectedVersion(req: FastifyRequest, etag: () => string, version: number): number | undefined {
  const header = req.headers['if-match']
  if (header === undefined) return undefined
  const list = tags(header)
  if (list.includes('*')) return version
  const current = etag()
  if (list.some((t) => names(t, current))) return version
  throw preconditionFailed()
}

/** Whether the request's `If-Match` names tags (a write then holds only on the version they name); not when absent or `*`. */
export function namesTags(req: FastifyRequest): boolean {
  const header = req.headers['if-match']
  return header !== undefined && !tags(header).includes('*')
}
