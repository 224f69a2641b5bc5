/**
 * A list with link filters remembers every matching id in list order (repositories/event-filters.ts
 * `linkedIds`). When only events change, the read cache keeps it with the changed events' ids and the
 * next read rechecks those events against the filter (read-cache.ts `Recheck`) instead of reading the list
 * again: none of them in the list and none matching now, it still holds. The oracle: a second app on the
 * same database with the read cache off (every answer computed), on its own connection, as another node.
 * Seeded random edits (through either app) move events in and out of categories, venues and the date
 * window, reorder them, publish and unpublish, feature, hide, retitle, or change nothing a list shows;
 * after each, every list is read from both apps: status, body, X-Total, X-Total-Pages, Link and ETag must
 * be equal; then again after bursts of edits (several changed events rechecked at once). And the recheck
 * must have done its work: lists kept across edits, not read again; also lists past their first ids (kept with each
 * event's number of matches), some of whose events are series.
 */
import t, { type Test } from 'tap'
import { join } from 'node:path'
import { buildApp } from '../src/app.js'
import { defaultConfig } from '../src/config.js'
import { openDatabase, type LoggedStatement } from '../src/db/database.js'
import { withTransaction } from '../src/db/unit-of-work.js'
import { createCompilers } from '../src/http/compilers.js'
import { generateKey } from '../src/lib/api-keys.js'
import { linkedPlanBounds, windowPlanBounds } from '../src/repositories/event-filters.js'
import { createUserWithKey } from '../src/repositories/users.js'
import { SPEC, contractProblems } from './helpers/contract.js'
import { freshDatabaseUrl } from './helpers/database.js'
import { propertyRuns, propertySeed, seededRandom } from './helpers/property.js'
import { API, BASE_URL, NOW, decoded } from './helpers/build.js'

const EDITS = propertyRuns(80)
// Four differential runs of EDITS seeded edits, every list read from both apps after each: on PostgreSQL, on a loaded
// machine, the file has run past tap's 600 s a file (package.json), so it asks for twice that (the runner's timer too).
t.setTimeout(1_200_000)

/**
 * The property, the cached app's lists of links holding every match when they are `allUpTo` at most, else
 * their first `allUpTo` and the total (pages past those read by their own statement); the plain app's, every match.
 */
