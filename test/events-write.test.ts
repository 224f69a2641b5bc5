/**
 * POST /events, updates (POST/PUT/PATCH by id and by slug) and deletes: required fields, dates and zones,
 * links to terms, venues and organizers (inline ones all-or-nothing), partial updates, slugs, images, cost,
 * trash and force delete (CONTRACT §5), roles (§6), languages (§7), conditional writes, errors (§10).
 */
import t from 'tap'
import pg from 'pg'
import { API } from './helpers/build.js'
import { engineTest } from './helpers/database.js'
import { expectError } from './helpers/errors.js'
import { EVENTS, EVENTS_URL, NOW_TEXT, categoryRecord, eventBody, eventRecord, organizerRecord, recordStatements, setup, tagRecord, venueRecord, type Event, type Setup } from './helpers/events.js'

/** How many records of a resource exist in any status but trash (read as an editor). */
async function totalOf(s: Setup, collection: 'events' | 'venues' | 'organizers'): Promise<number> {
  const query = collection === 'events' ? '?starts_after=1970-01-01' : ''
  const res = await s.inject({ url: `${API}/${collection}${query}`, headers: s.editor })
  return res.statusCode === 200 ? res.json<{ total: number }>().total : -res.statusCode
}

// ------------------------------------------------------------------------------------------- create

t.test('create: 201 with Location, ETag and the whole record (no json_ld)', async (t) => {
  const s = await setup(t)
  const res = await s.inject({ method: 'POST', url: EVENTS, headers: s.editor, payload: eventBody({ title: 'Event 1' }) })
  t.equal(res.statusCode, 201)
  t.equal(res.headers.location, `${EVENTS_URL}/1`)
  t.match(res.headers.etag, /^"event-1-1-[\w-]{16}"$/)
  t.strictSame(res.json(), eventRecord(1))
  const read = await s.get(1)
  const { json_ld: _, ...record } = read.json<Event>()
  t.strictSame(record, res.json())
  t.equal(read.headers.etag, res.headers.etag)
})

t.test('create: every field', async (t) => {
  const s = await setup(t)
  await s.category('Rock') // 1
  await s.category('Jazz') // 2
  await s.tag('Outdoor') // 3
  await s.tag('Late Night') // 4
  await s.venue({ venue: 'Hall' }) // venue 1
  await s.organizer({ organizer: 'Club' }) // organizer 1
  const res = await s.inject({
    method: 'POST',
    url: EVENTS,
    headers: s.editor,
    payload: {
      title: 'Big Night',
      description: 'All of it',
      excerpt: 'Some of it',
      slug: 'the-big-night',
      status: 'publish',
      timezone: 'America/New_York',
      start_date: '2026-07-01 19:00',
      end_date: '2026-07-01T23:30:00-04:00',
      image: 'https://img.example/big.png',
      cost: '$10 – $20',
      website: 'https://big.example/night',
      show_map: true,
      show_map_link: true,
      hide_from_listings: false,
      sticky: true,
      featured: true,
      categories: ['JAZZ', 1],
      tags: ['outdoor', 'late night'],
      venue: [{ venue: 'Garden', city: 'Brooklyn' }, 1],
      organizer: [1, { organizer: 'Crew', email: 'crew@example.org' }],
      date: '2026-06-01 08:00:00',
    },
  })
  t.equal(res.statusCode, 201)
  t.strictSame(res.json(), eventRecord(1, {
    title: 'Big Night',
    description: 'All of it',
    excerpt: 'Some of it',
    slug: 'the-big-night',
    date: '2026-06-01 08:00:00',
    date_utc: '2026-06-01 08:00:00',
    image: { id: 1, url: 'https://img.example/big.png' },
    start_date: '2026-07-01 19:00:00',
    end_date: '2026-07-01 23:30:00',
    utc_start_date: '2026-07-01 23:00:00',
    utc_end_date: '2026-07-02 03:30:00',
    timezone: 'America/New_York',
    timezone_abbr: 'EDT',
    cost: '$10 – $20',
    cost_details: { currency_symbol: '$', currency_code: null, currency_position: 'prefix', values: [10, 20] },
    website: 'https://big.example/night',
    show_map: true,
    show_map_link: true,
    sticky: true,
    featured: true,
    categories: [categoryRecord(2, 'Jazz', 1), categoryRecord(1, 'Rock', 1)],
    tags: [tagRecord(4, 'Late Night', 1, { slug: 'late-night' }), tagRecord(3, 'Outdoor', 1)],
    venue: [venueRecord(2, 'Garden', { city: 'Brooklyn' }), venueRecord(1, 'Hall')],
    organizer: [organizerRecord(1, 'Club'), organizerRecord(2, 'Crew', { email: 'crew@example.org' })],
  }))
})

t.test('create: title, start_date and end_date are required, listed together', async (t) => {
  const s = await setup(t)
  const res = await s.inject({ method: 'POST', url: EVENTS, headers: s.editor, payload: {} })
  const body = expectError(t, res, 400, 'rest_missing_callback_param', ['title', 'start_date', 'end_date'])
  t.equal(body.message, 'Missing parameter(s): title, start_date, end_date.')
  expectError(t, await s.inject({ method: 'POST', url: EVENTS, headers: s.editor, payload: { title: 'Only a title' } }),
    400, 'rest_missing_callback_param', ['start_date', 'end_date'])
  expectError(t, await s.inject({ method: 'POST', url: EVENTS, headers: s.editor, payload: { start_date: '2026-07-01 10:00', end_date: '2026-07-01 11:00' } }),
    400, 'rest_missing_callback_param', ['title'])
  expectError(t, await s.inject({ method: 'POST', url: EVENTS, headers: s.editor }), 400, 'rest_missing_callback_param', ['title', 'start_date', 'end_date'])
  expectError(t, await s.inject({ method: 'POST', url: EVENTS, headers: s.editor, payload: eventBody({ title: '' }) }), 400, 'rest_invalid_param', ['title'])
  t.equal(await totalOf(s, 'events'), 0)
})

t.test('create: an end before the start is 400 naming end_date; an end equal to the start is fine', async (t) => {
  const s = await setup(t)
  const res = await s.inject({ method: 'POST', url: EVENTS, headers: s.editor, payload: eventBody({ start_date: '2026-07-01 18:00', end_date: '2026-07-01 17:59:59' }) })
  const body = expectError(t, res, 400, 'rest_invalid_param', ['end_date'])
  t.same(body.data.params, { end_date: 'end_date must not be before start_date.' })
  // The comparison is on UTC instants: 19:00 in New York is after 20:00 in Zurich.
  expectError(t, await s.inject({ method: 'POST', url: EVENTS, headers: s.editor, payload: eventBody({ start_date: '2026-07-02T01:00:00Z', end_date: '2026-07-01T20:00:00-04:00' }) }),
    400, 'rest_invalid_param', ['end_date'])
  t.equal(await totalOf(s, 'events'), 0)
  await s.event('Instant', { start_date: '2026-07-01 18:00', end_date: '2026-07-01 18:00' })
  await s.event('Offsets', { start_date: '2026-07-01T20:00:00+02:00', end_date: '2026-07-01T14:30:00-04:00' })
  t.match((await s.get(2)).json(), { utc_start_date: '2026-07-01 18:00:00', utc_end_date: '2026-07-01 18:30:00' })
})

