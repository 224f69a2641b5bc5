/**
 * GET /events/{id} and /events/by-slug/{slug}: whole records with json_ld (CONTRACT §2), dates and time
 * zones (daylight saving, all-day events, a site zone other than UTC), visibility by status and role and
 * password protection (§6), languages (§7), conditional reads (§5) and not-found answers (§10).
 */
import t from 'tap'
import { expectError } from './helpers/errors.js'
import { EVENTS, eventRecord, organizerRecord, setup, venueRecord, type Event } from './helpers/events.js'

t.test('read: by id, the whole record with its schema.org json_ld and an ETag', async (t) => {
  const s = await setup(t)
  await s.create({
    title: 'Open Air',
    description: 'Music under the stars',
    excerpt: 'Summer concert',
    start_date: '2026-07-01 20:00:00',
    end_date: '2026-07-01 23:00:00',
    timezone: 'Europe/Zurich',
    cost: '10 EUR',
    website: 'https://open-air.example/',
    image: 'https://img.example/open-air.jpg',
    venue: [{ venue: 'Park', address: 'Main Street 1', city: 'Bern', country: 'Switzerland', zip: '3000', phone: '+41 31 000 00 00', website: 'https://park.example/' }],
    organizer: [{ organizer: 'Club', email: 'club@example.org', phone: '+41 31 111 11 11', website: 'https://club.example/' }],
  })
  const res = await s.get(1)
  t.equal(res.statusCode, 200)
  t.match(res.headers.etag, /^"event-1-1-[\w-]{16}"$/, 'the id, the version and a digest of what the answer shows')
  t.equal(res.headers['content-type'], 'application/json; charset=utf-8')
  const venue = venueRecord(1, 'Park', { address: 'Main Street 1', city: 'Bern', country: 'Switzerland', zip: '3000', phone: '+41 31 000 00 00', website: 'https://park.example/' })
  const organizer = organizerRecord(1, 'Club', { email: 'club@example.org', phone: '+41 31 111 11 11', website: 'https://club.example/' })
  const expected: Event = {
    ...eventRecord(1, {
      title: 'Open Air',
      slug: 'open-air',
      description: 'Music under the stars',
      excerpt: 'Summer concert',
      start_date: '2026-07-01 20:00:00',
      end_date: '2026-07-01 23:00:00',
      utc_start_date: '2026-07-01 18:00:00',
      utc_end_date: '2026-07-01 21:00:00',
      timezone: 'Europe/Zurich',
      timezone_abbr: 'CEST',
      cost: '10 EUR',
      cost_details: { currency_symbol: null, currency_code: 'EUR', currency_position: 'postfix', values: [10] },
      website: 'https://open-air.example/',
      image: { id: 1, url: 'https://img.example/open-air.jpg' },
      venue: [venue],
      organizer: [organizer],
    }),
    json_ld: {
      '@context': 'https://schema.org',
      '@type': 'Event',
      name: 'Open Air',
      description: 'Summer concert',
      image: 'https://img.example/open-air.jpg',
      url: 'https://open-air.example/',
      startDate: '2026-07-01T20:00:00+02:00',
      endDate: '2026-07-01T23:00:00+02:00',
      eventStatus: 'https://schema.org/EventScheduled',
      eventAttendanceMode: 'https://schema.org/OfflineEventAttendanceMode',
      location: {
        '@type': 'Place',
        name: 'Park',
        address: { '@type': 'PostalAddress', streetAddress: 'Main Street 1', addressLocality: 'Bern', postalCode: '3000', addressCountry: 'Switzerland' },
        telephone: '+41 31 000 00 00',
        sameAs: 'https://park.example/',
      },
      organizer: { '@type': 'Organization', name: 'Club', telephone: '+41 31 111 11 11', email: 'club@example.org', url: 'https://club.example/' },
      offers: { '@type': 'Offer', price: 10, priceCurrency: 'EUR', url: 'https://open-air.example/' },
    },
  }
  t.strictSame(res.json(), expected)
  // Field order follows the reference; json_ld comes last.
  t.same(Object.keys(res.json()), Object.keys(expected))
  t.notOk('password' in res.json())
})

