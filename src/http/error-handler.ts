/**
 * The one place that turns any error into the contract's error body (CONTRACT §10):
 * `{ code, message, data: { status, params?, details? } }`, in the language the request asks for.
 */
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import type { Language } from '../contract.js'
import { ApiError, DATABASE_RETRY_AFTER_SECONDS, databaseUnavailable, forbidden, invalidParam, noRoute } from './errors.js'
import { NotModified } from './etag.js'
import { requestedLanguage } from './language.js'
import { sentText } from './query.js'
import { isMessageKey, type Catalog } from './messages.js'
import { isRecord } from '../lib/json.js'

/** The protection space a 401 names: the namespace. */
const REALM = 'calendar/events/v1'

interface AjvIssue {
  instancePath?: string
  keyword?: string
  message?: string
  params?: Record<string, unknown>
  /** The schema the finding is about (Ajv's `verbose`). */
  parentSchema?: unknown
}

/**
 * The most fields an error names: a body with 70,000 unknown keys was answered with 15 MB. Past this, the
 * message says how many more there are, and `params` and `details` list the first ones only.
 */
export const MAX_LISTED = 20

/** The spec names the contract's own message for a rule (a date's or a time zone's `pattern`). */
const RULE_MESSAGE = 'x-calendar-message'

/**
 * Fastify's `frameworkErrors` option: a URL that cannot be decoded (`/events/by-slug/%ff`) is answered
 * before routing, so it would otherwise get Fastify's own body instead of the contract's error body.
 */
export function frameworkErrorHandler(texts: ErrorTexts) {
  return (error: FastifyError, req: FastifyRequest, reply: FastifyReply): FastifyReply => {
    const apiError = error.code === 'FST_ERR_MAX_PARAM_LENGTH' ? noRoute() : toApiError(error, req, texts)
    return send(req, reply, apiError, texts)
  }
}

/** What error bodies are written with: the message catalog and the language when a request names none. */
export interface ErrorTexts {
  defaultLanguage: Language
  catalog: Catalog
  /**
   * Whether an error says the database cannot serve now (db/faults.ts, given by app.ts): answered 503
   * `rest_database_unavailable` with `Retry-After` and logged at warn with its cause, not as a failure of the code.
   */
  databaseUnavailable?: (error: unknown) => boolean
}

/** Registers the error and not-found handlers on the root instance (glue's routes included). */
export function registerErrorHandlers(app: FastifyInstance, texts: ErrorTexts): void {
  app.setNotFoundHandler((req, reply) => send(req, reply, noRoute(), texts))
  app.setErrorHandler((error: FastifyError, req, reply) => {
    if (error instanceof NotModified) return reply.code(304).header('ETag', error.etag).send()
    if (!(error instanceof ApiError) && texts.databaseUnavailable?.(error) === true) {
      req.log.warn({ err: error }, 'the database cannot serve: answered 503')
      return send(req, reply, databaseUnavailable(), texts)
    }
    const apiError = toApiError(error, req, texts)
    if (apiError.status >= 500) req.log.error({ err: error }, 'request failed')
    return send(req, reply, apiError, texts)
  })
}

