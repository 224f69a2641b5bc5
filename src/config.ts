/**
 * The only reader of `process.env`. Everything else receives a `Config` as an argument, which is what
 * lets each test build an app with its own settings and database.
 */
import { canonicalZoneCase, isValidTimezone } from './lib/time-zones.js'
import { LANGUAGES, isLanguage, type Language } from './contract.js'
import { DEFAULT_CACHE_ENTRIES } from './repositories/read-cache.js'

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
  }
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
