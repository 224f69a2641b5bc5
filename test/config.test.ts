/**
 * `loadConfig` (CONTRACT §11): the defaults, each variable's accepted forms, and the error naming the
 * variable for each bad value.
 */
import t, { type Test } from 'tap'
import { ConfigError, defaultConfig, loadConfig, type Config } from '../src/config.js'

function failure(env: Record<string, string>): unknown {
  try {
    loadConfig(env)
  } catch (error) {
    return error
  }
  return undefined
}

function expectError(t: Test, env: Record<string, string>, message: string): void {
  const error = failure(env)
  t.ok(error instanceof ConfigError, `${JSON.stringify(env)} is refused with a ConfigError`)
  t.equal(error instanceof Error ? error.message : undefined, message)
}

t.test('defaults', async (t) => {
  const config = loadConfig({})
  t.strictSame(config, {
    host: '127.0.0.1',
    port: 3000,
    databaseUrl: './data/calendar.db',
    logLevel: 'info',
    publicUrl: 'http://127.0.0.1:3000',
    timezone: 'UTC',
    defaultLanguage: 'en',
    extensions: new Set(),
    geofenceKm: 40.2,
    cacheEntries: 1000,
    eventDocuments: true,
    changesRetentionDays: 30,
    idempotencyHours: 24,
    databasePoolSize: 10,
    databaseTimeoutMs: 5000,
    sqliteCacheMb: 16,
    sqliteMmapMb: 0,
    publicUrlSet: false,
    connections: { headersTimeoutMs: 10_000, requestTimeoutMs: 30_000, keepAliveTimeoutMs: 5_000, maxConnections: 1_000, shutdownTimeoutMs: 10_000 },
    logFormat: 'json',
    metrics: false,
    authFailureLimit: 30,
    rateLimit: 0,
    trustProxy: false,
    icalMaxEvents: 2000,
    recurrenceHorizonDays: 1826,
    webhooks: { retrySchedule: [5000, 30_000, 120_000, 600_000, 3_600_000, 21_600_000, 86_400_000], disableAfter: 10, allowPrivate: false },
  } satisfies Config)
  t.equal(config.extensions.size, 0, 'no extension is on by default')
})

t.test('empty and blank variables count as unset', async (t) => {
  const blank = loadConfig({
    HOST: '', PORT: ' ', DATABASE_URL: '', LOG_LEVEL: '', PUBLIC_URL: '  ', CALENDAR_TIMEZONE: '',
    CALENDAR_DEFAULT_LANGUAGE: '', CALENDAR_EXTENSIONS: '', CALENDAR_GEOFENCE_KM: '', CALENDAR_CACHE_ENTRIES: '',
    CALENDAR_CHANGES_RETENTION_DAYS: '', DATABASE_POOL_SIZE: '', CALENDAR_DATABASE_TIMEOUT_MS: '',
    CALENDAR_HEADERS_TIMEOUT_MS: '', CALENDAR_REQUEST_TIMEOUT_MS: ' ', CALENDAR_KEEP_ALIVE_TIMEOUT_MS: '', CALENDAR_MAX_CONNECTIONS: '',
    CALENDAR_SHUTDOWN_TIMEOUT_MS: '', CALENDAR_LOG_FORMAT: '', CALENDAR_METRICS: '', CALENDAR_AUTH_FAILURE_LIMIT: '',
    CALENDAR_RATE_LIMIT: '', CALENDAR_TRUST_PROXY: '', CALENDAR_ICAL_MAX_EVENTS: '', CALENDAR_RECURRENCE_HORIZON_DAYS: '', CALENDAR_WEBHOOK_RETRY_SCHEDULE: ' ', CALENDAR_WEBHOOK_DISABLE_AFTER: '',
    CALENDAR_WEBHOOK_ALLOW_PRIVATE: '', CALENDAR_SQLITE_CACHE_MB: '', CALENDAR_SQLITE_MMAP_MB: ' ',
  })
  t.strictSame(blank, loadConfig({}))
})

