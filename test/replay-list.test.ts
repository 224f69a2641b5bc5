/**
 * Cold lists (http/replay.ts "Cold lists", issue 49): a plain anonymous JSON `GET /events` (no query, or a query of
 * plain parameters: no escapes, brackets, repeated names, `ml_language` or `ical`) is answered before routing, its
 * query normalised and validated as the route does it, its page made by the same functions as the full path's
 * (handlers/event-lists.ts) and sent with the headers of a full path's list answer (its own X-Total, X-Total-Pages,
 * Link, length and request id). Over real HTTP (`inject` does not pass there). The oracle is the full path over the
 * same socket: the same request with an `If-None-Match` naming no tag (never replayed nor answered cold), compared
 * header by header (in order, as on the wire) and byte by byte, over seeded random queries, the refused ones
 * (400, the page past the last 404) among them, with several request headers, after writes. Not cold: authenticated
 * requests, compressed answers, other query forms; each answered as the full path answers. SQLite only takes them
 * (its look answers at once); on PostgreSQL every list goes the full path, which the same comparison checks too.
 */
import t, { type Test } from 'tap'
import { API } from './helpers/build.js'
import { TEST_ENGINE, writeFromAnotherHandle } from './helpers/database.js'
import { setup, type Setup } from './helpers/events.js'
import { listenAndGet, PLAIN_READ_VARIANTS, sameAsFull, type Answer, type Get } from './helpers/socket-answers.js'

/** A seeded generator (the same queries on every run). */
function prng(seed: number): () => number {
  let s = seed
  return () => (s = (s * 16807) % 2147483647) / 2147483647
}

interface Data {
  categories: number[]
  tags: number[]
  venues: number[]
  organizers: number[]
  events: number[]
}

/** Events of many shapes over several months: terms, venues, organizers, featured, a series, a protected one, a draft. */
async function data(s: Setup): Promise<Data> {
  const categories = [(await s.category('Jazz')).id, (await s.category('Blues')).id]
  const tags = [(await s.tag('Outdoor')).id, (await s.tag('Free')).id]
  const venues = [(await s.venue({ venue: 'Hall', city: 'Vienna', status: 'publish' })).id, (await s.venue({ venue: 'Club', status: 'publish' })).id]
  const organizers = [(await s.organizer({ organizer: 'Society', status: 'publish' })).id]
  const events: number[] = []
  for (let i = 0; i < 14; i++) {
    const day = String(1 + (i * 2) % 28).padStart(2, '0')
    const month = String(7 + (i % 3)).padStart(2, '0')
    const e = await s.event(`Event ${i} "ünïcödé"`, {
      status: 'publish',
      start_date: `2026-${month}-${day} 18:00:00`,
      end_date: `2026-${month}-${day} 21:00:00`,
      featured: i % 3 === 0,
      categories: [categories[i % 2] ?? 0],
      tags: i % 2 === 0 ? [tags[i % 4 === 0 ? 0 : 1] ?? 0] : [],
      venue: [venues[i % 2] ?? 0],
      ...(i % 4 === 1 ? { organizer: [organizers[0] ?? 0] } : {}),
    })
    events.push(e.id)
  }
  events.push((await s.event('Weekly', { status: 'publish', categories: [categories[0] ?? 0], recurrence: { rule: 'FREQ=WEEKLY;COUNT=6' } })).id)
  const locked = await s.event('Protected', { status: 'publish', categories: [categories[1] ?? 0] })
  t.equal((await s.patch(locked.id, { password: 'open sesame' })).statusCode, 200)
  events.push(locked.id)
  events.push((await s.event('Draft', { status: 'draft', categories: [categories[0] ?? 0] })).id)
  // Documents stored for most (a read offers one), as a server's fill does.
  for (const id of events) await s.get(id)
  await s.app.eventDocuments.settled()
  return { categories, tags, venues, organizers, events }
}

/** A random list query: plain parameters, valid and not (refusals included), in a random order. */
function randomQuery(rnd: () => number, d: Data): string {
  const pick = <T>(list: readonly T[]): T => list[Math.floor(rnd() * list.length)] as T
  const candidates: Array<() => string> = [
    () => `page=${pick(['1', '2', '3', '0', '9', 'x', '01'])}`,
    () => `per_page=${pick(['1', '2', '3', '5', '50', '60', '0'])}`,
    () => `categories=${pick([...d.categories.map(String), '999', 'jazz', `${d.categories.join(',')}`])}`,
    () => `tags=${pick([...d.tags.map(String), '0', 'outdoor'])}`,
    () => `venue=${pick([...d.venues.map(String), '4242', 'abc'])}`,
    () => `organizer=${pick([...d.organizers.map(String), '777'])}`,
    () => `featured=${pick(['true', 'false', '1', '0', 'maybe'])}`,
    () => `start_date=${pick(['2026-07-01', '2026-08-15', '2026-13-45', 'today', 'now', '2026-07-01T10:00:00Z', '1782000000'])}`,
    () => `end_date=${pick(['2026-07-31', '2026-09-30', '2026-02-30', 'tomorrow'])}`,
    () => `starts_after=${pick(['2026-07-10', 'yesterday'])}`,
    () => `ends_before=${pick(['2026-08-01', 'junk'])}`,
    () => `search=${pick(['event', 'ev', 'e', 'weekly', 'zzz'])}`,
    () => `status=${pick(['publish', 'draft', 'publish,draft'])}`,
    () => `include=${pick([...d.events.slice(0, 4).map(String), `${d.events[0] ?? 0},${d.events[1] ?? 0}`])}`,
    () => `hide_subsequent_recurrences=${pick(['true', 'false'])}`,
    () => `strict_dates=${pick(['true', '0'])}`,
    () => `post_parent=${pick(['1', '0', '99999'])}`,
    () => `ticketed=${pick(['false', 'true'])}`,
    () => `geoloc=${pick(['true', 'false'])}`,
    () => `modified_after=${pick(['2020-01-01', 'bad'])}`,
    () => `unknown_param=${pick(['1', 'x'])}`,
  ]
  const chosen = new Map<number, string>()
  const count = Math.floor(rnd() * 4)
  for (let i = 0; i < count; i++) {
    const at = Math.floor(rnd() * candidates.length)
    chosen.set(at, (candidates[at] ?? (() => ''))())
  }
  return chosen.size === 0 ? '' : `?${[...chosen.values()].join('&')}`
}

