/**
 * /organizers, /organizers/{id} and /organizers/by-slug/{slug} (source §2.3, §4.8; CONTRACT §2, §3, §5, §6,
 * §7, §10).
 */
import t from 'tap'
import type { Schema } from '../src/contract.js'
import { API, NOW } from './helpers/build.js'
import { expectError } from './helpers/errors.js'
import { linkedCreateTests, linkedTools } from './helpers/linked.js'
import { insertLinkedEvent, linkedIds } from './helpers/links.js'

type Organizer = Schema<'Organizer'>

const { PATH, URL, setup, FORBIDDEN_401, FORBIDDEN_403, NOT_ACCESSIBLE, IN_TRASH, ids, restUrl } = linkedTools<Organizer>({ collection: 'organizers', resource: 'organizer' })
/** NOW as stored: the site time zone is UTC unless a test says otherwise. */
const STAMP = '2026-06-15 12:00:00'
const FORM = { 'content-type': 'application/x-www-form-urlencoded' }

const KEYS = [
  'id', 'author', 'status', 'date', 'date_utc', 'modified', 'modified_utc', 'rest_url', 'organizer', 'description', 'slug',
  'image', 'phone', 'website', 'email', 'ml_language', 'translations',
]

/** The record the server must return for an organizer created by user 1 at NOW; every field overridable. */
function organizer(id: number, name: string, fields: Partial<Organizer> = {}): Organizer {
  const language = fields.ml_language ?? 'en'
  return {
    id, author: 1, status: 'publish', date: STAMP, date_utc: STAMP, modified: STAMP, modified_utc: STAMP,
    rest_url: `${URL}/${id}`, organizer: name, description: null, slug: name.toLowerCase().replace(/[^a-z0-9]+/g, '-'),
    image: null, phone: null, website: null, email: null, ml_language: language, translations: { [language]: id }, ...fields,
  }
}

linkedCreateTests<Organizer>({ collection: 'organizers', resource: 'organizer', keys: KEYS, record: (id, name) => organizer(id, name), sample: 'City Orchestra', withoutName: { phone: '123' }, invalidNames: [7] })

// -------------------------------------------------------------------------------------------- create

t.test('create: every field of source §2.3 is stored and returned as written', async (t) => {
  const { create, read, editor } = await setup(t)
  const body = {
    organizer: '  Wiener Konzerthaus  ',
    description: 'Concerts <i>since</i> 1913 &amp; more',
    phone: '+43 1 242 002',
    website: 'https://konzerthaus.example/en?x=1',
    email: 'Tickets+Info@konzerthaus.example',
    image: 'https://img.example/kh.png',
    slug: 'Konzerthaus Wien',
    status: 'pending',
    date_utc: '2026-05-01T08:30:00Z',
  }
  const created = await create(body)
  const expected = organizer(1, '  Wiener Konzerthaus  ', {
    status: 'pending', date: '2026-05-01 08:30:00', date_utc: '2026-05-01 08:30:00', description: 'Concerts <i>since</i> 1913 &amp; more',
    slug: 'konzerthaus-wien', image: { id: 1, url: 'https://img.example/kh.png' }, phone: '+43 1 242 002',
    website: 'https://konzerthaus.example/en?x=1', email: 'Tickets+Info@konzerthaus.example',
  })
  t.strictSame(created, expected)
  t.strictSame((await read(1, editor)).json(), expected)
})

t.test('create: unknown fields, venue fields included, are 400 naming each of them', async (t) => {
  const { inject, editor, list } = await setup(t)
  const res = await inject({ method: 'POST', url: PATH, headers: editor, payload: { organizer: 'Org', colour: 'red', size: 3 } })
  expectError(t, res, 400, 'rest_invalid_param', ['colour', 'size'])
  for (const field of ['id', 'venue', 'city', 'address', 'show_map', 'geo_lat', 'translations']) {
    expectError(t, await inject({ method: 'POST', url: PATH, headers: editor, payload: { organizer: 'Org', [field]: 1 } }), 400, 'rest_invalid_param', [field])
  }
  t.equal((await list('', editor)).json().total, 0)
})

t.test('create: venue geo fields on an organizer are unknown fields even with the geolocation extension on', async (t) => {
  const { inject, editor } = await setup(t, { config: { extensions: new Set(['geoloc']) } })
  const res = await inject({ method: 'POST', url: PATH, headers: editor, payload: { organizer: 'Org', geo_lat: 1, geo_lng: 2 } })
  expectError(t, res, 400, 'rest_invalid_param', ['geo_lat', 'geo_lng'])
})

t.test('create: website must be an absolute http(s) URL, else 400 naming website', async (t) => {
  const { create, inject, editor, list } = await setup(t)
  for (const website of ['not a url', 'ftp://files.example/', 'mailto:a@b.example', '/relative/path', 'http://']) {
    expectError(t, await inject({ method: 'POST', url: PATH, headers: editor, payload: { organizer: 'Org', website } }), 400, 'rest_invalid_param', ['website'])
  }
  t.equal((await list('', editor)).json().total, 0, 'nothing created')
  t.equal((await create({ organizer: 'A', website: 'http://a.example' })).website, 'http://a.example')
  t.equal((await create({ organizer: 'B', website: null })).website, null)
})

t.test('create: email must be an e-mail address, else 400 naming email', async (t) => {
  const { create, inject, editor, list } = await setup(t)
  for (const email of ['not-an-email', 'a b@c.example', '@org.example', 'info@', 'info@org', 'a@@b.example', 'info@org.example extra']) {
    expectError(t, await inject({ method: 'POST', url: PATH, headers: editor, payload: { organizer: 'Org', email } }), 400, 'rest_invalid_param', ['email'])
  }
  t.equal((await list('', editor)).json().total, 0, 'nothing created')
  t.equal((await create({ organizer: 'A', email: 'info@org.example' })).email, 'info@org.example')
  t.equal((await create({ organizer: 'B', email: 'First.Last+tag@sub.org.example' })).email, 'First.Last+tag@sub.org.example')
  t.equal((await create({ organizer: 'C', email: null })).email, null)
  const form = await inject({ method: 'POST', url: PATH, headers: { ...editor, ...FORM }, payload: 'organizer=D&email=nope' })
  expectError(t, form, 400, 'rest_invalid_param', ['email'])
})