t.test('read: by slug gives the same record, json_ld and ETag', async (t) => {
  const s = await setup(t)
  await s.event('Jazz Night', { venue: [{ venue: 'Hall' }, { venue: 'Cellar' }], organizer: [{ organizer: 'A' }, { organizer: 'B' }] })
  const byId = await s.get(1)
  const bySlug = await s.inject({ url: `${EVENTS}/by-slug/jazz-night` })
  t.equal(bySlug.statusCode, 200)
  t.strictSame(bySlug.json(), byId.json())
  t.equal(bySlug.headers.etag, byId.headers.etag)
  // Several venues and organizers are arrays in json_ld; without a website the url is the rest_url.
  t.strictSame(bySlug.json<Event>().json_ld, {
    '@context': 'https://schema.org',
    '@type': 'Event',
    name: 'Jazz Night',
    url: `${eventRecord(1).rest_url}`,
    startDate: '2026-07-01T18:00:00+00:00',
    endDate: '2026-07-01T21:00:00+00:00',
    eventStatus: 'https://schema.org/EventScheduled',
    eventAttendanceMode: 'https://schema.org/OfflineEventAttendanceMode',
    location: [
      { '@type': 'Place', name: 'Hall', address: { '@type': 'PostalAddress' } },
      { '@type': 'Place', name: 'Cellar', address: { '@type': 'PostalAddress' } },
    ],
    organizer: [{ '@type': 'Organization', name: 'A' }, { '@type': 'Organization', name: 'B' }],
  })
})

t.test('read: an event in America/New_York on a UTC site', async (t) => {
  const s = await setup(t)
  await s.event('Evening in New York', { start_date: '2026-07-01 20:00:00', end_date: '2026-07-01 22:30:00', timezone: 'America/New_York' })
  const res = await s.get(1)
  t.equal(res.statusCode, 200)
  const { json_ld: jsonLd, ...record } = res.json<Event>()
  t.strictSame(record, eventRecord(1, {
    title: 'Evening in New York',
    slug: 'evening-in-new-york',
    start_date: '2026-07-01 20:00:00',
    end_date: '2026-07-01 22:30:00',
    utc_start_date: '2026-07-02 00:00:00',
    utc_end_date: '2026-07-02 02:30:00',
    timezone: 'America/New_York',
    timezone_abbr: 'EDT',
  }))
  t.match(jsonLd, { startDate: '2026-07-01T20:00:00-04:00', endDate: '2026-07-01T22:30:00-04:00' })
})

t.test('read: events on the daylight-saving change day in New York (2026-03-08)', async (t) => {
  const s = await setup(t)
  const ny = { timezone: 'America/New_York' }
  await s.event('Before', { ...ny, start_date: '2026-03-08 01:00:00', end_date: '2026-03-08 01:30:00' })
  await s.event('Across', { ...ny, start_date: '2026-03-08 01:30:00', end_date: '2026-03-08 03:30:00' })
  await s.event('After', { ...ny, start_date: '2026-03-08 03:00:00', end_date: '2026-03-08 04:00:00' })
  await s.event('Day before', { ...ny, start_date: '2026-03-07 12:00:00', end_date: '2026-03-07 13:00:00' })
  const read = async (id: number) => {
    const { json_ld: _, ...record } = (await s.get(id)).json<Event>()
    return record
  }
  // EST is UTC-5, EDT UTC-4; 02:00 EST jumps to 03:00 EDT, so "Across" lasts one hour.
  t.match(await read(1), { timezone_abbr: 'EST', utc_start_date: '2026-03-08 06:00:00', utc_end_date: '2026-03-08 06:30:00' })
  t.match(await read(2), { timezone_abbr: 'EST', utc_start_date: '2026-03-08 06:30:00', utc_end_date: '2026-03-08 07:30:00' })
  t.strictSame(await read(3), eventRecord(3, {
    title: 'After',
    slug: 'after',
    start_date: '2026-03-08 03:00:00',
    end_date: '2026-03-08 04:00:00',
    utc_start_date: '2026-03-08 07:00:00',
    utc_end_date: '2026-03-08 08:00:00',
    timezone: 'America/New_York',
    timezone_abbr: 'EDT',
  }))
  t.match(await read(4), { timezone_abbr: 'EST', utc_start_date: '2026-03-07 17:00:00' })
  t.match((await s.get(2)).json(), { json_ld: { startDate: '2026-03-08T01:30:00-05:00', endDate: '2026-03-08T03:30:00-04:00' } })
})

