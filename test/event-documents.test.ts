/**
 * Stored event documents (repositories/event-documents.ts, migration 0009): an anonymous `GET
 * /events/{id}` answered from the database must be exactly what assembling the record answers, after
 * any write by the API or by raw SQL to any table a document shows, on both engines.
 *
 * The oracle is the same app with the read cache off: `?ml_language=<the event's own language>` names
 * the same record but never reads a document, so it assembles from the tables each time. Before each
 * write every storable event is checked to have its document stored, so a write that failed to delete
 * one would be served stale and differ. Then the store's own rule: an offer made at a version the data
 * has since left is dropped; a document of another public URL is passed by; drafts and protected events
 * are never stored, and an event with a draft venue is stored as anonymous callers see it (without it).
 */
import t, { type Test } from 'tap'
import { CompiledQuery, sql, type RawBuilder } from 'kysely'
import { createEventDocuments, type EventDocument, type EventDocuments, type OfferedDocument } from '../src/repositories/event-documents.js'
import { dataVersion, eventSearchTexts, joinedIds, listIds, writeEventSearch } from '../src/db/dialect.js'
import { recordChange, withTransaction } from '../src/db/unit-of-work.js'
import { join } from 'node:path'
import { readCacheStats } from '../src/repositories/read-cache.js'
import { SPEC } from './helpers/contract.js'
import { propertyRuns, propertySeed, seededRandom } from './helpers/property.js'
import { openDatabase, type LoggedStatement } from '../src/db/database.js'
import { EVENTS, setup, type Event, type Setup } from './helpers/events.js'
import { TEST_ENGINE, freshDatabaseUrl, writeFromAnotherHandle } from './helpers/database.js'
import { insertEvent } from './helpers/fixtures.js'
import type { FastifyInstance } from 'fastify'
import { buildApp } from '../src/app.js'
import { defaultConfig } from '../src/config.js'
import { createCompilers } from '../src/http/compilers.js'
import { API, API_URL, BASE_URL, NOW } from './helpers/build.js'
import { recordSerializers } from '../src/http/serialized.js'
import { storedEvents } from '../src/repositories/event-records.js'
import { eventDocument } from '../src/handlers/event-documents.js'
import { seenBy } from '../src/lib/event-view.js'
import type { AppContext } from '../src/handlers/context.js'

const EVENT_SCHEMA = (SPEC.document.components as { schemas: Record<string, unknown> }).schemas.Event
/** The settings of the apps these tests build (no extension, a UTC site). */
const SITE = { geoloc: false, timeZone: 'UTC' }

async function stored(s: Setup): Promise<number[]> {
  const rows = await s.db.selectFrom('event_documents').select('event_id').orderBy('event_id').execute()
  return rows.map((r) => Number(r.event_id))
}

/** Reads every event anonymously twice (the second from its document when it has one) and compares both with the oracle. */
async function check(t: Test, s: Setup, ids: readonly number[], label: string, oracle?: FastifyInstance): Promise<void> {
  const documents = s.app.eventDocuments
  for (const id of ids) {
    for (const round of [1, 2]) {
      const read = await s.get(id)
      const language = read.statusCode === 200 ? read.json<Event>().ml_language : 'en'
      const oracle = await s.get(id, `?ml_language=${language}`)
      if (read.statusCode !== oracle.statusCode || read.body !== oracle.body || read.headers.etag !== oracle.headers.etag) {
        t.fail(`${label}: event ${id}, read ${round} differs from the assembled record`, {
          status: [read.statusCode, oracle.statusCode], etag: [read.headers.etag, oracle.headers.etag],
          body: read.body === oracle.body ? 'same' : [read.body.slice(0, 400), oracle.body.slice(0, 400)],
        })
        return
      }
      await documents.settled()
    }
  }
  t.pass(`${label}: ${ids.length} events read as assembled`)
  if (oracle === undefined) return
  // Lists: anonymous pages from documents (the second time) against an app that never reads them.
  for (const query of ['?per_page=50', '?per_page=3&page=2', '?ml_language=de', '?ml_language=es']) {
    for (const round of [1, 2]) {
      const read = await s.get('', query)
      const expected = await oracle.inject({ url: `${EVENTS}${query}` })
      if (read.statusCode !== expected.statusCode || read.body !== expected.body || read.headers['x-total'] !== expected.headers['x-total']) {
        t.fail(`${label}: the list ${query}, read ${round}, differs from the assembled one`, {
          status: [read.statusCode, expected.statusCode], body: [read.body.slice(0, 600), expected.body.slice(0, 600)],
        })
        return
      }
      await documents.settled()
    }
  }
  t.pass(`${label}: lists read as assembled`)
}

/** The same app on the same database, without documents or read cache: it assembles every answer. */
async function assembling(t: Test, s: Setup): Promise<FastifyInstance> {
  const app = await buildApp({ db: s.db, config: defaultConfig({ publicUrl: BASE_URL, cacheEntries: 0, eventDocuments: false }), now: () => NOW, spec: SPEC, compilers: createCompilers() })
  t.teardown(() => app.close())
  return app
}

