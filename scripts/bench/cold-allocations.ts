/**
 * What random anonymous reads by id allocate (issue 49, the random reads' tail): the app in this process on a copy of a
 * benchmark database (its documents stored for the benchmark's public URL), autocannon in a process of its own asking
 * random ids; V8's sampling heap profiler counting every allocation, collected or not. Prints the bytes allocated per
 * request by the functions that allocate most, and the server's CPU per request.
 *
 *   node --import tsx scripts/bench/cold-allocations.ts <database file> [seconds, default 5] [events, default 20000]
 */
import { execFile } from 'node:child_process'
import { copyFileSync, rmSync } from 'node:fs'
import { Session } from 'node:inspector/promises'
import type { AddressInfo } from 'node:net'
import { promisify } from 'node:util'
import { buildApp } from '../../src/app.js'
import { defaultConfig } from '../../src/config.js'
import { openSqlite } from '../../src/db/database.js'

interface ProfileNode { callFrame: { functionName: string; url: string; lineNumber: number }; selfSize: number; children: ProfileNode[] }

const [source, secondsArg = '5', eventsArg = '20000'] = process.argv.slice(2)
if (source === undefined) {
  process.stderr.write('usage: node --import tsx scripts/bench/cold-allocations.ts <database file> [seconds] [events]\n')
  process.exit(2)
}
const file = `/tmp/cold-allocations-${process.pid}.db`
copyFileSync(source, file)
const database = await openSqlite(file)
const app = await buildApp({ db: database.db, config: defaultConfig({ databaseUrl: file, eventDocuments: true, logLevel: 'silent', publicUrl: 'http://127.0.0.1:8080' }) })
await app.listen({ port: 0, host: '127.0.0.1' })
const { port } = app.server.address() as AddressInfo
for (let i = 1; i <= 50; i++) await (await fetch(`http://127.0.0.1:${port}/calendar/events/v1/events/${i}`)).arrayBuffer()
const session = new Session()
session.connect()
await session.post('HeapProfiler.startSampling', { samplingInterval: 4096, includeObjectsCollectedByMajorGC: true, includeObjectsCollectedByMinorGC: true })
const before = { cpu: process.cpuUsage(), colds: app.replay.colds }
const load = new URL('./cold-load.mjs', import.meta.url).pathname
const run = await promisify(execFile)(process.execPath, [load, `http://127.0.0.1:${port}`, secondsArg, eventsArg], { encoding: 'utf8' })
const cpu = process.cpuUsage(before.cpu)
const { profile } = await session.post('HeapProfiler.stopSampling') as unknown as { profile: { head: ProfileNode } }
const result = JSON.parse(run.stdout) as { total: number; non2xx: number }
const bySite = new Map<string, number>()
const walk = (node: ProfileNode): void => {
  const { functionName, url, lineNumber } = node.callFrame
  const key = `${functionName || '(anonymous)'} ${url.split('/').slice(-2).join('/')}:${lineNumber + 1}`
  bySite.set(key, (bySite.get(key) ?? 0) + node.selfSize)
  for (const child of node.children) walk(child)
}
walk(profile.head)
const total = [...bySite.values()].reduce((a, b) => a + b, 0)
process.stdout.write(`${result.total} requests (${result.non2xx} not 2xx), ${app.replay.colds - before.colds} cold; server CPU ${((cpu.user + cpu.system) / Math.max(1, result.total)).toFixed(1)} µs a request; `
  + `allocated ${(total / Math.max(1, result.total) / 1024).toFixed(1)} kB a request (sampled)\n`)
for (const [key, bytes] of [...bySite].sort((a, b) => b[1] - a[1]).slice(0, 30)) {
  process.stdout.write(`${(bytes / Math.max(1, result.total)).toFixed(0).padStart(7)} B  ${(100 * bytes / total).toFixed(1).padStart(5)} %  ${key}\n`)
}
session.disconnect()
await app.close()
await database.close()
for (const suffix of ['', '-wal', '-shm']) rmSync(`${file}${suffix}`, { force: true })
