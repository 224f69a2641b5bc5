/**
 * The read cache: list totals and assembled records are remembered until the data changes, whether it
 * changes through the API, through another process (another connection to the same SQLite file) or
 * through this process's own connection outside the HTTP layer; and it can be turned off.
 */
import { join } from 'node:path'
import t, { type Test } from 'tap'
import { buildApp } from '../src/app.js'
import { defaultConfig } from '../src/config.js'
import { openDatabase } from '../src/db/database.js'
import { dataVersion, versionProbeOf, versionsReadSoFar, type DataVersion } from '../src/db/dialect.js'
import { withTransaction } from '../src/db/unit-of-work.js'
import { createCompilers } from '../src/http/compilers.js'
import { storedEvents, type StoredEvent } from '../src/repositories/event-records.js'
import { LookMoved, MAX_RESULT_BYTES, RESULTS_PER_RECORD, createReadCache, lookHolds, lookedGeneration, onTrust, readCacheStats, settleLook, useReadCache, withLook } from '../src/repositories/read-cache.js'
import { API, NOW } from './helpers/build.js'
import { SPEC, contractProblems } from './helpers/contract.js'
import { insertEvent } from './helpers/fixtures.js'
import { TEST_ENGINE, freshDatabaseUrl } from './helpers/database.js'

const compilers = createCompilers()

async function served(t: Test, cacheEntries?: number) {
  const file = await freshDatabaseUrl(t, join(t.testdir(), 'calendar.db'))
  const own = await openDatabase(file)
  const other = await openDatabase(file)
  // The read cache alone: an anonymous read by id would otherwise come from the event's stored document.
  const config = defaultConfig({ databaseUrl: file, eventDocuments: false, ...(cacheEntries === undefined ? {} : { cacheEntries }) })
  const app = await buildApp({ db: own.db, config, now: () => NOW, spec: SPEC, compilers })
  t.teardown(async () => {
    await app.close()
    await own.close()
    await other.close()
  })
  const get = async <T>(path: string): Promise<T> => {
    const res = await app.inject({ url: `${API}${path}` })
    t.same(contractProblems('GET', `${API}${path}`, res), [], `${path} keeps the contract`)
    t.equal(res.statusCode, 200)
    return res.json<T>()
  }
  const status = async (path: string): Promise<number> => {
    const res = await app.inject({ url: `${API}${path}` })
    t.same(contractProblems('GET', `${API}${path}`, res), [], `${path} keeps the contract`)
    return res.statusCode
  }
  return { own, other, get, status }
}

t.test('a write to another database leaves the cache alone (PostgreSQL: another schema of the same cluster)', async (t) => {
  const { own, other, get } = await served(t)
  const id = await insertEvent(other.db, { slug: 'concert', title: 'Concert' })
  t.equal((await get<{ title: string }>(`/events/${id}`)).title, 'Concert')
  const elsewhere = await openDatabase(await freshDatabaseUrl(t, join(t.testdir(), 'elsewhere.db')))
  t.teardown(() => elsewhere.close())
  await insertEvent(elsewhere.db, { slug: 'elsewhere', title: 'Elsewhere' })
  const hits = readCacheStats(own.db)?.hits.records ?? 0
  t.equal((await get<{ title: string }>(`/events/${id}`)).title, 'Concert')
  t.ok((readCacheStats(own.db)?.hits.records ?? 0) > hits, `served from the cache (${hits} hits before, ${readCacheStats(own.db)?.hits.records ?? 0} after)`)
})

t.test('a write by another connection to the same file drops the cached totals', async (t) => {
  const { other, get } = await served(t)
  const total = async () => (await get<{ total: number }>('/events')).total
  await insertEvent(other.db, { slug: 'first' })
  t.equal(await total(), 1)
  t.equal(await total(), 1, 'served from the cache')
  await insertEvent(other.db, { slug: 'second' })
  t.equal(await total(), 2, 'the other connection committed: counted again')
})

