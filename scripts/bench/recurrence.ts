/**
 * The recurring-events measurements of the benchmark (`npm run bench -- --recurrence`, docs/performance.md):
 *   1. creating a series of 3,500 occurrences (`FREQ=DAILY;COUNT=3500`, the most a series may have): the server's
 *      time per create, the expansion and the 3,500 rows in one unit of work, measured in process (`inject`, no
 *      network), `--recurrence-creates` of them;
 *   2. the horizon job's work for one day at many occurrences: `--recurrence-series` unbounded daily series (each
 *      about 1,826 rows at the default horizon of five years: 550 series are a million occurrences) created through
 *      the API, then the clock moved a day and the job run once (each series gains a day), then once more with
 *      nothing to do.
 * On a fresh SQLite file, or with `--database-url` in the PostgreSQL schema `calendar_bench_recurrence` (dropped
 * first). Timings are printed, never checked: the machine's load moves them (docs/performance.md).
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import pg from 'pg'
import { buildApp } from '../../src/app.js'
import { defaultConfig } from '../../src/config.js'
import { openDatabase } from '../../src/db/database.js'
import { withTransaction } from '../../src/db/unit-of-work.js'
import { moveHorizons } from '../../src/horizon.js'
import { generateKey } from '../../src/lib/api-keys.js'
import { DAY } from '../../src/lib/time-zones.js'
import { createUserWithKey } from '../../src/repositories/users.js'
import { schemaUrl } from './postgres.js'

const PREFIX = '/calendar/events/v1'
const SCHEMA = 'calendar_bench_recurrence'

export interface RecurrenceBenchOptions {
  /** PostgreSQL URL; undefined: a fresh SQLite file. */
  databaseUrl: string | undefined
  /** Series of 3,500 occurrences created and timed. */
  creates: number
  /** Unbounded daily series the horizon job moves. */
  series: number
  log: (message: string) => void
}

export interface RecurrenceBenchResult {
  engine: 'sqlite' | 'postgres'
  create3500: { creates: number; p50Ms: number; p90Ms: number; maxMs: number }
  horizon: {
    series: number
    occurrencesBefore: number
    loadSeconds: number
    oneDay: { ms: number; cpuMs: number; seriesMoved: number; occurrencesAdded: number }
    nothingToDo: { ms: number }
  }
}

const percentile = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))] ?? NaN

async function freshSchema(url: string): Promise<string> {
  const client = new pg.Client({ connectionString: url })
  await client.connect()
  try {
    await client.query(`drop schema if exists ${SCHEMA} cascade`)
  } finally {
    await client.end()
  }
  return schemaUrl(url, SCHEMA)
}

export async function recurrenceBench(options: RecurrenceBenchOptions): Promise<RecurrenceBenchResult> {
  const dir = mkdtempSync(join(tmpdir(), 'calendar-recurrence-bench-'))
  const url = options.databaseUrl === undefined ? join(dir, 'calendar.db') : await freshSchema(options.databaseUrl)
  const handle = await openDatabase(url)
  const key = generateKey()
  await withTransaction(handle.db, (trx) => createUserWithKey(trx, 'editor', key, '2026-01-01 00:00:00'))
  let now = new Date('2026-06-15T12:00:00Z')
  const config = defaultConfig({ databaseUrl: url, publicUrl: 'http://calendar.bench' })
  const app = await buildApp({ db: handle.db, config, now: () => now })
  const headers = { authorization: `Bearer ${key}`, 'content-type': 'application/json' }
  const create = async (title: string, start: string, rule: string): Promise<number> => {
    const started = performance.now()
    const res = await app.inject({
      method: 'POST', url: `${PREFIX}/events`, headers,
      payload: JSON.stringify({ title, timezone: 'Europe/Zurich', start_date: start, end_date: start.replace(/ 09:/, ' 10:'), recurrence: { rule } }),
    })
    if (res.statusCode !== 201) throw new Error(`creating a series answered ${res.statusCode}: ${res.body.slice(0, 300)}`)
    return performance.now() - started
  }
  try {
    options.log(`recurrence: ${options.creates} series of 3,500 occurrences`)
    // One create first, not counted: the statements' first compilation.
    await create('warm-up', '2026-07-01 09:00:00', 'FREQ=DAILY;COUNT=3500')
    const times: number[] = []
    for (let i = 0; i < options.creates; i++) times.push(await create(`daily ${i}`, '2026-07-01 09:00:00', 'FREQ=DAILY;COUNT=3500'))
    times.sort((a, b) => a - b)

    options.log(`recurrence: ${options.series} unbounded daily series for the horizon job`)
    const loadStarted = performance.now()
    for (let i = 0; i < options.series; i++) await create(`unbounded ${i}`, '2026-06-16 09:00:00', 'FREQ=DAILY')
    const loadSeconds = (performance.now() - loadStarted) / 1000
    const count = async () => Number((await handle.db.selectFrom('event_occurrences').select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow()).n)
    const occurrencesBefore = await count()

    now = new Date(now.getTime() + DAY)
    options.log('recurrence: the horizon job, one day later')
    let started = performance.now()
    const cpu = process.cpuUsage()
    const run = await moveHorizons(handle.db, now, config.recurrenceHorizonDays)
    const oneDayMs = performance.now() - started
    const used = process.cpuUsage(cpu)
    const cpuMs = (used.user + used.system) / 1000
    started = performance.now()
    await moveHorizons(handle.db, now, config.recurrenceHorizonDays)
    const nothingMs = performance.now() - started
    return {
      engine: options.databaseUrl === undefined ? 'sqlite' : 'postgres',
      create3500: { creates: times.length, p50Ms: percentile(times, 0.5), p90Ms: percentile(times, 0.9), maxMs: times.at(-1) ?? NaN },
      horizon: {
        series: options.series, occurrencesBefore, loadSeconds,
        oneDay: { ms: oneDayMs, cpuMs, seriesMoved: run.series, occurrencesAdded: run.occurrences },
        nothingToDo: { ms: nothingMs },
      },
    }
  } finally {
    await app.close()
    await handle.close()
    rmSync(dir, { recursive: true, force: true })
  }
}

/** The result as the benchmark prints it (markdown). */
export function recurrenceTable(r: RecurrenceBenchResult): string {
  const ms = (n: number) => `${n.toFixed(1)} ms`
  return [
    `## Recurring events (${r.engine === 'sqlite' ? 'SQLite' : 'PostgreSQL'}, in process)`,
    '',
    '| measurement | figure |',
    '| --- | --- |',
    `| create a series of 3,500 occurrences (server time, ${r.create3500.creates} creates) | p50 ${ms(r.create3500.p50Ms)}, p90 ${ms(r.create3500.p90Ms)}, max ${ms(r.create3500.maxMs)} |`,
    `| horizon job, one day of work: ${r.horizon.series.toLocaleString('en')} unbounded daily series, ${r.horizon.occurrencesBefore.toLocaleString('en')} occurrences | ${ms(r.horizon.oneDay.ms)} wall, ${ms(r.horizon.oneDay.cpuMs)} of the node's CPU${r.engine === 'sqlite' ? ' (SQLite\'s work included)' : ''} (${r.horizon.oneDay.seriesMoved.toLocaleString('en')} series moved, ${r.horizon.oneDay.occurrencesAdded.toLocaleString('en')} occurrences added) |`,
    `| horizon job with nothing to do | ${ms(r.horizon.nothingToDo.ms)} |`,
    '',
    `Loading the ${r.horizon.series.toLocaleString('en')} series through the API took ${r.horizon.loadSeconds.toFixed(1)} s.`,
  ].join('\n')
}