t.test('documents answer exactly as the assembly, through every write that changes what they show', async (t) => {
  const s = await setup(t, { config: { cacheEntries: 0 } })
  const documents = s.app.eventDocuments
  const oracle = await assembling(t, s)
  const jazz = await s.category('Jazz')
  const blues = await s.category('Blues')
  const outdoor = await s.tag('Outdoor')
  const hall = await s.venue({ venue: 'Hall', city: 'Vienna', status: 'publish' })
  const club = await s.organizer({ organizer: 'Club', status: 'publish' })
  const a = await s.event('A', { status: 'publish', categories: [jazz.id], tags: [outdoor.id], venue: [hall.id], organizer: [club.id], image: 'https://img.example/a.png' })
  const b = await s.event('B', { status: 'publish', categories: [jazz.id, blues.id], venue: [hall.id] })
  const c = await s.event('C', { status: 'publish', categories: [blues.id], organizer: [club.id] })
  const de = await s.create({ title: 'A auf Deutsch', start_date: '2026-07-01 18:00:00', end_date: '2026-07-01 21:00:00', status: 'publish', translation_of: a.id, ml_language: 'de' })
  const draft = await s.event('Draft', { status: 'draft', categories: [jazz.id] })
  const protectedEvent = await s.event('Secret', { status: 'publish' })
  t.equal((await s.patch(protectedEvent.id, { password: 'open sesame' })).statusCode, 200)
  const hidden = await s.venue({ venue: 'Back room', status: 'draft' })
  const behindDraftVenue = await s.event('Behind', { status: 'publish', venue: [hidden.id] })
  const storable = [a.id, b.id, c.id, de.id, behindDraftVenue.id]
  const all = [...storable, draft.id, protectedEvent.id, 9999]

  await check(t, s, all, 'at first', oracle)
  t.strictSame(await stored(s), storable, 'documents stored for the published events without a password only')
  const anonymous = (await s.get(behindDraftVenue.id)).json<Event>()
  t.strictSame(anonymous.venue, [], 'a draft venue is left out of the stored answer')
  t.equal((await s.get(behindDraftVenue.id, '', s.editor)).json<Event>().venue.length, 1, 'an editor still reads it (assembled)')
  t.ok(documents.stats().hits >= storable.length, 'second reads came from documents')

  // A document read answers 304 for its ETag, and HEAD.
  const etag = (await s.get(a.id)).headers.etag as string
  t.equal((await s.inject({ url: `${EVENTS}/${a.id}`, headers: { 'if-none-match': etag } })).statusCode, 304)
  t.equal((await s.inject({ method: 'HEAD', url: `${EVENTS}/${a.id}` })).statusCode, 200)

  const writes: Array<[string, () => Promise<unknown>, number[]?]> = [
    ['PATCH the event', () => s.patch(a.id, { title: 'A renamed' })],
    ['PATCH a translation (the group)', () => s.patch(de.id, { title: 'A umbenannt' })],
    ['a new translation in the group', () => s.create({ title: 'A en español', start_date: '2026-07-01 18:00:00', end_date: '2026-07-01 21:00:00', status: 'publish', translation_of: a.id, ml_language: 'es' })],
    ['rename a category', () => s.inject({ method: 'PATCH', url: `/calendar/events/v1/categories/${jazz.id}`, headers: s.editor, payload: { name: 'Jazz & more' } }), [a.id, b.id]],
    ['a category count moved by another event', () => s.event('D', { status: 'publish', categories: [blues.id] }), [b.id, c.id]],
    ['rename a tag', () => s.inject({ method: 'PATCH', url: `/calendar/events/v1/tags/${outdoor.id}`, headers: s.editor, payload: { name: 'Open air' } }), [a.id]],
    ['rename a venue', () => s.inject({ method: 'PATCH', url: `/calendar/events/v1/venues/${hall.id}`, headers: s.editor, payload: { venue: 'Great Hall' } })],
    ['rename an organizer', () => s.inject({ method: 'PATCH', url: `/calendar/events/v1/organizers/${club.id}`, headers: s.editor, payload: { organizer: 'The Club' } })],
    ['relink an event', () => s.patch(b.id, { categories: [blues.id], venue: [] })],
    ['a venue made draft', () => s.inject({ method: 'PATCH', url: `/calendar/events/v1/venues/${hall.id}`, headers: s.editor, payload: { status: 'draft' } })],
    ['the venue published again', () => s.inject({ method: 'PATCH', url: `/calendar/events/v1/venues/${hall.id}`, headers: s.editor, payload: { status: 'publish' } })],
    ['an event trashed', () => s.remove(c.id)],
    ['raw: events', () => sql`update events set title = 'Raw title' where id = ${b.id}`.execute(s.db)],
    ['raw: events language', () => sql`update events set language = 'at' where id = ${de.id}`.execute(s.db)],
    ['raw: terms', () => sql`update terms set name = 'Raw term' where id = ${blues.id}`.execute(s.db), [b.id]],
    ['raw: term translation added', () => sql`insert into terms (taxonomy, name, name_key, slug, description, parent, language, translation_group, event_count)
      values ('category', 'Blau', 'blau', 'blau', '', 0, 'de', ${blues.id}, 0)`.execute(s.db)],
    ['raw: venues', () => sql`update venues set city = 'Graz' where id = ${hall.id}`.execute(s.db)],
    ['raw: organizers', () => sql`update organizers set phone = '+43 1' where id = ${club.id}`.execute(s.db)],
    ['raw: images', () => sql`update images set url = 'https://img.example/other.png'`.execute(s.db)],
    ['raw: event_terms', () => sql`delete from event_terms where event_id = ${a.id}`.execute(s.db)],
    ['raw: event_venues', () => sql`insert into event_venues (event_id, venue_id, position) values (${b.id}, ${hall.id}, 0)`.execute(s.db)],
    ['raw: event_organizers', () => sql`delete from event_organizers where event_id = ${a.id}`.execute(s.db)],
    ['raw: an event deleted', () => sql`delete from events where id = ${de.id}`.execute(s.db)],
  ]
  for (const [label, write, keeps = []] of writes) {
    const before = new Set(await stored(s))
    t.ok(before.size >= 2, `before "${label}": ${before.size} documents stored`)
    await write()
    // Terms are read with their documents: a write to a term (its name, its count) leaves them stored.
    const after = new Set(await stored(s))
    for (const id of keeps) t.ok(!before.has(id) || after.has(id), `"${label}" leaves the document of event ${id}`)
    await check(t, s, all, label, oracle)
  }
})

