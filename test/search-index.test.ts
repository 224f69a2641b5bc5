/**
 * The events' search index (migration 0005; CONTRACT §3, §6): what `GET /events?search=` finds, against
 * an oracle of this file's own that folds the texts as written (NFC and full case folding for the
 * characters the texts are made of, written out here rather than imported from the app), over random
 * texts and needles; that every write keeps the index (create, update, password, translation, delete);
 * that rows stored before the migration are found after it; and that the search statement is served by
 * the index (SQLite: the FTS5 trigram table; PostgreSQL: the pg_trgm GIN indexes, asked with
 * `enable_seqscan` and `enable_indexscan` off, since a few rows never make the planner prefer a GIN
 * index by itself).
 */
import t, { type Test } from 'tap'
import fc from 'fast-check'
import { CompiledQuery, sql, type Compilable } from 'kysely'
import { writeEventSearch, deleteEventSearch } from '../src/db/dialect.js'
import { migrateToLatest } from '../src/db/migrate.js'
import { withTransaction } from '../src/db/unit-of-work.js'
import { eventCountQuery, eventIdsQuery, type EventFilter } from '../src/repositories/event-filters.js'
import { TEST_ENGINE } from './helpers/database.js'
import { idsOf, recordStatements, setup, type Setup } from './helpers/events.js'

/** The folds of the characters the random texts hold besides ASCII (CONTRACT §3: `strasse` finds `Straße`, `istanbul` finds `İstanbul`). */
const FOLDS: Record<string, string> = { 'ß': 'ss', 'ẞ': 'ss', 'İ': 'i', 'Σ': 'σ', 'ς': 'σ', 'É': 'é' }

/** The oracle's fold: NFC, then each character folded (ASCII letters to lower case, the table above), NFC again. */
function oracleFold(text: string): string {
  let out = ''
  // The dot above that İ leaves on an i when lower-cased is dropped: `i̇` meets `İ` as `i` does.
  for (const c of text.normalize('NFC').replace(/i\u0307/g, 'i')) out += FOLDS[c] ?? (/^[A-Z]$/.test(c) ? c.toLowerCase() : c)
  return out.normalize('NFC')
}

interface Stored {
  id: number
  title: string
  description: string | null
  password: boolean
}

/** The ids the oracle expects for `needle`: the title, or the description unless password-protected, holds it once folded. */
function expected(events: Iterable<Stored>, needle: string): number[] {
  const folded = oracleFold(needle)
  return [...events].filter((e) => oracleFold(e.title).includes(folded) || (!e.password && e.description !== null && oracleFold(e.description).includes(folded)))
    .map((e) => e.id).sort((a, b) => a - b)
}

/** Every id `GET /events?search=` returns for `needle`, over all pages. */
async function found(s: Setup, needle: string, query = ''): Promise<number[]> {
  const ids: number[] = []
  for (let page = 1; ; page++) {
    const res = await s.list(`?search=${encodeURIComponent(needle)}&per_page=50&page=${page}${query}`)
    if (res.statusCode !== 200) throw new Error(`search ${JSON.stringify(needle)}: ${res.statusCode} ${res.body}`)
    ids.push(...idsOf(res))
    if (page >= res.json<{ total_pages: number }>().total_pages) break
  }
  return ids.sort((a, b) => a - b)
}

const PIECES = ['a', 'b', 's', 'S', 't', 'T', 'i', 'I', 'ß', 'ẞ', 'İ', 'Σ', 'σ', 'ς', 'é', 'É', 'e\u0301', 'E\u0301', '😀', '%', '_', '\\',
  "'", '"', '*', ' ', '-', 'NEAR', 'AND', 'st', 'ss', 'SS', 'x', 'y', '(', ':']
const text = (min: number) => fc.array(fc.constantFrom(...PIECES), { minLength: min, maxLength: 12 }).map((p) => p.join(''))
/** Upper- or lower-cases each character at random (`ß` upper-cases to `SS`, `ς` to `Σ`). */
const recased = (s: string, flips: boolean[]) => [...s].map((c, i) => (flips[i % flips.length] === true ? c.toUpperCase() : c.toLowerCase())).join('')

