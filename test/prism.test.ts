/**
 * A tool nobody here wrote agrees with the server: Stoplight Prism (`prism proxy --errors`) in front of
 * a real server validates every request against the published document (/doc) before passing it on,
 * and every answer after. Through it go the README's story (with curl, as written) and, for every route
 * and method of the route index, a request built from the document's examples (every query parameter
 * with a value, the JSON body and then the form body). Zero request and zero response violations.
 *
 * Prism starts from node_modules/.bin (not npx, whose wrapper leaves the real process behind), on a free
 * port, bounded in time, and is killed on teardown.
 */
import { execFile, spawn, type ChildProcess } from 'node:child_process'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import t from 'tap'
import { buildApp } from '../src/app.js'
import { defaultConfig } from '../src/config.js'
import { openDatabase } from '../src/db/database.js'
import { freePort } from '../scripts/free-port.js'
import { generateKey } from '../src/lib/api-keys.js'
import { createUserWithKey } from '../src/repositories/users.js'
import { withTransaction } from '../src/db/unit-of-work.js'
import { README_API, readmeExamples } from './helpers/readme.js'
import { freshDatabaseUrl } from './helpers/database.js'

const root = new URL('..', import.meta.url).pathname
const PREFIX = '/calendar/events/v1'
const START_TIMEOUT_MS = 90_000

type Json = Record<string, unknown>
const isJson = (value: unknown): value is Json => typeof value === 'object' && value !== null && !Array.isArray(value)

function startPrism(document: string, upstream: string, port: number): Promise<ChildProcess> {
  return new Promise((resolve, reject) => {
    const prism = spawn(join(root, 'node_modules/.bin/prism'), ['proxy', document, upstream, '--errors', '--host', '127.0.0.1', '--port', String(port)], { stdio: ['ignore', 'pipe', 'pipe'] })
    let log = ''
    const timer = setTimeout(() => {
      prism.kill('SIGKILL')
      reject(new Error(`Prism did not start within ${START_TIMEOUT_MS / 1000} s:\n${log.slice(-2000)}`))
    }, START_TIMEOUT_MS)
    const listen = (chunk: Buffer) => {
      log += chunk.toString()
      if (log.includes('Prism is listening')) {
        clearTimeout(timer)
        resolve(prism)
      }
    }
    prism.stdout.on('data', listen)
    prism.stderr.on('data', listen)
    prism.once('exit', (code) => {
      clearTimeout(timer)
      reject(new Error(`Prism exited (${code}) before listening:\n${log.slice(-2000)}`))
    })
  })
}

async function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()))
  child.kill('SIGTERM')
  const timer = setTimeout(() => child.kill('SIGKILL'), 5000)
  await exited
  clearTimeout(timer)
}

