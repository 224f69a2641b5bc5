/**
 * What the benchmark asks: the data each scenario cycles through (sampled from the loaded database)
 * and the scenarios themselves, in run order (reads first, writes last, so writes cannot change what
 * the reads see).
 */
import SQLite from 'better-sqlite3'
import { SEARCH_WORDS, dayStartMs, prng, sqlDate } from './loader.js'
import type { BenchRequest, Scenario } from './driver.js'

export const PREFIX = '/calendar/events/v1'
const DAY_MS = 86_400_000

export interface Samples {
  /** Published, unprotected en events spread over the id range: single reads. */
  reads: Array<{ id: number; slug: string }>
  /** Other published en events: the fixed set PATCH goes round. */
  patchIds: number[]
  /** Date range + category + venue combinations that each match at least one listed event. */
  filters: Array<{ category: number; venue: number }>
  filterStart: string
  filterEnd: string
  /** Ids for the links of POST bodies (en, published). */
  categories: number[]
  tags: number[]
  venues: number[]
  organizers: number[]
  /** Every published, unprotected, listed en event (up to 1,000,000): random reads and writes. */
  allIds: number[]
  /** Occurrences of the published, unprotected, listed en series (up to 200,000; none without series): `random-by-occurrence`. */
  occurrences: Array<{ id: number; occurrence: string }>
}

const ids = (rows: unknown[]): number[] => rows.map((r) => (r as { id: number }).id)

/** Reads the samples from the database file (read-only; bounded queries). */
export function sampleData(file: string, events: number, now: Date): Samples {
  const db = new SQLite(file, { readonly: true, fileMustExist: true })
  try {
    const stride = Math.max(1, Math.floor(events / 1000))
    const eligible = `language = 'en' and status = 'publish' and password is null and hide_from_listings = 0`
    const reads = db.prepare(`select id, slug from events where ${eligible} and id % ? = 0 order by id limit 1000`)
      .all(stride) as Array<{ id: number; slug: string }>
    const patchIds = ids(db.prepare(`select id from events where ${eligible} and id % ? = ? order by id limit 1000`)
      .all(stride, stride > 1 ? 1 : 0))
    const start = dayStartMs(now)
    const filterStart = sqlDate(start).slice(0, 10)
    const filterEnd = sqlDate(start + 365 * DAY_MS).slice(0, 10)
    const filterStride = Math.max(1, Math.floor(events / 200))
    const filters = db.prepare(`select t.term_id as category, v.venue_id as venue from events e
        join event_venues v on v.event_id = e.id
        join event_terms t on t.event_id = e.id
        join terms c on c.id = t.term_id and c.taxonomy = 'category'
      where e.language = 'en' and e.status = 'publish' and e.hide_from_listings = 0
        and e.start_utc >= ? and e.end_utc <= ? and e.id % ? = 0
      order by e.id limit 50`)
      .all(`${filterStart} 00:00:00`, `${filterEnd} 23:59:59`, filterStride) as Array<{ category: number; venue: number }>
    const categories = ids(db.prepare(`select id from terms where taxonomy = 'category' and language = 'en' order by id limit 50`).all())
    const tags = ids(db.prepare(`select id from terms where taxonomy = 'tag' and language = 'en' order by id limit 200`).all())
    const venues = ids(db.prepare(`select id from venues where language = 'en' and status = 'publish' order by id limit 100`).all())
    const organizers = ids(db.prepare(`select id from organizers where language = 'en' and status = 'publish' order by id limit 100`).all())
    const allIds = ids(db.prepare(`select id from events where ${eligible} order by id limit 1000000`).all())
    for (const [name, list] of Object.entries({ reads, patchIds, filters, categories, tags, venues, organizers, allIds })) {
      if (list.length === 0) throw new Error(`bench: no sample for ${name} in ${file}`)
    }
    // The series' occurrences (recurring events, `--series`): by the primary key, a bounded sample spread over the events.
    const occurrences = db.prepare(`select o.event_id as id, o.occurrence from events e
        join event_occurrences o on o.event_id = e.id
      where e.recurrence is not null and e.language = 'en' and e.status = 'publish' and e.password is null and e.hide_from_listings = 0
      order by o.event_id, o.occurrence limit 200000`).all() as Array<{ id: number; occurrence: string }>
    return { reads, patchIds, filters, filterStart, filterEnd, categories, tags, venues, organizers, allIds, occurrences }
  } finally {
    db.close()
  }
}

/** Round-robin over a non-empty list. */
function cycle<T>(list: readonly T[]): () => T {
  let i = 0
  return () => {
    const value = list[i % list.length] as T
    i++
    return value
  }
}

