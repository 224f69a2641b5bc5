/**
 * /venues, /venues/{id} and /venues/by-slug/{slug} (source §2.2, §4.7; CONTRACT §2, §3, §5, §6, §7, §8, §10).
 */
import t from 'tap'
import type { Schema } from '../src/contract.js'
import { API, NOW } from './helpers/build.js'
import { expectError } from './helpers/errors.js'
import { linkedCreateTests, linkedTools } from './helpers/linked.js'
import { insertLinkedEvent, linkedIds } from './helpers/links.js'

type Venue = Schema<'Venue'>

const { PATH, URL, setup, FORBIDDEN_401, FORBIDDEN_403, NOT_ACCESSIBLE, IN_TRASH, ids, restUrl } = linkedTools<Venue>({ collection: 'venues', resource: 'venue' })
/** NOW as stored: the site time zone is UTC unless a test says otherwise. */
const STAMP = '2026-06-15 12:00:00'
const FORM = { 'content-type': 'application/x-www-form-urlencoded' }

const KEYS = [
  'id', 'author', 'status', 'date', 'date_utc', 'modified', 'modified_utc', 'rest_url', 'venue', 'description', 'slug',
  'image', 'address', 'city', 'country', 'province', 'state', 'zip', 'phone', 'website', 'stateprovince', 'show_map',
  'show_map_link', 'geo_lat', 'geo_lng', 'ml_language', 'translations',
]

/** The record the server must return for a venue created by user 1 at NOW; every field overridable. */
function venue(id: number, name: string, fields: Partial<Venue> = {}): Venue {
  const language = fields.ml_language ?? 'en'
  return {
    id, author: 1, status: 'publish', date: STAMP, date_utc: STAMP, modified: STAMP, modified_utc: STAMP,
    rest_url: `${URL}/${id}`, venue: name, description: null, slug: name.toLowerCase().replace(/[^a-z0-9]+/g, '-'),
    image: null, address: null, city: null, country: null, province: null, state: null, zip: null, phone: null,
    website: null, stateprovince: null, show_map: true, show_map_link: true, geo_lat: null, geo_lng: null,
    ml_language: language, translations: { [language]: id }, ...fields,
  }
}

linkedCreateTests<Venue>({ collection: 'venues', resource: 'venue', keys: KEYS, record: (id, name) => venue(id, name), sample: 'Concert Hall', withoutName: { city: 'Wien' }, invalidNames: [] })

// -------------------------------------------------------------------------------------------- create

t.test('create: every field of source §2.2 is stored and returned as written', async (t) => {
  const { create, read, editor } = await setup(t)
  const body = {
    venue: '  Grand Hall  ',
    description: 'A <b>big</b> hall &amp; more',
    address: 'Ringstraße 1',
    city: 'Wien',
    country: 'Austria',
    province: 'Vienna',
    state: 'W',
    zip: '1010',
    phone: '+43 1 234',
    stateprovince: 'Wien',
    website: 'https://hall.example/path?q=1',
    show_map: false,
    show_map_link: 'no',
    image: 'https://img.example/hall.png',
    slug: 'Grand Hall Vienna',
    status: 'draft',
    date: '2026-05-01 08:30:00',
  }
  const created = await create(body)
  const expected = venue(1, '  Grand Hall  ', {
    status: 'draft', date: '2026-05-01 08:30:00', date_utc: '2026-05-01 08:30:00', description: 'A <b>big</b> hall &amp; more',
    slug: 'grand-hall-vienna', image: { id: 1, url: 'https://img.example/hall.png' }, address: 'Ringstraße 1', city: 'Wien',
    country: 'Austria', province: 'Vienna', state: 'W', zip: '1010', phone: '+43 1 234', website: 'https://hall.example/path?q=1',
    stateprovince: 'Wien', show_map: false, show_map_link: false,
  })
  t.strictSame(created, expected)
  t.strictSame((await read(1, editor)).json(), expected)
})

t.test('create: unknown or read-only body fields are 400 naming each of them', async (t) => {
  const { inject, editor, list } = await setup(t)
  const res = await inject({ method: 'POST', url: PATH, headers: editor, payload: { venue: 'Hall', colour: 'red', size: 3 } })
  expectError(t, res, 400, 'rest_invalid_param', ['colour', 'size'])
  for (const field of ['id', 'rest_url', 'translations', 'modified']) {
    expectError(t, await inject({ method: 'POST', url: PATH, headers: editor, payload: { venue: 'Hall', [field]: 1 } }), 400, 'rest_invalid_param', [field])
  }
  t.equal((await list('', editor)).json().total, 0)
})

t.test('create: show_map and show_map_link take booleans and "1"/"0"/"true"/"false"/"yes"/"no", returned as booleans', async (t) => {
  const { create, inject, editor } = await setup(t)
  const cases: Array<[unknown, boolean]> = [
    [true, true], ['true', true], ['1', true], ['yes', true],
    [false, false], ['false', false], ['0', false], ['no', false],
  ]
  for (const [value, expected] of cases) {
    const created = await create({ venue: `Hall ${String(value)}`, show_map: value, show_map_link: value })
    t.equal(created.show_map, expected, `show_map ${JSON.stringify(value)}`)
    t.equal(created.show_map_link, expected, `show_map_link ${JSON.stringify(value)}`)
  }
  const defaults = await create({ venue: 'Defaults' })
  t.equal(defaults.show_map, true, 'show_map defaults to true')
  t.equal(defaults.show_map_link, true, 'show_map_link defaults to true')
  for (const value of ['maybe', 'Yes', 2, '']) {
    expectError(t, await inject({ method: 'POST', url: PATH, headers: editor, payload: { venue: 'Bad', show_map: value } }), 400, 'rest_invalid_param', ['show_map'])
    expectError(t, await inject({ method: 'POST', url: PATH, headers: editor, payload: { venue: 'Bad', show_map_link: value } }), 400, 'rest_invalid_param', ['show_map_link'])
  }
  for (const [text, expected] of [['yes', true], ['no', false], ['1', true], ['0', false], ['true', true], ['false', false]] as const) {
    const res = await inject({ method: 'POST', url: PATH, headers: { ...editor, ...FORM }, payload: `venue=Form+${text}&show_map=${text}&show_map_link=${text}` })
    t.equal(res.statusCode, 201, `form ${text}`)
    t.equal(res.json<Venue>().show_map, expected, `form show_map=${text}`)
    t.equal(res.json<Venue>().show_map_link, expected, `form show_map_link=${text}`)
  }
})

t.test('create: website must be an absolute http(s) URL, else 400 naming website', async (t) => {
  const { create, inject, editor, list } = await setup(t)
  for (const website of ['not a url', 'ftp://files.example/', 'mailto:a@b.example', '/relative/path', 'http://']) {
    const res = await inject({ method: 'POST', url: PATH, headers: editor, payload: { venue: 'Hall', website } })
    expectError(t, res, 400, 'rest_invalid_param', ['website'])
  }
  t.equal((await list('', editor)).json().total, 0, 'nothing created')
  t.equal((await create({ venue: 'A', website: 'http://a.example' })).website, 'http://a.example')
  t.equal((await create({ venue: 'B', website: 'HTTPS://b.example/x' })).website, 'HTTPS://b.example/x')
  t.equal((await create({ venue: 'C', website: null })).website, null)
})

t.test('create: date (site time) and date_utc (UTC) set the publication date; invalid is 400 naming it', async (t) => {
  const { create, inject, editor } = await setup(t, { config: { timezone: 'Europe/Vienna' } })
  const modified = { modified: '2026-06-15 14:00:00', modified_utc: STAMP }
  const wall = await create({ venue: 'Wall', date: '2026-01-02 03:04:05' })
  t.strictSame(wall, venue(1, 'Wall', { date: '2026-01-02 03:04:05', date_utc: '2026-01-02 02:04:05', ...modified }))
  const short = await create({ venue: 'Short', date: '2026-07-01 10:00' })
  t.equal(short.date, '2026-07-01 10:00:00')
  t.equal(short.date_utc, '2026-07-01 08:00:00')
  const utc = await create({ venue: 'Utc', date_utc: '2026-07-01 10:00:00' })
  t.equal(utc.date, '2026-07-01 12:00:00')
  t.equal(utc.date_utc, '2026-07-01 10:00:00')
  const offset = await create({ venue: 'Offset', date: '2026-03-01T10:00:00-05:00' })
  t.equal(offset.date_utc, '2026-03-01 15:00:00')
  t.equal(offset.date, '2026-03-01 16:00:00')
  const both = await create({ venue: 'Both', date: '2026-02-01 01:00:00', date_utc: '2026-02-01 00:00:00' })
  t.equal(both.date_utc, '2026-02-01 00:00:00', 'date and date_utc naming the same instant')
  const none = await create({ venue: 'None' })
  t.equal(none.date, '2026-06-15 14:00:00', 'now in the site time zone')
  t.equal(none.date_utc, STAMP)
  expectError(t, await inject({ method: 'POST', url: PATH, headers: editor, payload: { venue: 'Bad', date: 'someday' } }), 400, 'rest_invalid_param', ['date'])
  expectError(t, await inject({ method: 'POST', url: PATH, headers: editor, payload: { venue: 'Bad', date_utc: '2026-13-01 00:00:00' } }), 400, 'rest_invalid_param', ['date_utc'])
})