t.test('create: date (site time) and date_utc (UTC) set the publication date; invalid is 400 naming it', async (t) => {
  const { create, inject, editor } = await setup(t, { config: { timezone: 'America/New_York' } })
  const modified = { modified: '2026-06-15 08:00:00', modified_utc: STAMP }
  const wall = await create({ organizer: 'Wall', date: '2026-01-02 03:04:05' })
  t.strictSame(wall, organizer(1, 'Wall', { date: '2026-01-02 03:04:05', date_utc: '2026-01-02 08:04:05', ...modified }))
  const utc = await create({ organizer: 'Utc', date_utc: '2026-07-01 10:00:00' })
  t.equal(utc.date, '2026-07-01 06:00:00')
  t.equal(utc.date_utc, '2026-07-01 10:00:00')
  const offset = await create({ organizer: 'Offset', date: '2026-03-01T10:00:00+01:00' })
  t.equal(offset.date_utc, '2026-03-01 09:00:00')
  t.equal(offset.date, '2026-03-01 04:00:00')
  const none = await create({ organizer: 'None' })
  t.equal(none.date, '2026-06-15 08:00:00', 'now in the site time zone')
  t.equal(none.date_utc, STAMP)
  expectError(t, await inject({ method: 'POST', url: PATH, headers: editor, payload: { organizer: 'Bad', date: '01/02/2026' } }), 400, 'rest_invalid_param', ['date'])
  expectError(t, await inject({ method: 'POST', url: PATH, headers: editor, payload: { organizer: 'Bad', date_utc: 'yesterday' } }), 400, 'rest_invalid_param', ['date_utc'])
})

t.test('create: image by URL becomes {id, url}; by the id of an existing image; anything else is 400', async (t) => {
  const { create, inject, editor, list } = await setup(t)
  const first = await create({ organizer: 'A', image: 'https://img.example/a.png' })
  t.strictSame(first.image, { id: 1, url: 'https://img.example/a.png' })
  t.strictSame((await create({ organizer: 'B', image: 1 })).image, { id: 1, url: 'https://img.example/a.png' })
  t.equal((await create({ organizer: 'C', image: null })).image, null)
  for (const image of [99, 'not a url', 'ftp://img.example/a.png', 0]) {
    expectError(t, await inject({ method: 'POST', url: PATH, headers: editor, payload: { organizer: 'Bad', image } }), 400, 'rest_invalid_param', ['image'])
  }
  t.equal((await list('', editor)).json().total, 3)
  // Images are shared records: one created through a venue can be named by an organizer.
  const venue = await inject({ method: 'POST', url: `${API}/venues`, headers: editor, payload: { venue: 'Hall', image: 'https://img.example/v.png' } })
  t.strictSame(venue.json().image, { id: 2, url: 'https://img.example/v.png' })
  t.strictSame((await create({ organizer: 'D', image: 2 })).image, { id: 2, url: 'https://img.example/v.png' })
})

t.test('create: the slug is made from the name, unique per language; an explicit slug is normalised', async (t) => {
  const { create } = await setup(t)
  t.equal((await create({ organizer: 'Señor Müller & Søn' })).slug, 'senor-mueller-son')
  t.equal((await create({ organizer: 'Jazz Friends' })).slug, 'jazz-friends')
  t.equal((await create({ organizer: 'jazz friends' })).slug, 'jazz-friends-2')
  t.equal((await create({ organizer: '???' })).slug, 'organizer-4', 'nothing left of the name: <singular>-<id>')
  t.equal((await create({ organizer: 'Jazz Friends', ml_language: 'es' })).slug, 'jazz-friends', 'another language has its own slugs')
  t.equal((await create({ organizer: 'X', slug: 'Jazz  Friends ' })).slug, 'jazz-friends-3', 'a given slug is normalised and made unique')
  t.equal((await create({ organizer: 'Y', slug: 'Own--Slug' })).slug, 'own-slug')
})

t.test('create: slugs of organizers and venues are separate', async (t) => {
  const { create, inject, editor } = await setup(t)
  const venue = await inject({ method: 'POST', url: `${API}/venues`, headers: editor, payload: { venue: 'Philharmonie' } })
  t.equal(venue.json().slug, 'philharmonie')
  t.equal((await create({ organizer: 'Philharmonie' })).slug, 'philharmonie')
})

t.test('create: ml_language in the body, in the query, and both (the body wins)', async (t) => {
  const { create, inject, editor } = await setup(t)
  t.strictSame(await create({ organizer: 'Verein', ml_language: 'ch-de' }), organizer(1, 'Verein', { ml_language: 'ch-de' }))
  t.strictSame(await create({ organizer: 'Asociación' }, editor, '?ml_language=es'), organizer(2, 'Asociación', { ml_language: 'es', slug: 'asociacion' }))
  t.equal((await create({ organizer: 'Association', ml_language: 'ch-fr' }, editor, '?ml_language=es')).ml_language, 'ch-fr')
  expectError(t, await inject({ method: 'POST', url: PATH, headers: editor, payload: { organizer: 'Org', ml_language: '' } }), 400, 'rest_invalid_param', ['ml_language'])
})

t.test('create: translation_of joins a translation group, one record per language', async (t) => {
  const { create, inject, editor, read } = await setup(t)
  await create({ organizer: 'Friends of Music' })
  const german = await create({ organizer: 'Musikfreunde', ml_language: 'de', translation_of: 1 })
  t.strictSame(german, organizer(2, 'Musikfreunde', { ml_language: 'de', translations: { en: 1, de: 2 } }))
  t.strictSame((await read(1)).json<Organizer>().translations, { en: 1, de: 2 })
  expectError(t, await inject({ method: 'POST', url: PATH, headers: editor, payload: { organizer: 'Again', ml_language: 'de', translation_of: 1 } }), 400, 'rest_invalid_param', ['translation_of'])
  expectError(t, await inject({ method: 'POST', url: PATH, headers: editor, payload: { organizer: 'Self', translation_of: 1 } }), 400, 'rest_invalid_param', ['translation_of'])
  expectError(t, await inject({ method: 'POST', url: PATH, headers: editor, payload: { organizer: 'Nada', ml_language: 'es', translation_of: 42 } }), 400, 'rest_invalid_param', ['translation_of'])
  const venue = await inject({ method: 'POST', url: `${API}/venues`, headers: editor, payload: { venue: 'Hall' } })
  t.equal(venue.json().id, 1)
  const spanish = await create({ organizer: 'Amigos', ml_language: 'es', translation_of: 1 })
  t.strictSame(spanish.translations, { en: 1, de: 2, es: 3 }, 'translation_of names an organizer, not the venue with that id')
})

t.test('create: a form-urlencoded body works like JSON', async (t) => {
  const { inject, editor } = await setup(t)
  const res = await inject({
    method: 'POST', url: PATH, headers: { ...editor, ...FORM },
    payload: 'organizer=Jazz+Friends&email=jazz%40friends.example&phone=%2B1+555&website=https%3A%2F%2Fjazz.example&status=draft&ml_language=at&description=&image=',
  })
  t.equal(res.statusCode, 201)
  t.strictSame(res.json(), organizer(1, 'Jazz Friends', {
    email: 'jazz@friends.example', phone: '+1 555', website: 'https://jazz.example', status: 'draft', ml_language: 'at',
  }))
  t.equal(res.headers['content-language'], 'at')
  expectError(t, await inject({ method: 'POST', url: PATH, headers: { ...editor, ...FORM }, payload: 'phone=1' }), 400, 'rest_missing_callback_param', ['organizer'])
})

