/**
 * What `npm start` runs: the bundle the build makes (dist/bundle/server.js), as a child process over a
 * new database file. It answers the route index, a list, a write without a key, `/doc` in YAML, the
 * Swagger UI and a localized error as the contract says, and stops cleanly on SIGTERM; its text is ASCII
 * (scripts/bundle.ts: V8 keeps it one byte a character). `npm test` builds first; run alone, this test builds
 * if the bundle is missing.
 */
import t from 'tap'
import { execFileSync, spawn } from 'node:child_process'
import { existsSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { contractProblems } from './helpers/contract.js'
import { freePort } from './helpers/net.js'

const ROOT = new URL('..', import.meta.url).pathname
const BUNDLE = join(ROOT, 'dist/bundle/server.js')
const API = '/calendar/events/v1'

t.test('the built server starts, answers as the contract says, and stops on SIGTERM', async (t) => {
  if (!existsSync(BUNDLE)) execFileSync('npm', ['run', '-s', 'build'], { cwd: ROOT, stdio: 'ignore' })
  const port = await freePort()
  const file = join(t.testdir(), 'calendar.db')
  const child = spawn(process.execPath, [BUNDLE], {
    cwd: ROOT,
    env: { ...process.env, DATABASE_URL: file, PORT: String(port), HOST: '127.0.0.1', LOG_LEVEL: 'silent', NODE_OPTIONS: '', NODE_V8_COVERAGE: undefined },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  t.teardown(() => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL')
  })
  let err = ''
  child.stderr.on('data', (chunk: Buffer) => { err += chunk.toString() })
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)))
  await new Promise<void>((resolve, reject) => {
    let out = ''
    const timer = setTimeout(() => reject(new Error(`the server did not listen within 30 s: ${err}`)), 30_000)
    child.stdout.on('data', (chunk: Buffer) => {
      out += chunk.toString()
      if (out.includes('listening on')) {
        clearTimeout(timer)
        resolve()
      }
    })
    void exited.then((code) => {
      clearTimeout(timer)
      reject(new Error(`the server exited before listening (${code}): ${err}`))
    })
  })

  const call = async (method: string, path: string, headers: Record<string, string> = {}, body?: string) => {
    const res = await fetch(`http://127.0.0.1:${port}${API}${path}`, { method, headers, ...(body === undefined ? {} : { body }), signal: AbortSignal.timeout(15_000) })
    const text = await res.text()
    const response = { statusCode: res.status, headers: Object.fromEntries(res.headers), body: text }
    if (!path.startsWith('/ui')) t.same(contractProblems(method, `${API}${path}`, response), [], `${method} ${path} keeps the contract`)
    return response
  }
  t.equal((await call('GET', '')).statusCode, 200, 'the route index')
  const list = await call('GET', '/events?per_page=5')
  t.equal(list.statusCode, 200)
  t.match(JSON.parse(list.body), { events: [], total: 0, total_pages: 0 })
  t.equal((await call('POST', '/events', { 'content-type': 'application/json' }, '{"title":"x"}')).statusCode, 401, 'a write without a key')
  const yaml = await call('GET', '/doc', { accept: 'application/yaml' })
  t.equal(yaml.statusCode, 200)
  t.match(yaml.body, /^openapi: 3\.1/m, '/doc in YAML')
  t.equal((await call('GET', '/ui/')).statusCode, 200, 'Swagger UI')
  const german = await call('GET', '/events?per_page=abc&ml_language=de')
  t.equal(german.statusCode, 400)
  t.match(JSON.parse(german.body), { code: 'rest_invalid_param', message: /Parameter/ }, 'errors in the language asked for')

  child.kill('SIGTERM')
  t.equal(await exited, 0, 'SIGTERM: exits 0')
})

t.test('the bundle is ASCII, so that V8 keeps its source one byte a character (issue 49)', async (t) => {
  if (!existsSync(BUNDLE)) execFileSync('npm', ['run', '-s', 'build'], { cwd: ROOT, stdio: 'ignore' })
  const bytes = readFileSync(join(ROOT, 'dist/bundle/main.js'))
  const at = bytes.findIndex((byte) => byte > 0x7f)
  t.equal(at, -1, at === -1 ? 'no byte past 0x7f' : `a byte past 0x7f at ${at}: ${bytes.subarray(Math.max(0, at - 40), at + 20).toString()}`)
  t.ok(bytes.length > 1_000_000, 'the bundle itself was read')
})
