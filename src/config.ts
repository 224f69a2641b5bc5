/**
 * The only reader of `process.env`. Everything else receives a `Config` as an argument, which is what
 * lets each test build an app with its own settings and database.
 */
import { canonicalZoneCase, isValidTimezone } from './lib/time-zones.js'
import { LANGUAGES, isLanguage, type Language } from './contract.js'
import { DEFAULT_CACHE_ENTRIES } from './repositories/read-cache.js'
import { DEFAULT_SQLITE_CACHE_MB, DEFAULT_SQLITE_MMAP_MB, MAX_SQLITE_MMAP_MB } from './db/database.js'
import { DEFAULT_RETRY_SCHEDULE, parseRetrySchedule } from './lib/retry-schedule.js'

export const EXTENSIONS = ['geoloc'] as const
export type Extension = (typeof EXTENSIONS)[number]

export interface Config {
  host: string
  port: number
  /** A file path or `:memory:`. */
  databaseUrl: string
  logLevel: string
  /** `{base_url}` of the contract: scheme, host and port, no trailing slash. */
  publicUrl: string
  timezone: string
  defaultLanguage: Language
  extensions: ReadonlySet<Extension>
  geofenceKm: number
  /** Records and list totals remembered until the next change (CALENDAR_CACHE_ENTRIES; 0 turns it off). */
  cacheEntries: number
  /** Anonymous single reads of events answered from documents stored in the database (CALENDAR_EVENT_DOCUMENTS, default true). */
  eventDocuments: boolean
  /** PostgreSQL connections at most per process (DATABASE_POOL_SIZE, default 10). */
  databasePoolSize: number
  /**
   * How long a request waits on the database at most (CALENDAR_DATABASE_TIMEOUT_MS, default 5000, below
   * CALENDAR_REQUEST_TIMEOUT_MS): a lock held elsewhere, a busy file, a full pool, a statement. Past it the
   * request is answered 503 and its unit of work rolled back (CONTRACT §18).
   */
  databaseTimeoutMs: number
  /**
   * SQLite's page cache per connection, in MB (CALENDAR_SQLITE_CACHE_MB, default 16, as SQLite's build makes
   * it): the process's own memory.
   */
  sqliteCacheMb: number
  /**
   * How much of the SQLite file is read through a memory map, in MB (CALENDAR_SQLITE_MMAP_MB, default 0: off; at most
   * 2047, SQLite's build allows no more): pages the operating system keeps for the file, not the process's own memory.
   */
  sqliteMmapMb: number
  /** How long the change log keeps its entries (CALENDAR_CHANGES_RETENTION_DAYS, default 30). */
  changesRetentionDays: number
  /** How long an Idempotency-Key and the answer it remembers are kept (CALENDAR_IDEMPOTENCY_HOURS, default 24). */
  idempotencyHours: number
  /** Whether PUBLIC_URL was given; if not and PORT is 0, URLs name the port actually bound. */
  publicUrlSet: boolean
  /** How long the connections of slow or idle clients may last (http/connections.ts). */
  connections: ConnectionLimits
  /** Log lines as JSON (production) or pretty for a terminal (CALENDAR_LOG_FORMAT, `npm run dev`). */
  logFormat: LogFormat
  /** Prometheus metrics at GET /metrics (CALENDAR_METRICS=true). */
  metrics: boolean
  /** Failed authentications per address and minute before 429 (CALENDAR_AUTH_FAILURE_LIMIT, default 30; 0 = off). */
  authFailureLimit: number
  /** Requests per minute per client, by key or else address (CALENDAR_RATE_LIMIT; 0 = off, the default). */
  rateLimit: number
  /** Whether and whom to believe about the client's address in X-Forwarded-For (CALENDAR_TRUST_PROXY). */
  trustProxy: TrustProxy
  /** Events in one iCalendar feed at most (CALENDAR_ICAL_MAX_EVENTS, default 2000; X-Total still counts every match). */
  icalMaxEvents: number
  /**
   * How far ahead a series whose rule has neither COUNT nor UNTIL has occurrences, in days from today
   * (CALENDAR_RECURRENCE_HORIZON_DAYS, default 1826: five years; CONTRACT §17).
   */
  recurrenceHorizonDays: number
  /** Webhook deliveries (CONTRACT §13). */
  webhooks: WebhookSettings
}