t.test('read: all-day events span 00:00:00 to 23:59:59 in their own zone', async (t) => {
  const s = await setup(t)
  await s.event('Fair', { all_day: true, start_date: '2026-07-01', end_date: '2026-07-02' })
  await s.event('Zurich fair', { all_day: true, start_date: '2026-07-01 15:00', end_date: '2026-07-01 16:00', timezone: 'Europe/Zurich' })
  const fair = await s.get(1)
  const { json_ld: fairLd, ...fairRecord } = fair.json<Event>()
  t.strictSame(fairRecord, eventRecord(1, {
    title: 'Fair', slug: 'fair', all_day: true, start_date: '2026-07-01 00:00:00', end_date: '2026-07-02 23:59:59',
  }))
  t.match(fairLd, { startDate: '2026-07-01', endDate: '2026-07-02' })
  const { json_ld: _, ...zurich } = (await s.get(2)).json<Event>()
  t.strictSame(zurich, eventRecord(2, {
    title: 'Zurich fair',
    slug: 'zurich-fair',
    all_day: true,
    start_date: '2026-07-01 00:00:00',
    end_date: '2026-07-01 23:59:59',
    utc_start_date: '2026-06-30 22:00:00',
    utc_end_date: '2026-07-01 21:59:59',
    timezone: 'Europe/Zurich',
    timezone_abbr: 'CEST',
  }))
})

t.test('read: on a site in Europe/Zurich, an event without a zone is in the site zone; date and modified are site time', async (t) => {
  const s = await setup(t, { config: { timezone: 'Europe/Zurich' } })
  await s.event('Winter', { start_date: '2026-12-01 19:00', end_date: '2026-12-01 21:00' })
  await s.event('Summer', { start_date: '2026-07-01 19:00', end_date: '2026-07-01 21:00', timezone: null })
  const { json_ld: winterLd, ...winter } = (await s.get(1)).json<Event>()
  t.strictSame(winter, eventRecord(1, {
    title: 'Winter',
    slug: 'winter',
    date: '2026-06-15 14:00:00',
    modified: '2026-06-15 14:00:00',
    start_date: '2026-12-01 19:00:00',
    end_date: '2026-12-01 21:00:00',
    utc_start_date: '2026-12-01 18:00:00',
    utc_end_date: '2026-12-01 20:00:00',
    timezone: 'Europe/Zurich',
    timezone_abbr: 'CET',
  }))
  t.match(winterLd, { startDate: '2026-12-01T19:00:00+01:00' })
  t.match((await s.get(2)).json(), { timezone: 'Europe/Zurich', timezone_abbr: 'CEST', utc_start_date: '2026-07-01 17:00:00' })
})

t.test('read: a password-protected event needs ?password= or edit rights', async (t) => {
  const s = await setup(t)
  const author = await s.auth('author') // user 2
  const other = await s.auth('author') // user 3
  await s.event('Secret', { description: 'The text', excerpt: 'Short' }, author)
  const set = await s.patch(1, { password: 'open sesame' }, author)
  t.equal(set.statusCode, 200)
  t.notOk('password' in set.json(), 'the password is never returned')

  const anonymous = await s.get(1)
  expectError(t, anonymous, 403, 'event-password-protected')
  t.equal(anonymous.json<{ message: string }>().message, 'The requested event is not accessible without a password.')
  expectError(t, await s.get(1, '?password=wrong'), 403, 'event-password-protected')
  expectError(t, await s.get(1, '?password='), 403, 'event-password-protected')
  expectError(t, await s.get(1, '?password=open%20sesam'), 403, 'event-password-protected')
  expectError(t, await s.get(1, '', other), 403, 'event-password-protected', undefined)

  const unlocked = await s.get(1, '?password=open%20sesame')
  t.equal(unlocked.statusCode, 200)
  const { json_ld: _, ...record } = unlocked.json<Event>()
  t.strictSame(record, eventRecord(1, { title: 'Secret', slug: 'secret', author: 2, description: 'The text', excerpt: 'Short' }))
  t.equal((await s.get(1, '', s.editor)).statusCode, 200, 'an editor needs no password')
  t.equal((await s.get(1, '', author)).statusCode, 200, 'nor does its author')
  t.match((await s.get(1, '', s.editor)).json(), { description: 'The text', excerpt: 'Short' })

  // By slug there is no password parameter: only edit rights open it.
  expectError(t, await s.inject({ url: `${EVENTS}/by-slug/secret` }), 403, 'event-password-protected')
  expectError(t, await s.inject({ url: `${EVENTS}/by-slug/secret?password=open%20sesame` }), 403, 'event-password-protected')
  t.equal((await s.inject({ url: `${EVENTS}/by-slug/secret`, headers: s.editor })).statusCode, 200)

  // null removes the protection.
  t.equal((await s.patch(1, { password: null })).statusCode, 200)
  t.equal((await s.get(1)).statusCode, 200)
})