t.test('create: image by URL becomes {id, url}; by the id of an existing image; anything else is 400', async (t) => {
  const { create, inject, editor, list } = await setup(t)
  const first = await create({ venue: 'A', image: 'https://img.example/a.png' })
  t.strictSame(first.image, { id: 1, url: 'https://img.example/a.png' })
  const second = await create({ venue: 'B', image: 1 })
  t.strictSame(second.image, { id: 1, url: 'https://img.example/a.png' }, 'an existing image by id')
  const third = await create({ venue: 'C', image: 'http://img.example/c.jpg' })
  t.strictSame(third.image, { id: 2, url: 'http://img.example/c.jpg' })
  t.equal((await create({ venue: 'D', image: null })).image, null)
  for (const image of [99, 'not a url', 'ftp://img.example/a.png', '/a.png', 0]) {
    expectError(t, await inject({ method: 'POST', url: PATH, headers: editor, payload: { venue: 'Bad', image } }), 400, 'rest_invalid_param', ['image'])
  }
  t.equal((await list('', editor)).json().total, 4, 'no venue created by the refused requests')
  const form = await inject({ method: 'POST', url: PATH, headers: { ...editor, ...FORM }, payload: 'venue=Form&image=2' })
  t.strictSame(form.json<Venue>().image, { id: 2, url: 'http://img.example/c.jpg' }, 'an id in a form body')
})

t.test('create: the slug is made from the name, ASCII-folded, unique per language with -2, -3', async (t) => {
  const { create } = await setup(t)
  t.equal((await create({ venue: 'Café Münster & Straße' })).slug, 'cafe-muenster-strasse')
  t.equal((await create({ venue: 'Town Hall' })).slug, 'town-hall')
  t.equal((await create({ venue: 'Town hall' })).slug, 'town-hall-2')
  t.equal((await create({ venue: 'TOWN HALL!' })).slug, 'town-hall-3')
  t.equal((await create({ venue: '!!!' })).slug, 'venue-5', 'nothing left of the name: <singular>-<id>')
  t.equal((await create({ venue: 'Town Hall', ml_language: 'de' })).slug, 'town-hall', 'another language has its own slugs')
  t.equal((await create({ venue: 'x'.repeat(250) })).slug, 'x'.repeat(200), 'at most 200 characters')
  t.equal((await create({ venue: 'x'.repeat(200) })).slug, `${'x'.repeat(198)}-2`, 'the suffix stays within 200 characters')
})

t.test('create: an explicit slug is normalised and made unique', async (t) => {
  const { create } = await setup(t)
  t.equal((await create({ venue: 'Hall', slug: 'My Own Slug!' })).slug, 'my-own-slug')
  t.equal((await create({ venue: 'Other', slug: 'my-own-slug' })).slug, 'my-own-slug-2')
  t.equal((await create({ venue: 'Third', slug: 'Hall' })).slug, 'hall')
  t.equal((await create({ venue: 'Hall' })).slug, 'hall-2', 'a name-made slug also avoids explicit ones')
})

t.test('create: ml_language in the body, in the query, and both (the body wins)', async (t) => {
  const { create, inject, editor } = await setup(t)
  const body = await create({ venue: 'Halle', ml_language: 'de' })
  t.strictSame(body, venue(1, 'Halle', { ml_language: 'de' }))
  const query = await create({ venue: 'Sala' }, editor, '?ml_language=es')
  t.strictSame(query, venue(2, 'Sala', { ml_language: 'es' }))
  const both = await create({ venue: 'Salle', ml_language: 'ch-fr' }, editor, '?ml_language=es')
  t.equal(both.ml_language, 'ch-fr')
  const res = await inject({ method: 'POST', url: PATH, headers: editor, payload: { venue: 'Hall', ml_language: 'fr' } })
  expectError(t, res, 400, 'rest_invalid_param', ['ml_language'])
  expectError(t, await inject({ method: 'POST', url: `${PATH}?ml_language=EN`, headers: editor, payload: { venue: 'Hall' } }), 400, 'rest_invalid_param', ['ml_language'])
})

t.test('create: translation_of joins a translation group, one record per language', async (t) => {
  const { create, inject, editor, read, auth } = await setup(t)
  await create({ venue: 'Opera' })
  const german = await create({ venue: 'Oper', ml_language: 'de', translation_of: 1 })
  t.strictSame(german, venue(2, 'Oper', { ml_language: 'de', translations: { en: 1, de: 2 } }))
  const austrian = await create({ venue: 'Staatsoper', translation_of: 2 }, editor, '?ml_language=at')
  t.strictSame(austrian.translations, { en: 1, de: 2, at: 3 })
  t.strictSame((await read(1)).json<Venue>().translations, { en: 1, de: 2, at: 3 })
  expectError(t, await inject({ method: 'POST', url: PATH, headers: editor, payload: { venue: 'Oper 2', ml_language: 'de', translation_of: 1 } }), 400, 'rest_invalid_param', ['translation_of'])
  expectError(t, await inject({ method: 'POST', url: PATH, headers: editor, payload: { venue: 'Opera 2', translation_of: 1 } }), 400, 'rest_invalid_param', ['translation_of'])
  expectError(t, await inject({ method: 'POST', url: PATH, headers: editor, payload: { venue: 'Ópera', ml_language: 'es', translation_of: 99 } }), 400, 'rest_invalid_param', ['translation_of'])
  const organizer = await inject({ method: 'POST', url: `${API}/organizers`, headers: await auth('editor'), payload: { organizer: 'Org' } })
  t.equal(organizer.statusCode, 201)
  const other = await inject({ method: 'POST', url: PATH, headers: editor, payload: { venue: 'Sala', ml_language: 'es', translation_of: 4 } })
  expectError(t, other, 400, 'rest_invalid_param', ['translation_of'])
  t.equal((await read(4)).statusCode, 404, 'no venue 4: an organizer id is not a venue')
})

t.test('create: a form-urlencoded body works like JSON', async (t) => {
  const { inject, editor } = await setup(t)
  const res = await inject({
    method: 'POST', url: PATH, headers: { ...editor, ...FORM },
    payload: 'venue=Jazz+Club&city=New+York&zip=10001&show_map=no&show_map_link=1&website=https%3A%2F%2Fjazz.example&status=draft&ml_language=de&description=',
  })
  t.equal(res.statusCode, 201)
  t.strictSame(res.json(), venue(1, 'Jazz Club', {
    city: 'New York', zip: '10001', show_map: false, show_map_link: true, website: 'https://jazz.example', status: 'draft',
    ml_language: 'de', description: null,
  }))
  t.equal(res.headers['content-language'], 'de')
  expectError(t, await inject({ method: 'POST', url: PATH, headers: { ...editor, ...FORM }, payload: 'city=Wien' }), 400, 'rest_missing_callback_param', ['venue'])
  expectError(t, await inject({ method: 'POST', url: PATH, headers: { ...editor, ...FORM }, payload: 'venue=A&colour=red' }), 400, 'rest_invalid_param', ['colour'])
})

// ----------------------------------------------------------------------------------- geolocation (§8)

t.test('geo: with the extension off, geo_lat/geo_lng in a write are 400 geoloc-extension-inactive', async (t) => {
  const { inject, editor, create, read, list } = await setup(t)
  for (const payload of [{ geo_lat: 48.2, geo_lng: 16.37 }, { geo_lat: 48.2 }, { geo_lng: 16.37 }, { geo_lat: null, geo_lng: null }]) {
    const res = await inject({ method: 'POST', url: PATH, headers: editor, payload: { venue: 'Hall', ...payload } })
    expectError(t, res, 400, 'geoloc-extension-inactive')
    t.match(res.json().message, /CALENDAR_EXTENSIONS=geoloc/)
  }
  t.equal((await list('', editor)).json().total, 0)
  await create({ venue: 'Hall' })
  const update = await inject({ method: 'PATCH', url: `${PATH}/1`, headers: editor, payload: { city: 'Wien', geo_lat: 1, geo_lng: 2 } })
  expectError(t, update, 400, 'geoloc-extension-inactive')
  const german = await inject({ method: 'PATCH', url: `${PATH}/1?ml_language=de`, headers: editor, payload: { geo_lat: 1, geo_lng: 2, ml_language: 'en' } })
  expectError(t, german, 400, 'geoloc-extension-inactive')
  t.strictSame((await read(1)).json(), venue(1, 'Hall'), 'nothing written')
})

t.test('geo: with the extension on, geo_lat and geo_lng are stored and returned, both or neither, in range', async (t) => {
  const { inject, editor, create, read, patch } = await setup(t, { config: { extensions: new Set(['geoloc']) } })
  const created = await create({ venue: 'Stephansdom', geo_lat: 48.2085, geo_lng: 16.3731 })
  t.strictSame(created, venue(1, 'Stephansdom', { geo_lat: 48.2085, geo_lng: 16.3731 }))
  t.strictSame((await create({ venue: 'Nowhere' })), venue(2, 'Nowhere'), 'without coordinates: null')
  t.strictSame((await create({ venue: 'Edge', geo_lat: -90, geo_lng: 180 })).geo_lat, -90)
  for (const payload of [{ geo_lat: 48.2 }, { geo_lng: 16.3 }, { geo_lat: 48.2, geo_lng: null }, { geo_lat: null, geo_lng: 16.3 }]) {
    const res = await inject({ method: 'POST', url: PATH, headers: editor, payload: { venue: 'Half', ...payload } })
    t.equal(res.statusCode, 400, JSON.stringify(payload))
    t.equal(res.json().code, 'rest_invalid_param')
  }
  for (const payload of [{ geo_lat: 90.5, geo_lng: 0 }, { geo_lat: -91, geo_lng: 0 }]) {
    expectError(t, await inject({ method: 'POST', url: PATH, headers: editor, payload: { venue: 'Far', ...payload } }), 400, 'rest_invalid_param', ['geo_lat'])
  }
  for (const payload of [{ geo_lat: 0, geo_lng: 180.1 }, { geo_lat: 0, geo_lng: -181 }, { geo_lat: 0, geo_lng: 'east' }]) {
    expectError(t, await inject({ method: 'POST', url: PATH, headers: editor, payload: { venue: 'Far', ...payload } }), 400, 'rest_invalid_param', ['geo_lng'])
  }
  expectError(t, await patch(1, { geo_lat: 10 }), 400, 'rest_invalid_param')
  t.strictSame((await read(1)).json<Venue>().geo_lat, 48.2085, 'a refused update writes nothing')
  const moved = await patch(1, { geo_lat: 47.0707, geo_lng: 15.4395 })
  t.equal(moved.statusCode, 200)
  t.strictSame([moved.json<Venue>().geo_lat, moved.json<Venue>().geo_lng], [47.0707, 15.4395])
  const kept = await patch(1, { city: 'Graz' })
  t.strictSame([kept.json<Venue>().geo_lat, kept.json<Venue>().geo_lng], [47.0707, 15.4395], 'omitted: kept')
  const cleared = await patch(1, { geo_lat: null, geo_lng: null })
  t.strictSame(cleared.json(), venue(1, 'Stephansdom', { city: 'Graz' }))
  const form = await inject({ method: 'POST', url: PATH, headers: { ...editor, ...FORM }, payload: 'venue=Form&geo_lat=-33.8568&geo_lng=151.2153' })
  t.equal(form.statusCode, 201)
  t.strictSame([form.json<Venue>().geo_lat, form.json<Venue>().geo_lng], [-33.8568, 151.2153])
})

