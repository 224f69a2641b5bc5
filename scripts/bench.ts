/**
 * The benchmark (`npm run bench`): builds a file database of N events through the bulk loader, starts
 * the API server and a bare-fastify ceiling each in its own process, drives both over loopback with
 * autocannon, prints a markdown table (req/s, p50, p99, ratio to the ceiling) and writes it as JSON.
 *
 *   node --import tsx scripts/bench.ts [--events N] [--duration S] [--warmup S] [--connections C]
 *                                      [--timeout S] [--scale [--sizes 1000,100000,1000000]] [--out FILE]
 *                                      [--db-dir DIR] [--keep-db] [--reuse-db] [--no-pin] [--cache-entries N] [--only K1,K2]
 *                                      [--realistic]
 *                                      [--database-url postgres://…] [--nodes N]
 *                                      [--recurrence [--recurrence-creates N] [--recurrence-series N]]
 *                                      [--series F] [--series-compare [--series-rounds N]] [--pg-schema NAME]
 *
 * `--scale` runs the list and filter routes at 1,000, 100,000 and 1,000,000 events instead (one
 * database and one server process per size) and reports how p50 grows and the server's peak RSS.
 *
 * `--recurrence` measures recurring events instead (scripts/bench/recurrence.ts): creating a series of 3,500
 * occurrences, and the horizon job's day of work over many unbounded series.
 *
 * `--series F` makes that fraction of the events recurring series before the server starts (scripts/bench/series.ts);
 * `--series-compare` measures issue 45's random reads on the database without series and with them, in one run.
 *
 * `--database-url postgres://…` (or a PostgreSQL DATABASE_URL in the environment) runs the servers on
 * PostgreSQL: the data set built in the file is copied into a schema of its own there
 * (`calendar_bench_<events>`, scripts/bench/postgres.ts). `--nodes N` starts N API processes on the one
 * database and spreads autocannon's connections over them (connection i to node i mod N); their CPU is
 * summed. See docs/scaling.md.
 *
 * On a machine with two or more cores, the servers run pinned to core 0 (one node; several are not
 * pinned) and this process (the
 * autocannon client) to core 1, so that client and server do not take CPU from each other.
 * Traffic goes to 127.0.0.1 only. Every wait has a deadline, every run a duration, and a watchdog
 * ends the whole run (children included) if it takes far longer than planned.
 */