// ---------------------------------------------------------------------------------------------- read

t.test('read: by id and by slug, 200 with the record and the same ETag', async (t) => {
  const { inject, create } = await setup(t)
  await create({ organizer: 'Jazz Friends', email: 'a@b.example' })
  const byId = await inject({ url: `${PATH}/1` })
  t.equal(byId.statusCode, 200)
  t.strictSame(byId.json(), organizer(1, 'Jazz Friends', { email: 'a@b.example' }))
  t.match(byId.headers.etag, /^"[^"]+"$/)
  const bySlug = await inject({ url: `${PATH}/by-slug/jazz-friends` })
  t.strictSame(bySlug.json(), organizer(1, 'Jazz Friends', { email: 'a@b.example' }))
  t.equal(bySlug.headers.etag, byId.headers.etag)
  t.equal((await inject({ url: `${PATH}/by-slug/jazz-friends/` })).statusCode, 200)
})

t.test('read: unknown id or slug is 404 rest-organizer-not-found (a venue is not an organizer)', async (t) => {
  const { inject, editor } = await setup(t)
  const byId = await inject({ url: `${PATH}/42` })
  t.strictSame(byId.json(), { code: 'rest-organizer-not-found', message: 'Organizer with ID 42 does not exist.', data: { status: 404 } })
  t.equal(byId.statusCode, 404)
  const bySlug = await inject({ url: `${PATH}/by-slug/nobody` })
  t.strictSame(bySlug.json(), { code: 'rest-organizer-not-found', message: 'Organizer with slug "nobody" does not exist.', data: { status: 404 } })
  await inject({ method: 'POST', url: `${API}/venues`, headers: editor, payload: { venue: 'Hall' } })
  expectError(t, await inject({ url: `${PATH}/1` }), 404, 'rest-organizer-not-found')
  expectError(t, await inject({ url: `${PATH}/by-slug/hall` }), 404, 'rest-organizer-not-found')
  expectError(t, await inject({ url: `${PATH}/x1` }), 404, 'rest_no_route')
})

t.test('read: If-None-Match with the current ETag is 304; after a change it is 200 with a new ETag', async (t) => {
  const { inject, create, patch } = await setup(t)
  await create({ organizer: 'Org' })
  const etag = String((await inject({ url: `${PATH}/1` })).headers.etag)
  for (const url of [`${PATH}/1`, `${PATH}/by-slug/org`]) {
    const res = await inject({ url, headers: { 'if-none-match': etag } })
    t.equal(res.statusCode, 304, url)
    t.equal(res.body, '')
    t.equal(res.headers.etag, etag)
  }
  t.equal((await inject({ url: `${PATH}/1`, headers: { 'if-none-match': '*' } })).statusCode, 304)
  const updated = await patch(1, { phone: '1' })
  t.not(updated.headers.etag, etag)
  const changed = await inject({ url: `${PATH}/1`, headers: { 'if-none-match': etag } })
  t.equal(changed.statusCode, 200)
  t.equal(changed.headers.etag, updated.headers.etag)
})

t.test('read: ml_language on a by-id read gives that language\'s version; by slug looks in that language', async (t) => {
  const { inject, create } = await setup(t)
  await create({ organizer: 'Friends' })
  await create({ organizer: 'Freunde', ml_language: 'de', translation_of: 1 })
  await create({ organizer: 'Friends', ml_language: 'at' })
  const german = await inject({ url: `${PATH}/1?ml_language=de` })
  t.strictSame(german.json(), organizer(2, 'Freunde', { ml_language: 'de', translations: { en: 1, de: 2 } }))
  t.equal(german.headers['content-language'], 'de')
  t.equal((await inject({ url: `${PATH}/2` })).json<Organizer>().id, 2)
  expectError(t, await inject({ url: `${PATH}/1?ml_language=at` }), 404, 'rest-organizer-not-found')
  t.equal((await inject({ url: `${PATH}/by-slug/friends` })).json<Organizer>().id, 1)
  t.equal((await inject({ url: `${PATH}/by-slug/friends?ml_language=at` })).json<Organizer>().id, 3)
  expectError(t, await inject({ url: `${PATH}/by-slug/freunde` }), 404, 'rest-organizer-not-found')
  t.equal((await inject({ url: `${PATH}/by-slug/freunde?ml_language=de` })).json<Organizer>().id, 2)
})

t.test('read: a non-published organizer is 403 organizer-not-accessible to those who may not edit it', async (t) => {
  const { inject, create, auth, editor } = await setup(t)
  const author = await auth('author') // user 2
  const others = [{}, await auth('author'), await auth('contributor'), await auth('subscriber')]
  await create({ organizer: 'Draft', status: 'draft' }, author)
  await create({ organizer: 'Pending', status: 'pending' }, author)
  await create({ organizer: 'Private', status: 'private' }, author)
  for (const id of [1, 2, 3]) {
    for (const headers of others) {
      const res = await inject({ url: `${PATH}/${id}`, headers })
      t.equal(res.statusCode, 403)
      t.strictSame(res.json(), NOT_ACCESSIBLE)
    }
    t.equal((await inject({ url: `${PATH}/${id}`, headers: author })).statusCode, 200)
    t.equal((await inject({ url: `${PATH}/${id}`, headers: editor })).statusCode, 200)
  }
  t.strictSame((await inject({ url: `${PATH}/by-slug/private` })).json(), NOT_ACCESSIBLE)
})

t.test('read: a trashed organizer is 403 to those who cannot edit it, 200 with status trash to those who can', async (t) => {
  const { inject, create, auth, editor } = await setup(t)
  await create({ organizer: 'Gone' })
  t.equal((await inject({ method: 'DELETE', url: `${PATH}/1`, headers: editor })).statusCode, 200)
  for (const headers of [{}, await auth('author'), await auth('subscriber')]) {
    t.strictSame((await inject({ url: `${PATH}/1`, headers })).json(), NOT_ACCESSIBLE)
    t.strictSame((await inject({ url: `${PATH}/by-slug/gone`, headers })).json(), NOT_ACCESSIBLE)
  }
  for (const headers of [editor, await auth('administrator')]) {
    const res = await inject({ url: `${PATH}/1`, headers })
    t.equal(res.statusCode, 200)
    t.strictSame(res.json(), organizer(1, 'Gone', { status: 'trash' }))
  }
})

// -------------------------------------------------------------------------------------------- update