t.test('an offer is stored only while nothing it shows was written since its read: this process\'s writes of other events pass, anything else drops it', async (t) => {
  const s = await setup(t, { file: join(t.testdir(), 'calendar.db'), config: { cacheEntries: 0, eventDocuments: false } })
  const e = await s.event('E', { status: 'publish' })
  const de = await s.create({ title: 'E auf Deutsch', start_date: '2026-07-01 18:00:00', end_date: '2026-07-01 21:00:00', status: 'publish', translation_of: e.id, ml_language: 'de' })
  const other = await s.event('F', { status: 'publish' })
  // A venue whose id is not that of E or of its translation (a change of it must drop the offer as a venue's).
  for (const name of ['Spare', 'Spare too']) await s.venue({ venue: name, status: 'publish' })
  const hall = await s.venue({ venue: 'Hall', status: 'publish' })
  t.notOk([e.id, de.id].includes(hall.id))
  const documents: EventDocuments = createEventDocuments(s.db, { enabled: true, eventSchema: EVENT_SCHEMA, site: SITE, onError: (error) => t.fail(String(error)) })
  t.teardown(() => documents.close())
  const body = Buffer.from('{"categories":[],"tags":[]}')
  const doc = (id: number): EventDocument => ({ id, group: e.id, version: 1, digest: 'x', body, categoryIds: [], tagIds: [], categoryAt: 15, tagAt: 25, ldFrom: 26, ldTo: 26 })
  // E as assembled: its group is its own id, its translations E and de.
  const offered = (id: number): OfferedDocument => ({ ...doc(id), members: [e.id, de.id] })
  let dropped = 0
  /** A unit of work on the app's own handle that runs `statement` and reports a change of event `id` only. */
  const byThisProcess = (id: number, statement: RawBuilder<unknown>) => withTransaction(s.db, async (trx) => {
    await statement.execute(trx)
    recordChange(trx, { resource: 'event', id, action: 'update' })
  })

  /** Reads E (no document), runs `write`, offers E at the version read, and says whether it was stored. */
  const offerAcross = async (write: () => Promise<unknown>): Promise<boolean> => {
    await sql`delete from event_documents`.execute(s.db)
    const read = await documents.read(e.id, API_URL)
    if (read === undefined || read.found) throw new Error('expected no document')
    await write()
    documents.offer(read.version, API_URL, offered(e.id))
    await documents.settled()
    return (await stored(s)).includes(e.id)
  }
  const cases: Array<[string, () => Promise<unknown>, boolean]> = [
    ['nothing written', async () => undefined, true],
    ['a PATCH of another event (this process)', () => s.patch(other.id, { title: 'F moved' }), true],
    ['two PATCHes and a create of other events (this process)', async () => {
      await s.patch(other.id, { title: 'F again' })
      await s.event('G', { status: 'publish' })
      await s.patch(other.id, { cost: '5' })
    }, true],
    ['a PATCH of the event itself', () => s.patch(e.id, { title: 'E renamed' }), false],
    ['a PATCH of one of its translations', () => s.patch(de.id, { title: 'E umbenannt' }), false],
    ['a new translation joins its group', () => s.create({ title: 'E en español', start_date: '2026-07-01 18:00:00', end_date: '2026-07-01 21:00:00', status: 'publish', translation_of: e.id, ml_language: 'es' }), false],
    // Units of work of this process that name only the event they move (the API names the whole group):
    // the offer's translations and its group as it stands now still stop it.
    ['a unit of work moving another event into its group, naming only that event', async () => {
      await byThisProcess(other.id, sql`update events set translation_group = ${e.id}, language = 'fr' where id = ${other.id}`)
    }, false],
    ['a unit of work moving one of its translations out of its group, naming only that one', async () => {
      await byThisProcess(other.id, sql`update events set translation_group = null, language = 'en' where id = ${other.id}`)
      await byThisProcess(de.id, sql`update events set translation_group = null where id = ${de.id}`)
    }, false],
    ['one of its translations deleted for good (no longer in any group)', async () => {
      await byThisProcess(de.id, sql`update events set translation_group = ${e.id} where id = ${de.id}`)
      const res = await s.remove(de.id, '?force=true')
      t.equal(res.statusCode, 200)
    }, false],
    ['a PATCH of a venue (any)', () => s.inject({ method: 'PATCH', url: `/calendar/events/v1/venues/${hall.id}`, headers: s.editor, payload: { phone: '+43 1' } }), false],
    ['a raw write to another event', () => sql`update events set excerpt = 'raw' where id = ${other.id}`.execute(s.db), false],
    ['a raw write between two PATCHes of another event', async () => {
      await s.patch(other.id, { title: 'F before raw' })
      await sql`update events set excerpt = 'raw between' where id = ${other.id}`.execute(s.db)
      await s.patch(other.id, { title: 'F after raw' })
    }, false],
    ['a write of another event by a second handle on the database (another process), its change logged', () => writeFromAnotherHandle(s.url, other.id), false],
  ]
  for (const [label, write, holds] of cases) {
    const before = documents.stats().dropped
    t.equal(await offerAcross(write), holds, `${label}: ${holds ? 'stored' : 'dropped'}`)
    t.equal(documents.stats().dropped - before, holds ? 0 : 1)
    if (!holds) dropped += 1
  }
  t.equal(documents.stats().dropped, dropped)

  // Stored, found, and passed by for another public URL.
  t.strictSame(await documents.read(e.id, API_URL), { found: false, version: await dataVersion(s.db) })
  t.ok(await offerAcross(async () => undefined))
  t.strictSame(await documents.read(e.id, API_URL), { found: true, document: doc(e.id) })
  t.match(await documents.read(e.id, 'https://elsewhere.example/calendar/events/v1'), { found: false }, 'another public URL: passed by')

  // Off: no statement, nothing stored.
  const off = createEventDocuments(s.db, { enabled: false, eventSchema: EVENT_SCHEMA, site: SITE })
  t.equal(await off.read(e.id, API_URL), undefined)
})

t.test('reads and writes running together, seeded: every stored document answers as the assembly, and offers are carried across other events\' writes', async (t) => {
  const s = await setup(t)
  const oracle = await assembling(t, s)
  const documents = s.app.eventDocuments
  const rnd = seededRandom(propertySeed(20261128))
  const pick = <T>(list: readonly T[]): T => list[Math.floor(rnd() * list.length)] as T
  const jazz = await s.category('Jazz')
  const venues = [await s.venue({ venue: 'Hall', status: 'publish' }), await s.venue({ venue: 'Club', status: 'publish' })]
  const events: Event[] = []
  for (let i = 0; i < 8; i++) {
    events.push(await s.event(`Event ${i}`, { status: 'publish', categories: [jazz.id], venue: [pick(venues).id], start_date: `2026-07-0${1 + (i % 5)} 18:00:00`, end_date: `2026-07-0${1 + (i % 5)} 21:00:00` }))
  }
  const languages = ['de', 'es', 'fr', 'it', 'nl']
  let written = 0
  // A raw writer takes no write lock (as a unit of work does), so PostgreSQL may pick it as a deadlock's victim
  // (40P01) against a unit of work's triggers: it tries again, as any client of PostgreSQL would.
  const rawUpdate = async (query: RawBuilder<unknown>): Promise<unknown> => {
    for (let attempt = 1; ; attempt++) {
      try {
        return await query.execute(s.db)
      } catch (error) {
        if (attempt >= 5 || (error as { code?: string }).code !== '40P01') throw error
      }
    }
  }
  const operations: Array<[number, () => Promise<unknown>]> = [
    [40, () => s.get(pick(events).id)],
    [15, () => s.get('', `?per_page=${pick([3, 10])}&page=${pick([1, 2])}`)],
    [20, () => s.patch(pick(events).id, { title: `Edit ${++written}` })],
    [5, () => s.inject({ method: 'PATCH', url: `/calendar/events/v1/venues/${pick(venues).id}`, headers: s.editor, payload: { city: `City ${++written}` } })],
    [5, async () => {
      const of = pick(events)
      const language = languages[written++ % languages.length] as string
      const res = await s.inject({ method: 'POST', url: EVENTS, headers: s.editor, payload: { title: `${of.title} (${language})`, start_date: '2026-07-02 18:00:00', end_date: '2026-07-02 21:00:00', status: 'publish', translation_of: of.id, ml_language: language } })
      if (res.statusCode === 201) events.push(res.json<Event>())
    }],
    [5, () => rawUpdate(sql`update events set excerpt = ${`raw ${++written}`} where id = ${pick(events).id}`)],
    [5, () => s.patch(pick(events).id, { venue: [pick(venues).id], categories: rnd() < 0.5 ? [jazz.id] : [] })],
    [2, () => s.remove(pick(events).id)],
    // An event read (its offer made at the version read), then it or one of its translations written:
    // through the API, or by raw SQL after a write of another event through the API.
    [10, async () => {
      const read = await s.get(pick(events).id)
      if (read.statusCode !== 200) return
      const id = pick(Object.values(read.json<Event>().translations))
      if (rnd() < 0.6) return s.patch(id, { title: `Edit ${++written}` })
      await s.patch(pick(events).id, { cost: `${++written}` })
      return rawUpdate(sql`update events set excerpt = ${`raw ${++written}`} where id = ${id}`)
    }],
  ]
  const total = operations.reduce((n, [weight]) => n + weight, 0)
  const operation = () => {
    let r = rnd() * total
    for (const [weight, run] of operations) {
      if ((r -= weight) < 0) return run()
    }
    return (operations[0] as [number, () => Promise<unknown>])[1]()
  }
  // Offers are held until the round's writes are done (as on a node whose loop is slow to come back to them), then made.
  const offer = documents.offer.bind(documents)
  const held: Array<() => void> = []
  documents.offer = (...args) => {
    held.push(() => offer(...args))
  }
  t.teardown(() => {
    documents.offer = offer
  })
  const rounds = propertyRuns(60)
  for (let round = 1; round <= rounds; round++) {
    await Promise.all(Array.from({ length: 6 }, operation))
    for (const make of held.splice(0)) make()
    await documents.settled()
    // Every stored document against the assembly (status, bytes, ETag).
    for (const id of await stored(s)) {
      const read = await s.get(id)
      const expected = await oracle.inject({ url: `${EVENTS}/${id}` })
      if (read.statusCode !== expected.statusCode || read.body !== expected.body || read.headers.etag !== expected.headers.etag) {
        t.fail(`round ${round}: the stored document of event ${id} differs from the assembled record`, { body: [read.body.slice(0, 300), expected.body.slice(0, 300)] })
        return
      }
    }
    if (round % 20 === 0) t.pass(`rounds up to ${round}: the stored documents answered as assembled after each`)
  }
  documents.offer = offer
  // Every event (trashed ones too) twice, the second time from its document when it has one, against the
  // assembling app; then the lists.
  for (const { id } of events) {
    for (const round of [1, 2]) {
      const read = await s.get(id)
      const expected = await oracle.inject({ url: `${EVENTS}/${id}` })
      if (read.statusCode !== expected.statusCode || read.body !== expected.body || read.headers.etag !== expected.headers.etag) {
        t.fail(`at the end: event ${id}, read ${round}, differs from the assembled record`, { status: [read.statusCode, expected.statusCode], body: [read.body.slice(0, 300), expected.body.slice(0, 300)] })
        return
      }
      await documents.settled()
    }
  }
  await check(t, s, [], 'at the end', oracle)
  const stats = documents.stats()
  t.ok(stats.carried > 0, `offers carried across other events' writes: ${stats.carried} of ${stats.stored} stored, ${stats.dropped} dropped`)
})