t.test('create: invalid dates and time zones are 400 naming the field', async (t) => {
  const s = await setup(t)
  const post = (fields: Record<string, unknown>) => s.inject({ method: 'POST', url: EVENTS, headers: s.editor, payload: eventBody(fields) })
  for (const value of ['tomorrow', '2026-02-30 10:00', '2026-07-01 24:00', '01/07/2026', '2026-07-01T10:00:00+25:00', '']) {
    expectError(t, await post({ start_date: value }), 400, 'rest_invalid_param', ['start_date'])
    expectError(t, await post({ end_date: value }), 400, 'rest_invalid_param', ['end_date'])
  }
  for (const timezone of ['Mars/Olympus', '+05:00', 'UTC+15', 'America/New York']) {
    const body = expectError(t, await post({ timezone }), 400, 'rest_invalid_param', ['timezone'])
    t.match(body.message, /timezone/)
  }
  t.equal(await totalOf(s, 'events'), 0)
})

t.test('create: body dates in the event zone, at an offset, or with Z; a manual UTC offset zone', async (t) => {
  const s = await setup(t)
  await s.event('Wall', { start_date: '2026-07-01 19:00', end_date: '2026-07-01T21:00', timezone: 'Europe/Zurich' })
  await s.event('Offset', { start_date: '2026-07-01T19:00:00+02:00', end_date: '2026-07-01T17:30:00Z', timezone: 'America/New_York' })
  await s.event('Manual', { start_date: '2026-07-01 19:00:00', end_date: '2026-07-01 20:00:00', timezone: 'UTC+2' })
  t.match((await s.get(1)).json(), { start_date: '2026-07-01 19:00:00', end_date: '2026-07-01 21:00:00', utc_start_date: '2026-07-01 17:00:00', utc_end_date: '2026-07-01 19:00:00' })
  t.match((await s.get(2)).json(), { start_date: '2026-07-01 13:00:00', end_date: '2026-07-01 13:30:00', utc_start_date: '2026-07-01 17:00:00', utc_end_date: '2026-07-01 17:30:00', timezone_abbr: 'EDT' })
  t.match((await s.get(3)).json(), { timezone: 'UTC+2', timezone_abbr: 'UTC+2', utc_start_date: '2026-07-01 17:00:00' })
})

t.test('create: all-day events are widened to 00:00:00–23:59:59', async (t) => {
  const s = await setup(t)
  const created = await s.event('Fair', { all_day: true, start_date: '2026-07-01 15:00', end_date: '2026-07-03 09:00' })
  t.match(created, { all_day: true, start_date: '2026-07-01 00:00:00', end_date: '2026-07-03 23:59:59', utc_end_date: '2026-07-03 23:59:59' })
  // Turning all_day on later widens the stored dates; the merged record is checked.
  await s.event('Meeting', { start_date: '2026-07-05 10:00', end_date: '2026-07-05 11:00', timezone: 'Europe/Zurich' })
  const res = await s.patch(2, { all_day: true })
  t.equal(res.statusCode, 200)
  t.match(res.json(), { all_day: true, start_date: '2026-07-05 00:00:00', end_date: '2026-07-05 23:59:59', utc_start_date: '2026-07-04 22:00:00', utc_end_date: '2026-07-05 21:59:59' })
})

t.test('create: status and author follow the caller', async (t) => {
  const s = await setup(t)
  const author = await s.auth('author') // 2
  const contributor = await s.auth('contributor') // 3
  t.match(await s.event('By editor'), { status: 'publish', author: 1 })
  t.match(await s.event('Editor draft', { status: 'draft' }), { status: 'draft' })
  t.match(await s.event('By author', {}, author), { status: 'publish', author: 2 })
  t.match(await s.event('Author private', { status: 'private' }, author), { status: 'private' })
  t.match(await s.event('By contributor', {}, contributor), { status: 'draft', author: 3 })
  t.match(await s.event('Contributor publish', { status: 'publish' }, contributor), { status: 'pending' })
  t.match(await s.event('Contributor private', { status: 'private' }, contributor), { status: 'pending' })
  t.match(await s.event('For the author', { author: 2 }), { author: 2 })
  expectError(t, await s.inject({ method: 'POST', url: EVENTS, headers: s.editor, payload: eventBody({ author: 99 }) }), 400, 'rest_invalid_param', ['author'])
  expectError(t, await s.inject({ method: 'POST', url: EVENTS, headers: author, payload: eventBody({ author: 1 }) }), 403, 'rest_forbidden')
  expectError(t, await s.inject({ method: 'POST', url: EVENTS, headers: s.editor, payload: eventBody({ status: 'trash' }) }), 400, 'rest_invalid_param', ['status'])
  // Inline venues and organizers of a contributor are drafts too.
  const inline = await s.event('With inline', { venue: [{ venue: 'Garage' }] }, contributor)
  t.equal((await s.get(inline.id, '', s.editor)).json<Event>().venue[0]?.status, 'draft')
})

t.test('create and update: anonymous is 401, subscriber 403, even with a bad body', async (t) => {
  const s = await setup(t)
  await s.event('Existing')
  const subscriber = await s.auth('subscriber')
  for (const [headers, status] of [[{}, 401], [{ authorization: 'Bearer nope' }, 401], [subscriber, 403]] as const) {
    expectError(t, await s.inject({ method: 'POST', url: EVENTS, headers, payload: eventBody() }), status, 'rest_forbidden')
    expectError(t, await s.inject({ method: 'POST', url: EVENTS, headers, payload: { bogus: true } }), status, 'rest_forbidden')
    expectError(t, await s.patch(1, { title: 'x' }, headers), status, 'rest_forbidden')
    expectError(t, await s.remove(1, '', headers), status, 'rest_forbidden')
  }
  t.match((await s.get(1)).json(), { title: 'Existing', status: 'publish' })
})

t.test('roles: contributors edit their own drafts and pending events only', async (t) => {
  const s = await setup(t)
  const contributor = await s.auth('contributor') // 2
  const other = await s.auth('contributor') // 3
  await s.event('Mine', {}, contributor) // 1 draft
  await s.event('Editor event') // 2
  t.match((await s.patch(1, { title: 'Mine, edited' }, contributor)).json(), { title: 'Mine, edited', status: 'draft' })
  t.match((await s.patch(1, { status: 'publish' }, contributor)).json(), { status: 'pending' }, 'asking publish submits for review')
  t.match((await s.patch(1, { title: 'Still mine' }, contributor)).json(), { title: 'Still mine', status: 'pending' })
  expectError(t, await s.patch(2, { title: 'Not mine' }, contributor), 403, 'rest_forbidden')
  expectError(t, await s.patch(1, { title: 'Not yours' }, other), 403, 'rest_forbidden')
  expectError(t, await s.remove(2, '', contributor), 403, 'rest_forbidden')
  // Once published, it is out of the contributor's hands.
  t.equal((await s.patch(1, { status: 'publish' })).statusCode, 200)
  expectError(t, await s.patch(1, { title: 'After publication' }, contributor), 403, 'rest_forbidden')
  expectError(t, await s.remove(1, '', contributor), 403, 'rest_forbidden')
  t.match((await s.get(1)).json(), { title: 'Still mine', status: 'publish' })
  await s.event('Another draft', {}, contributor) // 3
  t.match((await s.remove(3, '', contributor)).json(), { id: 3, status: 'trash' })
})

