/**
 * Builds the application from the contract: glue binds every operation of `openapi/openapi.yaml` to its
 * handler, with Ajv 2020 validation and the spec's response schemas for serialisation. Never listens.
 */
import Fastify, { type FastifyInstance, type FastifyReply, type FastifyRequest } from 'fastify'
import openapiGlue from 'fastify-openapi-glue'
import swagger from '@fastify/swagger'
import swaggerUi from '@fastify/swagger-ui'
import type { Kysely } from 'kysely'
import type { Config } from './config.js'
import type { Database } from './db/schema.js'
import { categoryHandlers } from './handlers/categories.js'
import type { AppContext } from './handlers/context.js'
import { eventHandlers } from './handlers/events.js'
import { rootHandlers } from './handlers/root.js'
import { tagHandlers } from './handlers/tags.js'
import { venueHandlers } from './handlers/venues.js'
import { organizerHandlers } from './handlers/organizers.js'
import { createCompilers, useCompilers, type Compilers } from './http/compilers.js'
import { createReadCache, useReadCache } from './repositories/read-cache.js'
import { recordSerializers } from './http/serialized.js'
import { frameworkErrorHandler, registerErrorHandlers, type ErrorTexts } from './http/error-handler.js'
import { ApiError } from './http/errors.js'
import { clientErrorHandler, ignoreUnknownExpectations } from './http/client-errors.js'
import { messageTable } from './http/i18n.js'
import { createCatalog } from './http/messages.js'
import type { Language } from './contract.js'
import { requestedLanguage } from './http/language.js'
import type { Handlers } from './http/operations.js'
import { formEscapesAreUtf8, parseFormBody, registerQueryNormalisation } from './http/query.js'
import { registerAuthentication, securityHandlers } from './http/security.js'
import { PREFIX, asSwaggerDocument, loadSpec, servedDocument, type LoadedSpec } from './http/spec.js'
import { typedDocument } from './http/wire-forms.js'
import { swaggerUiTheme } from './http/swagger-ui.js'

export interface AppOptions {
  db: Kysely<Database>
  config: Config
  /** The clock; tests pin it. */
  now?: () => Date
  /** The parsed contract, when the caller already has it (tests build many apps). */
  spec?: LoadedSpec
  /** Schema compilers to share between apps built from the same spec (tests). */
  compilers?: Compilers
}

const BODY_LIMIT = 1024 * 1024
const MAX_PARAM_LENGTH = 2048
const WRITE_METHODS = new Set(['POST', 'PUT', 'PATCH'])
const EXPOSED_HEADERS = 'X-Total, X-Total-Pages, Link, ETag, Location, Content-Language'
const ALLOWED_HEADERS = 'Authorization, Content-Type, If-Match, If-None-Match'

export async function buildApp(options: AppOptions): Promise<FastifyInstance> {
  const { db, config } = options
  const spec = options.spec ?? loadSpec()
  useReadCache(db, createReadCache(config.cacheEntries))
  const apiUrl = `${config.publicUrl}${PREFIX}`
  const ctx: AppContext = {
    db, config, apiUrl, site: { apiUrl, geoloc: config.extensions.has('geoloc') }, now: options.now ?? (() => new Date()), spec,
    json: recordSerializers(spec.document),
  }

  const texts: ErrorTexts = { defaultLanguage: config.defaultLanguage, catalog: createCatalog(messageTable(spec.document['x-messages']), spec.packs) }

  const app = Fastify({
    logger: config.logLevel === 'silent' ? false : { level: config.logLevel },
    bodyLimit: BODY_LIMIT,
    // Slugs may be 200 characters (more when percent-encoded): the default limit of 100 would answer 414.
    routerOptions: { ignoreTrailingSlash: true, maxParamLength: MAX_PARAM_LENGTH },
    // Answered before routing and without hooks: give them the headers every response carries.
    frameworkErrors: (error, req, reply) => {
      setCommonHeaders(req, reply, config)
      return frameworkErrorHandler(texts)(error, req, reply)
    },
    // Refused by Node's HTTP parser (raw UTF-8 in the URL, headers too large): the same body and headers.
    clientErrorHandler: clientErrorHandler(texts, commonHeaders),
  })
  ignoreUnknownExpectations(app.server)

  useCompilers(app, options.compilers ?? createCompilers())
  registerErrorHandlers(app, texts)
  registerBodyParsers(app)
  registerAuthentication(app, db)
  registerQueryNormalisation(app)
  registerHeaders(app, config)
  digitsOnlyIds(app)
  registerPreflight(app, spec.document)

  await app.register(swagger, { mode: 'static', specification: { document: asSwaggerDocument(spec.document) } })
  await app.register(swaggerUi, {
    routePrefix: `${PREFIX}/ui`,
    ...swaggerUiTheme(),
    // The UI shows the document exactly as /doc serves it: absolute server, requested language.
    transformSpecification: (_document, req) => servedDocument(spec, config.publicUrl, requestedLanguage(req) ?? config.defaultLanguage),
  })

  const handlers = {
    ...rootHandlers(ctx),
    ...categoryHandlers(ctx),
    ...tagHandlers(ctx),
    ...venueHandlers(ctx),
    ...organizerHandlers(ctx),
    ...eventHandlers(ctx),
  } satisfies Handlers
  await app.register(openapiGlue, {
    // Validation as handlers read requests: the text forms of query strings and forms are converted first.
    specification: typedDocument(spec.document),
    serviceHandlers: handlers,
    securityHandlers,
    prefix: PREFIX,
  })
  return app
}