t.test('the README and every route of the index, through Prism: zero request and zero response violations', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'prism-'))
  const databaseUrl = await freshDatabaseUrl(t, join(dir, 'calendar.db'))
  const database = await openDatabase(databaseUrl)
  const [port, prismPort] = [await freePort(), await freePort()]
  const base = `http://127.0.0.1:${port}`
  const app = await buildApp({ db: database.db, config: defaultConfig({ port, publicUrl: base, databaseUrl }) })
  await app.listen({ host: '127.0.0.1', port })
  let prism: ChildProcess | undefined
  t.teardown(async () => {
    if (prism !== undefined) await stop(prism)
    await app.close()
    await database.close()
    rmSync(dir, { recursive: true, force: true })
  })
  const doc = await (await fetch(`${base}${PREFIX}/doc`)).json() as Json
  writeFileSync(join(dir, 'openapi.json'), JSON.stringify(doc))
  prism = await startPrism(join(dir, 'openapi.json'), `${base}${PREFIX}`, prismPort)
  const proxy = `http://127.0.0.1:${prismPort}`

  // 1. The README's story, with curl as written, through Prism.
  const mark = '@@PRISM'
  const script = [
    'set -u',
    `curl() { command curl --max-time 20 -w '\\n${mark} %{http_code} [%header{sl-violations}]\\n' "$@"; }`,
    ...readmeExamples().map((block) => block.replaceAll(README_API, proxy)),
  ].join('\n')
  const output = await new Promise<string>((resolve, reject) => {
    execFile('bash', ['-c', script], { cwd: root, env: { ...process.env, DATABASE_URL: databaseUrl }, timeout: 180_000, maxBuffer: 64 * 1024 * 1024 },
      (error, stdout, stderr) => (error !== null ? reject(new Error(`${error.message}\n${stderr}`)) : resolve(stdout)))
  })
  const readme = [...output.matchAll(new RegExp(`${mark} (\\d{3}) \\[(.*)\\]`, 'g'))].map((m) => ({ status: Number(m[1]), violations: m[2] ?? '' }))
  t.ok(readme.length >= 50, `${readme.length} README requests through Prism`)
  const readmeViolations = readme.filter((r) => r.violations !== '' || r.status === 422)
  t.strictSame(readmeViolations, [], 'no violation on the README requests')
  t.notOk(readme.some((r) => r.status >= 500), 'no 5xx (Prism answers 500 on a response violation)')

  // Prism does validate: a request the document forbids never reaches the server.
  const forbidden = await fetch(`${proxy}/tags?hide_empty=maybe`)
  t.equal(forbidden.status, 422, 'Prism refuses hide_empty=maybe itself')
  t.match(await forbidden.text(), /hide_empty/)

  // 2. Every route and method of the route index, with the document's examples.
  const key = generateKey()
  await withTransaction(database.db, (trx) => createUserWithKey(trx, 'editor', key, '2026-01-01 00:00:00', 'prism'))
  const index = await (await fetch(`${base}${PREFIX}`)).json() as { routes: Record<string, { methods: string[] }> }
  const sent: Array<{ request: string; status: number; violations: string }> = []
  for (const [route, { methods }] of Object.entries(index.routes)) {
    const template = route.slice(PREFIX.length) || '/'
    const item = isJson(doc.paths) && isJson(doc.paths[template]) ? doc.paths[template] : {}
    for (const method of methods) {
      const operation = item[method.toLowerCase()]
      if (!isJson(operation)) continue
      const { path, query } = exampleRequest(template, operation, doc)
      const bodies = exampleBodies(operation, doc)
      for (const body of bodies.length === 0 ? [undefined] : bodies) {
        const res = await fetch(`${proxy}${path}${query}`, {
          method,
          headers: { authorization: `Bearer ${key}`, ...(body === undefined ? {} : { 'content-type': body.type }) },
          ...(body === undefined ? {} : { body: body.text }),
        })
        await res.arrayBuffer()
        sent.push({ request: `${method} ${path}${query}${body === undefined ? '' : ` (${body.type})`}`, status: res.status, violations: res.headers.get('sl-violations') ?? '' })
      }
    }
  }
  t.ok(sent.length >= 52 + 29, `${sent.length} route index requests through Prism`)
  t.strictSame(sent.filter((r) => r.violations !== '' || r.status === 422 || r.status >= 500), [], 'no violation on the route index requests')
  t.comment(`Prism: ${readme.length} README requests and ${sent.length} route index requests, answers ${JSON.stringify(countBy([...readme, ...sent].map((r) => r.status)))}`)
})

function countBy(values: number[]): Record<string, number> {
  const out: Record<string, number> = {}
  for (const v of values) out[v] = (out[v] ?? 0) + 1
  return out
}

function resolve(doc: Json, node: unknown): Json {
  if (!isJson(node) || typeof node.$ref !== 'string') return isJson(node) ? node : {}
  let target: unknown = doc
  for (const part of node.$ref.replace(/^#\//, '').split('/')) target = isJson(target) ? target[part] : undefined
  return resolve(doc, target)
}

function exampleValue(parameter: Json): unknown {
  if ('example' in parameter) return parameter.example
  for (const example of Object.values(isJson(parameter.examples) ? parameter.examples : {})) if (isJson(example) && 'value' in example) return example.value
  return undefined
}

/** The path with its parameters' examples, and a query with every query parameter's example. */
function exampleRequest(template: string, operation: Json, doc: Json): { path: string; query: string } {
  let path = template === '/' ? '' : template
  const query = new URLSearchParams()
  for (const raw of Array.isArray(operation.parameters) ? operation.parameters : []) {
    const parameter = resolve(doc, raw)
    const value = exampleValue(parameter)
    if (value === undefined || typeof parameter.name !== 'string') continue
    if (parameter.in === 'path') path = path.replace(`{${parameter.name}}`, encodeURIComponent(String(value)))
    // The extension is off on this server: its parameters are left out (they would be a documented 400).
    if (parameter.in === 'query' && parameter['x-calendar-extension'] === undefined) {
      for (const item of Array.isArray(value) ? value : [value]) query.append(parameter.name, String(item))
    }
  }
  const text = query.toString()
  return { path, query: text === '' ? '' : `?${text}` }
}

function exampleBodies(operation: Json, doc: Json): Array<{ type: string; text: string }> {
  const body = resolve(doc, operation.requestBody)
  const content = isJson(body.content) ? body.content : {}
  const out: Array<{ type: string; text: string }> = []
  const json = content['application/json']
  if (isJson(json) && 'example' in json) out.push({ type: 'application/json', text: JSON.stringify(json.example) })
  const form = content['application/x-www-form-urlencoded']
  if (isJson(form) && isJson(form.example)) {
    out.push({ type: 'application/x-www-form-urlencoded', text: new URLSearchParams(Object.entries(form.example).map(([k, v]): [string, string] => [k, String(v)])).toString() })
  }
  return out
}
