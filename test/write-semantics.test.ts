/**
 * Write rules of CONTRACT §5 that issue 21 found broken: an update that changes nothing writes nothing
 * (item 15), trash answers carry the trashed record's ETag (item 16), inline venues and organizers follow
 * the rules of their own create (item 11), deleting a category resolves a name clash of its children
 * (item 13), term names compared NFC-normalised and `date`/`date_utc` that disagree (item 18).
 */
import t from 'tap'
import { onWritten, type Change } from '../src/db/unit-of-work.js'
import { API } from './helpers/build.js'
import { expectError } from './helpers/errors.js'
import { setup, type Setup } from './helpers/events.js'

type Rec = { id: number; modified?: string; modified_utc?: string; status?: string }

/** Every change the units of work of the app report, from now on. */
function changeLog(s: Setup): Change[] {
  const log: Change[] = []
  onWritten(s.db, (changes, committed) => {
    if (committed) log.push(...changes)
  })
  return log
}

// ------------------------------------------------------------------------------------------ item 15

t.test('item 15: an update that changes nothing leaves modified, the ETag and the change log as they were', async (t) => {
  const s = await setup(t, { now: new Date('2026-06-15T12:00:00Z') })
  await s.category('Rock')
  await s.tag('Loud')
  await s.venue({ venue: 'Hall', city: 'Bern' })
  await s.organizer({ organizer: 'Club', email: 'club@example.org' })
  await s.event('Night', { categories: [1], tags: [2], venue: [1], organizer: [1], timezone: 'Europe/Zurich', cost: '10' })
  const log = changeLog(s)
  const cases: Array<[string, Record<string, unknown> | undefined]> = [
    ['events/1', undefined],
    ['events/1', {}],
    ['events/1', { title: 'Night', categories: ['rock'], tags: [2], venue: [1], organizer: [1], timezone: 'Europe/Zurich', start_date: '2026-07-01 18:00:00', cost: '10', featured: false }],
    ['venues/1', undefined],
    ['venues/1', { venue: 'Hall', city: 'Bern', show_map: true }],
    ['organizers/1', {}],
    ['organizers/1', { organizer: 'Club', email: 'club@example.org' }],
    ['categories/1', undefined],
    ['categories/1', { name: 'Rock', parent: 0 }],
    ['tags/2', { name: 'Loud' }],
  ]
  for (const [path, body] of cases) {
    const before = await s.inject({ url: `${API}/${path}` })
    const res = await s.inject({ method: 'PATCH', url: `${API}/${path}`, headers: s.editor, ...(body !== undefined ? { payload: body } : {}) })
    t.equal(res.statusCode, 200, `${path} ${JSON.stringify(body)}: 200`)
    t.equal(res.headers.etag, before.headers.etag, `${path} ${JSON.stringify(body)}: the same ETag`)
    t.equal(res.json<Rec>().modified_utc, before.json<Rec>().modified_utc, `${path}: the same modified_utc`)
    const after = await s.inject({ url: `${API}/${path}` })
    t.equal(after.headers.etag, before.headers.etag, `${path}: read again, the same ETag`)
  }
  t.same(log, [], 'no change logged')
  // A real change still writes.
  const unchanged = String((await s.inject({ url: `${API}/events/1` })).headers.etag)
  const changed = await s.patch(1, { title: 'Day' })
  t.not(changed.headers.etag, unchanged)
  t.same(log.map((c) => `${c.resource}-${c.id}-${c.action}`), ['event-1-update'])
  // A stale If-Match is still 412, even when nothing would change.
  const stale = await s.inject({ method: 'PATCH', url: `${API}/events/1`, headers: { ...s.editor, 'if-match': '"event-1-1"' }, payload: {} })
  expectError(t, stale, 412, 'rest-precondition-failed')
})

// ------------------------------------------------------------------------------------------ item 16