t.test('geo: coordinates stored while the extension was on read back as null when it is off', async (t) => {
  const { create, read, db } = await setup(t)
  await create({ venue: 'Hall' })
  await db.updateTable('venues').set({ geo_lat: 10, geo_lng: 20 }).where('id', '=', 1).execute()
  const res = await read(1)
  t.equal(res.statusCode, 200)
  t.strictSame(res.json(), venue(1, 'Hall'))
})

// ---------------------------------------------------------------------------------------------- read

t.test('read: by id and by slug, 200 with the record and the same ETag; trailing slash too', async (t) => {
  const { inject, create } = await setup(t)
  await create({ venue: 'Jazz Cellar', city: 'Wien' })
  const byId = await inject({ url: `${PATH}/1` })
  t.equal(byId.statusCode, 200)
  t.strictSame(byId.json(), venue(1, 'Jazz Cellar', { city: 'Wien' }))
  t.match(byId.headers.etag, /^"[^"]+"$/)
  const bySlug = await inject({ url: `${PATH}/by-slug/jazz-cellar` })
  t.equal(bySlug.statusCode, 200)
  t.strictSame(bySlug.json(), venue(1, 'Jazz Cellar', { city: 'Wien' }))
  t.equal(bySlug.headers.etag, byId.headers.etag)
  t.equal((await inject({ url: `${PATH}/1/` })).statusCode, 200)
})

t.test('read: unknown id or slug is 404 rest-venue-not-found (an organizer is not a venue); a non-numeric id is rest_no_route', async (t) => {
  const { inject, create, editor } = await setup(t)
  const byId = await inject({ url: `${PATH}/42` })
  t.equal(byId.statusCode, 404)
  t.strictSame(byId.json(), { code: 'rest-venue-not-found', message: 'Venue with ID 42 does not exist.', data: { status: 404 } })
  const bySlug = await inject({ url: `${PATH}/by-slug/nowhere` })
  t.strictSame(bySlug.json(), { code: 'rest-venue-not-found', message: 'Venue with slug "nowhere" does not exist.', data: { status: 404 } })
  expectError(t, await inject({ url: `${PATH}/abc` }), 404, 'rest_no_route')
  expectError(t, await inject({ url: `${PATH}/-1` }), 404, 'rest_no_route')
  await create({ venue: 'Hall' })
  await inject({ method: 'POST', url: `${API}/organizers`, headers: editor, payload: { organizer: 'Org' } })
  t.equal((await inject({ url: `${API}/organizers/1` })).statusCode, 200)
  expectError(t, await inject({ url: `${PATH}/2` }), 404, 'rest-venue-not-found')
  expectError(t, await inject({ url: `${PATH}/by-slug/org` }), 404, 'rest-venue-not-found', undefined)
})

t.test('read: If-None-Match with the current ETag is 304 (by id and slug); after a change it is 200', async (t) => {
  const { inject, create, patch } = await setup(t)
  await create({ venue: 'Hall' })
  const etag = String((await inject({ url: `${PATH}/1` })).headers.etag)
  for (const url of [`${PATH}/1`, `${PATH}/by-slug/hall`]) {
    const res = await inject({ url, headers: { 'if-none-match': etag } })
    t.equal(res.statusCode, 304, url)
    t.equal(res.body, '')
    t.equal(res.headers.etag, etag)
  }
  t.equal((await inject({ url: `${PATH}/1`, headers: { 'if-none-match': `"other", ${etag}` } })).statusCode, 304)
  t.equal((await inject({ url: `${PATH}/1`, headers: { 'if-none-match': '"other"' } })).statusCode, 200)
  const updated = await patch(1, { city: 'Graz' })
  t.not(updated.headers.etag, etag, 'every write changes the ETag')
  const changed = await inject({ url: `${PATH}/1`, headers: { 'if-none-match': etag } })
  t.equal(changed.statusCode, 200)
  t.equal(changed.headers.etag, updated.headers.etag)
  t.equal(changed.json<Venue>().city, 'Graz')
})

t.test('read: every write changes the ETag, even within the same second', async (t) => {
  const { create, patch, read } = await setup(t)
  const seen = new Set<string>()
  await create({ venue: 'Hall' })
  seen.add(String((await read(1)).headers.etag))
  for (const city of ['A', 'B', 'A']) {
    const res = await patch(1, { city })
    t.equal(res.headers.etag, (await read(1)).headers.etag)
    seen.add(String(res.headers.etag))
  }
  t.equal(seen.size, 4)
})

t.test('read: ml_language on a by-id read gives that language\'s version, or 404', async (t) => {
  const { inject, create } = await setup(t)
  await create({ venue: 'Opera' })
  await create({ venue: 'Oper', ml_language: 'de', translation_of: 1 })
  const german = await inject({ url: `${PATH}/1?ml_language=de` })
  t.equal(german.statusCode, 200)
  t.strictSame(german.json(), venue(2, 'Oper', { ml_language: 'de', translations: { en: 1, de: 2 } }))
  t.equal(german.headers['content-language'], 'de')
  t.equal((await inject({ url: `${PATH}/2?ml_language=en` })).json<Venue>().id, 1)
  t.equal((await inject({ url: `${PATH}/2` })).json<Venue>().id, 2, 'without ml_language: that record, whatever its language')
  expectError(t, await inject({ url: `${PATH}/1?ml_language=es` }), 404, 'rest-venue-not-found')
  expectError(t, await inject({ url: `${PATH}/1?ml_language=xx` }), 400, 'rest_invalid_param', ['ml_language'])
})

t.test('read: by slug looks in the requested language, the default language without one', async (t) => {
  const { inject, create } = await setup(t)
  await create({ venue: 'Arena' })
  await create({ venue: 'Arena', ml_language: 'de' })
  await create({ venue: 'Stadthalle', ml_language: 'de' })
  t.equal((await inject({ url: `${PATH}/by-slug/arena` })).json<Venue>().id, 1)
  t.equal((await inject({ url: `${PATH}/by-slug/arena?ml_language=en` })).json<Venue>().id, 1)
  t.equal((await inject({ url: `${PATH}/by-slug/arena?ml_language=de` })).json<Venue>().id, 2)
  expectError(t, await inject({ url: `${PATH}/by-slug/stadthalle` }), 404, 'rest-venue-not-found')
  t.equal((await inject({ url: `${PATH}/by-slug/stadthalle?ml_language=de` })).json<Venue>().id, 3)
  expectError(t, await inject({ url: `${PATH}/by-slug/arena?ml_language=es` }), 404, 'rest-venue-not-found')
})

t.test('read: a non-published venue is 403 venue-not-accessible to those who may not edit it', async (t) => {
  const { inject, create, auth, editor } = await setup(t)
  const author = await auth('author') // user 2
  const otherAuthor = await auth('author')
  const contributor = await auth('contributor')
  const subscriber = await auth('subscriber')
  await create({ venue: 'Draft', status: 'draft' }, author)
  await create({ venue: 'Pending', status: 'pending' }, author)
  await create({ venue: 'Private', status: 'private' }, author)
  for (const id of [1, 2, 3]) {
    for (const headers of [{}, otherAuthor, contributor, subscriber]) {
      const res = await inject({ url: `${PATH}/${id}`, headers })
      t.equal(res.statusCode, 403, `venue ${id}`)
      t.strictSame(res.json(), NOT_ACCESSIBLE)
    }
    t.equal((await inject({ url: `${PATH}/${id}`, headers: author })).statusCode, 200, 'the author reads its own')
    t.equal((await inject({ url: `${PATH}/${id}`, headers: editor })).statusCode, 200, 'an editor reads all')
  }
  t.strictSame((await inject({ url: `${PATH}/by-slug/draft` })).json(), NOT_ACCESSIBLE, 'by slug too')
  t.strictSame((await inject({ url: `${PATH}/by-slug/draft`, headers: author })).json(), venue(1, 'Draft', { author: 2, status: 'draft' }))
})

t.test('read: a contributor reads its own draft and pending venues, not once they are published', async (t) => {
  const { inject, create, auth, patch } = await setup(t)
  const contributor = await auth('contributor') // user 2
  await create({ venue: 'Mine' }, contributor)
  await create({ venue: 'Submitted', status: 'publish' }, contributor)
  t.equal((await inject({ url: `${PATH}/1`, headers: contributor })).statusCode, 200)
  t.equal((await inject({ url: `${PATH}/2`, headers: contributor })).json<Venue>().status, 'pending')
  await patch(1, { status: 'private' })
  expectError(t, await inject({ url: `${PATH}/1`, headers: contributor }), 403, 'venue-not-accessible')
  await patch(2, { status: 'publish' })
  t.equal((await inject({ url: `${PATH}/2` })).statusCode, 200, 'published: public')
})