t.test('read: a non-published event is 403 event-not-accessible to those who may not edit it', async (t) => {
  const s = await setup(t)
  const contributor = await s.auth('contributor') // user 2
  const author = await s.auth('author') // user 3
  const subscriber = await s.auth('subscriber')
  await s.event('Draft', {}, contributor) // draft
  await s.event('Pending', { status: 'pending' })
  await s.event('Private', { status: 'private' }, author)
  for (const id of [1, 2, 3]) {
    for (const headers of [{}, subscriber]) {
      const res = await s.get(id, '', headers)
      expectError(t, res, 403, 'event-not-accessible')
      t.equal(res.json<{ message: string }>().message, 'The requested event is not accessible.')
    }
    t.equal((await s.get(id, '', s.editor)).statusCode, 200, 'an editor reads it')
  }
  t.match((await s.get(1, '', contributor)).json(), { id: 1, status: 'draft', author: 2 })
  expectError(t, await s.get(2, '', contributor), 403, 'event-not-accessible')
  expectError(t, await s.get(1, '', author), 403, 'event-not-accessible')
  t.match((await s.get(3, '', author)).json(), { id: 3, status: 'private', author: 3 })
  expectError(t, await s.inject({ url: `${EVENTS}/by-slug/draft` }), 403, 'event-not-accessible')
  t.equal((await s.inject({ url: `${EVENTS}/by-slug/draft`, headers: contributor })).statusCode, 200)
})

t.test('read: a trashed event is 410 event-no-longer-available for everyone', async (t) => {
  const s = await setup(t)
  await s.event('Gone')
  t.equal((await s.remove(1)).statusCode, 200)
  for (const headers of [{}, s.editor, await s.auth('administrator')]) {
    const res = await s.get(1, '', headers)
    expectError(t, res, 410, 'event-no-longer-available')
    t.equal(res.json<{ message: string }>().message, 'This event is no longer available.')
    expectError(t, await s.inject({ url: `${EVENTS}/by-slug/gone`, headers }), 410, 'event-no-longer-available')
  }
})

t.test('read: an unknown id or slug is 404 rest-event-not-found; a non-numeric id is rest_no_route', async (t) => {
  const s = await setup(t)
  const res = await s.get(99)
  t.equal(res.statusCode, 404)
  t.strictSame(res.json(), { code: 'rest-event-not-found', message: 'Event with ID 99 does not exist.', data: { status: 404 } })
  const slug = await s.inject({ url: `${EVENTS}/by-slug/nothing-here` })
  t.strictSame(slug.json(), { code: 'rest-event-not-found', message: 'Event with slug "nothing-here" does not exist.', data: { status: 404 } })
  expectError(t, await s.get('abc'), 404, 'rest_no_route')
  expectError(t, await s.get(99, '', s.editor), 404, 'rest-event-not-found')
})

