/**
 * How many replayed requests one look at the data version answers (http/replay.ts), under a repeated read:
 * the app in this process on a copy of the database, autocannon in a process of its own on one URL.
 *
 *   node --import tsx scripts/bench/replay-looks.ts <database file> [seconds, default 5] [connections, default 10] [event id, default 60]
 *
 * Prints the requests replayed, the looks taken for them, and the server's CPU per request.
 */
import { execFile } from 'node:child_process'
import { promisify } from 'node:util'
import { copyFileSync, rmSync } from 'node:fs'
import type { AddressInfo } from 'node:net'
import { buildApp } from '../../src/app.js'
import { defaultConfig } from '../../src/config.js'
import { openSqlite } from '../../src/db/database.js'

const [source, secondsArg = '5', connectionsArg = '10', idArg = '60'] = process.argv.slice(2)
if (source === undefined) {
  process.stderr.write('usage: node --import tsx scripts/bench/replay-looks.ts <database file> [seconds] [connections] [event id]\n')
  process.exit(2)
}
const file = `/tmp/replay-looks-${process.pid}.db`
copyFileSync(source, file)
const database = await openSqlite(file)
const app = await buildApp({ db: database.db, config: defaultConfig({ databaseUrl: file, eventDocuments: true, logLevel: 'silent', publicUrl: 'http://127.0.0.1' }) })
await app.listen({ port: 0, host: '127.0.0.1' })
const { port } = app.server.address() as AddressInfo
const url = `http://127.0.0.1:${port}/calendar/events/v1/events/${idArg}`
for (let i = 0; i < 3; i++) await (await fetch(url)).arrayBuffer()
const before = { replayed: app.replay.replayed, looks: app.replay.looks, cpu: process.cpuUsage() }
// autocannon in a process of its own (its CPU is not the server's).
const run = await promisify(execFile)(process.execPath, ['node_modules/autocannon/autocannon.js', '-c', connectionsArg, '-d', secondsArg, '--json', url], { encoding: 'utf8' })
const cpu = process.cpuUsage(before.cpu)
const replayed = app.replay.replayed - before.replayed
const looks = app.replay.looks - before.looks
const requests = (JSON.parse(run.stdout) as { requests: { total: number } }).requests.total
process.stdout.write(`${requests} requests, ${replayed} replayed after ${looks} looks: ${(replayed / Math.max(1, looks)).toFixed(2)} requests a look; server CPU ${((cpu.user + cpu.system) / Math.max(1, requests)).toFixed(1)} µs a request\n`)
await app.close()
await database.close()
rmSync(file, { force: true })
rmSync(`${file}-wal`, { force: true })
rmSync(`${file}-shm`, { force: true })
