/**
 * Builds the application from the contract: glue binds every operation of `openapi/openapi.yaml` to its
 * handler, with Ajv 2020 validation and the spec's response schemas for serialisation. Only wiring:
 * each cross-cutting concern is its own module under `http/`, registered here by one line. Never listens.
 */
import Fastify, { type FastifyInstance } from 'fastify'
import openapiGlue from 'fastify-openapi-glue'
import swagger from '@fastify/swagger'
import swaggerUi from '@fastify/swagger-ui'
import helmet from '@fastify/helmet'
import type { Kysely } from 'kysely'
import type { Config } from './config.js'
import type { Database } from './db/schema.js'
import { categoryHandlers } from './handlers/categories.js'
import { changeHandlers } from './handlers/changes.js'
import { useClock } from './db/change-log.js'
import { databaseReady, migrationsReady, onDatabaseFault, poolStats } from './db/database.js'
import { isDatabaseUnavailable } from './db/faults.js'
import { isPostgres } from './db/dialect.js'
import type { AppContext } from './handlers/context.js'
import { eventHandlers } from './handlers/events.js'
import { occurrenceWriteHandlers } from './handlers/occurrence-writes.js'
import { occurrenceHandlers } from './handlers/event-occurrences.js'
import { coldSources, postgresColdSources, type ColdSources, type ListQueryCheck } from './handlers/cold-reads.js'
import type { ListQuery } from './handlers/event-list-input.js'
import { eventDocument } from './handlers/event-documents.js'
import { organizerHandlers } from './handlers/organizers.js'
import { rootHandlers } from './handlers/root.js'
import { tagHandlers } from './handlers/tags.js'
import { venueHandlers } from './handlers/venues.js'
import { webhookHandlers } from './handlers/webhooks.js'
import { onWritten } from './db/unit-of-work.js'
import { pendingCount } from './repositories/webhook-deliveries.js'
import { createDispatcher, type Dispatcher } from './webhooks/dispatcher.js'
import { eventLoopLoad, saturatedByRequests } from './webhooks/loop-load.js'
import { createAuthThrottle } from './http/auth-throttle.js'
import { registerBodyParsers } from './http/body-parsers.js'
import { registerCompression } from './http/compression.js'
import { registerHealth } from './http/health.js'
import { registerMetrics } from './http/metrics.js'
import { registerRateLimit, trustProxyOption } from './http/rate-limit.js'
import { REQUEST_ID_HEADER, genReqId, requestIdOf } from './http/request-id.js'
import { answerConnect, clientErrorHandler, ignoreUnknownExpectations, refuseMissingHost } from './http/client-errors.js'
import { createCompilers, useCompilers, type Compilers } from './http/compilers.js'
import { frameworkErrorHandler, registerErrorHandlers, type ErrorTexts } from './http/error-handler.js'
import { connectionOptions, registerConnectionHandling } from './http/connections.js'
import { commonHeaders, registerHeaders, registerPreflight, setCommonHeaders } from './http/headers.js'
import { messageTable } from './http/i18n.js'
import { usePrecompiledMetaValidator } from './http/meta-validator.js'
import { requestedLanguage } from './http/language.js'
import { loggerOptions, registerRequestLog, requestLogController, type LogStream } from './http/logging.js'
import { createCatalog } from './http/messages.js'
import type { Handlers } from './http/operations.js'
import { registerQueryNormalisation } from './http/query.js'
import { registerReplay, type Replay } from './http/replay.js'
import { orderPipelinedRequests } from './http/pipelining.js'
import { registerNulGuard } from './http/nul-guard.js'
import { registerIdempotencyKeyCheck } from './http/idempotency-key.js'
import { digitsOnlyIds } from './http/routes.js'
import { registerAuthentication, securityHandlers } from './http/security.js'
import { recordSerializers } from './http/serialized.js'
import { publicUrl } from './http/public-url.js'
import { PREFIX, asSwaggerDocument, loadSpec, servedDocument, type LoadedSpec } from './http/spec.js'
import { swaggerUiPaths, swaggerUiSecurityHeaders, swaggerUiTheme, uiDocument } from './http/swagger-ui.js'
import { typedDocument } from './http/wire-forms.js'
import { createEventDocuments, type EventDocuments } from './repositories/event-documents.js'
import { storedEvents } from './repositories/event-records.js'
import { createReadCache, generationNow, lookedGeneration, readCacheStats, useReadCache } from './repositories/read-cache.js'
import { keyCallers } from './repositories/users.js'
import type { Site } from './repositories/site.js'