for (const method of ['POST', 'PUT', 'PATCH'] as const) {
  t.test(`update (${method}): partial by id and by slug, omitted fields keep their value, a new ETag`, async (t) => {
    const clock = new Date(NOW)
    const { inject, editor, create } = await setup(t, { now: clock })
    await create({ organizer: 'Org', phone: '1', email: 'a@org.example', description: 'Old' })
    const before = await inject({ url: `${PATH}/1` })
    clock.setTime(Date.parse('2026-06-16T08:00:00Z'))
    const res = await inject({ method, url: `${PATH}/1`, headers: editor, payload: { organizer: 'New Org', phone: '2' } })
    t.equal(res.statusCode, 200)
    const expected = organizer(1, 'New Org', {
      slug: 'org', phone: '2', email: 'a@org.example', description: 'Old', modified: '2026-06-16 08:00:00', modified_utc: '2026-06-16 08:00:00',
    })
    t.strictSame(res.json(), expected, 'the name changes, the slug does not; modified moves on')
    t.not(res.headers.etag, before.headers.etag)
    t.strictSame((await inject({ url: `${PATH}/1` })).json(), expected)
    const bySlug = await inject({ method, url: `${PATH}/by-slug/org`, headers: editor, payload: { website: 'https://org.example' } })
    t.equal(bySlug.statusCode, 200)
    t.strictSame(bySlug.json(), { ...expected, website: 'https://org.example' })
    t.equal(bySlug.headers.etag, (await inject({ url: `${PATH}/1` })).headers.etag)
  })
}

t.test('update: every field can be changed; null clears nullable fields; an empty body changes nothing else', async (t) => {
  const { create, patch, read, editor } = await setup(t)
  await create({ organizer: 'Org', description: 'D', phone: 'P', website: 'https://w.example', email: 'e@w.example', image: 'https://img.example/a.png' })
  const changed = await patch(1, {
    organizer: 'Org 2', description: 'D2', phone: 'P2', website: 'http://w2.example', email: 'e2@w2.example', image: 'https://img.example/b.png',
    status: 'private', date: '2026-01-01 00:00:00', slug: 'org-two',
  })
  t.equal(changed.statusCode, 200)
  t.strictSame(changed.json(), organizer(1, 'Org 2', {
    description: 'D2', phone: 'P2', website: 'http://w2.example', email: 'e2@w2.example', image: { id: 2, url: 'https://img.example/b.png' },
    status: 'private', date: '2026-01-01 00:00:00', date_utc: '2026-01-01 00:00:00', slug: 'org-two',
  }))
  const cleared = await patch(1, { description: null, phone: null, website: null, email: null, image: null })
  const expected = organizer(1, 'Org 2', { status: 'private', date: '2026-01-01 00:00:00', date_utc: '2026-01-01 00:00:00', slug: 'org-two' })
  t.strictSame(cleared.json(), expected)
  const blank = await patch(1, { phone: '', description: '' })
  t.strictSame(blank.json(), expected, 'an empty string is no value: null')
  const empty = await patch(1, {})
  t.equal(empty.statusCode, 200)
  t.strictSame(empty.json(), expected)
  t.equal(empty.headers.etag, blank.headers.etag, 'nothing changed: the same ETag (CONTRACT §5)')
  t.strictSame((await read(1, editor)).json(), expected)
})

t.test('update: bad values are 400 naming the field and write nothing', async (t) => {
  const { create, patch, read } = await setup(t)
  await create({ organizer: 'Org', phone: '1' })
  const etag = (await read(1)).headers.etag
  expectError(t, await patch(1, { organizer: null, phone: '2' }), 400, 'rest_invalid_param', ['organizer'])
  expectError(t, await patch(1, { phone: '2', email: 'nope' }), 400, 'rest_invalid_param', ['email'])
  expectError(t, await patch(1, { phone: '2', email: 'a@b' }), 400, 'rest_invalid_param', ['email'])
  expectError(t, await patch(1, { phone: '2', website: 'ftp://x.example' }), 400, 'rest_invalid_param', ['website'])
  expectError(t, await patch(1, { phone: '2', image: 5 }), 400, 'rest_invalid_param', ['image'])
  expectError(t, await patch(1, { phone: '2', date_utc: 'soon' }), 400, 'rest_invalid_param', ['date_utc'])
  expectError(t, await patch(1, { phone: '2', status: 'trash' }), 400, 'rest_invalid_param', ['status'])
  expectError(t, await patch(1, { phone: '2', author: 'me' }), 400, 'rest_invalid_param', ['author'])
  expectError(t, await patch(1, { phone: '2', city: 'Wien' }), 400, 'rest_invalid_param', ['city'])
  const after = await read(1)
  t.strictSame(after.json(), organizer(1, 'Org', { phone: '1' }))
  t.equal(after.headers.etag, etag, 'nothing was written')
})

t.test('update: a bad field is 400 before the lookup (unknown id) and before If-Match', async (t) => {
  const { create, patch, inject, editor, read } = await setup(t)
  await create({ organizer: 'Org' })
  expectError(t, await patch(99, { email: 'a@b' }), 400, 'rest_invalid_param', ['email'])
  expectError(t, await patch(99, { website: 'ftp://x.example' }), 400, 'rest_invalid_param', ['website'])
  expectError(t, await patch(99, { image: 'nope' }), 400, 'rest_invalid_param', ['image'])
  expectError(t, await patch(99, { author: 99 }), 400, 'rest_invalid_param', ['author'])
  expectError(t, await patch(99, { phone: '1' }), 404, 'rest-organizer-not-found')
  const stale = await inject({ method: 'PATCH', url: `${PATH}/1`, headers: { ...editor, 'if-match': '"stale"' }, payload: { email: 'a@b' } })
  expectError(t, stale, 400, 'rest_invalid_param', ['email'])
  t.strictSame((await read(1)).json(), organizer(1, 'Org'))
})

t.test('update: the slug is renamed by an explicit slug and kept unique; renaming keeps it', async (t) => {
  const { create, patch, inject, editor } = await setup(t)
  await create({ organizer: 'Org' })
  await create({ organizer: 'Other' })
  t.equal((await patch(1, { slug: 'The Org' })).json<Organizer>().slug, 'the-org')
  t.equal((await inject({ url: `${PATH}/by-slug/the-org` })).json<Organizer>().id, 1)
  expectError(t, await inject({ url: `${PATH}/by-slug/org` }), 404, 'rest-organizer-not-found')
  t.equal((await patch(2, { slug: 'the-org' })).json<Organizer>().slug, 'the-org-2')
  t.equal((await patch(1, { organizer: 'Renamed' })).json<Organizer>().slug, 'the-org')
  const bySlug = await inject({ method: 'PUT', url: `${PATH}/by-slug/the-org-2`, headers: editor, payload: { slug: 'Other Org' } })
  t.equal(bySlug.json<Organizer>().slug, 'other-org', 'renamed through its slug route')
})