t.test('roles: authors edit their own events; editors edit everything and set authors', async (t) => {
  const s = await setup(t)
  const author = await s.auth('author') // 2
  const other = await s.auth('author') // 3
  await s.event('By the author', {}, author) // 1
  await s.event('By the editor') // 2
  t.match((await s.patch(1, { title: 'Edited by its author' }, author)).json(), { title: 'Edited by its author', status: 'publish' })
  expectError(t, await s.patch(1, { title: 'x' }, other), 403, 'rest_forbidden')
  expectError(t, await s.patch(2, { title: 'x' }, author), 403, 'rest_forbidden')
  expectError(t, await s.remove(2, '', author), 403, 'rest_forbidden')
  expectError(t, await s.patch(1, { author: 3 }, author), 403, 'rest_forbidden', undefined)
  t.match((await s.patch(1, { title: 'Edited by the editor' })).json(), { title: 'Edited by the editor', author: 2 })
  t.match((await s.patch(1, { author: 3 })).json(), { author: 3 })
  expectError(t, await s.patch(1, { author: 99 }), 400, 'rest_invalid_param', ['author'])
  expectError(t, await s.patch(1, { title: 'x' }, author), 403, 'rest_forbidden', undefined)
  t.match((await s.patch(1, { title: 'Now mine' }, other)).json(), { title: 'Now mine', author: 3 })
  const admin = await s.auth('administrator')
  t.match((await s.remove(1, '', admin)).json(), { status: 'trash' })
})

// ------------------------------------------------------------------------------------------- links

t.test('links: categories and tags by id, slug or name; unknown ones are 400 and create nothing', async (t) => {
  const s = await setup(t)
  await s.category('Rock') // 1
  await s.tag('Outdoor') // 2
  await s.category('Folk', '?ml_language=de') // 3, in German
  const created = await s.event('Linked', { categories: ['rock'], tags: [2] })
  t.strictSame(created.categories, [categoryRecord(1, 'Rock', 1)])
  t.strictSame(created.tags, [tagRecord(2, 'Outdoor', 1)])
  t.same((await s.event('By name', { categories: ['ROCK'], tags: ['OutDoor'] })).categories.map((c) => c.id), [1])
  t.same((await s.event('Duplicates', { categories: [1, 'rock', 'Rock'] })).categories.map((c) => c.id), [1], 'one link per term')
  t.same((await s.event('Ids as text', { categories: [' 1 ', 1], tags: ['2', 'outdoor'] })).tags.map((c) => c.id), [2], 'an id sent as text, spaces trimmed')
  const post = (fields: Record<string, unknown>) => s.inject({ method: 'POST', url: EVENTS, headers: s.editor, payload: eventBody(fields) })
  expectError(t, await post({ categories: ['nope'] }), 400, 'rest_invalid_param', ['categories'])
  expectError(t, await post({ categories: [99] }), 400, 'rest_invalid_param', ['categories'])
  expectError(t, await post({ categories: [2] }), 400, 'rest_invalid_param', ['categories'])
  expectError(t, await post({ categories: ['folk'] }), 400, 'rest_invalid_param', ['categories'])
  expectError(t, await post({ categories: [3] }), 400, 'rest_invalid_param', ['categories'])
  expectError(t, await post({ tags: ['rock'] }), 400, 'rest_invalid_param', ['tags'])
  expectError(t, await post({ tags: [1] }), 400, 'rest_invalid_param', ['tags'])
  expectError(t, await post({ categories: ['rock'], tags: ['nope'], venue: [{ venue: 'Made for nothing' }] }), 400, 'rest_invalid_param', ['tags'])
  // Ids are looked up together, names one by one: the error still names the first entry, in the body's order, that names no term.
  const unknown = async (categories: unknown[]) =>
    (expectError(t, await post({ categories }), 400, 'rest_invalid_param', ['categories']).data.params as Record<string, string>).categories
  t.match(await unknown(['rock', 99, 'nope']), /"99"/)
  t.match(await unknown(['nope', 99, 1]), /"nope"/)
  t.match(await unknown([1, ' 2 ']), /"2"/)
  t.equal(await totalOf(s, 'events'), 4)
  t.equal(await totalOf(s, 'venues'), 0, 'the inline venue of the failed request was not created')
  // A German event links German terms.
  const de = await s.create(eventBody({ categories: ['folk'] }), s.editor, '?ml_language=de')
  t.same(de.categories.map((c) => c.id), [3])
})

t.test('links: venues and organizers by id or inline, in the event language', async (t) => {
  const s = await setup(t)
  await s.venue({ venue: 'Hall' }) // 1
  await s.organizer({ organizer: 'Club' }) // 1
  const created = await s.event('Show', {
    venue: [1, { venue: 'Tent', address: 'Field 2', show_map: false }],
    organizer: [{ organizer: 'Band', website: 'https://band.example/' }, 1],
  })
  t.strictSame(created.venue, [venueRecord(1, 'Hall'), venueRecord(2, 'Tent', { address: 'Field 2', show_map: false })])
  t.strictSame(created.organizer, [organizerRecord(2, 'Band', { website: 'https://band.example/' }), organizerRecord(1, 'Club')])
  const venues = await s.inject({ url: `${API}/venues/2` })
  t.strictSame(venues.json(), venueRecord(2, 'Tent', { address: 'Field 2', show_map: false }), 'the inline venue is a record of its own')
  // Inline records take the event's language; existing ones must be in it.
  const de = await s.create(eventBody({ venue: [{ venue: 'Zelt' }] }), s.editor, '?ml_language=de')
  t.match(de.venue, [{ id: 3, venue: 'Zelt', ml_language: 'de' }])
  const post = (fields: Record<string, unknown>, query = '') => s.inject({ method: 'POST', url: `${EVENTS}${query}`, headers: s.editor, payload: eventBody(fields) })
  expectError(t, await post({ venue: [1] }, '?ml_language=de'), 400, 'rest_invalid_param', ['venue'])
  expectError(t, await post({ venue: [99] }), 400, 'rest_invalid_param', ['venue'])
  expectError(t, await post({ organizer: [99] }), 400, 'rest_invalid_param', ['organizer'])
  expectError(t, await post({ venue: [0] }), 400, 'rest_invalid_param', ['venue'])
  expectError(t, await post({ organizer: [{ email: 'no-name@example.org' }] }), 400, 'rest_invalid_param', ['organizer'])
})

t.test('links: a failing inline object creates nothing at all', async (t) => {
  const s = await setup(t)
  const post = (fields: Record<string, unknown>) => s.inject({ method: 'POST', url: EVENTS, headers: s.editor, payload: eventBody(fields) })
  // The venue and the first organizer would be valid; the second organizer is not.
  expectError(t, await post({
    venue: [{ venue: 'Hall' }],
    organizer: [{ organizer: 'Good' }, { organizer: 'Bad', email: 'not an address' }],
  }), 400, 'rest_invalid_param')
  expectError(t, await post({ venue: [{ venue: 'Hall' }, { venue: 'Bad', website: 'ftp://bad.example/' }] }), 400, 'rest_invalid_param')
  expectError(t, await post({ venue: [{ venue: 'Hall' }], organizer: [{ organizer: 'Good' }, 42] }), 400, 'rest_invalid_param', ['organizer'])
  expectError(t, await post({ venue: [{ venue: 'Hall' }], image: 'not a url' }), 400, 'rest_invalid_param', ['image'])
  expectError(t, await post({ image: 'https://img.example/orphan.png', categories: ['nope'] }), 400, 'rest_invalid_param', ['categories'])
  expectError(t, await post({ image: 1 }), 400, 'rest_invalid_param', ['image'])
  t.equal(await totalOf(s, 'events'), 0)
  t.equal(await totalOf(s, 'venues'), 0)
  t.equal(await totalOf(s, 'organizers'), 0, 'and no image record: image 1 does not exist')
  // The same on an update: nothing of a failed update is kept.
  await s.event('Existing', { venue: [{ venue: 'Kept' }] })
  expectError(t, await s.patch(1, { title: 'Changed', venue: [{ venue: 'New' }], organizer: [{ organizer: 'Bad', email: 'nope' }] }), 400, 'rest_invalid_param')
  t.match((await s.get(1)).json(), { title: 'Existing', venue: [{ id: 1, venue: 'Kept' }], organizer: [] })
  t.equal(await totalOf(s, 'venues'), 1)
  t.equal(await totalOf(s, 'organizers'), 0)
})

