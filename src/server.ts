/**
 * Runs the API: reads the configuration, opens and migrates the database, listens, and on SIGTERM or
 * SIGINT stops accepting connections, lets requests in flight finish, then closes the database.
 */
import { buildApp } from './app.js'
import { ConfigError, loadConfig } from './config.js'
import { openDatabase } from './db/database.js'
import { scheduleRetention } from './retention.js'

async function main(): Promise<void> {
  const config = loadConfig()
  const database = await openDatabase(config.databaseUrl, { poolSize: config.databasePoolSize })
  const app = await buildApp({ db: database.db, config })
  const stopRetention = scheduleRetention(database.db, () => new Date(), config.changesRetentionDays,
    (error) => app.log.error({ err: error }, 'pruning the change log failed'))
  let closing = false
  const shutdown = (signal: string) => {
    if (closing) return
    closing = true
    app.log.info({ signal }, 'draining')
    stopRetention()
    app.close()
      .then(() => database.close())
      .then(() => process.exit(0))
      .catch((error: unknown) => {
        app.log.error({ err: error }, 'shutdown failed')
        process.exit(1)
      })
  }
  process.on('SIGTERM', () => shutdown('SIGTERM'))
  process.on('SIGINT', () => shutdown('SIGINT'))
  await app.listen({ host: config.host, port: config.port })
  if (config.logLevel === 'silent') {
    process.stdout.write(`listening on ${config.publicUrl}/calendar/events/v1\n`)
  }
}

main().catch((error: unknown) => {
  process.stderr.write(`${error instanceof ConfigError ? error.message : error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`)
  process.exit(1)
})
