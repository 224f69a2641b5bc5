/**
 * Searched lists whose needle is in more events than the search index lets drive a list (SORT_LINKED_UP_TO,
 * 5,000). Up to 100,000 event ids: the window's events in list order, and which of them the index's matches hold
 * (event-filters.ts `searchedInWindow`; on PostgreSQL for needles of two characters or more); with that bound
 * lowered, the plans of larger databases: on SQLite totals by one statement over the index's matches against the
 * window's membership (`countByWindowMembership`), and a page near the start by looking each event of the window up
 * in the index (`searchLooksUp`); on PostgreSQL the statements that check each event. Over 5,400 events
 * put straight into storage (random languages, statuses, dates, protected descriptions, hidden events; titles of
 * few letters, so that common pairs and trigrams are in nearly every event), random filters and needles, each
 * total and a page (near the start, or deep) against this file's oracle: the texts as generated, lower-cased
 * (they are ASCII), the filters applied as written. Then with the read cache on; after a raw change of texts and
 * dates (what was remembered is not used); with ids past what a membership holds; and inside a transaction
 * (which reads through the query builder). The plans of larger databases run twice: as shipped, and with the
 * index's matches counted only up to 300 (`searchPlanBounds.lookedUpCountedUpTo`); at the end, every count of
 * the index's matches the statements log shows stopped at a bound the plans need.
 */
import t from 'tap'
import { sql } from 'kysely'
import { eventSearchTexts, writeEventSearch } from '../src/db/dialect.js'
import { countEvents, eventIds, searchPlanBounds, type EventFilter } from '../src/repositories/event-filters.js'
import { createReadCache, useReadCache } from '../src/repositories/read-cache.js'
import { openDatabase, type LoggedStatement } from '../src/db/database.js'
import { freshDatabaseUrl } from './helpers/database.js'
import { propertySeed, seededRandom } from './helpers/property.js'

const EVENTS = 5400
const DAY = 86_400_000
const BASE = Date.UTC(2026, 0, 1)
const STATUSES = ['publish', 'publish', 'publish', 'draft', 'private'] as const

interface Row {
  id: number
  language: 'en' | 'de'
  status: string
  start: string
  end: string
  hidden: boolean
  featured: boolean
  title: string
  description: string | null
  password: string | null
}

const utc = (ms: number) => new Date(ms).toISOString().slice(0, 19).replace('T', ' ')

/** Whether `row` matches `f` as the filter's conditions are written (event-filters.ts `filterCondition`), the search folded as ASCII. */
function oracleMatches(row: Row, f: EventFilter): boolean {
  if (row.language !== f.language || row.hidden) return false
  if (f.scope.kind !== 'all' || !f.scope.statuses.includes(row.status as never)) return false
  if (f.startGte !== undefined && !(row.start >= f.startGte)) return false
  if (f.endLte !== undefined && !(row.end <= f.endLte)) return false
  if (f.featured !== undefined && row.featured !== f.featured) return false
  if (f.search !== undefined && f.search !== '') {
    const needle = f.search.toLowerCase()
    const inTitle = row.title.toLowerCase().includes(needle)
    const inDescription = row.password === null && row.description !== null && row.description.toLowerCase().includes(needle)
    if (!inTitle && !inDescription) return false
  }
  return true
}

