/**
 * The api-key command (CONTRACT §6, §11), run for real as a child process over a file database in the
 * test's own directory; its keys are then tried against an app built over the same file.
 */
import { spawn } from 'node:child_process'
import { existsSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import t, { type Test } from 'tap'
import { buildApp } from '../src/app.js'
import { defaultConfig } from '../src/config.js'
import { openDatabase } from '../src/db/database.js'
import { freshDatabaseUrl } from './helpers/database.js'
import { API, BASE_URL } from './helpers/build.js'
import { contractProblems, SPEC } from './helpers/contract.js'
import { TYPESCRIPT } from './helpers/typescript.js'

const ROOT = fileURLToPath(new URL('../', import.meta.url))
const KEY = /^cal_[A-Za-z0-9_-]{43}$/
const CREATED = '\\d{4}-\\d\\d-\\d\\d \\d\\d:\\d\\d:\\d\\d'
const CONFIG_VARIABLES = ['HOST', 'PORT', 'PUBLIC_URL', 'LOG_LEVEL', 'CALENDAR_TIMEZONE', 'CALENDAR_DEFAULT_LANGUAGE', 'CALENDAR_EXTENSIONS', 'CALENDAR_GEOFENCE_KM']

interface Run {
  code: number | null
  stdout: string
  stderr: string
}

/** Runs `api-key <args>` with DATABASE_URL at `file` (and `env` on top); never rejects. */
function apiKey(file: string, args: string[], env: Record<string, string> = {}): Promise<Run> {
  const base: Record<string, string | undefined> = { ...process.env }
  for (const name of CONFIG_VARIABLES) delete base[name]
  // Coverage counts the test processes only (typescript-loader.ts).
  delete base.NODE_V8_COVERAGE
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [...TYPESCRIPT, 'scripts/api-key.ts', ...args], {
      cwd: ROOT,
      env: { ...base, DATABASE_URL: file, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    })
    let stdout = ''
    let stderr = ''
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => { stdout += chunk })
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => { stderr += chunk })
    child.on('error', reject)
    child.on('close', (code) => resolve({ code, stdout, stderr }))
  })
}

async function createKey(t: Test, file: string, role: string, name: string): Promise<string> {
  const run = await apiKey(file, ['create', '--role', role, '--name', name])
  t.equal(run.code, 0, `create ${name}`)
  return run.stdout.trim()
}

/** An app over the same database file, as a running server would have it. */
async function appOver(t: Test, file: string) {
  const handle = await openDatabase(file)
  const app = await buildApp({ db: handle.db, config: defaultConfig({ publicUrl: BASE_URL, databaseUrl: file }), spec: SPEC })
  t.teardown(async () => {
    await app.close()
    await handle.close()
  })
  /** Creates a category with `key`; returns the status (the response is checked against the contract). */
  const createCategory = async (key: string, name: string): Promise<number> => {
    const url = `${API}/categories`
    const res = await app.inject({ method: 'POST', url, headers: { authorization: `Bearer ${key}` }, payload: { name } })
    t.strictSame(contractProblems('POST', url, res), [], `POST ${url} keeps to the contract`)
    return res.statusCode
  }
  return { handle, createCategory }
}

// Each test has its own database file: they can run side by side (each spawns the command a few times).
t.jobs = 4

async function databaseIn(t: Test): Promise<string> {
  return freshDatabaseUrl(t, join(t.testdir(), 'data', 'calendar.db'))
}

t.test('create prints only the new key, which then works', async (t) => {
  const file = await databaseIn(t)
  const run = await apiKey(file, ['create', '--role', 'editor', '--name', 'x'])
  t.equal(run.code, 0)
  t.equal(run.stderr, '')
  t.match(run.stdout, /^[^\n]*\n$/, 'exactly one line')
  const key = run.stdout.trim()
  t.match(key, KEY)
  const { createCategory } = await appOver(t, file)
  t.equal(await createCategory(key, 'Rock'), 201)
})

t.test('each create makes a new user with its own key, of any of the five roles', async (t) => {
  const file = await databaseIn(t)
  const keys = []
  for (const role of ['administrator', 'editor', 'author', 'contributor']) keys.push(await createKey(t, file, role, `k-${role}`))
  const unnamed = await apiKey(file, ['create', '--role', 'subscriber'])
  t.equal(unnamed.code, 0)
  keys.push(unnamed.stdout.trim())
  for (const key of keys) t.match(key, KEY)
  t.equal(new Set(keys).size, 5, 'every key is new')
  const list = await apiKey(file, ['list'])
  t.match(list.stdout, new RegExp(`^(?:[^\t\n]+\t[a-z]+\tuser \\d\tcreated ${CREATED}\tactive\n){5}$`))
  t.strictSame(list.stdout.trim().split('\n').map((line) => line.split('\t').slice(0, 3)), [
    ['k-administrator', 'administrator', 'user 1'],
    ['k-editor', 'editor', 'user 2'],
    ['k-author', 'author', 'user 3'],
    ['k-contributor', 'contributor', 'user 4'],
    ['subscriber-5', 'subscriber', 'user 5'],
  ], 'without --name the user is named after its role and id')
})

