/**
 * API keys: `create --role <role> [--name <label>]` prints only the new key; `list`; `revoke <name>`.
 * Reads the same configuration as the server (DATABASE_URL), and works while the server runs: keys are
 * looked up on every request, so a change takes effect from the next one.
 */
import { ConfigError, loadConfig } from '../src/config.js'
import { openDatabase } from '../src/db/database.js'
import { ROLES, generateKey, isRole } from '../src/lib/api-keys.js'
import { formatUtc } from '../src/lib/dates.js'
import { DuplicateNameError, createUserWithKey, listKeys, revokeKeys } from '../src/repositories/users.js'
import { withTransaction } from '../src/db/unit-of-work.js'

const USAGE = `usage:
  npm run -s api-key -- create --role <${ROLES.join('|')}> [--name <label>]
  npm run -s api-key -- list
  npm run -s api-key -- revoke <name>`

class UsageError extends Error {}

function option(args: string[], name: string): string | undefined {
  const index = args.indexOf(`--${name}`)
  if (index === -1) return undefined
  const value = args[index + 1]
  if (value === undefined || value.startsWith('--')) throw new UsageError(`--${name} needs a value`)
  return value
}

async function main(args: string[]): Promise<void> {
  const [command, ...rest] = args
  if (command === undefined || command === '--help' || command === 'help') {
    process.stdout.write(`${USAGE}\n`)
    return
  }
  if (!['create', 'list', 'revoke'].includes(command)) throw new UsageError(`unknown command "${command}"`)
  const config = loadConfig()
  const database = await openDatabase(config.databaseUrl)
  try {
    const now = formatUtc(new Date())
    if (command === 'create') {
      const role = option(rest, 'role')
      if (!isRole(role)) throw new UsageError(`--role must be one of ${ROLES.join(', ')}`)
      const name = option(rest, 'name')
      if (name !== undefined && name.trim() === '') throw new UsageError('--name must not be empty')
      const key = generateKey()
      await withTransaction(database.db, (trx) => createUserWithKey(trx, role, key, now, name))
      process.stdout.write(`${key}\n`)
    } else if (command === 'list') {
      const keys = await listKeys(database.db)
      if (keys.length === 0) process.stdout.write('no keys\n')
      for (const k of keys) {
        process.stdout.write(`${k.name}\t${k.role}\tuser ${k.user_id}\tcreated ${k.created_at}\t${k.revoked_at === null ? 'active' : `revoked ${k.revoked_at}`}\n`)
      }
    } else {
      const name = rest[0]
      if (name === undefined) throw new UsageError('revoke needs the name of a key')
      const count = await withTransaction(database.db, (trx) => revokeKeys(trx, name, now))
      if (count === 0) throw new UsageError(`no active key named "${name}"`)
      process.stdout.write(`revoked ${name}\n`)
    }
  } finally {
    await database.close()
  }
}

main(process.argv.slice(2)).catch((error: unknown) => {
  const known = error instanceof UsageError || error instanceof ConfigError || error instanceof DuplicateNameError
  process.stderr.write(`${known ? `${error.message}\n${error instanceof UsageError ? USAGE : ''}` : String(error)}\n`)
  process.exit(known ? 2 : 1)
})
