/**
 * Two-character searches listed by an index of adjacent pairs on both engines (db/dialect.ts `searchedIds`;
 * SQLite: migration 0012's FTS5 table; PostgreSQL: migration 0021, `event_search.pairs` and its GIN
 * index). Differential: events with random texts of awkward characters (two-unit emoji, combining accents, `ß`
 * that folds to two, `İ`, quotes, backslashes, commas and braces, which a text array's literal escapes, `%` and
 * `_`), some protected, some without a description; for every pair of code points their folded texts hold, pairs
 * that span a title and its description, and pairs found nowhere: the events the index lists (`ids`) and those it
 * holds one by one (`holds`) against the LIKE statement that served them before, and the API's total (the
 * window's plan, `searchedInWindow`, which two characters now take on PostgreSQL too) against this file's count of
 * what the texts hold. Again after writes (titles and descriptions changed, a password set and lifted, an event
 * deleted), and on PostgreSQL after migration 0021 is undone and applied again over the rows it finds. Then the
 * plan: the pairs' index serves a two-character needle (PostgreSQL asked with sequential and plain index scans
 * off, as test/search-index.test.ts does).
 */
import t, { type Test } from 'tap'
import { CompiledQuery, sql, type Compilable } from 'kysely'
import { foldCase, searchedIds } from '../src/db/dialect.js'
import { migrateToLatest } from '../src/db/migrate.js'
import { eventCountQuery, type EventFilter } from '../src/repositories/event-filters.js'
import { TEST_ENGINE } from './helpers/database.js'
import { propertySeed, seededRandom } from './helpers/property.js'
import { setup, type Setup } from './helpers/events.js'

const random = seededRandom(propertySeed(2020))
const pick = <T>(list: readonly T[]): T => list[Math.floor(random() * list.length)] as T
const PIECES = ['a', 'b', 'B', 'r', 'e', 'ß', 'ẞ', 'S', 'İ', 'é', 'e\u0301', '😀', '"', '\\', ',', '{', '}', ' ', '%', '_', "'", 'Σ', 'ς', 'NULL']
const text = (max: number) => Array.from({ length: 1 + Math.floor(random() * max) }, () => pick(PIECES)).join('')

interface Stored {
  title: string
  description: string | null
  password: boolean
}

/** The folded texts `search` looks into (the description unless protected). */
function searchedTexts(e: Stored): string[] {
  return [foldCase(e.title), ...(e.password || e.description === null ? [] : [foldCase(e.description)])]
}

/** Every pair of adjacent code points in `texts`, each text on its own. */
function pairsOf(texts: readonly string[]): Set<string> {
  const pairs = new Set<string>()
  for (const folded of texts) {
    const points = [...folded]
    for (let i = 0; i + 1 < points.length; i++) pairs.add(`${points[i]}${points[i + 1]}`)
  }
  return pairs
}

/** The needles: every pair the texts hold (protected descriptions' too: they must not be found there), pairs across a title and its description, some found nowhere, and needles that fold to two code points. */
function needles(events: ReadonlyMap<number, Stored>): string[] {
  const all = new Set<string>()
  for (const e of events.values()) {
    for (const pair of pairsOf([foldCase(e.title), ...(e.description === null ? [] : [foldCase(e.description)])])) all.add(pair)
    if (e.description !== null && e.description !== '') all.add(`${[...foldCase(e.title)].at(-1)}${[...foldCase(e.description)][0]}`)
  }
  for (const extra of ['zz', 'q😀', 'ß', 'ẞ', 'SS', 'İa', '%_', '\\"', '{}', ',,', 'Bé', 'E\u0301B']) all.add(extra)
  return [...all].filter((n) => [...foldCase(n)].length === 2).sort()
}

/** The ids the LIKE statement that served two characters before lists (PostgreSQL's `searchedIds` for every needle then; SQLite's `holds`). */
async function likeIds(s: Setup, needle: string): Promise<number[]> {
  const pattern = `%${foldCase(needle).replace(/[\\%_]/g, (c) => `\\${c}`)}%`
  const query = TEST_ENGINE === 'postgres'
    ? sql<{ id: number }>`select event_id as id from event_search where title like ${pattern} or description like ${pattern} order by 1`
    : sql<{ id: number }>`select id from event_search_content where c0 like ${pattern} escape '\\' or c1 like ${pattern} escape '\\' order by 1`
  return (await query.execute(s.db)).rows.map((r) => Number(r.id))
}

/** Every needle's listed and held events against the LIKE statement's, and its API total against the texts' own count. */
async function agree(t: Test, s: Setup, events: ReadonlyMap<number, Stored>, label: string): Promise<void> {
  const ids = [...events.keys()]
  let differences = 0
  let found = 0
  const list = needles(events)
  for (const needle of list) {
    const want = await likeIds(s, needle)
    const expected = ids.filter((id) => searchedTexts(events.get(id) as Stored).some((folded) => folded.includes(foldCase(needle)))).sort((a, b) => a - b)
    const searched = searchedIds(s.db, needle)
    const listed = (await sql<{ id: number }>`select id from ${searched.ids} as m order by 1`.execute(s.db)).rows.map((r) => Number(r.id))
    const held = (await sql<{ id: number }>`select e.id from events e where ${searched.holds(sql.ref('e.id'))} order by 1`.execute(s.db)).rows.map((r) => Number(r.id))
    const res = await s.list(`?search=${encodeURIComponent(needle)}&per_page=50`)
    const total = res.statusCode === 200 ? res.json<{ total: number }>().total : 0
    if (want.length > 0) found++
    if (JSON.stringify(listed) !== JSON.stringify(want) || JSON.stringify(held) !== JSON.stringify(want)
      || JSON.stringify(want) !== JSON.stringify(expected) || total !== expected.length) {
      differences++
      t.fail(`${label}: ${JSON.stringify(needle)}`, { listed, held, like: want, expected, total, status: res.statusCode })
    }
  }
  t.equal(differences, 0, `${label}: ${list.length} two-character needles (${found} found somewhere), the index's lists and checks are LIKE's, the totals the texts'`)
  t.ok(found > 40 && found < list.length, `${label}: needles found and needles not found (${found} of ${list.length})`)
}