t.test('read: a trashed venue is 403 to those who cannot edit it, 200 with status trash to those who can', async (t) => {
  const { inject, create, auth, editor } = await setup(t)
  const author = await auth('author') // user 2
  await create({ venue: 'Old Hall' }, author)
  t.equal((await inject({ method: 'DELETE', url: `${PATH}/1`, headers: author })).statusCode, 200)
  for (const headers of [{}, await auth('author'), await auth('contributor'), await auth('subscriber')]) {
    t.strictSame((await inject({ url: `${PATH}/1`, headers })).json(), NOT_ACCESSIBLE)
    t.strictSame((await inject({ url: `${PATH}/by-slug/old-hall`, headers })).json(), NOT_ACCESSIBLE)
  }
  for (const headers of [editor, author]) {
    const res = await inject({ url: `${PATH}/1`, headers })
    t.equal(res.statusCode, 200)
    t.strictSame(res.json(), venue(1, 'Old Hall', { author: 2, status: 'trash' }))
    t.equal((await inject({ url: `${PATH}/by-slug/old-hall`, headers })).json<Venue>().status, 'trash')
  }
})

// -------------------------------------------------------------------------------------------- update

for (const method of ['POST', 'PUT', 'PATCH'] as const) {
  t.test(`update (${method}): partial by id and by slug, omitted fields keep their value, a new ETag`, async (t) => {
    const clock = new Date(NOW)
    const { inject, editor, create } = await setup(t, { now: clock })
    await create({ venue: 'Hall', city: 'Wien', zip: '1010', description: 'Old', show_map: false, image: 'https://img.example/1.png' })
    const before = await inject({ url: `${PATH}/1` })
    clock.setTime(Date.parse('2026-06-16T08:00:00Z'))
    const res = await inject({ method, url: `${PATH}/1`, headers: editor, payload: { city: 'Graz', venue: 'Big Hall' } })
    t.equal(res.statusCode, 200)
    const expected = venue(1, 'Big Hall', {
      slug: 'hall', city: 'Graz', zip: '1010', description: 'Old', show_map: false, image: { id: 1, url: 'https://img.example/1.png' },
      modified: '2026-06-16 08:00:00', modified_utc: '2026-06-16 08:00:00',
    })
    t.strictSame(res.json(), expected, 'the name changes, the slug does not; modified moves on')
    t.match(res.headers.etag, /^"[^"]+"$/)
    t.not(res.headers.etag, before.headers.etag)
    const after = await inject({ url: `${PATH}/1` })
    t.strictSame(after.json(), expected)
    t.equal(after.headers.etag, res.headers.etag)

    const bySlug = await inject({ method, url: `${PATH}/by-slug/hall`, headers: editor, payload: { phone: '123' } })
    t.equal(bySlug.statusCode, 200)
    t.strictSame(bySlug.json(), { ...expected, phone: '123' })
    t.equal(bySlug.headers.etag, (await inject({ url: `${PATH}/1` })).headers.etag)
  })
}

t.test('update: every field can be changed; null clears nullable fields; an empty body changes nothing else', async (t) => {
  const { create, patch, read, editor } = await setup(t)
  await create({ venue: 'Hall', description: 'D', address: 'A', city: 'C', country: 'K', province: 'P', state: 'S', zip: 'Z', phone: 'F', stateprovince: 'SP', website: 'https://w.example', image: 'https://img.example/a.png' })
  const changed = await patch(1, {
    description: 'D2', address: 'A2', city: 'C2', country: 'K2', province: 'P2', state: 'S2', zip: 'Z2', phone: 'F2', stateprovince: 'SP2',
    website: 'http://w2.example', show_map: 'no', show_map_link: '0', image: 'https://img.example/b.png', status: 'draft', date: '2026-01-01 00:00:00',
  })
  t.equal(changed.statusCode, 200)
  t.strictSame(changed.json(), venue(1, 'Hall', {
    description: 'D2', address: 'A2', city: 'C2', country: 'K2', province: 'P2', state: 'S2', zip: 'Z2', phone: 'F2', stateprovince: 'SP2',
    website: 'http://w2.example', show_map: false, show_map_link: false, image: { id: 2, url: 'https://img.example/b.png' }, status: 'draft',
    date: '2026-01-01 00:00:00', date_utc: '2026-01-01 00:00:00',
  }))
  const emptied = await patch(1, { description: '', city: '', website: '' })
  t.equal(emptied.statusCode, 400, 'an empty website is not a URL')
  const blank = await patch(1, { description: '', city: '' })
  t.strictSame([blank.json<Venue>().description, blank.json<Venue>().city], [null, null], 'an empty string is no value: null')
  const cleared = await patch(1, {
    description: null, address: null, city: null, country: null, province: null, state: null, zip: null, phone: null, stateprovince: null,
    website: null, image: null, show_map: true, show_map_link: 'yes',
  })
  const expected = venue(1, 'Hall', { status: 'draft', date: '2026-01-01 00:00:00', date_utc: '2026-01-01 00:00:00' })
  t.strictSame(cleared.json(), expected)
  const etag = cleared.headers.etag
  const empty = await patch(1, {})
  t.equal(empty.statusCode, 200)
  t.strictSame(empty.json(), expected)
  t.strictSame((await read(1, editor)).json(), expected)
  t.equal(empty.headers.etag, etag, 'nothing changed: the same ETag (CONTRACT §5)')
})

t.test('update: null on the name or a flag, or a bad value, is 400 and writes nothing', async (t) => {
  const { create, patch, read } = await setup(t)
  await create({ venue: 'Hall', city: 'Wien' })
  const etag = (await read(1)).headers.etag
  expectError(t, await patch(1, { venue: null, city: 'X' }), 400, 'rest_invalid_param', ['venue'])
  expectError(t, await patch(1, { venue: '' }), 400, 'rest_invalid_param', ['venue'])
  expectError(t, await patch(1, { show_map: null }), 400, 'rest_invalid_param', ['show_map'])
  expectError(t, await patch(1, { show_map_link: 'maybe' }), 400, 'rest_invalid_param', ['show_map_link'])
  expectError(t, await patch(1, { city: 'X', website: 'nope' }), 400, 'rest_invalid_param', ['website'])
  expectError(t, await patch(1, { city: 'X', website: 'ftp://x.example' }), 400, 'rest_invalid_param', ['website'])
  expectError(t, await patch(1, { city: 'X', image: 42 }), 400, 'rest_invalid_param', ['image'])
  expectError(t, await patch(1, { city: 'X', date: 'tomorrow-ish' }), 400, 'rest_invalid_param', ['date'])
  expectError(t, await patch(1, { city: 'X', status: 'trash' }), 400, 'rest_invalid_param', ['status'])
  expectError(t, await patch(1, { city: 'X', translation_of: 1 }), 400, 'rest_invalid_param', ['translation_of'])
  expectError(t, await patch(1, { city: 'X', colour: 'red' }), 400, 'rest_invalid_param', ['colour'])
  const read1 = await read(1)
  t.strictSame(read1.json(), venue(1, 'Hall', { city: 'Wien' }))
  t.equal(read1.headers.etag, etag, 'nothing was written')
})

t.test('update: a bad field is 400 before the lookup (unknown id) and before If-Match', async (t) => {
  const { create, patch, inject, editor, read } = await setup(t)
  await create({ venue: 'Hall' })
  expectError(t, await patch(99, { website: 'nope' }), 400, 'rest_invalid_param', ['website'])
  expectError(t, await patch(99, { website: 'ftp://x.example' }), 400, 'rest_invalid_param', ['website'])
  expectError(t, await patch(99, { city: 'X' }), 404, 'rest-venue-not-found')
  expectError(t, await inject({ method: 'PATCH', url: `${PATH}/by-slug/nowhere`, headers: editor, payload: { city: 'X' } }), 404, 'rest-venue-not-found')
  const stale = await inject({ method: 'PATCH', url: `${PATH}/1`, headers: { ...editor, 'if-match': '"stale"' }, payload: { website: 'ftp://x.example' } })
  expectError(t, stale, 400, 'rest_invalid_param', ['website'])
  t.strictSame((await read(1)).json(), venue(1, 'Hall'))
})

t.test('update: the slug is renamed by an explicit slug, normalised and kept unique; renaming keeps it', async (t) => {
  const { create, patch, inject } = await setup(t)
  await create({ venue: 'Hall' })
  await create({ venue: 'Arena' })
  t.equal((await patch(1, { slug: 'Main Hall' })).json<Venue>().slug, 'main-hall')
  t.equal((await inject({ url: `${PATH}/by-slug/main-hall` })).json<Venue>().id, 1)
  expectError(t, await inject({ url: `${PATH}/by-slug/hall` }), 404, 'rest-venue-not-found')
  t.equal((await patch(2, { slug: 'main-hall' })).json<Venue>().slug, 'main-hall-2', 'taken: suffixed')
  t.equal((await patch(1, { slug: 'main-hall' })).json<Venue>().slug, 'main-hall', 'its own slug stays')
  t.equal((await patch(1, { venue: 'Totally New' })).json<Venue>().slug, 'main-hall', 'a new name keeps the slug')
  t.equal((await patch(1, { venue: 'Brand New', slug: '' })).json<Venue>().slug, 'brand-new', 'an empty slug is made from the name')
})

t.test('update: a stale If-Match is 412 rest-precondition-failed and nothing is written', async (t) => {
  const { inject, editor, create, read } = await setup(t)
  await create({ venue: 'Hall' })
  const original = String((await read(1)).headers.etag)
  const first = await inject({ method: 'PATCH', url: `${PATH}/1`, headers: { ...editor, 'if-match': original }, payload: { city: 'Wien' } })
  t.equal(first.statusCode, 200)
  const current = String(first.headers.etag)
  for (const url of [`${PATH}/1`, `${PATH}/by-slug/hall`]) {
    const stale = await inject({ method: 'PUT', url, headers: { ...editor, 'if-match': original }, payload: { city: 'Lost' } })
    t.equal(stale.statusCode, 412)
    t.strictSame(stale.json(), {
      code: 'rest-precondition-failed',
      message: 'The record has changed since it was read (If-Match does not match its current ETag).',
      data: { status: 412 },
    })
  }
  const after = await read(1)
  t.strictSame(after.json(), venue(1, 'Hall', { city: 'Wien' }))
  t.equal(after.headers.etag, current)
  const matching = await inject({ method: 'POST', url: `${PATH}/1`, headers: { ...editor, 'if-match': current }, payload: { city: 'Graz' } })
  t.equal(matching.statusCode, 200)
  t.equal(matching.json<Venue>().city, 'Graz')
  t.equal((await inject({ method: 'PATCH', url: `${PATH}/1`, headers: { ...editor, 'if-match': '*' }, payload: {} })).statusCode, 200)
})

