/**
 * `build(t)`: a fresh app over a migrated `:memory:` database with a pinned clock, closed on teardown.
 * Its `inject` checks every response against the contract (see contract.ts) before returning it; a
 * compressed answer is decoded first (its `body` and `json()` are then the decoded ones, `rawPayload`
 * the bytes as sent).
 */
import { createRequire } from 'node:module'
import { dirname, join } from 'node:path'
import { pathToFileURL } from 'node:url'
import { brotliDecompressSync, gunzipSync, inflateSync } from 'node:zlib'
import type { Test } from 'tap'
import type { InjectOptions, LightMyRequestResponse } from 'fastify'
import { buildApp, type AppOptions } from '../../src/app.js'
import { defaultConfig, type Config } from '../../src/config.js'
import { openDatabase, openSqlite, type LoggedStatement } from '../../src/db/database.js'
import { createCompilers } from '../../src/http/compilers.js'
import { generateKey, type Role } from '../../src/lib/api-keys.js'
import { createUserWithKey } from '../../src/repositories/users.js'
import { withTransaction } from '../../src/db/unit-of-work.js'
import { contractProblems, SPEC } from './contract.js'
import { freshDatabaseUrl, migratedSqliteImage } from './database.js'

export const API = '/calendar/events/v1'
export const BASE_URL = 'http://calendar.test'
export const API_URL = `${BASE_URL}${API}`
/** The pinned "now" of every test: Monday 15 June 2026, 12:00 UTC. */
export const NOW = new Date('2026-06-15T12:00:00Z')

const compilers = createCompilers()
const ready = rememberGlueParses()

/**
 * fastify-openapi-glue validates, clones and dereferences the whole document each time an app is built
 * (about two thirds of a build's time, and a test file builds dozens): within a test process the same
 * document object is parsed once, and each build gets its own copy of the result. Test-only: the server
 * builds its app once. If the library's parser is not where this expects, builds parse as before.
 */
function rememberGlueParses(): Promise<void> {
  const require = createRequire(import.meta.url)
  const file = join(dirname(require.resolve('fastify-openapi-glue')), 'lib', 'Parser.js')
  type Parse = (specification: unknown, options?: object) => Promise<unknown>
  const loaded = import(pathToFileURL(file).href) as Promise<{ Parser?: { prototype: { parse?: Parse } } }>
  return loaded.then(({ Parser }) => {
    const parse = Parser?.prototype.parse
    if (Parser === undefined || parse === undefined) return
    const parsed = new WeakMap<object, Map<string, Promise<unknown>>>()
    Parser.prototype.parse = function (this: unknown, specification: unknown, options: object = {}): Promise<unknown> {
      if (typeof specification !== 'object' || specification === null) return parse.call(this, specification, options)
      let byOptions = parsed.get(specification)
      if (byOptions === undefined) parsed.set(specification, byOptions = new Map())
      const key = JSON.stringify(options)
      let result = byOptions.get(key)
      if (result === undefined) byOptions.set(key, result = parse.call(this, specification, options))
      return result.then((config) => structuredClone(config))
    }
  }, () => undefined)
}

export interface BuildOptions {
  config?: Partial<Config>
  now?: Date
  /** A clock the test moves (wins over `now`). */
  clock?: () => Date
  /** SQLite whatever the engine under test (for tests of SQLite's own mechanics, which read `sqlite`). */
  sqlite?: boolean
  /** The webhook dispatcher's clock and timeout. */
  webhooks?: AppOptions['webhooks']
  /** Where log lines go. */
  logStream?: AppOptions['logStream']
  /** SQLite: a file instead of memory, so that a second handle can open the database (`url`). */
  file?: string
}

export type Injected = LightMyRequestResponse & { json<T = Record<string, unknown>>(): T }

export async function build(t: Test, options: BuildOptions = {}) {
  await ready
  const config = defaultConfig({ publicUrl: BASE_URL, ...options.config })
  const url = options.sqlite === true ? ':memory:' : await freshDatabaseUrl(t, options.file)
  // A `:memory:` database starts as a copy of one migrated once per process (database.ts `migratedSqliteImage`).
  const image = url === ':memory:' ? await migratedSqliteImage() : undefined
  const handle = options.sqlite === true ? await openSqlite(url, undefined, undefined, { image }) : await openDatabase(url, { sqliteImage: image })
  const now = options.now ?? NOW
  const app = await buildApp({
    db: handle.db, config, now: options.clock ?? (() => now), spec: SPEC, compilers,
    ...(options.webhooks !== undefined ? { webhooks: options.webhooks } : {}),
    ...(options.logStream !== undefined ? { logStream: options.logStream } : {}),
  })
  t.teardown(async () => {
    await app.close()
    await handle.close()
  })

  async function inject(request: InjectOptions & { url: string }): Promise<Injected> {
    const res = decoded(await app.inject(request))
    const problems = contractProblems(request.method ?? 'GET', request.url, res)
    if (problems.length > 0) t.fail(`response breaks the contract: ${request.method ?? 'GET'} ${request.url}`, { problems, body: res.body.slice(0, 500) })
    return res as Injected
  }

  /** Creates a user with `role` and returns the Authorization header of its new key. */
  async function auth(role: Role, name?: string): Promise<{ authorization: string }> {
    const key = generateKey()
    await withTransaction(handle.db, (trx) => createUserWithKey(trx, role, key, '2026-01-01 00:00:00', name))
    return { authorization: `Bearer ${key}` }
  }

  /** SQLite's raw connection (for tests built with `sqlite: true`). */
  const sqlite = () => {
    if (handle.sqlite === undefined) throw new Error('this test reads SQLite itself: build it with { sqlite: true }')
    return handle.sqlite
  }

  return { app, db: handle.db, url, sqlite, engine: handle.engine, config, inject, auth }
}

export type Built = Awaited<ReturnType<typeof build>>

/** A second app of its own on the database at `url`, every statement it sends logged in `statements`. */
export async function loggedApp(t: Test, url: string) {
  const statements: LoggedStatement[] = []
  const logged = await openDatabase(url, { log: (statement) => statements.push(statement) })
  t.teardown(() => logged.close())
  const app = await buildApp({ db: logged.db, config: defaultConfig({ publicUrl: BASE_URL }), now: () => NOW, spec: SPEC, compilers: createCompilers() })
  t.teardown(() => app.close())
  return { statements, app }
}

/** The answer with its body decoded from its `Content-Encoding` (unchanged when none, or when it has no body: HEAD, 304). */
export function decoded(res: LightMyRequestResponse): LightMyRequestResponse {
  const coding = res.headers['content-encoding']
  const decode = coding === 'br' ? brotliDecompressSync : coding === 'gzip' ? gunzipSync : coding === 'deflate' ? inflateSync : undefined
  if (decode === undefined || res.rawPayload.length === 0) return res
  const text = decode(res.rawPayload).toString('utf8')
  Object.defineProperty(res, 'body', { value: text, configurable: true })
  Object.defineProperty(res, 'payload', { value: text, configurable: true })
  Object.defineProperty(res, 'json', { value: () => JSON.parse(text) as unknown, configurable: true })
  return res
}