t.test('update: arrays replace the whole set and [] clears it; omitted arrays are kept', async (t) => {
  const s = await setup(t)
  await s.category('Rock') // 1
  await s.category('Jazz') // 2
  await s.tag('Outdoor') // 3
  await s.venue({ venue: 'Hall' }) // 1
  await s.venue({ venue: 'Park' }) // 2
  await s.organizer({ organizer: 'Club' }) // 1
  await s.event('Linked', { categories: [1, 2], tags: [3], venue: [1, 2], organizer: [1] })
  const ids = (e: Event) => ({ categories: e.categories.map((c) => c.id), tags: e.tags.map((x) => x.id), venue: e.venue.map((v) => v.id), organizer: e.organizer.map((o) => o.id) })
  t.same(ids((await s.patch(1, { categories: ['jazz'] })).json()), { categories: [2], tags: [3], venue: [1, 2], organizer: [1] })
  t.same(ids((await s.patch(1, { venue: [2, 1] })).json()), { categories: [2], tags: [3], venue: [2, 1], organizer: [1] }, 'in the order given')
  t.same(ids((await s.patch(1, { tags: [], organizer: [] })).json()), { categories: [2], tags: [], venue: [2, 1], organizer: [] })
  t.same(ids((await s.patch(1, { categories: [], venue: [] })).json()), { categories: [], tags: [], venue: [], organizer: [] })
  t.same(ids((await s.patch(1, { tags: ['outdoor'] })).json()), { categories: [], tags: [3], venue: [], organizer: [] }, 'tags do not touch categories')
  t.same(ids((await s.get(1)).json()), { categories: [], tags: [3], venue: [], organizer: [] })
})

t.test('update: omitted fields keep their value, booleans and status included; the slug stays', async (t) => {
  const s = await setup(t)
  await s.event('Original', {
    status: 'draft', description: 'Desc', excerpt: 'Ex', featured: true, sticky: true, show_map: true, show_map_link: true,
    hide_from_listings: true, cost: '5 EUR', website: 'https://o.example/', image: 'https://img.example/o.png',
    timezone: 'Europe/Zurich', start_date: '2026-07-01 10:00', end_date: '2026-07-01 12:00',
  })
  const before = (await s.get(1, '', s.editor)).json<Event>()
  const res = await s.patch(1, { title: 'Renamed' })
  t.equal(res.statusCode, 200)
  const { json_ld: _, ...after } = (await s.get(1, '', s.editor)).json<Event>()
  const { json_ld: __, ...expected } = before
  t.strictSame(after, { ...expected, title: 'Renamed' }, 'only the title changed; the slug stays "original"')
  t.strictSame(res.json(), after)
  t.equal(after.slug, 'original')
  // An empty body changes nothing but the version.
  const empty = await s.inject({ method: 'PATCH', url: `${EVENTS}/1`, headers: s.editor })
  t.equal(empty.statusCode, 200)
  t.strictSame(empty.json(), after)
  // Booleans can be switched off explicitly.
  t.match((await s.patch(1, { featured: false, sticky: false, hide_from_listings: false })).json(), { featured: false, sticky: false, hide_from_listings: false, show_map: true })
})

t.test('update: null clears description, excerpt, website, image and cost; null on a required field or a boolean is 400', async (t) => {
  const s = await setup(t)
  await s.event('Full', { description: 'D', excerpt: 'E', website: 'https://full.example/', image: 'https://img.example/f.png', cost: '10' })
  const res = await s.patch(1, { description: null, excerpt: null, website: null, image: null, cost: null })
  t.equal(res.statusCode, 200)
  t.strictSame(res.json(), eventRecord(1, { title: 'Full', slug: 'full' }))
  for (const field of ['title', 'start_date', 'end_date', 'featured', 'all_day', 'show_map', 'categories', 'venue', 'status', 'slug']) {
    expectError(t, await s.patch(1, { [field]: null }), 400, 'rest_invalid_param', [field])
  }
  // null time zone means the site zone.
  await s.event('Zoned', { timezone: 'Europe/Zurich' })
  t.match((await s.patch(2, { timezone: null })).json(), { timezone: 'UTC', start_date: '2026-07-01 18:00:00', utc_start_date: '2026-07-01 18:00:00' })
})

t.test('update: dates are checked on the merged record', async (t) => {
  const s = await setup(t)
  await s.event('Timed', { start_date: '2026-07-01 18:00', end_date: '2026-07-01 21:00' })
  expectError(t, await s.patch(1, { end_date: '2026-07-01 17:00' }), 400, 'rest_invalid_param', ['end_date'])
  expectError(t, await s.patch(1, { start_date: '2026-07-01 22:00' }), 400, 'rest_invalid_param', ['end_date'])
  // 08:00 in Kiritimati (UTC+14) is 18:00 UTC the day before.
  expectError(t, await s.patch(1, { timezone: 'Pacific/Kiritimati', start_date: '2026-07-01 08:00', end_date: '2026-06-30T17:59:59Z' }), 400, 'rest_invalid_param', ['end_date'])
  expectError(t, await s.patch(1, { start_date: 'soon' }), 400, 'rest_invalid_param', ['start_date'])
  expectError(t, await s.patch(1, { timezone: 'Nowhere/Land' }), 400, 'rest_invalid_param', ['timezone'])
  const { json_ld: _, ...unchanged } = (await s.get(1)).json<Event>()
  t.strictSame(unchanged, eventRecord(1, { title: 'Timed', slug: 'timed' }), 'nothing was written')
  t.match((await s.patch(1, { start_date: '2026-07-01 20:00' })).json(), { start_date: '2026-07-01 20:00:00', end_date: '2026-07-01 21:00:00' })
  t.match((await s.patch(1, { end_date: '2026-07-02 01:00', start_date: '2026-07-01 23:00' })).json(), { start_date: '2026-07-01 23:00:00', end_date: '2026-07-02 01:00:00' })
})

t.test('update: POST, PUT and PATCH are the same partial update, by id and by slug', async (t) => {
  const s = await setup(t)
  await s.event('Same', { description: 'Kept', featured: true })
  let n = 0
  for (const method of ['POST', 'PUT', 'PATCH'] as const) {
    for (const path of [`${EVENTS}/1`, `${EVENTS}/by-slug/same`]) {
      n += 1
      const res = await s.inject({ method, url: path, headers: s.editor, payload: { excerpt: `Try ${n}` } })
      t.equal(res.statusCode, 200, `${method} ${path}`)
      t.match(res.json(), { id: 1, excerpt: `Try ${n}`, description: 'Kept', featured: true, title: 'Same' })
      // Version n + 1, then the digest of the record as seen (etag.ts).
      t.match(res.headers.etag, new RegExp(`^"event-1-${n + 1}-[A-Za-z0-9_-]{16}"$`))
    }
  }
})