t.test('update: a trashed venue is 410 venue-is-in-trash unless the body sets status (restore)', async (t) => {
  const { inject, editor, create, patch, read, list } = await setup(t)
  await create({ venue: 'Hall' })
  await inject({ method: 'DELETE', url: `${PATH}/1`, headers: editor })
  for (const method of ['POST', 'PUT', 'PATCH'] as const) {
    const res = await inject({ method, url: `${PATH}/1`, headers: editor, payload: { city: 'Wien' } })
    t.equal(res.statusCode, 410, method)
    t.strictSame(res.json(), IN_TRASH)
  }
  t.strictSame((await inject({ method: 'PATCH', url: `${PATH}/by-slug/hall`, headers: editor, payload: {} })).json(), IN_TRASH)
  t.equal((await read(1, editor)).json<Venue>().city, null, 'nothing written')
  const restored = await patch(1, { status: 'draft', city: 'Wien' })
  t.equal(restored.statusCode, 200)
  t.strictSame(restored.json(), venue(1, 'Hall', { status: 'draft', city: 'Wien' }))
  t.same(ids(await list('', editor)), [1], 'listed again')
})

t.test('update: ml_language selects the version to change; its language never changes', async (t) => {
  const { inject, editor, create, read } = await setup(t)
  await create({ venue: 'Opera' })
  await create({ venue: 'Oper', ml_language: 'de', translation_of: 1 })
  const viaQuery = await inject({ method: 'PATCH', url: `${PATH}/1?ml_language=de`, headers: editor, payload: { city: 'Wien' } })
  t.equal(viaQuery.statusCode, 200)
  t.equal(viaQuery.json<Venue>().id, 2)
  t.equal(viaQuery.json<Venue>().city, 'Wien')
  t.equal((await read(1)).json<Venue>().city, null)
  const viaBody = await inject({ method: 'PATCH', url: `${PATH}/2`, headers: editor, payload: { city: 'Vienna', ml_language: 'en' } })
  t.equal(viaBody.json<Venue>().id, 1)
  t.equal(viaBody.json<Venue>().ml_language, 'en')
  t.equal(viaBody.json<Venue>().city, 'Vienna')
  expectError(t, await inject({ method: 'PATCH', url: `${PATH}/1`, headers: editor, payload: { ml_language: 'es', city: 'X' } }), 404, 'rest-venue-not-found')
  const bySlug = await inject({ method: 'PATCH', url: `${PATH}/by-slug/oper?ml_language=de`, headers: editor, payload: { zip: '1010' } })
  t.equal(bySlug.json<Venue>().id, 2)
  expectError(t, await inject({ method: 'PATCH', url: `${PATH}/by-slug/oper`, headers: editor, payload: { zip: '1' } }), 404, 'rest-venue-not-found')
})

t.test('update: image by URL, by id, null removes it, invalid is 400', async (t) => {
  const { create, patch } = await setup(t)
  await create({ venue: 'Hall' })
  t.strictSame((await patch(1, { image: 'https://img.example/a.png' })).json<Venue>().image, { id: 1, url: 'https://img.example/a.png' })
  t.strictSame((await patch(1, { city: 'X' })).json<Venue>().image, { id: 1, url: 'https://img.example/a.png' }, 'omitted: kept')
  t.equal((await patch(1, { image: null })).json<Venue>().image, null)
  t.strictSame((await patch(1, { image: 1 })).json<Venue>().image, { id: 1, url: 'https://img.example/a.png' })
  expectError(t, await patch(1, { image: 2 }), 400, 'rest_invalid_param', ['image'])
  expectError(t, await patch(1, { image: 'javascript:alert(1)' }), 400, 'rest_invalid_param', ['image'])
  expectError(t, await patch(1, { image: true }), 400, 'rest_invalid_param', ['image'])
})

t.test('update: a form-urlencoded body; an empty value clears a nullable field', async (t) => {
  const { inject, editor, create } = await setup(t)
  await create({ venue: 'Hall', city: 'Wien', phone: '1' })
  const res = await inject({ method: 'PUT', url: `${PATH}/1`, headers: { ...editor, ...FORM }, payload: 'zip=1010&phone=&show_map=no&show_map_link=false' })
  t.equal(res.statusCode, 200)
  t.strictSame(res.json(), venue(1, 'Hall', { city: 'Wien', zip: '1010', show_map: false, show_map_link: false }))
  expectError(t, await inject({ method: 'PUT', url: `${PATH}/1`, headers: { ...editor, ...FORM }, payload: 'show_map=perhaps' }), 400, 'rest_invalid_param', ['show_map'])
})

t.test('update: date and date_utc move the publication date, and with it the list order', async (t) => {
  const { create, patch, list } = await setup(t)
  await create({ venue: 'A', date: '2026-01-01 00:00:00' })
  await create({ venue: 'B', date: '2026-02-01 00:00:00' })
  t.same(ids(await list('')), [2, 1])
  const moved = await patch(1, { date_utc: '2026-03-01T10:00:00+01:00' })
  t.equal(moved.json<Venue>().date_utc, '2026-03-01 09:00:00')
  t.equal(moved.json<Venue>().date, '2026-03-01 09:00:00')
  t.same(ids(await list('')), [1, 2])
})

// ---------------------------------------------------------------------------------------------- roles

t.test('roles: anonymous writes are 401 and unknown keys too, before the body is checked', async (t) => {
  const { inject, create, read } = await setup(t)
  await create({ venue: 'Hall' })
  const writes = [
    { method: 'POST', url: PATH, payload: { venue: 'X' } },
    { method: 'POST', url: PATH, payload: { colour: 'red' } },
    { method: 'POST', url: `${PATH}/1`, payload: { city: 'X' } },
    { method: 'PUT', url: `${PATH}/1`, payload: { city: 'X' } },
    { method: 'PATCH', url: `${PATH}/1`, payload: { venue: null } },
    { method: 'PATCH', url: `${PATH}/by-slug/hall`, payload: { city: 'X' } },
    { method: 'DELETE', url: `${PATH}/1` },
    { method: 'DELETE', url: `${PATH}/by-slug/hall?force=true` },
    { method: 'PATCH', url: `${PATH}/99`, payload: { city: 'X' } },
  ] as const
  for (const headers of [{}, { authorization: 'Bearer not-a-key' }]) {
    for (const write of writes) {
      const res = await inject({ ...write, headers })
      t.equal(res.statusCode, 401, `${write.method} ${write.url}`)
      t.strictSame(res.json(), FORBIDDEN_401)
    }
  }
  t.strictSame((await read(1)).json(), venue(1, 'Hall'), 'nothing changed')
})

t.test('roles: subscribers may not write (403 rest_forbidden) but read published venues', async (t) => {
  const { inject, create, auth, read } = await setup(t)
  await create({ venue: 'Hall' })
  const subscriber = await auth('subscriber')
  for (const write of [
    { method: 'POST', url: PATH, payload: { venue: 'X' } },
    { method: 'PATCH', url: `${PATH}/1`, payload: { city: 'X' } },
    { method: 'PUT', url: `${PATH}/by-slug/hall`, payload: { city: 'X' } },
    { method: 'DELETE', url: `${PATH}/1` },
  ] as const) {
    const res = await inject({ ...write, headers: subscriber })
    t.equal(res.statusCode, 403, `${write.method} ${write.url}`)
    t.strictSame(res.json(), FORBIDDEN_403)
  }
  t.equal((await read(1, subscriber)).statusCode, 200)
  t.strictSame((await read(1)).json(), venue(1, 'Hall'))
})

t.test('roles: a contributor creates drafts, asking publish stores pending, and it is the author', async (t) => {
  const { create, auth } = await setup(t)
  const contributor = await auth('contributor') // user 2
  t.strictSame(await create({ venue: 'Default' }, contributor), venue(1, 'Default', { author: 2, status: 'draft' }))
  t.equal((await create({ venue: 'Publish', status: 'publish' }, contributor)).status, 'pending')
  t.equal((await create({ venue: 'Pending', status: 'pending' }, contributor)).status, 'pending')
  t.equal((await create({ venue: 'Draft', status: 'draft' }, contributor)).status, 'draft')
  t.equal((await create({ venue: 'Self', author: 2 }, contributor)).author, 2, 'naming itself as author is fine')
})

t.test('roles: a contributor edits and deletes only its own draft or pending venues', async (t) => {
  const { inject, create, auth, patch, read, editor } = await setup(t)
  const contributor = await auth('contributor') // user 2
  const other = await auth('contributor') // user 3
  await create({ venue: 'Own draft' }, contributor)
  await create({ venue: 'Own pending', status: 'pending' }, contributor)
  await create({ venue: 'Own published', author: 2 })
  await create({ venue: 'Others draft' }, other)
  await create({ venue: 'Editors' })

  const draft = await patch(1, { city: 'Wien' }, contributor)
  t.equal(draft.statusCode, 200)
  t.strictSame(draft.json(), venue(1, 'Own draft', { author: 2, status: 'draft', city: 'Wien' }))
  const submitted = await patch(1, { status: 'publish' }, contributor)
  t.equal(submitted.json<Venue>().status, 'pending', 'asking publish stores pending')
  t.equal((await patch(2, { city: 'Graz' }, contributor)).statusCode, 200)
  for (const id of [3, 4, 5]) {
    const res = await patch(id, { city: 'X' }, contributor)
    t.equal(res.statusCode, 403, `venue ${id}`)
    t.strictSame(res.json(), FORBIDDEN_403)
    t.strictSame((await inject({ method: 'DELETE', url: `${PATH}/${id}`, headers: contributor })).json(), FORBIDDEN_403)
    t.equal((await read(id, editor)).json<Venue>().city, null, 'unchanged')
  }
  expectError(t, await patch(1, { author: 3 }, contributor), 403, 'rest_forbidden')
  const deleted = await inject({ method: 'DELETE', url: `${PATH}/2`, headers: contributor })
  t.equal(deleted.statusCode, 200)
  t.equal(deleted.json<Venue>().status, 'trash')
  const restore = await patch(2, { status: 'draft' }, contributor)
  t.equal(restore.statusCode, 403, 'a trashed venue is no longer the contributor\'s to edit')
})

