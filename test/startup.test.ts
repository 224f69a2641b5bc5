/**
 * Starting the server (issue 19 items 12, 13): a start that fails for a reason of the configuration
 * names the variable and its value in one line, without a stack trace; with PORT=0 and no PUBLIC_URL
 * every URL names the port actually bound.
 */
import { spawn } from 'node:child_process'
import { mkdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import t from 'tap'
import { contractProblems } from './helpers/contract.js'
import { editorKey } from './helpers/server.js'
import { TYPESCRIPT } from './helpers/typescript.js'

const ROOT = new URL('..', import.meta.url).pathname

interface Run { code: number | null; stdout: string; stderr: string }

/** Runs src/server.ts with `env` until it exits (bounded), or until `stop` says so on its output. */
function run(env: Record<string, string>, stop?: (stdout: string) => boolean): Promise<Run & { kill(): void }> {
  const child = spawn(process.execPath, [...TYPESCRIPT, 'src/server.ts'], {
    cwd: ROOT,
    env: { ...process.env, LOG_LEVEL: 'silent', NODE_OPTIONS: '', NODE_V8_COVERAGE: undefined, PUBLIC_URL: '', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  let stdout = ''
  let stderr = ''
  const kill = () => child.kill('SIGKILL')
  return new Promise((resolve) => {
    const timer = setTimeout(() => { kill() }, 30_000)
    child.stdout.on('data', (chunk: Buffer) => {
      stdout += chunk.toString()
      if (stop?.(stdout) === true) {
        clearTimeout(timer)
        resolve({ code: null, stdout, stderr, kill })
      }
    })
    child.stderr.on('data', (chunk: Buffer) => { stderr += chunk.toString() })
    child.once('exit', (code) => {
      clearTimeout(timer)
      resolve({ code, stdout, stderr, kill })
    })
  })
}

t.test('a DATABASE_URL that is no SQLite database, or a HOST that cannot be listened on, is named without a stack', async (t) => {
  const dir = t.testdir()
  const text = join(dir, 'notes.txt')
  writeFileSync(text, 'These are notes, not a database. '.repeat(10))
  const folder = join(dir, 'folder')
  mkdirSync(folder)
  const cases: Array<[Record<string, string>, RegExp]> = [
    [{ DATABASE_URL: text, PORT: '0' }, new RegExp(`^DATABASE_URL=${text} cannot be opened as an SQLite database: .*not a database\\n$`)],
    [{ DATABASE_URL: folder, PORT: '0' }, new RegExp(`^DATABASE_URL=${folder} cannot be opened as an SQLite database: .+\\n$`)],
    [{ DATABASE_URL: '/dev/null/calendar.db', PORT: '0' }, /^DATABASE_URL=\/dev\/null\/calendar\.db cannot be opened as an SQLite database: .+\n$/],
    [{ DATABASE_URL: ':memory:', HOST: 'bad', PORT: '0' }, /^cannot listen on HOST=bad PORT=0: .+\n$/],
  ]
  for (const [env, message] of cases) {
    const result = await run(env)
    t.equal(result.code, 1, `${JSON.stringify(env)}: exit 1`)
    t.match(result.stderr, message, `${JSON.stringify(env)}: ${result.stderr}`)
    t.notMatch(result.stderr, /\n\s+at /, 'no stack trace')
  }
})

t.test('PORT=0 without PUBLIC_URL: the start line, rest_url, /doc and the route index name the bound port', async (t) => {
  const file = join(t.testdir(), 'calendar.db')
  const key = await editorKey(file)
  const server = await run({ DATABASE_URL: file, PORT: '0', HOST: '127.0.0.1' }, (out) => out.includes('\n'))
  t.teardown(server.kill)
  const match = /^listening on http:\/\/127\.0\.0\.1:(\d+)\/calendar\/events\/v1\n/.exec(server.stdout)
  t.ok(match, `start line: ${server.stdout}`)
  const port = Number(match?.[1])
  t.ok(port > 0, `bound port ${port}`)
  const api = `http://127.0.0.1:${port}/calendar/events/v1`
  const get = async (path: string, init: RequestInit = {}) => {
    const res = await fetch(`${api}${path}`, { ...init, signal: AbortSignal.timeout(10_000) })
    const body = await res.text()
    t.same(contractProblems(init.method ?? 'GET', `/calendar/events/v1${path}`, { statusCode: res.status, headers: Object.fromEntries(res.headers), body }), [])
    return { status: res.status, body: JSON.parse(body) as Record<string, unknown> }
  }
  const created = await get('/categories', { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: '{"name":"Rock"}' })
  t.equal(created.status, 201)
  t.equal(created.body.rest_url, `${api}/categories/1`)
  const doc = await get('/doc')
  const servers = doc.body.servers
  t.equal(Array.isArray(servers) ? servers.length : 0, 1, 'one server')
  t.match(servers, [{ url: api }])
  const index = await get('/')
  t.match(JSON.stringify(index.body._links), `${api}`)
  t.notMatch(JSON.stringify(index.body), ':0/', 'no URL names port 0')
})
