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
  /** Looks at the data version taken for held requests so far (one for every request held in a turn). */
  readonly looks: number
}

interface Held {
  req: IncomingMessage
  res: ServerResponse
  recording: Recording
  key: string
  start: number
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
  server.on('request', (req: IncomingMessage, res: ServerResponse) => {
    if (recordings.size === 0) return fastify(req, res)
    const key = replayKey(req)
    const recording = key === undefined ? undefined : recordings.get(key)
    if (recording === undefined || key === undefined || !sources.open()) return fastify(req, res)
    sources.arrived()
    if (held.length === 0) setImmediate(answerHeld)
    held.push({ req, res, recording, key, start: performance.now() })
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
      if (!open || generation !== one.recording.generation || (one.recording.holds !== undefined && !one.recording.holds())) {
        if (recordings.get(one.key) === one.recording) drop(one.key)
        fastify(one.req, one.res)
        continue
      }
      try {
        replay(one)
      } catch (error) {
        // Not expected (the headers were Node's once already): the request is answered by the full path if nothing was sent yet.
        drop(one.key)
        app.log.error({ err: error }, 'replaying an answer failed')
        if (one.res.headersSent) one.res.destroy()
        else fastify(one.req, one.res)
      }
    }
  }

  function replay({ req, res, recording, start }: Held): void {
    const headers = recording.headers.slice()
    const id = genReqId(req)
    headers[recording.idAt] = id
    res.writeHead(recording.status, headers as unknown as Record<string, string>)
    res.end(recording.body)
    replayed += 1
    const ms = performance.now() - start
    if (infoWritten(app.log)) {
      app.log.info({
        reqId: id, method: 'GET', route: recording.route, url: redactUrl(req.url ?? ''), status: recording.status, durationMs: Math.round(ms * 10) / 10,
      }, 'request')
    }
    sources.observe?.(recording.route, 'GET', recording.status, ms / 1000)
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
      }
      return ended
    } as typeof res.end
  }

  return {
    get size() { return recordings.size },
    get replayed() { return replayed },
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
