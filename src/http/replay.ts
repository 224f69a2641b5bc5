/**
 * Replayed answers (issue 49): a URL asked again and again (a front page, a widget, a probe) answered before
 * Fastify routes it, with the status, headers and body bytes its last answer through the whole chain had.
 *
 * What is replayed: an answer a handler marked (`replayable`: it was a hot answer of the read cache, or was kept
 * as one, in that generation) to a plain anonymous GET over HTTP/1.1: 200, no credentials, no conditional,
 * range or `Expect` header, no body, no header that only some requests carry (`Connection: close` while
 * draining, the rate limit's). It is recorded as Node was given it (`writeHead`'s status and headers, the body's
 * bytes as written, compressed or not) under its URL and the request headers an answer may depend on
 * (`Accept`: JSON or iCalendar; `Accept-Encoding` and `X-No-Compression`: the coding). Everything else a
 * request may carry (Origin, Accept-Language, User-Agent, cookies) changes nothing in these answers: CORS is
 * `*` for every origin, the language is the query's.
 *
 * A list's answer holds only in its window (the clock moves a relative one: `starts_after=now`, today's default):
 * its handler gives `replayHolds`, asked before each replay, as its hot answer is keyed by the window.
 *
 * When: a request that finds a recording is held until the next `setImmediate` (the end of the turn of the
 * event loop it arrived in); then one look at the data version answers for every request held (the read
 * cache's generation, `ReplaySources.lookNow`/`look`). Each is replayed if that is the generation its
 * recording was made in, else handed to Fastify as if it had just arrived (and the recording is dropped).
 * The look is taken after every request it answers for arrived, so a write committed before a request
 * arrived (by this process, another node, or raw SQL that moved the epoch) is seen by it, as the look every
 * request takes on the full path; requests arriving together share it (one statement for several requests).
 *
 * What the full path would also have done, done here: the request is counted as arrived (`arrived`: the read
 * cache's moments, the webhook dispatcher's load), gets its own `X-Request-Id` (from its header when that is
 * a token, else new: request-id.ts), its log line (logging.ts, the same fields) and its count and latency in the
 * request metrics (metrics.ts). Node adds `Date` and `Connection`/`Keep-Alive` itself, as on the full path.
 * Nothing is replayed while `open()` is false (connections draining; a rate limit configured, which counts
 * each request on the full path).
 *
 * Cold reads (`ReplaySources.cold`). A plain anonymous `GET <prefix>/events/<id>` (digits, no query) with no
 * recording of its own (or a stale one), asking for no coding (or forbidding one: `X-No-Compression`), is held and
 * looked at the same way, then answered from the event's stored document (read after the look, its terms' current
 * records put in: handlers/event-documents.ts `documentAnswer`, what the full path answers with) with the headers of a
 * full path's answer recorded for such a read asked with the same `Accept`, `Accept-Encoding` and `X-No-Compression`
 * (a template: every header of a 200 identity JSON answer to it is the same but its ETag, its length and its request
 * id, which are put in). No document (a draft, a protected or trashed event, none stored yet, documents off) or a term
 * gone: the full path answers. Issue 49: random reads by id cost half the server CPU this way. An answer read cold is
 * recorded only when its event was read cold before (the id last read in its slot of SEEN_SLOTS), so that a URL asked
 * again is replayed from its third request on, and reads of events asked at random keep nothing: a recording each
 * lived through a collection or two and died old (scavenges twice as long, a mark-compact a second).
 * On PostgreSQL, whose look is a statement of its own, the look of a turn holding cold reads by id (those with no
 * recording) reads their events' documents in the same statement (`cold.lookWith`: the schema's `event_document` for
 * one, as the full path's look, `event_documents_read` for several): one round trip for them all, where the full path
 * takes one a request; their terms are read with that look's generation (no look again).
 *
 * Cold reads of occurrences (issue 45), the same way: a plain anonymous `GET <prefix>/events/<id>/occurrences/<occurrence>`
 * (`YYYYMMDDTHHMMSSZ` or `YYYYMMDD`, nothing after) is answered from its series' stored document as
 * handlers/event-occurrences.ts answers an occurrence without an override (`occurrenceAnswer`), with the headers of a
 * full path's 200 to an occurrence read (templates of their own: the full path's occurrence answers are not replayable,
 * their headers are taken as a template only). An overridden occurrence, one the series has not (404), no document,
 * a term gone: the full path answers. Recorded on the second cold read of the same URL, as reads by id. On PostgreSQL,
 * a turn holding no cold read by id (with no recording) takes its look with the reads of its cold occurrence reads'
 * series' documents and rows (`cold.lookWithOccurrences`: the schema's `occurrence_document` for one, as the full path's
 * look, `occurrence_documents_read` for several), one statement for them all (issue 45: it was one for the first and one
 * each for the others, 1.0 a request against 0.4 for reads by id); a turn whose look read documents by id has its cold
 * reads of occurrences read theirs after it (with its generation: no look again).
 *
 * Cold lists (issue 49, SQLite): a plain anonymous `GET <prefix>/events` (no query, or up to 16 parameters of distinct
 * names written plainly: no escape, `+` or bracket, none of `ml_language` and `ical`, which change the answer's headers:
 * `plainListQuery`), asking for no coding, with no recording of its own (or a stale one), is held and looked at the same
 * way, then answered by `cold.list`: its query normalised and validated as the route does it (handlers/cold-reads.ts,
 * with the route's own validator), its page made by the full path's functions (handlers/event-lists.ts), the read
 * cache's hot answer of its URL and window used (a list asked before goes the full path, which keeps and records it:
 * handlers/event-lists.ts `askedBefore`), and sent with the headers of a full
 * path's answer to a plain list asked with the same `Accept`, `Accept-Encoding` and `X-No-Compression`, with a `Link`
 * or without as the page has one (a template: every header but its X-Total, X-Total-Pages, Link, length and request
 * id). Not recorded. Any refusal (an invalid parameter, an unknown link target, the page past the last), a fault, or a
 * page whose form has no template yet: the full path answers (its 400 and 404 bodies). What it saves is Fastify's
 * routing, hooks, validation and reply (a list's Node parsing, statements and socket write remain).
 *
 * `app.inject` does not pass through here (it calls Fastify's handler itself): only requests on the socket do.
 */