t.test('item 16: trash answers carry the trashed record\'s ETag, the one a GET right after returns', async (t) => {
  const s = await setup(t)
  await s.venue({ venue: 'Hall' })
  await s.organizer({ organizer: 'Club' })
  await s.event('Night')
  for (const path of ['venues/1', 'organizers/1']) {
    const res = await s.inject({ method: 'DELETE', url: `${API}/${path}`, headers: s.editor })
    t.equal(res.statusCode, 200)
    t.equal(res.json<Rec>().status, 'trash')
    t.type(res.headers.etag, 'string', `${path}: ETag`)
    const read = await s.inject({ url: `${API}/${path}`, headers: s.editor })
    t.equal(res.headers.etag, read.headers.etag, `${path}: the ETag a GET gives`)
  }
  const res = await s.remove(1)
  t.equal(res.json<Rec>().status, 'trash')
  t.match(res.headers.etag, /^"event-1-2-[\w-]{16}"$/, 'event: the trashed version')
  // The trashed event is 410 to GET; its ETag works for a conditional restore.
  const restore = await s.inject({ method: 'PATCH', url: `${API}/events/1`, headers: { ...s.editor, 'if-match': String(res.headers.etag) }, payload: { status: 'publish' } })
  t.equal(restore.statusCode, 200, 'If-Match with the trash ETag restores')
})

// ------------------------------------------------------------------------------------------ item 18

t.test('item 18: term names equal after NFC normalisation and case folding are term_exists', async (t) => {
  const s = await setup(t)
  for (const taxonomy of ['tags', 'categories']) {
    const composed = await s.inject({ method: 'POST', url: `${API}/${taxonomy}`, headers: s.editor, payload: { name: 'Caf\u00e9' } })
    t.equal(composed.statusCode, 201)
    for (const name of ['Cafe\u0301', 'CAFE\u0301', ' caf\u00c9 ']) {
      const res = await s.inject({ method: 'POST', url: `${API}/${taxonomy}`, headers: s.editor, payload: { name } })
      expectError(t, res, 400, 'term_exists')
    }
    const strasse = await s.inject({ method: 'POST', url: `${API}/${taxonomy}`, headers: s.editor, payload: { name: 'Stra\u00dfe' } })
    t.equal(strasse.statusCode, 201)
    expectError(t, await s.inject({ method: 'POST', url: `${API}/${taxonomy}`, headers: s.editor, payload: { name: 'STRASSE' } }), 400, 'term_exists')
  }
  // A write naming a term by its decomposed name finds the composed one.
  const e = await s.event('Night', { tags: ['cafe\u0301'] })
  t.same(e.tags.map((x) => x.name), ['Caf\u00e9'])
})

t.test('item 18: date and date_utc sent together must name the same instant, else 400 naming date_utc', async (t) => {
  const s = await setup(t, { config: { timezone: 'America/New_York' } })
  const body = { title: 'T', start_date: '2026-07-01 10:00', end_date: '2026-07-01 11:00' }
  const agree = await s.inject({ method: 'POST', url: `${API}/events`, headers: s.editor, payload: { ...body, date: '2026-06-01 08:00:00', date_utc: '2026-06-01 12:00:00' } })
  t.equal(agree.statusCode, 201, 'the same instant: 201')
  t.equal(agree.json<{ date_utc: string }>().date_utc, '2026-06-01 12:00:00')
  const overlap = await s.inject({ method: 'POST', url: `${API}/venues`, headers: s.editor, payload: { venue: 'V', date: '2027-11-07 01:30:00', date_utc: '2027-11-07 06:30:00' } })
  t.equal(overlap.statusCode, 201, 'a wall time in the overlap agrees with either of its instants')
  t.equal(overlap.json<{ date_utc: string }>().date_utc, '2027-11-07 06:30:00')
  for (const [path, extra] of [['events', body], ['venues', { venue: 'V2' }], ['organizers', { organizer: 'O' }]] as const) {
    const res = await s.inject({ method: 'POST', url: `${API}/${path}`, headers: s.editor, payload: { ...extra, date: '2026-06-01 08:00:00', date_utc: '2026-06-01 08:00:00' } })
    const error = expectError(t, res, 400, 'rest_invalid_param', ['date_utc'])
    t.match((error.data.params as Record<string, string>).date_utc, /same instant/, 'the reason says they disagree')
  }
  const patch = await s.patch(1, { date: '2026-06-02 08:00:00', date_utc: '2026-06-01 12:00:00' })
  expectError(t, patch, 400, 'rest_invalid_param', ['date_utc'])
})

// ------------------------------------------------------------------------------------------ item 13