t.test('create without a role, or with a bad one, exits 2 with a message and creates nothing', async (t) => {
  const file = await databaseIn(t)
  const roles = '--role must be one of administrator, editor, author, contributor, subscriber'
  const cases = [
    { args: ['create', '--name', 'x'], message: roles },
    { args: ['create', '--role', 'Editor'], message: roles },
    { args: ['create', '--role', '--name', 'x'], message: '--role needs a value' },
    { args: ['create', '--role', 'editor', '--name', ' '], message: '--name must not be empty' },
  ]
  for (const { args, message } of cases) {
    const run = await apiKey(file, args)
    t.equal(run.code, 2, args.join(' '))
    t.equal(run.stdout, '', 'no key is printed')
    t.match(run.stderr, message)
    t.match(run.stderr, 'usage:')
  }
  t.notOk(existsSync(file), 'not even a database was created')
})

t.test('create with a name already taken exits 2 and keeps the first key', async (t) => {
  const file = await databaseIn(t)
  const key = await createKey(t, file, 'editor', 'x')
  const run = await apiKey(file, ['create', '--role', 'administrator', '--name', 'x'])
  t.equal(run.code, 2)
  t.equal(run.stdout, '')
  t.equal(run.stderr.trim(), 'a key named "x" already exists')
  const { createCategory } = await appOver(t, file)
  t.equal(await createCategory(key, 'Rock'), 201)
})

t.test('list shows name, role, user id and status, and never a key', async (t) => {
  const file = await databaseIn(t)
  const keys = [await createKey(t, file, 'editor', 'x'), await createKey(t, file, 'subscriber', 'reader')]
  t.equal((await apiKey(file, ['revoke', 'reader'])).code, 0)
  const list = await apiKey(file, ['list'])
  t.equal(list.code, 0)
  t.equal(list.stderr, '')
  t.match(list.stdout, new RegExp(`^x\teditor\tuser 1\tcreated ${CREATED}\tactive\nreader\tsubscriber\tuser 2\tcreated ${CREATED}\trevoked ${CREATED}\n$`))
  for (const key of keys) {
    t.notOk(list.stdout.includes(key.slice(4, 16)), 'no part of a key is listed')
  }
  const again = await apiKey(file, ['revoke', 'reader'])
  t.equal(again.code, 2, 'a revoked key cannot be revoked again')
  t.match(again.stderr, 'no active key named "reader"')
})

t.test('revoke stops the key from the next request of a running app', async (t) => {
  const file = await databaseIn(t)
  const { createCategory } = await appOver(t, file)
  const key = await createKey(t, file, 'editor', 'x')
  const other = await createKey(t, file, 'editor', 'y')
  t.equal(await createCategory(key, 'Rock'), 201, 'a key created while the app runs works at once')
  const run = await apiKey(file, ['revoke', 'x'])
  t.equal(run.code, 0)
  t.equal(run.stdout, 'revoked x\n')
  t.equal(run.stderr, '')
  t.equal(await createCategory(key, 'Jazz'), 401, 'the revoked key is refused')
  t.equal(await createCategory(other, 'Jazz'), 201, 'other keys keep working')
})

t.test('revoke of an unknown name, or of none, exits 2', async (t) => {
  const file = await databaseIn(t)
  await createKey(t, file, 'editor', 'someone')
  const unknown = await apiKey(file, ['revoke', 'nope'])
  t.equal(unknown.code, 2)
  t.equal(unknown.stdout, '')
  t.match(unknown.stderr, 'no active key named "nope"')
  const missing = await apiKey(file, ['revoke'])
  t.equal(missing.code, 2)
  t.match(missing.stderr, 'revoke needs the name of a key')
})

