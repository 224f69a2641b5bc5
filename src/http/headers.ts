/**
 * The headers every answer carries (CORS for any origin, CONTRACT §1, and `Content-Language` naming the
 * language served), and the CORS preflight: OPTIONS on every route of the spec answers with its methods.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import type { Config } from '../config.js'
import type { Language } from '../contract.js'
import { requestedLanguage } from './language.js'
import { PREFIX, type LoadedSpec } from './spec.js'

const EXPOSED_HEADERS = 'X-Total, X-Total-Pages, Link, ETag, Location, Content-Language'
const ALLOWED_HEADERS = 'Authorization, Content-Type, If-Match, If-None-Match'

/** CORS on every response (CONTRACT §1) and `Content-Language` naming the language served. */
export function registerHeaders(app: FastifyInstance, config: Config): void {
  app.addHook('onSend', async (req: FastifyRequest, reply, payload) => {
    setCommonHeaders(req, reply, config)
    return payload
  })
}

export function setCommonHeaders(req: FastifyRequest, reply: FastifyReply, config: Config): void {
  reply.headers(commonHeaders(requestedLanguage(req) ?? config.defaultLanguage))
}

export function commonHeaders(language: Language): Record<string, string> {
  return {
    'Access-Control-Allow-Origin': '*',
    'Access-Control-Expose-Headers': EXPOSED_HEADERS,
    // The spec declares the header as the `ml_language` code itself (`at`, `ch-fr`, …), not a BCP 47 tag.
    'Content-Language': language,
  }
}

/** OPTIONS on every route of the spec answers a CORS preflight with the methods of that route. */
export function registerPreflight(app: FastifyInstance, document: LoadedSpec['document']): void {
  for (const [path, item] of Object.entries(document.paths)) {
    const methods = ['get', 'post', 'put', 'patch', 'delete'].filter((m) => m in item).map((m) => m.toUpperCase())
    const url = `${PREFIX}${path === '/' ? '' : path}`.replace(/\{id\}/g, ':id(^\\d+$)').replace(/\{slug\}/g, ':slug')
    app.options(url, { schema: { hide: true } }, async (_req, reply) => {
      reply.code(204)
        .header('Access-Control-Allow-Methods', [...methods, 'OPTIONS'].join(', '))
        .header('Access-Control-Allow-Headers', ALLOWED_HEADERS)
        .header('Access-Control-Max-Age', '86400')
        .header('Allow', [...methods, 'OPTIONS'].join(', '))
      return reply.send()
    })
  }
}