t.test('a batch gives way to a writer in the middle of its transaction (PostgreSQL) and drops its offers', async (t) => {
  const url = await freshDatabaseUrl(t)
  const handle = await openDatabase(url)
  t.teardown(() => handle.close())
  if (handle.engine !== 'postgres') {
    // SQLite has one writer at a time: the batch's BEGIN IMMEDIATE waits for it (the version check covers what it wrote).
    t.equal(handle.engine, 'sqlite')
    return
  }
  const documents = createEventDocuments(handle.db, { enabled: true, eventSchema: EVENT_SCHEMA, site: SITE, onError: (error) => t.fail(String(error)) })
  t.teardown(() => documents.close())
  const read = await documents.read(1, API_URL)
  if (read === undefined || read.found) throw new Error('expected no document')
  // Another connection writes venues without taking the API's write lock and has not committed.
  const other = await openDatabase(url)
  t.teardown(() => other.close())
  await other.db.connection().execute(async (connection) => {
    await sql`begin`.execute(connection)
    await sql`update venues set phone = '1'`.execute(connection)
    documents.offer(read.version, API_URL, { id: 1, group: 1, version: 1, digest: 'x', body: Buffer.from('{}'), categoryIds: [], tagIds: [], categoryAt: 1, tagAt: 1, ldFrom: 1, ldTo: 1, members: [1] })
    await documents.settled()
    await sql`rollback`.execute(connection)
  })
  t.equal(documents.stats().dropped, 1, 'dropped, not waited for')
  t.strictSame((await handle.db.selectFrom('event_documents').select('event_id').execute()).length, 0)
})

t.test('a fill stores the documents missing, of the published events without a password, and they answer as assembled', async (t) => {
  const s = await setup(t, { config: { cacheEntries: 0 } })
  const hall = await s.venue({ venue: 'Hall', status: 'publish' })
  const hidden = await s.venue({ venue: 'Back room', status: 'draft' })
  const ids: number[] = []
  for (let i = 0; i < 250; i++) {
    const status = i % 10 === 3 ? 'draft' : 'publish'
    const venue = i % 10 === 5 ? [hidden.id] : [hall.id]
    ids.push((await s.event(`Event ${i}`, { status, venue })).id)
  }
  const secret = ids[7] as number
  t.equal((await s.patch(secret, { password: 'open sesame' })).statusCode, 200)
  const storable = ids.filter((_, i) => i % 10 !== 3 && i !== 7)
  await s.app.fillEventDocuments()
  t.strictSame(await stored(s), storable, 'every storable event has its document, and no other')
  const documents = s.app.eventDocuments
  const hits = documents.stats().hits
  await check(t, s, ids.filter((_, i) => i % 7 === 0), 'filled')
  t.ok(documents.stats().hits > hits, 'reads came from the filled documents')
  // A second pass finds nothing to do; a rename deletes and a new pass stores again.
  await s.app.fillEventDocuments()
  t.equal((await stored(s)).length, storable.length)
  await s.inject({ method: 'PATCH', url: `/calendar/events/v1/venues/${hall.id}`, headers: s.editor, payload: { venue: 'Great Hall' } })
  t.strictSame(await stored(s), ids.filter((_, i) => i % 10 === 5), 'the rename deleted every document showing the venue, and only those')
  await s.app.fillEventDocuments()
  t.strictSame(await stored(s), storable)
  await check(t, s, ids.filter((_, i) => i % 11 === 0), 'filled after the rename')
})

t.test('a fill keeps none of the events it assembles in the read cache; reads still do', async (t) => {
  const s = await setup(t)
  const ids: number[] = []
  for (let i = 0; i < 30; i++) ids.push((await s.event(`Event ${i}`)).id)
  // A write outside the log (the epoch moves): the cache drops every record its answers to the creates kept.
  await sql`update events set title = title`.execute(s.db)
  await s.app.fillEventDocuments()
  t.equal((await stored(s)).length, ids.length, 'every event has its document')
  const records = () => readCacheStats(s.db)?.misses.records ?? 0
  const hits = () => readCacheStats(s.db)?.hits.records ?? 0
  const read = async (id: number) => {
    // An editor's read assembles (documents answer anonymous reads only).
    const res = await s.inject({ url: `/calendar/events/v1/events/${id}`, headers: s.editor })
    t.equal(res.statusCode, 200)
  }
  const picked = [ids[0], ids[12], ids[29]] as number[]
  const missesBefore = records()
  for (const id of picked) await read(id)
  t.ok(records() - missesBefore >= picked.length, `none of them came from the cache after the fill (${records() - missesBefore} misses)`)
  const hitsBefore = hits()
  for (const id of picked) await read(id)
  t.ok(hits() - hitsBefore >= picked.length, `read again, they came from the cache (${hits() - hitsBefore} hits)`)
})

/** A document for event `id` that the store takes (its bytes are not read back here). */
const fake = (id: number): OfferedDocument => ({ id, group: id, version: 1, digest: 'x', body: Buffer.from('{}'), categoryIds: [], tagIds: [], categoryAt: 1, tagAt: 1, ldFrom: 1, ldTo: 1, members: [id] })

