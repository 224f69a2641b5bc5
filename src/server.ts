/**
 * Runs the API: reads the configuration, opens and migrates the database, listens, and on SIGTERM or
 * SIGINT stops accepting connections, lets requests in flight finish (each answered with
 * `Connection: close`) and webhook attempts in flight finish, then closes the database. It runs the
 * webhook dispatcher and the horizon job of recurring series (horizon.ts) from the moment it listens. A start that fails for a reason of the configuration
 * (a DATABASE_URL that is no SQLite database, a HOST that cannot be listened on) says which variable and
 * value, in one line, without a stack trace.
 */
import { flushCompileCache } from 'node:module'
import { buildApp } from './app.js'
import { ConfigError, loadConfig } from './config.js'
import { startCheckpointer } from './db/checkpointer.js'
import { onWritten } from './db/unit-of-work.js'
import { isPostgresUrl, onDatabaseFault, openDatabase, shownUrl, type DatabaseHandle, type OpenOptions } from './db/database.js'
import { DatabaseFileLost, isDatabaseUnavailable } from './db/faults.js'
import { scheduleHorizon, type HorizonSchedule } from './horizon.js'
import { pruneExpired, scheduleRetention } from './retention.js'

/** How long after listening the background fill of event documents begins. */
const FILL_DELAY_MS = 1000
/** How long after a fill failed (the database could not serve) it begins again. */
const FILL_RETRY_MS = 10_000
/**
 * How long after this process's last write of events their missing documents are stored (app.ts `writtenDocuments`):
 * off the request path, where every list showing them would otherwise assemble them at its first read. Restarted by
 * each write, so a steady stream of writes leaves them to the reads (which offer them as before).
 */
const FILL_AFTER_WRITES_MS = 1000
/** How long after retention's pruning met a database that could not serve it runs again (else the next hour). */
const RETENTION_RETRY_MS = 60_000
/** How long after the horizon job met a database that could not serve it runs again (else the next day). */
const HORIZON_RETRY_MS = 60_000