t.test('update: form-urlencoded bodies work like JSON', async (t) => {
  const s = await setup(t)
  await s.category('Rock')
  await s.category('Jazz')
  const res = await s.inject({
    method: 'POST',
    url: EVENTS,
    headers: { ...s.editor, 'content-type': 'application/x-www-form-urlencoded' },
    payload: 'title=Form+Event&start_date=2026-07-01+18%3A00&end_date=2026-07-01+20%3A00&featured=1&categories=rock,2&cost=10+EUR',
  })
  t.equal(res.statusCode, 201)
  t.match(res.json(), { title: 'Form Event', featured: true, cost: '10 EUR', categories: [{ id: 2 }, { id: 1 }] })
  const update = await s.inject({
    method: 'PATCH',
    url: `${EVENTS}/1`,
    headers: { ...s.editor, 'content-type': 'application/x-www-form-urlencoded' },
    payload: 'featured=false&categories[]=jazz',
  })
  t.match(update.json(), { featured: false, categories: [{ id: 2 }] })
})

// ------------------------------------------------------------------------------ field rules

t.test('cost: stored as written, read into cost_details', async (t) => {
  const s = await setup(t)
  const cases: Array<[unknown, string | null, Event['cost_details']]> = [
    ['$10 – $20', '$10 – $20', { currency_symbol: '$', currency_code: null, currency_position: 'prefix', values: [10, 20] }],
    ['Free', 'Free', { currency_symbol: null, currency_code: null, currency_position: null, values: [0] }],
    ['10 EUR', '10 EUR', { currency_symbol: null, currency_code: 'EUR', currency_position: 'postfix', values: [10] }],
    ['20 € – 10 €', '20 € – 10 €', { currency_symbol: '€', currency_code: null, currency_position: 'postfix', values: [10, 20] }],
    [15, '15', { currency_symbol: null, currency_code: null, currency_position: null, values: [15] }],
    ['Donation', 'Donation', { currency_symbol: null, currency_code: null, currency_position: null, values: [] }],
    ['', null, { currency_symbol: null, currency_code: null, currency_position: null, values: [] }],
  ]
  for (const [cost, stored, costDetails] of cases) {
    const created = await s.event(`Cost ${String(cost)}`, { cost })
    t.equal(created.cost, stored, `cost ${String(cost)}`)
    t.strictSame(created.cost_details, costDetails, `cost_details of ${String(cost)}`)
  }
  t.match((await s.patch(1, { cost: 'Free' })).json(), { cost: 'Free', cost_details: { values: [0] } })
})

t.test('image: by URL (a new image record) or by id; anything else is 400', async (t) => {
  const s = await setup(t)
  const first = await s.event('With URL', { image: 'https://img.example/a.png' })
  t.strictSame(first.image, { id: 1, url: 'https://img.example/a.png' })
  const second = await s.event('With id', { image: 1 })
  t.strictSame(second.image, { id: 1, url: 'https://img.example/a.png' })
  t.strictSame((await s.patch(2, { image: 'http://img.example/b.png' })).json<Event>().image, { id: 2, url: 'http://img.example/b.png' })
  t.strictSame((await s.patch(1, { image: '2' })).json<Event>().image, { id: 2, url: 'http://img.example/b.png' })
  for (const image of [99, 'not a url', 'ftp://img.example/c.png', '/relative.png']) {
    expectError(t, await s.patch(1, { image }), 400, 'rest_invalid_param', ['image'])
  }
  t.equal((await s.patch(1, { image: null })).json<Event>().image, null)
  t.strictSame((await s.get(2)).json<Event>().image, { id: 2, url: 'http://img.example/b.png' }, 'the record stays for others')
})

t.test('website: an absolute http(s) URL, else 400 naming website', async (t) => {
  const s = await setup(t)
  t.equal((await s.event('Site', { website: 'https://example.org/path?q=1' })).website, 'https://example.org/path?q=1')
  for (const website of ['ftp://example.org/', 'not a url', 'example.org', 'mailto:a@example.org', 'https://']) {
    expectError(t, await s.patch(1, { website }), 400, 'rest_invalid_param', ['website'])
  }
  t.equal((await s.patch(1, { website: 'http://example.com' })).json<Event>().website, 'http://example.com')
})

t.test('slugs: made from the title, unique per language with -2, -3; normalised when given', async (t) => {
  const s = await setup(t)
  t.equal((await s.event('Summer Concert')).slug, 'summer-concert')
  t.equal((await s.event('Summer Concert')).slug, 'summer-concert-2')
  t.equal((await s.event('Summer  concert!')).slug, 'summer-concert-3')
  t.equal((await s.create(eventBody({ title: 'Summer Concert' }), s.editor, '?ml_language=de')).slug, 'summer-concert', 'per language')
  t.equal((await s.event('Über Straße', { slug: 'Ça Va Très Bien!' })).slug, 'ca-va-tres-bien')
  t.equal((await s.event('Anything', { slug: 'summer-concert' })).slug, 'summer-concert-4')
  t.equal((await s.event('!!!')).slug, 'event-7')
  // Changing the title never changes the slug; a given slug is made unique against the others.
  t.equal((await s.patch(1, { title: 'Winter Concert' })).json<Event>().slug, 'summer-concert')
  t.equal((await s.patch(1, { slug: 'summer-concert-2' })).json<Event>().slug, 'summer-concert-2-2')
  t.equal((await s.patch(2, { slug: 'summer-concert-2' })).json<Event>().slug, 'summer-concert-2', 'its own slug is no clash')
})

t.test('SQLite: a create writes its event row whole by its insert, with the id it is given (never one used before), not updated after it', async (t) => {
  const s = await setup(t, { sqlite: true })
  // Before the first create: the statements a create prepares are recorded.
  const recorder = recordStatements(s.sqlite())
  const first = await s.event('Summer Concert')
  t.equal((await s.remove(first.id, '?force=true')).statusCode, 200, 'the highest id deleted')
  let made: Event | undefined
  let translation: Event | undefined
  const statements = await recorder.during(async () => {
    made = await s.event('!!!')
    translation = await s.create(eventBody({ title: 'Sommerkonzert', translation_of: made.id }), s.editor, '?ml_language=de')
  })
  const id = first.id + 1
  t.equal(made?.id, id, 'the next id: ids are never reused')
  t.equal(made?.slug, `event-${id}`, 'the slug made from its id')
  t.same(made?.translations, { en: id }, 'its own translation group')
  t.same(translation?.translations, { en: id, de: id + 1 })
  const { json_ld: _ld, ...read } = (await s.get(id, '', s.editor)).json<Event & { json_ld?: unknown }>()
  t.same(read, { ...made, translations: { en: id, de: id + 1 } }, 'read again, as answered (but for the translation since; a read adds JSON-LD)')
  t.same(statements.filter((st) => /^update "events"/i.test(st.sql)).map((st) => st.sql), [], 'no update of an events row')
  t.equal(statements.filter((st) => /^insert into "events"/i.test(st.sql)).length, 2, 'an insert each')
})