/** A needle: a span of a stored text in random case, or a string of its own. */
type NeedleCase = string | { of: number; from: number; length: number; flips: boolean[] }

/**
 * Random events stored, then random needles searched, each answer compared with the oracle's; how many
 * needles were checked and how many found something. `start` places a span in a text of `length`
 * characters; `skip` leaves a needle out.
 */
async function agreeWithOracle(t: Test, s: Setup, options: {
  event: fc.Arbitrary<{ title: string; description: string | null; password: boolean }>
  needle: fc.Arbitrary<NeedleCase>
  maxNeedles: number
  start: (from: number, textLength: number, spanLength: number) => number
  skip: (needle: string) => boolean
  seed: number
  numRuns: number
}): Promise<{ checked: number; matched: number; events: number }> {
  const stored = new Map<number, Stored>()
  let checked = 0
  let matched = 0
  await fc.assert(fc.asyncProperty(fc.array(options.event, { minLength: 1, maxLength: 4 }), fc.array(options.needle, { minLength: 1, maxLength: options.maxNeedles }), async (events, needles) => {
    for (const e of events) {
      const created = await s.event(e.title, e.description === null ? {} : { description: e.description })
      if (e.password) t.equal((await s.patch(created.id, { password: 'pw' })).statusCode, 200)
      stored.set(created.id, { id: created.id, ...e })
    }
    const all = [...stored.values()]
    for (const n of needles) {
      let wanted: string
      if (typeof n === 'string') wanted = n
      else {
        const e = all[n.of % all.length]
        const source = (n.of % 2 === 0 || e?.description == null ? e?.title : e.description) ?? 'x'
        const chars = [...source]
        const from = options.start(n.from, chars.length, n.length)
        wanted = recased(chars.slice(from, from + n.length).join(''), n.flips)
      }
      if (options.skip(wanted)) continue
      const got = await found(s, wanted)
      const want = expected(all, wanted)
      checked++
      if (want.length > 0) matched++
      if (JSON.stringify(got) !== JSON.stringify(want)) {
        t.fail(`search ${JSON.stringify(wanted)}`, { got, want, texts: all.filter((e) => got.includes(e.id) !== want.includes(e.id)) })
        return false
      }
    }
    return true
  }), { seed: options.seed, numRuns: options.numRuns })
  return { checked, matched, events: stored.size }
}

t.test('search finds what the oracle finds: random texts, random needles (substrings in random case, random strings)', async (t) => {
  const s = await setup(t)
  const { checked, events } = await agreeWithOracle(t, s, {
    event: fc.record({ title: text(1), description: fc.option(text(0), { nil: null }), password: fc.boolean() }),
    needle: fc.oneof(
      fc.record({ of: fc.nat(), from: fc.nat(), length: fc.integer({ min: 1, max: 8 }), flips: fc.array(fc.boolean(), { minLength: 1, maxLength: 8 }) }),
      text(1),
    ),
    maxNeedles: 8,
    start: (from, textLength) => from % textLength,
    skip: (needle) => needle === '',
    seed: 20261216,
    numRuns: 30,
  })
  t.ok(checked > 50, `${checked} searches over ${events} events agreed with the oracle`)
})