async function main(): Promise<void> {
  const config = loadConfig()
  const database = await openOrExplain(config.databaseUrl, {
    poolSize: config.databasePoolSize, timeoutMs: config.databaseTimeoutMs, sqliteCacheMb: config.sqliteCacheMb, sqliteMmapMb: config.sqliteMmapMb,
  })
  const app = await buildApp({ db: database.db, config })
  // SQLite in a file: its WAL copied back by a thread of its own (db/checkpointer.ts).
  const checkpoints = database.engine === 'sqlite' && config.databaseUrl !== ':memory:'
    ? startCheckpointer(config.databaseUrl, { onError: (error) => app.log.warn({ err: error }, 'a background checkpoint failed') })
    : undefined
  // Nothing more is written to a lost file, the checkpoints' copies included.
  onDatabaseFault(database.db, (fault) => { if (fault.error instanceof DatabaseFileLost) void checkpoints?.stop() })
  const retention = { changesDays: config.changesRetentionDays, idempotencyHours: config.idempotencyHours }
  let retryRetention: NodeJS.Timeout | undefined
  const stopRetention = scheduleRetention(database.db, () => new Date(), retention, (error) => {
    if (!isDatabaseUnavailable(error)) {
      app.log.error({ err: error }, 'pruning the change log or the idempotency keys failed')
      return
    }
    app.log.warn({ err: error }, 'pruning the change log or the idempotency keys failed: the database cannot serve, tried again in a minute')
    retryRetention ??= setTimeout(() => {
      retryRetention = undefined
      if (!closing) void pruneExpired(database.db, new Date(), retention)
        .catch((again: unknown) => app.log.warn({ err: again }, 'pruning failed again; tried at the next hour'))
    }, RETENTION_RETRY_MS)
    retryRetention.unref()
  })
  let retryHorizon: NodeJS.Timeout | undefined
  let horizon: HorizonSchedule | undefined
  let closing = false
  const shutdown = (signal: string) => {
    if (closing) return
    closing = true
    app.log.info({ signal }, 'draining')
    stopRetention()
    clearTimeout(retryRetention)
    clearTimeout(retryHorizon)
    // Webhook attempts in flight finish (or give their deliveries back) while requests drain; the horizon job
    // stops at its next series.
    Promise.all([app.drainConnections(), app.webhooks.stop(), horizon?.stop()])
      .then(() => app.close())
      .then(() => checkpoints?.stop())
      .then(() => database.close())
      .then(() => process.exit(0))
      .catch((error: unknown) => {
        app.log.error({ err: error }, 'shutdown failed')
        process.exit(1)
      })
  }
  process.on('SIGTERM', () => shutdown('SIGTERM'))
  process.on('SIGINT', () => shutdown('SIGINT'))
  try {
    await app.listen({ host: config.host, port: config.port })
  } catch (error) {
    await app.close().catch(() => undefined)
    await checkpoints?.stop()
    await database.close()
    throw new ConfigError(`cannot listen on HOST=${config.host} PORT=${config.port}: ${reason(error)}`)
  }
  app.webhooks.start()
  // The horizon of unbounded series (CONTRACT §17): now and once a day, on every node; a run that met a
  // database that could not serve runs again a minute later (the series it did not reach wait for it).
  horizon = scheduleHorizon(database.db, {
    now: () => new Date(),
    days: config.recurrenceHorizonDays,
    onDone: (run) => { if (run.series > 0) app.log.info({ horizon: run.horizon, series: run.series, occurrences: run.occurrences, lost: run.lost }, 'recurring series extended to the horizon') },
    onError: (error) => {
      if (!isDatabaseUnavailable(error)) {
        app.log.error({ err: error }, 'moving the horizon of recurring series failed')
        return
      }
      app.log.warn({ err: error }, 'moving the horizon of recurring series failed: the database cannot serve, tried again in a minute')
      retryHorizon ??= setTimeout(() => {
        retryHorizon = undefined
        if (!closing) void horizon?.runNow()
      }, HORIZON_RETRY_MS)
      retryHorizon.unref()
    },
  })
  // The event documents missing for this public URL (a new database, a bulk load, another PUBLIC_URL),
  // stored in the background, a second after listening: its first batch (which compiles the record
  // serializers) does not hold up the first answers. Errors are logged by the store itself.
  // A fill that met a database that could not serve begins again later, until one pass is done.
  const fill = (): void => {
    if (closing) return
    void app.fillEventDocuments().then((done) => { if (!done) setTimeout(fill, FILL_RETRY_MS).unref() })
  }
  setTimeout(fill, FILL_DELAY_MS).unref()
  let afterWrites: NodeJS.Timeout | undefined
  onWritten(database.db, (changes, committed) => {
    if (!committed || closing || app.writtenDocuments.pending() === 0) return
    if (afterWrites === undefined) {
      afterWrites = setTimeout(() => {
        afterWrites = undefined
        if (!closing) void app.writtenDocuments.run()
      }, FILL_AFTER_WRITES_MS).unref()
    } else afterWrites.refresh()
  })
  // The code compiled to start, kept for the next start when the entry turned Node's compile cache on
  // (scripts/bundle.ts; nothing otherwise): written now rather than at exit, which a killed process never reaches.
  setTimeout(() => flushCompileCache(), FILL_DELAY_MS).unref()
  if (config.logLevel === 'silent') {
    process.stdout.write(`listening on ${app.publicUrl}/calendar/events/v1\n`)
  }
}

/** Opens the database, or says which DATABASE_URL could not be opened and why. */
async function openOrExplain(url: string, options: OpenOptions): Promise<DatabaseHandle> {
  try {
    return await openDatabase(url, options)
  } catch (error) {
    if (!isPostgresUrl(url)) throw new ConfigError(`DATABASE_URL=${url} cannot be opened as an SQLite database: ${reason(error)}`)
    throw new ConfigError(`DATABASE_URL=${shownUrl(url)} cannot be opened as a PostgreSQL database: ${reason(error)}`)
  }
}

function reason(error: unknown): string {
  if (!(error instanceof Error)) return String(error)
  const code = 'code' in error && typeof error.code === 'string' && !error.message.startsWith(error.code) ? `${error.code}: ` : ''
  return `${code}${error.message}`
}

main().catch((error: unknown) => {
  process.stderr.write(`${error instanceof ConfigError ? error.message : error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`)
  process.exit(1)
})