t.test('read: If-None-Match with the current ETag is 304; every write changes the ETag', async (t) => {
  const s = await setup(t)
  await s.event('Cached')
  const first = await s.get(1)
  const etag = String(first.headers.etag)
  t.match(etag, /^"event-1-1-[\w-]{16}"$/)
  const notModified = await s.get(1, '', { 'if-none-match': etag })
  t.equal(notModified.statusCode, 304)
  t.equal(notModified.body, '')
  t.equal(notModified.headers.etag, etag)
  t.equal((await s.get(1, '', { 'if-none-match': `W/${etag}` })).statusCode, 304, 'weak comparison')
  t.equal((await s.get(1, '', { 'if-none-match': `"other", ${etag}` })).statusCode, 304, 'a list of tags')
  t.equal((await s.get(1, '', { 'if-none-match': '*' })).statusCode, 304)
  t.equal((await s.inject({ url: `${EVENTS}/by-slug/cached`, headers: { 'if-none-match': etag } })).statusCode, 304)
  t.equal((await s.get(1, '', { 'if-none-match': '"event-1-0"' })).statusCode, 200)

  const updated = await s.patch(1, { title: 'Cached again' })
  t.equal(updated.statusCode, 200)
  const current = String(updated.headers.etag)
  t.match(current, /^"event-1-2-[\w-]{16}"$/)
  const second = await s.get(1, '', { 'if-none-match': etag })
  t.equal(second.statusCode, 200, 'the old ETag no longer matches')
  t.equal(second.headers.etag, current)
  t.equal((await s.get(1, '', { ...s.editor, 'if-none-match': current })).statusCode, 304, 'the same ETag for every caller who sees the same')
})

t.test('read: by id without ml_language gives that record; with it, its version in that language', async (t) => {
  const s = await setup(t)
  await s.event('Concert')
  await s.create({ title: 'Konzert', start_date: '2026-07-01 18:00', end_date: '2026-07-01 21:00', translation_of: 1 }, s.editor, '?ml_language=de')
  const de = await s.get(2)
  t.match(de.json(), { id: 2, title: 'Konzert', slug: 'konzert', ml_language: 'de', translations: { en: 1, de: 2 } })
  t.match((await s.get(1, '?ml_language=de')).json(), { id: 2, title: 'Konzert' })
  t.match((await s.get(2, '?ml_language=en')).json(), { id: 1, title: 'Concert', translations: { en: 1, de: 2 } })
  t.match((await s.get(1)).json(), { id: 1, ml_language: 'en' })
  expectError(t, await s.get(1, '?ml_language=es'), 404, 'rest-event-not-found')
})

t.test('read: by slug, the slug is looked up in the requested language', async (t) => {
  const s = await setup(t)
  await s.event('Concert')
  await s.create({ title: 'Concert', start_date: '2026-08-01 18:00', end_date: '2026-08-01 21:00' }, s.editor, '?ml_language=de')
  await s.create({ title: 'Konzert', start_date: '2026-08-01 18:00', end_date: '2026-08-01 21:00' }, s.editor, '?ml_language=de')
  t.match((await s.inject({ url: `${EVENTS}/by-slug/concert` })).json(), { id: 1, ml_language: 'en' })
  t.match((await s.inject({ url: `${EVENTS}/by-slug/concert?ml_language=de` })).json(), { id: 2, slug: 'concert', ml_language: 'de' })
  t.match((await s.inject({ url: `${EVENTS}/by-slug/konzert?ml_language=de` })).json(), { id: 3 })
  expectError(t, await s.inject({ url: `${EVENTS}/by-slug/konzert` }), 404, 'rest-event-not-found')
  expectError(t, await s.inject({ url: `${EVENTS}/by-slug/konzert?ml_language=en` }), 404, 'rest-event-not-found')
})

t.test('read: linked venues and organizers the caller could not read are left out', async (t) => {
  const s = await setup(t)
  await s.venue({ venue: 'Public hall' }) // 1
  await s.venue({ venue: 'Secret hall', status: 'draft' }) // 2
  await s.organizer({ organizer: 'Hidden org', status: 'private' }) // 1
  await s.event('Show', { venue: [2, 1], organizer: [1] })
  const anonymous = (await s.get(1)).json<Event>()
  t.same(anonymous.venue.map((v) => v.id), [1])
  t.same(anonymous.organizer, [])
  const editor = (await s.get(1, '', s.editor)).json<Event>()
  t.strictSame(editor.venue, [venueRecord(2, 'Secret hall', { status: 'draft' }), venueRecord(1, 'Public hall')])
  t.strictSame(editor.organizer, [organizerRecord(1, 'Hidden org', { status: 'private' })])
})