/**
 * JSON and form bodies only (CONTRACT §1): an empty body is `{}`, malformed JSON or invalid UTF-8 is
 * 400 `rest_invalid_json`, any other non-empty media type 415. DELETE ignores its body.
 */
function registerBodyParsers(app: FastifyInstance): void {
  app.removeAllContentTypeParsers()
  const json = app.getDefaultJsonParser('error', 'error')
  const decode = (body: Buffer): string | undefined => {
    try {
      return new TextDecoder('utf-8', { fatal: true }).decode(body)
    } catch {
      return undefined
    }
  }
  app.addContentTypeParser('application/json', { parseAs: 'buffer' }, (req, body: Buffer, done) => {
    if (req.method === 'DELETE') return done(null, undefined)
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
    const text = decode(body)
    if (text === undefined || !formEscapesAreUtf8(text)) return done(new ApiError(400, 'rest_invalid_json', 'invalidJson'), undefined)
    done(null, parseFormBody(text))
  })
  const refuse = (req: FastifyRequest, body: Buffer, done: (error: Error | null, value?: unknown) => void) => {
    if (req.method === 'DELETE' || body.length === 0) return done(null, undefined)
    done(new ApiError(415, 'rest_unsupported_media_type', 'unsupportedMediaType', { type: String(req.headers['content-type'] ?? '') }), undefined)
  }
  app.addContentTypeParser('*', { parseAs: 'buffer' }, refuse)
  // A type the server only answers with (/doc's YAML), named so that glue, which looks for a parser for every
  // media type of the spec, finds one: refused like any other.
  app.addContentTypeParser('application/yaml', { parseAs: 'buffer' }, refuse)
  // The route is checked first (CONTRACT §1): no route is 404 before the body is read, whatever it holds.
  app.addHook('onRequest', async (req) => {
    if (req.is404) throw new ApiError(404, 'rest_no_route', 'noRoute')
  })
  // A write without a body is `{}`: give it a media type so it is parsed and validated like any other.
  app.addHook('onRequest', async (req) => {
    if (!WRITE_METHODS.has(req.method)) return
    const length = req.headers['content-length']
    if (req.headers['transfer-encoding'] === undefined && (length === undefined || length === '0')) {
      req.raw.headers['content-type'] = 'application/json'
    }
  })
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

/** CORS on every response (CONTRACT §1) and `Content-Language` naming the language served. */
function registerHeaders(app: FastifyInstance, config: Config): void {
  app.addHook('onSend', async (req: FastifyRequest, reply, payload) => {
    setCommonHeaders(req, reply, config)
    return payload
  })
}

function setCommonHeaders(req: FastifyRequest, reply: FastifyReply, config: Config): void {
  reply.headers(commonHeaders(requestedLanguage(req) ?? config.defaultLanguage))
}

function commonHeaders(language: Language): Record<string, string> {
  return {
    'Access-Control-Allow-Origin': '*',
    'Access-Control-Expose-Headers': EXPOSED_HEADERS,
    // The spec declares the header as the `ml_language` code itself (`at`, `ch-fr`, …), not a BCP 47 tag.
    'Content-Language': language,
  }
}

/**
 * `{id}` is digits only: `/events/abc` matches no route (404 `rest_no_route`) instead of failing
 * validation, as the source document's `<id>` pattern says.
 */
function digitsOnlyIds(app: FastifyInstance): void {
  app.addHook('onRoute', (route) => {
    const params: unknown = route.schema?.params
    if (typeof params !== 'object' || params === null || !('properties' in params)) return
    const properties = params.properties
    if (typeof properties !== 'object' || properties === null) return
    for (const [name, schema] of Object.entries(properties)) {
      if (typeof schema === 'object' && schema !== null && 'type' in schema && schema.type === 'integer') {
        route.url = route.url.replace(`:${name}`, `:${name}(^\\d+$)`)
      }
    }
  })
}

/** OPTIONS on every route of the spec answers a CORS preflight with the methods of that route. */
function registerPreflight(app: FastifyInstance, document: LoadedSpec['document']): void {
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
