/**
 * What creates cost when several are in flight (issue 49, the shared commit): on a copy of a benchmark database
 * (SQLite), the app in process creates events through `app.inject`, `concurrency` at a time; prints the CPU of
 * the process a create (user + system), the wall time a create, and the commits and WAL pages they made (the WAL's
 * frames: a commit ends a run of them). Run it on two builds, alternately, to compare them.
 *
 *   node --import tsx scripts/bench/shared-commit.ts <database file> [creates, default 600] [concurrency, default 10]
 *
 * With `CPU_PROFILE=<file>` in the environment, the measured creates alone are profiled (V8's sampling
 * profiler, every 100 µs) and the profile written to that file (`.cpuprofile`, for Chrome's DevTools).
 *
 * Keep creates × pages under 10,000 (the WAL is checkpointed at 10,000 pages, which would hide its growth).
 * The file itself is not changed (a copy beside it is used and removed).
 */
import { readFileSync, statSync, writeFileSync } from 'node:fs'
import { Session } from 'node:inspector/promises'
import { buildApp } from '../../src/app.js'
import { defaultConfig } from '../../src/config.js'
import { createBodies } from './create-body.js'
import { openWithEditor, scratchCopy } from './scratch.js'

const count = Number(process.argv[3] ?? 600)
const concurrency = Number(process.argv[4] ?? 10)
const { file, remove } = scratchCopy('shared-commit', '[creates] [concurrency]')
const { database, key } = await openWithEditor(file, 'shared-commit')
const app = await buildApp({ db: database.db, config: defaultConfig({ databaseUrl: file, eventDocuments: false, logLevel: 'silent' }) })
await app.ready()

const body = createBodies(database.sqlite, 'Shared commit')
const create = async (n: number): Promise<void> => {
  const res = await app.inject({ method: 'POST', url: '/calendar/events/v1/events', headers: { authorization: `Bearer ${key}` }, payload: body(n) })
  if (res.statusCode !== 201) throw new Error(`POST /events answered ${res.statusCode}: ${res.body.slice(0, 300)}`)
}
/** `n` creates numbered from `first`, `concurrency` in flight. */
const run = async (first: number, n: number): Promise<void> => {
  let next = 0
  await Promise.all(Array.from({ length: concurrency }, async () => {
    while (next < n) await create(first + next++)
  }))
}
const walBytes = (): number => statSync(`${file}-wal`, { throwIfNoEntry: false })?.size ?? 0
const pageSize = Number(database.sqlite.pragma('page_size', { simple: true }))
try {
  await run(0, 50)
  database.sqlite.pragma('wal_checkpoint(TRUNCATE)')
  const before = walBytes()
  const profileFile = process.env.CPU_PROFILE
  const session = profileFile === undefined ? undefined : new Session()
  if (session !== undefined) {
    session.connect()
    await session.post('Profiler.enable')
    await session.post('Profiler.setSamplingInterval', { interval: 100 })
    await session.post('Profiler.start')
  }
  const cpu = process.cpuUsage()
  const started = performance.now()
  await run(100, count)
  const wallMs = (performance.now() - started) / count
  const used = process.cpuUsage(cpu)
  if (session !== undefined && profileFile !== undefined) {
    const { profile } = await session.post('Profiler.stop')
    writeFileSync(profileFile, JSON.stringify(profile))
    session.disconnect()
  }
  let commits = 0
  const wal = readFileSync(`${file}-wal`)
  for (let at = 32 + (before / (pageSize + 24)) * (pageSize + 24); at + 24 <= wal.length; at += pageSize + 24) {
    if (wal.readUInt32BE(at + 4) !== 0) commits++
  }
  const pages = (walBytes() - before) / (pageSize + 24)
  process.stdout.write(`${count} creates, ${concurrency} in flight: CPU ${((used.user + used.system) / 1000 / count).toFixed(3)} ms a create ` +
    `(user ${(used.user / 1000 / count).toFixed(3)}, system ${(used.system / 1000 / count).toFixed(3)}), wall ${wallMs.toFixed(3)} ms a create, ` +
    `${commits} commits (${(count / Math.max(commits, 1)).toFixed(1)} creates each), ${(pages / count).toFixed(1)} WAL pages a create\n`)
} finally {
  await app.close()
  await database.close()
  remove()
}