export interface AppOptions {
  db: Kysely<Database>
  config: Config
  /** The clock; tests pin it. */
  now?: () => Date
  /** The parsed contract, when the caller already has it (tests build many apps). */
  spec?: LoadedSpec
  /** Schema compilers to share between apps built from the same spec (tests). */
  compilers?: Compilers
  /** Where log lines go instead of stdout (tests). */
  logStream?: LogStream
  /** The webhook dispatcher's clock, random source, request timeout and attempts per subscription at once (tests); default the real ones. */
  webhooks?: { now?: () => Date; random?: () => number; timeoutMs?: number; perReceiver?: number }
}

declare module 'fastify' {
  interface FastifyInstance {
    /** The webhook dispatcher: `server.ts` starts it and stops it on SIGTERM; closing the app stops it. */
    webhooks: Dispatcher
    /** The stored event documents (their counts; tests wait for offers to be stored). */
    eventDocuments: EventDocuments
    /** Answers replayed before routing (http/replay.ts): recordings held and replays so far (tests). */
    replay: Replay
    /** The cold reads' answers given to the replay (handlers/cold-reads.ts; undefined on PostgreSQL or documents off): benches. */
    coldReads: ColdSources | undefined
    /** Stores the event documents missing for this public URL, giving way to requests (`server.ts` starts it once listening). */
    fillEventDocuments: () => Promise<boolean>
    /**
     * The events this process wrote since the last `run` (a create's new event has no document; an update's triggers
     * deleted its), and `run`: their missing documents stored as the fill stores them, giving way to requests
     * (`server.ts` runs it once writes pause; tests at once).
     */
    writtenDocuments: { pending: () => number; run: () => Promise<boolean> }
  }
}

const BODY_LIMIT = 1024 * 1024
/** Events written by this process remembered for `writtenDocuments` at most (more: left to the reads, which offer them). */
const MAX_WRITTEN_EVENTS = 20_000

/**
 * Moves whenever a request arrives at any app of this process and whenever a unit of work ends: the
 * read cache looks at the engine's data version once per request, not once per read (read-cache.ts,
 * `moments`). One count for the process, so that apps sharing a database handle (tests) keep each other's looks fresh.
 */
let moments = 0
/** Moves whenever a unit of work of this process ends: a look is taken on trust only while it stays put (read-cache.ts `provisionalLook`). */
let written = 0

/** The common headers of an answer given before routing (no request): a new request id. */
function unroutedHeaders(language: Parameters<typeof commonHeaders>[0]): Record<string, string> {
  return { ...commonHeaders(language), [REQUEST_ID_HEADER]: requestIdOf(undefined) }
}
/**
 * A path parameter (an id, a slug) up to this long is looked up: a slug is any characters but `/` (the source
 * document), and Node refuses a request line and headers over 16 kB (431) before routing, so every slug a
 * socket can send names a record or is 404 `rest-<resource>-not-found` (at 2,048 a longer one was 404
 * `rest_no_route`, as if the route did not exist).
 */
const MAX_PARAM_LENGTH = 16 * 1024

