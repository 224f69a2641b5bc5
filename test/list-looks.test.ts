/**
 * The looks at the data version an anonymous list page takes (repositories/read-cache.ts "One look per request"), with
 * other requests arriving meanwhile: on PostgreSQL a look is a round trip, and a page made after its own look (its hot
 * answer looked for) reads its cached results on that look (`withLook`), where each of them asked the engine again
 * whenever another request had arrived since (4–5 round trips a page with ten requests in flight). And a read on a
 * look taken so that reads another version than the look's (a change made elsewhere in between) asks the engine for
 * its cached reads after it, on both engines. Pages sent together with nothing written by this process since the last
 * look take it on trust (`provisionalLook`), however many versions other requests read meanwhile.
 */
import t from 'tap'
import { join } from 'node:path'
import { sql } from 'kysely'
import { buildApp } from '../src/app.js'
import { defaultConfig } from '../src/config.js'
import { dataVersion, eventSearchTexts, writeEventSearch } from '../src/db/dialect.js'
import { openDatabase, type LoggedStatement } from '../src/db/database.js'
import { withTransaction } from '../src/db/unit-of-work.js'
import { createCompilers } from '../src/http/compilers.js'
import { lookedGeneration, rememberedResult, withLook } from '../src/repositories/read-cache.js'
import { SPEC } from './helpers/contract.js'
import { BASE_URL, NOW } from './helpers/build.js'
import { TEST_ENGINE, freshDatabaseUrl } from './helpers/database.js'
import { EVENTS, type Event } from './helpers/events.js'
import { insertEvent } from './helpers/fixtures.js'

const TITLES = ['Jazz night', 'Jazz brunch', 'Poetry evening', 'Night market', 'Brunch and poetry', 'Evening jazz']
/** A look of its own: the version's statement (PostgreSQL: the call of its function, migration 0023). */
const isLook = (text: string) => text === 'select h, e from data_version()' || text.startsWith('select (select coalesce(max(position), 0) from changes)')

t.test('anonymous search pages sent together each take one look of their own, not one per cached read, or none when nothing was written since the last', async (t) => {
  const statements: LoggedStatement[] = []
  const url = await freshDatabaseUrl(t, join(t.testdir(), 'calendar.db'))
  const handle = await openDatabase(url, { log: (statement) => statements.push(statement) })
  t.teardown(() => handle.close())
  const app = await buildApp({ db: handle.db, config: defaultConfig({ publicUrl: BASE_URL }), now: () => NOW, spec: SPEC, compilers: createCompilers() })
  t.teardown(() => app.close())
  for (const title of TITLES) {
    const id = await insertEvent(handle.db, { title })
    await writeEventSearch(handle.db, id, eventSearchTexts({ title, description: null, password: null }), true)
  }
  await app.fillEventDocuments()
  t.equal((await app.inject({ url: `${EVENTS}?start_date=2026-01-01` })).headers['x-total'], String(TITLES.length))
  const together = async (needles: readonly string[]) => {
    statements.length = 0
    const answers = await Promise.all(needles.map((needle) => app.inject({ url: `${EVENTS}?start_date=2026-01-01&search=${needle}` })))
    needles.forEach((needle, i) => {
      const res = answers[i]
      const expected = TITLES.filter((title) => title.toLowerCase().includes(needle))
      t.equal(res?.statusCode, 200, needle)
      t.equal(res?.headers['x-total'], String(expected.length), `${needle}: the total`)
      t.strictSame(new Set(res?.json<{ events: Event[] }>().events.map((e) => e.title)), new Set(expected), `${needle}: the page`)
    })
    return statements.map((s) => s.sql)
  }
  // Needles new to the process (each its own count, ids and places), sent at once after a unit of work of this process
  // ended (no look is taken on trust, `provisionalLook`): every page looks for its hot answer, then reads on that look.
  await withTransaction(handle.db, async () => {})
  const looked = await together(['jaz', 'ni', 'bru', 'po', 'ev', 'ght', 'and', 'xq'])
  if (TEST_ENGINE === 'postgres') {
    t.ok(looked.filter(isLook).length <= 8, `at most one look a page: ${looked.filter(isLook).length} for 8 pages (${looked.length} statements)`)
  }
  // Others, with nothing written since the last look, only versions read elsewhere (the pages' own statements, here one
  // read just before): each takes its look on trust and settles it with the statement that lists its events.
  await dataVersion(handle.db)
  const onTrust = await together(['jazz', 'nig', 'br', 'poe', 'eve', 'ing', 'an', 'zq'])
  if (TEST_ENGINE === 'postgres') {
    const listing = onTrust.filter((s) => /^select v\.h, v\.e, \(select string_agg/.test(s)).length
    t.equal(onTrust.filter(isLook).length, 0, `no look of their own: ${onTrust.join(' | ')}`)
    t.equal(listing, 8, 'each page\'s events listed with the data version')
  }
})

t.test('a read on a look of its own (withLook) that reads another version than the look\'s asks the engine for its cached reads after it', async (t) => {
  const url = await freshDatabaseUrl(t, join(t.testdir(), 'calendar.db'))
  const handle = await openDatabase(url)
  t.teardown(() => handle.close())
  const app = await buildApp({ db: handle.db, config: defaultConfig({ publicUrl: BASE_URL }), now: () => NOW, spec: SPEC, compilers: createCompilers() })
  t.teardown(() => app.close())
  const id = await insertEvent(handle.db, { title: 'Before' })
  const db = handle.db
  const generation = await lookedGeneration(db)
  t.equal(await rememberedResult(db, 'count:events:looks', async () => 1), 1, 'remembered at the look')
  const read = await withLook(db, generation, async () => {
    t.equal(await rememberedResult(db, 'count:events:looks', async () => 2), 1, 'on the look: the remembered result')
    // A change made elsewhere (raw SQL: the epoch moves, the log stays put), then a version read in this flow (as a page's
    // documents' read reads it before what it assembles is offered at it).
    const other = await openDatabase(url)
    await sql`update events set title = 'Changed' where id = ${id}`.execute(other.db)
    await other.close()
    await dataVersion(db)
    return rememberedResult(db, 'count:events:looks', async () => 3)
  })
  t.equal(read, 3, 'after a newer version was read, the cached read asked the engine and found the change')
})