t.test('SQLite: a create\'s answer takes the rows its write read or wrote (terms moved, venues and organizers checked), not read again, and their translations in one statement', async (t) => {
  const s = await setup(t, { sqlite: true })
  const recorder = recordStatements(s.sqlite())
  const category = await s.category('Music')
  const tag = await s.tag('Jazz')
  const venue = await s.venue({ venue: 'Hall', city: 'Town' })
  const organizer = await s.organizer({ organizer: 'Club' })
  let made: Event | undefined
  let inline: Event | undefined
  const statements = await recorder.during(async () => {
    made = await s.create(eventBody({ title: 'Linked', categories: [category.id], tags: [tag.id], venue: [venue.id], organizer: [organizer.id] }))
  })
  const reads = (table: string) => statements.filter((st) => new RegExp(`^select \\* from "${table}" where "id" in`, 'i').test(st.sql)).length
  t.equal(reads('terms'), 0, 'the terms\' rows from their counts\' update')
  t.equal(reads('venues'), 0, 'the venue\'s row from its check')
  t.equal(reads('organizers'), 0, 'the organizer\'s row from its check')
  const translations = statements.filter((st) => /^select "?id"?, "?translation_group"?, "?language"?/i.test(st.sql) || /union all/i.test(st.sql))
  t.equal(translations.length, 1, 'the translations of the terms, the venue and the organizer in one statement')
  const { json_ld: _ld, ...read } = (await s.get(made?.id ?? 0, '', s.editor)).json<Event & { json_ld?: unknown }>()
  t.same(made, read, 'answered as read back')
  t.equal(made?.categories[0]?.count, 1, 'the category counts the event')
  // A list that creates a venue inline: the venues' rows are read after the write, as before.
  const again = await recorder.during(async () => {
    inline = await s.create(eventBody({ title: 'Inline', tags: [tag.id], venue: [venue.id, { venue: 'New hall', city: 'Town' }] }))
  })
  t.equal(again.filter((st) => /^select \* from "venues" where "id" in/i.test(st.sql)).length, 1, 'the venues read once, the inline one with them')
  const { json_ld: _ld2, ...readInline } = (await s.get(inline?.id ?? 0, '', s.editor)).json<Event & { json_ld?: unknown }>()
  t.same(inline, readInline, 'answered as read back')
  t.equal(inline?.tags[0]?.count, 2, 'the tag counts both events')
})