export interface WebhookSettings {
  /** Delays before each retry of a failed delivery, in ms (CALENDAR_WEBHOOK_RETRY_SCHEDULE). */
  retrySchedule: number[]
  /** Deliveries given up in a row that disable a subscription (CALENDAR_WEBHOOK_DISABLE_AFTER, default 10). */
  disableAfter: number
  /** Whether receivers on loopback, private and link-local addresses are allowed (CALENDAR_WEBHOOK_ALLOW_PRIVATE). */
  allowPrivate: boolean
}

export type LogFormat = 'json' | 'pretty'

/**
 * Fastify's `trustProxy`: false (the socket's address, the default), true (the left-most address of
 * X-Forwarded-For), a number of proxy hops, or a comma list of proxy addresses and CIDR ranges.
 */
export type TrustProxy = boolean | number | string

export interface ConnectionLimits {
  /** From a connection's first byte to the end of its request headers (CALENDAR_HEADERS_TIMEOUT_MS). */
  headersTimeoutMs: number
  /** From the first byte to the end of the body (CALENDAR_REQUEST_TIMEOUT_MS): a body sent a byte at a time ends here. */
  requestTimeoutMs: number
  /** How long an idle keep-alive connection is kept (CALENDAR_KEEP_ALIVE_TIMEOUT_MS). */
  keepAliveTimeoutMs: number
  /** Open connections at most; more are refused at once (CALENDAR_MAX_CONNECTIONS). */
  maxConnections: number
  /** On SIGTERM, how long requests in flight may take before their connections are cut (CALENDAR_SHUTDOWN_TIMEOUT_MS). */
  shutdownTimeoutMs: number
}

export const DEFAULT_CONNECTION_LIMITS: ConnectionLimits = {
  headersTimeoutMs: 10_000,
  requestTimeoutMs: 30_000,
  keepAliveTimeoutMs: 5_000,
  maxConnections: 1_000,
  shutdownTimeoutMs: 10_000,
}

export class ConfigError extends Error {}

type Env = Record<string, string | undefined>

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']

/** Reads and checks the configuration; a bad value stops the process with a message naming the variable. */
export function loadConfig(env: Env = process.env): Config {
  const host = nonEmpty(env.HOST) ?? '127.0.0.1'
  const port = parsePort(env.PORT)
  const logLevel = nonEmpty(env.LOG_LEVEL) ?? 'info'
  if (!LOG_LEVELS.includes(logLevel)) throw new ConfigError(`LOG_LEVEL must be one of ${LOG_LEVELS.join(', ')}`)
  const zone = nonEmpty(env.CALENDAR_TIMEZONE) ?? 'UTC'
  if (!isValidTimezone(zone)) throw new ConfigError(`CALENDAR_TIMEZONE is not a known time zone: ${zone}`)
  const timezone = canonicalZoneCase(zone)
  const language = nonEmpty(env.CALENDAR_DEFAULT_LANGUAGE) ?? 'en'
  if (!isLanguage(language)) throw new ConfigError(`CALENDAR_DEFAULT_LANGUAGE must be one of ${LANGUAGES.join(', ')}`)
  const connections = parseConnectionLimits(env)
  return {
    host,
    port,
    databaseUrl: nonEmpty(env.DATABASE_URL) ?? './data/calendar.db',
    logLevel,
    publicUrl: parsePublicUrl(env.PUBLIC_URL, host, port),
    timezone,
    defaultLanguage: language,
    extensions: parseExtensions(env.CALENDAR_EXTENSIONS),
    geofenceKm: parseGeofence(env.CALENDAR_GEOFENCE_KM),
    cacheEntries: parseCacheEntries(env.CALENDAR_CACHE_ENTRIES),
    eventDocuments: parseBoolean(env, 'CALENDAR_EVENT_DOCUMENTS', true),
    changesRetentionDays: parseRetentionDays(env.CALENDAR_CHANGES_RETENTION_DAYS),
    idempotencyHours: parseCount(env, 'CALENDAR_IDEMPOTENCY_HOURS', 24, 1, 8760),
    databasePoolSize: parsePoolSize(env.DATABASE_POOL_SIZE),
    databaseTimeoutMs: parseDatabaseTimeout(env, connections.requestTimeoutMs),
    sqliteCacheMb: parseCount(env, 'CALENDAR_SQLITE_CACHE_MB', DEFAULT_SQLITE_CACHE_MB, 1, 65_536),
    sqliteMmapMb: parseCount(env, 'CALENDAR_SQLITE_MMAP_MB', DEFAULT_SQLITE_MMAP_MB, 0, MAX_SQLITE_MMAP_MB),
    publicUrlSet: nonEmpty(env.PUBLIC_URL) !== undefined,
    connections,
    logFormat: parseLogFormat(env.CALENDAR_LOG_FORMAT),
    metrics: parseBoolean(env, 'CALENDAR_METRICS', false),
    authFailureLimit: parseCount(env, 'CALENDAR_AUTH_FAILURE_LIMIT', 30, 0, 1_000_000),
    rateLimit: parseCount(env, 'CALENDAR_RATE_LIMIT', 0, 0, 1_000_000),
    trustProxy: parseTrustProxy(env.CALENDAR_TRUST_PROXY),
    icalMaxEvents: parseCount(env, 'CALENDAR_ICAL_MAX_EVENTS', 2000, 1, 100_000),
    recurrenceHorizonDays: parseCount(env, 'CALENDAR_RECURRENCE_HORIZON_DAYS', 1826, 1, 36_600),
    webhooks: {
      retrySchedule: parseSchedule(env.CALENDAR_WEBHOOK_RETRY_SCHEDULE),
      disableAfter: parseCount(env, 'CALENDAR_WEBHOOK_DISABLE_AFTER', 10, 1, 1_000_000),
      allowPrivate: parseBoolean(env, 'CALENDAR_WEBHOOK_ALLOW_PRIVATE', false),
    },
  }
}