t.test('long needles (past the one-phrase length, pre-filtered by some of their trigrams, then checked whole) find what the oracle finds', async (t) => {
  const s = await setup(t)
  // Few characters, so that texts share most trigrams and a pre-filter alone would find too much.
  const LETTERS = ['a', 'b', 'A', 'ß', 'ẞ', 'SS', 'é', 'e\u0301', ' ', '"']
  const long = (min: number, max: number) => fc.array(fc.constantFrom(...LETTERS), { minLength: min, maxLength: max }).map((p) => p.join(''))
  const { checked, matched } = await agreeWithOracle(t, s, {
    event: fc.record({ title: long(20, 90), description: fc.option(long(20, 200), { nil: null }), password: fc.boolean() }),
    needle: fc.oneof(
      fc.record({ of: fc.nat(), from: fc.nat(), length: fc.integer({ min: 25, max: 70 }), flips: fc.array(fc.boolean(), { minLength: 1, maxLength: 8 }) }),
      long(25, 60),
    ),
    maxNeedles: 6,
    start: (from, textLength, spanLength) => from % Math.max(1, textLength - spanLength),
    skip: (needle) => [...oracleFold(needle)].length <= 24,
    seed: 20261126,
    numRuns: 25,
  })
  t.ok(checked > 40 && matched > 10 && matched < checked, `${checked} long needles (${matched} found something) agreed with the oracle`)
  // One letter many times over: the needle's trigrams are all one, and the whole needle is checked.
  const many = await s.event('ü'.repeat(20_000))
  t.same(await found(s, 'Ü'.repeat(5_000)), [many.id], 'a needle of 5,000 repeated letters in a text of 20,000')
  t.same(await found(s, `${'ü'.repeat(5_000)}x`), [], 'the same needle with one more letter')
})

t.test('every write keeps the index: create, title and description changes, password, translation, delete', async (t) => {
  const s = await setup(t)
  const e = await s.event('Alpha Wolke', { description: 'Am Großen Fluss' })
  t.same(await found(s, 'WOLKE'), [e.id])
  t.same(await found(s, 'grosse'), [e.id])
  t.equal((await s.patch(e.id, { title: 'Beta Sonne' })).statusCode, 200)
  t.same(await found(s, 'wolke'), [], 'the old title no longer matches')
  t.same(await found(s, 'sonne'), [e.id], 'the new one does')
  t.same(await found(s, 'fluss'), [e.id], 'the description was kept')
  t.equal((await s.patch(e.id, { description: 'Unter der İnsel' })).statusCode, 200)
  t.same(await found(s, 'fluss'), [])
  t.same(await found(s, 'insel'), [e.id])
  t.equal((await s.patch(e.id, { password: 'pw' })).statusCode, 200)
  t.same(await found(s, 'insel'), [], 'a protected description is not searched')
  t.same(await found(s, 'sonne'), [e.id], 'its title is')
  t.equal((await s.patch(e.id, { password: '' })).statusCode, 200)
  t.same(await found(s, 'insel'), [e.id], 'the password gone, the description is searched again')
  const de = await s.create({ title: 'Gamma Straße', start_date: '2026-07-01 18:00:00', end_date: '2026-07-01 21:00:00', ml_language: 'de', translation_of: e.id })
  t.same(await found(s, 'STRASSE', '&ml_language=de'), [de.id], 'a translation is searched in its language')
  t.same(await found(s, 'STRASSE'), [], 'and only there')
  t.equal((await s.remove(e.id, '?force=true')).statusCode, 200)
  t.same(await found(s, 'sonne'), [])
  const { rows } = await sql<{ n: number }>`select count(*) as n from event_search`.execute(s.db)
  t.equal(Number(rows[0]?.n), 1, 'the deleted event left the index')
})

t.test('migration 0005: events stored before it are found after it', async (t) => {
  const s = await setup(t)
  const a = await s.event('İstanbul Nächte', { description: '100% _Straße\\' })
  const b = await s.event('Ohne', { description: 'GROẞE Σοφία' })
  const secret = await s.event('Geheim', { description: 'Verborgene Wolke' })
  t.equal((await s.patch(secret.id, { password: 'pw' })).statusCode, 200)
  // The state before 0005: no index, the migration not in the history.
  await sql`drop table event_search`.execute(s.db)
  // And before 0021, which adds to the table 0005 makes (PostgreSQL's index of pairs).
  await sql`delete from kysely_migration where name in ('0005-search-index', '0021-search-pairs-postgres')`.execute(s.db)
  const schema = TEST_ENGINE === 'postgres' ? (await sql<{ s: string }>`select current_schema() as s`.execute(s.db)).rows[0]?.s : undefined
  await migrateToLatest(s.db, schema)
  t.same(await found(s, 'ISTANBUL'), [a.id])
  t.same(await found(s, '_strasse\\'), [a.id])
  t.same(await found(s, 'große'), [b.id])
  t.same(await found(s, 'ΣΟΦΊΑ'), [b.id])
  t.same(await found(s, 'wolke'), [], 'a protected description stays out')
  t.same(await found(s, 'geheim'), [secret.id])
})