engineTest('postgres', t, 'PostgreSQL: a create with terms, a venue and an organizer is five round trips in its unit of work: its begin with the checks\' reads, its slugs and id, its writes with the counts, the translations, the tail', async (t) => {
  // Issue 49 (postgres-dialect.ts `DEFERRED`, `READ_AHEAD`): each round trip a socket write and a backend's wake-up.
  const s = await setup(t)
  const category = await s.category('Music')
  const tag = await s.tag('Jazz')
  const venue = await s.venue({ venue: 'Hall', city: 'Town' })
  const organizer = await s.organizer({ organizer: 'Club' })
  await s.event('Warm')
  const sent: string[] = []
  type Query = (this: unknown, ...args: unknown[]) => unknown
  const proto = pg.Client.prototype as unknown as { query: Query }
  const original = proto.query
  proto.query = function (this: unknown, ...args: unknown[]) {
    const first = args[0]
    sent.push(typeof first === 'string' ? first : (first as { text?: string }).text ?? '?')
    return original.apply(this, args)
  }
  t.teardown(() => {
    proto.query = original
  })
  const made = await s.create(eventBody({ title: 'Linked', categories: [category.id], tags: [tag.id], venue: [venue.id], organizer: [organizer.id] }))
  proto.query = original
  const begin = sent.findIndex((text) => text.startsWith('start transaction'))
  const unit = sent.slice(begin)
  t.equal(unit.length, 5, `five round trips: ${JSON.stringify(unit)}`)
  const [checks = '', slugAndId = '', writes = '', translations = '', tail = ''] = unit
  for (const [read, what] of [[/from "terms" where "id" = any\('\{\d+,\d+\}'::bigint\[\]\)/, 'the terms'], [/from "venues" where "id" = '\d+'/, 'the venue'],
    [/from "organizers" where "id" = '\d+'/, 'the organizer']] as const) {
    t.match(checks, read, `${what} read with the begin`)
  }
  // Once the checks passed (a create refused takes no id).
  t.match(slugAndId, /^select "slug" from "events" .*; select nextval\(/, 'the slugs taken and the id together')
  for (const [write, what] of [[/insert into "events"/, 'the event'], [/insert into event_search/, 'its search row'], [/insert into "event_terms"/, 'its terms'],
    [/insert into "event_venues"/, 'its venue'], [/insert into "event_organizers"/, 'its organizer'], [/update "terms" set "event_count"/, 'the counts']] as const) {
    t.match(writes, write, `${what} written in one text`)
  }
  t.notMatch(writes, /update "events"/, 'the row written whole (its slug and group with its id)')
  t.match(translations, /union all/, 'the translations')
  t.match(tail, /^\/\* the log's tail \*\//, 'the tail')
  const { json_ld: _ld, ...read } = (await s.get(made.id, '', s.editor)).json<Event & { json_ld?: unknown }>()
  t.same(made, read, 'answered as read back')
  t.equal(made.categories[0]?.count, 1, 'the category counts the event')
  t.equal(made.slug, 'linked')
  t.equal(made.id, 2)
  // A create refused by a check takes no id: the next one has the next.
  expectError(t, await s.inject({ method: 'POST', url: EVENTS, headers: s.editor, payload: eventBody({ title: 'No', venue: [999] }) }), 400, 'rest_invalid_param')
  t.equal((await s.event('Next')).id, 3, 'the next id')
})

t.test('a create\'s answer shows its terms\', venues\' and organizers\' translations as a read does (one statement reads them for all three)', async (t) => {
  const s = await setup(t)
  const author = await s.auth('author', 'alice')
  const category = await s.category('Music')
  const tag = await s.tag('Jazz')
  const venue = await s.venue({ venue: 'Hall', city: 'Town' })
  const organizer = await s.organizer({ organizer: 'Club' })
  const post = async (url: string, payload: Record<string, unknown>, headers = s.editor) => {
    const res = await s.inject({ method: 'POST', url: `${API}/${url}`, headers, payload })
    t.equal(res.statusCode, 201, url)
  }
  await post('categories?ml_language=de', { name: 'Musik', translation_of: category.id })
  await post('tags?ml_language=es', { name: 'Jazz es', translation_of: tag.id })
  await post('venues?ml_language=de', { venue: 'Halle', translation_of: venue.id })
  // A draft translation by another author: whether a caller sees it goes with the map (its state).
  await post('venues?ml_language=es', { venue: 'Sala', translation_of: venue.id, status: 'draft' }, author)
  await post('organizers?ml_language=de', { organizer: 'Klub', translation_of: organizer.id })
  const bob = await s.auth('author', 'bob')
  for (const headers of [s.editor, author, bob]) {
    const made = await s.create(eventBody({ title: 'Translated links', categories: [category.id], tags: [tag.id], venue: [venue.id], organizer: [organizer.id] }), headers)
    const { json_ld: _ld, ...read } = (await s.get(made.id, '', headers)).json<Event & { json_ld?: unknown }>()
    t.same(made, read, 'answered as read back')
    t.same(Object.keys(made.categories[0]?.translations ?? {}).sort(), ['de', 'en'])
    t.same(Object.keys(made.tags[0]?.translations ?? {}).sort(), ['en', 'es'])
    t.same(Object.keys(made.organizer[0]?.translations ?? {}).sort(), ['de', 'en'])
    t.same(Object.keys(made.venue[0]?.translations ?? {}).sort(), headers === bob ? ['de', 'en'] : ['de', 'en', 'es'], 'the draft translation: its author and an editor see it, another author not')
  }
})

t.test('languages: translation_of a record the caller may not read, or one in the trash, is refused like an unknown one', async (t) => {
  const s = await setup(t)
  const alice = await s.auth('author', 'alice')
  const bob = await s.auth('author', 'bob')
  const draft = await s.create(eventBody({ title: 'Alice\'s draft', status: 'draft' }), alice)
  const gone = await s.event('Trashed')
  t.equal((await s.remove(gone.id)).statusCode, 200)
  const refused = async (headers: Record<string, string>, source: number, label: string) => {
    const res = await s.inject({ method: 'POST', url: `${EVENTS}?ml_language=es`, headers, payload: eventBody({ title: 'Traducción', translation_of: source }) })
    const unknown = await s.inject({ method: 'POST', url: `${EVENTS}?ml_language=es`, headers, payload: eventBody({ title: 'Traducción', translation_of: 99_999 }) })
    const body = expectError(t, res, 400, 'rest_invalid_param', ['translation_of'])
    t.equal(body.message, expectError(t, unknown, 400, 'rest_invalid_param', ['translation_of']).message, `${label}: the answer of an unknown id`)
  }
  await refused(bob, draft.id, 'another author\'s draft')
  await refused(bob, gone.id, 'a trashed event')
  await refused(s.editor, gone.id, 'a trashed event, for an editor too')
  t.strictSame((await s.get(draft.id, '', alice)).json<Event>().translations, { en: draft.id }, 'the draft\'s group is untouched')
  const own = await s.create(eventBody({ title: 'Borrador', translation_of: draft.id }), alice, '?ml_language=es')
  t.strictSame(own.translations, { en: draft.id, es: own.id }, 'its author may translate it')
  const editors = await s.create(eventBody({ title: 'Entwurf', translation_of: draft.id }), s.editor, '?ml_language=de')
  t.strictSame(editors.translations, { en: draft.id, es: own.id, de: editors.id }, 'and an editor')
  for (const path of ['venues', 'organizers'] as const) {
    const field = path === 'venues' ? 'venue' : 'organizer'
    const hidden = await s.inject({ method: 'POST', url: `${API}/${path}`, headers: alice, payload: { [field]: `Alice's ${field}`, status: 'draft' } })
    t.equal(hidden.statusCode, 201)
    const res = await s.inject({ method: 'POST', url: `${API}/${path}?ml_language=es`, headers: bob, payload: { [field]: 'Traducción', translation_of: hidden.json<{ id: number }>().id } })
    expectError(t, res, 400, 'rest_invalid_param', ['translation_of'])
  }
})

t.test('languages: translation_of joins a group, one version per language', async (t) => {
  const s = await setup(t)
  await s.event('Concert')
  const de = await s.create(eventBody({ title: 'Konzert', translation_of: 1 }), s.editor, '?ml_language=de')
  t.strictSame(de.translations, { en: 1, de: 2 })
  t.equal(de.ml_language, 'de')
  const fr = await s.create(eventBody({ title: 'Concert', translation_of: 2, ml_language: 'ch-fr' }), s.editor, '?ml_language=de')
  t.strictSame(fr.translations, { en: 1, de: 2, 'ch-fr': 3 }, 'the body ml_language wins over the query')
  expectError(t, await s.inject({ method: 'POST', url: `${EVENTS}?ml_language=de`, headers: s.editor, payload: eventBody({ translation_of: 1 }) }),
    400, 'rest_invalid_param', ['translation_of'])
  expectError(t, await s.inject({ method: 'POST', url: `${EVENTS}?ml_language=es`, headers: s.editor, payload: eventBody({ translation_of: 99 }) }),
    400, 'rest_invalid_param', ['translation_of'])
  t.strictSame((await s.get(1)).json<Event>().translations, { en: 1, de: 2, 'ch-fr': 3 })
  // The language of a record never changes: ml_language on an update by id picks the version in that language.
  t.match((await s.patch(2, { title: 'Concert!', ml_language: 'en' })).json(), { id: 1, ml_language: 'en', title: 'Concert!' })
  t.match((await s.patch(1, { title: 'Konzert!' }, s.editor, '?ml_language=de')).json(), { id: 2, ml_language: 'de', title: 'Konzert!' })
  t.match((await s.get(1)).json(), { id: 1, ml_language: 'en', title: 'Concert!' })
  expectError(t, await s.patch(1, { title: 'x' }, s.editor, '?ml_language=es'), 404, 'rest-event-not-found')
})

t.test('unknown body fields are 400 naming them; the password is not writable by slug', async (t) => {
  const s = await setup(t)
  await s.event('Strict')
  const body = expectError(t, await s.inject({ method: 'POST', url: EVENTS, headers: s.editor, payload: eventBody({ colour: 'red', size: 2 }) }), 400, 'rest_invalid_param')
  t.same(Object.keys(body.data.params ?? {}).sort(), ['colour', 'size'])
  expectError(t, await s.inject({ method: 'POST', url: EVENTS, headers: s.editor, payload: eventBody({ password: 'x' }) }), 400, 'rest_invalid_param', ['password'])
  expectError(t, await s.inject({ method: 'PATCH', url: `${EVENTS}/by-slug/strict`, headers: s.editor, payload: { password: 'x' } }), 400, 'rest_invalid_param', ['password'])
  t.equal((await s.get(1)).statusCode, 200, 'still unprotected')
})

// --------------------------------------------------------------------------------- concurrency

t.test('If-Match: a stale ETag is 412 rest-precondition-failed and changes nothing', async (t) => {
  const s = await setup(t)
  await s.category('Rock')
  await s.event('Original', { description: 'Old' })
  const stale = String((await s.get(1)).headers.etag)
  const newer = String((await s.patch(1, { description: 'Newer' })).headers.etag)
  t.match(newer, /^"event-1-2-[\w-]{16}"$/)
  const res = await s.patch(1, { title: 'Lost update', description: 'Mine', categories: [1], venue: [{ venue: 'Never' }] }, { ...s.editor, 'if-match': stale })
  t.equal(res.statusCode, 412)
  t.strictSame(res.json(), {
    code: 'rest-precondition-failed',
    message: 'The record has changed since it was read (If-Match does not match its current ETag).',
    data: { status: 412 },
  })
  const { json_ld: _, ...record } = (await s.get(1)).json<Event>()
  t.strictSame(record, eventRecord(1, { title: 'Original', slug: 'original', description: 'Newer' }), 'the old values')
  t.equal(await totalOf(s, 'venues'), 0)
  expectError(t, await s.remove(1, '', { ...s.editor, 'if-match': stale }), 412, 'rest-precondition-failed')
  expectError(t, await s.remove(1, '?force=true', { ...s.editor, 'if-match': stale }), 412, 'rest-precondition-failed')
  t.equal((await s.get(1)).statusCode, 200, 'not deleted')
  expectError(t, await s.inject({ method: 'PUT', url: `${EVENTS}/by-slug/original`, headers: { ...s.editor, 'if-match': stale }, payload: { title: 'x' } }), 412, 'rest-precondition-failed')
  // The current ETag, a list holding it, or * go through.
  const fresh = await s.patch(1, { title: 'Fresh' }, { ...s.editor, 'if-match': newer })
  t.equal(fresh.statusCode, 200)
  const fresher = await s.patch(1, { title: 'Fresher' }, { ...s.editor, 'if-match': `"x", ${String(fresh.headers.etag)}` })
  t.equal(fresher.statusCode, 200)
  const freshest = await s.patch(1, { title: 'Freshest' }, { ...s.editor, 'if-match': '*' })
  t.equal(freshest.statusCode, 200)
  t.equal((await s.remove(1, '', { ...s.editor, 'if-match': String(freshest.headers.etag) })).statusCode, 200)
})

// ------------------------------------------------------------------------------------- delete

t.test('delete: trash, then 410 event-is-in-trash, then force deletes for good, then 404', async (t) => {
  const s = await setup(t)
  await s.event('Doomed')
  const trashed = await s.remove(1)
  t.equal(trashed.statusCode, 200)
  t.strictSame(trashed.json(), eventRecord(1, { title: 'Doomed', slug: 'doomed', status: 'trash' }))
  expectError(t, await s.get(1), 410, 'event-no-longer-available')
  const again = await s.remove(1)
  t.strictSame(again.json(), { code: 'event-is-in-trash', message: 'The event is already trashed.', data: { status: 410 } })
  t.equal(again.statusCode, 410)
  expectError(t, await s.patch(1, { title: 'Zombie' }), 410, 'event-is-in-trash')
  t.same((await s.list('', s.editor)).json<{ total: number }>().total, 0, 'not listed')
  const forced = await s.remove(1, '?force=true')
  t.equal(forced.statusCode, 200)
  t.strictSame(forced.json(), { deleted: true, previous: eventRecord(1, { title: 'Doomed', slug: 'doomed', status: 'trash' }) })
  expectError(t, await s.get(1), 404, 'rest-event-not-found')
  expectError(t, await s.remove(1), 404, 'rest-event-not-found')
  expectError(t, await s.remove(1, '?force=true'), 404, 'rest-event-not-found')
  expectError(t, await s.patch(1, { title: 'x' }), 404, 'rest-event-not-found')
  // Ids are never reused.
  t.equal((await s.event('Next')).id, 2)
})

t.test('delete: force on a live event deletes it at once; a trashed event is restored by setting status', async (t) => {
  const s = await setup(t)
  await s.event('Live')
  await s.event('Restored')
  const forced = await s.remove(1, '?force=true')
  t.strictSame(forced.json(), { deleted: true, previous: eventRecord(1, { title: 'Live', slug: 'live' }) })
  expectError(t, await s.remove(1, '?force=yes'), 400, 'rest_invalid_param', ['force'])
  t.equal((await s.remove(2, '?force=false')).json<Event>().status, 'trash')
  const restored = await s.patch(2, { status: 'draft' })
  t.equal(restored.statusCode, 200)
  t.match(restored.json(), { id: 2, status: 'draft' })
  t.equal((await s.get(2, '', s.editor)).statusCode, 200)
})

t.test('delete: by slug, looked up in the requested language', async (t) => {
  const s = await setup(t)
  await s.event('Fest')
  await s.create(eventBody({ title: 'Fest' }), s.editor, '?ml_language=de')
  const res = await s.inject({ method: 'DELETE', url: `${EVENTS}/by-slug/fest?ml_language=de`, headers: s.editor })
  t.equal(res.statusCode, 200)
  t.match(res.json(), { id: 2, status: 'trash', ml_language: 'de' })
  t.equal((await s.get(1)).statusCode, 200, 'the English one is untouched')
  expectError(t, await s.inject({ method: 'DELETE', url: `${EVENTS}/by-slug/fest?ml_language=de`, headers: s.editor }), 410, 'event-is-in-trash')
  const forced = await s.inject({ method: 'DELETE', url: `${EVENTS}/by-slug/fest?force=true`, headers: s.editor })
  t.match(forced.json(), { deleted: true, previous: { id: 1 } })
  expectError(t, await s.inject({ method: 'DELETE', url: `${EVENTS}/by-slug/fest`, headers: s.editor }), 404, 'rest-event-not-found')
  expectError(t, await s.inject({ method: 'PATCH', url: `${EVENTS}/by-slug/nothing`, headers: s.editor, payload: {} }), 404, 'rest-event-not-found')
})

t.test('update by slug: the slug is looked up in the requested language', async (t) => {
  const s = await setup(t)
  await s.event('Fest')
  await s.create(eventBody({ title: 'Fest' }), s.editor, '?ml_language=de')
  const de = await s.inject({ method: 'PATCH', url: `${EVENTS}/by-slug/fest?ml_language=de`, headers: s.editor, payload: { description: 'Auf Deutsch' } })
  t.match(de.json(), { id: 2, description: 'Auf Deutsch' })
  const en = await s.inject({ method: 'PATCH', url: `${EVENTS}/by-slug/fest`, headers: s.editor, payload: { description: 'In English' } })
  t.match(en.json(), { id: 1, description: 'In English' })
  const body = await s.inject({ method: 'POST', url: `${EVENTS}/by-slug/fest`, headers: s.editor, payload: { description: 'Body language', ml_language: 'de' } })
  t.match(body.json(), { id: 2, description: 'Body language' }, 'ml_language in the body')
  t.match((await s.get(1)).json(), { description: 'In English' })
})

t.test('delete of a venue, organizer or term with force unlinks it from its events', async (t) => {
  const s = await setup(t)
  await s.category('Rock') // 1
  await s.tag('Outdoor') // 2
  await s.event('Show', { venue: [{ venue: 'Hall' }, { venue: 'Park' }], organizer: [{ organizer: 'Club' }], categories: [1], tags: [2] })
  t.equal((await s.inject({ method: 'DELETE', url: `${API}/venues/1?force=true`, headers: s.editor })).statusCode, 200)
  t.equal((await s.inject({ method: 'DELETE', url: `${API}/organizers/1?force=true`, headers: s.editor })).statusCode, 200)
  t.equal((await s.inject({ method: 'DELETE', url: `${API}/categories/1`, headers: s.editor })).statusCode, 200)
  const { json_ld: _, ...record } = (await s.get(1)).json<Event>()
  t.strictSame(record, eventRecord(1, { title: 'Show', slug: 'show', venue: [venueRecord(2, 'Park')], tags: [tagRecord(2, 'Outdoor', 1)] }))
  t.equal((await s.inject({ method: 'DELETE', url: `${API}/tags/2`, headers: s.editor })).statusCode, 200)
  t.same((await s.get(1)).json<Event>().tags, [])
})

t.test('writes at the pinned clock stamp modified in the site zone', async (t) => {
  const s = await setup(t, { config: { timezone: 'Europe/Zurich' } })
  const created = await s.event('Stamped')
  t.match(created, { date: '2026-06-15 14:00:00', date_utc: NOW_TEXT, modified: '2026-06-15 14:00:00', modified_utc: NOW_TEXT })
  t.match((await s.patch(1, { date_utc: '2026-01-01 09:00:00' })).json(), { date: '2026-01-01 10:00:00', date_utc: '2026-01-01 09:00:00' })
  t.match((await s.patch(1, { date: '2026-02-01 09:00' })).json(), { date: '2026-02-01 09:00:00', date_utc: '2026-02-01 08:00:00' })
  expectError(t, await s.patch(1, { date: 'someday' }), 400, 'rest_invalid_param', ['date'])
})

t.test('term count follows every event write: links, status, trash, restore and delete', async (t) => {
  const s = await setup(t)
  await s.category('Rock') // 1
  await s.tag('Live') // 2
  const count = async (): Promise<[number, number]> => {
    const category = await s.inject({ url: `${API}/categories/1` })
    const tag = await s.inject({ url: `${API}/tags/2` })
    return [category.json<{ count: number }>().count, tag.json<{ count: number }>().count]
  }
  await s.event('A', { categories: [1], tags: ['live'] }) // 1
  await s.event('B', { categories: ['rock'] }) // 2
  t.same(await count(), [2, 1], 'created')
  t.equal((await s.patch(1, { status: 'draft' })).statusCode, 200)
  t.same(await count(), [1, 0], 'a draft does not count')
  t.equal((await s.patch(1, { status: 'publish', tags: [] })).statusCode, 200)
  t.same(await count(), [2, 0], 'published again, tag unlinked')
  t.equal((await s.remove(2)).statusCode, 200)
  t.same(await count(), [1, 0], 'trashed')
  t.equal((await s.patch(2, { status: 'publish' })).statusCode, 200)
  t.same(await count(), [2, 0], 'restored')
  t.equal((await s.remove(2, '?force=true')).statusCode, 200)
  t.same(await count(), [1, 0], 'deleted for good')
  const hidden = await s.inject({ url: `${API}/tags` })
  t.equal(hidden.json<{ total: number }>().total, 0, 'hide_empty hides the tag without published events')
})
