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
 * Cold reads (SQLite; `ReplaySources.cold`). A plain anonymous `GET <prefix>/events/<id>` (digits, no query) with no
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
   * stored document, read now (after the look): its ETag, for the identity coding, and its bytes; undefined when it
   * has none (the full path answers). Only where a look answers at once (SQLite).
   */
  cold?: {
    path: string
    answer(id: number): Promise<ColdAnswer | undefined>
  }
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
}

interface Held {
  req: IncomingMessage
  res: ServerResponse
  /** The recording it may be answered with, or its template and event id for a cold read. */
  recording: Recording | undefined
  cold: { template: Template; id: number } | undefined
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
  const cold = sources.cold
  // The event id last read cold in each slot (`id` modulo SEEN_SLOTS): whether a cold read's URL was asked before.
  const seen = new Float64Array(SEEN_SLOTS).fill(-1)
  server.on('request', (req: IncomingMessage, res: ServerResponse) => {
    if (recordings.size === 0 && templates.size === 0) return fastify(req, res)
    const key = replayKey(req)
    if (key === undefined) return fastify(req, res)
    const recording = recordings.get(key)
    // A cold read by id: an identity answer (no coding asked, or none allowed) with a template for its headers (also
    // when its recording is found stale after the look).
    const id = cold === undefined || templates.size === 0 ? undefined : coldId(req.url ?? '', cold.path)
    const template = id === undefined || (req.headers['accept-encoding'] !== undefined && req.headers['x-no-compression'] === undefined)
      ? undefined : templates.get(key.slice(key.indexOf('\n')))
    const coldRead = template === undefined || id === undefined ? undefined : { template, id }
    if (recording === undefined && coldRead === undefined) return fastify(req, res)
    if (!sources.open()) return fastify(req, res)
    sources.arrived()
    if (held.length === 0) setImmediate(answerHeld)
    held.push({ req, res, recording, cold: coldRead, key, start: performance.now() })
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
    sources.look().then((generation) => answer(batch, generation), () => answer(batch, undefined))
  }

  function answer(batch: Held[], generation: number | undefined): void {
    looks += 1
    const open = sources.open()
    for (const one of batch) {
      const { recording } = one
      if (recording === undefined || !open || generation !== recording.generation || (recording.holds !== undefined && !recording.holds())) {
        if (recording !== undefined && recordings.get(one.key) === recording) drop(one.key)
        if (!open || generation === undefined || one.cold === undefined) fastify(one.req, one.res)
        else answerCold(one, one.cold.template, one.cold.id, generation)
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
   * the full path answers when there is no document (or a term it names is gone).
   */
  function answerCold(one: Held, template: Template, id: number, generation: number): void {
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
      const slot = id % SEEN_SLOTS
      if (seen[slot] === id) keep(one.key, { generation, status: 200, headers, idAt: template.idAt, body: made.body, route: template.route, holds: undefined })
      else seen[slot] = id
    }
    // A read that fails (the database cannot serve now) is the full path's to answer (503), and to log.
    cold?.answer(id).then(answerWith, () => answerWith(undefined)).catch((error: unknown) => failed(one, error))
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
    done(null, payload)
  })

  /** Records what Node is given for this answer, kept when it is a whole 200 of a replayable request. */
  function record(req: FastifyRequest, reply: FastifyReply, generation: number): void {
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
        const recording = recordingOf(generation, status, headers, Buffer.concat(chunks), routeLabel(req), req.replayHolds)
        if (recording !== undefined) keep(key, recording)
        // A read by id's headers: the template of cold reads asking as this one did (but for its URL).
        if (recording !== undefined && cold !== undefined && coldId(req.raw.url ?? '', cold.path) !== undefined && templates.size < 16) {
          const template = templateOf(recording)
          if (template !== undefined) templates.set(key.slice(key.indexOf('\n')), template)
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