t.test('roles: an author publishes by default and edits only its own venues, whatever their status', async (t) => {
  const { inject, create, auth, patch, read, editor } = await setup(t)
  const author = await auth('author') // user 2
  t.strictSame(await create({ venue: 'Mine' }, author), venue(1, 'Mine', { author: 2 }))
  await create({ venue: 'Mine too', status: 'draft' }, author)
  await create({ venue: 'Not mine' })
  await create({ venue: 'Not mine either', status: 'draft', author: 2 }, editor)
  t.equal((await patch(1, { city: 'Wien' }, author)).statusCode, 200)
  const published = await patch(2, { status: 'publish' }, author)
  t.equal(published.json<Venue>().status, 'publish')
  t.equal((await patch(2, { status: 'private' }, author)).json<Venue>().status, 'private')
  t.equal((await patch(4, { city: 'Linz' }, author)).statusCode, 200, 'assigned to it by an editor: its own')
  t.strictSame((await patch(3, { city: 'X' }, author)).json(), FORBIDDEN_403)
  t.strictSame((await inject({ method: 'DELETE', url: `${PATH}/3`, headers: author })).json(), FORBIDDEN_403)
  t.equal((await read(3)).json<Venue>().city, null)
  expectError(t, await patch(1, { author: 1 }, author), 403, 'rest_forbidden')
  expectError(t, await inject({ method: 'POST', url: PATH, headers: author, payload: { venue: 'Gift', author: 1 } }), 403, 'rest_forbidden')
  t.equal((await inject({ method: 'DELETE', url: `${PATH}/1`, headers: author })).json<Venue>().status, 'trash')
  t.equal((await patch(1, { status: 'publish' }, author)).json<Venue>().status, 'publish', 'an author restores its own')
})

t.test('roles: editors and administrators edit everything and set author to an existing user', async (t) => {
  const { inject, create, auth, patch, editor, list } = await setup(t)
  const author = await auth('author') // user 2
  const admin = await auth('administrator') // user 3
  await create({ venue: 'Authors', status: 'draft' }, author)
  t.equal((await patch(1, { city: 'Wien' })).statusCode, 200)
  t.equal((await patch(1, { city: 'Graz' }, admin)).statusCode, 200)
  const reassigned = await patch(1, { author: 3 })
  t.strictSame(reassigned.json(), venue(1, 'Authors', { author: 3, status: 'draft', city: 'Graz' }))
  t.strictSame((await create({ venue: 'For author', author: 2 }, admin)).author, 2)
  expectError(t, await patch(1, { author: 99 }), 400, 'rest_invalid_param', ['author'])
  expectError(t, await inject({ method: 'POST', url: PATH, headers: editor, payload: { venue: 'Ghost', author: 99 } }), 400, 'rest_invalid_param', ['author'])
  expectError(t, await inject({ method: 'POST', url: PATH, headers: editor, payload: { venue: 'Zero', author: 0 } }), 400, 'rest_invalid_param', ['author'])
  t.equal((await list('', editor)).json().total, 2, 'refused creates created nothing')
  t.equal((await create({ venue: 'Admin' }, admin)).status, 'publish')
  t.equal((await inject({ method: 'DELETE', url: `${PATH}/1`, headers: admin })).statusCode, 200)
})

// -------------------------------------------------------------------------------------------- delete

t.test('delete: moves to the trash (200, status trash), again is 410, force=true deletes for good', async (t) => {
  const clock = new Date(NOW)
  const { inject, editor, create, list } = await setup(t, { now: clock })
  await create({ venue: 'Hall', city: 'Wien' })
  clock.setTime(Date.parse('2026-06-20T09:30:00Z'))
  const trashed = await inject({ method: 'DELETE', url: `${PATH}/1`, headers: editor })
  t.equal(trashed.statusCode, 200)
  const expected = venue(1, 'Hall', { city: 'Wien', status: 'trash', modified: '2026-06-20 09:30:00', modified_utc: '2026-06-20 09:30:00' })
  t.strictSame(trashed.json(), expected)
  t.equal((await list('', editor)).json().total, 0, 'a trashed venue is never listed')
  const again = await inject({ method: 'DELETE', url: `${PATH}/1`, headers: editor })
  t.equal(again.statusCode, 410)
  t.strictSame(again.json(), IN_TRASH)
  expectError(t, await inject({ method: 'DELETE', url: `${PATH}/1?force=false`, headers: editor }), 410, 'venue-is-in-trash')
  const forced = await inject({ method: 'DELETE', url: `${PATH}/1?force=true`, headers: editor })
  t.equal(forced.statusCode, 200)
  t.strictSame(forced.json(), { deleted: true, previous: expected })
  expectError(t, await inject({ url: `${PATH}/1`, headers: editor }), 404, 'rest-venue-not-found')
  expectError(t, await inject({ method: 'DELETE', url: `${PATH}/1?force=true`, headers: editor }), 404, 'rest-venue-not-found')
  t.equal((await create({ venue: 'Next' })).id, 2, 'ids are never reused')
})

t.test('delete: force=true on a live venue deletes it at once; force accepts 1/0 and rejects other values', async (t) => {
  const { inject, editor, create } = await setup(t)
  await create({ venue: 'A' })
  await create({ venue: 'B' })
  const forced = await inject({ method: 'DELETE', url: `${PATH}/1?force=1`, headers: editor })
  t.strictSame(forced.json(), { deleted: true, previous: venue(1, 'A') })
  expectError(t, await inject({ method: 'DELETE', url: `${PATH}/2?force=yes`, headers: editor }), 400, 'rest_invalid_param', ['force'])
  t.equal((await inject({ method: 'DELETE', url: `${PATH}/2?force=0`, headers: editor })).json<Venue>().status, 'trash')
})

t.test('delete: by slug, in the requested language', async (t) => {
  const { inject, editor, create, read } = await setup(t)
  await create({ venue: 'Arena' })
  await create({ venue: 'Arena', ml_language: 'de' })
  const res = await inject({ method: 'DELETE', url: `${PATH}/by-slug/arena?ml_language=de`, headers: editor })
  t.equal(res.statusCode, 200)
  t.strictSame(res.json(), venue(2, 'Arena', { ml_language: 'de', status: 'trash' }))
  t.equal((await read(1)).json<Venue>().status, 'publish')
  expectError(t, await inject({ method: 'DELETE', url: `${PATH}/by-slug/arena?ml_language=de`, headers: editor }), 410, 'venue-is-in-trash')
  const forced = await inject({ method: 'DELETE', url: `${PATH}/by-slug/arena?force=true`, headers: editor })
  t.strictSame(forced.json(), { deleted: true, previous: venue(1, 'Arena') })
  expectError(t, await inject({ method: 'DELETE', url: `${PATH}/by-slug/nowhere`, headers: editor }), 404, 'rest-venue-not-found')
  expectError(t, await inject({ method: 'DELETE', url: `${PATH}/77`, headers: editor }), 404, 'rest-venue-not-found')
})

t.test('delete: force=true unlinks the venue from its events, which stay; trashing keeps the links', async (t) => {
  const { inject, editor, create, db } = await setup(t)
  await create({ venue: 'A' })
  await create({ venue: 'B' })
  const event = await insertLinkedEvent(db, { venues: [1, 2] })
  await inject({ method: 'DELETE', url: `${PATH}/1`, headers: editor })
  t.same((await linkedIds(db, event)).venues, [1, 2], 'trash keeps the link')
  const forced = await inject({ method: 'DELETE', url: `${PATH}/1?force=true`, headers: editor })
  t.equal(forced.statusCode, 200)
  t.same((await linkedIds(db, event)).venues, [2])
  const still = await db.selectFrom('events').select(['id', 'status']).where('id', '=', event).executeTakeFirst()
  t.strictSame(still, { id: event, status: 'publish' }, 'the event is not lost')
})

t.test('delete: a stale If-Match is 412 and nothing changes; a matching one deletes', async (t) => {
  const { inject, editor, create, read, patch } = await setup(t)
  await create({ venue: 'Hall' })
  const original = String((await read(1)).headers.etag)
  await patch(1, { city: 'Wien' })
  for (const url of [`${PATH}/1`, `${PATH}/1?force=true`, `${PATH}/by-slug/hall`]) {
    const res = await inject({ method: 'DELETE', url, headers: { ...editor, 'if-match': original } })
    expectError(t, res, 412, 'rest-precondition-failed')
  }
  t.strictSame((await read(1)).json(), venue(1, 'Hall', { city: 'Wien' }))
  const current = String((await read(1)).headers.etag)
  const res = await inject({ method: 'DELETE', url: `${PATH}/1`, headers: { ...editor, 'if-match': current } })
  t.equal(res.json<Venue>().status, 'trash')
})

// ---------------------------------------------------------------------------------------------- list