t.test('a fill looks through the events a window of ids at a time, and stores every missing document', async (t) => {
  const s = await setup(t, { config: { cacheEntries: 0, eventDocuments: false } })
  const ids: number[] = []
  // Every fourth a draft, every fourth (another) protected: neither ever has a document.
  const kept = (i: number): boolean => i % 4 === 0 || i % 4 === 3
  for (let i = 0; i < 40; i++) {
    const { id } = await s.event(`Event ${i}`, { status: i % 4 === 1 ? 'draft' : 'publish' })
    if (i % 4 === 2) t.equal((await s.patch(id, { password: 'open sesame' })).statusCode, 200)
    ids.push(id)
  }
  // One published event has a document of another public URL only: it is still missing for this one.
  const elsewhere = createEventDocuments(s.db, { enabled: true, eventSchema: EVENT_SCHEMA, site: SITE, onError: (error) => t.fail(String(error)) })
  t.teardown(() => elsewhere.close())
  const other = ids[3] as number
  await elsewhere.fill('https://elsewhere.example/calendar/events/v1', async (batch) => batch.filter((id) => id === other).map(fake))
  t.strictSame(await stored(s), [other], 'a document of another public URL')
  const documents = createEventDocuments(s.db, { enabled: true, eventSchema: EVENT_SCHEMA, site: SITE, fillWindow: 7, onError: (error) => t.fail(String(error)) })
  t.teardown(() => documents.close())
  const asked: number[][] = []
  await documents.fill(API_URL, async (batch) => {
    asked.push([...batch])
    return batch.map(fake)
  })
  const published = ids.filter((_, i) => kept(i))
  t.strictSame(asked.flat(), published, 'every published event without a password was asked for, that of another URL too, and nothing else')
  t.strictSame(await stored(s), published, 'every published event without a password has its document')
  t.ok(asked.every((batch) => batch.length > 0 && (batch.at(-1) as number) - (batch[0] as number) < 7), 'each statement looked through one window')
  // A second pass over a filled database asks for nothing.
  asked.length = 0
  await documents.fill(API_URL, async (batch) => {
    asked.push([...batch])
    return batch.map(fake)
  })
  t.strictSame(asked, [], 'nothing missing, nothing assembled')
})

t.test('a fill looks each event\'s document up by its id: through indexes only on SQLite, one lookup per event on PostgreSQL whatever its statistics say', async (t) => {
  const statements: LoggedStatement[] = []
  const handle = await openDatabase(await freshDatabaseUrl(t), { log: (statement) => statements.push(statement) })
  t.teardown(() => handle.close())
  for (let i = 0; i < 30; i++) await insertEvent(handle.db, i % 10 === 0 ? { password: 'secret' } : {})
  // Statistics taken while every document is of another public URL, then documents of this one stored:
  // PostgreSQL's planner would take this URL's for none (and read every document once per event in a join).
  const elsewhere = createEventDocuments(handle.db, { enabled: true, eventSchema: EVENT_SCHEMA, site: SITE, onError: (error) => t.fail(String(error)) })
  t.teardown(() => elsewhere.close())
  await elsewhere.fill('https://elsewhere.example/calendar/events/v1', async (batch) => batch.map(fake))
  await sql`analyze event_documents`.execute(handle.db)
  await sql`delete from event_documents`.execute(handle.db)
  const documents = createEventDocuments(handle.db, { enabled: true, eventSchema: EVENT_SCHEMA, site: SITE, onError: (error) => t.fail(String(error)) })
  t.teardown(() => documents.close())
  await documents.fill(API_URL, async (batch) => batch.map(fake))
  statements.length = 0
  await documents.fill(API_URL, async (batch) => {
    t.fail(`nothing is missing, ${batch.length} asked for`)
    return []
  })
  const looks = statements.filter((s) => /not exists/i.test(s.sql) && s.sql.includes('event_documents'))
  t.ok(looks.length > 0, `the fill looked (${looks.length} statements)`)
  for (const look of looks) {
    const plan = await handle.db.connection().execute(async (connection) => {
      // PostgreSQL: whether indexes CAN serve it (at 30 rows reading a table whole is cheaper), as test/query-plans.test.ts asks.
      if (TEST_ENGINE === 'postgres') await sql`set enable_seqscan = off`.execute(connection)
      try {
        const { rows } = await connection.executeQuery(CompiledQuery.raw(`explain ${TEST_ENGINE === 'postgres' ? '' : 'query plan '}${look.sql}`, [...look.parameters]))
        return (rows as Array<Record<string, string>>).map((r) => (r.detail ?? r['QUERY PLAN'] ?? '').trim())
      } finally {
        if (TEST_ENGINE === 'postgres') await sql`reset enable_seqscan`.execute(connection)
      }
    })
    const shown = `\n  ${plan.join('\n  ')}`
    if (TEST_ENGINE === 'postgres') {
      t.notOk(plan.some((line) => /Join/.test(line)), `the documents are not joined${shown}`)
      // By its key, an index scan or a bitmap scan of it (which the planner takes follows the table's statistics, which a
      // schema emptied by DELETE for the next test keeps: test/helpers/database.ts): one lookup per event either way.
      const byKey = plan.some((line) => /^-> +Index (Only )?Scan using event_documents_pkey on event_documents d/.test(line))
        || (plan.some((line) => /^-> +Bitmap Index Scan on event_documents_pkey/.test(line)) && plan.some((line) => /^Index Cond: \(event_id = e\.id\)/.test(line)))
      t.ok(plan.some((line) => /^SubPlan/.test(line)) && byKey, `each event's document looked up by its id${shown}`)
      continue
    }
    t.ok(plan.some((line) => /^SEARCH e USING COVERING INDEX events_by_id_listing \(id>\? AND id<\?\)/.test(line)), `the events' ids and statuses from their index${shown}`)
    t.ok(plan.some((line) => /^SEARCH d USING COVERING INDEX event_documents_context \(context=\? AND rowid=\?\)/.test(line)), `the documents' contexts from their index${shown}`)
    t.notOk(plan.some((line) => /^(SCAN|SEARCH) (d|e)\b(?!.*COVERING INDEX)/.test(line)), `no row of an event or a document read for the look${shown}`)
  }
})

t.test('a fill between requests assembles from what the database holds, not from what the read cache saw at the last request', async (t) => {
  // The read cache on (its default): it looks at the data version once per request; the fill runs between requests.
  const s = await setup(t)
  const e = await s.event('Before', { status: 'publish' })
  t.equal((await s.get(e.id)).json<Event>().title, 'Before')
  await s.app.eventDocuments.settled()
  t.strictSame(await stored(s), [e.id], 'the read stored its document')
  // A raw write on the app's own handle, outside any unit of work and any request: its document is deleted.
  await sql`update events set title = 'After' where id = ${e.id}`.execute(s.db)
  t.strictSame(await stored(s), [])
  await s.app.fillEventDocuments()
  t.strictSame(await stored(s), [e.id], 'the fill stored it again')
  t.equal((await s.get(e.id)).json<Event>().title, 'After', 'from the row as written, not from the record cached before the write')
  await check(t, s, [e.id], 'after the fill', await assembling(t, s))
})