/** A read of `path` and the full path's answer to it, equal header by header and byte by byte; whether it was a cold list. */
async function same(t: Test, s: Setup, wire: Get, path: string, headers: Record<string, string>, label: string): Promise<{ cold: boolean; answer: Answer }> {
  const { taken, answer } = await sameAsFull(t, wire, () => s.app.replay.lists, path, headers, label)
  return { cold: taken, answer }
}

t.test('a cold list is the full path\'s answer, header by header and byte by byte, over random queries and after writes', async (t) => {
  const s = await setup(t, { file: `${t.testdir()}/calendar.db` })
  const wire = await listenAndGet(t, s.app)
  const d = await data(s)
  const variants = PLAIN_READ_VARIANTS
  const rounds: Array<[string, () => Promise<unknown>]> = [
    ['as stored', async () => undefined],
    ['a category renamed', () => s.inject({ method: 'PATCH', url: `${API}/categories/${d.categories[0] ?? 0}`, headers: s.editor, payload: { name: 'Jazz & more' } })],
    ['an event moved and featured', () => s.patch(d.events[2] ?? 0, { start_date: '2026-07-02 09:00:00', end_date: '2026-07-02 10:00:00', featured: true })],
    ['an event written from another handle', () => writeFromAnotherHandle(s.url, d.events[3] ?? 0)],
  ]
  const rnd = prng(20261207)
  let colds = 0
  const statuses = new Map<number, number>()
  for (const [what, write] of rounds) {
    await write()
    for (const headers of variants) {
      // Each variant's first requests are the full path's (its templates: a page with a Link, one without).
      await wire(`${API}/events?per_page=1`, headers)
      await wire(`${API}/events?per_page=50`, headers)
      for (let i = 0; i < 24; i++) {
        const path = `${API}/events${randomQuery(rnd, d)}`
        const { cold, answer } = await same(t, s, wire, path, headers, `${what}, ${path}, ${JSON.stringify(headers)}`)
        if (cold) colds += 1
        statuses.set(answer.status, (statuses.get(answer.status) ?? 0) + 1)
        if (headers['x-request-id'] !== undefined) t.equal(answer.id, 'probe-17', 'the request id sent is followed')
        // A list asked again is answered the same (the read cache's hot answer, or the replay's recording).
        if (i % 7 === 0) await same(t, s, wire, path, headers, `${what}, ${path} again`)
      }
      await s.app.eventDocuments.settled()
    }
  }
  t.ok((statuses.get(200) ?? 0) > 100 && (statuses.get(400) ?? 0) > 40 && (statuses.get(404) ?? 0) > 0, `answers compared by status: ${JSON.stringify([...statuses])}`)
  if (TEST_ENGINE === 'sqlite') t.ok(colds > 150, `lists answered cold: ${colds}`)
  else t.equal(colds, 0, 'PostgreSQL: every list goes the full path')
})

t.test('authenticated lists, coded answers and other query forms are the full path\'s', async (t) => {
  const s = await setup(t, { file: `${t.testdir()}/calendar.db` })
  const wire = await listenAndGet(t, s.app)
  const d = await data(s)
  await wire(`${API}/events?per_page=1`)
  await wire(`${API}/events?per_page=50`)
  const category = d.categories[0] ?? 0
  const cases: Array<[string, Record<string, string>]> = [
    [`?categories=${category}`, { authorization: s.editor.authorization ?? '' }],
    [`?status=draft`, { authorization: s.editor.authorization ?? '' }],
    [`?categories=${category}`, { 'accept-encoding': 'gzip' }],
    [`?categories=${category}&ml_language=en`, {}],
    [`?categories=${category}&ical=false`, {}],
    [`?categories=${category}&ical=true`, {}],
    [`?categories=${category}`, { accept: 'text/calendar' }],
    [`?categories[]=${category}`, {}],
    [`?categories=${category}&categories=${d.categories[1] ?? 0}`, {}],
    [`?search=ev%65nt`, {}],
    [`?search=e+v`, {}],
    [`/?categories=${category}`, {}],
    [`?`, {}],
  ]
  for (const [query, headers] of cases) {
    const before = s.app.replay.lists
    const path = `${API}/events${query}`
    await same(t, s, wire, path, headers, `${path} ${JSON.stringify(headers)}`)
    t.equal(s.app.replay.lists, before, `${path} ${JSON.stringify(headers)}: not answered cold`)
  }
  // The plain form of the first is answered cold, and the editor's answer differs from it (a draft shows).
  const before = s.app.replay.lists
  const anonymous = await wire(`${API}/events?categories=${category}`)
  if (TEST_ENGINE === 'sqlite') t.equal(s.app.replay.lists, before + 1, 'the plain anonymous form is answered cold')
  const editor = await wire(`${API}/events?categories=${category}`, { authorization: s.editor.authorization ?? '' })
  t.not(anonymous.headers.join('\n'), editor.headers.join('\n'), 'the editor sees more (its X-Total)')
})
