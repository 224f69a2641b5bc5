/**
 * Recurring series in the benchmark's database (`npm run bench -- --series 0.2`, issue 45's speed section): after
 * the loader built the file and before any server starts, a fraction of its events is made series through the API
 * in process (`buildApp` + `inject`, a PATCH of `recurrence` each, so the rows are exactly what the server writes),
 * then a few hundred occurrences are changed alone (a PATCH of one occurrence: a title with a searched word, a venue)
 * so that lists and reads meet overrides too.
 *
 * The series: every event whose place in id order falls on the fraction (0.2: every fifth, whatever its language or
 * status), a seeded mix of weekly (half), daily (a quarter) and monthly (a quarter) rules with COUNT 20–72 (46 on
 * average), one in thirty of them monthly without an end (unbounded: the horizon bounds its rows): at 20,000 events and 0.2, 4,000 series and about 200,000 occurrences in all, the monthly ones up to
 * six years ahead. Deterministic: the same file and fraction give the same series.
 */
import { buildApp } from '../../src/app.js'
import { defaultConfig } from '../../src/config.js'
import { openDatabase } from '../../src/db/database.js'
import { withTransaction } from '../../src/db/unit-of-work.js'
import { generateKey } from '../../src/lib/api-keys.js'
import { formatUtc } from '../../src/lib/dates.js'
import { createUserWithKey } from '../../src/repositories/users.js'
import { SEARCH_WORDS, prng } from './loader.js'

const PREFIX = '/calendar/events/v1'

/** Occurrences changed alone per 20,000 events (at least one series each). */
const OVERRIDES_PER_20000 = 300

export interface SeriesResult {
  fraction: number
  series: number
  occurrences: number
  overrides: number
  seconds: number
}

/**
 * The rule of the `n`-th series (seeded): weekly, daily or monthly, COUNT 20–72; one in thirty monthly without an
 * end (the horizon, five years by default, bounds its rows: about 60).
 */
function rule(random: () => number): string {
  const count = 20 + Math.floor(random() * 53)
  const r = random()
  if (random() < 1 / 30) return 'FREQ=MONTHLY'
  const freq = r < 0.5 ? 'WEEKLY' : r < 0.75 ? 'DAILY' : 'MONTHLY'
  return `FREQ=${freq};COUNT=${count}`
}

/** Makes `fraction` of the events in the SQLite file at `file` series, and some of their occurrences overrides. */
export async function makeSeries(file: string, fraction: number, log: (message: string) => void): Promise<SeriesResult> {
  const started = performance.now()
  const handle = await openDatabase(file)
  const key = generateKey()
  await withTransaction(handle.db, (trx) => createUserWithKey(trx, 'editor', key, formatUtc(new Date()), 'bench series'))
  const app = await buildApp({ db: handle.db, config: defaultConfig({ databaseUrl: file, publicUrl: 'http://calendar.bench' }) })
  const headers = { authorization: `Bearer ${key}`, 'content-type': 'application/json' }
  const random = prng(45)
  try {
    const ids = (await handle.db.selectFrom('events').select('id').where('recurrence', 'is', null).where('status', '!=', 'trash').orderBy('id').execute()).map((r) => r.id)
    const series: number[] = []
    for (let i = 0; i < ids.length; i++) {
      if (Math.floor((i + 1) * fraction) === Math.floor(i * fraction)) continue
      const id = ids[i] as number
      const res = await app.inject({ method: 'PATCH', url: `${PREFIX}/events/${id}`, headers, payload: JSON.stringify({ recurrence: { rule: rule(random) } }) })
      if (res.statusCode !== 200) throw new Error(`bench series: PATCH ${id}: ${res.statusCode} ${res.body.slice(0, 300)}`)
      series.push(id)
      if (series.length % 1000 === 0) log(`  ${series.length.toLocaleString('en')} series made`)
    }
    // Published en series in the default window and after: the occurrences lists and reads meet.
    const listed = (await handle.db.selectFrom('events').select('id').where('recurrence', 'is not', null)
      .where('language', '=', 'en').where('status', '=', 'publish').where('password', 'is', null).orderBy('id').execute()).map((r) => r.id)
    const venues = (await handle.db.selectFrom('venues').select('id').where('status', '=', 'publish').where('language', '=', 'en').orderBy('id').limit(100).execute()).map((r) => r.id)
    const today = formatUtc(new Date())
    const wanted = listed.length === 0 ? 0 : Math.max(1, Math.round(OVERRIDES_PER_20000 * ids.length / 20_000 * fraction / 0.2))
    let overrides = 0
    for (let attempt = 0; overrides < wanted && attempt < wanted * 10; attempt++) {
      const id = listed[Math.floor(random() * listed.length)] as number
      const occurrences = await handle.db.selectFrom('event_occurrences').select('occurrence').where('event_id', '=', id)
        .where('start_utc', '>=', today).where('overridden', '=', 0).orderBy('start_utc').limit(100).execute()
      if (occurrences.length === 0) continue
      const occurrence = (occurrences[Math.floor(random() * occurrences.length)] as { occurrence: string }).occurrence
      const body: Record<string, unknown> = { title: `Special ${SEARCH_WORDS[overrides % SEARCH_WORDS.length]} evening` }
      if (venues.length > 0 && random() < 0.5) body.venue = venues[Math.floor(random() * venues.length)]
      const res = await app.inject({ method: 'PATCH', url: `${PREFIX}/events/${id}/occurrences/${encodeURIComponent(occurrence)}`, headers, payload: JSON.stringify(body) })
      if (res.statusCode !== 200) throw new Error(`bench series: PATCH ${id}/occurrences/${occurrence}: ${res.statusCode} ${res.body.slice(0, 300)}`)
      overrides++
    }
    const count = await handle.db.selectFrom('event_occurrences').select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow()
    const result = { fraction, series: series.length, occurrences: Number(count.n), overrides, seconds: (performance.now() - started) / 1000 }
    log(`series: ${result.series.toLocaleString('en')} of ${ids.length.toLocaleString('en')} events, ${result.occurrences.toLocaleString('en')} occurrences in all,`
      + ` ${result.overrides} overrides, in ${result.seconds.toFixed(1)} s`)
    return result
  } finally {
    await app.close()
    await handle.close()
  }
}