async function differential(t: Test, allUpTo: number, windows = false, keptUpTo = windowPlanBounds.keptUpTo): Promise<void> {
  // The cached app lists with `allUpTo`; the plain one, the oracle, with the default bound (every match of these lists at once).
  const bound = linkedPlanBounds.allUpTo
  const windowBound = windowPlanBounds.keptUpTo
  t.teardown(() => {
    linkedPlanBounds.allUpTo = bound
    windowPlanBounds.keptUpTo = windowBound
  })
  const partial = allUpTo < 24
  const url = await freshDatabaseUrl(t, join(t.testdir(), 'calendar.db'))
  const statements: LoggedStatement[] = []
  const cachedHandle = await openDatabase(url, { log: (s) => statements.push(s) })
  const plainHandle = await openDatabase(url)
  const compilers = createCompilers()
  const app = async (handle: typeof cachedHandle, cacheEntries: number) =>
    buildApp({ db: handle.db, config: defaultConfig({ publicUrl: BASE_URL, cacheEntries, eventDocuments: false }), now: () => NOW, spec: SPEC, compilers })
  const cached = await app(cachedHandle, 2500)
  const plain = await app(plainHandle, 0)
  t.teardown(async () => {
    await cached.close()
    await plain.close()
    await cachedHandle.close()
    await plainHandle.close()
  })
  const key = generateKey()
  await withTransaction(plainHandle.db, (trx) => createUserWithKey(trx, 'editor', key, '2026-01-01 00:00:00', 'recheck'))
  const headers = { authorization: `Bearer ${key}`, 'content-type': 'application/json' }
  const rnd = seededRandom(propertySeed(20261127))
  const pick = <T>(list: readonly T[]): T => list[Math.floor(rnd() * list.length)] as T

  const created = async (path: string, body: Record<string, unknown>): Promise<number> => {
    const res = await plain.inject({ method: 'POST', url: `${API}${path}`, headers, payload: JSON.stringify(body) })
    t.equal(res.statusCode, 201, `POST ${path}`)
    return res.json<{ id: number }>().id
  }
  const categories = [await created('/categories', { name: 'Jazz' }), await created('/categories', { name: 'Rock' }), await created('/categories', { name: 'Folk' })]
  const tags = [await created('/tags', { name: 'Outdoor' }), await created('/tags', { name: 'Free' })]
  const venues = [await created('/venues', { venue: 'Hall' }), await created('/venues', { venue: 'Park' })]
  // Days around NOW (2026-06-15): some before it (outside the default window), most after.
  const day = () => `2026-${String(5 + Math.floor(rnd() * 4)).padStart(2, '0')}-${String(1 + Math.floor(rnd() * 28)).padStart(2, '0')} ${String(8 + Math.floor(rnd() * 12)).padStart(2, '0')}:00:00`
  const events: number[] = []
  for (let i = 0; i < 24; i++) {
    const start = day()
    events.push(await created('/events', {
      title: `Event ${i}`, start_date: start, end_date: start.replace(/ (\d\d):/, (_m, h: string) => ` ${String(Number(h) + 2).padStart(2, '0')}:`),
      status: 'publish', categories: [pick(categories)], tags: rnd() < 0.5 ? [pick(tags)] : [], venue: [pick(venues)], featured: rnd() < 0.3,
      // A few series: an event's occurrences on both sides of a list's first ids, moved together by an edit of its dates.
      ...(i % 6 === 0 ? { recurrence: { rule: 'FREQ=WEEKLY;COUNT=6' } } : {}),
    }))
  }
  // Lists without link filters (date windows, the default one; their matches kept by event: `windowMatches`).
  const windowLists = [
    '/events', '/events?start_date=2026-07-01&end_date=2026-07-31', '/events?start_date=2026-07-01&end_date=2026-07-31&per_page=3&page=2',
    '/events?start_date=2026-06-10&end_date=2026-06-20&hide_subsequent_recurrences=true', '/events?start_date=2026-05-01&end_date=2026-08-31&featured=true&per_page=5',
    '/events?starts_after=2026-07-15&per_page=4', '/events?ends_before=2026-06-30', '/events?start_date=2026-07-05&end_date=2026-07-05',
    `/events?start_date=${encodeURIComponent('2026-07-05 10:00:00')}&end_date=${encodeURIComponent('2026-07-05 12:00:00')}&strict_dates=true`,
  ]
  const linkLists = [
    `/events?categories=${categories[0]}`, `/events?categories=${categories[0]},${categories[1]}`, `/events?categories=${categories[2]}&per_page=3&page=2`,
    `/events?venue=${venues[0]}`, `/events?venue=${venues[1]}&per_page=4`, `/events?tags=${tags[0]}&featured=true`,
    `/events?categories=${categories[1]}&venue=${venues[1]}`, `/events?tags=${tags[1]}&start_date=2026-07-01&end_date=2026-08-31`,
    `/events?categories=${categories[1]}&per_page=2`, `/events?venue=${venues[0]}&per_page=2&page=2`, `/events?tags=${tags[0]}&per_page=1&page=3`,
    // Pages made of a list's first ids when it keeps only those (three in the second test).
    `/events?categories=${categories[0]}&per_page=3`, `/events?venue=${venues[1]}&per_page=3`, `/events?categories=${categories[2]}&per_page=1&page=2`,
  ]
  const lists = windows ? windowLists : linkLists
  const edits = [
    () => ({ cost: `€ ${Math.floor(rnd() * 50)}` }),
    () => ({ categories: [pick(categories)] }),
    () => ({ categories: [] }),
    () => ({ venue: [pick(venues)] }),
    () => ({ tags: [pick(tags)] }),
    () => {
      const start = day()
      return { start_date: start, end_date: start.replace(/ \d\d:/, ' 23:') }
    },
    () => ({ featured: rnd() < 0.5 }),
    () => ({ status: pick(['draft', 'publish', 'publish']) }),
    () => ({ hide_from_listings: rnd() < 0.3 }),
    () => ({ title: `Retitled ${Math.floor(rnd() * 1000)}` }),
    // The date windows' edges: on a window's first and last second, across its start, across its end.
    ...(windows ? [
      () => pick([
        { start_date: '2026-07-05 00:00:00', end_date: '2026-07-05 23:59:59' }, { start_date: '2026-07-01 00:00:00', end_date: '2026-07-01 01:00:00' },
        { start_date: '2026-06-30 23:00:00', end_date: '2026-07-01 00:30:00' }, { start_date: '2026-07-31 23:00:00', end_date: '2026-08-01 01:00:00' },
        { start_date: '2026-07-05 10:00:00', end_date: '2026-07-05 12:00:00' }, { start_date: '2026-07-05 09:59:59', end_date: '2026-07-05 12:00:00' },
        { start_date: '2026-07-05 10:00:00', end_date: '2026-07-05 12:00:01' }, { start_date: '2026-06-15 00:00:00', end_date: '2026-06-15 01:00:00' },
        { start_date: '2026-06-14 23:00:00', end_date: '2026-06-15 00:00:00' }, { start_date: '2026-07-15 00:00:00', end_date: '2026-07-15 02:00:00' },
      ]),
      // Series made and unmade: occurrences added to windows and taken out of them.
      () => ({ recurrence: { rule: pick(['FREQ=WEEKLY;COUNT=5', 'FREQ=DAILY;COUNT=12', 'FREQ=DAILY;INTERVAL=3;COUNT=8']) } }),
      () => ({ recurrence: null }),
    ] : []),
  ]
  // An occurrence of a series moved on its own (an override), into a window or out of it, or changed otherwise.
  const overrideEdit = async (): Promise<{ url: string; body: Record<string, unknown> } | undefined> => {
    const rows = await plainHandle.db.selectFrom('event_occurrences').select(['event_id', 'occurrence']).where('event_id', 'in', events)
      .where('occurrence', '!=', '').execute()
    const series = rows.filter((r) => rows.filter((o) => o.event_id === r.event_id).length > 1)
    if (series.length === 0) return undefined
    const o = pick(series)
    const start = pick(['2026-07-05 10:00:00', '2026-07-01 00:00:00', '2026-07-31 23:59:59', '2026-06-12 18:00:00', '2026-09-20 18:00:00', day()])
    const body = pick([{ start_date: start, end_date: start.slice(0, 11) + '23:59:59' }, { title: `Alone ${Math.floor(rnd() * 100)}` }, { venue: [pick(venues)] }])
    return { url: `${API}/events/${o.event_id}/occurrences/${encodeURIComponent(o.occurrence)}`, body }
  }
  const edit = async (id: number, through: typeof cached): Promise<string> => {
    const alone = windows && rnd() < 0.2 ? await overrideEdit() : undefined
    const url = alone?.url ?? `${API}/events/${id}`
    const body = alone?.body ?? pick(edits)()
    const res = await through.inject({ method: 'PATCH', url, headers, payload: JSON.stringify(body) })
    t.equal(res.statusCode, 200, `PATCH ${url} ${JSON.stringify(body)}`)
    return `${url} ${JSON.stringify(body)}`
  }

  // The statements over the events' occurrences (`o`, migration 0017) that list a filter's links and recheck changed events.
  const allLinked = () => statements.filter((s) => /^select "o"\."event_id" as "id", "o"\."occurrence", count\(\*\) over \(\) as "total" from \(+select (distinct )?l\.event_id/.test(s.sql)).length
  const windowed = () => statements.filter((s) => /^select (group_concat\(w\.id\)|string_agg\(w\.id::text, ','\)) as "ids"/.test(s.sql)).length
  const rechecks = () => statements.filter((s) => /^select "o"\."event_id" as "id", "o"\."occurrence", "o"\."start_utc" from \(select (json_each\.value as id|c\.id) from (json_each|unnest)/.test(s.sql)).length
  const compare = async (path: string) => {
    linkedPlanBounds.allUpTo = allUpTo
    windowPlanBounds.keptUpTo = keptUpTo
    const a = decoded(await cached.inject({ url: `${API}${path}` }))
    linkedPlanBounds.allUpTo = bound
    windowPlanBounds.keptUpTo = windowBound
    const b = decoded(await plain.inject({ url: `${API}${path}` }))
    const shown = (res: typeof a) => ({ status: res.statusCode, body: res.body, total: res.headers['x-total'], pages: res.headers['x-total-pages'], link: res.headers.link, etag: res.headers.etag })
    t.same(contractProblems('GET', `${API}${path}`, a), [], `GET ${path} keeps the contract`)
    return JSON.stringify(shown(a)) === JSON.stringify(shown(b)) ? undefined : { path, cached: shown(a), fresh: shown(b) }
  }

  for (const path of lists) t.equal(await compare(path), undefined, `${path} before any edit`)
  const readBefore = allLinked()
  const windowedBefore = windowed()
  let differences = 0
  for (let i = 0; i < EDITS; i++) {
    const through = rnd() < 0.5 ? cached : plain
    const done = await edit(pick(events), through)
    for (const path of lists) {
      const difference = await compare(path)
      if (difference !== undefined) {
        differences++
        t.fail(`after edit ${i} (${done} through the ${through === cached ? 'cached' : 'plain'} app)`, difference)
      }
    }
  }
  t.equal(differences, 0, `every list equal after each of ${EDITS} edits (${EDITS * lists.length} reads)`)
  const readAgain = allLinked() - readBefore
  if (windows) {
    // The windows' matches kept and rechecked: far fewer read again than reads after edits.
    const again = windowed() - windowedBefore
    if (keptUpTo >= 1000) t.ok(rechecks() > EDITS / 2, `rechecks ran (${rechecks()})`)
    if (keptUpTo >= 1000) t.ok(again < (EDITS * lists.length) / 2, `windows read again ${again} times in ${EDITS * lists.length} reads after edits`)
    t.comment(`windows read again ${again} of ${EDITS * lists.length} reads after edits`)
  } else if (partial) {
    // The totals of lists of links come from their one statement (a window count), never from a count of their own.
    const counted = statements.filter((s) => /^select count\(\*\) as "n" from \(select (distinct )?l\.event_id/.test(s.sql)).length
    t.equal(counted, 0, 'no list of links counted by a statement of its own')
    // Pages past the ids kept: read by a page's statement of their own (the links or the listing index drive it).
    t.ok(statements.some((s) => /limit \S+ offset \S+$/.test(s.sql) && /"event_(terms|venues|organizers)"/.test(s.sql) && !/count\(\*\) over/.test(s.sql)),
      'pages past the first ids read by a statement of their own')
    // Lists past their first ids are kept with each event's number of matches, and rechecked too.
    t.ok(rechecks() > EDITS, `rechecks ran (${rechecks()})`)
    t.ok(readAgain < (EDITS * lists.length) / 2, `lists read again ${readAgain} times in ${EDITS * lists.length} reads after edits`)
  } else {
    // The recheck ran, and kept lists: far fewer lists read again than reads after edits.
    t.ok(rechecks() > EDITS, `rechecks ran (${rechecks()})`)
    t.ok(readAgain < (EDITS * lists.length) / 2, `lists read again ${readAgain} times in ${EDITS * lists.length} reads after edits`)
  }
  t.comment(`rechecks ${rechecks()}, lists read again ${readAgain} of ${EDITS * lists.length} reads after edits`)

  // Bursts: several edits (of neighbours in a list, of one event twice) before the lists are read again, so
  // that a recheck meets several changed events at once, in the list and out of it.
  let burstDifferences = 0
  for (let i = 0; i < EDITS / 2; i++) {
    const burst = 2 + Math.floor(rnd() * 4)
    const edited: string[] = []
    for (let j = 0; j < burst; j++) edited.push(await edit(pick(events), rnd() < 0.5 ? cached : plain))
    for (const path of lists) {
      const difference = await compare(path)
      if (difference !== undefined) {
        burstDifferences++
        t.fail(`after burst ${i} (${edited.join('; ')})`, difference)
      }
    }
  }
  t.equal(burstDifferences, 0, `every list equal after each of ${EDITS / 2} bursts of 2 to 5 edits`)
}

t.test('lists kept across event edits and rechecked answer what lists computed afresh answer', (t) => differential(t, 1000))

t.test('lists of links past their first ids (a total and the first ids kept) answer what lists computed afresh answer', (t) => differential(t, 3))

t.test('date windows kept across event edits (moved in and out, at the edges, series made and unmade, occurrences moved alone) answer what lists computed afresh answer', (t) => differential(t, 1000, true))

t.test('date windows past the matches kept (their totals counted alone, dropped by any write) answer what lists computed afresh answer', (t) => differential(t, 1000, true, 6))

t.test('a list past its first ids: an event moved ahead of them, or behind them, is seen (the recheck of the first ids)', async (t) => {
  const bound = linkedPlanBounds.allUpTo
  t.teardown(() => { linkedPlanBounds.allUpTo = bound })
  linkedPlanBounds.allUpTo = 3
  const url = await freshDatabaseUrl(t, join(t.testdir(), 'calendar.db'))
  const cachedHandle = await openDatabase(url)
  const plainHandle = await openDatabase(url)
  const compilers = createCompilers()
  const app = async (handle: typeof cachedHandle, cacheEntries: number) =>
    buildApp({ db: handle.db, config: defaultConfig({ publicUrl: BASE_URL, cacheEntries, eventDocuments: false }), now: () => NOW, spec: SPEC, compilers })
  const cached = await app(cachedHandle, 2500)
  const plain = await app(plainHandle, 0)
  t.teardown(async () => {
    await cached.close()
    await plain.close()
    await cachedHandle.close()
    await plainHandle.close()
  })
  const key = generateKey()
  await withTransaction(plainHandle.db, (trx) => createUserWithKey(trx, 'editor', key, '2026-01-01 00:00:00', 'first-ids'))
  const headers = { authorization: `Bearer ${key}`, 'content-type': 'application/json' }
  const category = (await plain.inject({ method: 'POST', url: `${API}/categories`, headers, payload: { name: 'Jazz' } })).json<{ id: number }>().id
  const ids: number[] = []
  for (let day = 1; day <= 6; day++) {
    const start = `2026-07-${String(day).padStart(2, '0')} 19:00:00`
    const res = await plain.inject({ method: 'POST', url: `${API}/events`, headers, payload: { title: `Day ${day}`, start_date: start, end_date: start.replace('19:', '21:'), status: 'publish', categories: [category] } })
    ids.push(res.json<{ id: number }>().id)
  }
  const path = `${API}/events?categories=${category}&per_page=3`
  const shown = async (a: typeof cached) => {
    const res = decoded(await a.inject({ url: path }))
    return { ids: res.json<{ events: Array<{ id: number }> }>().events.map((e) => e.id), total: res.headers['x-total'] }
  }
  t.same(await shown(cached), await shown(plain), 'before any edit')
  // The last event moved ahead of the first three (its number of matches the same), then the first behind them.
  for (const [id, day] of [[ids[5], '2026-06-20'], [ids[0], '2026-07-10'], [ids[2], '2026-07-02']] as const) {
    const res = await plain.inject({ method: 'PATCH', url: `${API}/events/${id}`, headers, payload: { start_date: `${day} 19:00:00`, end_date: `${day} 21:00:00` } })
    t.equal(res.statusCode, 200)
    t.same(await shown(cached), await shown(plain), `event ${id} moved to ${day}`)
  }
})