/** The plan of `query` as the engine tells it (PostgreSQL with sequential and plain index scans off). */
async function plan(s: Setup, query: Compilable): Promise<string> {
  const compiled = query.compile()
  if (TEST_ENGINE === 'sqlite') {
    const rows = s.sqlite().prepare(`explain query plan ${compiled.sql}`).all(...compiled.parameters) as Array<{ detail: string }>
    return rows.map((r) => r.detail).join('\n')
  }
  return s.db.connection().execute(async (connection) => {
    // Whether the index can serve it, whatever the planner would pick for a few rows: sequential and
    // plain index scans off (a GIN index serves through bitmap scans only).
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

t.test('query plans: the search statements use the trigram index', async (t) => {
  const s = await setup(t)
  for (let i = 0; i < 20; i++) await s.event(`Event ${i} ${i % 5 === 0 ? 'Wolkenbruch' : 'Sonnenschein'}`, { description: `Beschreibung ${i}` })
  t.same((await found(s, 'wolkenbruch')).length, 4)
  if (TEST_ENGINE === 'postgres') {
    // Statistics that say what the tables hold: 5,000 copies without the word, analyzed.
    const { rows } = await sql<{ name: string }>`select column_name as name from information_schema.columns
      where table_schema = current_schema() and table_name = 'events' and column_name not in ('id', 'slug', 'translation_group')`.execute(s.db)
    const columns = sql.join(rows.map((r) => sql.id(r.name)))
    await sql`insert into events (slug, ${columns}) select slug || '-' || g, ${columns} from events cross join generate_series(1, 250) g`.execute(s.db)
    // With their pairs (migration 0021), as db/dialect.ts `searchPairList` makes them.
    await sql`insert into event_search (event_id, title, description, pairs) select id, 'copy ' || id, 'beschreibung',
      array(select distinct a || b from (select string_to_array('copy ' || id, null) as t union all select string_to_array('beschreibung', null)) x,
        unnest(x.t[1:cardinality(x.t) - 1], x.t[2:]) u(a, b)) from events
      where id not in (select event_id from event_search)`.execute(s.db)
    await sql`analyze`.execute(s.db)
  }
  const filter: EventFilter = { language: 'en', scope: { kind: 'all', statuses: ['publish'] }, startGte: '2026-06-15 00:00:00', search: 'wolkenbruch' }
  const statements = [
    ['count, the index driving', eventCountQuery(s.db, filter, true)], ['count, the window driving', eventCountQuery(s.db, filter, false)],
    ['page, the index driving', eventIdsQuery(s.db, filter, 0, 10, 4, true)], ['page of many, in list order', eventIdsQuery(s.db, filter, 0, 10, 100_000, false)],
  ] as const
  for (const [name, query] of statements) {
    const text = await plan(s, query)
    if (TEST_ENGINE === 'sqlite') t.match(text, /SCAN event_search VIRTUAL TABLE INDEX \d+:M/, `${name}: FTS5 MATCH`, { plan: text })
    else t.match(text, /Bitmap Index Scan on event_search_title[\s\S]*Bitmap Index Scan on event_search_description|Bitmap Index Scan on event_search_description[\s\S]*Bitmap Index Scan on event_search_title/, `${name}: both GIN indexes`, { plan: text })
  }
  // Two characters have no trigram: checked per event, the folded texts are read, and still found; SQLite's
  // index of pairs (migration 0012) lists the events holding them, to drive a list when they are few.
  const short = await plan(s, eventCountQuery(s.db, { ...filter, search: 'wo' }, false))
  t.notMatch(short, /INDEX \d+:M/, 'a two-character needle checked per event is no MATCH', { plan: short })
  if (TEST_ENGINE === 'sqlite') {
    const driven = await plan(s, eventCountQuery(s.db, { ...filter, search: 'wo' }, true))
    t.match(driven, /SCAN event_search_pairs VIRTUAL TABLE INDEX \d+:M/, 'a two-character needle driving is a MATCH of the index of pairs', { plan: driven })
  }
  t.same((await found(s, 'WO')).length, 4)
})

t.test('needles with FTS5 query syntax are plain text', async (t) => {
  const s = await setup(t)
  const a = await s.event('say "hi" * NEAR(x y) AND OR NOT ^col: -', { description: "it's {a b} + c" })
  const b = await s.event('plain')
  for (const needle of ['"hi"', '"', '* near(', 'and or not', '^col:', "it's", '{a b}', '+ c', ': -', 'ay "']) t.same(await found(s, needle), [a.id], needle)
  for (const needle of ['hi" OR "plain', 'plain*', 'NEAR(plain', '"plain"']) t.same(await found(s, needle), [], needle)
  t.same(await found(s, 'plain'), [b.id])
  t.same(await found(s, '', ''), [a.id, b.id].sort((x, y) => x - y), 'an empty search filters nothing')
})

/** A SQLite varint at `at` in `bytes`: its value and length. */
function varint(bytes: Buffer, at: number): [number, number] {
  let value = 0
  for (let i = 0; i < 9; i++) {
    const byte = bytes[at + i] as number
    if (i === 8) return [value * 256 + byte, 9]
    value = value * 128 + (byte & 0x7f)
    if ((byte & 0x80) === 0) return [value, i + 1]
  }
  return [value, 9]
}

/** The segments of an FTS5 table's index, from its structure record (`<table>_data` row 10: a cookie, maybe the V2 mark, then levels and segments as varints). */
async function segmentsOf(s: Setup, table: string): Promise<number> {
  const { rows } = await sql<{ block: Buffer }>`select block from ${sql.table(`${table}_data`)} where id = 10`.execute(s.db)
  const block = rows[0]?.block as Buffer
  let at = 4
  if (block.subarray(4, 8).equals(Buffer.from([0xff, 0x00, 0x00, 0x01]))) at += 4
  const [, levelsLength] = varint(block, at)
  return varint(block, at + levelsLength)[0]
}

t.test('a run of writes keeps the search index exact, and on SQLite merged a little by each write (migration 0013)', async (t) => {
  const s = await setup(t)
  const stored = new Map<number, Stored>()
  for (let i = 0; i < 20; i++) {
    const e = await s.event(`Start ${i}`, { description: `Text ${i}` })
    stored.set(e.id, { id: e.id, title: `Start ${i}`, description: `Text ${i}`, password: false })
  }
  const ids = [...stored.keys()]
  const words = ['Wolke', 'Regen', 'Sonne', 'Nebel', 'Schnee']
  let most = 0
  for (let n = 0; n < 300; n++) {
    const id = ids[(n * 7) % ids.length] as number
    const title = `${words[n % words.length]} ${n}`
    t.equal((await s.patch(id, { title })).statusCode, 200)
    stored.set(id, { ...(stored.get(id) as Stored), title })
    if (TEST_ENGINE === 'sqlite') most = Math.max(most, await segmentsOf(s, 'event_search'), await segmentsOf(s, 'event_search_pairs'))
  }
  for (const needle of [...words, 'wo', 'ne', 'start', 'text 1', '29']) t.same(await found(s, needle), expected(stored.values(), needle), needle)
  if (TEST_ENGINE === 'sqlite') {
    const { rows } = await sql<{ v: number }>`select v from event_search_config where k = 'automerge'`.execute(s.db)
    t.same(rows.map((r) => Number(r.v)), [0], 'FTS5 merges nothing by itself')
    // Left to pile up, the segments would reach FTS5's crisis merge (16 on a level) again and again.
    t.ok(most <= 8, `at most ${most} segments in either table after any of the 300 writes`)
    await sql`insert into event_search (event_search) values ('integrity-check')`.execute(s.db)
    await sql`insert into event_search_pairs (event_search_pairs, rank) values ('integrity-check', 0)`.execute(s.db)
    t.pass('both tables pass FTS5 integrity checks')
  }
})

t.test('writes that share a commit keep the search index exact and merged, once a transaction (db/unit-of-work.ts)', async (t) => {
  const s = await setup(t)
  const stored = new Map<number, Stored>()
  const words = ['Wolke', 'Regen', 'Sonne', 'Nebel', 'Schnee']
  let most = 0
  for (let round = 0; round < 30; round++) {
    // Ten creates in flight at once: on SQLite they run in one transaction, a savepoint each, and commit together.
    const made = await Promise.all(Array.from({ length: 10 }, (_, i) => {
      const n = round * 10 + i
      return s.event(`${words[n % words.length]} ${n}`, { description: `Text ${n}` }).then((e) => ({ e, n }))
    }))
    for (const { e, n } of made) stored.set(e.id, { id: e.id, title: `${words[n % words.length]} ${n}`, description: `Text ${n}`, password: false })
    if (TEST_ENGINE === 'sqlite') most = Math.max(most, await segmentsOf(s, 'event_search'), await segmentsOf(s, 'event_search_pairs'))
  }
  t.equal(stored.size, 300)
  for (const needle of [...words, 'wo', 'ne', 'text 1', '29', 'xt 29']) t.same(await found(s, needle), expected(stored.values(), needle), needle)
  if (TEST_ENGINE === 'sqlite') {
    // Left to pile up, the segments would reach FTS5's crisis merge (16 on a level) again and again.
    t.ok(most <= 8, `at most ${most} segments in either table after any of the 30 shared commits`)
    await sql`insert into event_search (event_search) values ('integrity-check')`.execute(s.db)
    await sql`insert into event_search_pairs (event_search_pairs, rank) values ('integrity-check', 0)`.execute(s.db)
    t.pass('both tables pass FTS5 integrity checks')
  }
})

t.test('writes in flight together (creates, title changes, deletes) are each found by search once answered, as the oracle says', async (t) => {
  const s = await setup(t)
  const stored = new Map<number, Stored>()
  const words = ['Wolke', 'Regen', 'Sonne', 'Nebel', 'Schnee']
  for (let i = 0; i < 10; i++) {
    const e = await s.event(`Anfang ${i}`, { description: `Zeile ${i}` })
    stored.set(e.id, { id: e.id, title: `Anfang ${i}`, description: `Zeile ${i}`, password: false })
  }
  for (let round = 0; round < 12; round++) {
    const ids = [...stored.keys()]
    const changed = ids[(round * 3) % ids.length] as number
    const deleted = ids[(round * 5 + 1) % ids.length] as number
    const title = `${words[round % words.length]} neu ${round}`
    // On SQLite these run in one shared transaction, a savepoint each (db/unit-of-work.ts); PostgreSQL: a transaction each.
    const [made, patched, removed] = await Promise.all([
      Promise.all(Array.from({ length: 6 }, (_, i) => s.event(`${words[(round + i) % words.length]} ${round}-${i}`, { description: `Zeile ${round}-${i}` }))),
      changed === deleted ? undefined : s.patch(changed, { title }),
      s.remove(deleted, '?force=true'),
    ])
    made.forEach((e, i) => stored.set(e.id, { id: e.id, title: `${words[(round + i) % words.length]} ${round}-${i}`, description: `Zeile ${round}-${i}`, password: false }))
    if (patched !== undefined) {
      t.equal(patched.statusCode, 200)
      stored.set(changed, { ...(stored.get(changed) as Stored), title })
    }
    t.equal(removed.statusCode, 200)
    stored.delete(deleted)
    // Needles of this round only (a list answered before is not asked again: the answers are the index's own).
    for (const needle of [`${round}-`, `neu ${round}`, `zeile ${round}-3`]) t.same(await found(s, needle), expected(stored.values(), needle), `round ${round}: ${needle}`)
  }
  for (const needle of [...words, 'anfang', 'zeile', 'eu', 'ne']) t.same(await found(s, needle), expected(stored.values(), needle), needle)
  if (TEST_ENGINE === 'sqlite') {
    await sql`insert into event_search (event_search) values ('integrity-check')`.execute(s.db)
    await sql`insert into event_search_pairs (event_search_pairs, rank) values ('integrity-check', 0)`.execute(s.db)
    t.pass('both tables pass FTS5 integrity checks')
  }
})

t.test('units of work queued together: their search writes in order, a unit rolled back leaves none of its own', async (t) => {
  const s = await setup(t)
  const [a, b, c] = [await s.event('Erster'), await s.event('Zweiter'), await s.event('Dritter')]
  const texts = (title: string) => ({ title: title.toLowerCase(), description: null })
  // Asked for at once: on SQLite the first runs while the others queue, and they share its transaction.
  const outcomes = await Promise.allSettled([
    withTransaction(s.db, (trx) => writeEventSearch(trx, a.id, texts('Kobaltblau'))),
    withTransaction(s.db, async (trx) => {
      await writeEventSearch(trx, b.id, texts('Zinnoberrot'))
      throw new Error('refused after its search write')
    }),
    withTransaction(s.db, (trx) => writeEventSearch(trx, c.id, texts('Ockergelb'))),
    withTransaction(s.db, (trx) => writeEventSearch(trx, a.id, texts('Kobaltgrün'))),
    withTransaction(s.db, (trx) => deleteEventSearch(trx, c.id)),
  ])
  t.same(outcomes.map((o) => o.status), ['fulfilled', 'rejected', 'fulfilled', 'fulfilled', 'fulfilled'])
  t.same(await found(s, 'zinnober'), [], 'the unit rolled back wrote nothing')
  t.same(await found(s, 'zweiter'), [b.id], 'and left its event as it was')
  t.same(await found(s, 'kobaltgrün'), [a.id], 'the later write of an event wins')
  t.same(await found(s, 'kobaltblau'), [], 'over the earlier one')
  t.same(await found(s, 'ockergelb'), [], 'a row written then deleted in the same transaction is gone')
  t.same(await found(s, 'erster'), [], 'the first texts were replaced')
  if (TEST_ENGINE === 'sqlite') {
    await sql`insert into event_search (event_search) values ('integrity-check')`.execute(s.db)
    await sql`insert into event_search_pairs (event_search_pairs, rank) values ('integrity-check', 0)`.execute(s.db)
    t.pass('both tables pass FTS5 integrity checks')
  }
})

t.test('SQLite: a shared transaction writes the search index after its last unit, all together (one segment a table, not one a unit)', async (t) => {
  const s = await setup(t, { sqlite: true })
  const recorder = recordStatements(s.sqlite())
  await s.event('Vorher')
  const statements = await recorder.during(() => Promise.all(Array.from({ length: 8 }, (_, i) => s.event(`Gemeinsam ${i}`))))
  const texts = statements.map((st) => st.sql.replace(/\s+/g, ' ').trim())
  const savepoints = texts.flatMap((text, i) => (/^(savepoint|release) unit_of_work$/.test(text) ? [i] : []))
  const searchWrites = texts.flatMap((text, i) => (/^insert (or replace )?into event_search(_pairs)? \(rowid/.test(text) ? [i] : []))
  t.equal(searchWrites.length, 16, 'eight rows in each table')
  t.ok(savepoints.length >= 14, `the units ran in savepoints of one transaction (${savepoints.length} savepoint statements)`)
  t.ok(searchWrites.every((i) => i > Math.max(...savepoints)), 'every row written after the last unit released its savepoint')
  t.equal((await found(s, 'gemeinsam')).length, 8, 'all eight found')
})
