/**
 * Lists with occurrences changed alone (CONTRACT §17, docs/performance.md "Lists with overrides"): a database of
 * `--events` events (the bench loader), a fifth of them made weekly series (COUNT 10–50) through the API, then
 * `search`, `venue`, `hide_subsequent_recurrences=true` and default lists, each request a new URL (nothing
 * remembered from the one before but the window shared by every needle), with no override and then with
 * `--overrides` occurrences changed alone (a title with a searched word, a venue). Per scenario: the median time
 * per request (in process, `inject`) and the statements per request. Printed, never checked.
 *
 * CLI: node --import tsx scripts/bench/overrides.ts [--events 20000] [--overrides 100] [--database-url postgres://…]
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import SQLite from 'better-sqlite3'
import { buildApp } from '../../src/app.js'
import { defaultConfig } from '../../src/config.js'
import { openDatabase } from '../../src/db/database.js'
import { withTransaction } from '../../src/db/unit-of-work.js'
import { generateKey } from '../../src/lib/api-keys.js'
import { createUserWithKey } from '../../src/repositories/users.js'
import { buildDatabase, prng, SEARCH_WORDS } from './loader.js'

const PREFIX = '/calendar/events/v1'
const arg = (name: string, fallback: number) => {
  const i = process.argv.indexOf(`--${name}`)
  return i < 0 ? fallback : Number(process.argv[i + 1])
}
const EVENTS = arg('events', 20000)
const OVERRIDES = arg('overrides', 100)
const PER_SCENARIO = arg('requests', 60)
const NOW = new Date('2026-12-06T00:00:00Z')

const dir = mkdtempSync(join(tmpdir(), 'calendar-override-bench-'))
const file = join(dir, 'calendar.db')
await buildDatabase({ file, events: EVENTS, now: NOW, log: () => {} })
// Statements counted where better-sqlite3 runs them (the query builder's, the prepared ones, the id listers', the
// read cache's data-version probe): every call of a statement's all/get/run/iterate.
let statements = 0
const probe = new SQLite(':memory:')
const statement = Object.getPrototypeOf(probe.prepare('select 1')) as Record<string, (...args: unknown[]) => unknown>
probe.close()
for (const method of ['all', 'get', 'run', 'iterate']) {
  const original = statement[method] as (...args: unknown[]) => unknown
  statement[method] = function (this: unknown, ...args: unknown[]) {
    statements++
    return original.apply(this, args)
  }
}
const handle = await openDatabase(file)
const key = generateKey()
await withTransaction(handle.db, (trx) => createUserWithKey(trx, 'editor', key, '2026-01-01 00:00:00'))
const app = await buildApp({ db: handle.db, config: defaultConfig({ databaseUrl: file, publicUrl: 'http://calendar.bench' }), now: () => NOW })
const headers = { authorization: `Bearer ${key}`, 'content-type': 'application/json' }
const random = prng(49)
const pick = <T>(list: readonly T[]): T => list[Math.floor(random() * list.length)] as T

try {
  const ids = (await handle.db.selectFrom('events').select('id').where('language', '=', 'en').where('status', '=', 'publish').orderBy('id').execute()).map((r) => r.id)
  const venues = (await handle.db.selectFrom('venues').select('id').where('status', '=', 'publish').where('language', '=', 'en').execute()).map((r) => r.id)
  const series: number[] = []
  for (let i = 0; i < ids.length; i += 5) {
    const id = ids[i] as number
    const res = await app.inject({ method: 'PATCH', url: `${PREFIX}/events/${id}`, headers,
      payload: JSON.stringify({ recurrence: { rule: `FREQ=WEEKLY;COUNT=${10 + Math.floor(random() * 41)}` } }) })
    if (res.statusCode !== 200) throw new Error(`PATCH ${id}: ${res.statusCode} ${res.body.slice(0, 300)}`)
    series.push(id)
  }
  const occurrences = Number((await handle.db.selectFrom('event_occurrences').select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow()).n)
  console.log(`${EVENTS} events, ${series.length} weekly series, ${occurrences} occurrences`)

  // Needles of three letters and more (the trigram index), each asked once per run.
  const words = ['jazz', 'market', 'yoga', 'lecture', 'festival', 'concert', 'night', 'open', 'summer', 'walk', 'tour', 'art']
  let n = 0
  // Needles of three and four letters cut from the titles (the trigram index), none asked twice in a run.
  const titles = (await handle.db.selectFrom('events').select('title').limit(3000).execute()).map((r) => r.title.toLowerCase())
  const pool = [...new Set(titles.flatMap((t) => t.split(/[^a-z]+/).filter((w) => w.length >= 3)
    .flatMap((w) => Array.from({ length: w.length - 2 }, (_, i) => [w.slice(i, i + 3), w.slice(i, i + 4)]).flat().filter((x) => x.length >= 3))))]
  for (let i = pool.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1))
    ;[pool[i], pool[j]] = [pool[j] as string, pool[i] as string]
  }
  // Pairs of letters: common needles (thousands of matches), each asked once per measure.
  const pairs = [...new Set(titles.flatMap((t) => t.split(/[^a-z]+/).flatMap((w) => Array.from({ length: Math.max(0, w.length - 1) }, (_, i) => w.slice(i, i + 2)))))]
  let pairAt = 0
  console.log(`${pool.length} needles, ${pairs.length} pairs`)
  const needle = () => {
    const next = pool.pop()
    if (next === undefined) throw new Error('out of needles')
    return next
  }
  const scenarios: Record<string, () => string> = {
    search: () => `/events?search=${encodeURIComponent(needle())}&page=1&per_page=10`,
    'search, a common word, pages 1–20': () => `/events?search=${pick(SEARCH_WORDS)}&page=${1 + (n++ % 20)}&per_page=10`,
    'search, a pair of letters': () => `/events?search=${pairs[pairAt++ % pairs.length] as string}&per_page=10`,
    venue: () => `/events?venue=${pick(venues)}&page=${1 + (n++ % 2)}&per_page=10`,
    'hide_subsequent': () => `/events?hide_subsequent_recurrences=true&page=${1 + (n++ % 50)}&per_page=10`,
    'hide_subsequent + search': () => `/events?hide_subsequent_recurrences=true&search=${encodeURIComponent(needle())}&per_page=10`,
    default: () => `/events?page=${1 + (n++ % 200)}&per_page=10`,
  }
  const measure = async (label: string) => {
    for (const [name, next] of Object.entries(scenarios)) {
      const times: number[] = []
      let count = 0
      for (let i = 0; i < PER_SCENARIO; i++) {
        const url = `${PREFIX}${next()}&n=${i}`
        const before = statements
        const started = performance.now()
        const res = await app.inject({ method: 'GET', url })
        const ms = performance.now() - started
        if (res.statusCode !== 200 && res.statusCode !== 404) throw new Error(`${url}: ${res.statusCode} ${res.body.slice(0, 200)}`)
        if (i >= 5) {
          times.push(ms)
          count += statements - before
        }
      }
      times.sort((a, b) => a - b)
      const p = (q: number) => (times[Math.floor(q * (times.length - 1))] as number).toFixed(2)
      console.log(`| ${label} | ${name} | ${p(0.5)} | ${p(0.9)} | ${(count / times.length).toFixed(1)} |`)
    }
  }
  console.log('| overrides | list | p50 ms | p90 ms | statements/request |\n|---|---|---|---|---|')
  await measure('0')
  await measure('0, again')
  // Occurrences changed alone: a title with a searched word, and a venue, in the default window.
  let made = 0
  while (made < OVERRIDES) {
    const id = pick(series)
    const occs = await handle.db.selectFrom('event_occurrences').select('occurrence').where('event_id', '=', id)
      .where('start_utc', '>=', '2026-12-06 00:00:00').execute()
    if (occs.length === 0) continue
    const occ = pick(occs).occurrence
    const res = await app.inject({ method: 'PATCH', url: `${PREFIX}/events/${id}/occurrences/${encodeURIComponent(occ)}`, headers,
      payload: JSON.stringify({ title: `Special ${pick(words)} evening`, venue: pick(venues) }) })
    if (res.statusCode !== 200) throw new Error(`override ${id}/${occ}: ${res.statusCode} ${res.body.slice(0, 300)}`)
    made++
  }
  await measure(String(OVERRIDES))
} finally {
  await app.close()
  await handle.close()
  rmSync(dir, { recursive: true, force: true })
}