t.test('update: a stale If-Match is 412 rest-precondition-failed and nothing is written', async (t) => {
  const { inject, editor, create, read } = await setup(t)
  await create({ organizer: 'Org' })
  const original = String((await read(1)).headers.etag)
  const first = await inject({ method: 'PUT', url: `${PATH}/1`, headers: { ...editor, 'if-match': original }, payload: { phone: '1' } })
  t.equal(first.statusCode, 200)
  const current = String(first.headers.etag)
  for (const url of [`${PATH}/1`, `${PATH}/by-slug/org`]) {
    const stale = await inject({ method: 'PATCH', url, headers: { ...editor, 'if-match': original }, payload: { phone: 'lost', image: 'https://img.example/x.png' } })
    t.equal(stale.statusCode, 412)
    t.strictSame(stale.json(), {
      code: 'rest-precondition-failed',
      message: 'The record has changed since it was read (If-Match does not match its current ETag).',
      data: { status: 412 },
    })
  }
  const after = await read(1)
  t.strictSame(after.json(), organizer(1, 'Org', { phone: '1' }))
  t.equal(after.headers.etag, current)
  const withImage = await inject({ method: 'POST', url: `${PATH}/1`, headers: { ...editor, 'if-match': current }, payload: { image: 'https://img.example/y.png' } })
  t.strictSame(withImage.json<Organizer>().image, { id: 1, url: 'https://img.example/y.png' }, 'the refused writes created no image')
})

t.test('update: a trashed organizer is 410 organizer-is-in-trash unless the body sets status (restore)', async (t) => {
  const { inject, editor, create, patch, list } = await setup(t)
  await create({ organizer: 'Org' })
  await inject({ method: 'DELETE', url: `${PATH}/by-slug/org`, headers: editor })
  for (const method of ['POST', 'PUT', 'PATCH'] as const) {
    const res = await inject({ method, url: `${PATH}/1`, headers: editor, payload: { phone: '1' } })
    t.equal(res.statusCode, 410, method)
    t.strictSame(res.json(), IN_TRASH)
  }
  const restored = await patch(1, { status: 'publish' })
  t.strictSame(restored.json(), organizer(1, 'Org'))
  t.same(ids(await list('')), [1])
})

t.test('update: ml_language selects the version to change', async (t) => {
  const { inject, editor, create, read } = await setup(t)
  await create({ organizer: 'Friends' })
  await create({ organizer: 'Freunde', ml_language: 'de', translation_of: 1 })
  const res = await inject({ method: 'PATCH', url: `${PATH}/1`, headers: editor, payload: { ml_language: 'de', phone: '1' } })
  t.equal(res.json<Organizer>().id, 2)
  t.equal(res.json<Organizer>().ml_language, 'de')
  t.equal((await read(1)).json<Organizer>().phone, null)
  expectError(t, await inject({ method: 'PATCH', url: `${PATH}/1?ml_language=es`, headers: editor, payload: { phone: '1' } }), 404, 'rest-organizer-not-found')
})

t.test('update: a form-urlencoded body; an empty value clears a nullable field', async (t) => {
  const { inject, editor, create } = await setup(t)
  await create({ organizer: 'Org', phone: '1', email: 'a@org.example' })
  const res = await inject({ method: 'POST', url: `${PATH}/1`, headers: { ...editor, ...FORM }, payload: 'email=&website=https%3A%2F%2Forg.example&image=https%3A%2F%2Fimg.example%2Fo.png' })
  t.equal(res.statusCode, 200)
  t.strictSame(res.json(), organizer(1, 'Org', { phone: '1', website: 'https://org.example', image: { id: 1, url: 'https://img.example/o.png' } }))
  const byId = await inject({ method: 'POST', url: `${PATH}/1`, headers: { ...editor, ...FORM }, payload: 'image=' })
  t.equal(byId.json<Organizer>().image, null)
})

// ---------------------------------------------------------------------------------------------- roles

t.test('roles: anonymous writes are 401 and unknown keys too, before the body is checked', async (t) => {
  const { inject, create, read } = await setup(t)
  await create({ organizer: 'Org' })
  const writes = [
    { method: 'POST', url: PATH, payload: { organizer: 'X' } },
    { method: 'POST', url: PATH, payload: { colour: 'red' } },
    { method: 'POST', url: `${PATH}/1`, payload: { phone: 'X' } },
    { method: 'PUT', url: `${PATH}/by-slug/org`, payload: { phone: 'X' } },
    { method: 'PATCH', url: `${PATH}/1`, payload: { email: 'bad' } },
    { method: 'DELETE', url: `${PATH}/1?force=true` },
    { method: 'DELETE', url: `${PATH}/by-slug/org` },
  ] as const
  for (const headers of [{}, { authorization: 'Bearer not-a-key' }, { authorization: 'Basic abc' }]) {
    for (const write of writes) {
      const res = await inject({ ...write, headers })
      t.equal(res.statusCode, 401, `${write.method} ${write.url}`)
      t.strictSame(res.json(), FORBIDDEN_401)
    }
  }
  t.strictSame((await read(1)).json(), organizer(1, 'Org'), 'nothing changed')
})

t.test('roles: subscribers may not write (403 rest_forbidden)', async (t) => {
  const { inject, create, auth, read } = await setup(t)
  await create({ organizer: 'Org' })
  const subscriber = await auth('subscriber')
  for (const write of [
    { method: 'POST', url: PATH, payload: { organizer: 'X' } },
    { method: 'PUT', url: `${PATH}/1`, payload: { phone: 'X' } },
    { method: 'DELETE', url: `${PATH}/by-slug/org` },
  ] as const) {
    const res = await inject({ ...write, headers: subscriber })
    t.equal(res.statusCode, 403)
    t.strictSame(res.json(), FORBIDDEN_403)
  }
  t.strictSame((await read(1, subscriber)).json(), organizer(1, 'Org'))
})

t.test('roles: a contributor creates drafts (pending when asking publish) and edits only its own drafts', async (t) => {
  const { inject, create, auth, patch, editor } = await setup(t)
  const contributor = await auth('contributor') // user 2
  t.strictSame(await create({ organizer: 'Mine' }, contributor), organizer(1, 'Mine', { author: 2, status: 'draft' }))
  t.equal((await create({ organizer: 'Asked', status: 'publish' }, contributor)).status, 'pending')
  await create({ organizer: 'Published for it', author: 2 })
  await create({ organizer: 'Not mine', status: 'draft' })
  t.equal((await patch(1, { phone: '1' }, contributor)).statusCode, 200)
  t.equal((await patch(1, { status: 'publish' }, contributor)).json<Organizer>().status, 'pending')
  t.equal((await patch(2, { phone: '2' }, contributor)).statusCode, 200, 'its own pending organizer')
  for (const id of [3, 4]) {
    t.strictSame((await patch(id, { phone: 'x' }, contributor)).json(), FORBIDDEN_403, `organizer ${id}`)
    t.strictSame((await inject({ method: 'DELETE', url: `${PATH}/${id}`, headers: contributor })).json(), FORBIDDEN_403)
  }
  t.equal((await inject({ url: `${PATH}/4`, headers: editor })).json<Organizer>().phone, null)
  t.equal((await inject({ method: 'DELETE', url: `${PATH}/1`, headers: contributor })).json<Organizer>().status, 'trash')
})

