/**
 * Random searches in process (issue 45, docs/performance.md "Issue 45: random reads with recurring events"): the
 * benchmark's seeded `random-search` requests (`realScenarios`) sent through `app.inject` to the app on a copy of a
 * benchmark database (`--keep-db`), CPU a request, statements a request and the time spent in each kind of
 * statement (timed where better-sqlite3 runs it). Run it under `node --cpu-prof` for a profile. Printed, never
 * checked.
 *
 * CLI: node --import tsx scripts/bench/search-statements.ts <bench.db> [requests 3000] [warm-up 500] [seed 20261125]
 */
import { copyFileSync, existsSync, mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import SQLite from 'better-sqlite3'
import { buildApp } from '../../src/app.js'
import { defaultConfig } from '../../src/config.js'
import { openDatabase } from '../../src/db/database.js'
import { sampleData, realScenarios } from './scenarios.js'

const [source, requestsArg, warmupArg, seedArg] = process.argv.slice(2)
if (source === undefined) throw new Error('usage: search-statements.ts <bench.db> [requests] [warm-up] [seed]')
const REQUESTS = Number(requestsArg ?? 3000)
const WARMUP = Number(warmupArg ?? 500)
const SEED = Number(seedArg ?? 20261125)
const NOW = new Date(`${new Date().toISOString().slice(0, 10)}T00:00:00Z`)

const dir = mkdtempSync(join(tmpdir(), 'calendar-search-statements-'))
const file = join(dir, 'calendar.db')
for (const suffix of ['', '-wal']) if (existsSync(`${source}${suffix}`)) copyFileSync(`${source}${suffix}`, `${file}${suffix}`)

// Statements timed where better-sqlite3 runs them, by their text's first 90 characters.
const byText = new Map<string, { n: number; ms: number }>()
let statements = 0
const probe = new SQLite(':memory:')
const statement = Object.getPrototypeOf(probe.prepare('select 1')) as Record<string, unknown>
probe.close()
for (const method of ['all', 'get', 'run', 'iterate']) {
  const original = statement[method] as (...args: unknown[]) => unknown
  statement[method] = function (this: { source: string }, ...args: unknown[]) {
    statements++
    const t = performance.now()
    try {
      return original.apply(this, args)
    } finally {
      const key = this.source.replace(/\s+/g, ' ').slice(0, 90)
      const s = byText.get(key) ?? { n: 0, ms: 0 }
      s.n++
      s.ms += performance.now() - t
      byText.set(key, s)
    }
  }
}

const handle = await openDatabase(file)
const app = await buildApp({ db: handle.db, config: defaultConfig({ databaseUrl: file, publicUrl: 'http://127.0.0.1:8080' }), now: () => new Date() })
try {
  const samples = sampleData(file, 20000, NOW)
  const scenario = realScenarios(samples, 'unused', NOW, SEED).find((s) => s.key === 'random-search')
  if (scenario === undefined) throw new Error('no random-search scenario')
  const send = async () => {
    const request = scenario.next()
    const res = await app.inject({ method: 'GET', url: request.path })
    if (res.statusCode !== 200 && res.statusCode !== 404) throw new Error(`${request.path}: ${res.statusCode} ${res.body.slice(0, 200)}`)
  }
  for (let i = 0; i < WARMUP; i++) await send()
  byText.clear()
  statements = 0
  const cpu = process.cpuUsage()
  const started = performance.now()
  for (let i = 0; i < REQUESTS; i++) await send()
  const wall = performance.now() - started
  const used = process.cpuUsage(cpu)
  console.log(`${REQUESTS} searches: ${((used.user + used.system) / 1000 / REQUESTS).toFixed(3)} ms CPU, ${(wall / REQUESTS).toFixed(3)} ms wall, ${(statements / REQUESTS).toFixed(2)} statements a search`)
  for (const [text, s] of [...byText].sort((a, b) => b[1].ms - a[1].ms).slice(0, 12)) {
    console.log(`  ${(s.ms / REQUESTS).toFixed(3)} ms/search  ${(s.n / REQUESTS).toFixed(3)} ×  ${(s.ms / s.n).toFixed(3)} ms each  ${text}`)
  }
} finally {
  await app.close()
  await handle.close()
  rmSync(dir, { recursive: true, force: true })
}
