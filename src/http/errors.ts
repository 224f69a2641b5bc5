/**
 * Named errors: what handlers throw when a request cannot be answered with a record (CONTRACT §10). One
 * handler (error-handler.ts) turns each into the error body; nothing else writes errors.
 */
import type { MessageKey, MessageVars } from './messages.js'

export type Resource = 'event' | 'venue' | 'organizer' | 'category' | 'tag'

type Params = Record<string, string> | string[]

export interface ErrorData {
  params?: Params
  details?: Array<Record<string, unknown>>
  /** Contract rules a field broke, as message keys: translated into `params` and `details` when sent. */
  reasons?: Record<string, { key: MessageKey; vars: MessageVars }>
  /** How many more names the request got wrong than `vars.names`, `params` and `details` list. */
  omitted?: number
}

export class ApiError extends Error {
  readonly status: number
  readonly code: string
  readonly messageKey: MessageKey
  readonly vars: MessageVars
  readonly data: ErrorData

  constructor(status: number, code: string, messageKey: MessageKey, vars: MessageVars = {}, data: ErrorData = {}) {
    super(code)
    this.status = status
    this.code = code
    this.messageKey = messageKey
    this.vars = vars
    this.data = data
  }
}

export const notFound = (resource: Resource, id: number | string, by: 'id' | 'slug' = 'id'): ApiError =>
  new ApiError(404, `rest-${resource}-not-found`, by === 'id' ? 'notFoundById' : 'notFoundBySlug', { resource, id: String(id) })

/** An occurrence id that is not in the event's set of occurrences (CONTRACT §17). */
export const occurrenceNotFound = (occurrence: string): ApiError =>
  new ApiError(404, 'rest-event-occurrence-not-found', 'occurrenceNotFound', { id: occurrence })

export const archivePageNotFound = (resource: Resource): ApiError =>
  new ApiError(404, `${resource}-archive-page-not-found`, 'archivePageNotFound', { resource })

export const notAccessible = (resource: Resource): ApiError =>
  new ApiError(403, `${resource}-not-accessible`, 'notAccessible', { resource })

export const inTrash = (resource: Resource): ApiError =>
  new ApiError(410, `${resource}-is-in-trash`, 'inTrash', { resource })

export const forbidden = (status: 401 | 403): ApiError =>
  new ApiError(status, 'rest_forbidden', 'forbidden')

export const preconditionFailed = (): ApiError =>
  new ApiError(412, 'rest-precondition-failed', 'preconditionFailed')

/** Coordinates sent while the `geoloc` extension is off. */
export const geolocInactive = (field: string): ApiError =>
  new ApiError(400, 'geoloc-extension-inactive', 'geolocInactive', { name: field }, { reasons: { [field]: { key: 'geolocInactive', vars: { name: field } } } })

/** A parameter or field that passed the schema but breaks a rule of the contract. */
export const invalidParam = (name: string, key: MessageKey, vars: MessageVars = {}): ApiError =>
  new ApiError(400, 'rest_invalid_param', 'invalidParams', { names: name }, { reasons: { [name]: { key, vars: { name, ...vars } } } })

export const noRoute = (): ApiError => new ApiError(404, 'rest_no_route', 'noRoute')

/** Too many failed authentications from the address, or too many requests from the client (CONTRACT §16). */
/** How long a client is asked to wait before trying again while the database cannot serve (CONTRACT §18). */
export const DATABASE_RETRY_AFTER_SECONDS = 5

/** The database cannot serve now (unreachable, a lock or the pool past the timeout, a full disk, a lost file): nothing was written. */
export const databaseUnavailable = (): ApiError =>
  new ApiError(503, 'rest_database_unavailable', 'databaseUnavailable', { seconds: String(DATABASE_RETRY_AFTER_SECONDS) })

export const tooManyRequests = (retryAfterSeconds: number): ApiError =>
  new ApiError(429, 'rest_too_many_requests', 'tooManyRequests', { seconds: String(retryAfterSeconds) })