t.test('every variable is read', async (t) => {
  const config = loadConfig({
    HOST: '0.0.0.0',
    PORT: '8080',
    DATABASE_URL: '/var/lib/calendar/db.sqlite',
    LOG_LEVEL: 'warn',
    PUBLIC_URL: 'https://calendar.example.org',
    CALENDAR_TIMEZONE: 'Europe/Vienna',
    CALENDAR_DEFAULT_LANGUAGE: 'ch-fr',
    CALENDAR_EXTENSIONS: 'geoloc',
    CALENDAR_GEOFENCE_KM: '12.5',
    CALENDAR_CACHE_ENTRIES: '0',
    CALENDAR_EVENT_DOCUMENTS: 'false',
    CALENDAR_CHANGES_RETENTION_DAYS: '7',
    DATABASE_POOL_SIZE: '25',
    CALENDAR_SQLITE_CACHE_MB: '4',
    CALENDAR_SQLITE_MMAP_MB: '2047',
    CALENDAR_HEADERS_TIMEOUT_MS: '2000',
    CALENDAR_REQUEST_TIMEOUT_MS: '4000',
    CALENDAR_DATABASE_TIMEOUT_MS: '3000',
    CALENDAR_KEEP_ALIVE_TIMEOUT_MS: '1000',
    CALENDAR_MAX_CONNECTIONS: '50',
    CALENDAR_SHUTDOWN_TIMEOUT_MS: '0',
    CALENDAR_LOG_FORMAT: 'pretty',
    CALENDAR_METRICS: 'true',
    CALENDAR_AUTH_FAILURE_LIMIT: '0',
    CALENDAR_RATE_LIMIT: '600',
    CALENDAR_TRUST_PROXY: '10.0.0.0/8, 127.0.0.1',
    CALENDAR_ICAL_MAX_EVENTS: '500',
    CALENDAR_RECURRENCE_HORIZON_DAYS: '365',
    CALENDAR_IDEMPOTENCY_HOURS: '48',
    CALENDAR_WEBHOOK_RETRY_SCHEDULE: '250ms, 1s,2m,3h,1d',
    CALENDAR_WEBHOOK_DISABLE_AFTER: '3',
    CALENDAR_WEBHOOK_ALLOW_PRIVATE: 'true',
  })
  t.strictSame(config, {
    host: '0.0.0.0',
    port: 8080,
    databaseUrl: '/var/lib/calendar/db.sqlite',
    logLevel: 'warn',
    publicUrl: 'https://calendar.example.org',
    timezone: 'Europe/Vienna',
    defaultLanguage: 'ch-fr',
    extensions: new Set(['geoloc']),
    geofenceKm: 12.5,
    cacheEntries: 0,
    eventDocuments: false,
    changesRetentionDays: 7,
    idempotencyHours: 48,
    databasePoolSize: 25,
    databaseTimeoutMs: 3000,
    sqliteCacheMb: 4,
    sqliteMmapMb: 2047,
    publicUrlSet: true,
    connections: { headersTimeoutMs: 2000, requestTimeoutMs: 4000, keepAliveTimeoutMs: 1000, maxConnections: 50, shutdownTimeoutMs: 0 },
    logFormat: 'pretty',
    metrics: true,
    authFailureLimit: 0,
    rateLimit: 600,
    trustProxy: '10.0.0.0/8,127.0.0.1',
    icalMaxEvents: 500,
    recurrenceHorizonDays: 365,
    webhooks: { retrySchedule: [250, 1000, 120_000, 10_800_000, 86_400_000], disableAfter: 3, allowPrivate: true },
  } satisfies Config)
})

t.test('PUBLIC_URL defaults to http://HOST:PORT', async (t) => {
  t.equal(loadConfig({ HOST: 'calendar.local', PORT: '8080' }).publicUrl, 'http://calendar.local:8080')
  t.equal(loadConfig({ HOST: '::1', PORT: '4000' }).publicUrl, 'http://[::1]:4000', 'IPv6 hosts are bracketed')
  t.equal(loadConfig({ PORT: '80', PUBLIC_URL: 'http://example.org' }).publicUrl, 'http://example.org', 'an explicit PUBLIC_URL wins')
})