t.test('roles: an author publishes and edits only its own; editors edit all and set author', async (t) => {
  const { inject, create, auth, patch, editor } = await setup(t)
  const author = await auth('author') // user 2
  t.strictSame(await create({ organizer: 'Mine' }, author), organizer(1, 'Mine', { author: 2 }))
  await create({ organizer: 'Editors' })
  t.equal((await patch(1, { status: 'draft' }, author)).json<Organizer>().status, 'draft')
  t.equal((await patch(1, { status: 'publish' }, author)).json<Organizer>().status, 'publish')
  t.strictSame((await patch(2, { phone: '1' }, author)).json(), FORBIDDEN_403)
  expectError(t, await inject({ method: 'POST', url: PATH, headers: author, payload: { organizer: 'Gift', author: 1 } }), 403, 'rest_forbidden')
  t.equal((await patch(1, { phone: '1' })).statusCode, 200, 'the editor edits the author\'s organizer')
  t.strictSame((await patch(2, { author: 2 })).json(), organizer(2, 'Editors', { author: 2 }))
  t.equal((await patch(2, { phone: '2' }, author)).statusCode, 200, 'now its own')
  expectError(t, await patch(2, { author: 3 }), 400, 'rest_invalid_param', ['author'])
  expectError(t, await inject({ method: 'POST', url: PATH, headers: editor, payload: { organizer: 'Ghost', author: 3 } }), 400, 'rest_invalid_param', ['author'])
  t.equal((await create({ organizer: 'For author', author: 2 })).author, 2)
})

// -------------------------------------------------------------------------------------------- delete

t.test('delete: moves to the trash (200, status trash), again is 410, force=true deletes for good', async (t) => {
  const clock = new Date(NOW)
  const { inject, editor, create, list } = await setup(t, { now: clock })
  await create({ organizer: 'Org', email: 'a@org.example' })
  clock.setTime(Date.parse('2026-06-20T09:30:00Z'))
  const trashed = await inject({ method: 'DELETE', url: `${PATH}/1`, headers: editor })
  t.equal(trashed.statusCode, 200)
  const expected = organizer(1, 'Org', { email: 'a@org.example', status: 'trash', modified: '2026-06-20 09:30:00', modified_utc: '2026-06-20 09:30:00' })
  t.strictSame(trashed.json(), expected)
  t.equal((await list('', editor)).json().total, 0)
  const again = await inject({ method: 'DELETE', url: `${PATH}/by-slug/org`, headers: editor })
  t.equal(again.statusCode, 410)
  t.strictSame(again.json(), IN_TRASH)
  const forced = await inject({ method: 'DELETE', url: `${PATH}/1?force=true`, headers: editor })
  t.strictSame(forced.json(), { deleted: true, previous: expected })
  expectError(t, await inject({ url: `${PATH}/1`, headers: editor }), 404, 'rest-organizer-not-found')
  expectError(t, await inject({ method: 'DELETE', url: `${PATH}/1`, headers: editor }), 404, 'rest-organizer-not-found')
  t.equal((await create({ organizer: 'Next' })).id, 2, 'ids are never reused')
})

t.test('delete: force=true by slug on a live organizer; force must be a boolean', async (t) => {
  const { inject, editor, create } = await setup(t)
  await create({ organizer: 'Org' })
  expectError(t, await inject({ method: 'DELETE', url: `${PATH}/1?force=please`, headers: editor }), 400, 'rest_invalid_param', ['force'])
  const forced = await inject({ method: 'DELETE', url: `${PATH}/by-slug/org?force=true`, headers: editor })
  t.equal(forced.statusCode, 200)
  t.strictSame(forced.json(), { deleted: true, previous: organizer(1, 'Org') })
  expectError(t, await inject({ method: 'DELETE', url: `${PATH}/by-slug/org`, headers: editor }), 404, 'rest-organizer-not-found')
})

t.test('delete: force=true unlinks the organizer from its events, which stay with their other links', async (t) => {
  const { inject, editor, create, db } = await setup(t)
  await create({ organizer: 'A' })
  await create({ organizer: 'B' })
  const venue = await inject({ method: 'POST', url: `${API}/venues`, headers: editor, payload: { venue: 'Hall' } })
  const event = await insertLinkedEvent(db, { organizers: [2, 1], venues: [venue.json().id as number] })
  await inject({ method: 'DELETE', url: `${PATH}/2`, headers: editor })
  t.strictSame(await linkedIds(db, event), { venues: [1], organizers: [2, 1] }, 'trash keeps the link')
  t.equal((await inject({ method: 'DELETE', url: `${PATH}/2?force=true`, headers: editor })).statusCode, 200)
  t.strictSame(await linkedIds(db, event), { venues: [1], organizers: [1] })
  const still = await db.selectFrom('events').select(['id', 'status']).where('id', '=', event).executeTakeFirst()
  t.strictSame(still, { id: event, status: 'publish' }, 'the event is not lost')
})

t.test('delete: a stale If-Match is 412 and nothing changes', async (t) => {
  const { inject, editor, create, read, patch } = await setup(t)
  await create({ organizer: 'Org' })
  const original = String((await read(1)).headers.etag)
  await patch(1, { phone: '1' })
  expectError(t, await inject({ method: 'DELETE', url: `${PATH}/1`, headers: { ...editor, 'if-match': original } }), 412, 'rest-precondition-failed')
  expectError(t, await inject({ method: 'DELETE', url: `${PATH}/by-slug/org?force=true`, headers: { ...editor, 'if-match': original } }), 412, 'rest-precondition-failed')
  t.strictSame((await read(1)).json(), organizer(1, 'Org', { phone: '1' }))
  const current = String((await read(1)).headers.etag)
  const res = await inject({ method: 'DELETE', url: `${PATH}/1?force=true`, headers: { ...editor, 'if-match': current } })
  t.equal(res.json().deleted, true)
})

// ---------------------------------------------------------------------------------------------- list