t.test('item 13: deleting a category moves its children up; a clashing name is made unique', async (t) => {
  const s = await setup(t)
  const post = async (name: string, parent?: number) => {
    const res = await s.inject({ method: 'POST', url: `${API}/categories`, headers: s.editor, payload: { name, ...(parent !== undefined ? { parent } : {}) } })
    t.equal(res.statusCode, 201, `category ${name}`)
    return res.json<{ id: number; slug: string }>()
  }
  const music = await post('Music') // 1
  const live = await post('Live', music.id) // 2
  const liveJazz = await post('Jazz', live.id) // 3, slug jazz
  const jazz = await post('Jazz', music.id) // 4, slug jazz-2
  await post('jazz 2', music.id) // 5: the first free name is further on
  const solo = await post('Solo', live.id) // 6
  const res = await s.inject({ method: 'DELETE', url: `${API}/categories/${live.id}`, headers: s.editor })
  t.equal(res.statusCode, 200, 'deleted')
  const moved = (await s.inject({ url: `${API}/categories/${liveJazz.id}` })).json<{ name: string; slug: string; parent: number }>()
  t.same([moved.name, moved.slug, moved.parent], ['Jazz 3', liveJazz.slug, music.id], 'the moved child is renamed, its unique slug kept')
  const other = (await s.inject({ url: `${API}/categories/${jazz.id}` })).json<{ name: string }>()
  t.equal(other.name, 'Jazz', 'the term already there keeps its name')
  const soloRead = (await s.inject({ url: `${API}/categories/${solo.id}` })).json<{ name: string; parent: number }>()
  t.same([soloRead.name, soloRead.parent], ['Solo', music.id])
  // force=true too (it means nothing more for terms).
  const a = await post('A')
  const b = await post('B', a.id)
  await post('C', b.id)
  await post('C', a.id)
  const forced = await s.inject({ method: 'DELETE', url: `${API}/categories/${b.id}?force=true`, headers: s.editor })
  t.equal(forced.statusCode, 200)
})

// ------------------------------------------------------------------------------------------ item 11

t.test('item 11: translation_of inside an inline venue or organizer follows the rules of their own create', async (t) => {
  const s = await setup(t)
  await s.venue({ venue: 'Hall' }) // venue 1, en
  await s.organizer({ organizer: 'Club' }) // organizer 1, en
  const body = { title: 'Nacht', start_date: '2026-07-01 18:00', end_date: '2026-07-01 20:00' }
  const de = await s.inject({
    method: 'POST', url: `${API}/events?ml_language=de`, headers: s.editor,
    payload: { ...body, venue: [{ venue: 'Halle', translation_of: 1 }], organizer: [{ organizer: 'Klub', translation_of: 1 }] },
  })
  t.equal(de.statusCode, 201)
  const event = de.json<{ venue: Array<{ id: number; translations: Record<string, number> }>; organizer: Array<{ id: number; translations: Record<string, number> }> }>()
  t.same(event.venue[0]?.translations, { en: 1, de: event.venue[0]?.id }, 'the inline venue joined the translation group')
  t.same(event.organizer[0]?.translations, { en: 1, de: event.organizer[0]?.id }, 'the inline organizer too')
  const venuesBefore = (await s.inject({ url: `${API}/venues?ml_language=de`, headers: s.editor })).json<{ total: number }>().total
  const refused: Array<[string, Record<string, unknown>]> = [
    ['a second version in the same language', { venue: [{ venue: 'Hall again', translation_of: 1 }] }],
    ['an unknown source', { venue: [{ venue: 'Hall again', translation_of: 999 }] }],
    ['an organizer in the same language', { organizer: [{ organizer: 'Club again', translation_of: 1 }] }],
  ]
  for (const [what, extra] of refused) {
    const res = await s.inject({ method: 'POST', url: `${API}/events`, headers: s.editor, payload: { ...body, ...extra } })
    expectError(t, res, 400, 'rest_invalid_param', ['translation_of'])
    t.pass(what)
  }
  const twice = await s.inject({
    method: 'POST', url: `${API}/events?ml_language=es`, headers: s.editor,
    payload: { ...body, venue: [{ venue: 'Sala', translation_of: 1 }, { venue: 'Sala 2', translation_of: 1 }] },
  })
  expectError(t, twice, 400, 'rest_invalid_param', ['translation_of'])
  t.equal((await s.inject({ url: `${API}/venues?ml_language=es`, headers: s.editor })).json<{ total: number }>().total, 0, 'nothing written')
  t.equal((await s.inject({ url: `${API}/venues?ml_language=de`, headers: s.editor })).json<{ total: number }>().total, venuesBefore)
})