t.test('a record changed by another connection is read anew, by id, by slug and in lists', async (t) => {
  const { other, get } = await served(t)
  const id = await insertEvent(other.db, { slug: 'concert', title: 'Concert' })
  t.equal((await get<{ title: string }>(`/events/${id}`)).title, 'Concert')
  t.equal((await get<{ events: Array<{ title: string }> }>('/events')).events[0]?.title, 'Concert')
  await other.db.updateTable('events').set({ title: 'Concert moved', version: 2 }).where('id', '=', id).execute()
  t.equal((await get<{ title: string }>(`/events/${id}`)).title, 'Concert moved')
  t.equal((await get<{ title: string }>('/events/by-slug/concert')).title, 'Concert moved')
  t.equal((await get<{ events: Array<{ title: string }> }>('/events')).events[0]?.title, 'Concert moved')
})

t.test('a slug changed by another connection: the old one is 404, the new one found', async (t) => {
  const { other, get, status } = await served(t)
  const id = await insertEvent(other.db, { slug: 'picnic', title: 'Picnic' })
  t.equal((await get<{ id: number }>('/events/by-slug/picnic')).id, id)
  await other.db.updateTable('events').set({ slug: 'summer-picnic', version: 2 }).where('id', '=', id).execute()
  t.equal((await get<{ id: number }>('/events/by-slug/summer-picnic')).id, id)
  t.equal(await status('/events/by-slug/picnic'), 404, 'the old slug names nothing')
})

t.test('a row changed through the served connection itself, outside the API, is read anew', async (t) => {
  const { own, get } = await served(t)
  const id = await insertEvent(own.db, { slug: 'talk', title: 'Talk' })
  t.equal((await get<{ title: string }>(`/events/${id}`)).title, 'Talk')
  await own.db.updateTable('events').set({ title: 'Talk, second date' }).where('id', '=', id).execute()
  t.equal((await get<{ title: string }>(`/events/${id}`)).title, 'Talk, second date')
})

t.test('CALENDAR_CACHE_ENTRIES=0: nothing is remembered, every read is assembled', async (t) => {
  const { other, get } = await served(t, 0)
  const id = await insertEvent(other.db, { slug: 'fair', title: 'Fair' })
  t.equal((await get<{ title: string }>(`/events/${id}`)).title, 'Fair')
  t.equal((await get<{ total: number }>('/events')).total, 1)
})

t.test('an entry read while others keep coming is kept; the ones not read again make room, oldest first', async (t) => {
  const handle = await openDatabase(':memory:')
  t.teardown(() => handle.close())
  const cache = createReadCache(10)
  const generation = await cache.sync(handle.db)
  cache.set(generation, 'hot', 0)
  for (let i = 1; i <= 200; i++) {
    cache.set(generation, `k${i}`, i)
    t.equal(cache.get('hot'), 0, `after ${i} more entries, the one read after each is still there`)
  }
  // The tenth place is the one read throughout; the other nine are the newest (read last: reading moves entries).
  const kept = Array.from({ length: 200 }, (_, i) => `k${i + 1}`).filter((key) => cache.peek(key) !== undefined)
  t.same(kept, Array.from({ length: 9 }, (_, i) => `k${192 + i}`), 'the nine newest of the others are kept, no older one')
})

t.test('list results are bounded apart from records: eight per record, and about 32 MB', async (t) => {
  const handle = await openDatabase(':memory:')
  t.teardown(() => handle.close())
  t.equal(RESULTS_PER_RECORD, 8)
  const small = createReadCache(2)
  let computed = 0
  const remember = (cache: typeof small, key: string, value: unknown = key) => cache.remember(handle.db, key, async () => {
    computed++
    return value
  })
  for (let i = 0; i < 16; i++) await remember(small, `count:events:${i}`)
  t.equal(computed, 16)
  for (let i = 0; i < 16; i++) await remember(small, `count:events:${i}`)
  t.equal(computed, 16, 'sixteen results kept beside two records')
  await remember(small, 'count:events:16')
  await remember(small, 'count:events:0')
  t.equal(computed, 18, 'the seventeenth pushed out the least recently used')
  // By size: lists of 1,000 ids (about 8 kB each as estimated), far fewer than the count allows.
  const big = createReadCache(2500)
  const ids = Array.from({ length: 1000 }, (_, i) => i)
  computed = 0
  const lists = Math.ceil(MAX_RESULT_BYTES / (ids.length * 8)) + 100
  for (let i = 0; i < lists; i++) await remember(big, `all:events:${i}`, ids)
  t.equal(computed, lists)
  await remember(big, `all:events:${lists - 1}`, ids)
  t.equal(computed, lists, 'the newest kept')
  await remember(big, 'all:events:0', ids)
  t.equal(computed, lists + 1, `the oldest made room by size, with ${lists} of ${2500 * RESULTS_PER_RECORD} results stored`)
})