t.test('list: an empty result is page 1 with total 0; a page past the last is 404 organizer-archive-page-not-found', async (t) => {
  const { list, create } = await setup(t)
  const res = await list('')
  t.equal(res.statusCode, 200)
  t.strictSame(res.json(), { organizers: [], rest_url: `${URL}?page=1&per_page=10`, total: 0, total_pages: 0 })
  t.equal(res.headers['x-total'], '0')
  t.equal(res.headers['x-total-pages'], '0')
  const past = await list('?page=3')
  t.equal(past.statusCode, 404)
  t.strictSame(past.json(), { code: 'organizer-archive-page-not-found', message: 'The requested organizer archive page does not exist.', data: { status: 404 } })
  await create({ organizer: 'A' })
  expectError(t, await list('?page=2'), 404, 'organizer-archive-page-not-found')
})

t.test('list: whole records, ordered by date descending then id ascending', async (t) => {
  const { list, create } = await setup(t)
  await create({ organizer: 'Old', date: '2025-01-01 00:00:00' })
  await create({ organizer: 'Tie A', date: '2026-03-01 00:00:00' })
  await create({ organizer: 'New', date: '2026-05-01 00:00:00' })
  await create({ organizer: 'Tie B', date: '2026-03-01 00:00:00' })
  const at = (date: string) => ({ date, date_utc: date })
  const res = await list('')
  t.strictSame(res.json(), {
    organizers: [
      organizer(3, 'New', at('2026-05-01 00:00:00')),
      organizer(2, 'Tie A', at('2026-03-01 00:00:00')),
      organizer(4, 'Tie B', at('2026-03-01 00:00:00')),
      organizer(1, 'Old', at('2025-01-01 00:00:00')),
    ],
    rest_url: `${URL}?page=1&per_page=10`,
    total: 4,
    total_pages: 1,
  })
  t.equal(res.headers['x-total'], '4')
  t.equal(res.headers['x-total-pages'], '1')
})

t.test('list: page and per_page walk the pages with links and headers; per_page is clamped to 50', async (t) => {
  const { list, create } = await setup(t)
  for (let i = 1; i <= 3; i++) await create({ organizer: `O${i}`, date: `2026-01-0${i} 00:00:00` })
  const base = `${URL}?page=`
  const first = await list('?per_page=2&search=o')
  t.strictSame(first.json(), {
    organizers: [organizer(3, 'O3', { date: '2026-01-03 00:00:00', date_utc: '2026-01-03 00:00:00' }), organizer(2, 'O2', { date: '2026-01-02 00:00:00', date_utc: '2026-01-02 00:00:00' })],
    rest_url: `${base}1&per_page=2&search=o`,
    next_rest_url: `${base}2&per_page=2&search=o`,
    total: 3,
    total_pages: 2,
  })
  t.equal(first.headers.link, `<${base}2&per_page=2&search=o>; rel="next"`)
  const second = await list('?per_page=2&page=2&search=o')
  t.same(ids(second), [1])
  t.equal(second.json().previous_rest_url, `${base}1&per_page=2&search=o`)
  t.equal(second.headers.link, `<${base}1&per_page=2&search=o>; rel="prev"`)
  for (let i = 4; i <= 51; i++) await create({ organizer: `P${i}` })
  const clamped = await list('?per_page=100')
  t.equal(ids(clamped).length, 50)
  t.equal(restUrl(clamped), `${URL}?page=1&per_page=50`)
  t.equal(clamped.headers['x-total'], '51')
  t.equal(clamped.headers['x-total-pages'], '2')
  expectError(t, await list('?per_page=0'), 400, 'rest_invalid_param', ['per_page'])
  expectError(t, await list('?page=-2'), 400, 'rest_invalid_param', ['page'])
})

t.test('list: search is a case-insensitive substring over the name, description, phone, email and website', async (t) => {
  const { list, create } = await setup(t)
  await create({ organizer: 'The Needle Club', date: '2026-01-06 00:00:00' })
  await create({ organizer: 'B', description: 'a NEEDLE here', date: '2026-01-05 00:00:00' })
  await create({ organizer: 'C', phone: '+1 needle', date: '2026-01-04 00:00:00' })
  await create({ organizer: 'D', email: 'NeEdLe@org.example', date: '2026-01-03 00:00:00' })
  await create({ organizer: 'E', website: 'https://needle.example', date: '2026-01-02 00:00:00' })
  await create({ organizer: 'F', description: 'haystack', slug: 'needle', date: '2026-01-01 00:00:00' })
  const res = await list('?search=Needle')
  t.same(ids(res), [1, 2, 3, 4, 5], 'each field matches; the slug is not searched')
  t.equal(restUrl(res), `${URL}?page=1&per_page=10&search=Needle`)
  t.same(ids(await list('?search=HAYSTACK')), [6])
  t.same(ids(await list('?search=%25')), [])
  t.same(ids(await list('?search=org.example')), [4])
  t.same(ids(await list('?search=n_edle')), [], '_ is a plain character')
})

t.test('list: search leaves out venue fields (organizers have none)', async (t) => {
  const { list, create, inject, editor } = await setup(t)
  await inject({ method: 'POST', url: `${API}/venues`, headers: editor, payload: { venue: 'Vienna Hall', city: 'Vienna' } })
  await create({ organizer: 'Org' })
  t.same(ids(await list('?search=vienna')), [])
})

t.test('list: event keeps the organizers linked to that event; not an event is 400', async (t) => {
  const { list, create, db } = await setup(t)
  for (const name of ['A', 'B', 'C']) await create({ organizer: name })
  const event = await insertLinkedEvent(db, { organizers: [2, 3] })
  const venuesOnly = await insertLinkedEvent(db, {})
  await db.insertInto('venues').values({
    language: 'en', translation_group: null, author: null, status: 'publish', name: 'V', slug: 'v', description: null, image_id: null,
    date: STAMP, date_utc: STAMP, modified: STAMP, modified_utc: STAMP, address: null, city: null, country: null, province: null,
    state: null, zip: null, phone: null, website: null, stateprovince: null, geo_lat: null, geo_lng: null,
  }).execute()
  await db.insertInto('event_venues').values({ event_id: venuesOnly, venue_id: 1, position: 0 }).execute()
  const res = await list(`?event=${event}`)
  t.strictSame(res.json(), {
    organizers: [organizer(2, 'B'), organizer(3, 'C')], rest_url: `${URL}?page=1&per_page=10&event=${event}`, total: 2, total_pages: 1,
  })
  t.same(ids(await list(`?event=${venuesOnly}`)), [], 'venue links are not organizer links')
  expectError(t, await list('?event=12345'), 400, 'rest_invalid_param', ['event'])
  expectError(t, await list('?event=two'), 400, 'rest_invalid_param', ['event'])
})