function send(req: FastifyRequest, reply: FastifyReply, error: ApiError, texts: ErrorTexts): FastifyReply {
  const language = requestedLanguage(req) ?? texts.defaultLanguage
  // Message variables echo what was sent: an id beyond 2^53 as its digits, not the number it became.
  const translate = (lang: Parameters<typeof texts.catalog.translate>[0], key: Parameters<typeof texts.catalog.translate>[1], vars?: Record<string, string>): string =>
    texts.catalog.translate(lang, key, vars === undefined ? vars : Object.fromEntries(Object.entries(vars).map(([k, v]) => [k, sentText(req, v)])))
  const data: Record<string, unknown> = { status: error.status }
  const { params, details, reasons } = error.data
  if (reasons !== undefined) {
    const translated = Object.entries(reasons).map(([field, r]) => [field, translate(language, r.key, r.vars)] as const)
    data.params = Object.fromEntries(translated)
    data.details = translated.map(([field, message]) => ({ field, message }))
  }
  if (params !== undefined) data.params = params
  if (details !== undefined) data.details = details
  // RFC 9110 §11.6.1: a 401 names its scheme; RFC 6750 §3.1: a key that was sent and refused is invalid_token.
  if (error.status === 503) reply.header('Retry-After', String(DATABASE_RETRY_AFTER_SECONDS))
  if (error.status === 401) {
    const sentKey = /^bearer\s/i.test(req.headers.authorization ?? '')
    reply.header('WWW-Authenticate', sentKey ? `Bearer realm="${REALM}", error="invalid_token"` : `Bearer realm="${REALM}"`)
  }
  const omitted = error.data.omitted ?? 0
  let vars = omitted > 0 && error.vars.names !== undefined
    ? { ...error.vars, names: translate(language, 'namesAndMore', { names: error.vars.names, count: String(omitted) }) }
    : error.vars
  // The id as sent: an id past 2^53 became an imprecise number (`1e+23`) on its way to the handler.
  const sentId = req.sentParams?.id
  if (error.messageKey === 'notFoundById' && sentId !== undefined && /^\d+$/.test(sentId)) vars = { ...vars, id: sentId }
  return reply
    .code(error.status)
    .type('application/json; charset=utf-8')
    .send({ code: error.code, message: translate(language, error.messageKey, vars), data })
}

function toApiError(error: FastifyError & { validation?: AjvIssue[]; validationContext?: string; errors?: unknown[] }, req: FastifyRequest, texts: ErrorTexts): ApiError {
  if (error instanceof ApiError) return error
  if (error.validation !== undefined) {
    // Ajv's own texts, in the language served (data.params and data.details).
    texts.catalog.localizeValidation(requestedLanguage(req) ?? texts.defaultLanguage, error.validation)
    return fromValidation(error.validation, error.validationContext ?? 'body', req)
  }
  switch (error.code) {
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return new ApiError(415, 'rest_unsupported_media_type', 'unsupportedMediaType', { type: String(req.headers['content-type'] ?? '') })
    case 'FST_CP_ERR_INVALID_CONTENT_ENCODING':
      // RFC 9110 §15.5.16: 415 also for a content coding the server does not decode.
      return new ApiError(415, 'rest_unsupported_media_type', 'unsupportedContentEncoding', { coding: String(req.headers['content-encoding'] ?? '') })
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return new ApiError(413, 'rest_payload_too_large', 'payloadTooLarge')
    case 'FST_ERR_CTP_INVALID_CONTENT_LENGTH':
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
    case 'FST_ERR_CTP_INVALID_JSON_BODY':
      return new ApiError(400, 'rest_invalid_json', 'invalidJson')
    case 'FST_ERR_BAD_URL':
    case 'FST_ERR_ASYNC_CONSTRAINT':
      return new ApiError(400, 'rest_invalid_param', 'badUrl')
  }
  if (error.name === 'Unauthorized' && Array.isArray(error.errors)) {
    // glue's SecurityError: our security handler threw the ApiError it carries.
    const inner = error.errors.find((e): e is ApiError => e instanceof ApiError)
    return inner ?? forbidden(401)
  }
  const status = typeof error.statusCode === 'number' ? error.statusCode : 500
  if (status >= 400 && status < 500) return new ApiError(status, 'rest_invalid_request', 'invalidRequest')
  return new ApiError(500, 'rest_internal_error', 'internalError')
}

/**
 * Ajv's findings become `rest_invalid_param` with `data.params` naming each field, or
 * `rest_missing_callback_param` listing every missing required body field.
 */