t.test('the cache is bounded and keeps nothing computed across a change', async (t) => {
  const handle = await openDatabase(':memory:')
  t.teardown(() => handle.close())
  const cache = createReadCache(2)
  const generation = await cache.sync(handle.db)
  cache.set(generation, 'a', 1)
  cache.set(generation, 'b', 2)
  t.equal(cache.get('a'), 1, 'a read makes an entry the most recently used')
  cache.set(generation, 'c', 3)
  t.equal(cache.get('b'), undefined, 'the least recently used entry made room')
  t.equal(cache.get('a'), 1)
  t.equal(cache.get('c'), 3)
  const before = await cache.sync(handle.db)
  cache.invalidate()
  cache.set(before, 'd', 4)
  t.equal(cache.get('d'), undefined, 'a value computed before the change is not kept')
  t.equal(cache.get('c'), undefined, 'the change dropped everything')
  let computed = 0
  const count = () => cache.remember(handle.db, 'count:events:total', async () => ++computed)
  t.equal(await count(), 1)
  t.equal(await count(), 1, 'remembered')
  await handle.db.insertInto('users').values({ role: 'editor', name: 'someone', created_at: '2026-01-01 00:00:00' }).execute()
  t.equal(await count(), 1, 'a table no cached read reads (users) changed: still remembered')
  await handle.db.insertInto('images').values({ url: 'https://example.org/a.jpg', created_at: '2026-01-01 00:00:00' }).execute()
  t.equal(await count(), 2, 'a row of a table the cache reads changed on this connection, outside the log: computed again')
  t.equal(await createReadCache(0).sync(handle.db), undefined, '0 entries: off')
})

t.test('a change log that went back (a database restored from a copy) drops everything', async (t) => {
  const handle = await openDatabase(':memory:')
  t.teardown(() => handle.close())
  const cache = createReadCache(10)
  let computed = 0
  const lookup = () => cache.remember(handle.db, 'lookup:images:first', async () => ++computed)
  t.equal(await lookup(), 1)
  const entry = { resource: 'events', record_id: 1, language: 'en', action: 'created', changed_utc: '2026-01-01 00:00:00', status: 'publish', author: null } as const
  await handle.db.insertInto('changes').values(entry).execute()
  t.equal(await lookup(), 1, 'a change of an event keeps a result that depends on images only')
  await handle.db.deleteFrom('changes').execute()
  t.equal(await lookup(), 2, 'the log went back: computed again')
})