const get = (path: string): BenchRequest => ({ method: 'GET', path: `${PREFIX}${path}` })

/** The object ceiling: bare fastify serializing a constant event-shaped object per request. */
export function ceilingScenario(): Scenario {
  return { key: 'ceiling', label: 'ceiling: bare fastify GET /event', kind: 'ceiling', expect: 200, next: () => ({ method: 'GET', path: '/event' }) }
}

/** The bytes ceiling (issue 49): bare fastify sending a constant, already-serialized event of the API's size. */
export function bytesCeilingScenario(): Scenario {
  return { key: 'ceiling-bytes', label: 'bytes ceiling: bare fastify GET /bytes', kind: 'ceiling', expect: 200, next: () => ({ method: 'GET', path: '/bytes' }) }
}

/** The list and filter routes (also what `--scale` runs). */
export function listScenarios(s: Samples): Scenario[] {
  const filter = cycle(s.filters)
  const word = cycle(SEARCH_WORDS)
  return [
    { key: 'events-list-10', label: 'GET /events (default window, per_page 10, one URL repeated)', kind: 'page10', expect: 200, next: () => get('/events') },
    { key: 'events-list-50', label: 'GET /events?per_page=50', kind: 'page50', expect: 200, next: () => get('/events?per_page=50') },
    {
      key: 'events-filter',
      label: 'GET /events?start_date&end_date&categories&venue',
      kind: 'page10',
      expect: 200,
      next: () => {
        const f = filter()
        return get(`/events?start_date=${s.filterStart}&end_date=${s.filterEnd}&categories=${f.category}&venue=${f.venue}`)
      },
    },
    { key: 'events-search', label: 'GET /events?search=', kind: 'page10', expect: 200, next: () => get(`/events?search=${word()}`) },
    // The iCalendar feed of the default window: every match up to CALENDAR_ICAL_MAX_EVENTS (2000 by default).
    { key: 'events-ical', label: 'GET /events?ical=1 (feed of the default window)', kind: 'page50', expect: 200, next: () => get('/events?ical=1') },
    { key: 'venues-list', label: 'GET /venues', kind: 'page10', expect: 200, next: () => get('/venues') },
    { key: 'categories-list', label: 'GET /categories', kind: 'page10', expect: 200, next: () => get('/categories') },
  ]
}

export function allScenarios(s: Samples, key: string, now: Date): Scenario[] {
  const byId = cycle(s.reads)
  const bySlug = cycle(s.reads)
  const patchTarget = cycle(s.patchIds)
  const auth = { authorization: `Bearer ${key}`, 'content-type': 'application/json' }
  const runTag = Date.now().toString(36)
  const today = dayStartMs(now)
  let posted = 0
  let patched = 0
  const repeated = s.reads[0]?.id
  return [
    // One URL again and again (a front page, an embedded widget, a monitoring probe).
    { key: 'event-by-id-repeated', label: 'GET /events/{id}, one URL repeated', kind: 'single', expect: 200, next: () => get(`/events/${repeated}`) },
    { key: 'event-by-id', label: 'GET /events/{id}', kind: 'single', expect: 200, next: () => get(`/events/${byId().id}`) },
    { key: 'event-by-slug', label: 'GET /events/by-slug/{slug}', kind: 'single', expect: 200, next: () => get(`/events/by-slug/${bySlug().slug}`) },
    ...listScenarios(s),
    {
      key: 'event-create',
      label: 'POST /events',
      kind: 'write',
      expect: 201,
      headers: auth,
      next: () => {
        const n = ++posted
        const start = today + (1 + (n % 700)) * DAY_MS + 19 * 3_600_000
        const pick = (list: number[], offset = 0) => list[(n + offset) % list.length] as number
        return {
          method: 'POST',
          path: `${PREFIX}/events`,
          body: JSON.stringify({
            title: `Bench Event ${runTag} ${n}`,
            description: 'Created by the benchmark: an evening of music and conversation with local artists.',
            start_date: sqlDate(start),
            end_date: sqlDate(start + 2 * 3_600_000),
            timezone: 'UTC',
            status: 'publish',
            cost: '€ 12',
            categories: [pick(s.categories)],
            tags: [pick(s.tags), pick(s.tags, 7)],
            venue: [pick(s.venues)],
            organizer: [pick(s.organizers)],
          }),
        }
      },
    },
    {
      key: 'event-update',
      label: 'PATCH /events/{id}',
      kind: 'write',
      expect: 200,
      headers: auth,
      next: () => {
        const n = ++patched
        return {
          method: 'PATCH',
          path: `${PREFIX}/events/${patchTarget()}`,
          body: JSON.stringify({ cost: `€ ${10 + (n % 90)}`, featured: n % 2 === 0 }),
        }
      },
    },
  ]
}

