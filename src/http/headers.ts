/**
 * The headers every answer carries (CORS for any origin, CONTRACT §1; `Content-Language` naming the
 * language served; `X-Request-Id` and `X-Content-Type-Options: nosniff`, §16; `Vary: Accept-Encoding`,
 * since any answer over 1 kB may be compressed), and the CORS preflight: OPTIONS on every route of the
 * spec answers with its methods.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import type { Config } from '../config.js'
import type { Language } from '../contract.js'
import { requestedLanguage } from './language.js'
import { REQUEST_ID_HEADER } from './request-id.js'
import { PREFIX, type LoadedSpec } from './spec.js'

const EXPOSED_HEADERS = 'X-Total, X-Total-Pages, Link, ETag, Location, Content-Language, X-Request-Id, Retry-After, RateLimit-Limit, RateLimit-Remaining, RateLimit-Reset, Idempotent-Replayed'
/** What a browser may send: `X-Request-Id` too, since a sent one is reused (CONTRACT §16). */
const ALLOWED_HEADERS = 'Authorization, Content-Type, If-Match, If-None-Match, Idempotency-Key, X-Request-Id'

/** CORS on every response (CONTRACT §1) and `Content-Language` naming the language served. */
export function registerHeaders(app: FastifyInstance, config: Config): void {
  app.addHook('onSend', (req: FastifyRequest, reply, payload, done) => {
    setCommonHeaders(req, reply, config)
    done(null, payload)
  })
}

export function setCommonHeaders(req: FastifyRequest, reply: FastifyReply, config: Config): void {
  reply.headers(commonHeaders(requestedLanguage(req) ?? config.defaultLanguage))
  reply.header(REQUEST_ID_HEADER, req.id)
  // Caches keep one answer per coding (the compression module adds it too, only when it compressed).
  const vary = reply.getHeader('Vary')
  if (vary === undefined) reply.header('Vary', 'Accept-Encoding')
  else if (!/accept-encoding/i.test(String(vary))) reply.header('Vary', `${String(vary)}, Accept-Encoding`)
}

export function commonHeaders(language: Language): Record<string, string> {
  return {
    'Access-Control-Allow-Origin': '*',
    'Access-Control-Expose-Headers': EXPOSED_HEADERS,
    // The spec declares the header as the `ml_language` code itself (`at`, `ch-fr`, …), not a BCP 47 tag.
    'Content-Language': language,
    'X-Content-Type-Options': 'nosniff',
  }
}

/**
 * OPTIONS on every route of the spec answers a CORS preflight with the methods of that route. A preflight is
 * never rate limited nor counted (CONTRACT §1: a preflight is 204): browsers send it without the client's key,
 * so it would count against the address (shared behind a NAT) and a 429 preflight fails the real request as a
 * CORS error, hiding its 429 and `Retry-After`.
 */
export function registerPreflight(app: FastifyInstance, document: LoadedSpec['document']): void {
  for (const [path, item] of Object.entries(document.paths)) {
    const methods = ['get', 'post', 'put', 'patch', 'delete'].filter((m) => m in item).map((m) => m.toUpperCase())
    // `{id}` is digits; any other parameter (`{slug}`, `{occurrence}`) one segment, never empty (http/routes.ts).
    const url = `${PREFIX}${path === '/' ? '' : path}`.replace(/\{id\}/g, ':id(^\\d+$)').replace(/\{([a-z_]+)\}/g, ':$1(^[\\s\\S]+$)')
    app.options(url, { schema: { hide: true }, config: { rateLimit: false } }, async (_req, reply) => {
      reply.code(204)
        .header('Access-Control-Allow-Methods', [...methods, 'OPTIONS'].join(', '))
        .header('Access-Control-Allow-Headers', ALLOWED_HEADERS)
        .header('Access-Control-Max-Age', '86400')
        .header('Allow', [...methods, 'OPTIONS'].join(', '))
      return reply.send()
    })
  }
}
