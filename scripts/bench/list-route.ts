/**
 * Issue 49's random filtered lists over a socket, the app in this process (the replay's cold lists are taken only
 * by requests on a socket: `series-lists.ts` sends them through `inject`, which passes the replay by). The seeded
 * `random-filter` requests of scripts/bench/scenarios.ts are sent by a client in a process of its own (10 keep-alive
 * connections) to an app on a copy of a database the benchmark kept (its event documents are those of the benchmark's
 * public URL, so none is filled again); the server's CPU a request (this process), its collections, and how many
 * lists the replay answered cold are printed. `--src DIR` runs the app of another tree (an export of main), the same
 * requests; `--profile FILE` writes a CPU profile of the measured requests.
 *
 * CLI: node --import tsx scripts/bench/list-route.ts --file DB [--src DIR] [--requests 3000] [--warm 1500]
 *      [--connections 10] [--seed 20261125] [--profile FILE.cpuprofile]
 */
import { spawn } from 'node:child_process'
import { copyFileSync, rmSync, writeFileSync } from 'node:fs'
import type { AddressInfo } from 'node:net'
import { Session } from 'node:inspector/promises'
import { PerformanceObserver } from 'node:perf_hooks'
import { resolve } from 'node:path'
import { realScenarios, sampleData } from './scenarios.js'

const argv = process.argv.slice(2)
const opt = (name: string): string | undefined => {
  const i = argv.indexOf(`--${name}`)
  return i < 0 ? undefined : argv[i + 1]
}
const source = opt('file')
if (source === undefined) throw new Error('--file DB')
const src = resolve(opt('src') ?? new URL('../../src', import.meta.url).pathname)
const requests = Number(opt('requests') ?? 3000)
const warm = Number(opt('warm') ?? 1500)
const connections = Number(opt('connections') ?? 10)
const seed = Number(opt('seed') ?? 20261125)
const profile = opt('profile')

const file = `/tmp/list-route-${process.pid}.db`
copyFileSync(source, file)
const { buildApp } = await import(`${src}/app.js`) as typeof import('../../src/app.js')
const { defaultConfig } = await import(`${src}/config.js`) as typeof import('../../src/config.js')
const { openDatabase } = await import(`${src}/db/database.js`) as typeof import('../../src/db/database.js')

const now = new Date()
const samples = sampleData(file, 20000, now)
const scenario = realScenarios(samples, 'unused', now, seed).find((s) => s.key === 'random-filter')
if (scenario === undefined) throw new Error('no random-filter workload')
const paths = Array.from({ length: warm + requests }, () => scenario.next().path)
const handle = await openDatabase(file)
// The benchmark's public URL: the documents it stored are this context's.
const app = await buildApp({ db: handle.db, config: defaultConfig({ databaseUrl: file, publicUrl: 'http://127.0.0.1:8080', logLevel: 'silent' }) })
await app.listen({ port: 0, host: '127.0.0.1' })
const { port } = app.server.address() as AddressInfo

/** The client: `list` paths over `connections` keep-alive sockets, in a process of its own; the statuses counted. */
const CLIENT = `
const http = require('node:http')
const [port, connections, list] = [Number(process.argv[1]), Number(process.argv[2]), require('node:fs').readFileSync(process.argv[3], 'utf8').split('\\n').filter(Boolean)]
const agent = new http.Agent({ keepAlive: true, maxSockets: connections })
let next = 0
const statuses = {}
const one = () => new Promise((resolve, reject) => {
  const path = list[next++]
  if (path === undefined) return resolve(false)
  http.get({ host: '127.0.0.1', port, path, agent }, (res) => {
    statuses[res.statusCode] = (statuses[res.statusCode] ?? 0) + 1
    res.resume()
    res.on('end', () => resolve(true))
  }).on('error', reject)
})
const loop = async () => { while (await one()) {} }
Promise.all(Array.from({ length: connections }, loop)).then(() => { process.stdout.write(JSON.stringify(statuses)); agent.destroy() })
`

async function send(some: readonly string[]): Promise<string> {
  const list = `${file}.paths`
  writeFileSync(list, some.join('\n'))
  const child = spawn(process.execPath, ['-e', CLIENT, String(port), String(connections), list], { stdio: ['ignore', 'pipe', 'inherit'] })
  let out = ''
  child.stdout.on('data', (chunk: Buffer) => { out += chunk.toString('utf8') })
  await new Promise((done) => child.on('exit', done))
  return out
}

const collections = { count: 0, ms: 0 }
new PerformanceObserver((list) => {
  for (const entry of list.getEntries()) {
    collections.count++
    collections.ms += entry.duration
  }
}).observe({ entryTypes: ['gc'] })
try {
  const warmed = await send(paths.slice(0, warm))
  const session = profile === undefined ? undefined : new Session()
  if (session !== undefined) {
    session.connect()
    await session.post('Profiler.enable')
    await session.post('Profiler.start')
  }
  Object.assign(collections, { count: 0, ms: 0 })
  // An older tree has no cold lists (`lists` undefined: 0).
  const coldLists = (): number => (app.replay as { lists?: number }).lists ?? 0
  const lists = coldLists()
  const cpu = process.cpuUsage()
  const started = performance.now()
  const statuses = await send(paths.slice(warm))
  const used = process.cpuUsage(cpu)
  const wall = performance.now() - started
  await new Promise((done) => setImmediate(done))
  if (session !== undefined && profile !== undefined) {
    const { profile: written } = await session.post('Profiler.stop')
    writeFileSync(profile, JSON.stringify(written))
  }
  process.stdout.write(`${src}: warm ${warm} ${warmed}, measured ${requests} ${statuses}: ${((used.user + used.system) / 1000 / requests).toFixed(3)} ms CPU a request `
    + `(${(requests / (wall / 1000)).toFixed(0)} req/s), ${coldLists() - lists} answered as cold lists; ${collections.count} collections ${collections.ms.toFixed(0)} ms\n`)
} finally {
  await app.close()
  await handle.close()
  for (const suffix of ['', '-wal', '-shm', '.paths']) rmSync(`${file}${suffix}`, { force: true })
}