t.test('list: an empty result is page 1 with total 0; a page past the last is 404 venue-archive-page-not-found', async (t) => {
  const { list, create } = await setup(t)
  const res = await list('')
  t.equal(res.statusCode, 200)
  t.strictSame(res.json(), { venues: [], rest_url: `${URL}?page=1&per_page=10`, total: 0, total_pages: 0 })
  t.equal(res.headers['x-total'], '0')
  t.equal(res.headers['x-total-pages'], '0')
  t.equal(res.headers.link, undefined)
  t.strictSame((await list('/')).json(), res.json(), 'trailing slash')
  const past = await list('?page=2')
  t.equal(past.statusCode, 404)
  t.strictSame(past.json(), { code: 'venue-archive-page-not-found', message: 'The requested venue archive page does not exist.', data: { status: 404 } })
  await create({ venue: 'A' })
  t.equal((await list('?page=1')).statusCode, 200)
  expectError(t, await list('?page=2'), 404, 'venue-archive-page-not-found')
})

t.test('list: whole records, ordered by date descending then id ascending', async (t) => {
  const { list, create } = await setup(t)
  await create({ venue: 'Old', date: '2025-01-01 00:00:00' })
  await create({ venue: 'Same A', date: '2026-03-01 00:00:00' })
  await create({ venue: 'New', date: '2026-05-01 00:00:00' })
  await create({ venue: 'Same B', date: '2026-03-01 00:00:00' })
  const res = await list('')
  t.equal(res.statusCode, 200)
  const at = (date: string) => ({ date, date_utc: date })
  t.strictSame(res.json(), {
    venues: [
      venue(3, 'New', at('2026-05-01 00:00:00')),
      venue(2, 'Same A', { ...at('2026-03-01 00:00:00'), slug: 'same-a' }),
      venue(4, 'Same B', { ...at('2026-03-01 00:00:00'), slug: 'same-b' }),
      venue(1, 'Old', at('2025-01-01 00:00:00')),
    ],
    rest_url: `${URL}?page=1&per_page=10`,
    total: 4,
    total_pages: 1,
  })
  t.equal(res.headers['x-total'], '4')
  t.equal(res.headers['content-language'], 'en')
})

t.test('list: page and per_page walk the pages with links and headers; per_page is clamped to 50', async (t) => {
  const { list, create } = await setup(t)
  for (let i = 1; i <= 5; i++) await create({ venue: `V${i}`, date: `2026-01-0${i} 00:00:00` })
  const base = `${URL}?page=`
  const first = await list('?per_page=2')
  t.same(ids(first), [5, 4])
  t.strictSame({ ...first.json(), venues: [] }, {
    venues: [], rest_url: `${base}1&per_page=2`, next_rest_url: `${base}2&per_page=2`, total: 5, total_pages: 3,
  })
  t.equal(first.headers.link, `<${base}2&per_page=2>; rel="next"`)
  const second = await list('?per_page=2&page=2')
  t.same(ids(second), [3, 2])
  t.equal(second.json().previous_rest_url, `${base}1&per_page=2`)
  t.equal(second.json().next_rest_url, `${base}3&per_page=2`)
  t.equal(second.headers.link, `<${base}3&per_page=2>; rel="next", <${base}1&per_page=2>; rel="prev"`)
  const last = await list('?per_page=2&page=3')
  t.same(ids(last), [1])
  t.equal(last.json().next_rest_url, undefined)
  t.equal(last.headers.link, `<${base}2&per_page=2>; rel="prev"`)
  t.equal(last.headers['x-total-pages'], '3')
  expectError(t, await list('?per_page=2&page=4'), 404, 'venue-archive-page-not-found')

  for (let i = 6; i <= 52; i++) await create({ venue: `W${i}` })
  t.equal(ids(await list('')).length, 10, 'per_page defaults to 10')
  const clamped = await list('?per_page=500')
  t.equal(ids(clamped).length, 50)
  t.equal(restUrl(clamped), `${URL}?page=1&per_page=50`)
  t.equal(clamped.json().total_pages, 2)
  t.equal(ids(await list('?per_page=51&page=2')).length, 2)
  for (const query of ['?per_page=0', '?per_page=-1', '?per_page=x', '?page=0', '?page=1.5']) {
    expectError(t, await list(query), 400, 'rest_invalid_param', [query.slice(1).split('=')[0] ?? ''])
  }
})

t.test('list: search is a case-insensitive substring over the name, description and address fields', async (t) => {
  const { list, create } = await setup(t)
  const fields = ['venue', 'description', 'address', 'city', 'country', 'province', 'state', 'zip', 'phone', 'stateprovince', 'website'] as const
  for (const [i, field] of fields.entries()) {
    const value = field === 'website' ? 'https://needle.example' : 'xx NeEdLe yy'
    const date = `2026-01-${String(20 - i).padStart(2, '0')} 00:00:00`
    await create(field === 'venue' ? { venue: 'The Needle', date } : { venue: `Venue ${i}`, date, [field]: value })
  }
  await create({ venue: 'Haystack', date: '2025-01-01 00:00:00', description: 'nothing here' })
  const res = await list('?search=NEEDLE&per_page=50')
  t.equal(res.statusCode, 200)
  t.same(ids(res), fields.map((_, i) => i + 1), 'each field matches')
  t.equal(res.json().total, fields.length)
  t.equal(restUrl(res), `${URL}?page=1&per_page=50&search=NEEDLE`)
  t.same(ids(await list('?search=haystack')), [12])
  t.same(ids(await list('?search=opera')), [])
  t.equal((await list('?search=')).json().total, 12, 'an empty search matches everything')
})

t.test('list: search treats %, _ and \\ as plain characters, and folds non-ASCII case', async (t) => {
  const { list, create } = await setup(t)
  await create({ venue: '100% Jazz', date: '2026-01-05 00:00:00' })
  await create({ venue: '100 Jazz', date: '2026-01-04 00:00:00' })
  await create({ venue: 'a_b', date: '2026-01-03 00:00:00' })
  await create({ venue: 'axb', date: '2026-01-02 00:00:00' })
  await create({ venue: 'back\\slash', city: 'ÖSTERREICH', date: '2026-01-01 00:00:00' })
  const percent = await list('?search=%25')
  t.same(ids(percent), [1])
  t.equal(restUrl(percent), `${URL}?page=1&per_page=10&search=%25`)
  t.same(ids(await list('?search=_')), [3])
  t.same(ids(await list('?search=%5C')), [5])
  t.same(ids(await list('?search=%C3%B6sterreich')), [5], 'ö matches Ö')
})

t.test('list: event keeps the venues linked to that event; not an event is 400', async (t) => {
  const { list, create, db, editor } = await setup(t)
  for (const name of ['A', 'B', 'C']) await create({ venue: name })
  const event = await insertLinkedEvent(db, { venues: [3, 1] })
  await insertLinkedEvent(db, { venues: [2] })
  const draftEvent = await insertLinkedEvent(db, { venues: [2] }, { status: 'draft' })
  const res = await list(`?event=${event}`)
  t.equal(res.statusCode, 200)
  t.strictSame(res.json(), {
    venues: [venue(1, 'A'), venue(3, 'C')], rest_url: `${URL}?page=1&per_page=10&event=${event}`, total: 2, total_pages: 1,
  })
  t.same(ids(await list(`?event=${draftEvent}`)), [], 'an event the caller cannot read matches nothing (CONTRACT §6)')
  t.same(ids(await list(`?event=${draftEvent}`, editor)), [2])
  t.same(ids(await list(`?event=${await insertLinkedEvent(db, {})}`)), [])
  expectError(t, await list('?event=999'), 400, 'rest_invalid_param', ['event'])
  expectError(t, await list('?event=abc'), 400, 'rest_invalid_param', ['event'])
  expectError(t, await list('?event=0'), 400, 'rest_invalid_param', ['event'])
})

t.test('list: has_events keeps venues linked to an event the caller may read, never draft, pending or trashed; false the others', async (t) => {
  const { list, create, db, editor } = await setup(t)
  const names = ['Published', 'Private', 'Draft only', 'Pending only', 'Trashed only', 'None', 'Mixed']
  for (const name of names) await create({ venue: name, date: '2026-01-01 00:00:00' })
  await insertLinkedEvent(db, { venues: [1, 7] })
  await insertLinkedEvent(db, { venues: [2] }, { status: 'private' })
  await insertLinkedEvent(db, { venues: [3, 7] }, { status: 'draft' })
  await insertLinkedEvent(db, { venues: [4] }, { status: 'pending' })
  await insertLinkedEvent(db, { venues: [5] }, { status: 'trash' })
  await insertLinkedEvent(db, { venues: [1] }, { start_utc: '2020-01-01 00:00:00', end_utc: '2020-01-01 01:00:00' })
  for (const value of ['true', '1']) {
    const res = await list(`?has_events=${value}`)
    t.equal(res.statusCode, 200)
    t.same(ids(res), [1, 7], `has_events=${value}: an anonymous caller's count leaves the private event out (CONTRACT §6)`)
    t.equal(restUrl(res), `${URL}?page=1&per_page=10&has_events=true`)
    t.same(ids(await list(`?has_events=${value}`, editor)), [1, 2, 7], `has_events=${value}: the editor reads the private event`)
  }
  for (const value of ['false', '0']) {
    t.same(ids(await list(`?has_events=${value}`)), [2, 3, 4, 5, 6], `has_events=${value}`)
    t.same(ids(await list(`?has_events=${value}`, editor)), [3, 4, 5, 6], `has_events=${value}, editor`)
  }
  t.same(ids(await list('')), [1, 2, 3, 4, 5, 6, 7], 'not sent: no filter')
  expectError(t, await list('?has_events=yes'), 400, 'rest_invalid_param', ['has_events'])
})

