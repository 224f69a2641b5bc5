/**
 * What a `PATCH /events/{id}` of the 90/10 mix costs (issue 49): on a copy of a benchmark database (SQLite), the app
 * in process PATCHes random published events through `app.inject`, one after the other, with the mix's bodies (a
 * cost; a title and `featured`; a title: scenarios.ts `realScenarios`); prints the CPU of the process a PATCH and the
 * statements a PATCH runs, each timed where better-sqlite3 runs it (median by text), the slowest first.
 * With `CPU_PROFILE=<file>` the measured PATCHes alone are profiled (V8's sampler, every 100 µs).
 *
 *   node --import tsx scripts/bench/patch-statements.ts <database file> [PATCHes, default 400]
 *
 * The file itself is not changed (a copy beside it is used and removed).
 */
import { readFileSync, statSync, writeFileSync } from 'node:fs'
import { Session } from 'node:inspector/promises'
import { buildApp } from '../../src/app.js'
import { defaultConfig } from '../../src/config.js'
import { openWithEditor, scratchCopy } from './scratch.js'

const count = Number(process.argv[3] ?? 400)
const { file, remove } = scratchCopy('patch-statements', '[PATCHes]')
const { database, key } = await openWithEditor(file, 'patch-statements')
const app = await buildApp({ db: database.db, config: defaultConfig({ databaseUrl: file, eventDocuments: false, logLevel: 'silent' }) })
await app.ready()

const times = new Map<string, number[]>()
let timing = false
type Run = (this: { source: string }, ...args: unknown[]) => unknown
const prototype = Object.getPrototypeOf(database.sqlite.prepare('select 1')) as Record<string, Run>
for (const method of ['run', 'all', 'get', 'iterate']) {
  const original = prototype[method] as Run
  prototype[method] = function (this: { source: string }, ...args: unknown[]) {
    if (!timing) return original.apply(this, args)
    const started = performance.now()
    try {
      return original.apply(this, args)
    } finally {
      const text = this.source.replace(/\s+/g, ' ').slice(0, 100)
      let list = times.get(text)
      if (list === undefined) times.set(text, list = [])
      list.push(performance.now() - started)
    }
  }
}

const ids = (database.sqlite.prepare(`select id from events where status = 'publish' and recurrence is null order by id`).all() as Array<{ id: number }>).map((r) => r.id)
const runTag = Date.now().toString(36)
// The mix's bodies in turn, on events spread over the table (a prime stride).
const body = (n: number): Record<string, unknown> => n % 2 === 0 ? { cost: `€ ${10 + (n % 90)} (${runTag})` }
  : n % 4 === 1 ? { featured: n % 8 === 1, title: `Bench edit ${runTag} ${n}` } : { title: `Bench edit ${runTag} ${n}` }
const walBytes = (): number => statSync(`${file}-wal`, { throwIfNoEntry: false })?.size ?? 0
const pageSize = Number(database.sqlite.pragma('page_size', { simple: true }))
const patch = async (n: number): Promise<void> => {
  const id = ids[(n * 7919) % ids.length] as number
  const res = await app.inject({ method: 'PATCH', url: `/calendar/events/v1/events/${id}`, headers: { authorization: `Bearer ${key}` }, payload: body(n) })
  if (res.statusCode !== 200) throw new Error(`PATCH answered ${res.statusCode}: ${res.body.slice(0, 300)}`)
}
try {
  for (let i = 0; i < 50; i++) await patch(100_000 + i)
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
  timing = process.env.TIMING !== '0'
  const cpu = process.cpuUsage()
  for (let i = 0; i < count; i++) await patch(i)
  const used = process.cpuUsage(cpu)
  timing = false
  if (session !== undefined && profileFile !== undefined) {
    const { profile } = await session.post('Profiler.stop')
    writeFileSync(profileFile, JSON.stringify(profile))
    session.disconnect()
  }
  const median = (list: number[]): number => [...list].sort((a, b) => a - b)[Math.floor(list.length / 2)] ?? NaN
  const rows = [...times].map(([text, list]) => ({ text, each: list.length / count, us: (median(list) * list.length / count) * 1000 }))
    .sort((a, b) => b.us - a.us)
  const statements = rows.reduce((sum, r) => sum + r.each, 0)
  const us = rows.reduce((sum, r) => sum + r.us, 0)
  process.stdout.write(`a PATCH: CPU ${((used.user + used.system) / 1000 / count).toFixed(3)} ms, ${statements.toFixed(1)} statements (${us.toFixed(0)} µs, medians)\n`)
  for (const r of rows) process.stdout.write(`${r.us.toFixed(0).padStart(6)} µs  ×${r.each.toFixed(1)}  ${r.text}\n`)
  // Which tables and indexes the commits' pages are of (as create-statements.ts counts them).
  const owners = new Map((database.sqlite.prepare('select pageno, name from dbstat').all() as Array<{ pageno: number; name: string }>)
    .map((row) => [row.pageno, row.name]))
  const wal = readFileSync(`${file}-wal`)
  const byOwner = new Map<string, number>()
  let commits = 0
  const dirty = new Set<number>()
  for (let at = 32 + (before / (pageSize + 24)) * (pageSize + 24); at + 24 <= wal.length; at += pageSize + 24) {
    dirty.add(wal.readUInt32BE(at))
    if (wal.readUInt32BE(at + 4) === 0) continue
    commits++
    for (const page of dirty) {
      const owner = owners.get(page) ?? '(free list or new)'
      byOwner.set(owner, (byOwner.get(owner) ?? 0) + 1)
    }
    dirty.clear()
  }
  const pages = [...byOwner.values()].reduce((a, b) => a + b, 0)
  process.stdout.write(`pages a commit by table or index (${commits} commits, ${(pages / Math.max(commits, 1)).toFixed(1)} pages each):\n`)
  for (const [owner, n] of [...byOwner].sort((a, b) => b[1] - a[1])) process.stdout.write(`${(n / commits).toFixed(1).padStart(6)}  ${owner}\n`)
} finally {
  await app.close()
  await database.close()
  remove()
}