t.test('list: has_events keeps organizers linked to an event the caller may read, never draft, pending or trashed; false the others', async (t) => {
  const { list, create, db, editor } = await setup(t)
  for (const name of ['Published', 'Private', 'Draft', 'Pending', 'Trashed', 'None']) await create({ organizer: name, date: '2026-01-01 00:00:00' })
  await insertLinkedEvent(db, { organizers: [1] }, { start_utc: '2019-01-01 00:00:00', end_utc: '2019-01-01 01:00:00' })
  await insertLinkedEvent(db, { organizers: [2] }, { status: 'private' })
  await insertLinkedEvent(db, { organizers: [3] }, { status: 'draft' })
  await insertLinkedEvent(db, { organizers: [4] }, { status: 'pending' })
  await insertLinkedEvent(db, { organizers: [5] }, { status: 'trash' })
  const res = await list('?has_events=true')
  t.same(ids(res), [1], 'past events count too; the private one not for an anonymous caller (CONTRACT §6)')
  t.equal(restUrl(res), `${URL}?page=1&per_page=10&has_events=true`)
  t.same(ids(await list('?has_events=1', editor)), [1, 2], 'the editor reads the private event')
  t.same(ids(await list('?has_events=false')), [2, 3, 4, 5, 6])
  t.same(ids(await list('?has_events=0', editor)), [3, 4, 5, 6])
  expectError(t, await list('?has_events=no'), 400, 'rest_invalid_param', ['has_events'])
})

t.test('list: only_with_upcoming keeps organizers linked to an event starting at or after now (injected clock)', async (t) => {
  const clock = new Date('2026-09-01T00:00:00Z')
  const { list, create, db } = await setup(t, { now: clock })
  const at = { date: '2026-01-01 00:00:00' }
  for (const name of ['July', 'December', 'Both', 'None']) await create({ organizer: name, ...at })
  await insertLinkedEvent(db, { organizers: [1, 3] })
  await insertLinkedEvent(db, { organizers: [2, 3] }, { start_utc: '2026-12-01 18:00:00', end_utc: '2026-12-01 20:00:00' })
  t.same(ids(await list('?only_with_upcoming=true')), [2, 3])
  t.same(ids(await list('?only_with_upcoming=false')), [1, 2, 3, 4])
  clock.setTime(Date.parse('2026-06-01T00:00:00Z'))
  t.same(ids(await list('?only_with_upcoming=1')), [1, 2, 3], 'the same data, an earlier clock')
  clock.setTime(Date.parse('2026-12-01T18:00:00Z'))
  t.same(ids(await list('?only_with_upcoming=true')), [2, 3], 'an event starting exactly now is upcoming')
  clock.setTime(Date.parse('2026-12-01T18:00:01Z'))
  t.same(ids(await list('?only_with_upcoming=true')), [])
  expectError(t, await list('?only_with_upcoming=maybe'), 400, 'rest_invalid_param', ['only_with_upcoming'])
})

t.test('list: visibility by role: anonymous published only (other status 400), editors all, others published plus own', async (t) => {
  const { list, create, auth, editor, inject } = await setup(t)
  const author = await auth('author') // user 2
  const contributor = await auth('contributor') // user 3
  await create({ organizer: 'Published' })
  await create({ organizer: 'Editors draft', status: 'draft' })
  await create({ organizer: 'Authors pending', status: 'pending' }, author)
  await create({ organizer: 'Contributors draft' }, contributor)
  await create({ organizer: 'Private', status: 'private' })
  await create({ organizer: 'Trashed' })
  await inject({ method: 'DELETE', url: `${PATH}/6`, headers: editor })
  t.same(ids(await list('')), [1])
  t.same(ids(await list('?status=publish')), [1])
  for (const status of ['draft', 'pending', 'private', 'trash']) expectError(t, await list(`?status=${status}`), 400, 'rest_invalid_param', ['status'])
  t.same(ids(await list('', editor)), [1, 2, 3, 4, 5])
  t.same(ids(await list('?status=draft', editor)), [2, 4])
  t.same(ids(await list('?status=private', editor)), [5])
  expectError(t, await list('?status=trash', editor), 400, 'rest_invalid_param', ['status'])
  t.same(ids(await list('', author)), [1, 3])
  t.same(ids(await list('?status=pending', author)), [3])
  t.same(ids(await list('', contributor)), [1, 4])
  t.same(ids(await list('?status=draft', contributor)), [4])
  expectError(t, await list('?status=trash', contributor), 400, 'rest_invalid_param', ['status'])
})

t.test('list: ml_language lists that language only, the default language otherwise', async (t) => {
  const { list, create } = await setup(t)
  await create({ organizer: 'Friends', date: '2026-01-01 00:00:00' })
  await create({ organizer: 'Freunde', ml_language: 'de', translation_of: 1, date: '2026-01-01 00:00:00' })
  await create({ organizer: 'Amigos', ml_language: 'es', translation_of: 1, date: '2026-01-01 00:00:00' })
  const translations = { en: 1, de: 2, es: 3 }
  t.strictSame((await list('')).json<{ organizers: Organizer[] }>().organizers, [organizer(1, 'Friends', { translations, date: '2026-01-01 00:00:00', date_utc: '2026-01-01 00:00:00' })])
  const spanish = await list('?ml_language=es')
  t.strictSame(spanish.json(), {
    organizers: [organizer(3, 'Amigos', { ml_language: 'es', translations, date: '2026-01-01 00:00:00', date_utc: '2026-01-01 00:00:00' })],
    rest_url: `${URL}?page=1&per_page=10&ml_language=es`,
    total: 1,
    total_pages: 1,
  })
  t.equal(spanish.headers['content-language'], 'es')
  t.same(ids(await list('?ml_language=ch-fr')), [])
  expectError(t, await list('?ml_language=ES'), 400, 'rest_invalid_param', ['ml_language'])
})

t.test('list: every parameter combined; rest_url carries each one sent; unknown parameters are ignored', async (t) => {
  const { list, create, db, auth } = await setup(t)
  const author = await auth('author') // user 2
  await create({ organizer: 'Jazz One', status: 'draft' }, author)
  await create({ organizer: 'Jazz Two', status: 'draft' }, author)
  await create({ organizer: 'Jazz Three', status: 'draft' })
  await create({ organizer: 'Rock', status: 'draft' }, author)
  const event = await insertLinkedEvent(db, { organizers: [1, 2, 3, 4] })
  const query = `?search=JAZZ&event=${event}&has_events=1&only_with_upcoming=1&status=draft&ml_language=en&per_page=1&page=1&unknown=x`
  const res = await list(query, author)
  t.equal(res.statusCode, 200)
  const rest = `search=JAZZ&event=${event}&has_events=true&only_with_upcoming=true&status=draft&ml_language=en`
  t.strictSame(res.json(), {
    organizers: [organizer(1, 'Jazz One', { author: 2, status: 'draft' })],
    rest_url: `${URL}?page=1&per_page=1&${rest}`,
    next_rest_url: `${URL}?page=2&per_page=1&${rest}`,
    total: 2,
    total_pages: 2,
  })
  t.equal(res.headers.link, `<${URL}?page=2&per_page=1&${rest}>; rel="next"`)
})