t.test('list: only_with_upcoming keeps venues linked to an event starting at or after now (injected clock)', async (t) => {
  const clock = new Date(NOW)
  const { list, create, db } = await setup(t, { now: clock })
  for (const name of ['Now', 'Later', 'Past', 'None', 'Draft later']) await create({ venue: name, date: '2026-01-01 00:00:00' })
  await insertLinkedEvent(db, { venues: [1] }, { start_utc: STAMP, end_utc: '2026-06-15 14:00:00' })
  await insertLinkedEvent(db, { venues: [2] }, { start_utc: '2026-08-01 10:00:00', end_utc: '2026-08-01 12:00:00' })
  await insertLinkedEvent(db, { venues: [3] }, { start_utc: '2026-06-15 11:59:59', end_utc: '2026-06-15 18:00:00' })
  await insertLinkedEvent(db, { venues: [5] }, { status: 'draft', start_utc: '2026-08-01 10:00:00', end_utc: '2026-08-01 12:00:00' })
  const upcoming = await list('?only_with_upcoming=true')
  t.equal(upcoming.statusCode, 200)
  t.same(ids(upcoming), [1, 2])
  t.equal(restUrl(upcoming), `${URL}?page=1&per_page=10&only_with_upcoming=true`)
  t.same(ids(await list('?only_with_upcoming=1')), [1, 2])
  t.same(ids(await list('?only_with_upcoming=false')), [1, 2, 3, 4, 5], 'false filters nothing')
  t.same(ids(await list('?only_with_upcoming=0&has_events=true')), [1, 2, 3])
  clock.setTime(Date.parse('2026-06-15T12:00:01Z'))
  t.same(ids(await list('?only_with_upcoming=true')), [2], 'the clock moved past the first event')
  clock.setTime(Date.parse('2027-01-01T00:00:00Z'))
  t.same(ids(await list('?only_with_upcoming=true')), [])
  expectError(t, await list('?only_with_upcoming=soon'), 400, 'rest_invalid_param', ['only_with_upcoming'])
})

t.test('list: a venue linked only to a private event is no venue with events or upcoming ones but for who may read the event (CONTRACT §6)', async (t) => {
  const { list, create, db, auth, editor } = await setup(t)
  const author = await auth('author')
  const other = await auth('author')
  const authorId = (await db.selectFrom('users').select('id').orderBy('id', 'desc').limit(2).execute()).map((u) => u.id)[1]
  await create({ venue: 'Private only', date: '2026-01-01 00:00:00' })
  await create({ venue: 'Open', date: '2026-01-02 00:00:00' })
  await insertLinkedEvent(db, { venues: [1] }, { status: 'private', author: authorId, start_utc: '2026-08-01 10:00:00', end_utc: '2026-08-01 12:00:00' })
  await insertLinkedEvent(db, { venues: [2] }, { start_utc: '2026-08-01 10:00:00', end_utc: '2026-08-01 12:00:00' })
  for (const filter of ['has_events=true', 'only_with_upcoming=true']) {
    t.same(ids(await list(`?${filter}`)), [2], `${filter}: anonymous`)
    t.same(ids(await list(`?${filter}`, other)), [2], `${filter}: another author`)
    t.same(ids(await list(`?${filter}`, author)), [2, 1], `${filter}: the event's own author`)
    t.same(ids(await list(`?${filter}`, editor)), [2, 1], `${filter}: an editor`)
  }
  t.same(ids(await list('?has_events=false')), [1], 'anonymous: the venue has no event it may read')
  // A contributor reads no private event, not even one an editor made its own.
  const contributor = await auth('contributor')
  const contributorId = (await db.selectFrom('users').select('id').orderBy('id', 'desc').limit(1).executeTakeFirstOrThrow()).id
  await create({ venue: 'Contributed', date: '2026-01-03 00:00:00' })
  await insertLinkedEvent(db, { venues: [3] }, { status: 'private', author: contributorId, start_utc: '2026-08-01 10:00:00', end_utc: '2026-08-01 12:00:00' })
  t.same(ids(await list('?has_events=true', contributor)), [2], 'a contributor: its own private event does not count')
  t.same(ids(await list('?has_events=true', editor)), [3, 2, 1], 'the editor: it does')
})

t.test('list: anonymous callers see published venues only; status other than publish is 400', async (t) => {
  const { list, create, auth } = await setup(t)
  await create({ venue: 'Published' })
  await create({ venue: 'Draft', status: 'draft' })
  await create({ venue: 'Pending', status: 'pending' })
  await create({ venue: 'Private', status: 'private' })
  const subscriber = await auth('subscriber')
  for (const headers of [{}, subscriber]) {
    t.same(ids(await list('', headers)), [1])
    t.same(ids(await list('?status=publish', headers)), [1])
    for (const status of ['draft', 'pending', 'private']) {
      const res = await list(`?status=${status}`, headers)
      expectError(t, res, 400, 'rest_invalid_param', ['status'])
    }
  }
  expectError(t, await list('?status=trash'), 400, 'rest_invalid_param', ['status'])
  expectError(t, await list('?status=bogus'), 400, 'rest_invalid_param', ['status'])
})

t.test('list: editors see every non-trash status; status filters; status=trash is 400 for everyone', async (t) => {
  const { list, create, editor, auth, inject } = await setup(t)
  await create({ venue: 'Published' })
  await create({ venue: 'Draft', status: 'draft' })
  await create({ venue: 'Pending', status: 'pending' })
  await create({ venue: 'Private', status: 'private' })
  await create({ venue: 'Trashed' })
  await inject({ method: 'DELETE', url: `${PATH}/5`, headers: editor })
  const admin = await auth('administrator')
  for (const headers of [editor, admin]) {
    t.same(ids(await list('', headers)), [1, 2, 3, 4])
    t.same(ids(await list('?status=draft', headers)), [2])
    t.same(ids(await list('?status=pending', headers)), [3])
    t.same(ids(await list('?status=private', headers)), [4])
    t.same(ids(await list('?status=publish', headers)), [1])
    expectError(t, await list('?status=trash', headers), 400, 'rest_invalid_param', ['status'])
  }
  t.equal(restUrl(await list('?status=draft', editor)), `${URL}?page=1&per_page=10&status=draft`)
})

t.test('list: authors and contributors see published venues plus their own', async (t) => {
  const { list, create, auth } = await setup(t)
  const author = await auth('author') // user 2
  const contributor = await auth('contributor') // user 3
  await create({ venue: 'Published' })
  await create({ venue: 'Editors draft', status: 'draft' })
  await create({ venue: 'Authors draft', status: 'draft' }, author)
  await create({ venue: 'Authors private', status: 'private' }, author)
  await create({ venue: 'Contributors draft' }, contributor)
  await create({ venue: 'Contributors pending', status: 'publish' }, contributor)
  await create({ venue: 'Authors published' }, author)
  t.same(ids(await list('', author)), [1, 3, 4, 7])
  t.same(ids(await list('?status=draft', author)), [3])
  t.same(ids(await list('?status=publish', author)), [1, 7])
  t.same(ids(await list('', contributor)), [1, 5, 6, 7])
  t.same(ids(await list('?status=pending', contributor)), [6])
  t.same(ids(await list('?status=private', contributor)), [])
})

t.test('list: ml_language lists that language only, the default language otherwise', async (t) => {
  const { list, create } = await setup(t)
  await create({ venue: 'Opera', date: '2026-01-01 00:00:00' })
  await create({ venue: 'Oper', ml_language: 'de', translation_of: 1, date: '2026-01-02 00:00:00' })
  await create({ venue: 'Stadion', ml_language: 'de', date: '2026-01-01 00:00:00' })
  const english = await list('')
  t.same(ids(english), [1])
  const german = await list('?ml_language=de')
  t.strictSame(german.json(), {
    venues: [
      venue(2, 'Oper', { ml_language: 'de', translations: { en: 1, de: 2 }, date: '2026-01-02 00:00:00', date_utc: '2026-01-02 00:00:00' }),
      venue(3, 'Stadion', { ml_language: 'de', date: '2026-01-01 00:00:00', date_utc: '2026-01-01 00:00:00' }),
    ],
    rest_url: `${URL}?page=1&per_page=10&ml_language=de`,
    total: 2,
    total_pages: 1,
  })
  t.equal(german.headers['content-language'], 'de')
  t.same(ids(await list('?ml_language=es')), [])
  expectError(t, await list('?ml_language=fr'), 400, 'rest_invalid_param', ['ml_language'])
})

t.test('list: the default language comes from the configuration', async (t) => {
  const { list, create } = await setup(t, { config: { defaultLanguage: 'de' } })
  await create({ venue: 'Halle' })
  await create({ venue: 'Hall', ml_language: 'en' })
  t.strictSame((await list('')).json<{ venues: Venue[] }>().venues, [venue(1, 'Halle', { ml_language: 'de' })])
  t.same(ids(await list('?ml_language=en')), [2])
})

t.test('list: every parameter combined; rest_url carries each one sent; unknown parameters are ignored', async (t) => {
  const { list, create, db, editor } = await setup(t)
  await create({ venue: 'Jazz Hall', status: 'draft' })
  await create({ venue: 'Jazz Club', status: 'draft' })
  await create({ venue: 'Rock Hall', status: 'draft' })
  const event = await insertLinkedEvent(db, { venues: [1, 2, 3] })
  const query = `?search=jazz&event=${event}&has_events=true&only_with_upcoming=true&status=draft&ml_language=en&per_page=1&page=2&colour=red`
  const res = await list(query, editor)
  t.equal(res.statusCode, 200)
  const rest = `search=jazz&event=${event}&has_events=true&only_with_upcoming=true&status=draft&ml_language=en`
  t.strictSame(res.json(), {
    venues: [venue(2, 'Jazz Club', { status: 'draft' })],
    rest_url: `${URL}?page=2&per_page=1&${rest}`,
    previous_rest_url: `${URL}?page=1&per_page=1&${rest}`,
    total: 2,
    total_pages: 2,
  })
  t.equal(res.headers.link, `<${URL}?page=1&per_page=1&${rest}>; rel="prev"`)
  t.equal(restUrl(await list('?search=a%20b%26c')), `${URL}?page=1&per_page=10&search=a%20b%26c`, 'values are URL-encoded')
})