function parseSchedule(value: string | undefined): number[] {
  const raw = nonEmpty(value) ?? DEFAULT_RETRY_SCHEDULE
  const schedule = parseRetrySchedule(raw)
  if (schedule === undefined) {
    throw new ConfigError(`CALENDAR_WEBHOOK_RETRY_SCHEDULE must be a comma list of 1 to 20 delays such as 5s,30s,2m,1h,1d (units ms, s, m, h, d; each at most 7 days), got ${raw}`)
  }
  return schedule
}

function parseLogFormat(value: string | undefined): LogFormat {
  const raw = nonEmpty(value) ?? 'json'
  if (raw !== 'json' && raw !== 'pretty') throw new ConfigError(`CALENDAR_LOG_FORMAT must be json or pretty, got ${raw}`)
  return raw
}

function parseBoolean(env: Env, name: string, fallback: boolean): boolean {
  const raw = nonEmpty(env[name])?.toLowerCase()
  if (raw === undefined) return fallback
  if (raw === 'true' || raw === '1') return true
  if (raw === 'false' || raw === '0') return false
  throw new ConfigError(`${name} must be true or false, got ${raw}`)
}

function parseTrustProxy(value: string | undefined): TrustProxy {
  const raw = nonEmpty(value)
  if (raw === undefined || raw.toLowerCase() === 'false') return false
  if (raw.toLowerCase() === 'true') return true
  if (/^\d+$/.test(raw)) {
    const hops = Number(raw)
    if (hops < 1 || hops > 100) throw new ConfigError(`CALENDAR_TRUST_PROXY: a number of proxy hops must be from 1 to 100, got ${raw}`)
    return hops
  }
  const addresses = raw.split(',').map((a) => a.trim()).filter((a) => a !== '')
  const shape = /^(?:[0-9.]+|[0-9a-fA-F:.]+|loopback|linklocal|uniquelocal)(?:\/\d{1,3})?$/
  const bad = addresses.find((a) => !shape.test(a))
  if (bad !== undefined) throw new ConfigError(`CALENDAR_TRUST_PROXY must be true, false, a number of hops or a comma list of proxy addresses, got ${bad}`)
  return addresses.join(',')
}

function parseConnectionLimits(env: Env): ConnectionLimits {
  const d = DEFAULT_CONNECTION_LIMITS
  const limits: ConnectionLimits = {
    headersTimeoutMs: parseCount(env, 'CALENDAR_HEADERS_TIMEOUT_MS', d.headersTimeoutMs, 1, 3_600_000),
    requestTimeoutMs: parseCount(env, 'CALENDAR_REQUEST_TIMEOUT_MS', d.requestTimeoutMs, 1, 3_600_000),
    keepAliveTimeoutMs: parseCount(env, 'CALENDAR_KEEP_ALIVE_TIMEOUT_MS', d.keepAliveTimeoutMs, 1, 3_600_000),
    maxConnections: parseCount(env, 'CALENDAR_MAX_CONNECTIONS', d.maxConnections, 1, 1_000_000),
    shutdownTimeoutMs: parseCount(env, 'CALENDAR_SHUTDOWN_TIMEOUT_MS', d.shutdownTimeoutMs, 0, 3_600_000),
  }
  if (limits.headersTimeoutMs > limits.requestTimeoutMs) {
    throw new ConfigError(`CALENDAR_HEADERS_TIMEOUT_MS (${limits.headersTimeoutMs}) must not exceed CALENDAR_REQUEST_TIMEOUT_MS (${limits.requestTimeoutMs})`)
  }
  return limits
}

