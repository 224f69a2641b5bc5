/**
 * Requests Node's HTTP parser refuses never reach fastify: no route, no hooks, no reply. Raw UTF-8 in
 * the URL (which curl sends unencoded), a malformed header, headers over the size limit (431) or headers
 * that arrive too slowly (408) would get fastify's own body. This answers them on the socket with the
 * contract's error body (CONTRACT §10) and the headers every response carries (§16), in the default
 * language (the request, unparsed, names none). The parser itself stays strict.
 *
 * Also: an `Expect` other than `100-continue` would get Node's bare 417; it is ignored instead
 * (RFC 9110 §10.1.1 allows that), so the request is answered like any other.
 */
import { STATUS_CODES, type Server, type ServerResponse } from 'node:http'
import type { Socket } from 'node:net'
import type { FastifyBaseLogger, FastifyInstance } from 'fastify'
import { ApiError } from './errors.js'
import type { ErrorTexts } from './error-handler.js'
import type { Language } from '../contract.js'
import type { MessageKey } from './messages.js'

/** What a refused request is answered with, by the parser's error code. */
export interface ClientErrorAnswer {
  status: number
  code: string
  messageKey: MessageKey
}

/** After the answer, the socket is closed; a client that never closes its side is cut off after this. */
const LINGER_MS = 2000

export function clientErrorAnswer(errorCode: string | undefined): ClientErrorAnswer {
  switch (errorCode) {
    case 'HPE_HEADER_OVERFLOW':
      return { status: 431, code: 'rest_request_header_fields_too_large', messageKey: 'headersTooLarge' }
    case 'ERR_HTTP_REQUEST_TIMEOUT':
      return { status: 408, code: 'rest_request_timeout', messageKey: 'requestTimeout' }
    default:
      return { status: 400, code: 'rest_invalid_request', messageKey: 'unparsableRequest' }
  }
}

/** The whole HTTP/1.1 answer, as bytes ready for the socket. */
export function clientErrorResponse(answer: ClientErrorAnswer, message: string, headers: Record<string, string>): Buffer {
  const body = Buffer.from(JSON.stringify({ code: answer.code, message, data: { status: answer.status } }), 'utf8')
  const lines = [
    `HTTP/1.1 ${answer.status} ${STATUS_CODES[answer.status] ?? 'Error'}`,
    ...Object.entries(headers).map(([name, value]) => `${name}: ${value}`),
    'Content-Type: application/json; charset=utf-8',
    `Content-Length: ${body.length}`,
    'Connection: close',
  ]
  return Buffer.concat([Buffer.from(`${lines.join('\r\n')}\r\n\r\n`, 'latin1'), body])
}

/**
 * fastify's `clientErrorHandler`. `headers` gives the common headers for a language (CORS,
 * Content-Language and whatever else every response carries).
 */
export function clientErrorHandler(texts: ErrorTexts, headers: (language: Language) => Record<string, string>) {
  return function handle(this: { log: FastifyBaseLogger }, error: Error & { code?: string }, socket: Socket): void {
    // A reset connection has no one left to answer.
    if (error.code === 'ECONNRESET' || socket.destroyed) return
    const answer = clientErrorAnswer(error.code)
    // The code only: the raw packet may hold an Authorization header.
    this.log.debug({ parserError: error.code, status: answer.status }, 'request refused by the HTTP parser')
    const language = texts.defaultLanguage
    const answerAndClose = () => {
      if (socket.writable) {
        socket.end(clientErrorResponse(answer, texts.catalog.translate(language, answer.messageKey), headers(language)))
      }
      const linger = setTimeout(() => socket.destroy(), LINGER_MS)
      linger.unref()
      socket.once('close', () => clearTimeout(linger))
    }
    // A request before this one on the same connection (received whole) is still being answered: its
    // answer first, else the raw refusal would take its place.
    const inFlight = (socket as Socket & { _httpMessage?: ServerResponse | null })._httpMessage
    if (inFlight !== undefined && inFlight !== null && !inFlight.writableFinished && inFlight.req.complete) inFlight.once('finish', answerAndClose)
    else answerAndClose()
  }
}

/**
 * Requests Node answers itself before any route: HTTP/1.1 without `Host` (Node's bare 400, turned off
 * here by `requireHostHeader: false` and refused by `refuseMissingHost`) and `CONNECT` (a socket closed
 * unanswered): the contract's body and headers instead.
 */
export function answerConnect(server: Server, texts: ErrorTexts, headers: (language: Language) => Record<string, string>): void {
  server.on('connect', (_req, socket: Socket) => {
    const language = texts.defaultLanguage
    const answer: ClientErrorAnswer = { status: 404, code: 'rest_no_route', messageKey: 'noRoute' }
    socket.on('error', () => undefined)
    socket.end(clientErrorResponse(answer, texts.catalog.translate(language, answer.messageKey), headers(language)))
    setTimeout(() => socket.destroy(), LINGER_MS).unref()
  })
}

/** HTTP/1.1 requires `Host` (RFC 9112 §3.2): a request without one is refused as malformed. */
export function refuseMissingHost(app: FastifyInstance): void {
  app.addHook('onRequest', (req, reply, done) => {
    if (req.raw.httpVersion !== '1.1' || req.headers.host !== undefined) {
      done()
      return
    }
    // Closed like every request the parser refuses: what follows on the connection cannot be trusted.
    reply.header('Connection', 'close')
    done(new ApiError(400, 'rest_invalid_request', 'unparsableRequest'))
  })
}

/** Lets requests with an unknown `Expect` through instead of Node's bodiless 417. */
export function ignoreUnknownExpectations(server: Server): void {
  server.on('checkExpectation', (req, res) => server.emit('request', req, res))
}
