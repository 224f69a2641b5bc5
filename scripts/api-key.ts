/**
 * API keys: `create --role <role> [--name <label>]` prints only the new key; `list`; `revoke <name>`.
 * Reads the same configuration as the server (DATABASE_URL), and works while the server runs: keys are
 * looked up on every request, so a change takes effect from the next one.
 */
import { existsSync } from 'node:fs'
import { ConfigError, loadConfig } from '../src/config.js'
import { isPostgresUrl, openDatabase, shownUrl } from '../src/db/database.js'
import { faultCause, isDatabaseUnavailable } from '../src/db/faults.js'
import { ROLES, generateKey, isRole } from '../src/lib/api-keys.js'
import { formatUtc } from '../src/lib/dates.js'
import { DuplicateNameError, createUserWithKey, listKeys, revokeKeys } from '../src/repositories/users.js'
import { withTransaction } from '../src/db/unit-of-work.js'

const USAGE = `usage:
  npm run -s api-key -- create --role <${ROLES.join('|')}> [--name <label>]
  npm run -s api-key -- list
  npm run -s api-key -- revoke <name>`

class UsageError extends Error {}

/** The longest name a user may be given (it is shown in `list`, one line per key). */
const MAX_NAME = 100

/** `args` as options (each at most once, each with a value) and positional arguments, checked against what the command takes. */
function parseArgs(args: string[], options: readonly string[], positional: number): { options: Map<string, string>; positional: string[] } {
  const found = new Map<string, string>()
  const rest: string[] = []
  for (let i = 0; i < args.length; i++) {
    const arg = args[i] ?? ''
    if (arg.startsWith('--')) {
      const name = arg.slice(2)
      if (!options.includes(name)) throw new UsageError(`unknown option ${arg}`)
      if (found.has(name)) throw new UsageError(`${arg} is given twice`)
      const value = args[i + 1]
      if (value === undefined || value.startsWith('--')) throw new UsageError(`${arg} needs a value`)
      found.set(name, value)
      i++
    } else {
      if (rest.length >= positional) throw new UsageError(`unexpected argument "${arg.slice(0, 40)}"`)
      rest.push(arg)
    }
  }
  return { options: found, positional: rest }
}

function checkName(name: string, what: string): string {
  if (name.trim() === '') throw new UsageError(`${what} must not be empty`)
  // A tab or a line break would break `list`'s one line per key.
  if (/[\u0000-\u001f\u007f-\u009f]/.test(name)) throw new UsageError(`${what} must not contain control characters (tabs, line breaks)`)
  if ([...name].length > MAX_NAME) throw new UsageError(`${what} must be at most ${MAX_NAME} characters`)
  return name
}

async function main(args: string[]): Promise<void> {
  const [command, ...rest] = args
  if (command === undefined || command === '--help' || command === 'help') {
    process.stdout.write(`${USAGE}\n`)
    return
  }
  if (command !== 'create' && command !== 'list' && command !== 'revoke') throw new UsageError(`unknown command "${command.slice(0, 40)}"`)
  // Every argument is checked before the database is touched: a misuse changes nothing.
  const parsed = command === 'create' ? parseArgs(rest, ['role', 'name'], 0) : parseArgs(rest, [], command === 'revoke' ? 1 : 0)
  const role = parsed.options.get('role')
  const name = parsed.options.get('name')
  if (command === 'create') {
    if (!isRole(role)) throw new UsageError(`--role must be one of ${ROLES.join(', ')}`)
    if (name !== undefined) checkName(name, '--name')
  }
  const target = parsed.positional[0]
  if (command === 'revoke' && target === undefined) throw new UsageError('revoke needs the name of a key')
  const config = loadConfig()
  // Only create may start a database; list and revoke on a mistyped DATABASE_URL create no folder or file.
  if (command !== 'create' && !isPostgresUrl(config.databaseUrl) && config.databaseUrl !== ':memory:' && !existsSync(config.databaseUrl)) {
    throw new ConfigError(`DATABASE_URL=${config.databaseUrl} does not exist (list and revoke create no database)`)
  }
  let database
  try {
    database = await openDatabase(config.databaseUrl, { poolSize: 2, timeoutMs: config.databaseTimeoutMs })
  } catch (error) {
    if (isDatabaseUnavailable(error)) throw waited(config.databaseUrl, config.databaseTimeoutMs, error)
    const engine = isPostgresUrl(config.databaseUrl) ? 'a PostgreSQL' : 'an SQLite'
    throw new ConfigError(`DATABASE_URL=${shownUrl(config.databaseUrl)} cannot be opened as ${engine} database: ${error instanceof Error ? error.message : String(error)}`)
  }
  try {
    const now = formatUtc(new Date())
    if (command === 'create' && isRole(role)) {
      const key = generateKey()
      await withTransaction(database.db, (trx) => createUserWithKey(trx, role, key, now, name))
      process.stdout.write(`${key}\n`)
    } else if (command === 'list') {
      const keys = await listKeys(database.db)
      if (keys.length === 0) process.stdout.write('no keys\n')
      for (const k of keys) {
        process.stdout.write(`${k.name}\t${k.role}\tuser ${k.user_id}\tcreated ${k.created_at}\t${k.revoked_at === null ? 'active' : `revoked ${k.revoked_at}`}\n`)
      }
    } else if (target !== undefined) {
      const count = await withTransaction(database.db, (trx) => revokeKeys(trx, target, now))
      if (count === 0) throw new UsageError(`no active key named "${target.slice(0, MAX_NAME)}"`)
      process.stdout.write(`revoked ${target}\n`)
    }
  } catch (error) {
    if (isDatabaseUnavailable(error)) throw waited(config.databaseUrl, config.databaseTimeoutMs, error)
    throw error
  } finally {
    await database.close()
  }
}

/**
 * The command waits for the database at most CALENDAR_DATABASE_TIMEOUT_MS (CONTRACT §18): a table locked by
 * another connection, a busy SQLite file, a PostgreSQL that does not answer. Past it, it says so and changes nothing.
 */
function waited(url: string, timeoutMs: number, error: unknown): ConfigError {
  return new ConfigError(`waited ${timeoutMs} ms (CALENDAR_DATABASE_TIMEOUT_MS) for the database at DATABASE_URL=${shownUrl(url)}: `
    + `its tables are locked by another connection, or it is busy or cannot be reached (${faultCause(error)}); nothing was changed`)
}

main(process.argv.slice(2)).catch((error: unknown) => {
  const known = error instanceof UsageError || error instanceof ConfigError || error instanceof DuplicateNameError
  process.stderr.write(`${known ? `${error.message}\n${error instanceof UsageError ? USAGE : ''}` : String(error)}\n`)
  process.exit(known ? 2 : 1)
})