t.test('a node with other settings on the same database (geoloc off, another site time zone) neither serves nor keeps another\'s documents', async (t) => {
  const s = await setup(t, { config: { cacheEntries: 0, extensions: new Set(['geoloc'] as const), timezone: 'Europe/Zurich' } })
  const hall = await s.venue({ venue: 'Geo Hall', status: 'publish', geo_lat: 47.37, geo_lng: 8.54 })
  const event = await s.event('Near the lake', { status: 'publish', venue: [hall.id] })
  // Another node: no extension, the site on Kiritimati (+14:00); documents on, no read cache.
  const other = await buildApp({
    db: s.db, config: defaultConfig({ publicUrl: BASE_URL, cacheEntries: 0, timezone: 'Pacific/Kiritimati' }), now: () => NOW, spec: SPEC, compilers: createCompilers(),
  })
  t.teardown(() => other.close())
  const otherRead = async (query = '') => {
    const res = await other.inject({ url: `${EVENTS}/${event.id}${query}` })
    t.equal(res.statusCode, 200)
    return res
  }
  // Each node reads the event twice (the second time from its own document) and then the other node does.
  for (let round = 1; round <= 2; round++) {
    for (let read = 1; read <= 2; read++) {
      const here = await s.get(event.id)
      t.match(here.json<Event>(), { date: '2026-06-15 14:00:00', date_utc: '2026-06-15 12:00:00', venue: [{ geo_lat: 47.37, geo_lng: 8.54 }] }, `this node, round ${round}, read ${read}`)
      t.equal(here.body, (await s.get(event.id, '?ml_language=en')).body, 'as this node assembles it')
      await s.app.eventDocuments.settled()
    }
    for (let read = 1; read <= 2; read++) {
      const there = await otherRead()
      t.match(there.json<Event>(), { date: '2026-06-16 02:00:00', modified: '2026-06-16 02:00:00', venue: [{ geo_lat: null, geo_lng: null }] }, `the other node, round ${round}, read ${read}`)
      t.equal(there.body, (await otherRead('?ml_language=en')).body, 'as the other node assembles it')
      const list = await other.inject({ url: `${EVENTS}?start_date=2026-01-01` })
      t.match(list.json<{ events: Event[] }>().events, [{ id: event.id, date: '2026-06-16 02:00:00', venue: [{ geo_lat: null }] }], 'its list too')
      await other.eventDocuments.settled()
    }
  }
  // Venues (and organizers: the same fields) show date and modified in each node's zone too.
  const venueHere = (await s.inject({ url: `${API}/venues/${hall.id}` })).json<{ date: string; modified: string }>()
  const venueThere = (await other.inject({ url: `${API}/venues/${hall.id}` })).json<{ date: string; modified: string }>()
  t.match(venueHere, { date: '2026-06-15 14:00:00', modified: '2026-06-15 14:00:00' }, 'the venue in Zurich')
  t.match(venueThere, { date: '2026-06-16 02:00:00', modified: '2026-06-16 02:00:00' }, 'the venue on Kiritimati')
  // An event has one document: each node's store replaces the other's (the table's key is the event).
  const contexts = await s.db.selectFrom('event_documents').select('context').where('event_id', '=', event.id).execute()
  t.equal(contexts.length, 1, 'one document an event: each node replaces the other\'s')
})

t.test('a read by id without a hot answer asks once: on PostgreSQL its look at the data version reads the document too, and a change that look finds is taken in before the answer is made', async (t) => {
  const statements: LoggedStatement[] = []
  const url = await freshDatabaseUrl(t, join(t.testdir(), 'calendar.db'))
  const handle = await openDatabase(url, { log: (statement) => statements.push(statement) })
  t.teardown(() => handle.close())
  const app = await buildApp({ db: handle.db, config: defaultConfig({ publicUrl: BASE_URL }), now: () => NOW, spec: SPEC, compilers: createCompilers() })
  t.teardown(() => app.close())
  const term = await handle.db.insertInto('terms').values({ taxonomy: 'category', language: 'en', translation_group: null, name: 'Concerts', name_key: 'concerts', slug: 'concerts', description: null })
    .returning('id').executeTakeFirstOrThrow()
  const termId = Number(term.id)
  const [x, y] = [await insertEvent(handle.db, { title: 'X' }, { terms: [termId] }), await insertEvent(handle.db, { title: 'Y' }, { terms: [termId] })]
  const read = async (id: number) => {
    const res = await app.inject({ url: `${API}/events/${id}` })
    t.equal(res.statusCode, 200)
    return res
  }
  // Each read first assembled (its document offered and stored), then from its document (the answer kept as hot).
  for (const id of [x, y]) {
    await read(id)
    await app.eventDocuments.settled()
  }
  t.strictSame(await stored({ db: handle.db } as Setup), [x, y], 'both documents stored')
  const fromDocuments = app.eventDocuments.stats().hits
  statements.length = 0
  const first = await read(x)
  t.equal(app.eventDocuments.stats().hits, fromDocuments + 1, 'answered from its document')
  const expected = TEST_ENGINE === 'postgres'
    // One statement: the look (the change log's head, the epoch) and the document beside it (migration 0023's function).
    ? [/^select h, e, event_id, .* from event_document\(\$1, \$2\)$/]
    // SQLite's look is the connection's probe (no statement of the query builder), then the document.
    : [/^select event_id, .* from event_documents where event_id = \? and context = \?$/]
  t.equal(statements.length, expected.length, `one statement: ${statements.map((s) => s.sql).join(' | ')}`)
  expected.forEach((pattern, i) => t.match(statements[i]?.sql ?? '', pattern))
  // The term renamed by another handle (outside the API: the epoch moves, the log stays put): the next read of
  // Y (no hot answer kept) finds the change in the same statement that reads Y's document, and shows the new name.
  const other = await openDatabase(url)
  await sql`update terms set name = 'Live music' where id = ${termId}`.execute(other.db)
  await other.close()
  const after = await read(y)
  t.equal(after.json<Event>().categories[0]?.name, 'Live music', 'the renamed term shown')
  const again = await read(x)
  t.equal(again.json<Event>().categories[0]?.name, 'Live music', 'the hot answer made before the change not served')
  t.not(again.headers.etag, first.headers.etag, 'with a new ETag')
})

/** An app on a fresh database whose statements are logged, with three events (A, B, C) inserted. */
async function loggedAppWithThreeEvents(t: Test) {
  const statements: LoggedStatement[] = []
  const url = await freshDatabaseUrl(t, join(t.testdir(), 'calendar.db'))
  const handle = await openDatabase(url, { log: (statement) => statements.push(statement) })
  t.teardown(() => handle.close())
  const app = await buildApp({ db: handle.db, config: defaultConfig({ publicUrl: BASE_URL }), now: () => NOW, spec: SPEC, compilers: createCompilers() })
  t.teardown(() => app.close())
  const ids = [await insertEvent(handle.db, { title: 'A' }), await insertEvent(handle.db, { title: 'B' }), await insertEvent(handle.db, { title: 'C' })]
  return { statements, url, handle, app, ids }
}

