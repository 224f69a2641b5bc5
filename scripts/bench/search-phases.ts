/**
 * The benchmark's random searches (scripts/bench/scenarios.ts `random-search`) in process against a PostgreSQL
 * schema a benchmark left (`pg-statements.ts --keep-schema`, or `--keep-db` runs' `--pg-schema`), with
 * `--concurrency` requests in flight at once as autocannon's connections keep them, on a fresh app: the process's
 * CPU a request per phase of `--per` requests, for each seed in turn (a later seed: new needles on warm caches, as
 * `--series-compare`'s second round). Requests one at a time (pg-statements.ts) hid what only requests in flight
 * together do: several of them reading the same remembered result each its own (docs/performance.md
 * "pg-search-series"). Run it under `node --cpu-prof`; each seed prints `process.hrtime` in µs at its start and
 * before its last phase, the clock of the profile's samples, to cut the profile to the warm phases. Printed, never
 * checked.
 *
 * CLI: node --import tsx scripts/bench/search-phases.ts --db FILE --schema NAME [--concurrency 10] [--phases 5]
 *      [--per 1000] [--seed N,M] [--events 20000] [--database-url postgres://postgres@127.0.0.1:5432/test]
 * FILE: the SQLite database the schema was copied from (the requests' samples are read from it).
 */
import { buildApp } from '../../src/app.js'
import { defaultConfig } from '../../src/config.js'
import { openDatabase } from '../../src/db/database.js'
import { schemaUrl } from './postgres.js'
import { realScenarios, sampleData } from './scenarios.js'

const arg = (name: string, fallback: string) => {
  const i = process.argv.indexOf(`--${name}`)
  return i < 0 ? fallback : (process.argv[i + 1] as string)
}
const FILE = arg('db', '')
const SCHEMA = arg('schema', '')
if (FILE === '' || SCHEMA === '') throw new Error('--db FILE and --schema NAME are needed')
const CONCURRENCY = Number(arg('concurrency', '10'))
const PHASES = Number(arg('phases', '5'))
const PER = Number(arg('per', '1000'))
const SEEDS = arg('seed', '20261125').split(',').map(Number)
const URL = schemaUrl(arg('database-url', 'postgres://postgres@127.0.0.1:5432/test'), SCHEMA)
const EVENTS = Number(arg('events', '20000'))
const NOW = new Date()

const samples = sampleData(FILE, EVENTS, NOW)
const handle = await openDatabase(URL)
const app = await buildApp({ db: handle.db, config: defaultConfig({ databaseUrl: URL, publicUrl: 'http://calendar.bench' }) })
try {
  while (!(await app.fillEventDocuments())) { /* until one pass is done */ }
  for (const seed of SEEDS) {
    const scenario = realScenarios(samples, 'unused', NOW, seed).find((s) => s.key === 'random-search')
    if (scenario === undefined) throw new Error('no random-search scenario')
    console.log(`seed ${seed} from ${process.hrtime.bigint() / 1000n} µs`)
    for (let phase = 0; phase < PHASES; phase++) {
      if (phase === PHASES - 1) console.log(`seed ${seed} last phase from ${process.hrtime.bigint() / 1000n} µs`)
      const cpu = process.cpuUsage()
      const started = performance.now()
      let left = PER
      let other = 0
      const connection = async () => {
        while (left > 0) {
          left--
          const r = scenario.next()
          const res = await app.inject({ method: r.method, url: r.path })
          if (res.statusCode !== 200) other++
        }
      }
      await Promise.all(Array.from({ length: CONCURRENCY }, connection))
      const used = process.cpuUsage(cpu)
      console.log(`seed ${seed} phase ${phase}: ${((used.user + used.system) / 1000 / PER).toFixed(3)} ms CPU a request, `
        + `${((performance.now() - started) / PER).toFixed(2)} ms wall, not 200 (pages past the last: 404) ${other}`)
    }
  }
} finally {
  await app.close()
  await handle.close()
}