t.test('PUBLIC_URL is kept without a trailing slash', async (t) => {
  t.equal(loadConfig({ PUBLIC_URL: 'https://example.org/' }).publicUrl, 'https://example.org')
  t.equal(loadConfig({ PUBLIC_URL: 'https://example.org:8443/api/' }).publicUrl, 'https://example.org:8443/api')
  t.equal(loadConfig({ PUBLIC_URL: 'http://EXAMPLE.org//' }).publicUrl, 'http://example.org')
})

t.test('a bad PUBLIC_URL is refused', async (t) => {
  for (const value of ['example.org', '/calendar', 'ftp://example.org', 'mailto:x@example.org', 'http://']) {
    expectError(t, { PUBLIC_URL: value }, `PUBLIC_URL must be an absolute http(s) URL, got ${value}`)
  }
})

t.test('PORT accepts 0 to 65535 only', async (t) => {
  t.equal(loadConfig({ PORT: '0' }).port, 0)
  t.equal(loadConfig({ PORT: '65535' }).port, 65535)
  t.equal(loadConfig({ PORT: ' 8080 ' }).port, 8080)
  for (const value of ['65536', '-1', '80.5', 'http', '1e3', '0x50', '3000abc']) {
    expectError(t, { PORT: value }, `PORT must be an integer from 0 to 65535, got ${value}`)
  }
})