t.test('an anonymous list page on PostgreSQL takes its look on trust: the statement of its documents settles it, and a page read across a change made elsewhere is read again after a real look', async (t) => {
  const { statements, url, handle, app, ids } = await loggedAppWithThreeEvents(t)
  // The same page under different URLs (a URL asked again is a hot answer: test/hot-lists.test.ts).
  const page = async (query = 'per_page=2&start_date=2026-01-01') => {
    const res = await app.inject({ url: `${EVENTS}?${query}` })
    t.equal(res.statusCode, 200)
    t.equal(res.headers['x-total'], '3')
    return res.json<{ events: Event[] }>().events.map((e) => e.title)
  }
  // Documents stored by a fill (which keeps none of the records it assembles in the read cache).
  await app.fillEventDocuments()
  t.strictSame(await stored({ db: handle.db } as Setup), ids, 'the documents stored')
  // The fill read the version: the first page looks for real (its count and ids remembered), the next takes its look on trust.
  t.strictSame(await page(), ['A', 'B'])
  // A look: the version's statement (PostgreSQL: the call of its function, migration 0023).
  const looks = (sqls: readonly string[]) => sqls.filter((s) => s.startsWith('select (select coalesce(max(position), 0) from changes)') || s === 'select h, e from data_version()').length
  // The documents' statement with the version: the call of the schema's function (migration 0025), planned once per connection.
  const settling = (sqls: readonly string[]) => sqls.filter((s) => /^select h, e, event_id, .* from event_documents_read\(\$1, \$2\)$/.test(s)).length
  statements.length = 0
  t.strictSame(await page('page=1&per_page=2&start_date=2026-01-01'), ['A', 'B'])
  const onTrust = statements.map((s) => s.sql)
  if (TEST_ENGINE === 'postgres') {
    t.equal(looks(onTrust), 0, `no look of its own: ${onTrust.join(' | ')}`)
    t.equal(settling(onTrust), 1, 'the documents\' statement read the version')
    t.equal(onTrust.length, 1, 'one statement for the page (its count and ids remembered)')
  } else {
    // SQLite's look is the connection's probe (no statement of the query builder): nothing on trust.
    t.equal(settling(onTrust), 0)
  }
  // The same URL again: kept as its hot answer (a list is kept at its second read: test/hot-lists.test.ts)…
  t.strictSame(await page('page=1&per_page=2&start_date=2026-01-01'), ['A', 'B'])
  // …and answered from it the third time, after one look of its own.
  statements.length = 0
  t.strictSame(await page('page=1&per_page=2&start_date=2026-01-01'), ['A', 'B'])
  if (TEST_ENGINE === 'postgres') t.strictSame(statements.map((s) => looks([s.sql])), [1], 'the hot answer: one look, nothing else')
  else t.equal(statements.length, 0, 'the hot answer: no statement of the query builder')
  // A raw write from another handle (the epoch moves, the log stays put) between two pages: the page taken on trust
  // finds it in its documents' statement and is read again after a real look.
  const other = await openDatabase(url)
  await sql`update events set title = 'Changed' where id = ${ids[1] as number}`.execute(other.db)
  await other.close()
  statements.length = 0
  t.strictSame(await page('start_date=2026-01-01&per_page=2'), ['A', 'Changed'], 'the change shown')
  const again = statements.map((s) => s.sql)
  if (TEST_ENGINE === 'postgres') {
    t.equal(settling(again), 1, `taken on trust first: ${again.join(' | ')}`)
    t.ok(looks(again) >= 1, 'then read again after a real look')
  }
  t.strictSame(await page(), ['A', 'Changed'])
})

t.test('PostgreSQL: a search new to the process, read on trust, settles its look with the statement that lists its events (no look of its own after it)', async (t) => {
  const statements: LoggedStatement[] = []
  const url = await freshDatabaseUrl(t, join(t.testdir(), 'calendar.db'))
  const handle = await openDatabase(url, { log: (statement) => statements.push(statement) })
  t.teardown(() => handle.close())
  const app = await buildApp({ db: handle.db, config: defaultConfig({ publicUrl: BASE_URL, eventDocuments: false }), now: () => NOW, spec: SPEC, compilers: createCompilers() })
  t.teardown(() => app.close())
  const ids: number[] = []
  // Put straight into storage with their search texts (as the API's writes keep them).
  for (const title of ['Jazz night', 'Jazz brunch', 'Poetry evening']) {
    const id = await insertEvent(handle.db, { title })
    await writeEventSearch(handle.db, id, eventSearchTexts({ title, description: null, password: null }), true)
    ids.push(id)
  }
  const search = async (needle: string, expected: string[]) => {
    const res = await app.inject({ url: `${EVENTS}?start_date=2026-01-01&search=${needle}` })
    t.equal(res.statusCode, 200)
    t.equal(res.headers['x-total'], String(expected.length), `${needle}: the total`)
    t.strictSame(res.json<{ events: Event[] }>().events.map((e) => e.title), expected, `${needle}: the page`)
  }
  // No documents (off): the first page assembles the three records and remembers them, after a look of its own.
  t.equal((await app.inject({ url: `${EVENTS}?start_date=2026-01-01` })).headers['x-total'], '3')
  await search('gh', ['Jazz night'])
  const looks = (sqls: readonly string[]) => sqls.filter((s) => s === 'select h, e from data_version()').length
  const listing = (sqls: readonly string[]) => sqls.filter((s) => /^select v\.h, v\.e, \(select string_agg\(q\.id::text, ','\) from \(.*\) as q\) as ids from data_version\(\) as v$/.test(s)).length
  for (const [needle, expected] of [['jaz', ['Jazz night', 'Jazz brunch']], ['ev', ['Poetry evening']], ['xyz', []]] as const) {
    statements.length = 0
    await search(needle, [...expected])
    const sqls = statements.map((s) => s.sql)
    if (TEST_ENGINE === 'postgres') {
      t.equal(listing(sqls), 1, `${needle}: its events and the data version in one statement: ${sqls.join(' | ')}`)
      t.equal(looks(sqls), 0, `${needle}: no look of its own`)
      t.equal(sqls.length, 1, `${needle}: one statement, one round trip (its events remembered)`)
    } else {
      t.equal(listing(sqls), 0, 'SQLite takes no look on trust')
    }
  }
  // A change made elsewhere between two searches (the epoch moves, the log stays put): the version read with the new
  // needle's events does not hold, and the page is read again after a real look; the change is shown.
  await writeFromAnotherHandle(url, ids[0] as number)
  statements.length = 0
  await search('br', ['Jazz brunch'])
  if (TEST_ENGINE === 'postgres') t.ok(looks(statements.map((s) => s.sql)) >= 1, `read again after a real look: ${statements.map((s) => s.sql).join(' | ')}`)
  const res = await app.inject({ url: `${EVENTS}?start_date=2026-01-01&search=night` })
  t.equal(res.json<{ events: Event[] }>().events[0]?.excerpt, 'written elsewhere', 'the change shown')
  // Ids listed off trust (`listIds`): on PostgreSQL one row, the ids joined in one text, not a row each.
  statements.length = 0
  t.strictSame((await listIds(handle.db, handle.db.selectFrom('events').select('id'))).sort((a, b) => a - b), ids, 'every id listed')
  if (TEST_ENGINE === 'postgres') t.match(statements.map((s) => s.sql), [/^select string_agg\(q\.id::text, ','\) as ids from \(select "id" from "events"\) as q$/], 'one row')
})