t.test('given moments, the cache looks at the engine once per moment: again when a request arrives or a unit of work ends', async (t) => {
  const handle = await openDatabase(':memory:')
  t.teardown(() => handle.close())
  let moment = 0
  const cache = createReadCache(10, undefined, () => moment)
  let computed = 0
  const count = () => cache.remember(handle.db, 'count:events:total', async () => ++computed)
  const image = (n: number) => handle.db.insertInto('images').values({ url: `https://example.org/${n}.jpg`, created_at: '2026-01-01 00:00:00' }).execute()
  t.equal(await count(), 1)
  await image(1)
  t.equal(await count(), 1, 'the same moment (no request arrived since the look was asked for): the look is not taken again')
  moment += 1
  t.equal(await count(), 2, 'a new moment: the engine is asked, and the change outside the log drops the result')
  t.equal(await count(), 2, 'remembered within the moment')
  const generation = await cache.sync(handle.db)
  cache.invalidate()
  t.not(await cache.sync(handle.db), generation, 'invalidating forgets the look: the next sync asks again')
  await image(2)
  t.equal(await count(), 3, 'computed again after the invalidation')
  moment += 1
  t.equal(await count(), 4, 'the change seen at the next moment')
  t.equal(await count(), 4)
  // Reads of one request that start together (a document's categories and tags, through Promise.all).
  moment += 1
  const before = versionsReadSoFar()
  const [first, second] = await Promise.all([cache.sync(handle.db), cache.sync(handle.db)])
  t.equal(versionsReadSoFar() - before, 1, 'two reads begun together at a new moment: the engine is asked once')
  t.equal(first, second, 'and both belong to the same generation')
  await image(3)
  moment += 1
  const [a, b] = await Promise.all([count(), count()])
  t.ok(a >= 5 && b >= 5, 'a change seen by reads begun together: neither answers the result remembered before it')
})

t.test('results learn of the changes taken in when next found: kept with the changed events to recheck, dropped past the bound', async (t) => {
  const handle = await openDatabase(':memory:')
  t.teardown(() => handle.close())
  const cache = createReadCache(10)
  const changed = async (ids: readonly number[], resource: 'events' | 'venues' = 'events') => {
    await handle.db.insertInto('changes').values(ids.map((id) => ({ resource, record_id: id, language: 'en', action: 'updated' as const, changed_utc: '2026-01-01 00:00:00', status: 'publish', author: null }))).execute()
    await cache.sync(handle.db)
  }
  let computed = 0
  const asked: number[][] = []
  let holds = true
  const list = () => cache.remember(handle.db, 'all:events:test', async () => ++computed, async (_value, suspects) => {
    asked.push([...suspects].sort((a, b) => a - b))
    return holds
  })
  let counted = 0
  const count = () => cache.remember(handle.db, 'count:events:test', async () => ++counted)
  let looked = 0
  const lookup = () => cache.remember(handle.db, 'lookup:images:test', async () => ++looked)
  t.equal(await list(), 1)
  t.equal(await count(), 1)
  t.equal(await lookup(), 1)
  await changed([3])
  await changed([5, 3])
  await changed([7])
  t.equal(await list(), 1, 'kept across three changes of events')
  t.same(asked, [[3, 5, 7]], 'one recheck, of every event changed since it was computed, each once')
  t.equal(await count(), 2, 'a result without a recheck is computed again')
  t.equal(await list(), 1, 'the recheck held: no recheck until the next change')
  t.equal(asked.length, 1)
  await changed(Array.from({ length: 513 }, (_, i) => 1000 + i))
  t.equal(await list(), 2, 'more than 512 events changed: computed again, without a recheck')
  t.equal(asked.length, 1)
  await changed([9])
  holds = false
  t.equal(await list(), 3, 'a recheck that does not hold: computed again')
  t.same(asked.at(-1), [9])
  await changed([4], 'venues')
  t.equal(await list(), 4, 'a venue changed (an event list shows venues): computed again, without a recheck')
  t.equal(asked.length, 2)
  for (let i = 0; i < 1500; i++) await changed([20_000 + i])
  t.equal(await lookup(), 1, 'a result that depends on images only is kept across 1,500 changes of events (more than the changes kept)')
  holds = true
  t.equal(await list(), 5, 'a result with a recheck, behind more changed events than the bound: computed again')
  t.equal(await count(), 3)
  await changed([1])
  t.equal(await list(), 5, 'and kept again after the next change')
})