t.test('totals of searches found in thousands of events agree with the oracle, cached or not', async (t) => {
  // Every statement run, with its parameters: the counts of the index's matches are checked at the end.
  const statements: LoggedStatement[] = []
  const handle = await openDatabase(await freshDatabaseUrl(t), { log: (statement) => statements.push(statement) })
  t.teardown(() => handle.close())
  const { db } = handle
  const random = seededRandom(propertySeed(20261127))
  const pick = <T>(list: readonly T[]): T => list[Math.floor(random() * list.length)] as T
  const word = (letters: string, min: number, max: number) =>
    Array.from({ length: min + Math.floor(random() * (max - min + 1)) }, () => pick([...letters])).join('')

  const rows: Row[] = []
  for (let i = 0; i < EVENTS; i++) {
    const startMs = BASE + Math.floor(random() * 700) * DAY + Math.floor(random() * 24) * 3_600_000
    rows.push({
      id: 0, language: random() < 0.8 ? 'en' : 'de', status: pick(STATUSES),
      start: utc(startMs), end: utc(startMs + (1 + Math.floor(random() * 30)) * 3_600_000),
      hidden: random() < 0.03, featured: random() < 0.2,
      // Titles of 'a', 'b' and spaces: most pairs and trigrams of them in nearly every event; 'xq' in a few.
      title: `${word('abAB ', 50, 90)}${random() < 0.01 ? ' xq' : ''}`,
      description: random() < 0.3 ? null : word('abcdxyz ', 5, 40),
      password: random() < 0.1 ? 'pw' : null,
    })
  }
  for (let i = 0; i < rows.length; i += 400) {
    const batch = rows.slice(i, i + 400)
    await db.transaction().execute(async (trx) => {
      const inserted = await trx.insertInto('events').values(batch.map((r, k) => ({
        language: r.language, translation_group: null, author: null, status: r.status, password: r.password,
        title: r.title, description: r.description, excerpt: null, slug: `e-${i + k}`, image_id: null,
        date: r.start, date_utc: r.start, modified: r.start, modified_utc: r.start, all_day: 0,
        start_date: r.start, end_date: r.end, start_utc: r.start, end_utc: r.end, timezone: 'UTC', cost: null, website: null,
        show_map: 0, show_map_link: 0, hide_from_listings: r.hidden ? 1 : 0, sticky: 0, featured: r.featured ? 1 : 0, post_parent: null,
      }))).returning('id').execute()
      for (const [k, { id }] of inserted.entries()) {
        const row = batch[k] as Row
        row.id = Number(id)
        await writeEventSearch(trx, row.id, eventSearchTexts(row))
      }
    })
  }

  const NEEDLES = ['ab', 'BA', 'a ', 'aba', 'BaB', 'a b', 'bab', 'xq', 'dx', 'zz', 'a', 'abab', 'b  a', 'aaaaaa', 'bb', ' b']
  const filterOf = (): EventFilter => {
    const f: EventFilter = { language: random() < 0.8 ? 'en' : 'de', scope: { kind: 'all', statuses: random() < 0.7 ? ['publish'] : ['publish', 'draft', 'private'] }, search: pick(NEEDLES) }
    const from = BASE + Math.floor(random() * 500) * DAY
    if (random() < 0.8) f.startGte = utc(from)
    if (random() < 0.4) f.endLte = utc(from + (10 + Math.floor(random() * 300)) * DAY)
    if (random() < 0.2) f.featured = random() < 0.5
    return f
  }
  const oracle = (f: EventFilter) => rows.filter((r) => oracleMatches(r, f)).length
  // What the index finds, whatever the other filters: over 5,000 for the window's membership to be used.
  const commonest = NEEDLES.map((n) => rows.filter((r) => oracleMatches({ ...r, hidden: false }, { language: r.language, scope: { kind: 'all', statuses: [r.status as 'publish'] }, search: n })).length)
  t.ok(commonest.filter((n) => n > 5000).length >= 5, `needles found in more than 5,000 events: ${commonest.join(', ')}`)

  const inOrder = (a: Row, b: Row) => (a.start < b.start ? -1 : a.start > b.start ? 1 : a.id - b.id)
  // Every check runs twice: with the plan of moderate windows (`searchedInWindow`), then with its bounds so low
  // that the plans of larger databases serve (the window's membership, lookups in list order, the match list probed).
  const check = async (label: string, runs: number) => {
    const bounds = { ...searchPlanBounds }
    await checkWith(`${label}, the bound as shipped`, runs)
    Object.assign(searchPlanBounds, { eventIdsUpTo: 10 })
    try {
      await checkWith(`${label}, the plans of larger databases`, runs)
      // The index's matches counted only up to a few hundred: the plans are chosen from that bound.
      Object.assign(searchPlanBounds, { lookedUpCountedUpTo: 300 })
      await checkWith(`${label}, the plans of larger databases, matches counted up to 300`, runs)
    } finally {
      Object.assign(searchPlanBounds, bounds)
    }
  }
  const checkWith = async (label: string, runs: number) => {
    let wide = 0
    let pages = 0
    for (let run = 0; run < runs; run++) {
      const f = filterOf()
      const want = oracle(f)
      const got = await countEvents(db, f)
      if (got !== want) {
        t.fail(`${label}: total of ${JSON.stringify(f)}`, { got, want })
        return
      }
      if (want > 200) wide++
      // A page: near the start (the window's events looked up in the index), or deep (its list of matches probed).
      const offset = pick([0, 10, 30, 500, 1500])
      if (offset >= want) continue
      const page = await eventIds(db, f, offset, 10, got)
      const wantPage = rows.filter((r) => oracleMatches(r, f)).sort(inOrder).slice(offset, offset + 10).map((r) => r.id)
      if (JSON.stringify(page.map(Number)) !== JSON.stringify(wantPage)) {
        t.fail(`${label}: page at ${offset} of ${JSON.stringify(f)}`, { got: page, want: wantPage })
        return
      }
      pages++
    }
    t.pass(`${label}: ${runs} totals and ${pages} pages agree with the oracle (${wide} totals over 200)`)
  }
  await check('no cache', 60)
  useReadCache(db, createReadCache())
  await check('read cache on', 120)

  // Raw writes (as another process's): titles and dates move; what was remembered must not be used.
  const moved = rows.filter((_, i) => i % 3 === 0)
  await db.transaction().execute(async (trx) => {
    for (const row of moved) {
      row.title = row.title.replace(/a/gi, 'z')
      row.start = utc(Date.parse(`${row.start.replace(' ', 'T')}Z`) - 40 * DAY)
      await trx.updateTable('events').set({ title: row.title, start_utc: row.start }).where('id', '=', row.id).execute()
      await writeEventSearch(trx, row.id, eventSearchTexts(row))
    }
  })
  await check('after a raw change', 120)

  // Inside a transaction (statements through the query builder, nothing remembered): a total and a page.
  const checkInsideTransaction = async (label: string) => {
    const f: EventFilter = { language: 'en', scope: { kind: 'all', statuses: ['publish'] }, search: 'ab', startGte: utc(BASE + 100 * DAY) }
    const inside = await db.transaction().execute(async (trx) => ({ total: await countEvents(trx, f), page: await eventIds(trx, f, 20, 10, oracle(f)) }))
    t.equal(inside.total, oracle(f), `inside a transaction, ${label}: ${inside.total}`)
    t.same(inside.page, rows.filter((r) => oracleMatches(r, f)).sort(inOrder).slice(20, 30).map((r) => r.id), `inside a transaction, ${label}: a page`)
  }
  await checkInsideTransaction('the plan of moderate windows')

  // Ids past what a window's membership holds (a database filled by hand): a window that has them is counted
  // by the statement that checks each event; the totals and pages the same.
  await db.transaction().execute(async (trx) => {
    for (const [k, id] of [2 ** 26 + 3, 2 ** 30 + 7].entries()) {
      const row: Row = { ...(rows[k] as Row), id, title: 'abbabb', start: utc(BASE + 200 * DAY), end: utc(BASE + 201 * DAY), status: 'publish', hidden: false }
      const { id: _old, ...columns } = await trx.selectFrom('events').selectAll().where('id', '=', (rows[k] as Row).id).executeTakeFirstOrThrow()
      await trx.insertInto('events').values({ ...columns, id, slug: `far-${k}`, title: row.title, start_utc: row.start, end_utc: row.end, status: 'publish', hide_from_listings: 0 }).execute()
      await writeEventSearch(trx, id, eventSearchTexts(row))
      rows.push(row)
    }
  })
  await check('ids past what a membership holds', 60)
  await checkInsideTransaction('ids past what a membership holds')
  const { rows: n } = await sql<{ n: number }>`select count(*) as n from events`.execute(db)
  t.equal(Number(n[0]?.n), EVENTS + 2)

  // The index's matches (any language, any date) are counted only as far as the plans need: one past 5,000
  // (whether they drive a list), or up to the bound of needles that may be looked up, 300 in the third pass.
  const bounds = statements.flatMap((s) => (/ as m limit (\+?\?|\$\d+)\) as "found"$/.test(s.sql) ? [Number(s.parameters.at(-1))] : []))
  t.ok(bounds.length > 0, `the index's matches were counted ${bounds.length} times`)
  t.same([...new Set(bounds)].sort((a, b) => a - b).filter((b) => ![300, 5001, searchPlanBounds.lookedUpCountedUpTo].includes(b)), [], 'each count stopped at a bound the plans need')
  t.ok(bounds.includes(5001), 'some counted one past 5,000')
  // On SQLite a needle of three characters or more may be looked up: in the third pass its count stopped at 300.
  if (handle.engine === 'sqlite') t.ok(bounds.includes(300), 'needles that may be looked up were counted up to 300 in the third pass')
})
