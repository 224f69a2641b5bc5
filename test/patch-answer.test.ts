/**
 * A PATCH's answer is its event read back inside its unit of work, its linked venues, organizers and terms taken from
 * the read before the unit when the unit found the data version that read held at and did not change them itself
 * (repositories/event-records.ts `eventAfterWrite`, unit-of-work.ts `writtenSince`; issue 49): for many random
 * PATCHes (texts, costs, flags, statuses that move the terms' counts, terms, venues and organizers replaced, inline
 * ones made, passwords), by an editor and by an author, the event read or not before (its record remembered or
 * assembled by the PATCH's own read), with writes of its venues, organizers and terms between, the answer (its body
 * and `ETag`) is the record a read of the event gives right after it (its body without `json_ld`, its `ETag`).
 */
import t from 'tap'
import { sql } from 'kysely'
import { dataVersion } from '../src/db/dialect.js'
import { recordChange, withTransaction, writtenSince } from '../src/db/unit-of-work.js'
import { API } from './helpers/build.js'
import { engineTest } from './helpers/database.js'
import { eventBody, recordStatements, setup, type Body, type Event, type Headers } from './helpers/events.js'
import { propertyRuns, propertySeed, seededRandom } from './helpers/property.js'

const RUNS = propertyRuns(120)
const SEED = propertySeed(4949)

t.test('a PATCH answers the record a read after it gives', async (t) => {
  t.comment(`seed ${SEED}, ${RUNS} PATCHes`)
  const random = seededRandom(SEED)
  const pick = <T>(list: readonly T[]): T => list[Math.floor(random() * list.length)] as T
  const some = <T>(list: readonly T[], most: number): T[] => [...new Set(Array.from({ length: Math.floor(random() * (most + 1)) }, () => pick(list)))]
  const s = await setup(t)
  const author = await s.auth('author')
  const categories: number[] = []
  const tags: number[] = []
  for (let i = 0; i < 5; i++) {
    categories.push((await s.category(`Category ${i}`)).id)
    tags.push((await s.tag(`Tag ${i}`)).id)
  }
  const venues: number[] = []
  const organizers: number[] = []
  for (let i = 0; i < 4; i++) {
    venues.push((await s.venue({ venue: `Hall ${i}`, city: 'Town' })).id)
    organizers.push((await s.organizer({ organizer: `Club ${i}` })).id)
  }
  // Events of the editor and of the author, linked to shared terms, venues and organizers (their counts move together).
  const events: Array<{ id: number; headers: Headers }> = []
  for (let i = 0; i < 12; i++) {
    const headers = i % 3 === 0 ? author : s.editor
    const made = await s.create(eventBody({
      title: `Event ${i}`, categories: some(categories, 3), tags: some(tags, 3), venue: some(venues, 2), organizer: some(organizers, 2),
      status: headers === author ? 'draft' : 'publish',
    }), headers)
    events.push({ id: made.id, headers })
  }

  let answered = 0
  for (let run = 0; run < RUNS; run++) {
    const { id, headers } = pick(events)
    const editor = headers === s.editor
    // Between PATCHes, now and then: a write of what events show (a venue or term renamed, an organizer's email).
    const other = random()
    if (other < 0.1) {
      await s.inject({ method: 'PATCH', url: `${API}/venues/${pick(venues)}`, headers: s.editor, payload: { venue: `Hall renamed ${run}` } })
    } else if (other < 0.2) {
      await s.inject({ method: 'PATCH', url: `${API}/tags/${pick(tags)}`, headers: s.editor, payload: { name: `Tag renamed ${run}` } })
    } else if (other < 0.25) {
      await s.inject({ method: 'PATCH', url: `${API}/organizers/${pick(organizers)}`, headers: s.editor, payload: { email: `club${run}@example.org` } })
    }
    // Read first or not: the PATCH's own read then finds the record remembered, or assembles it.
    if (random() < 0.5) await s.get(id, '', headers)
    const body: Body = {}
    if (random() < 0.4) body.title = `Edited ${run}`
    if (random() < 0.3) body.cost = pick(['€ 12', '$10 – $20', 'Free', ''])
    if (random() < 0.2) body.featured = random() < 0.5
    if (random() < 0.2) body.description = pick(['<p>An evening</p>', 'Plain text'])
    if (random() < 0.25) body.status = editor ? pick(['publish', 'draft', 'pending', 'private']) : pick(['draft', 'pending'])
    if (random() < 0.25) body.categories = some(categories, 3)
    if (random() < 0.25) body.tags = some(tags, 3)
    if (random() < 0.2) body.venue = random() < 0.2 ? [{ venue: `Inline hall ${run}`, city: 'Town' }] : some(venues, 2)
    if (random() < 0.2) body.organizer = random() < 0.2 ? [{ organizer: `Inline club ${run}` }] : some(organizers, 2)
    if (random() < 0.05) body.password = pick(['secret', ''])
    if (Object.keys(body).length === 0) body.title = `Edited ${run}`
    const res = await s.patch(id, body, headers)
    if (res.statusCode !== 200) {
      t.ok(res.statusCode === 400 || res.statusCode === 403, `run ${run}: ${res.statusCode} ${res.body.slice(0, 200)}`)
      continue
    }
    answered += 1
    const read = await s.get(id, '', headers)
    t.equal(read.statusCode, 200, `run ${run}: read back`)
    const { json_ld: _, ...readBack } = read.json<Event & { json_ld?: unknown }>()
    t.strictSame(res.json<Event>(), readBack, `run ${run}: the answer is the record read after it (${Object.keys(body).join(', ')})`)
    t.equal(res.headers.etag, read.headers.etag, `run ${run}: the same ETag`)
  }
  t.ok(answered >= RUNS / 2, `most PATCHes were made (${answered} of ${RUNS})`)
})