function fromValidation(issues: AjvIssue[], context: string, req: FastifyRequest): ApiError {
  for (const issue of issues) {
    const key = isRecord(issue.parentSchema) ? issue.parentSchema[RULE_MESSAGE] : undefined
    if (issue.keyword === 'pattern' && isMessageKey(key)) return invalidParam(fieldOf(issue, context), key)
  }
  const found = issues.map((issue) => ({
    field: fieldOf(issue, context),
    in: context,
    keyword: issue.keyword ?? 'invalid',
    message: issue.message ?? 'is invalid',
    ...(issue.params !== undefined ? { params: issue.params } : {}),
  }))
  const fields = new Set(found.map((d) => d.field))
  if (context === 'body') {
    // Ajv stops at the first error: name every unknown field, not only the first one it met.
    for (const field of unknownFields(req)) {
      if (fields.has(field)) continue
      fields.add(field)
      if (fields.size <= MAX_LISTED) {
        found.push({ field, in: 'body', keyword: 'additionalProperties', message: 'must NOT have additional properties', params: { additionalProperty: field } })
      }
    }
  }
  // At most MAX_LISTED fields are named, in message, params and details alike; the message counts the rest.
  const listed = new Set([...fields].slice(0, MAX_LISTED))
  const details = found.filter((d) => listed.has(d.field)).slice(0, MAX_LISTED)
  const omitted = fields.size - listed.size
  if (context === 'body' && issues.some((i) => i.keyword === 'required' && (i.instancePath ?? '') === '')) {
    const missing = missingRequired(req)
    if (missing.length > 0) {
      const shown = missing.slice(0, MAX_LISTED)
      return new ApiError(400, 'rest_missing_callback_param', 'missingParams', { names: shown.join(', ') }, { params: shown, details, omitted: missing.length - shown.length })
    }
  }
  // Defined, not assigned: a field may be called `__proto__` (a form body can send one), which an
  // assignment would take as the object's prototype, leaving the field unnamed. Per field, the reason
  // found deepest in it wins: an inline organizer with a bad e-mail is refused for `organizer[0].email`,
  // not because the entry is no integer (the other branch of `oneOf`).
  const params: Record<string, string> = {}
  const depth = new Map<string, number>()
  issues.forEach((issue, i) => {
    const detail = details[i]
    if (detail === undefined) return
    const segments = (issue.instancePath ?? '').split('/').filter((s) => s !== '')
    const known = depth.get(detail.field)
    if (known !== undefined && known >= segments.length) return
    depth.set(detail.field, segments.length)
    const where = segments.slice(1).map((s) => (/^\d+$/.test(s) ? `[${s}]` : `.${s}`)).join('')
    Object.defineProperty(params, detail.field, { value: `${detail.field}${where} ${detail.message}`, enumerable: true, writable: true, configurable: true })
  })
  for (const { field, message } of details) {
    if (!Object.hasOwn(params, field)) Object.defineProperty(params, field, { value: `${field} ${message}`, enumerable: true, writable: true, configurable: true })
  }
  return new ApiError(400, 'rest_invalid_param', 'invalidParams', { names: [...listed].join(', ') }, { params, details, omitted })
}

function fieldOf(issue: AjvIssue, context: string): string {
  const extra = issue.keyword === 'required' ? issue.params?.missingProperty
    : issue.keyword === 'additionalProperties' ? issue.params?.additionalProperty : undefined
  const path = (issue.instancePath ?? '').split('/').filter((s) => s !== '')
  const first = path[0] ?? (typeof extra === 'string' ? extra : undefined)
  if (first !== undefined) return decodeURIComponent(first.replace(/~1/g, '/').replace(/~0/g, '~'))
  return context === 'body' ? 'body' : context
}

/** The JSON schema of the request's body (the same for every media type the route accepts). */
function bodySchemaOf(req: FastifyRequest): Record<string, unknown> | undefined {
  const schema: unknown = req.routeOptions.schema?.body
  const content = isRecord(schema) && isRecord(schema.content) ? Object.values(schema.content)[0] : undefined
  return isRecord(content) && isRecord(content.schema) ? content.schema : undefined
}

/** Every required body field the request lacks (Ajv stops at the first one). */
function missingRequired(req: FastifyRequest): string[] {
  const schema = bodySchemaOf(req)
  const body = req.body
  const required = schema !== undefined && Array.isArray(schema.required) ? schema.required : []
  return required.filter((name): name is string => typeof name === 'string' && !(isRecord(body) && name in body))
}

/** Top-level body fields the schema does not know, when it allows no others. */
function unknownFields(req: FastifyRequest): string[] {
  const schema = bodySchemaOf(req)
  const body = req.body
  if (schema === undefined || schema.additionalProperties !== false || !isRecord(body)) return []
  const properties = isRecord(schema.properties) ? schema.properties : {}
  return Object.keys(body).filter((name) => !Object.hasOwn(properties, name))
}