t.test('a look taken on trust (how an anonymous list page reads on PostgreSQL): held while nothing moved, settled by a version read with the page, refused once the data moved', async (t) => {
  const handle = await openDatabase(':memory:')
  t.teardown(() => handle.close())
  let moments = 0
  let written = 0
  const cache = createReadCache(10, undefined, () => moments, () => written)
  t.equal(cache.provisional(), undefined, 'no look made yet: none on trust')
  const generation = await cache.sync(handle.db)
  const look = cache.provisional()
  t.ok(look !== undefined && look.generation === generation && !look.settled && !look.over, 'the last look, taken on trust')
  if (look === undefined) return
  // The cache's reads inside `onTrust` take the look's generation without asking the engine.
  const reads = versionsReadSoFar()
  moments++
  t.equal(await onTrust(look, () => cache.sync(handle.db)), generation, 'the generation on trust')
  t.equal(versionsReadSoFar(), reads, 'no version read for it')
  t.ok(look.over, 'over once its request is answered: work it left running looks for itself')
  // The version read with the page (its documents' statement) is the look's: it holds, and stays settled.
  t.equal(cache.settle(look, await dataVersion(handle.db)), true, 'settled by the same version')
  t.equal(await lookHolds(handle.db, look), true, 'settled: holds without another look')
  // A unit of work of this process ended since the last look: a look of its own first.
  await cache.sync(handle.db)
  t.ok(cache.provisional() !== undefined, 'a new look: on trust again')
  written++
  t.equal(cache.provisional(), undefined, 'after a write of this process: none on trust')
  moments++
  await cache.sync(handle.db)
  const second = cache.provisional()
  const third = cache.provisional()
  t.ok(second !== undefined && third !== undefined, 'after a look of its own: on trust again')
  if (second === undefined || third === undefined) return
  // The data moved (a row written outside the log moves the epoch): the page is read again after a real look.
  await handle.db.insertInto('images').values({ url: 'https://example.org/moved.jpg', created_at: '2026-01-01 00:00:00' }).execute()
  let moved: unknown
  try {
    settleLook(second, await dataVersion(handle.db))
  } catch (error) {
    moved = error
  }
  t.ok(moved instanceof LookMoved, 'a version that moved: LookMoved')
  t.ok(second.over && !second.settled, 'nothing more is read on it')
  t.equal(await lookHolds(handle.db, third), false, 'a look of its own finds the move too')
  t.equal(cache.provisional(), undefined, 'and the next read asks the engine')
})

t.test('a look taken for a request made its own (withLook: the replay\'s cold reads on PostgreSQL): its reads look no more while its generation is current', async (t) => {
  const handle = await openDatabase(':memory:')
  t.teardown(() => handle.close())
  let moments = 0
  const cache = createReadCache(10, undefined, () => moments, () => 0)
  useReadCache(handle.db, cache)
  const generation = await lookedGeneration(handle.db)
  t.ok(generation !== undefined, 'a look')
  // Another request arrived since (a new moment): a read outside would look again.
  moments++
  const reads = versionsReadSoFar()
  const both = await withLook(handle.db, generation, () => Promise.all([cache.sync(handle.db), cache.sync(handle.db)]))
  t.strictSame(both, [generation, generation], 'the look\'s generation, for reads begun together too')
  t.equal(versionsReadSoFar(), reads, 'no version read for them')
  t.equal(await cache.sync(handle.db), generation)
  t.equal(versionsReadSoFar(), reads + 1, 'outside it, the new moment is looked at')
  // The data moved (a row written outside the log moves the epoch) and was taken in: that generation is gone.
  await handle.db.insertInto('images').values({ url: 'https://example.org/moved.jpg', created_at: '2026-01-01 00:00:00' }).execute()
  moments++
  const now = await cache.sync(handle.db)
  t.not(now, generation, 'a new generation')
  moments++
  const before = versionsReadSoFar()
  t.equal(await withLook(handle.db, generation, () => cache.sync(handle.db)), now, 'a look gone: the read looks for itself')
  t.equal(versionsReadSoFar(), before + 1, 'one version read')
  t.equal(await withLook(handle.db, undefined, () => cache.sync(handle.db)), now, 'no look given: the same')
})