t.test('LOG_LEVEL is a pino level', async (t) => {
  for (const level of ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']) t.equal(loadConfig({ LOG_LEVEL: level }).logLevel, level)
  for (const value of ['verbose', 'INFO', 'warning']) {
    expectError(t, { LOG_LEVEL: value }, 'LOG_LEVEL must be one of fatal, error, warn, info, debug, trace, silent')
  }
})

t.test('CALENDAR_CACHE_ENTRIES is an integer from 0 to 1000000', async (t) => {
  t.equal(loadConfig({ CALENDAR_CACHE_ENTRIES: '250' }).cacheEntries, 250)
  t.equal(loadConfig({ CALENDAR_CACHE_ENTRIES: '1000000' }).cacheEntries, 1_000_000)
  for (const value of ['-1', '1.5', 'lots', '1e3', '1000001']) {
    expectError(t, { CALENDAR_CACHE_ENTRIES: value }, `CALENDAR_CACHE_ENTRIES must be an integer from 0 to 1000000, got ${value}`)
  }
})

t.test('CALENDAR_TIMEZONE is a tz database name', async (t) => {
  t.equal(loadConfig({ CALENDAR_TIMEZONE: 'America/New_York' }).timezone, 'America/New_York')
  for (const value of ['Mars/Olympus_Mons', 'Europe/Vienn', 'GMT+25']) {
    expectError(t, { CALENDAR_TIMEZONE: value }, `CALENDAR_TIMEZONE is not a known time zone: ${value}`)
  }
})

t.test('CALENDAR_DEFAULT_LANGUAGE is one of the six codes, case-sensitive', async (t) => {
  for (const language of ['at', 'en', 'de', 'es', 'ch-fr', 'ch-de'] as const) {
    t.equal(loadConfig({ CALENDAR_DEFAULT_LANGUAGE: language }).defaultLanguage, language)
  }
  for (const value of ['fr', 'EN', 'de-AT', 'ch']) {
    expectError(t, { CALENDAR_DEFAULT_LANGUAGE: value }, 'CALENDAR_DEFAULT_LANGUAGE must be one of at, en, de, es, ch-fr, ch-de')
  }
})

t.test('CALENDAR_EXTENSIONS is a comma list of known extensions', async (t) => {
  t.strictSame(loadConfig({ CALENDAR_EXTENSIONS: 'geoloc' }).extensions, new Set(['geoloc']))
  t.strictSame(loadConfig({ CALENDAR_EXTENSIONS: ' geoloc , ,geoloc' }).extensions, new Set(['geoloc']))
  expectError(t, { CALENDAR_EXTENSIONS: 'geoloc,tickets' }, 'CALENDAR_EXTENSIONS: unknown extension "tickets" (known: geoloc)')
  expectError(t, { CALENDAR_EXTENSIONS: 'GEOLOC' }, 'CALENDAR_EXTENSIONS: unknown extension "GEOLOC" (known: geoloc)')
})

t.test('CALENDAR_GEOFENCE_KM is a positive number', async (t) => {
  t.equal(loadConfig({ CALENDAR_GEOFENCE_KM: '100' }).geofenceKm, 100)
  t.equal(loadConfig({ CALENDAR_GEOFENCE_KM: '0.5' }).geofenceKm, 0.5)
  for (const value of ['0', '-5', 'far', 'Infinity', 'NaN', '10km']) {
    expectError(t, { CALENDAR_GEOFENCE_KM: value }, `CALENDAR_GEOFENCE_KM must be a positive number, got ${value}`)
  }
})

t.test('DATABASE_URL is a file path or :memory:', async (t) => {
  t.equal(loadConfig({ DATABASE_URL: ':memory:' }).databaseUrl, ':memory:')
  t.equal(loadConfig({ DATABASE_URL: 'data/other.db' }).databaseUrl, 'data/other.db')
})

t.test('loadConfig reads process.env when given nothing', async (t) => {
  const saved = process.env.CALENDAR_GEOFENCE_KM
  t.teardown(() => {
    if (saved === undefined) delete process.env.CALENDAR_GEOFENCE_KM
    else process.env.CALENDAR_GEOFENCE_KM = saved
  })
  process.env.CALENDAR_GEOFENCE_KM = '7'
  t.equal(loadConfig().geofenceKm, 7)
})

t.test('defaultConfig has the same defaults, an in-memory database and no logs', async (t) => {
  t.strictSame(defaultConfig(), { ...loadConfig({}), databaseUrl: ':memory:', logLevel: 'silent' })
  t.equal(defaultConfig({ timezone: 'Europe/Vienna' }).timezone, 'Europe/Vienna')
})

t.test('CALENDAR_CHANGES_RETENTION_DAYS takes a number of days above 0', async (t) => {
  t.equal(loadConfig({ CALENDAR_CHANGES_RETENTION_DAYS: '0.5' }).changesRetentionDays, 0.5)
  t.equal(loadConfig({ CALENDAR_CHANGES_RETENTION_DAYS: '365' }).changesRetentionDays, 365)
  for (const value of ['0', '-1', 'week', '1e3', '36501']) {
    expectError(t, { CALENDAR_CHANGES_RETENTION_DAYS: value }, `CALENDAR_CHANGES_RETENTION_DAYS must be a number of days above 0 and at most 36500, got ${value}`)
  }
})

t.test('DATABASE_POOL_SIZE takes 1 to 1000 connections', async (t) => {
  t.equal(loadConfig({ DATABASE_POOL_SIZE: '1' }).databasePoolSize, 1)
  for (const value of ['0', '-1', 'many', '2.5', '1001']) {
    expectError(t, { DATABASE_POOL_SIZE: value }, `DATABASE_POOL_SIZE must be an integer from 1 to 1000, got ${value}`)
  }
})

t.test('SQLite\'s page cache and memory map are sizes in MB within what SQLite takes', async (t) => {
  t.equal(loadConfig({ CALENDAR_SQLITE_CACHE_MB: '1' }).sqliteCacheMb, 1)
  t.equal(loadConfig({ CALENDAR_SQLITE_MMAP_MB: '2047' }).sqliteMmapMb, 2047, 'the most SQLite\'s build maps')
  for (const value of ['0', '-1', 'big', '2.5', '65537']) {
    expectError(t, { CALENDAR_SQLITE_CACHE_MB: value }, `CALENDAR_SQLITE_CACHE_MB must be an integer from 1 to 65536, got ${value}`)
  }
  for (const value of ['-1', 'all', '0.5', '2048']) {
    expectError(t, { CALENDAR_SQLITE_MMAP_MB: value }, `CALENDAR_SQLITE_MMAP_MB must be an integer from 0 to 2047, got ${value}`)
  }
})

t.test('CALENDAR_DATABASE_TIMEOUT_MS is below CALENDAR_REQUEST_TIMEOUT_MS', async (t) => {
  t.equal(loadConfig({}).databaseTimeoutMs, 5000, 'five seconds by default')
  t.equal(loadConfig({ CALENDAR_DATABASE_TIMEOUT_MS: '250' }).databaseTimeoutMs, 250)
  t.equal(loadConfig({ CALENDAR_HEADERS_TIMEOUT_MS: '1000', CALENDAR_REQUEST_TIMEOUT_MS: '2000' }).databaseTimeoutMs, 1999, 'unset, below a shorter request timeout')
  expectError(t, { CALENDAR_DATABASE_TIMEOUT_MS: '30000' }, 'CALENDAR_DATABASE_TIMEOUT_MS (30000) must be below CALENDAR_REQUEST_TIMEOUT_MS (30000)')
  expectError(t, { CALENDAR_DATABASE_TIMEOUT_MS: '5000', CALENDAR_HEADERS_TIMEOUT_MS: '1000', CALENDAR_REQUEST_TIMEOUT_MS: '4000' }, 'CALENDAR_DATABASE_TIMEOUT_MS (5000) must be below CALENDAR_REQUEST_TIMEOUT_MS (4000)')
  for (const value of ['0', '-1', 'soon', '2.5']) {
    expectError(t, { CALENDAR_DATABASE_TIMEOUT_MS: value }, `CALENDAR_DATABASE_TIMEOUT_MS must be an integer from 1 to 3600000, got ${value}`)
  }
})

t.test('connection limits are integers in range; headers never wait longer than the whole request', async (t) => {
  for (const name of ['CALENDAR_HEADERS_TIMEOUT_MS', 'CALENDAR_REQUEST_TIMEOUT_MS', 'CALENDAR_KEEP_ALIVE_TIMEOUT_MS', 'CALENDAR_MAX_CONNECTIONS']) {
    for (const value of ['0', '-1', '1.5', 'ten', '99999999999']) {
      t.throws(() => loadConfig({ [name]: value }), new RegExp(`^${name} must be an integer`), `${name}=${value}`)
    }
  }
  t.throws(() => loadConfig({ CALENDAR_HEADERS_TIMEOUT_MS: '5000', CALENDAR_REQUEST_TIMEOUT_MS: '1000' }), /must not exceed/)
  t.equal(loadConfig({ CALENDAR_SHUTDOWN_TIMEOUT_MS: '0' }).connections.shutdownTimeoutMs, 0)
})

t.test('CALENDAR_TRUST_PROXY, CALENDAR_METRICS, the limits and CALENDAR_LOG_FORMAT are checked', async (t) => {
  t.equal(loadConfig({ CALENDAR_TRUST_PROXY: 'true' }).trustProxy, true)
  t.equal(loadConfig({ CALENDAR_TRUST_PROXY: 'FALSE' }).trustProxy, false)
  t.equal(loadConfig({ CALENDAR_TRUST_PROXY: '2' }).trustProxy, 2, 'a number of hops')
  t.equal(loadConfig({ CALENDAR_TRUST_PROXY: '::1,fd00::/8' }).trustProxy, '::1,fd00::/8')
  t.throws(() => loadConfig({ CALENDAR_TRUST_PROXY: 'proxy.example.org' }), /^CALENDAR_TRUST_PROXY/)
  t.throws(() => loadConfig({ CALENDAR_TRUST_PROXY: '0' }), /^CALENDAR_TRUST_PROXY/)
  t.equal(loadConfig({ CALENDAR_METRICS: '1' }).metrics, true)
  t.throws(() => loadConfig({ CALENDAR_METRICS: 'yes please' }), /^CALENDAR_METRICS/)
  t.throws(() => loadConfig({ CALENDAR_AUTH_FAILURE_LIMIT: '-1' }), /^CALENDAR_AUTH_FAILURE_LIMIT/)
  t.throws(() => loadConfig({ CALENDAR_RATE_LIMIT: 'many' }), /^CALENDAR_RATE_LIMIT/)
  t.throws(() => loadConfig({ CALENDAR_LOG_FORMAT: 'xml' }), /^CALENDAR_LOG_FORMAT/)
})

t.test('CALENDAR_RECURRENCE_HORIZON_DAYS is a positive number of days', async (t) => {
  t.equal(loadConfig({ CALENDAR_RECURRENCE_HORIZON_DAYS: '1' }).recurrenceHorizonDays, 1)
  t.throws(() => loadConfig({ CALENDAR_RECURRENCE_HORIZON_DAYS: '0' }), /^CALENDAR_RECURRENCE_HORIZON_DAYS must be an integer from 1 to 36600, got 0/)
  t.throws(() => loadConfig({ CALENDAR_RECURRENCE_HORIZON_DAYS: '36601' }), /^CALENDAR_RECURRENCE_HORIZON_DAYS/)
})

t.test('CALENDAR_ICAL_MAX_EVENTS is a positive integer', async (t) => {
  t.equal(loadConfig({ CALENDAR_ICAL_MAX_EVENTS: '1' }).icalMaxEvents, 1)
  t.throws(() => loadConfig({ CALENDAR_ICAL_MAX_EVENTS: '0' }), /^CALENDAR_ICAL_MAX_EVENTS must be an integer from 1 to 100000, got 0/)
  t.throws(() => loadConfig({ CALENDAR_ICAL_MAX_EVENTS: 'all' }), /^CALENDAR_ICAL_MAX_EVENTS/)
  t.throws(() => loadConfig({ CALENDAR_ICAL_MAX_EVENTS: '100001' }), /^CALENDAR_ICAL_MAX_EVENTS/)
})

t.test('CALENDAR_IDEMPOTENCY_HOURS is a whole number of hours from 1 to a year', async (t) => {
  t.equal(loadConfig({ CALENDAR_IDEMPOTENCY_HOURS: '1' }).idempotencyHours, 1)
  t.equal(loadConfig({ CALENDAR_IDEMPOTENCY_HOURS: '8760' }).idempotencyHours, 8760)
  for (const bad of ['0', '1.5', 'a day', '8761', '-1']) {
    t.throws(() => loadConfig({ CALENDAR_IDEMPOTENCY_HOURS: bad }), /^CALENDAR_IDEMPOTENCY_HOURS must be an integer from 1 to 8760/, bad)
  }
})

t.test('the webhook variables are checked, naming the variable', async (t) => {
  for (const bad of ['5', '5x', '1s,,2s', '8d', '-1s', Array(21).fill('1s').join(',')]) {
    t.throws(() => loadConfig({ CALENDAR_WEBHOOK_RETRY_SCHEDULE: bad }), /^CALENDAR_WEBHOOK_RETRY_SCHEDULE must be/, bad)
  }
  t.throws(() => loadConfig({ CALENDAR_WEBHOOK_DISABLE_AFTER: '0' }), /^CALENDAR_WEBHOOK_DISABLE_AFTER must be an integer from 1/)
  t.throws(() => loadConfig({ CALENDAR_WEBHOOK_ALLOW_PRIVATE: 'yes' }), /^CALENDAR_WEBHOOK_ALLOW_PRIVATE must be true or false/)
  t.same(loadConfig({ CALENDAR_WEBHOOK_RETRY_SCHEDULE: '1s,2s,4s' }).webhooks.retrySchedule, [1000, 2000, 4000])
})
