/**
 * JSON and form bodies only (CONTRACT §1): an empty body is `{}`, malformed JSON or text that is not
 * Unicode is 400 `rest_invalid_json`, a form body whose text or `%XX` escapes are not UTF-8 400
 * `rest_invalid_request` saying so, any other non-empty media type 415 (either of the two too when it names a
 * charset other than UTF-8: its bytes would be read as UTF-8 all the same, Latin-1's `é` stored as another
 * text), and DELETE ignores its body. Keys such as `__proto__` and `constructor` are parsed as plain fields, so that validation
 * refuses them like any unknown field (400 naming it).
 * The route is checked before the body is read: no route is 404 whatever the body holds.
 */
import { createHash } from 'node:crypto'
import type { FastifyInstance, FastifyRequest } from 'fastify'
import { ApiError } from './errors.js'
import { formEscapesAreUtf8, parseFormBody } from './query.js'

declare module 'fastify' {
  interface FastifyRequest {
    /**
     * The SHA-256 (hex) of the body's bytes as received (decoded, if compressed), for a request that sends an
     * `Idempotency-Key`: its retries are compared by it (handlers/idempotency.ts). Null otherwise.
     */
    bodyDigest: string | null
  }
}

/** Notes the digest of `body` when the request may be retried under an Idempotency-Key. */
function noteDigest(req: FastifyRequest, body: Buffer): void {
  if (req.headers['idempotency-key'] !== undefined) req.bodyDigest = createHash('sha256').update(body).digest('hex')
}

const WRITE_METHODS = new Set(['POST', 'PUT', 'PATCH'])

/**
 * JSON and form bodies only (CONTRACT §1): an empty body is `{}`, malformed JSON or invalid UTF-8 is
 * 400 `rest_invalid_json`, any other non-empty media type 415. DELETE ignores its body.
 */
export function registerBodyParsers(app: FastifyInstance): void {
  app.removeAllContentTypeParsers()
  app.decorateRequest('bodyDigest', null)
  // `__proto__` and `constructor` keys kept as own fields (JSON.parse defines them, it never sets a
  // prototype): validation then refuses them by name like any unknown field (CONTRACT §1).
  const json = app.getDefaultJsonParser('ignore', 'ignore')
  const decode = (body: Buffer): string | undefined => {
    try {
      return new TextDecoder('utf-8', { fatal: true }).decode(body)
    } catch {
      return undefined
    }
  }
  app.addContentTypeParser('application/json', { parseAs: 'buffer' }, (req, body: Buffer, done) => {
    if (req.method === 'DELETE') return done(null, undefined)
    const charset = body.length === 0 ? undefined : foreignCharset(req)
    if (charset !== undefined) return done(unsupportedCharset(charset), undefined)
    noteDigest(req, body)
    const text = decode(body)
    if (text === undefined) return done(new ApiError(400, 'rest_invalid_json', 'invalidJson'), undefined)
    if (text.trim() === '') return done(null, {})
    void json(req, text, (error, value) => {
      if (error !== null || !wellFormed(value)) done(new ApiError(400, 'rest_invalid_json', 'invalidJson'), undefined)
      else done(null, value)
    })
  })
  app.addContentTypeParser('application/x-www-form-urlencoded', { parseAs: 'buffer' }, (req, body: Buffer, done) => {
    if (req.method === 'DELETE') return done(null, undefined)
    const charset = body.length === 0 ? undefined : foreignCharset(req)
    if (charset !== undefined) return done(unsupportedCharset(charset), undefined)
    noteDigest(req, body)
    const text = decode(body)
    if (text === undefined || !formEscapesAreUtf8(text)) return done(new ApiError(400, 'rest_invalid_request', 'invalidForm'), undefined)
    done(null, parseFormBody(text))
  })
  const refuse = (req: FastifyRequest, body: Buffer, done: (error: Error | null, value?: unknown) => void) => {
    if (req.method === 'DELETE' || body.length === 0) return done(null, undefined)
    done(new ApiError(415, 'rest_unsupported_media_type', 'unsupportedMediaType', { type: String(req.headers['content-type'] ?? '') }), undefined)
  }
  app.addContentTypeParser('*', { parseAs: 'buffer' }, refuse)
  // Types the server only answers with (/doc's YAML, the iCalendar feeds), named so that glue, which looks for a
  // parser for every media type of the spec, its answers' too, finds one (else it warns at every start): refused
  // like any other.
  app.addContentTypeParser(['application/yaml', 'text/calendar'], { parseAs: 'buffer' }, refuse)
  // One hook, called back at once (every request passes it: no promise and no microtask of its own).
  app.addHook('onRequest', (req, _reply, done) => {
    // The route is checked first (CONTRACT §1): no route is 404 before the body is read, whatever it holds.
    if (req.is404) {
      done(new ApiError(404, 'rest_no_route', 'noRoute'))
      return
    }
    if (req.method === 'DELETE') {
      // DELETE takes no body (CONTRACT §1): Fastify is told there is none, so it neither reads nor limits
      // it, and a large one is no 413 (which DELETE does not declare). Node's parser still knows the real
      // length and drops what was sent once the answer is written.
      delete req.raw.headers['content-type']
      delete req.raw.headers['content-length']
      delete req.raw.headers['transfer-encoding']
    } else if (WRITE_METHODS.has(req.method)) {
      // A write without a body is `{}`: give it a media type so it is parsed and validated like any other.
      const length = req.headers['content-length']
      if (req.headers['transfer-encoding'] === undefined && (length === undefined || length === '0')) {
        req.raw.headers['content-type'] = 'application/json'
      }
    }
    done()
  })
}

/** The labels of UTF-8 (WHATWG Encoding), compared in lower case. */
const UTF8_LABELS = new Set(['utf-8', 'utf8', 'unicode-1-1-utf-8'])

/**
 * The charset a body's Content-Type names when it is not UTF-8 (`charset=latin1`, `charset="utf-16"`), else
 * undefined (none named, or UTF-8 in any case). JSON is UTF-8 (RFC 8259 §8.1) and forms are read as UTF-8:
 * a body said to be in another charset is refused (415), never read as UTF-8 and stored as another text.
 * The parsers ask only for a body that is not empty: an empty one has no text to misread (`{}`).
 */
function foreignCharset(req: FastifyRequest): string | undefined {
  const header = req.headers['content-type'] ?? ''
  const match = /;\s*charset\s*=\s*(?:"([^"]*)"|([^;\s]*))/i.exec(header)
  if (match === null) return undefined
  const charset = match[1] ?? match[2] ?? ''
  return UTF8_LABELS.has(charset.trim().toLowerCase()) ? undefined : charset
}

function unsupportedCharset(charset: string): ApiError {
  return new ApiError(415, 'rest_unsupported_media_type', 'unsupportedCharset', { charset })
}

const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/

/**
 * Whether every string (and key) of a parsed JSON body is Unicode text: a `\ud800` escape without its
 * pair parses, but has no UTF-8 form, so it could only be stored mangled. Refused like invalid UTF-8.
 */
function wellFormed(value: unknown): boolean {
  // A loop, not recursion: a body may nest deeper than the stack.
  const pending: unknown[] = [value]
  while (pending.length > 0) {
    const next = pending.pop()
    if (typeof next === 'string') {
      if (LONE_SURROGATE.test(next)) return false
    } else if (typeof next === 'object' && next !== null) {
      for (const [key, item] of Object.entries(next)) {
        if (LONE_SURROGATE.test(key)) return false
        pending.push(item)
      }
    }
  }
  return true
}