export async function buildApp(options: AppOptions): Promise<FastifyInstance> {
  const { db, config } = options
  const spec = options.spec ?? loadSpec()
  onWritten(db, () => {
    moments += 1
    written += 1
  })
  useReadCache(db, createReadCache(config.cacheEntries, undefined, () => moments, () => written))
  // Requests received by this app (counted by its first hook, below): the webhook dispatcher gives way to
  // requests when they keep this node saturated (webhooks/dispatcher.ts).
  let received = 0
  const now = options.now ?? (() => new Date())
  useClock(db, now)
  // Whether requests keep this node saturated (set once the request counter exists, below).
  let busy = (): boolean => false
  const base = publicUrl(config)
  const texts: ErrorTexts = {
    defaultLanguage: config.defaultLanguage, catalog: createCatalog(messageTable(spec.document['x-messages']), spec.packs),
    databaseUnavailable: isDatabaseUnavailable,
  }
  // Background work meeting a database that cannot serve (it is retried: the dispatcher's next round, the
  // next offers, retention's next run) says so at warn; anything else is an error.
  const failed = (what: string) => (error: unknown): void => {
    if (isDatabaseUnavailable(error)) app.log.warn({ err: error }, `${what}: the database cannot serve, tried again later`)
    else app.log.error({ err: error }, what)
  }
  // The API's URL, made again only when the base moves (the bound port): one string, which hot reads compare by identity.
  let api = { base: base.base, url: `${base.base}${PREFIX}` }
  const apiUrl = (): string => {
    if (api.base !== base.base) api = { base: base.base, url: `${base.base}${PREFIX}` }
    return api.url
  }
  const site: Site = { get apiUrl() { return apiUrl() }, geoloc: config.extensions.has('geoloc'), timeZone: config.timezone }
  const ctx: AppContext = {
    db, config, spec, catalog: texts.catalog,
    get publicUrl() { return base.base },
    get apiUrl() { return apiUrl() },
    site,
    now,
    json: recordSerializers(spec.document),
    documents: createEventDocuments(db, {
      enabled: config.eventDocuments, eventSchema: (spec.document.components as { schemas?: Record<string, unknown> } | undefined)?.schemas?.Event, site,
      onError: failed('storing event documents failed'),
      saturated: () => busy(),
    }),
  }


  const app = Fastify({
    ...connectionOptions(config.connections),
    logger: loggerOptions(config.logLevel, options.logStream, config.logFormat),
    // One line per request, ours (http/logging.ts), with the id X-Request-Id names (http/request-id.ts).
    logController: requestLogController(),
    requestIdHeader: false,
    genReqId,
    trustProxy: trustProxyOption(config.trustProxy),
    bodyLimit: BODY_LIMIT,
    // Slugs may be 200 characters (more when percent-encoded): the default limit of 100 would answer 414.
    routerOptions: { ignoreTrailingSlash: true, maxParamLength: MAX_PARAM_LENGTH },
    // Answered before routing and without hooks: give them the headers every response carries.
    frameworkErrors: (error, req, reply) => {
      setCommonHeaders(req, reply, config)
      return frameworkErrorHandler(texts)(error, req, reply)
    },
    // Refused by Node's HTTP parser (raw UTF-8 in the URL, headers too large): the same body and headers.
    clientErrorHandler: clientErrorHandler(texts, unroutedHeaders),
  })
  const arrived = () => {
    received += 1
    moments += 1
  }
  app.addHook('onRequest', (_req, _reply, done) => {
    arrived()
    done()
  })
  // Hot answers replayed before routing (http/replay.ts), checked against the read cache's generation; counted,
  // logged and measured as the full path would; not while draining nor with a rate limit (which counts every request).
  let observe: ((route: string, method: string, status: number, seconds: number) => void) | undefined
  let connections: { closing(): boolean } | undefined
  // Cold anonymous reads by id and of occurrences from the stored documents, before routing (SQLite: its look answers
  // at once). PostgreSQL: reads by id only, the turn's look reading the documents of the cold reads held in its statement.
  // Cold lists (SQLite): the list route's query check, taken from the route as it is registered (below).
  let listCheck: ListQueryCheck | undefined
  const compilers = options.compilers ?? createCompilers()
  const coldReads = isPostgres(db) || !config.eventDocuments ? undefined : coldSources(ctx, () => listCheck)
  const replay = registerReplay(app, {
    arrived,
    lookNow: () => generationNow(db),
    look: () => lookedGeneration(db),
    open: () => config.rateLimit <= 0 && connections?.closing() !== true,
    observe: (route, method, status, seconds) => observe?.(route, method, status, seconds),
    cold: coldReads ?? (config.eventDocuments ? postgresColdSources(ctx) : undefined),
  })
  app.decorate('replay', replay)
  // A request pipelined after a write waits for it, safe ones 8 at once at most (http/pipelining.ts), replays included.
  orderPipelinedRequests(app.server)
  app.decorate('coldReads', coldReads)
  ignoreUnknownExpectations(app.server)
  answerConnect(app.server, texts, unroutedHeaders)
  app.addHook('onListen', async () => base.listening(app.server.address()))
  app.decorate('publicUrl', { getter: () => base.base })
  connections = registerConnectionHandling(app, config.connections)

  useCompilers(app, compilers)
  app.addHook('onRoute', (route) => {
    const querystring = route.schema?.querystring
    if (listCheck !== undefined || route.method !== 'GET' || route.url !== `${PREFIX}/events` || typeof querystring !== 'object' || querystring === null) return
    const validate = compilers.validator(querystring, 'querystring')
    listCheck = { schema: querystring, valid: (query): query is ListQuery => validate(query) }
  })
  registerErrorHandlers(app, texts)
  registerBodyParsers(app)
  refuseMissingHost(app)
  // Before authentication's routes are set up, so that the limit counts a request before its roles are
  // checked (a refused key still counts); its hook still runs after the key was looked up.
  await registerRateLimit(app, config.rateLimit)
  registerAuthentication(app, keyCallers(db), createAuthThrottle(config.authFailureLimit, now))
  registerQueryNormalisation(app)
  registerNulGuard(app)
  registerIdempotencyKeyCheck(app)
  registerHeaders(app, config)
  registerRequestLog(app)
  await registerCompression(app)
  registerHealth(app, { database: () => databaseReady(db), migrations: () => migrationsReady(db) })
  // Faults met outside requests: a pooled connection closed, the SQLite file deleted or replaced.
  onDatabaseFault(db, (fault) => app.log[fault.level]({ err: fault.error }, fault.message))
  const outcomes = { delivered: 0, retrying: 0, failed: 0 }
  // How busy the event loop is: webhook deliveries give way to requests when they keep this node saturated.
  const loop = eventLoopLoad(() => received)
  busy = () => saturatedByRequests(loop())
  const dispatcher = createDispatcher({
    db, site: ctx.site, json: ctx.json, saturated: () => saturatedByRequests(loop()), ...config.webhooks, ...options.webhooks,
    onError: failed('webhook delivery failed'),
    onAttempt: (outcome) => { outcomes[outcome] += 1 },
  })
  app.decorate('webhooks', dispatcher)
  // A write of this process wakes the dispatcher: its deliveries are due at once.
  onWritten(db, (changes, committed) => { if (committed && changes.length > 0) dispatcher.wake() })
  app.addHook('onClose', () => dispatcher.stop())
  app.decorate('eventDocuments', ctx.documents)
  // The fill assembles every event once: none of them is kept in the read cache, which they would only churn
  // (and grow the heap by 70–100 MB of records that the documents now answer for).
  app.decorate('fillEventDocuments', () => ctx.documents.fill(ctx.apiUrl, async (ids) =>
    (await storedEvents(db, ctx.site, ids, false)).flatMap((stored) => eventDocument(ctx, stored) ?? [])))
  const writtenEvents = new Set<number>()
  let appClosed = false
  const fillWritten = (): Promise<boolean> => {
    const ids = [...writtenEvents]
    writtenEvents.clear()
    return ctx.documents.fillEvents(ctx.apiUrl, ids, async (some) =>
      (await storedEvents(db, ctx.site, some, false)).flatMap((stored) => eventDocument(ctx, stored) ?? []))
  }
  if (config.eventDocuments) {
    onWritten(db, (changes, committed) => {
      if (!committed || appClosed) return
      for (const change of changes) {
        if (change.resource === 'event' && change.action !== 'delete' && writtenEvents.size < MAX_WRITTEN_EVENTS) writtenEvents.add(change.id)
      }
    })
  }
  app.decorate('writtenDocuments', { pending: () => writtenEvents.size, run: fillWritten })
  app.addHook('onClose', () => {
    appClosed = true
    writtenEvents.clear()
    return ctx.documents.close()
  })
  if (config.metrics) {
    observe = registerMetrics(app, {
      cache: () => readCacheStats(db), pool: () => poolStats(db),
      webhooks: async () => ({ attempts: outcomes, backlog: await pendingCount(db) }),
    })
  }
  digitsOnlyIds(app)
  registerPreflight(app, spec.document)

  await app.register(swagger, { mode: 'static', specification: { document: asSwaggerDocument(spec.document) } })
  // Helmet's headers (a content security policy, X-Frame-Options: DENY) on the UI's pages only.
  await app.register(async (ui) => {
    await ui.register(helmet, swaggerUiSecurityHeaders(config.publicUrl))
    await ui.register(swaggerUi, {
      routePrefix: `${PREFIX}/ui`,
      // `/ui` (no trailing slash) links its assets by absolute paths: behind PUBLIC_URL's path, if any.
      ...swaggerUiPaths(config.publicUrl),
      ...swaggerUiTheme(),
      // The UI shows the document as /doc serves it (absolute server, requested language), with what
      // Swagger UI needs to try it well (uiDocument).
      transformSpecification: (_document, req) => {
        const language = requestedLanguage(req) ?? config.defaultLanguage
        return uiDocument(servedDocument(spec, base.base, language), texts.catalog.translate(language, 'notSent'))
      },
    })
  })

  const handlers = {
    ...rootHandlers(ctx),
    ...categoryHandlers(ctx),
    ...tagHandlers(ctx),
    ...venueHandlers(ctx),
    ...organizerHandlers(ctx),
    ...eventHandlers(ctx),
    ...occurrenceWriteHandlers(ctx),
    ...occurrenceHandlers(ctx),
    ...changeHandlers(ctx),
    ...webhookHandlers(ctx),
  } satisfies Handlers
  // Glue checks the contract against the OpenAPI meta-schema: with the one the build compiled, not compiled again.
  usePrecompiledMetaValidator()
  await app.register(openapiGlue, {
    // Validation as handlers read requests: the text forms of query strings and forms are converted first.
    specification: typedDocument(spec.document),
    serviceHandlers: handlers,
    securityHandlers,
    prefix: PREFIX,
  })
  return app
}