t.test('ids joined in one text are read as `split(\',\').map(Number)` reads them (joinedIds)', async (t) => {
  const oldWay = (text: string | null | undefined) => (text == null || text === '' ? [] : text.split(',').map(Number))
  const cases = ['', '0', '7', '12,3', '1,22,333,4444', '9007199254740991', '123456789012345,1', '1234567890123456', '1,,2', ',1', '1,', '-1,2', '1e3', ' 1', '12a']
  for (const text of cases) t.strictSame(joinedIds(text), oldWay(text), JSON.stringify(text))
  t.strictSame(joinedIds(null), [], 'null')
  t.strictSame(joinedIds(undefined), [], 'undefined')
  const random = seededRandom(propertySeed(4242))
  for (let run = 0; run < propertyRuns(200); run++) {
    const ids = Array.from({ length: Math.floor(random() * 50) + 1 }, () => Math.floor(random() ** 3 * 10 ** (1 + Math.floor(random() * 12))))
    t.strictSame(joinedIds(ids.join(',')), ids, `run ${run}`)
  }
  // What PostgreSQL's `string_agg` joins (the benchmark's common needles: thousands of ids).
  const many = Array.from({ length: 20000 }, (_, i) => 1 + i * 3)
  t.strictSame(joinedIds(many.join(',')), many, 'twenty thousand ids')
})

t.test('a list page\'s documents are found by their ids (SQLite: no probe of the contexts\' index before each row)', async (t) => {
  const { statements, handle, app, ids } = await loggedAppWithThreeEvents(t)
  await app.fillEventDocuments()
  t.strictSame(await stored({ db: handle.db } as Setup), ids, 'the documents stored')
  // SQLite: statistics of a database of 20,000 documents of one context (the benchmark's; with them, the statement
  // that named `context` plainly was planned through the contexts' index), taken in by `analyze sqlite_schema`.
  if (TEST_ENGINE === 'sqlite') {
    await sql`analyze`.execute(handle.db)
    await sql`update sqlite_stat1 set stat = case when idx is null then '20000' when idx = 'event_documents_context' then '20000 20000' else '20000 1' end
      where tbl = 'event_documents'`.execute(handle.db)
    await sql`analyze sqlite_schema`.execute(handle.db)
  }
  statements.length = 0
  const res = await app.inject({ url: `${EVENTS}?per_page=3&start_date=2026-01-01` })
  t.equal(res.statusCode, 200)
  t.strictSame(res.json<{ events: Event[] }>().events.map((e) => e.title), ['A', 'B', 'C'])
  // PostgreSQL: on a look taken on trust (the fill read versions, nothing was written since), the schema's function with the version.
  const read = statements.filter((s) => /^select (v\.h, v\.e, d\.)?event_id, .* event_documents .*event_id in \(|^select h, e, event_id, .* from event_documents_read\(\$1, \$2\)$/.test(s.sql))
  t.equal(read.length, 1, `one statement read the page's documents: ${statements.map((s) => s.sql).join(' | ')}`)
  if (TEST_ENGINE === 'postgres') return
  const statement = read[0] as LoggedStatement
  const plan = await handle.db.connection().execute(async (connection) => {
    const { rows } = await connection.executeQuery(CompiledQuery.raw(`explain query plan ${statement.sql}`, [...statement.parameters]))
    return (rows as Array<{ detail: string }>).map((r) => r.detail.trim())
  })
  const shown = `\n  ${plan.join('\n  ')}`
  t.ok(plan.some((line) => /^SEARCH event_documents USING INTEGER PRIMARY KEY \(rowid=\?\)/.test(line)), `each document by its id${shown}`)
  t.notOk(plan.some((line) => line.includes('event_documents_context')), `not through the contexts' index${shown}`)
})

t.test('the documents of events this process wrote are stored once its writes pause: a create\'s, an update\'s', async (t) => {
  // server.ts runs it a second after the last write; here at once (without it no document is stored: no read is made before).
  const s = await setup(t)
  const published = [(await s.event('Concert')).id, (await s.event('Lecture')).id]
  const draft = (await s.event('Draft', { status: 'draft' })).id
  t.ok(await s.app.writtenDocuments.run(), 'the fill of the written events ran')
  t.equal(s.app.writtenDocuments.pending(), 0)
  t.strictSame(await stored(s), published, 'the published ones have their documents (no read made them), the draft none')
  const storedBefore = s.app.eventDocuments.stats().stored
  await check(t, s, [...published, draft], 'created')
  t.equal(s.app.eventDocuments.stats().stored, storedBefore, 'the reads found them stored: none offered again')
  // An update: its triggers delete the document, the fill after it stores the new one.
  t.equal((await s.patch(published[0] as number, { title: 'Concert, moved' })).statusCode, 200)
  await s.app.writtenDocuments.run()
  t.strictSame(await stored(s), published, 'stored again after the update')
  const again = s.app.eventDocuments.stats().stored
  await check(t, s, published, 'updated')
  t.equal(s.app.eventDocuments.stats().stored, again, 'the reads found the new one stored')
})

t.test('a document is made with one serialization of its record: the list\'s form is the single one without its JSON-LD, found at its key', async (t) => {
  const s = await setup(t)
  const jazz = await s.category('Jazz')
  const hall = await s.venue({ venue: 'Hall "json_ld": {}', city: 'Vienna', status: 'publish' })
  const ids = [
    (await s.event('Plain', { status: 'publish' })).id,
    // Text that holds the member's key, quoted: escaped inside a string, so not taken for it.
    (await s.event(',"json_ld":{"x":1}}', { status: 'publish', categories: [jazz.id], venue: [hall.id], description: 'a ,"json_ld": b' })).id,
  ]
  const site = { apiUrl: API_URL, geoloc: false, timeZone: 'UTC' }
  const json = recordSerializers(SPEC.document)
  let serialized = 0
  const counting = { ...json, event: (record: Event) => { serialized++; return json.event(record) } }
  for (const stored of await storedEvents(s.db, site, ids, false)) {
    serialized = 0
    const document = eventDocument({ json: counting } as unknown as AppContext, stored)
    if (document === undefined) {
      t.fail(`event ${stored.record.id}: no document made`)
      continue
    }
    t.equal(serialized, 1, `event ${stored.record.id}: its record serialized once`)
    const listed = Buffer.concat([document.body.subarray(0, document.ldFrom), document.body.subarray(document.ldTo)])
    const expected = json.event({ ...seenBy(null, stored.record), categories: [], tags: [] })
    t.equal(listed.toString(), expected.toString(), `event ${stored.record.id}: the document without its JSON-LD is the list's form`)
  }
})
