/**
 * What a `POST /events` costs in the database (issue 49): on a copy of a benchmark database (SQLite), the app in
 * process creates events through `app.inject`, one after the other; every statement is timed where
 * better-sqlite3 runs it, and the WAL's growth gives the pages each create's commit wrote. Prints the statements
 * a create runs, the median time of each, and the pages its commit writes, by table and index (the WAL's frames
 * name their pages; SQLite's dbstat table names the b-tree of each).
 *
 *   node --import tsx scripts/bench/create-statements.ts <database file> [creates, default 100]
 *
 * Keep creates × pages under 10,000 (the WAL is checkpointed at 10,000 pages, which would hide its growth).
 * The file itself is not changed (a copy beside it is used and removed).
 */
import { readFileSync, statSync } from 'node:fs'
import { buildApp } from '../../src/app.js'
import { defaultConfig } from '../../src/config.js'
import { createBodies } from './create-body.js'
import { openWithEditor, scratchCopy } from './scratch.js'

const count = Number(process.argv[3] ?? 100)
const { file, remove } = scratchCopy('create-statements', '[creates]')
const { database, key } = await openWithEditor(file, 'create-statements')
const app = await buildApp({ db: database.db, config: defaultConfig({ databaseUrl: file, eventDocuments: false, logLevel: 'silent' }) })
await app.ready()

// Every statement better-sqlite3 runs, timed by its text (while `timing` is on).
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
      const text = this.source.replace(/\s+/g, ' ').slice(0, 90)
      let list = times.get(text)
      if (list === undefined) times.set(text, list = [])
      list.push(performance.now() - started)
    }
  }
}

const body = createBodies(database.sqlite, 'Create statements')
const create = async (n: number): Promise<void> => {
  const res = await app.inject({ method: 'POST', url: '/calendar/events/v1/events', headers: { authorization: `Bearer ${key}` }, payload: body(n) })
  if (res.statusCode !== 201) throw new Error(`POST /events answered ${res.statusCode}: ${res.body.slice(0, 300)}`)
}
const walBytes = (): number => statSync(`${file}-wal`, { throwIfNoEntry: false })?.size ?? 0
const pageSize = Number(database.sqlite.pragma('page_size', { simple: true }))
try {
  for (let i = 0; i < 20; i++) await create(i)
  database.sqlite.pragma('wal_checkpoint(TRUNCATE)')
  const before = walBytes()
  timing = true
  const started = performance.now()
  for (let i = 0; i < count; i++) await create(100 + i)
  const ms = (performance.now() - started) / count
  timing = false
  const pages = (walBytes() - before) / (pageSize + 24) / count
  const median = (list: number[]): number => [...list].sort((a, b) => a - b)[Math.floor(list.length / 2)] ?? NaN
  const rows = [...times].map(([text, list]) => ({ text, each: list.length / count, us: (median(list) * list.length / count) * 1000 }))
    .sort((a, b) => b.us - a.us)
  const statements = rows.reduce((sum, r) => sum + r.each, 0)
  const us = rows.reduce((sum, r) => sum + r.us, 0)
  process.stdout.write(`a create: ${ms.toFixed(2)} ms in process, ${statements.toFixed(1)} statements (${us.toFixed(0)} µs, medians), ${pages.toFixed(1)} pages written by its commit\n`)
  for (const r of rows) process.stdout.write(`${r.us.toFixed(0).padStart(6)} µs  ×${r.each.toFixed(1)}  ${r.text}\n`)
  // Which tables and indexes the pages are of: each frame of the WAL names its page, each commit ends a run of
  // frames, and SQLite's dbstat table names the b-tree each page is in now.
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
  process.stdout.write(`pages a commit by table or index (${commits} commits):\n`)
  for (const [owner, n] of [...byOwner].sort((a, b) => b[1] - a[1])) process.stdout.write(`${(n / commits).toFixed(1).padStart(6)}  ${owner}\n`)
} finally {
  await app.close()
  await database.close()
  remove()
}