t.test('two-character needles: the index of pairs lists and holds what LIKE finds, before and after writes, and after migration 0021 again', async (t) => {
  const s = await setup(t)
  const events = new Map<number, Stored>()
  for (let i = 0; i < 30; i++) {
    const stored: Stored = { title: text(8), description: i % 5 === 0 ? null : text(14), password: i % 6 === 1 }
    const created = await s.event(stored.title, stored.description === null ? {} : { description: stored.description })
    if (stored.password) t.equal((await s.patch(created.id, { password: 'pw' })).statusCode, 200)
    events.set(created.id, stored)
  }
  t.ok(searchedIds(s.db, 'Ab').indexed, 'a needle of two code points is served by an index')
  t.ok(searchedIds(s.db, 'ß').indexed, 'so is one that folds to two')
  t.notOk(searchedIds(s.db, 'a').indexed, 'one of one is not')
  await agree(t, s, events, 'as created')

  const ids = [...events.keys()]
  for (const [k, id] of ids.entries()) {
    const e = events.get(id) as Stored
    if (k % 4 === 0) {
      const title = text(8)
      t.equal((await s.patch(id, { title })).statusCode, 200)
      e.title = title
    } else if (k % 4 === 1) {
      const description = k % 8 === 1 ? '' : text(14)
      t.equal((await s.patch(id, { description })).statusCode, 200)
      e.description = description
    } else if (k % 4 === 2) {
      t.equal((await s.patch(id, { password: e.password ? '' : 'pw' })).statusCode, 200)
      e.password = !e.password
    } else if (k % 8 === 3) {
      t.equal((await s.remove(id, '?force=true')).statusCode, 200)
      events.delete(id)
    }
  }
  await agree(t, s, events, 'after writes')

  if (TEST_ENGINE === 'postgres') {
    // The state before 0021: no function, no index, the migration not in the history; the rows there are indexed by it.
    const { down } = await import('../src/db/migrations/0021-search-pairs-postgres.js')
    await down(s.db)
    await sql`delete from kysely_migration where name = '0021-search-pairs-postgres'`.execute(s.db)
    const schema = (await sql<{ s: string }>`select current_schema() as s`.execute(s.db)).rows[0]?.s
    await migrateToLatest(s.db, schema)
    await agree(t, s, events, 'after migration 0021 again')
  }
})

/** The plan of `query` as the engine tells it (PostgreSQL with sequential and plain index scans off). */
async function plan(s: Setup, query: Compilable): Promise<string> {
  const compiled = query.compile()
  if (TEST_ENGINE === 'sqlite') {
    const rows = s.sqlite().prepare(`explain query plan ${compiled.sql}`).all(...compiled.parameters) as Array<{ detail: string }>
    return rows.map((r) => r.detail).join('\n')
  }
  return s.db.connection().execute(async (connection) => {
    await sql`set enable_seqscan = off`.execute(connection)
    await sql`set enable_indexscan = off`.execute(connection)
    try {
      const result = await connection.executeQuery<{ 'QUERY PLAN': string }>(CompiledQuery.raw(`explain ${compiled.sql}`, [...compiled.parameters]))
      return result.rows.map((r) => r['QUERY PLAN']).join('\n')
    } finally {
      await sql`reset enable_seqscan`.execute(connection)
      await sql`reset enable_indexscan`.execute(connection)
    }
  })
}

t.test('query plans: a two-character needle is listed by the index of pairs', async (t) => {
  const s = await setup(t)
  for (let i = 0; i < 20; i++) await s.event(`Event ${i} ${i % 5 === 0 ? 'Wolkenbruch' : 'Sonnenschein'}`, { description: `Beschreibung ${i}` })
  const filter: EventFilter = { language: 'en', scope: { kind: 'all', statuses: ['publish'] }, startGte: '2026-06-15 00:00:00', search: 'WO' }
  for (const [name, query] of [['the index driving', eventCountQuery(s.db, filter, true)], ['checked per event', eventCountQuery(s.db, filter, false)]] as const) {
    const text = await plan(s, query)
    if (TEST_ENGINE === 'postgres') t.match(text, /Bitmap Index Scan on event_search_pairs/, `${name}: the GIN index of pairs`, { plan: text })
    else if (name === 'the index driving') t.match(text, /SCAN event_search_pairs VIRTUAL TABLE INDEX \d+:M/, `${name}: a MATCH of the index of pairs`, { plan: text })
    else t.notMatch(text, /INDEX \d+:M/, `${name}: SQLite reads the texts (a LIKE per event costs less than listing the pair's events first)`, { plan: text })
  }
  if (TEST_ENGINE === 'postgres') {
    // No statistics for the pairs (migration 0021): the planner takes every pair as rare and lists it through the index.
    const { rows } = await sql<{ target: number }>`select attstattarget as target from pg_attribute
      where attrelid = 'event_search'::regclass and attname = 'pairs'`.execute(s.db)
    t.equal(Number(rows[0]?.target), 0, 'the pairs column has no statistics')
  }
  const res = await s.list('?search=WO&per_page=50')
  t.equal(res.json<{ total: number }>().total, 4)
})