/** The database's bound on a request's wait: below the request's own, so that a request cut by the database is still answered. */
function parseDatabaseTimeout(env: Env, requestTimeoutMs: number): number {
  const timeout = parseCount(env, 'CALENDAR_DATABASE_TIMEOUT_MS', Math.min(5000, requestTimeoutMs - 1), 1, 3_600_000)
  if (timeout >= requestTimeoutMs) {
    throw new ConfigError(`CALENDAR_DATABASE_TIMEOUT_MS (${timeout}) must be below CALENDAR_REQUEST_TIMEOUT_MS (${requestTimeoutMs})`)
  }
  return timeout
}

function parseCount(env: Env, name: string, fallback: number, min: number, max: number): number {
  const raw = nonEmpty(env[name])
  if (raw === undefined) return fallback
  const value = Number(raw)
  if (!/^\d+$/.test(raw) || value < min || value > max) throw new ConfigError(`${name} must be an integer from ${min} to ${max}, got ${raw}`)
  return value
}

/** A configuration for tests and tools, with the same defaults as `loadConfig`. */
export function defaultConfig(overrides: Partial<Config> = {}): Config {
  return { ...loadConfig({}), databaseUrl: ':memory:', logLevel: 'silent', ...overrides }
}

function nonEmpty(value: string | undefined): string | undefined {
  const trimmed = value?.trim()
  return trimmed === undefined || trimmed === '' ? undefined : trimmed
}

function parsePort(value: string | undefined): number {
  const raw = nonEmpty(value)
  if (raw === undefined) return 3000
  const port = Number(raw)
  if (!/^\d+$/.test(raw) || port > 65535) throw new ConfigError(`PORT must be an integer from 0 to 65535, got ${raw}`)
  return port
}

function parsePublicUrl(value: string | undefined, host: string, port: number): string {
  const raw = nonEmpty(value)
  if (raw === undefined) {
    const shown = host.includes(':') ? `[${host}]` : host
    return `http://${shown}:${port}`
  }
  let url: URL
  try {
    url = new URL(raw)
  } catch {
    throw new ConfigError(`PUBLIC_URL must be an absolute http(s) URL, got ${raw}`)
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new ConfigError(`PUBLIC_URL must be an absolute http(s) URL, got ${raw}`)
  }
  return `${url.origin}${url.pathname.replace(/\/+$/, '')}`
}

function parseExtensions(value: string | undefined): ReadonlySet<Extension> {
  const names = (value ?? '').split(',').map((s) => s.trim()).filter((s) => s !== '')
  const known: Extension[] = []
  for (const name of names) {
    const extension = EXTENSIONS.find((e) => e === name)
    if (extension === undefined) throw new ConfigError(`CALENDAR_EXTENSIONS: unknown extension "${name}" (known: ${EXTENSIONS.join(', ')})`)
    known.push(extension)
  }
  return new Set(known)
}

function parseCacheEntries(value: string | undefined): number {
  const raw = nonEmpty(value)
  if (raw === undefined) return DEFAULT_CACHE_ENTRIES
  const entries = Number(raw)
  if (!/^\d+$/.test(raw) || entries > 1_000_000) throw new ConfigError(`CALENDAR_CACHE_ENTRIES must be an integer from 0 to 1000000, got ${raw}`)
  return entries
}

function parseGeofence(value: string | undefined): number {
  const raw = nonEmpty(value)
  if (raw === undefined) return 40.2
  const km = Number(raw)
  if (!Number.isFinite(km) || km <= 0) throw new ConfigError(`CALENDAR_GEOFENCE_KM must be a positive number, got ${raw}`)
  return km
}

function parseRetentionDays(value: string | undefined): number {
  const raw = nonEmpty(value)
  if (raw === undefined) return 30
  const days = Number(raw)
  if (!/^\d+(\.\d+)?$/.test(raw) || days <= 0 || days > 36500) {
    throw new ConfigError(`CALENDAR_CHANGES_RETENTION_DAYS must be a number of days above 0 and at most 36500, got ${raw}`)
  }
  return days
}

function parsePoolSize(value: string | undefined): number {
  const raw = nonEmpty(value)
  if (raw === undefined) return 10
  const size = Number(raw)
  if (!/^\d+$/.test(raw) || size < 1 || size > 1000) throw new ConfigError(`DATABASE_POOL_SIZE must be an integer from 1 to 1000, got ${raw}`)
  return size
}