import { execFileSync } from 'node:child_process'
import { createHash } from 'node:crypto'
import SQLite from 'better-sqlite3'
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import os from 'node:os'
import { dirname, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { isPostgresUrl, openDatabase, shownUrl } from '../src/db/database.js'
import { generateKey } from '../src/lib/api-keys.js'
import { formatUtc } from '../src/lib/dates.js'
import { createUserWithKey } from '../src/repositories/users.js'
import { withTransaction } from '../src/db/unit-of-work.js'
import { loadSpec } from '../src/http/spec.js'
import { documentContext } from '../src/repositories/event-documents.js'
import { runScenario, type Scenario, type ScenarioResult } from './bench/driver.js'
import { buildDatabase, dayStartMs, removeDatabaseFiles, type LoadResult } from './bench/loader.js'
import { benchSchema, copyToPostgres, dropBenchSchema } from './bench/postgres.js'
import { roundTripMs, startDelayProxy } from './bench/delay-proxy.js'
import { recurrenceBench, recurrenceTable } from './bench/recurrence.js'
import { makeSeries, type SeriesResult } from './bench/series.js'
import {
  allowedCpus, anonSampler, freePort, hasTaskset, IDLE_QUIET_MS, killAllChildren, memoryOf, pinSelf, startProcess, stopProcess, type Managed,
  type MemoryStatus,
} from './bench/processes.js'
import {
  FAILED_ANSWERS, REALISTIC_KEYS, SERIES_MIN_RATIO, memoryTarget, runTargets, scaleTable, scaleTargets, scenarioTable, seriesComparisons, seriesTable, seriesTargets,
  targetLines, type ScalePoint, type TargetCheck,
} from './bench/report.js'
import {
  PREFIX, allScenarios, bytesCeilingScenario, ceilingScenario, listScenarios, realScenarios, sampleData, type Samples,
} from './bench/scenarios.js'

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..')
/** The bulk loader's source: a database it built is reused (--reuse-db) only by the same loader. */
const LOADER_SOURCE = resolve(ROOT, 'scripts/bench/loader.ts')
/** What makes the series of `--series`: a database with series is reused only when the same code made them. */
const SERIES_SOURCE = resolve(ROOT, 'scripts/bench/series.ts')
const SERVER_CORE = 0
const CLIENT_CORE = 1

interface Options {
  events: number
  duration: number
  warmup: number
  connections: number
  timeout: number
  scale: boolean
  sizes: number[]
  out: string
  dbDir: string
  keepDb: boolean
  /** Use the database an earlier --keep-db run left for the same events, day and loader (see USAGE). */
  reuseDb: boolean
  pin: boolean
  /** CALENDAR_CACHE_ENTRIES of the API server (undefined: its default; 0: no read cache). */
  cacheEntries: number | undefined
  /** Only these scenarios (keys), undefined: all. */
  only: string[] | undefined
  /** A PostgreSQL URL the servers use (the data copied into a schema of its own), undefined: the SQLite file. */
  databaseUrl: string | undefined
  /** The schema's name instead of calendar_bench_<events> (undefined: that). */
  pgSchema: string | undefined
  /** API processes on the one database. */
  nodes: number
  /** Milliseconds added to every round trip between the API servers and PostgreSQL (scripts/bench/delay-proxy.ts); 0: none. */
  pgDelayMs: number
  /** CALENDAR_EVENT_DOCUMENTS of the API server: stored single-read documents (default on; the run waits for their fill). */
  documents: boolean
  /** The recurring-events measurements instead of the routes (scripts/bench/recurrence.ts). */
  recurrence: boolean
  recurrenceCreates: number
  recurrenceSeries: number
  /** The fraction of the events made series before the server starts (scripts/bench/series.ts); 0: none. */
  series: number
  /** Issue 45: the random reads on the database without series and with `series`, in one run, against one ceiling. */
  seriesCompare: boolean
  /** Rounds of --series-compare (each workload on both databases per round, which goes first alternating). */
  seriesRounds: number
  /** More arguments to node for the API servers, before the bundle (`--trace-gc`, `--cpu-prof`, …). */
  serverNodeArgs: string[]
  /** A file the API servers' stdout and stderr are appended to (`--trace-gc`'s lines), or undefined. */
  serverOutput: string | undefined
  /** A path prefix each workload's response times, ends and client delays are written under (`<prefix><key>.json`), or undefined. */
  latencyPrefix: string | undefined
}

const USAGE = `usage: node --import tsx scripts/bench.ts [options]
  --events N        events in the database (default 100000)
  --duration S      measured seconds per scenario (default 10)
  --warmup S        warm-up seconds per scenario, not measured (default 3)
  --connections C   autocannon connections (default 10)
  --timeout S       seconds before a request counts as timed out (default 10)
  --scale           run the list and filter routes at several sizes instead (see --sizes)
  --sizes A,B,C     sizes for --scale (default 1000,100000,1000000)
  --out FILE        JSON results (default bench-results/bench-<timestamp>.json)
  --db-dir DIR      where the database files go (default <tmpdir>/calendar-bench)
  --keep-db         keep the database files afterwards
  --reuse-db        use the database an earlier --keep-db run left in --db-dir when it was built for the same
                    events, day and loader, as that run left it (its writes included) and with the event
                    documents its servers stored, while it holds at most 10 % more events than it was built
                    with (each realistic run adds its creates); else build it as usual; implies --keep-db
  --no-pin          do not pin server and client to separate cores
  --cache-entries N the server's CALENDAR_CACHE_ENTRIES (0: no read cache, to measure the engine alone)
  --only K1,K2      run only these scenarios (keys as in the JSON: event-by-id, random-by-id, mixed-90-10, …)
  --realistic       the realistic workloads only (every request differs: ${REALISTIC_KEYS.join(', ')}; --only narrows them),
                    at 20,000 events unless --events says otherwise; their targets are the ratios and p99s
                    of scripts/bench/report.ts REALISTIC_TARGETS
  --database-url U  a postgres:// URL: the servers run on PostgreSQL, the data copied into the schema
                    calendar_bench_<events> (default: DATABASE_URL when it is a PostgreSQL URL, else SQLite)
  --pg-schema NAME  the PostgreSQL schema's name instead of calendar_bench_<events> (runs side by side on one
                    server; dropped first like that one)
  --nodes N         API processes on the one database, connections spread over them (default 1)
  --pg-delay-ms D   with --database-url: the API servers reach PostgreSQL through a local TCP proxy that holds
                    each of its answers D ms (a network's round trip; scripts/bench/delay-proxy.ts); the
                    round trip of a bare statement direct and through it is printed first
  --no-documents    the server's CALENDAR_EVENT_DOCUMENTS=false (every single read assembles); by default the
                    run waits until the server has stored its event documents (a server that has been
                    running has them: they live in the database)
  --recurrence      the recurring-events measurements instead (in process, scripts/bench/recurrence.ts): the
                    server's time to create a series of 3,500 occurrences, and the horizon job's time for one
                    day of work over many unbounded series (with --database-url: on PostgreSQL)
  --recurrence-creates N   series of 3,500 occurrences created and timed (default 20)
  --recurrence-series N    unbounded daily series the horizon job moves, ~1,826 occurrences each (default 550:
                    about a million occurrences; loading them takes minutes)
  --series F        before the server starts, make the fraction F (0–1) of the events recurring series through the
                    API in process (weekly, daily, monthly, COUNT 20–72: about 200,000 occurrences at 20,000 events
                    and 0.2) and a few hundred of their occurrences overrides (scripts/bench/series.ts); adds
                    random-by-occurrence (random GET /events/{id}/occurrences/{occurrence}) to --realistic
  --series-compare  issue 45: random-by-id, random-filter, random-search on the database without series and on the
                    same one with --series (default 0.2), random-by-occurrence on the latter, two servers measured
                    alternately against one bytes ceiling, at 20,000 events unless --events; prints the ratios of
                    with to without (target >= ${SERIES_MIN_RATIO}); --only K1,K2 keeps some of those workloads
  --series-rounds N rounds of --series-compare (default 2; the database measured first alternates)
  --server-node-args "A B"  more arguments to node for the API servers, after npm start's flags (e.g. "--trace-gc
                    --cpu-prof --cpu-prof-dir=/tmp/prof": what a run's server spends, and when it collects)
  --server-output FILE  append the API servers' stdout and stderr to FILE (with --trace-gc: the collections)
  --latency-prefix P  write each workload's measured responses (end on the monotonic clock, ms), the client's
                    collections and loop stalls to P<workload>.json, to lay beside a probe in the server`

class UsageError extends Error {}

function parseArgs(argv: string[]): Options {
  const options: Options = {
    events: 100_000,
    duration: 10,
    warmup: 3,
    connections: 10,
    timeout: 10,
    scale: false,
    sizes: [1000, 100_000, 1_000_000],
    out: join(ROOT, 'bench-results', `bench-${new Date().toISOString().replace(/[:.]/g, '-')}.json`),
    dbDir: join(os.tmpdir(), 'calendar-bench'),
    keepDb: false,
    reuseDb: false,
    pin: true,
    cacheEntries: undefined,
    only: undefined,
    databaseUrl: isPostgresUrl(process.env.DATABASE_URL ?? '') ? process.env.DATABASE_URL : undefined,
    pgSchema: undefined,
    nodes: 1,
    pgDelayMs: 0,
    documents: true,
    recurrence: false,
    recurrenceCreates: 20,
    recurrenceSeries: 550,
    series: 0,
    seriesCompare: false,
    seriesRounds: 2,
    serverNodeArgs: [],
    serverOutput: undefined,
    latencyPrefix: undefined,
  }
  const integer = (name: string, raw: string | undefined, min: number, max: number): number => {
    const value = Number(raw)
    if (raw === undefined || !/^\d+$/.test(raw) || value < min || value > max) throw new UsageError(`--${name} must be an integer from ${min} to ${max}`)
    return value
  }
  let eventsGiven = false
  let realistic = false
  for (let i = 0; i < argv.length; i++) {
    const flag = argv[i]
    const value = (): string | undefined => argv[++i]
    switch (flag) {
      case '--events': options.events = integer('events', value(), 100, 10_000_000); eventsGiven = true; break
      case '--duration': options.duration = integer('duration', value(), 1, 600); break
      case '--warmup': options.warmup = integer('warmup', value(), 0, 120); break
      case '--connections': options.connections = integer('connections', value(), 1, 1000); break
      case '--timeout': options.timeout = integer('timeout', value(), 1, 120); break
      case '--scale': options.scale = true; break
      case '--sizes': {
        const raw = value() ?? ''
        options.sizes = raw.split(',').map((s) => integer('sizes', s.trim(), 100, 10_000_000))
        if (options.sizes.length === 0) throw new UsageError('--sizes needs at least one size')
        break
      }
      case '--out': {
        const raw = value()
        if (raw === undefined || raw.startsWith('--')) throw new UsageError('--out needs a file')
        options.out = resolve(raw)
        break
      }
      case '--db-dir': {
        const raw = value()
        if (raw === undefined || raw.startsWith('--')) throw new UsageError('--db-dir needs a directory')
        options.dbDir = resolve(raw)
        break
      }
      case '--keep-db': options.keepDb = true; break
      case '--reuse-db': options.reuseDb = true; options.keepDb = true; break
      case '--no-pin': options.pin = false; break
      case '--no-documents': options.documents = false; break
      case '--cache-entries': options.cacheEntries = integer('cache-entries', value(), 0, 1_000_000); break
      case '--only': options.only = (value() ?? '').split(',').map((k) => k.trim()).filter((k) => k !== ''); break
      case '--realistic': realistic = true; break
      case '--database-url': {
        const raw = value()
        if (raw === undefined || !isPostgresUrl(raw)) throw new UsageError('--database-url needs a postgres:// or postgresql:// URL')
        options.databaseUrl = raw
        break
      }
      case '--pg-schema': {
        const raw = value()
        if (raw === undefined || !/^[a-z_][a-z0-9_]{0,40}$/.test(raw)) throw new UsageError('--pg-schema needs a lower-case name (letters, digits, _)')
        options.pgSchema = raw
        break
      }
      case '--nodes': options.nodes = integer('nodes', value(), 1, 16); break
      case '--pg-delay-ms': {
        const raw = value()
        if (raw === undefined || !/^\d+(\.\d+)?$/.test(raw) || Number(raw) > 100) throw new UsageError('--pg-delay-ms needs milliseconds from 0 to 100 (e.g. 0.5)')
        options.pgDelayMs = Number(raw)
        break
      }
      case '--recurrence': options.recurrence = true; break
      case '--recurrence-creates': options.recurrenceCreates = integer('recurrence-creates', value(), 1, 10_000); break
      case '--recurrence-series': options.recurrenceSeries = integer('recurrence-series', value(), 1, 100_000); break
      case '--series': {
        const raw = value()
        const fraction = Number(raw)
        if (raw === undefined || !/^(0?\.\d+|1(\.0*)?)$/.test(raw) || !(fraction > 0 && fraction <= 1)) throw new UsageError('--series must be a fraction above 0, at most 1 (e.g. 0.2)')
        options.series = fraction
        break
      }
      case '--series-compare': options.seriesCompare = true; break
      case '--series-rounds': options.seriesRounds = integer('series-rounds', value(), 1, 20); break
      case '--server-node-args': options.serverNodeArgs = (value() ?? '').split(/\s+/).filter((a) => a !== ''); break
      case '--server-output': {
        const raw = value()
        if (raw === undefined || raw.startsWith('--')) throw new UsageError('--server-output needs a file')
        options.serverOutput = resolve(raw)
        break
      }
      case '--latency-prefix': {
        const raw = value()
        if (raw === undefined || raw.startsWith('--')) throw new UsageError('--latency-prefix needs a path prefix')
        options.latencyPrefix = raw.endsWith('/') ? `${resolve(raw)}/` : resolve(raw)
        break
      }
      case '--help': case '-h': process.stdout.write(`${USAGE}\n`); process.exit(0); break
      default: throw new UsageError(`unknown option ${flag}`)
    }
  }
  if (realistic) {
    if (options.scale) throw new UsageError('--realistic chooses the scenarios: not with --scale')
    const realisticKeys = [...REALISTIC_KEYS, ...(options.series > 0 ? ['random-by-occurrence'] : [])]
    // --only narrows the realistic workloads to some of them (each must be one).
    const other = options.only?.find((key) => !realisticKeys.includes(key))
    if (other !== undefined) throw new UsageError(`--realistic --only: ${other} is not a realistic workload (${realisticKeys.join(', ')})`)
    options.only ??= realisticKeys
    if (!eventsGiven) options.events = 20_000
  }
  if (options.series > 0 && options.scale) throw new UsageError('--series is not for --scale')
  if (options.seriesCompare) {
    if (realistic || options.scale || options.recurrence) throw new UsageError('--series-compare chooses its workloads: not with --realistic, --scale or --recurrence')
    const unknown = options.only?.filter((key) => !SERIES_COMPARE_KEYS.includes(key)) ?? []
    if (unknown.length > 0) throw new UsageError(`--series-compare --only: ${unknown.join(', ')} not among ${SERIES_COMPARE_KEYS.join(', ')}`)
    if (options.series === 0) options.series = 0.2
    if (!eventsGiven) options.events = 20_000
  }
  options.sizes.sort((a, b) => a - b)
  return options
}

const log = (message: string): void => {
  process.stderr.write(`[${new Date().toISOString().slice(11, 19)}] ${message}\n`)
}

function machine(pinned: boolean) {
  const cpus = os.cpus()
  let commit: string | undefined
  let dirty: boolean | undefined
  try {
    commit = execFileSync('git', ['rev-parse', '--short', 'HEAD'], { cwd: ROOT, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim()
    dirty = execFileSync('git', ['status', '--porcelain'], { cwd: ROOT, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim() !== ''
  } catch {
    // not a git checkout
  }
  return {
    node: process.version,
    platform: os.platform(),
    release: os.release(),
    arch: os.arch(),
    cpus: cpus.map((c) => ({ model: c.model, speed: c.speed })),
    totalMemoryMb: Math.round(os.totalmem() / 1048576),
    loadavgAtStart: os.loadavg(),
    pinned: pinned ? { server: SERVER_CORE, client: CLIENT_CORE } : null,
    commit,
    dirty,
  }
}

/** The editor key POST and PATCH use, created through the app's own code before the server starts. */
async function createKey(file: string): Promise<string> {
  const database = await openDatabase(file)
  try {
    const key = generateKey()
    // Named after the moment: a reused database keeps the keys of the runs before.
    await withTransaction(database.db, (trx) => createUserWithKey(trx, 'editor', key, formatUtc(new Date()), `bench ${new Date().toISOString()}`))
    return key
  } finally {
    await database.close()
  }
}

interface Loaded extends LoadResult {
  /** What `--series` made of the database (undefined: no series). */
  series?: SeriesResult
  /** What the servers' DATABASE_URL is: the file, or the PostgreSQL schema the data was copied into. */
  serverUrl: string
  /** The editor key for the writes (made before the copy, so it is on either engine). */
  key: string
}

/**
 * Builds the file database of `events` events, with the bench's key, and copies it to PostgreSQL when asked.
 * `series` > 0: that fraction of the events made series, and some of their occurrences overrides (scripts/bench/series.ts),
 * in a file of its own; `base`: a database of the same events without series, copied rather than loaded again.
 */
async function load(options: Options, events: number, now: Date, series = 0, base?: Loaded): Promise<Loaded> {
  const file = join(options.dbDir, series > 0 ? `bench-${events}-series${Math.round(series * 100)}.db` : `bench-${events}.db`)
  // What a kept database was built for (beside it): reused only for the same events, day, loader and series.
  const built = {
    events, day: formatUtc(new Date(dayStartMs(now))), loader: createHash('sha256').update(readFileSync(LOADER_SOURCE)).digest('hex'),
    ...(series > 0 ? { series, seriesMaker: createHash('sha256').update(readFileSync(SERIES_SOURCE)).digest('hex') } : {}),
  }
  let kept = options.reuseDb ? keptDatabase(file, built) : undefined
  if (kept !== undefined) {
    // Every run's creates stay in a kept database: figures are for about the size asked, or it is built again.
    const held = await eventsIn(file)
    if (held > events * (1 + MAX_REUSED_GROWTH)) {
      log(`not reusing ${file}: it holds ${held.toLocaleString('en')} events, more than ${(100 * MAX_REUSED_GROWTH).toFixed(0)} % over the ${events.toLocaleString('en')} it was built with (earlier runs' creates)`)
      kept = undefined
    } else {
      log(`reusing ${file} (kept by an earlier run on ${built.day.slice(0, 10)}, with that run's writes): ${held.toLocaleString('en')} events`)
    }
  }
  let result: LoadResult & { series?: SeriesResult }
  if (kept !== undefined) {
    result = kept
  } else {
    if (base !== undefined) {
      log(`copying ${base.file} into ${file}`)
      removeDatabaseFiles(file)
      const source = new SQLite(base.file, { readonly: true, fileMustExist: true })
      try {
        await source.backup(file)
      } finally {
        source.close()
      }
      const { serverUrl: _url, key: _key, series: _series, ...loaded } = base
      result = { ...loaded, file }
    } else {
      log(`loading ${events.toLocaleString('en')} events into ${file}`)
      result = await buildDatabase({ file, events, now, log })
      log(`loaded in ${result.seconds.toFixed(1)} s, ${(result.bytes / 1048576).toFixed(0)} MB, ${result.eventsInWindow} events in the default window`)
    }
    if (series > 0) {
      log(`making ${(100 * series).toFixed(0)} % of the events series (through the API, in process)`)
      result = { ...result, series: await makeSeries(file, series, log) }
    }
    if (options.keepDb) writeJson(`${file}.json`, { built, result })
    else rmSync(`${file}.json`, { force: true })
  }
  const key = await createKey(file)
  if (options.databaseUrl === undefined) return { ...result, serverUrl: file, key }
  log(`copying into PostgreSQL at ${shownUrl(options.databaseUrl)}`)
  return { ...result, serverUrl: await copyToPostgres(file, options.databaseUrl, benchSchema(events, series, options.pgSchema), log), key }
}

/** How much more a kept database may hold than it was built with (earlier runs' creates) and still be reused: a tenth. */
const MAX_REUSED_GROWTH = 0.1

/** The events a database file holds now. */
async function eventsIn(file: string): Promise<number> {
  const database = await openDatabase(file)
  try {
    const row = await database.db.selectFrom('events').select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow()
    return Number(row.n)
  } finally {
    await database.close()
  }
}

/** The load result kept beside `file` when it was built for `built` and the file is still there. */
function keptDatabase(file: string, built: { events: number; day: string; loader: string; series?: number; seriesMaker?: string }): LoadResult | undefined {
  try {
    const sidecar = JSON.parse(readFileSync(`${file}.json`, 'utf8')) as { built?: typeof built; result?: LoadResult }
    const same = sidecar.built?.events === built.events && sidecar.built.day === built.day && sidecar.built.loader === built.loader
      && sidecar.built.series === built.series && sidecar.built.seriesMaker === built.seriesMaker
    return same && existsSync(file) ? sidecar.result : undefined
  } catch {
    return undefined
  }
}

/** Removes what `load` made (unless --keep-db). */
async function unload(options: Options, database: Loaded): Promise<void> {
  if (options.keepDb) return
  removeDatabaseFiles(database.file)
  rmSync(`${database.file}.json`, { force: true })
  if (options.databaseUrl !== undefined) await dropBenchSchema(options.databaseUrl, benchSchema(database.events, database.series?.fraction ?? 0, options.pgSchema))
}

/** The ceiling process; `bodyFile`: the already-serialized body its `GET /bytes` sends (default: its own object's JSON). */
async function startCeiling(core: number | undefined, bodyFile?: string): Promise<Managed> {
  const port = await freePort()
  const managed = await startProcess({
    name: 'ceiling', cwd: ROOT, args: ['--import', 'tsx', 'scripts/bench/ceiling.ts'],
    env: { PORT: String(port), HOST: '127.0.0.1', ...(bodyFile === undefined ? {} : { BODY_FILE: bodyFile }) }, port, readyPath: '/event', ...(core === undefined ? {} : { core }),
  })
  log(`ceiling pid ${managed.pid} on port ${port} (cpus ${managed.cpus}), answered after ${managed.startupMs.toFixed(0)} ms`)
  return managed
}

let serverBuilt = false

/** The PUBLIC_URL of the API servers (every port). */
const BENCH_PUBLIC_URL = 'http://127.0.0.1:8080'

/** The API processes under test: one or more nodes on one database. */
interface Servers {
  nodes: Managed[]
  origins: string[]
  pids: number[]
  /** The slowest node's spawn-to-first-answer. */
  startupMs: number
  cpus: string
}

/** What `measure` drives: the API nodes, or the ceiling. */
const targetOf = (managed: Managed): Pick<Servers, 'origins' | 'pids'> => ({ origins: [managed.origin], pids: [managed.pid] })

/** The delay proxy of each PostgreSQL URL (--pg-delay-ms), started once per run: its URL. */
const delayed = new Map<string, string>()

/** `url` through the delay proxy when --pg-delay-ms asks for one (PostgreSQL only), the proxy started the first time. */
async function throughDelay(url: string, options: Options): Promise<string> {
  if (options.pgDelayMs <= 0 || !isPostgresUrl(url)) return url
  const known = delayed.get(url)
  if (known !== undefined) return known
  const proxy = await startDelayProxy(url, options.pgDelayMs)
  const direct = await roundTripMs(url)
  const through = await roundTripMs(proxy.url)
  log(`delay proxy pid ${proxy.pid} (${options.pgDelayMs} ms an answer): a bare statement's round trip ${direct.toFixed(3)} ms direct, ${through.toFixed(3)} ms through it`)
  delayed.set(url, proxy.url)
  return proxy.url
}

/** `nodes` API processes on the database at `url`, one after the other (the first migrates); several are not pinned. */
async function startServers(databaseUrl: string, core: number | undefined, options: Options): Promise<Servers> {
  const nodes: Managed[] = []
  const url = await throughDelay(databaseUrl, options)
  try {
    for (let i = 0; i < options.nodes; i++) nodes.push(await startServer(url, options.nodes === 1 ? core : undefined, options, i + 1))
  } catch (error) {
    for (const node of nodes) await stopProcess(node)
    throw error
  }
  return {
    nodes, origins: nodes.map((n) => n.origin), pids: nodes.map((n) => n.pid),
    startupMs: Math.max(...nodes.map((n) => n.startupMs)), cpus: nodes.map((n) => n.cpus).join(' / '),
  }
}

/**
 * Waits until the API server's background fill has stored the event documents (their count unchanged for
 * a second) and says how many and how long it took: the realistic reads then meet a server in its
 * steady state, as one that has been running (documents live in the database, across restarts).
 */
async function documentsStored(url: string): Promise<{ count: number; fillMs: number }> {
  const started = performance.now()
  const handle = await openDatabase(url)
  // The servers' own documents (a kept database also holds those of other runs' addresses, until replaced).
  const schemas = (loadSpec().document.components as { schemas?: Record<string, unknown> } | undefined)?.schemas
  // The servers run with the default settings: no extension, a UTC site.
  const context = documentContext(`${BENCH_PUBLIC_URL}${PREFIX}`, schemas?.Event, { geoloc: false, timeZone: 'UTC' })
  try {
    let last = -1
    let same = 0
    for (;;) {
      const { count } = await handle.db.selectFrom('event_documents').where('context', '=', context)
        .select((eb) => eb.fn.countAll<number>().as('count')).executeTakeFirstOrThrow()
      const n = Number(count)
      same = n === last && n > 0 ? same + 1 : 0
      last = n
      if (same >= 4) break
      if (performance.now() - started > 600_000) throw new Error(`the event documents were not stored within 10 minutes (${n} so far)`)
      await new Promise((resolve) => setTimeout(resolve, 250))
    }
    const fillMs = performance.now() - started - 1000
    log(`event documents: ${last.toLocaleString('en')} stored in about ${(fillMs / 1000).toFixed(1)} s`)
    return { count: last, fillMs }
  } finally {
    await handle.close()
  }
}

async function stopServers(servers: Servers): Promise<void> {
  for (const node of servers.nodes) await stopProcess(node)
}

/** `npm start`'s arguments to node (its flags and the bundle), read from package.json: the benchmark runs what it runs. */
function startArgs(): string[] {
  const start = (JSON.parse(readFileSync(resolve(ROOT, 'package.json'), 'utf8')) as { scripts: { start: string } }).scripts.start.trim().split(/\s+/)
  if (start[0] !== 'node') throw new Error(`package.json: the start script should run node, got ${start.join(' ')}`)
  return start.slice(1)
}

/** `npm start`'s node arguments with `more` put after its own flags, before the script (so that a flag given again wins). */
function withNodeArgs(args: string[], more: string[]): string[] {
  return [...args.slice(0, -1), ...more, ...args.slice(-1)]
}

/**
 * Builds the server from the current source, once per run: first thing (`main`), so that what is measured is
 * the source as it stood when the run began, not as it stands minutes later when the database is loaded.
 */
function buildServer(): void {
  if (serverBuilt) return
  log('building the server (npm run build)')
  try {
    execFileSync('npm', ['run', '-s', 'build'], { cwd: ROOT, stdio: ['ignore', 2, 2] })
  } catch {
    throw new Error('npm run build failed (see above): the benchmark runs the server from the build, node dist/bundle/server.js')
  }
  serverBuilt = true
}

/** The API server as `npm start` runs it (`node --min-semi-space-size=16 --max-semi-space-size=16 --heap-growing-percent=50 dist/bundle/server.js`), built (once per run) from the source. */
async function startServer(
  file: string, core: number | undefined, { cacheEntries, documents, serverNodeArgs = [], serverOutput }: Pick<Options, 'cacheEntries' | 'documents'> & Partial<Pick<Options, 'serverNodeArgs' | 'serverOutput'>>, node = 1,
): Promise<Managed> {
  buildServer()
  const port = await freePort()
  const managed = await startProcess({
    name: `API server ${node}`, cwd: ROOT, args: withNodeArgs(startArgs(), serverNodeArgs), ...(serverOutput === undefined ? {} : { outputFile: serverOutput }),
    // One public URL whatever the port: the event documents stored (they hold every rest_url) serve the next run on a kept database.
    env: { DATABASE_URL: file, PORT: String(port), HOST: '127.0.0.1', PUBLIC_URL: BENCH_PUBLIC_URL, LOG_LEVEL: 'silent', CALENDAR_EVENT_DOCUMENTS: String(documents), ...(cacheEntries === undefined ? {} : { CALENDAR_CACHE_ENTRIES: String(cacheEntries) }) },
    port, readyPath: PREFIX, ...(core === undefined ? {} : { core }),
  })
  log(`API server ${node} pid ${managed.pid} on port ${port} (cpus ${managed.cpus}), first answer after ${managed.startupMs.toFixed(0)} ms`)
  return managed
}

async function measure(scenario: Scenario, target: Pick<Servers, 'origins' | 'pids'>, options: Options): Promise<ScenarioResult> {
  log(`  ${scenario.label}: ${options.warmup} s warm-up, ${options.duration} s measured`)
  const result = await runScenario(scenario, {
    origins: target.origins, connections: options.connections, duration: options.duration, warmup: options.warmup,
    timeout: options.timeout, pids: target.pids, ...(options.latencyPrefix === undefined ? {} : { latencyPrefix: options.latencyPrefix }),
  })
  const bad = result.non2xx + result.errors + result.timeouts
  // Every wait for idle takes IDLE_QUIET_MS at least (one after the run, two before it, a process each): said when longer.
  const quietMs = IDLE_QUIET_MS * target.pids.length
  log(`    ${result.rps.toFixed(0)} req/s, p50 ${result.p50.toFixed(2)} ms, p99 ${result.p99.toFixed(2)} ms, non-2xx ${result.non2xx}`
    + `${result.clientLoop === undefined ? '' : `, client loop delay p99 ${result.clientLoop.delayP99.toFixed(1)} ms (max ${result.clientLoop.delayMax.toFixed(1)}), client GC ${result.clientLoop.gcMs.toFixed(0)} ms in ${result.clientLoop.gcCount}`}`
    + `${bad > 0 ? `, errors ${result.errors}, timeouts ${result.timeouts}` : ''}`
    + `${result.drainMs > quietMs + 1000 ? `; server busy ${(result.drainMs / 1000).toFixed(1)} s after the run` : ''}`
    + `${result.idleBeforeMs > 2 * quietMs + 1000 ? `; waited ${(result.idleBeforeMs / 1000).toFixed(1)} s for it to be idle first` : ''}`)
  for (const failure of result.failures) log(`    ! ${failure.method} ${failure.path} → ${failure.status} ${failure.body.slice(0, 200)}`)
  return result
}

interface Ceiling {
  rps: number
  /** Requests per CPU-second of the ceiling process. */
  rpsPerCpuSecond: number
  runs: ScenarioResult[]
}

const perCpuSecond = (r: ScenarioResult): number => r.rps / (r.serverCpuPct / 100)

function ceilingOf(runs: ScenarioResult[]): Ceiling {
  const mean = (f: (r: ScenarioResult) => number) => runs.reduce((sum, r) => sum + f(r), 0) / Math.max(1, runs.length)
  return { rps: mean((r) => r.rps), rpsPerCpuSecond: mean(perCpuSecond), runs }
}

/** Ratios against the bytes ceiling (`ratio`, `cpuRatio`) and the object ceiling (`objectRatio`); a run without a bytes ceiling rates against the object one. */
function withRatios(results: ScenarioResult[], object: Ceiling, bytes?: Ceiling): ScenarioResult[] {
  const main = bytes ?? object
  return results.map((r) => ({ ...r, ratio: r.rps / main.rps, objectRatio: r.rps / object.rps, cpuRatio: perCpuSecond(r) / main.rpsPerCpuSecond }))
}

function ceilingNote(ceiling: Ceiling, what = 'Ceiling (bare fastify, constant ~2.4 KB event-shaped object serialized per request)'): string {
  const [a, b] = ceiling.runs
  return `${what}: ${ceiling.rps.toFixed(0)} req/s`
    + ` (mean of ${ceiling.runs.length} runs${a !== undefined && b !== undefined ? `: ${a.rps.toFixed(0)} before, ${b.rps.toFixed(0)} after` : ''}),`
    + ` ${ceiling.rpsPerCpuSecond.toFixed(0)} requests per CPU-second;`
    + ceiling.runs.map((r, i) => ` run ${i + 1}: p50/p99 ${r.p50.toFixed(2)}/${r.p99.toFixed(2)} ms, its CPU ${r.serverCpuPct.toFixed(0)} %, client CPU ${r.clientCpuPct.toFixed(0)} %, host CPU pressure ${r.hostCpuPressurePct.toFixed(0)} %`).join(';')
    + '.'
}

const COLUMNS = 'p50/p99: from every response time (autocannon\'s own histogram, in whole ms, alongside); p99 ÷ p50: the tail against'
  + ' the middle. × bytes ceiling: req/s ÷ the bytes ceiling\'s req/s (what the targets are ratios of; the object ceiling where a run'
  + ' has none); × object ceiling: the same against the object ceiling; × bytes ceiling per CPU-s: the same with requests per'
  + ' CPU-second of each server process (contention from other work taken out). server CPU ms/req: CPU of the process under test'
  + ' per request. errors: socket errors and timeouts. server CPU: % of one core used by the process under test during'
  + ' the measured run; client CPU: the same for autocannon; host CPU pressure: share of that time during which some task on the'
  + ' machine waited for a CPU (Linux PSI), i.e. how much other work competed.'

function writeJson(file: string, data: unknown): void {
  mkdirSync(dirname(file), { recursive: true })
  writeFileSync(file, `${JSON.stringify(data, null, 2)}\n`)
}

/**
 * What the bytes ceiling sends: an event as the API answers `GET /events/{id}` anonymously, the one of median
 * size among the first sampled reads, written to a file beside the results.
 */
async function eventBody(origin: string, samples: Samples, out: string): Promise<{ file: string; bytes: number; id: number }> {
  const bodies: Array<{ id: number; body: Buffer }> = []
  for (const { id } of samples.reads.slice(0, 21)) {
    const response = await fetch(`${origin}${PREFIX}/events/${id}`, { signal: AbortSignal.timeout(10_000) })
    if (response.status === 200) bodies.push({ id, body: Buffer.from(await response.arrayBuffer()) })
  }
  bodies.sort((a, b) => a.body.length - b.body.length)
  const median = bodies[Math.floor(bodies.length / 2)]
  if (median === undefined) throw new Error('bench: no event answered GET /events/{id} for the bytes ceiling')
  const file = `${out}.event-body.json`
  mkdirSync(dirname(file), { recursive: true })
  writeFileSync(file, median.body)
  return { file, bytes: median.body.length, id: median.id }
}

async function defaultRun(options: Options, core: number | undefined, now: Date) {
  const database = await load(options, options.events, now, options.series)
  try {
    const key = database.key
    const samples = sampleData(database.file, options.events, now)
    let server: Servers | undefined
    let ceilingProcess: Managed | undefined
    let sampler: ReturnType<typeof anonSampler> | undefined
    try {
      // The API first (its start timed on an otherwise idle core), then the ceilings: the bytes ceiling sends an event as the API answers it.
      server = await startServers(database.serverUrl, core, options)
      const startupMs = server.startupMs
      const documents = options.documents ? await documentsStored(database.serverUrl) : undefined
      const body = await eventBody(server.origins[0] ?? '', samples, options.out)
      log(`bytes ceiling body: event ${body.id} as the API answers it, ${body.bytes} bytes`)
      ceilingProcess = await startCeiling(core, body.file)
      const objectRuns = [await measure(ceilingScenario(), targetOf(ceilingProcess), options)]
      const bytesRuns = [await measure(bytesCeilingScenario(), targetOf(ceilingProcess), options)]
      const results: ScenarioResult[] = []
      // Repeated URLs first, then traffic where every request differs (its writes last, after the other reads).
      const scenarios = [...allScenarios(samples, key, now), ...realScenarios(samples, key, now)]
        .filter((scenario) => options.only === undefined || options.only.includes(scenario.key))
      const pid = server.pids[0]
      sampler = pid === undefined ? undefined : anonSampler(pid)
      for (const scenario of scenarios) results.push(await measure(scenario, server, options))
      const peakAnonKb = sampler?.stop() ?? NaN
      const memory: MemoryStatus | undefined = pid === undefined ? undefined : memoryOf(pid)
      await stopServers(server)
      objectRuns.push(await measure(ceilingScenario(), targetOf(ceilingProcess), options))
      bytesRuns.push(await measure(bytesCeilingScenario(), targetOf(ceilingProcess), options))
      const ceiling = ceilingOf(objectRuns)
      const bytesCeiling = { ...ceilingOf(bytesRuns), bodyBytes: body.bytes }
      const rated = withRatios(results, ceiling, bytesCeiling)
      const targets = [
        ...runTargets(rated, { events: options.events, connections: options.connections, startupMs }),
        memoryTarget(peakAnonKb, options.events),
      ]
      return { database, ceiling, bytesCeiling, server: { startupMs, memory, peakAnonKb, cpus: server.cpus, documents }, results: rated, targets }
    } finally {
      sampler?.stop()
      if (server !== undefined) await stopServers(server)
      if (ceilingProcess !== undefined) await stopProcess(ceilingProcess)
    }
  } finally {
    await unload(options, database)
  }
}

/** The workloads `--series-compare` runs on both databases (`random-by-occurrence` only has series to read). */
const SERIES_COMPARE_KEYS = ['random-by-id', 'random-by-occurrence', 'random-filter', 'random-search']

/**
 * Issue 45's speed section: the random reads on the database without series and on the same database with
 * `--series` of its events made series, two servers side by side, each workload measured on one then the other
 * (who goes first alternating by round, with the same seeded requests on both in a round and other ones the next),
 * all against one bytes ceiling measured before and after (its body: an event as the server without series answers it).
 */
async function seriesCompareRun(options: Options, core: number | undefined, now: Date) {
  const plain = await load(options, options.events, now)
  let series: Loaded | undefined
  try {
    series = await load(options, options.events, now, options.series, plain)
    const databases = { without: plain, with: series }
    const samples = { without: sampleData(plain.file, options.events, now), with: sampleData(series.file, options.events, now) }
    log(`random-by-occurrence: ${samples.with.occurrences.length.toLocaleString('en')} occurrences of series sampled`)
    const servers: { without?: Servers; with?: Servers } = {}
    let ceilingProcess: Managed | undefined
    try {
      const documents: { without?: { count: number; fillMs: number }; with?: { count: number; fillMs: number } } = {}
      for (const side of ['without', 'with'] as const) {
        log(`API server on the database ${side} series`)
        const server = await startServers(databases[side].serverUrl, core, options)
        servers[side] = server
        if (options.documents) documents[side] = await documentsStored(databases[side].serverUrl)
      }
      const body = await eventBody(servers.without?.origins[0] ?? '', samples.without, options.out)
      log(`bytes ceiling body: event ${body.id} as the API answers it, ${body.bytes} bytes`)
      ceilingProcess = await startCeiling(core, body.file)
      const bytesRuns = [await measure(bytesCeilingScenario(), targetOf(ceilingProcess), options)]
      const results: { without: ScenarioResult[]; with: ScenarioResult[] } = { without: [], with: [] }
      for (let round = 0; round < options.seriesRounds; round++) {
        const seed = 20261125 + round
        const scenarios = {
          without: realScenarios(samples.without, plain.key, now, seed),
          with: realScenarios(samples.with, series.key, now, seed),
        }
        const order = round % 2 === 0 ? (['without', 'with'] as const) : (['with', 'without'] as const)
        for (const key of SERIES_COMPARE_KEYS) {
          if (options.only !== undefined && !options.only.includes(key)) continue
          for (const side of order) {
            const scenario = scenarios[side].find((s) => s.key === key)
            const server = servers[side]
            if (scenario === undefined || server === undefined) continue
            const labelled = { ...scenario, label: `${scenario.label} (${side} series, round ${round + 1})` }
            const result = await measure(labelled, server, options)
            results[side].push({ ...result, label: scenario.label })
          }
        }
      }
      const memory = { without: servers.without?.pids[0], with: servers.with?.pids[0] }
      for (const side of ['without', 'with'] as const) {
        const server = servers[side]
        if (server !== undefined) await stopServers(server)
        servers[side] = undefined
      }
      bytesRuns.push(await measure(bytesCeilingScenario(), targetOf(ceilingProcess), options))
      const bytesCeiling = { ...ceilingOf(bytesRuns), bodyBytes: body.bytes }
      const rated = { without: withRatios(results.without, bytesCeiling), with: withRatios(results.with, bytesCeiling) }
      const comparisons = seriesComparisons(rated.without, rated.with)
      return {
        databases: { without: plain, with: series }, bytesCeiling, documents, pids: memory, results: rated, comparisons,
        targets: seriesTargets(comparisons, rated.without, rated.with),
      }
    } finally {
      for (const server of [servers.without, servers.with]) if (server !== undefined) await stopServers(server)
      if (ceilingProcess !== undefined) await stopProcess(ceilingProcess)
    }
  } finally {
    if (series !== undefined) await unload(options, series)
    await unload(options, plain)
  }
}

async function scaleRun(options: Options, core: number | undefined, now: Date) {
  const ceilingProcess = await startCeiling(core)
  try {
    const ceilingRuns = [await measure(ceilingScenario(), targetOf(ceilingProcess), options)]
    const points: Array<ScalePoint & { database: LoadResult; memory: MemoryStatus | undefined }> = []
    for (const size of options.sizes) {
      const database = await load(options, size, now)
      try {
        const samples = sampleData(database.file, size, now)
        const server = await startServers(database.serverUrl, core, options)
        try {
          const results: ScenarioResult[] = []
          for (const scenario of listScenarios(samples)) results.push(await measure(scenario, server, options))
          const memory = server.pids[0] === undefined ? undefined : memoryOf(server.pids[0])
          log(`  peak RSS ${((memory?.peakRssKb ?? NaN) / 1024).toFixed(0)} MB at ${size.toLocaleString('en')} events`)
          points.push({
            events: size, startupMs: server.startupMs, peakRssKb: memory?.peakRssKb ?? NaN, loadSeconds: database.seconds,
            dbBytes: database.bytes, results, database, memory,
          })
        } finally {
          await stopServers(server)
        }
      } finally {
        await unload(options, database)
      }
    }
    ceilingRuns.push(await measure(ceilingScenario(), targetOf(ceilingProcess), options))
    const ceiling = ceilingOf(ceilingRuns)
    for (const point of points) point.results = withRatios(point.results, ceiling)
    return { ceiling, points, targets: scaleTargets(points) }
  } finally {
    await stopProcess(ceilingProcess)
  }
}

async function main(): Promise<void> {
  const options = parseArgs(process.argv.slice(2))
  if (options.recurrence) {
    const result = await recurrenceBench({ databaseUrl: options.databaseUrl, creates: options.recurrenceCreates, series: options.recurrenceSeries, log })
    writeJson(options.out, { kind: 'recurrence', startedAt: new Date().toISOString(), machine: machine(false), result })
    process.stdout.write(`${recurrenceTable(result)}\n\nJSON: ${options.out}\n`)
    return
  }
  const now = new Date()
  const started = performance.now()
  const pinned = options.pin && os.cpus().length >= 2 && hasTaskset() && pinSelf(CLIENT_CORE)
  const core = pinned ? SERVER_CORE : undefined
  const info = { ...machine(pinned), clientCpus: allowedCpus(process.pid) }
  log(`node ${info.node}, ${info.cpus.length} × ${info.cpus[0]?.model ?? 'cpu'}, load ${info.loadavgAtStart.map((l) => l.toFixed(2)).join(' ')}`
    + `${pinned ? `, server on core ${SERVER_CORE}, client on core ${CLIENT_CORE}` : ', not pinned'}`)

  // Watchdog: generous, but bounded (loading 1M events takes a minute or two on this machine).
  const scenarioCount = options.scale ? options.sizes.length * 6 + 2 : options.seriesCompare ? options.seriesRounds * 2 * (options.only?.length ?? 4) + 2 : 16
  // Making series: about 40 s per 4,000 series on this machine (and the load again with --series-compare).
  const seriesBudgetS = options.series > 0 ? 120 + (options.events * options.series / 1000) * 30 : 0
  const loadBudgetS = (options.scale ? options.sizes : [options.events]).reduce((sum, n) => sum + 60 + (n / 1e6) * 600, 0) * (options.seriesCompare ? 2 : 1) + seriesBudgetS
  // Per scenario: warm-up, run, up to 3 × 180 s waiting for the server to work off abandoned requests, probes.
  const budgetS = scenarioCount * (options.duration + options.warmup + 600) + loadBudgetS + 120
  const watchdog = setTimeout(() => {
    log(`watchdog: still running after ${budgetS.toFixed(0)} s, stopping`)
    killAllChildren()
    process.exit(3)
  }, budgetS * 1000)
  watchdog.unref()

  const settings = {
    events: options.events, duration: options.duration, warmup: options.warmup, connections: options.connections,
    timeout: options.timeout, scale: options.scale, sizes: options.scale ? options.sizes : undefined,
    cacheEntries: options.cacheEntries ?? 'server default',
    engine: options.databaseUrl === undefined ? 'sqlite' : 'postgres',
    nodes: options.nodes,
    pgDelayMs: options.pgDelayMs,
    documents: options.documents,
    series: options.series > 0 ? options.series : undefined,
    seriesCompare: options.seriesCompare ? { rounds: options.seriesRounds } : undefined,
  }
  const where = `${settings.engine === 'sqlite' ? 'SQLite' : 'PostgreSQL'}, ${options.nodes} node${options.nodes === 1 ? '' : 's'}${options.pgDelayMs > 0 ? `, +${options.pgDelayMs} ms a round trip to PostgreSQL` : ''}`
  buildServer()
  let output: Record<string, unknown>
  let text: string
  if (options.scale) {
    const run = await scaleRun(options, core, now)
    text = [
      `## Scale: list and filter routes (${where}, ${options.connections} connections, ${options.duration} s after ${options.warmup} s warm-up)`,
      '',
      scaleTable(run.points),
      '',
      ceilingNote(run.ceiling),
      COLUMNS,
      '',
      ...run.points.flatMap((p) => [`### ${p.events.toLocaleString('en')} events`, '', scenarioTable(p.results), '']),
      '### Targets',
      '',
      targetLines(run.targets),
    ].join('\n')
    output = { kind: 'scale', settings, machine: info, ceiling: run.ceiling, points: run.points, targets: run.targets }
  } else if (options.seriesCompare) {
    const run = await seriesCompareRun(options, core, now)
    const made = run.databases.with.series
    text = [
      `## Issue 45: random reads without and with series (${options.events.toLocaleString('en')} events, ${where}, ${options.connections} connections, ${options.duration} s after ${options.warmup} s warm-up, ${options.seriesRounds} round${options.seriesRounds === 1 ? '' : 's'})`,
      '',
      made === undefined ? '' : `With series: ${made.series.toLocaleString('en')} of the events made series (${(100 * made.fraction).toFixed(0)} %: weekly, daily, monthly, COUNT 20–72),`
        + ` ${made.occurrences.toLocaleString('en')} occurrences in all, ${made.overrides} of them changed alone (overrides). Ratios: means over the rounds, each against the run's bytes ceiling; target: with ÷ without ≥ ${SERIES_MIN_RATIO}.`,
      '',
      seriesTable(run.comparisons),
      '',
      ceilingNote(run.bytesCeiling, `Bytes ceiling (bare fastify, a constant already-serialized event of ${run.bytesCeiling.bodyBytes} bytes as the API without series answers it)`),
      COLUMNS,
      '',
      '### Without series, every run',
      '',
      scenarioTable(run.results.without),
      '',
      '### With series, every run',
      '',
      scenarioTable(run.results.with),
      '',
      '### Targets',
      '',
      targetLines(run.targets),
    ].join('\n')
    output = { kind: 'series-compare', settings, machine: info, ...run }
  } else {
    const run = await defaultRun(options, core, now)
    const memory = run.server.memory
    text = [
      `## ${options.events.toLocaleString('en')} events (${where}, ${options.connections} connections, ${options.duration} s after ${options.warmup} s warm-up)`,
      '',
      scenarioTable(run.results),
      '',
      ceilingNote(run.bytesCeiling, `Bytes ceiling (bare fastify, a constant already-serialized event of ${run.bytesCeiling.bodyBytes} bytes as the API answers it; × bytes ceiling)`),
      ceilingNote(run.ceiling, 'Object ceiling (bare fastify, a constant ~2.4 KB event-shaped object serialized per request; × object ceiling)'),
      `API server${options.nodes === 1 ? '' : 's'}: first answer ${run.server.startupMs.toFixed(0)} ms after spawn${options.nodes === 1 ? '' : ' (the slowest node); CPU summed over the nodes; memory of node 1'};`
        + ` memory (RssAnon + RssShmem) ${(run.server.peakAnonKb / 1024).toFixed(0)} MB at peak while measured, ${((memory?.anonKb ?? NaN) / 1024).toFixed(0)} MB at the end;`
        + ` whole RSS with file-backed pages: peak (VmHWM) ${((memory?.peakRssKb ?? NaN) / 1024).toFixed(0)} MB, at the end ${((memory?.rssKb ?? NaN) / 1024).toFixed(0)} MB.`
        + (run.server.documents === undefined ? ' Event documents off (--no-documents): every single read assembles.'
          : ` Event documents: ${run.server.documents.count.toLocaleString('en')} stored by the server's background fill in about ${(run.server.documents.fillMs / 1000).toFixed(1)} s, waited for before measuring.`),
      COLUMNS,
      '',
      '### Targets',
      '',
      targetLines(run.targets),
    ].join('\n')
    output = { kind: 'routes', settings, machine: info, database: run.database, ceiling: run.ceiling, bytesCeiling: run.bytesCeiling, server: run.server, results: run.results, targets: run.targets }
  }
  output = { startedAt: now.toISOString(), finishedAt: new Date().toISOString(), ...output }
  output.wallSeconds = (performance.now() - started) / 1000
  output.loadavgAtEnd = os.loadavg()
  writeJson(options.out, output)
  process.stdout.write(`${text}\n\nJSON: ${options.out}\n`)
  const failed = (output.targets as TargetCheck[]).some((t) => t.target === FAILED_ANSWERS && t.pass === false)
  clearTimeout(watchdog)
  process.exitCode = failed ? 1 : 0
}

main().catch((error: unknown) => {
  if (error instanceof UsageError) {
    process.stderr.write(`${error.message}\n${USAGE}\n`)
    process.exitCode = 2
  } else {
    process.stderr.write(`bench failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`)
    process.exitCode = 1
  }
  killAllChildren()
})