t.test('SQLite: a unit of work whose begin waited for another node\'s write lock looks at the data as that node\'s commit left it, and a read on this node meanwhile sees it (CONTRACT §15)', async (t) => {
  if (TEST_ENGINE !== 'sqlite') {
    t.pass('PostgreSQL: a look is a statement of its own, never a version kept across a begin')
    return
  }
  const file = await freshDatabaseUrl(t, join(t.testdir(), 'calendar.db'))
  const node = await openDatabase(file)
  const other = await openDatabase(file)
  const sqlite = node.sqlite
  const elsewhere = other.sqlite
  if (sqlite === undefined || elsewhere === undefined) throw new Error('no SQLite handle')
  // This node's begin of a write transaction (`begin immediate`) as it goes when another node holds the write lock:
  // the begin waits, the other node commits, and the begin takes the lock. The other node's commit is made there, as
  // the wait ends (once), so that the race is the same on every run.
  let whileBeginWaits: (() => void) | undefined
  let asBegun: DataVersion | undefined
  const statements = Object.getPrototypeOf(sqlite.prepare('select 1')) as { run: (this: { source: string; database: unknown }, ...parameters: unknown[]) => unknown }
  const run = statements.run
  statements.run = function (...parameters) {
    if (this.database === sqlite && this.source === 'begin immediate') {
      const commit = whileBeginWaits
      whileBeginWaits = undefined
      if (commit !== undefined) {
        commit()
        // A look taken as soon as the begin has run, before the unit of work is told it has begun (the begin is awaited).
        queueMicrotask(() => { asBegun = versionProbeOf(node.db)?.() })
      }
    }
    return run.apply(this, parameters)
  }
  t.teardown(() => { statements.run = run })
  const config = defaultConfig({ databaseUrl: file, eventDocuments: false })
  const app = await buildApp({ db: node.db, config, now: () => NOW, spec: SPEC, compilers })
  t.teardown(async () => {
    await app.close()
    await node.close()
    await other.close()
  })
  const id = await insertEvent(other.db, { slug: 'concert', title: 'Concert' })
  const title = async (): Promise<string> => {
    const res = await app.inject({ url: `${API}/events/${id}` })
    t.same(contractProblems('GET', `${API}/events/${id}`, res), [], 'the read keeps the contract')
    return res.json<{ title: string }>().title
  }
  t.equal(await title(), 'Concert')
  const hits = readCacheStats(node.db)?.hits.records ?? 0
  t.equal(await title(), 'Concert')
  t.ok((readCacheStats(node.db)?.hits.records ?? 0) > hits, 'the record is served from this node\'s cache')

  // The other node's write as its unit of work commits it: the row and its entry in the change log.
  whileBeginWaits = () => {
    elsewhere.transaction(() => {
      elsewhere.prepare('update events set title = ?, version = version + 1 where id = ?').run('Concert moved', id)
      elsewhere.prepare('insert into changes (resource, record_id, language, action, changed_utc, status, author) values (?, ?, ?, ?, ?, ?, ?)')
        .run('events', id, 'en', 'updated', '2026-06-01 10:00:00', 'publish', null)
    })()
  }
  let inside: DataVersion | undefined
  let read: Promise<StoredEvent[]> | undefined
  // A unit of work of this node (the webhook dispatcher's claim, a fill's store, a write), and beside it a read (a
  // request), which looks at the data version as it begins: while the unit of work holds the connection.
  await withTransaction(node.db, async () => {
    inside = versionProbeOf(node.db)?.()
    read = storedEvents(node.db, { apiUrl: `${config.publicUrl}${API}`, geoloc: false, timeZone: 'UTC' }, [id])
  })
  t.equal(whileBeginWaits, undefined, 'the other node committed while this node\'s begin waited for the lock')
  const committed = await dataVersion(other.db)
  t.same(asBegun, committed, 'as the begin has run, the look is the data as the other node\'s commit left it')
  t.same(inside, committed, 'inside the unit of work, too')
  t.equal((await read)?.[0]?.record.title, 'Concert moved', 'a read that looked meanwhile sees the other node\'s write, not the record cached before it')
  t.equal(await title(), 'Concert moved', 'and so does the next request')
})