import type { IncomingMessage, Server, ServerResponse } from 'node:http'
import type { FastifyBaseLogger, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import { redactUrl, routeLabel } from './logging.js'
import { genReqId } from './request-id.js'

declare module 'fastify' {
  interface FastifyRequest {
    /** Set by a handler whose answer is the read cache's hot answer of this generation (see the module comment). */
    replayable: number | undefined
    /** With `replayable`: whether the answer still holds apart from the data (a list's window, which the clock moves). */
    replayHolds: (() => boolean) | undefined
  }
}

/** What the replay needs of the rest of the app (app.ts gives it). */
export interface ReplaySources {
  /** A request arrived (as the app's first hook counts one). */
  arrived(): void
  /** The read cache's generation from a look taken now when it is known without waiting, else 'wait'. */
  lookNow(): number | undefined | 'wait'
  /** The same, waited for (a statement of its own on PostgreSQL). */
  look(): Promise<number | undefined>
  /** Whether answers may be replayed now (false while draining or with a rate limit). */
  open(): boolean
  /** Counts an answer in the request metrics, as the full path's `onResponse` does (none without metrics). */
  observe?: (route: string, method: string, status: number, seconds: number) => void
  /**
   * Cold reads by id (see "Cold reads" in the module comment): the path of a single event's read without its
   * id (`<prefix>/events/`), and the answer an anonymous read of event `id` in its own language gives from its
   * stored document, read now (after the look, which returned `generation`): its ETag, for the identity coding, and
   * its bytes; undefined when it has none (the full path answers). Where the look is a statement of its own, with
   * `lookWith`.
   */
  cold?: {
    path: string
    answer(id: number, generation: number): Promise<ColdAnswer | undefined>
    /**
     * The same for an anonymous read of occurrence `occurrence` (`YYYYMMDDTHHMMSSZ` or `YYYYMMDD`) of event `id`
     * (`<prefix>/events/<id>/occurrences/<occurrence>`): undefined unless it is one without an override answered from
     * the series' stored document (the full path answers everything else, its 404s too); read after the look that
     * returned `generation`.
     */
    occurrence?: (id: number, occurrence: string, generation: number) => Promise<ColdAnswer | undefined>
    /**
     * Where the look is a statement of its own (PostgreSQL): the look at the data version taken with the read of the
     * stored documents of events `ids` (distinct), in one statement and one snapshot (then `look`'s generation), and
     * how each one's answer is made from what that statement read (`answer`'s, without reading again); `made`
     * undefined when no statement was sent (the last look still answers: then `answer` reads each document after it).
     */
    lookWith?: (ids: number[]) => Promise<{ generation: number | undefined; made: Map<number, () => Promise<ColdAnswer | undefined>> | undefined }>
    /**
     * The same for cold reads of occurrences (`asked`: distinct pairs of event id and occurrence id; each answer
     * `occurrence`'s, made from what the look's statement read by `made`), taken when a turn holds no cold read by id to
     * read with its look.
     */
    lookWithOccurrences?: (asked: Array<[id: number, occurrence: string]>) =>
      Promise<{ generation: number | undefined; made: ((id: number, occurrence: string) => Promise<ColdAnswer | undefined>) | undefined }>
    /**
     * Cold lists (see "Cold lists" in the module comment): the answer of an anonymous JSON list at `url`
     * (`<prefix>/events` with a plain query, `query` as parsed: `plainListQuery`), made now, after the look; undefined
     * when the full path is to answer (any refusal, an iCalendar feed, a fault).
     */
    list?: (url: string, query: Record<string, string>) => Promise<ColdList | undefined>
  }
}

/** A cold list's answer: its body and what its X-Total, X-Total-Pages and Link headers say (no Link: undefined). */
export interface ColdList {
  body: Buffer
  total: number
  totalPages: number
  link: string | undefined
}

/** What a cold read's answer is made of besides the headers every such answer carries. */
export interface ColdAnswer {
  etag: string
  body: Buffer
}

/** One answer as Node was given it. */
interface Recording {
  generation: number
  status: number
  /** Names and values in turn, as `writeHead` takes them; the request id's value at `idAt`. */
  headers: unknown[]
  idAt: number
  body: Buffer
  route: string
  /** Whether it still holds apart from the data (`replayHolds`). */
  holds: (() => boolean) | undefined
}

/** Recordings kept at most, and the bytes their bodies may take (as the read cache's hot answers). */
export const MAX_RECORDINGS = 512
export const MAX_RECORDING_BYTES = 8 * 1024 * 1024

/** Cold reads by id (or of occurrences) whose documents one look reads at most (PostgreSQL, `lookWith`, `lookWithOccurrences`); those past it are read after it. */
const MAX_LOOKED_WITH = 100

/** Slots of the cold reads' memory of ids asked (a power of two). */
const SEEN_SLOTS = 4096

/** Request headers that make a request not replayable (and its answer not recorded). */
const REFUSED = ['authorization', 'if-none-match', 'if-match', 'if-modified-since', 'if-unmodified-since', 'if-range', 'range', 'expect',
  'transfer-encoding', 'content-encoding', 'content-type'] as const

/** Answer headers that are a request's own (an answer carrying one is not recorded). */
const OWN = new Set(['connection', 'keep-alive', 'date', 'set-cookie', 'retry-after', 'ratelimit-limit', 'ratelimit-remaining', 'ratelimit-reset'])

const UNSET = '\u0000'

/** The recording's key of a plain anonymous GET, or undefined when the request is not one (see REFUSED). */
export function replayKey(req: IncomingMessage): string | undefined {
  if (req.method !== 'GET' || req.httpVersion !== '1.1') return undefined
  const headers = req.headers
  if (headers.host === undefined) return undefined
  for (const name of REFUSED) if (headers[name] !== undefined) return undefined
  const length = headers['content-length']
  if (length !== undefined && length !== '0') return undefined
  return `${req.url ?? ''}\n${headers.accept ?? UNSET}\n${headers['accept-encoding'] ?? UNSET}\n${headers['x-no-compression'] === undefined ? '' : 'x'}`
}

export interface Replay {
  /** Recordings held now. */
  readonly size: number
  /** Answers replayed so far. */
  readonly replayed: number
  /** Cold reads answered before routing so far (from stored documents, with a template's headers). */
  readonly colds: number
  /** Looks at the data version taken for held requests so far (one for every request held in a turn). */
  readonly looks: number
  /** Lists answered before routing so far (cold lists, with a list template's headers). */
  readonly lists: number
}

interface Held {
  req: IncomingMessage
  res: ServerResponse
  /** The recording it may be answered with, or its template and event id (and occurrence id) for a cold read. */
  recording: Recording | undefined
  cold: ColdRead | undefined
  /** A cold list: its parsed query and the rest of its key (its templates'), else undefined. */
  list: { query: Record<string, string>; rest: string } | undefined
  key: string
  start: number
}

/**
 * The headers of a full path's 200 to an anonymous JSON read by id (`<prefix>/events/<id>`, no query), as Node was
 * given them, for the request headers of a key's rest (`Accept`, `Accept-Encoding`, `X-No-Compression`): every
 * such answer has them, but for its ETag, its length and its request id (at `etagAt`, `lengthAt`, `idAt`).
 */
interface Template {
  headers: unknown[]
  etagAt: number
  lengthAt: number
  idAt: number
  route: string
}

/** A cold read's template and what it reads: event `id`, or its occurrence `occurrence`. */
interface ColdRead {
  template: Template
  id: number
  occurrence: string | undefined
}

/** The answer headers a template may hold (any other makes a recording no template). */
const TEMPLATE_HEADERS = new Set(['content-type', 'etag', 'content-length', 'x-request-id', 'access-control-allow-origin',
  'access-control-expose-headers', 'content-language', 'x-content-type-options', 'vary'])
const JSON_TYPE = 'application/json; charset=utf-8'

/** The template of a recording's headers, or undefined when they are not those of an identity JSON answer. */
function templateOf(recording: Recording): Template | undefined {
  const { headers } = recording
  let etagAt = -1
  let lengthAt = -1
  let typed = false
  for (let i = 0; i < headers.length; i += 2) {
    const name = String(headers[i]).toLowerCase()
    if (!TEMPLATE_HEADERS.has(name) || typeof headers[i + 1] !== 'string' && typeof headers[i + 1] !== 'number') return undefined
    if (name === 'etag') etagAt = i + 1
    if (name === 'content-length') lengthAt = i + 1
    if (name === 'content-type') typed = headers[i + 1] === JSON_TYPE
  }
  if (etagAt < 0 || lengthAt < 0 || !typed) return undefined
  return { headers, etagAt, lengthAt, idAt: recording.idAt, route: recording.route }
}

/**
 * The headers of a full path's 200 to a plain anonymous JSON list (`plainListQuery`), as Node was given them, for the
 * request headers of a key's rest, with or without a `Link`: every such answer has them but for its X-Total,
 * X-Total-Pages, Link, length and request id (at `totalAt`, `pagesAt`, `linkAt` (-1: none), `lengthAt`, `idAt`).
 */
interface ListTemplate {
  headers: unknown[]
  totalAt: number
  pagesAt: number
  linkAt: number
  lengthAt: number
  idAt: number
  route: string
}

/** The answer headers a list template may hold (any other makes a recording no template). */
const LIST_TEMPLATE_HEADERS = new Set(['content-type', 'content-length', 'x-request-id', 'access-control-allow-origin',
  'access-control-expose-headers', 'content-language', 'x-content-type-options', 'vary', 'x-total', 'x-total-pages', 'link'])

/** The list template of a recording's headers, or undefined when they are not those of an identity JSON list. */
function listTemplateOf(recording: Recording): ListTemplate | undefined {
  const { headers } = recording
  const at = { totalAt: -1, pagesAt: -1, linkAt: -1, lengthAt: -1 }
  let typed = false
  for (let i = 0; i < headers.length; i += 2) {
    const name = String(headers[i]).toLowerCase()
    if (!LIST_TEMPLATE_HEADERS.has(name) || typeof headers[i + 1] !== 'string' && typeof headers[i + 1] !== 'number') return undefined
    if (name === 'x-total') at.totalAt = i + 1
    if (name === 'x-total-pages') at.pagesAt = i + 1
    if (name === 'link') at.linkAt = i + 1
    if (name === 'content-length') at.lengthAt = i + 1
    if (name === 'content-type') typed = headers[i + 1] === JSON_TYPE
  }
  if (at.totalAt < 0 || at.pagesAt < 0 || at.lengthAt < 0 || !typed) return undefined
  return { headers, ...at, idAt: recording.idAt, route: recording.route }
}

/** The key of a list template: the rest of a request's key (after the URL), and whether its answers carry a Link. */
const listTemplateKey = (rest: string, link: boolean): string => link ? `${rest}\nL` : rest

/** A plain query's parameter: a name of lowercase letters and `_`, `=`, a value of letters, digits and `_.,:-`. */
const PLAIN_PARAMETER = /^[a-z_]{1,40}=[A-Za-z0-9_.,:-]{0,200}$/

/** Parameters a cold list leaves to the full path: they change the answer's headers (its language, an iCalendar feed). */
const NOT_PLAIN = new Set(['ml_language', 'ical'])

/**
 * The query of a plain list URL (`path`, then nothing or `?` and at most 16 plain parameters of distinct names, none of
 * NOT_PLAIN), as Fastify's parser reads it (no escapes, no `+`, no brackets, no repeated name: each value as written);
 * undefined when the URL is no such list's.
 */
export function plainListQuery(url: string, path: string): Record<string, string> | undefined {
  if (!url.startsWith(path)) return undefined
  if (url.length === path.length) return {}
  if (url.charCodeAt(path.length) !== 0x3f || url.length === path.length + 1) return undefined
  const pairs = url.slice(path.length + 1).split('&')
  if (pairs.length > 16) return undefined
  const query: Record<string, string> = {}
  for (const pair of pairs) {
    if (!PLAIN_PARAMETER.test(pair)) return undefined
    const at = pair.indexOf('=')
    const name = pair.slice(0, at)
    if (Object.hasOwn(query, name) || NOT_PLAIN.has(name)) return undefined
    query[name] = pair.slice(at + 1)
  }
  return query
}

/** The event id of a cold read's URL (`path` then digits, no leading zero, nothing after), or undefined. */
function coldId(url: string, path: string): number | undefined {
  if (!url.startsWith(path)) return undefined
  const digits = url.length - path.length
  if (digits < 1 || digits > 15) return undefined
  for (let i = path.length; i < url.length; i++) {
    const c = url.charCodeAt(i)
    if (c < 0x30 || c > 0x39 || (c === 0x30 && i === path.length)) return undefined
  }
  return Number(url.slice(path.length))
}

const OCCURRENCES = '/occurrences/'

/** A cold read of an occurrence's key among those a look reads. */
const occurrenceKey = (id: number, occurrence: string): string => `${id}/${occurrence}`

/**
 * The event id and occurrence id of a cold occurrence read's URL (`path`, digits with no leading zero,
 * `/occurrences/`, then `YYYYMMDDTHHMMSSZ` or `YYYYMMDD`, nothing after), or undefined.
 */
function coldOccurrence(url: string, path: string): { id: number; occurrence: string } | undefined {
  if (!url.startsWith(path)) return undefined
  const slash = url.indexOf('/', path.length)
  if (slash < 0) return undefined
  const id = coldId(url.slice(0, slash), path)
  if (id === undefined || !url.startsWith(OCCURRENCES, slash)) return undefined
  const from = slash + OCCURRENCES.length
  const length = url.length - from
  if (length !== 8 && length !== 16) return undefined
  for (let i = 0; i < length; i++) {
    const c = url.charCodeAt(from + i)
    const wanted = i === 8 ? 0x54 : i === 15 ? 0x5a : -1
    if (wanted >= 0 ? c !== wanted : c < 0x30 || c > 0x39) return undefined
  }
  return { id, occurrence: url.slice(from) }
}

/** A slot of SEEN_SLOTS for an occurrence read's URL. */
function occurrenceSlot(id: number, occurrence: string): number {
  let hash = id | 0
  for (let i = 0; i < occurrence.length; i++) hash = Math.imul(hash, 31) + occurrence.charCodeAt(i) | 0
  return (hash ^ (hash >>> 13)) & (SEEN_SLOTS - 1)
}

/** Whether `log` writes info lines (as logging.ts asks). */
function infoWritten(log: FastifyBaseLogger): boolean {
  const enabled = (log as { isLevelEnabled?: (level: string) => boolean }).isLevelEnabled
  return enabled === undefined || enabled.call(log, 'info')
}

/**
 * Puts the replay in front of Fastify's handler on `app.server` (call right after the app is made, before
 * anything else listens for requests) and records marked answers (an `onSend` hook).
 */
export function registerReplay(app: FastifyInstance, sources: ReplaySources): Replay {
  const recordings = new Map<string, Recording>()
  let bytes = 0
  let replayed = 0
  let colds = 0
  let looks = 0
  let lists = 0
  let held: Held[] = []
  const drop = (key: string) => {
    const old = recordings.get(key)
    if (old === undefined) return
    recordings.delete(key)
    bytes -= old.body.length
  }
  const keep = (key: string, recording: Recording) => {
    if (recording.body.length > MAX_RECORDING_BYTES) return
    drop(key)
    while (recordings.size > 0 && (recordings.size >= MAX_RECORDINGS || bytes + recording.body.length > MAX_RECORDING_BYTES)) {
      const oldest = recordings.keys().next()
      if (oldest.done === true) break
      drop(oldest.value)
    }
    recordings.set(key, recording)
    bytes += recording.body.length
  }

  const server: Server = app.server
  const listeners = server.listeners('request') as Array<(req: IncomingMessage, res: ServerResponse) => void>
  const first = listeners[0]
  if (first === undefined || listeners.length > 1) throw new Error('registerReplay: Fastify\'s request handler alone was expected on the server')
  const fastify: (req: IncomingMessage, res: ServerResponse) => void = first
  server.removeListener('request', fastify)
  // Templates of cold reads by the rest of their key (after the URL): a few at most (one per Accept and coding asked).
  const templates = new Map<string, Template>()
  // The same for cold reads of occurrences (from full path's answers to such reads only: their headers are theirs).
  const occurrenceTemplates = new Map<string, Template>()
  // Templates of cold lists, by the rest of their key and whether a Link is sent (`listTemplateKey`).
  const listTemplates = new Map<string, ListTemplate>()
  const cold = sources.cold
  // The path of event lists (`<prefix>/events`), where cold lists are answered.
  const listPath = cold?.list === undefined ? undefined : cold.path.slice(0, -1)
  const listQueryOf = (url: string): Record<string, string> | undefined => listPath === undefined ? undefined : plainListQuery(url, listPath)
  const occurrenceOf = cold?.occurrence === undefined ? undefined : (url: string) => coldOccurrence(url, cold.path)
  // The event id last read cold in each slot (`id` modulo SEEN_SLOTS): whether a cold read's URL was asked before.
  const seen = new Float64Array(SEEN_SLOTS).fill(-1)
  // The same for occurrences: the URL last read cold in each slot (`occurrenceSlot`).
  const seenOccurrences = new Array<string | undefined>(SEEN_SLOTS)
  server.on('request', (req: IncomingMessage, res: ServerResponse) => {
    if (recordings.size === 0 && templates.size === 0 && occurrenceTemplates.size === 0 && listTemplates.size === 0) return fastify(req, res)
    const key = replayKey(req)
    if (key === undefined) return fastify(req, res)
    const recording = recordings.get(key)
    // A cold read by id (or of an occurrence): an identity answer (no coding asked, or none allowed) with a template
    // for its headers (also when its recording is found stale after the look).
    const url = req.url ?? ''
    let id = cold === undefined || templates.size === 0 ? undefined : coldId(url, cold.path)
    let occurrence: string | undefined
    if (id === undefined && occurrenceOf !== undefined && occurrenceTemplates.size > 0) {
      const read = occurrenceOf(url)
      id = read?.id
      occurrence = read?.occurrence
    }
    const template = id === undefined || (req.headers['accept-encoding'] !== undefined && req.headers['x-no-compression'] === undefined)
      ? undefined : (occurrence === undefined ? templates : occurrenceTemplates).get(key.slice(key.indexOf('\n')))
    const coldRead = template === undefined || id === undefined ? undefined : { template, id, occurrence }
    // A cold list: an identity answer to a plain list URL with a template for its headers (with or without a Link).
    let list: Held['list']
    if (coldRead === undefined && listTemplates.size > 0 && (req.headers['accept-encoding'] === undefined || req.headers['x-no-compression'] !== undefined)) {
      const query = listQueryOf(url)
      const rest = key.slice(key.indexOf('\n'))
      if (query !== undefined && (listTemplates.has(rest) || listTemplates.has(listTemplateKey(rest, true)))) list = { query, rest }
    }
    if (recording === undefined && coldRead === undefined && list === undefined) return fastify(req, res)
    if (!sources.open()) return fastify(req, res)
    sources.arrived()
    if (held.length === 0) setImmediate(answerHeld)
    held.push({ req, res, recording, cold: coldRead, list, key, start: performance.now() })
  })

  function answerHeld(): void {
    const batch = held
    held = []
    let now: number | undefined | 'wait'
    try {
      now = sources.lookNow()
    } catch {
      // The look failed (SQLite's probe: the database cannot serve now). Thrown here, outside any request, it would
      // end the process: each request goes the full path instead, whose own look answers it (503, CONTRACT §18).
      answer(batch, undefined)
      return
    }
    if (now !== 'wait') {
      answer(batch, now)
      return
    }
    // PostgreSQL: the look reads the documents of the cold reads by id held (those with no recording) in the same statement.
    const lookWith = cold?.lookWith
    if (lookWith !== undefined) {
      const ids = new Set<number>()
      for (const one of batch) if (one.cold !== undefined && one.cold.occurrence === undefined && one.recording === undefined && ids.size < MAX_LOOKED_WITH) ids.add(one.cold.id)
      if (ids.size > 0) {
        lookWith([...ids]).then(({ generation, made }) => answer(batch, generation, made), () => answer(batch, undefined))
        return
      }
    }
    // Else the look reads the series' documents and rows of the cold reads of occurrences held (those with no recording).
    const lookWithOccurrences = cold?.lookWithOccurrences
    if (lookWithOccurrences !== undefined) {
      const asked = new Map<string, [number, string]>()
      for (const one of batch) {
        const read = one.cold
        if (read?.occurrence === undefined || one.recording !== undefined || asked.size >= MAX_LOOKED_WITH) continue
        const key = occurrenceKey(read.id, read.occurrence)
        if (!asked.has(key)) asked.set(key, [read.id, read.occurrence])
      }
      if (asked.size > 0) {
        lookWithOccurrences([...asked.values()]).then(({ generation, made }) => answer(batch, generation, undefined, made === undefined ? undefined : { asked, made }),
          () => answer(batch, undefined))
        return
      }
    }
    sources.look().then((generation) => answer(batch, generation), () => answer(batch, undefined))
  }

  /**
   * Answers the requests held with the look's `generation`; `made`: cold reads' answers made from the look's statement,
   * by event id; `madeOccurrences`: the answers of the cold reads of occurrences whose documents the look's statement read
   * (`asked`, by `occurrenceKey`).
   */
  function answer(batch: Held[], generation: number | undefined, made?: Map<number, () => Promise<ColdAnswer | undefined>>,
    madeOccurrences?: { asked: ReadonlyMap<string, unknown>; made: (id: number, occurrence: string) => Promise<ColdAnswer | undefined> }): void {
    looks += 1
    const open = sources.open()
    for (const one of batch) {
      const { recording } = one
      if (recording === undefined || !open || generation !== recording.generation || (recording.holds !== undefined && !recording.holds())) {
        if (recording !== undefined && recordings.get(one.key) === recording) drop(one.key)
        if (open && generation !== undefined && one.list !== undefined) answerList(one, one.list)
        else if (!open || generation === undefined || one.cold === undefined) fastify(one.req, one.res)
        else {
          const { id, occurrence } = one.cold
          answerCold(one, one.cold, generation, occurrence === undefined ? made?.get(id)
            : madeOccurrences?.asked.has(occurrenceKey(id, occurrence)) === true ? () => madeOccurrences.made(id, occurrence) : undefined)
        }
        continue
      }
      try {
        replay(one, recording.status, recording.headers, recording.idAt, recording.body, recording.route)
        replayed += 1
      } catch (error) {
        // Not expected (the headers were Node's once already): the request is answered by the full path if nothing was sent yet.
        drop(one.key)
        failed(one, error)
      }
    }
  }

  function failed(one: Held, error: unknown): void {
    app.log.error({ err: error }, 'replaying an answer failed')
    if (one.res.headersSent) one.res.destroy()
    else fastify(one.req, one.res)
  }

  /**
   * A cold read: the event's answer from its stored document, read after the look (`generation`), sent with its
   * template's headers (its own ETag, length and request id), and recorded as the full path's answer would be;
   * the full path answers when there is no document (or a term it names is gone). `lookedAt`: its answer made from
   * what the look's statement read (`lookWith`), else it is read now.
   */
  function answerCold(one: Held, { template, id, occurrence }: ColdRead, generation: number, lookedAt?: () => Promise<ColdAnswer | undefined>): void {
    const answerWith = (made: ColdAnswer | undefined): void => {
      if (made === undefined || !sources.open()) {
        fastify(one.req, one.res)
        return
      }
      const headers = template.headers.slice()
      headers[template.etagAt] = made.etag
      headers[template.lengthAt] = String(made.body.length)
      replay(one, 200, headers, template.idAt, made.body, template.route)
      colds += 1
      // Recorded (and replayed next time) once asked again: a recording kept for every read of events asked at random
      // lives through a collection or two and dies old (issue 49: half the collections' time of random reads by id).
      let again: boolean
      if (occurrence === undefined) {
        const slot = id % SEEN_SLOTS
        again = seen[slot] === id
        seen[slot] = id
      } else {
        const slot = occurrenceSlot(id, occurrence)
        again = seenOccurrences[slot] === one.key
        seenOccurrences[slot] = one.key
      }
      if (again) keep(one.key, { generation, status: 200, headers, idAt: template.idAt, body: made.body, route: template.route, holds: undefined })
    }
    const read = lookedAt !== undefined ? lookedAt() : occurrence === undefined ? cold?.answer(id, generation) : cold?.occurrence?.(id, occurrence, generation)
    // A read that fails (the database cannot serve now) is the full path's to answer (503), and to log.
    if (read === undefined) fastify(one.req, one.res)
    else read.then(answerWith, () => answerWith(undefined)).catch((error: unknown) => failed(one, error))
  }

  /**
   * A cold list: its answer made after the look (`cold.list`), sent with the headers of its template (with or without a
   * Link, as the answer has one) with its own X-Total, X-Total-Pages, Link, length and request id; not recorded (a list
   * asked again is answered from the read cache's hot answer, kept under the same key as the full path's). The full path
   * answers when no answer is made (a refusal, a fault) or no template has the answer's form.
   */
  function answerList(one: Held, { query, rest }: { query: Record<string, string>; rest: string }): void {
    const read = cold?.list?.(one.req.url ?? '', query)
    if (read === undefined) {
      fastify(one.req, one.res)
      return
    }
    read.then((made) => {
      const template = made === undefined ? undefined : listTemplates.get(listTemplateKey(rest, made.link !== undefined))
      if (made === undefined || template === undefined || !sources.open()) {
        fastify(one.req, one.res)
        return
      }
      const headers = template.headers.slice()
      headers[template.totalAt] = String(made.total)
      headers[template.pagesAt] = String(made.totalPages)
      if (made.link !== undefined) headers[template.linkAt] = made.link
      headers[template.lengthAt] = String(made.body.length)
      replay(one, 200, headers, template.idAt, made.body, template.route)
      lists += 1
    }, () => fastify(one.req, one.res)).catch((error: unknown) => failed(one, error))
  }

  function replay({ req, res, start }: Held, status: number, recorded: unknown[], idAt: number, body: Buffer, route: string): void {
    const headers = recorded.slice()
    const id = genReqId(req)
    headers[idAt] = id
    res.writeHead(status, headers as unknown as Record<string, string>)
    res.end(body)
    const ms = performance.now() - start
    if (infoWritten(app.log)) {
      app.log.info({
        reqId: id, method: 'GET', route, url: redactUrl(req.url ?? ''), status, durationMs: Math.round(ms * 10) / 10,
      }, 'request')
    }
    sources.observe?.(route, 'GET', status, ms / 1000)
  }

  app.decorateRequest('replayable', undefined)
  app.decorateRequest('replayHolds', undefined)
  app.addHook('onSend', (req, reply, payload, done) => {
    if (req.replayable !== undefined) record(req, reply, req.replayable)
    // A plain anonymous list not kept (no read cache): its headers, a template of cold lists.
    else if (listTemplates.size < 32 && reply.statusCode === 200 && listQueryOf(req.raw.url ?? '') !== undefined) record(req, reply, undefined)
    // A read of an occurrence (never replayable on the full path): its headers, the template of cold reads of occurrences.
    else if (occurrenceOf !== undefined && reply.statusCode === 200 && occurrenceTemplates.size < 16 && occurrenceOf(req.raw.url ?? '') !== undefined) record(req, reply, undefined)
    done(null, payload)
  })

  /**
   * Records what Node is given for this answer, kept when it is a whole 200 of a replayable request (of that
   * `generation`; undefined: only the template of cold reads of occurrences is taken from it).
   */
  function record(req: FastifyRequest, reply: FastifyReply, generation: number | undefined): void {
    const key = replayKey(req.raw)
    if (key === undefined || reply.statusCode !== 200 || !sources.open()) return
    const res = reply.raw
    const writeHead = res.writeHead
    const write = res.write
    const end = res.end
    let status = 0
    let headers: unknown[] | undefined
    const chunks: Buffer[] = []
    let whole = true
    const take = (chunk: unknown, encoding: unknown) => {
      if (chunk === null || chunk === undefined || typeof chunk === 'function') return
      if (Buffer.isBuffer(chunk)) chunks.push(chunk)
      else if (typeof chunk === 'string' && (typeof encoding !== 'string' || encoding === 'utf8' || encoding === 'utf-8')) chunks.push(Buffer.from(chunk, 'utf8'))
      else whole = false
    }
    res.writeHead = function recordedWriteHead(this: ServerResponse, code: number, ...rest: unknown[]) {
      status = code
      const given = rest.length === 1 ? rest[0] : undefined
      // The headers Node will write: those given (Fastify's buffer path), or those set before (its stream path).
      if (rest.length === 0) headers = (res as ServerResponse & { getRawHeaderNames(): string[] }).getRawHeaderNames().flatMap((name) => [name, res.getHeader(name)])
      else if (given !== null && typeof given === 'object' && !Array.isArray(given) && res.getHeaderNames().length === 0) headers = Object.entries(given).flat()
      else whole = false
      return (writeHead as (...args: unknown[]) => ServerResponse).call(this, code, ...rest)
    } as typeof res.writeHead
    res.write = function recordedWrite(this: ServerResponse, chunk: unknown, encoding?: unknown, callback?: unknown) {
      take(chunk, encoding)
      return (write as (...args: unknown[]) => boolean).call(this, chunk, encoding, callback)
    } as typeof res.write
    res.end = function recordedEnd(this: ServerResponse, chunk?: unknown, encoding?: unknown, callback?: unknown) {
      res.writeHead = writeHead
      res.write = write
      res.end = end
      take(chunk, encoding)
      const ended = (end as (...args: unknown[]) => ServerResponse).call(this, chunk, encoding, callback)
      if (whole && status === 200 && headers !== undefined) {
        // One chunk that is its own memory (Fastify's buffer path: a list's body, which the read cache keeps too) is kept
        // as it is, not copied (a slice of a larger buffer, a pool's or zlib's, is copied: it would keep the whole).
        const only = chunks.length === 1 ? chunks[0] : undefined
        const body = only !== undefined && only.byteOffset === 0 && only.buffer.byteLength === only.length ? only : Buffer.concat(chunks)
        const recording = recordingOf(generation ?? -1, status, headers, body, routeLabel(req), req.replayHolds)
        if (recording !== undefined && generation !== undefined) keep(key, recording)
        // A read by id's headers (an occurrence's): the template of cold reads (of occurrences) asking as this one did
        // (but for its URL).
        const url = req.raw.url ?? ''
        const kept = cold === undefined ? undefined : coldId(url, cold.path) !== undefined ? templates : occurrenceOf?.(url) !== undefined ? occurrenceTemplates : undefined
        if (recording !== undefined && kept !== undefined && kept.size < 16) {
          const template = templateOf(recording)
          if (template !== undefined) kept.set(key.slice(key.indexOf('\n')), template)
        }
        // A plain list's headers: the template of cold lists asking as this one did, with or without a Link as it has one.
        if (recording !== undefined && kept === undefined && listTemplates.size < 32 && listQueryOf(url) !== undefined) {
          const template = listTemplateOf(recording)
          if (template !== undefined) listTemplates.set(listTemplateKey(key.slice(key.indexOf('\n')), template.linkAt >= 0), template)
        }
      }
      return ended
    } as typeof res.end
  }

  return {
    get size() { return recordings.size },
    get replayed() { return replayed },
    get colds() { return colds },
    get looks() { return looks },
    get lists() { return lists },
  }
}

/** A recording of these headers and body, or undefined when they carry something a request has of its own. */
function recordingOf(generation: number, status: number, headers: unknown[], body: Buffer, route: string, holds: (() => boolean) | undefined): Recording | undefined {
  let idAt = -1
  for (let i = 0; i < headers.length; i += 2) {
    const name = String(headers[i]).toLowerCase()
    if (OWN.has(name)) return undefined
    if (name === 'x-request-id') idAt = i + 1
    if (name === 'content-length' && String(headers[i + 1]) !== String(body.length)) return undefined
  }
  if (idAt < 0) return undefined
  return { generation, status, headers, idAt, body, route, holds }
}