t.test('a unit of work tells what it wrote since a version only when it found that version', async (t) => {
  const s = await setup(t)
  const venue = await s.venue({ venue: 'Hall', city: 'Town' })
  const made = await s.event('Linked', { venue: [venue.id] })
  const before = await dataVersion(s.db)
  t.ok(before !== undefined, 'a version')
  t.strictSame(await withTransaction(s.db, async (trx) => [...(writtenSince(trx, before) ?? ['none'])]), [], 'found that version: nothing written yet')
  // Another write between: the version the read held at is not the one the next unit finds.
  t.equal((await s.inject({ method: 'PATCH', url: `${API}/venues/${venue.id}`, headers: s.editor, payload: { venue: 'Hall renamed' } })).statusCode, 200)
  t.equal(await withTransaction(s.db, async (trx) => writtenSince(trx, before)), undefined, 'another version: nothing known')
  t.equal(await withTransaction(s.db, async (trx) => writtenSince(trx, undefined)), undefined, 'no version: nothing known')
  // What the unit itself wrote is named.
  const now = await dataVersion(s.db)
  const written = await withTransaction(s.db, async (trx) => {
    await sql`update events set title = 'x' where id = ${made.id}`.execute(trx)
    recordChange(trx, { resource: 'event', id: made.id, action: 'update' })
    return [...(writtenSince(trx, now) ?? ['none'])]
  })
  t.strictSame(written, [`event:${made.id}`], 'its own change named')
  if (s.engine === 'postgres') {
    const later = await dataVersion(s.db)
    t.equal(await withTransaction(s.db, async (trx) => writtenSince(trx, later), { concurrent: true }), undefined, 'a concurrent unit has not looked: nothing known')
  }
})

engineTest('sqlite', t, 'SQLite: a PATCH of a title reads its event\'s venues, organizers and terms once (before the unit), not again after its write', async (t) => {
  const s = await setup(t)
  const recorder = recordStatements(s.sqlite())
  const category = await s.category('Music')
  const tag = await s.tag('Jazz')
  const venue = await s.venue({ venue: 'Hall', city: 'Town' })
  const organizer = await s.organizer({ organizer: 'Club' })
  const made = await s.event('Linked', { categories: [category.id], tags: [tag.id], venue: [venue.id], organizer: [organizer.id] })
  const reads = (statements: Array<{ sql: string }>, table: string) => statements.filter((st) => new RegExp(`^select \\* from "${table}" where "id" in`, 'i').test(st.sql)).length
  // Not remembered: the PATCH's read assembles it (one read of each kind), the read back inside the unit none.
  let answer: Event | undefined
  const cold = await recorder.during(async () => {
    answer = (await s.patch(made.id, { title: 'Edited' })).json<Event>()
  })
  for (const table of ['terms', 'venues', 'organizers']) t.equal(reads(cold, table) <= (table === 'terms' ? 2 : 1), true, `${table}: read before the unit only (${reads(cold, table)})`)
  const assemblies = cold.filter((st) => /term_links/.test(st.sql)).length
  t.equal(assemblies, 2, 'the event\'s row and links read before and after the write')
  // Remembered (read first): none read at all; a PATCH of its tags reads the tags whose counts moved.
  await s.get(made.id, '', s.editor)
  const warm = await recorder.during(async () => {
    answer = (await s.patch(made.id, { cost: '€ 5' })).json<Event>()
  })
  for (const table of ['terms', 'venues', 'organizers']) t.equal(reads(warm, table), 0, `${table}: none read`)
  const other = await s.tag('Blues')
  const moved = await recorder.during(async () => {
    answer = (await s.patch(made.id, { tags: [other.id] })).json<Event>()
  })
  t.equal(reads(moved, 'venues'), 0, 'the venue not read')
  t.equal(answer?.tags[0]?.count, 1, 'the new tag counts the event')
  const { json_ld: _, ...read } = (await s.get(made.id, '', s.editor)).json<Event & { json_ld?: unknown }>()
  t.strictSame(answer, read, 'answered as read back')
})