t.test('keys are stored hashed', async (t) => {
  const file = await databaseIn(t)
  const key = await createKey(t, file, 'editor', 'x')
  const handle = await openDatabase(file)
  t.teardown(() => handle.close())
  const keys = await handle.db.selectFrom('api_keys').selectAll().execute()
  const users = await handle.db.selectFrom('users').selectAll().execute()
  t.equal(keys.length, 1)
  t.equal(users.length, 1)
  const stored = JSON.stringify([keys, users])
  t.notOk(stored.includes(key), 'the key is not stored')
  t.notOk(stored.includes(key.slice(4)), 'nor its secret part')
  for (let i = 4; i + 8 <= key.length; i += 4) t.notOk(stored.includes(key.slice(i, i + 8)), `nor any piece of it (${i})`)
  const row = keys[0] as Record<string, unknown>
  t.match(row.key_hash, /^[0-9a-f]{64}$/, 'a 256-bit digest')
})

t.test('no command prints the usage; an unknown command exits 2', async (t) => {
  const file = await databaseIn(t)
  for (const args of [[]]) {
    const run = await apiKey(file, args)
    t.equal(run.code, 0, `api-key ${args.join(' ')}`)
    t.match(run.stdout, /^usage:\n {2}npm run -s api-key -- create --role <administrator\|editor\|author\|contributor\|subscriber> \[--name <label>\]\n {2}npm run -s api-key -- list\n {2}npm run -s api-key -- revoke <name>\n$/)
  }
  const unknown = await apiKey(file, ['frobnicate'])
  t.equal(unknown.code, 2)
  t.equal(unknown.stdout, '')
  t.match(unknown.stderr, 'unknown command "frobnicate"')
  t.match(unknown.stderr, 'usage:')
})

t.test('a bad configuration exits 2 naming the variable', async (t) => {
  const file = await databaseIn(t)
  const run = await apiKey(file, ['create', '--role', 'editor'], { CALENDAR_TIMEZONE: 'Mars/Olympus_Mons' })
  t.equal(run.code, 2)
  t.equal(run.stdout, '')
  t.match(run.stderr, 'CALENDAR_TIMEZONE is not a known time zone: Mars/Olympus_Mons')
})

t.test('create without --name picks a free name, even after a name like editor-10 was given by hand', async (t) => {
  const file = await databaseIn(t)
  await createKey(t, file, 'editor', 'editor-2')
  const first = await apiKey(file, ['create', '--role', 'editor'])
  t.equal(first.code, 0, first.stderr)
  const second = await apiKey(file, ['create', '--role', 'editor'])
  t.equal(second.code, 0, `a second one too: ${second.stderr}`)
  const list = await apiKey(file, ['list'])
  const names = list.stdout.trim().split('\n').map((line) => line.split('\t')[0])
  t.equal(new Set(names).size, 3, `three distinct names: ${names.join(', ')}`)
})

t.test('every misuse exits 2 with a message and changes nothing: repeated flags, stray arguments, bad names', async (t) => {
  const file = await databaseIn(t)
  const cases: Array<[string[], string | RegExp]> = [
    [['create', '--role', 'editor', '--role', 'author'], '--role is given twice'],
    [['create', '--role', 'editor', '--name', 'a', '--name', 'b'], '--name is given twice'],
    [['create', '--role', 'editor', 'stray'], 'unexpected argument "stray"'],
    [['create', '--role', 'editor', '--colour', 'red'], 'unknown option --colour'],
    [['create', '--role', 'editor', '--name', 'tab\there'], '--name must not contain control characters'],
    [['create', '--role', 'editor', '--name', 'line\nbreak'], '--name must not contain control characters'],
    [['create', '--role', 'editor', '--name', 'x'.repeat(5000)], '--name must be at most 100 characters'],
    [['list', 'extra'], 'unexpected argument "extra"'],
    [['list', '--role', 'editor'], 'unknown option --role'],
    [['revoke'], 'revoke needs the name of a key'],
    [['revoke', 'a', 'b'], 'unexpected argument "b"'],
  ]
  for (const [args, message] of cases) {
    const run = await apiKey(file, args)
    t.equal(run.code, 2, args.join(' ').slice(0, 60))
    t.equal(run.stdout, '', 'nothing printed on stdout')
    t.match(run.stderr, message)
  }
  t.notOk(existsSync(file), 'not even a database was created')
})

t.test('list and revoke on a DATABASE_URL that does not exist create nothing', async (t) => {
  const dir = t.testdir()
  const missing = join(dir, 'no-such-folder', 'calendar.db')
  for (const args of [['list'], ['revoke', 'x']]) {
    const run = await apiKey(missing, args)
    t.equal(run.code, 2, args.join(' '))
    t.match(run.stderr, `DATABASE_URL=${missing} does not exist`)
  }
  t.notOk(existsSync(join(dir, 'no-such-folder')), 'no folder was created')
})