/**
 * Traffic where every request differs: random events by id, random filtered lists on random pages,
 * random searches, and a mix of reads with interleaved writes (90 % reads, 10 % PATCH of random
 * events), which is what a read cache meets on a real site. Pages past the last are 404: accepted.
 */
export function realScenarios(s: Samples, key: string, now: Date, seed = 20261125): Scenario[] {
  // Seeded: every run sends the same "random" traffic (`seed`: another sequence, e.g. a later round of --series-compare).
  const rnd = prng(seed)
  const pick = <T>(list: readonly T[]): T => list[Math.floor(rnd() * list.length)] as T
  const auth = { authorization: `Bearer ${key}`, 'content-type': 'application/json' }
  const today = dayStartMs(now)
  const byId = (): BenchRequest => get(`/events/${pick(s.allIds)}`)
  const filtered = (): BenchRequest => {
    const page = 1 + Math.floor(rnd() * 3)
    switch (Math.floor(rnd() * 5)) {
      case 0: return get(`/events?categories=${pick(s.categories)}&page=${page}`)
      case 1: return get(`/events?venue=${pick(s.venues)}&page=${page}`)
      case 2: return get(`/events?tags=${pick(s.tags)}&featured=true`)
      case 3: return get(`/events?organizer=${pick(s.organizers)}&page=${page}`)
      default: {
        const start = today + Math.floor(rnd() * 600) * DAY_MS
        return get(`/events?start_date=${sqlDate(start).slice(0, 10)}&end_date=${sqlDate(start + 30 * DAY_MS).slice(0, 10)}&page=${page}`)
      }
    }
  }
  const letters = 'abcdefghiklmnoprstuvwy'
  const search = (): BenchRequest => {
    // A known word, or a random fragment of two or three letters (most match something, none is repeated for long).
    const word = rnd() < 0.5 ? pick(SEARCH_WORDS) : Array.from({ length: 2 + Math.floor(rnd() * 2) }, () => pick([...letters])).join('')
    return get(`/events?search=${word}&page=${1 + Math.floor(rnd() * 2)}`)
  }
  // Every PATCH changes its event, also when a kept database sees the same seeded traffic again (a PATCH
  // that changes nothing writes nothing, and would measure as a read).
  const runTag = Date.now().toString(36)
  let patched = 0
  const patch = (): BenchRequest => {
    const n = ++patched
    const body = rnd() < 0.5
      ? { cost: `€ ${10 + (n % 90)} (${runTag})` }
      : rnd() < 0.5 ? { featured: n % 2 === 0, title: `Bench edit ${runTag} ${n}` } : { title: `Bench edit ${runTag} ${n}` }
    return { method: 'PATCH', path: `${PREFIX}/events/${pick(s.allIds)}`, body: JSON.stringify(body), headers: auth }
  }
  const mixed = (): BenchRequest => {
    const r = rnd()
    return r < 0.1 ? patch() : r < 0.55 ? byId() : filtered()
  }
  // The series' occurrences in a seeded order, each asked once until all have been (200,000 at 20,000 events).
  const occurrences = [...s.occurrences]
  for (let i = occurrences.length - 1; i > 0; i--) {
    const j = Math.floor(rnd() * (i + 1))
    ;[occurrences[i], occurrences[j]] = [occurrences[j] as Samples['occurrences'][number], occurrences[i] as Samples['occurrences'][number]]
  }
  const occurrence = cycle(occurrences)
  const byOccurrence = (): BenchRequest => {
    const o = occurrence()
    return get(`/events/${o.id}/occurrences/${encodeURIComponent(o.occurrence)}`)
  }
  return [
    { key: 'random-by-id', label: 'random GET /events/{id}', kind: 'single', expect: 200, next: byId },
    { key: 'random-filter', label: 'random filtered GET /events, random page', kind: 'page10', expect: 200, accept: [404], next: filtered },
    { key: 'random-search', label: 'random GET /events?search=', kind: 'page10', expect: 200, accept: [404], next: search },
    // Only with series (`--series`): one occurrence of a series, every request a different one.
    ...(occurrences.length === 0 ? [] : [
      { key: 'random-by-occurrence', label: 'random GET /events/{id}/occurrences/{occurrence}', kind: 'single' as const, expect: 200, next: byOccurrence },
    ]),
    // The reads are the anonymous ones above; only the PATCH carries the key (an authenticated read is an editor's view).
    { key: 'mixed-90-10', label: 'mixed: 90 % random reads above, 10 % PATCH', kind: 'page10', expect: 200, accept: [404], next: mixed },
  ]
}
