/**
 * The geolocation extension (CONTRACT §8): off by default, where every `geoloc*` parameter and venue
 * `geo_lat`/`geo_lng` in a write is 400 `geoloc-extension-inactive` (in every language, naming
 * CALENDAR_EXTENSIONS=geoloc) and stored coordinates read back as null; on, where venues carry coordinates and
 * GET /events filters by `geoloc` and by the geofence around `geoloc_lat`/`geoloc_lng` (great-circle distance,
 * boundaries, the antimeridian, the poles, several venues per event, every other filter and pagination).
 * Also the haversine itself, in JavaScript and in SQLite.
 */
import t from 'tap'
import type { Test } from 'tap'
import { sql } from 'kysely'
import { EARTH_RADIUS_KM, distanceKm, haversineKm } from '../src/db/dialect.js'
import { API, build, type BuildOptions } from './helpers/build.js'
import { expectError, type ErrorBody } from './helpers/errors.js'
import { EVENTS, EVENTS_URL, eventRecord, idsOf, organizerRecord, setup, venueRecord, type Body, type Event, type Setup, type Venue } from './helpers/events.js'

const VENUES = `${API}/venues`
const ON: BuildOptions = { config: { extensions: new Set(['geoloc']) } }
/** The default window of the pinned clock on a UTC site, as rest_url shows it. */
const WINDOW = 'start_date=2026-06-15T00%3A00%3A00%2B00%3A00&end_date=2028-06-15T23%3A59%3A59%2B00%3A00'
const OTHER_LANGUAGES = ['at', 'de', 'es', 'ch-fr', 'ch-de'] as const

// ------------------------------------------------------------------------------- reference geometry

/** The sphere of the contract's great-circle distances. */
const R = 6371.0088
const RAD = Math.PI / 180

/** Reference haversine on a sphere of radius R, written here independently of the server's. */
function haversine(latA: number, lngA: number, latB: number, lngB: number): number {
  const h = Math.sin(((latB - latA) * RAD) / 2) ** 2
    + Math.cos(latA * RAD) * Math.cos(latB * RAD) * Math.sin(((lngB - lngA) * RAD) / 2) ** 2
  return 2 * R * Math.asin(Math.min(1, Math.sqrt(h)))
}

/** Another reference: the angle from the chord between the two unit vectors (no haversine at all). */
function chordKm(latA: number, lngA: number, latB: number, lngB: number): number {
  const v = (lat: number, lng: number) => [Math.cos(lat * RAD) * Math.cos(lng * RAD), Math.cos(lat * RAD) * Math.sin(lng * RAD), Math.sin(lat * RAD)]
  const [a, b] = [v(latA, lngA), v(latB, lngB)]
  const chord = Math.hypot(a[0]! - b[0]!, a[1]! - b[1]!, a[2]! - b[2]!)
  return 2 * R * Math.asin(Math.min(1, chord / 2))
}

/** The latitude `km` north (negative: south) of `lat` along a meridian. */
const northOf = (lat: number, km: number): number => lat + km / R / RAD
/** The longitude offset, at latitude `lat`, of a point `km` east of it on the same parallel (haversine inverted). */
const eastOffset = (lat: number, km: number): number => (2 * Math.asin(Math.sin(km / (2 * R)) / Math.cos(lat * RAD))) / RAD

/** The point of most tests: St. Stephen's Cathedral, Vienna. */
const P = { lat: 48.2085, lng: 16.3731 }
const near = (lat: number, lng: number): string => `?geoloc_lat=${lat}&geoloc_lng=${lng}`

// ---------------------------------------------------------------------------------------- builders

/** Creates a venue through the API and returns its record (201 asserted). */
async function place(s: Setup, name: string, lat?: number, lng?: number, fields: Body = {}): Promise<Venue> {
  return s.venue({ venue: name, ...(lat !== undefined && lng !== undefined ? { geo_lat: lat, geo_lng: lng } : {}), ...fields })
}

/** Creates the next event, titled `Event <id>` (as `eventRecord` expects), linked to `venues`. */
function eventsOf(s: Setup) {
  let next = 1
  return async (venues: number[], fields: Body = {}): Promise<Event> => {
    const created = await s.event(`Event ${next}`, { venue: venues, ...fields })
    next += 1
    return created
  }
}

async function ids(t: Test, s: Setup, query: string, headers: Record<string, string> = {}): Promise<number[]> {
  const res = await s.list(query, headers)
  t.equal(res.statusCode, 200, `GET /events${query}`)
  if (res.statusCode !== 200) t.comment(res.body)
  return idsOf(res)
}

function inactive(name: string, message = `${name} needs the geolocation extension: start the server with CALENDAR_EXTENSIONS=geoloc to enable it.`): ErrorBody {
  return {
    code: 'geoloc-extension-inactive',
    message,
    data: { status: 400, params: { [name]: message }, details: [{ field: name, message }] },
  }
}

// ------------------------------------------------------------------------------------ haversineKm

t.test('haversineKm: the great-circle distance on the mean Earth sphere (6371.0088 km)', async (t) => {
  t.equal(EARTH_RADIUS_KM, 6371.0088)
  t.equal(haversineKm(P.lat, P.lng, P.lat, P.lng), 0, 'a point is 0 km from itself')
  t.equal(haversineKm(0, 0, 0, 0), 0)
  t.ok(Math.abs(haversineKm(10, 20, 11, 20) - (R * Math.PI) / 180) < 1e-9, 'one degree of a meridian: 111.195 km')
  t.ok(Math.abs(haversineKm(0, 0, 0, 1) - (R * Math.PI) / 180) < 1e-9, 'one degree of the equator: 111.195 km')
  t.ok(Math.abs(haversineKm(0, 0, 0, 90) - (R * Math.PI) / 2) < 1e-9, 'a quarter of the equator')
  t.ok(Math.abs(haversineKm(90, 0, -90, 0) - R * Math.PI) < 1e-9, 'pole to pole: half a circumference')
  t.ok(Math.abs(haversineKm(0, 0, 0, 180) - R * Math.PI) < 1e-9, 'antipodes on the equator (no NaN from rounding)')
  t.ok(Math.abs(haversineKm(45, 45, -45, -135) - R * Math.PI) < 1e-9, 'antipodes off the equator')
  t.ok(Math.abs(haversineKm(0, 179.9, 0, -179.9) - (R * 0.2 * Math.PI) / 180) < 1e-9, 'across the antimeridian: 0.2° of the equator, not 359.8°')
  t.ok(Math.abs(haversineKm(89.9, 0, 89.9, 180) - (R * 0.2 * Math.PI) / 180) < 1e-9, 'across the pole: 0.2° of a meridian')
  t.ok(haversineKm(90, 0, 90, 123) < 1e-9, 'the pole has every longitude')
  t.ok(Math.abs(haversineKm(P.lat, P.lng, northOf(P.lat, 40.1), P.lng) - 40.1) < 1e-9, '40.1 km north along the meridian')
  t.ok(Math.abs(haversineKm(P.lat, P.lng, P.lat, P.lng + eastOffset(P.lat, 40.3)) - 40.3) < 1e-9, '40.3 km east along the parallel')
  // Vienna (St. Stephen's) to Graz (main square): 144.56 km.
  t.ok(Math.abs(haversineKm(48.2085, 16.3731, 47.0707, 15.4395) - 144.5635) < 1e-4, 'Vienna to Graz')
  // Symmetric, and the same as two independent references, over a fixed spread of points.
  const points: Array<[number, number]> = []
  for (let i = 0; i < 24; i++) points.push([((i * 37) % 181) - 90, ((i * 97) % 361) - 180])
  for (const [latA, lngA] of points) {
    for (const [latB, lngB] of points) {
      const d = haversineKm(latA, lngA, latB, lngB)
      if (Math.abs(d - haversineKm(latB, lngB, latA, lngA)) > 1e-9) t.fail(`not symmetric: ${latA},${lngA} ${latB},${lngB}`)
      if (Math.abs(d - haversine(latA, lngA, latB, lngB)) > 1e-9) t.fail(`differs from the reference: ${latA},${lngA} ${latB},${lngB}`)
      if (Math.abs(d - chordKm(latA, lngA, latB, lngB)) > 1e-6) t.fail(`differs from the chord: ${latA},${lngA} ${latB},${lngB}`)
      if (!(d >= 0 && d <= R * Math.PI + 1e-9)) t.fail(`out of range: ${d}`)
    }
  }
  t.pass(`${points.length ** 2} pairs agree with both references`)
})

t.test('haversineKm: SQLite computes the same distance (distance_km), and null for missing coordinates', async (t) => {
  const built = await build(t, { sqlite: true })
  const { db } = built
  const distance = built.sqlite().prepare('select distance_km(?, ?, ?, ?) as d')
  for (const [latA, lngA, latB, lngB] of [[P.lat, P.lng, 47.0707, 15.4395], [0, 179.9, 0, -179.9], [89.9, 0, 89.9, 180], [0, 0, 0, 180], [-33.8568, 151.2153, 40.6892, -74.0445]] as const) {
    t.equal((distance.get(latA, lngA, latB, lngB) as { d: number }).d, haversineKm(latA, lngA, latB, lngB), `${latA},${lngA} → ${latB},${lngB}`)
  }
  t.equal((distance.get(null, 1, 2, 3) as { d: number | null }).d, null, 'a venue without coordinates has no distance')
  t.equal((distance.get(1, null, 2, 3) as { d: number | null }).d, null)
  t.equal((distance.get('1', 1, 2, 3) as { d: number | null }).d, null, 'text is not a coordinate')
  const { rows } = await sql<{ d: number }>`select ${distanceKm(db, sql.val(P.lat), sql.val(P.lng), 47.0707, 15.4395)} as d`.execute(db)
  t.equal(rows[0]?.d, haversineKm(P.lat, P.lng, 47.0707, 15.4395), 'distanceKm builds the same expression for SQLite')
})

// ------------------------------------------------------------------------------------ extension off

t.test('off: geoloc, geoloc_lat and geoloc_lng are each 400 geoloc-extension-inactive naming CALENDAR_EXTENSIONS=geoloc', async (t) => {
  const s = await setup(t)
  const venue = await place(s, 'Hall')
  await s.event('Event 1', { venue: [venue.id] })
  const cases: Array<[string, string]> = [
    ['?geoloc=true', 'geoloc'],
    ['?geoloc=false', 'geoloc'],
    ['?geoloc=1', 'geoloc'],
    ['?geoloc=0', 'geoloc'],
    ['?geoloc_lat=48.2', 'geoloc_lat'],
    ['?geoloc_lng=16.37', 'geoloc_lng'],
    ['?geoloc_lat=48.2&geoloc_lng=16.37', 'geoloc_lat'],
    ['?geoloc_lng=16.37&geoloc=true&per_page=5', 'geoloc'],
  ]
  for (const [query, name] of cases) {
    const res = await s.list(query)
    t.equal(res.statusCode, 400, query)
    t.equal(res.headers['content-type'], 'application/json; charset=utf-8')
    t.strictSame(res.json(), inactive(name), query)
    t.match(res.json<ErrorBody>().message, /CALENDAR_EXTENSIONS=geoloc/)
  }
  // Editors get the same answer; without any geoloc parameter the list is unaffected.
  t.strictSame((await s.list('?geoloc=true', s.editor)).json(), inactive('geoloc'))
  t.same(await ids(t, s, ''), [1])
})

t.test('off: venue geo_lat/geo_lng in any write (create, update, inline in an event) are 400 and write nothing', async (t) => {
  const s = await setup(t)
  const hall = await place(s, 'Hall')
  const event = await s.event('Event 1', { venue: [hall.id] })
  const post = (url: string, payload: Body, method: 'POST' | 'PUT' | 'PATCH' = 'POST') => s.inject({ method, url, headers: s.editor, payload })
  for (const [payload, name] of [
    [{ geo_lat: 48.2, geo_lng: 16.37 }, 'geo_lat'], [{ geo_lat: 48.2 }, 'geo_lat'], [{ geo_lng: 16.37 }, 'geo_lng'],
    [{ geo_lat: null, geo_lng: null }, 'geo_lat'], [{ geo_lng: 0, geo_lat: 0 }, 'geo_lat'],
  ] as const) {
    const created = await post(VENUES, { venue: 'Dome', ...payload })
    t.strictSame(created.json(), inactive(name), `create ${JSON.stringify(payload)}`)
    t.equal(created.statusCode, 400)
  }
  for (const method of ['POST', 'PUT', 'PATCH'] as const) {
    const updated = await post(`${VENUES}/${hall.id}`, { city: 'Wien', geo_lat: 1, geo_lng: 2 }, method)
    t.equal(updated.statusCode, 400, `${method} update`)
    t.strictSame(updated.json(), inactive('geo_lat'))
  }
  const bySlug = await post(`${VENUES}/by-slug/hall`, { geo_lng: 2 }, 'PATCH')
  t.strictSame(bySlug.json(), inactive('geo_lng'), 'update by slug')
  // Inline venues of an event: the event and its inline venue are not created, nor is the event changed.
  const inlineCreate = await post(EVENTS, { title: 'Event 2', start_date: '2026-07-01 18:00:00', end_date: '2026-07-01 21:00:00', venue: [{ venue: 'Tent', geo_lat: 1, geo_lng: 2 }] })
  t.equal(inlineCreate.statusCode, 400)
  t.strictSame(inlineCreate.json(), inactive('geo_lat'))
  const inlineUpdate = await post(`${EVENTS}/${event.id}`, { title: 'Renamed', venue: [{ venue: 'Tent', geo_lat: 1, geo_lng: 2 }] }, 'PATCH')
  t.equal(inlineUpdate.statusCode, 400)
  t.strictSame(inlineUpdate.json(), inactive('geo_lat'))
  // Nothing was written.
  const venues = await s.inject({ url: VENUES, headers: s.editor })
  t.strictSame(venues.json<{ venues: Venue[] }>().venues, [venueRecord(1, 'Hall')])
  const unchanged = (await s.get(event.id)).json<Event>()
  t.equal(unchanged.title, 'Event 1', 'the event was not renamed')
  t.strictSame(unchanged.venue, [venueRecord(1, 'Hall')], 'nor relinked')
  t.same(await ids(t, s, ''), [1], 'no second event')
})

t.test('off: an anonymous write with geo fields is 401 first (authentication comes before fields)', async (t) => {
  const s = await setup(t)
  const res = await s.inject({ method: 'POST', url: VENUES, payload: { venue: 'Dome', geo_lat: 1, geo_lng: 2 } })
  expectError(t, res, 401, 'rest_forbidden')
})

t.test('off: the message is translated in every language and still names CALENDAR_EXTENSIONS=geoloc', async (t) => {
  const s = await setup(t)
  const hall = await place(s, 'Hall')
  const english = (await s.list('?geoloc_lat=1&geoloc_lng=2')).json<ErrorBody>().message
  const englishWrite = (await s.inject({ method: 'PATCH', url: `${VENUES}/${hall.id}`, headers: s.editor, payload: { geo_lat: 1, geo_lng: 2 } })).json<ErrorBody>().message
  for (const language of OTHER_LANGUAGES) {
    const res = await s.list(`?geoloc_lat=1&geoloc_lng=2&ml_language=${language}`)
    t.equal(res.statusCode, 400, language)
    t.equal(res.headers['content-language'], language)
    const body = res.json<ErrorBody>()
    t.equal(body.code, 'geoloc-extension-inactive')
    t.match(body.message, /CALENDAR_EXTENSIONS=geoloc/, `${language}: names the variable`)
    t.match(body.message, /^geoloc_lat /, `${language}: names the parameter`)
    t.not(body.message, english, `${language}: not the English text`)
    t.strictSame(body, inactive('geoloc_lat', body.message))
    // A write: ml_language in the query or in the body.
    for (const [query, extra] of [[`?ml_language=${language}`, {}], ['', { ml_language: language }]] as const) {
      const write = await s.inject({ method: 'PATCH', url: `${VENUES}/${hall.id}${query}`, headers: s.editor, payload: { geo_lat: 1, geo_lng: 2, ...extra } })
      t.equal(write.statusCode, 400)
      t.equal(write.headers['content-language'], language)
      const message = write.json<ErrorBody>().message
      t.match(message, /CALENDAR_EXTENSIONS=geoloc/)
      t.not(message, englishWrite)
      t.strictSame(write.json(), inactive('geo_lat', message))
    }
  }
})

t.test('off: in German (ml_language=de) the whole error names CALENDAR_EXTENSIONS=geoloc', async (t) => {
  const s = await setup(t)
  const res = await s.list('?geoloc=true&ml_language=de')
  t.equal(res.statusCode, 400)
  t.equal(res.headers['content-language'], 'de')
  t.strictSame(res.json(), inactive('geoloc', 'geoloc erfordert die Geolokalisierungserweiterung: Starten Sie den Server mit CALENDAR_EXTENSIONS=geoloc, um sie zu aktivieren.'))
  const write = await s.inject({ method: 'POST', url: `${VENUES}?ml_language=de`, headers: s.editor, payload: { venue: 'Dom', geo_lng: 16.37 } })
  t.strictSame(write.json(), inactive('geo_lng', 'geo_lng erfordert die Geolokalisierungserweiterung: Starten Sie den Server mit CALENDAR_EXTENSIONS=geoloc, um sie zu aktivieren.'))
})

t.test('off: coordinates already stored read back as null everywhere (venue by id, slug, list; events)', async (t) => {
  const s = await setup(t)
  const hall = await place(s, 'Hall')
  await s.event('Event 1', { venue: [hall.id] })
  await s.db.updateTable('venues').set({ geo_lat: P.lat, geo_lng: P.lng }).where('id', '=', hall.id).execute()
  const expected = venueRecord(1, 'Hall')
  t.strictSame((await s.inject({ url: `${VENUES}/1` })).json(), expected, 'by id')
  t.strictSame((await s.inject({ url: `${VENUES}/by-slug/hall` })).json(), expected, 'by slug')
  t.strictSame((await s.inject({ url: VENUES })).json<{ venues: Venue[] }>().venues, [expected], 'list')
  t.strictSame((await s.get(1)).json<Event>().venue, [expected], 'event by id')
  const list = await s.list()
  t.strictSame(list.json(), {
    events: [eventRecord(1, { venue: [expected] })], rest_url: `${EVENTS_URL}?page=1&per_page=10&${WINDOW}`, total: 1, total_pages: 1,
  }, 'event list')
})

// ------------------------------------------------------------------------------------- extension on

t.test('on: venues accept geo_lat/geo_lng on create and update, both or neither, and return them', async (t) => {
  const s = await setup(t, ON)
  const dome = await place(s, 'Dome', P.lat, P.lng)
  t.strictSame(dome, venueRecord(1, 'Dome', { geo_lat: P.lat, geo_lng: P.lng }))
  t.strictSame(await place(s, 'Nowhere'), venueRecord(2, 'Nowhere'), 'without coordinates: null')
  for (const [i, [lat, lng]] of ([[90, 180], [-90, -180], [0, 0], [-0.000001, 179.999999]] as const).entries()) {
    const edge = await place(s, `Edge ${i}`, lat, lng)
    t.strictSame([edge.geo_lat, edge.geo_lng], [lat, lng], `${lat},${lng} accepted`)
  }
  const patch = (payload: Body) => s.inject({ method: 'PATCH', url: `${VENUES}/1`, headers: s.editor, payload })
  const moved = await patch({ geo_lat: 47.0707, geo_lng: 15.4395 })
  t.equal(moved.statusCode, 200)
  t.strictSame(moved.json(), venueRecord(1, 'Dome', { geo_lat: 47.0707, geo_lng: 15.4395, modified: moved.json<Venue>().modified, modified_utc: moved.json<Venue>().modified_utc }))
  t.strictSame((await s.inject({ url: `${VENUES}/1` })).json<Venue>().geo_lat, 47.0707, 'stored')
  expectError(t, await patch({ geo_lat: 10 }), 400, 'rest_invalid_param', ['geo_lng'])
  expectError(t, await patch({ geo_lng: 10 }), 400, 'rest_invalid_param', ['geo_lat'])
  expectError(t, await patch({ geo_lat: null, geo_lng: 10 }), 400, 'rest_invalid_param', ['geo_lat'])
  expectError(t, await patch({ geo_lat: 10, geo_lng: null }), 400, 'rest_invalid_param', ['geo_lng'])
  t.strictSame((await s.inject({ url: `${VENUES}/1` })).json<Venue>().geo_lng, 15.4395, 'a refused update writes nothing')
  const cleared = await patch({ geo_lat: null, geo_lng: null })
  t.strictSame([cleared.json<Venue>().geo_lat, cleared.json<Venue>().geo_lng], [null, null], 'null + null clears')
  // Inline venues of an event carry coordinates too.
  const event = await s.event('Event 1', { venue: [{ venue: 'Tent', geo_lat: -33.8568, geo_lng: 151.2153 }] })
  t.strictSame(event.venue, [venueRecord(7, 'Tent', { geo_lat: -33.8568, geo_lng: 151.2153 })])
})

t.test('on: out-of-range or non-numeric coordinates are 400 naming the field, in writes and in the list', async (t) => {
  const s = await setup(t, ON)
  for (const [payload, name] of [
    [{ geo_lat: 90.000001, geo_lng: 0 }, 'geo_lat'], [{ geo_lat: -90.5, geo_lng: 0 }, 'geo_lat'],
    [{ geo_lat: 0, geo_lng: 180.000001 }, 'geo_lng'], [{ geo_lat: 0, geo_lng: -181 }, 'geo_lng'],
    [{ geo_lat: 'north', geo_lng: 0 }, 'geo_lat'],
  ] as const) {
    expectError(t, await s.inject({ method: 'POST', url: VENUES, headers: s.editor, payload: { venue: 'Far', ...payload } }), 400, 'rest_invalid_param', [name])
  }
  t.equal((await s.inject({ url: VENUES, headers: s.editor })).json().total, 0, 'no venue created')
  for (const [query, name] of [
    ['geoloc_lat=90.1&geoloc_lng=0', 'geoloc_lat'], ['geoloc_lat=-91&geoloc_lng=0', 'geoloc_lat'],
    ['geoloc_lat=0&geoloc_lng=180.5', 'geoloc_lng'], ['geoloc_lat=0&geoloc_lng=-180.01', 'geoloc_lng'],
    ['geoloc_lat=north&geoloc_lng=0', 'geoloc_lat'], ['geoloc_lat=0&geoloc_lng=', 'geoloc_lng'],
    ['geoloc=maybe', 'geoloc'], ['geoloc=', 'geoloc'],
  ] as const) {
    expectError(t, await s.list(`?${query}`), 400, 'rest_invalid_param', [name])
  }
  for (const query of ['geoloc_lat=90&geoloc_lng=180', 'geoloc_lat=-90&geoloc_lng=-180', 'geoloc_lat=0&geoloc_lng=0', 'geoloc_lat=1e1&geoloc_lng=-2.5']) {
    t.equal((await s.list(`?${query}`)).statusCode, 200, `${query}: the edges are valid`)
  }
})

t.test('on: geoloc_lat and geoloc_lng come together, else 400 naming the missing one (also in German)', async (t) => {
  const s = await setup(t, ON)
  const only = async (query: string, missing: string, message: string) => {
    const res = await s.list(query)
    t.equal(res.statusCode, 400, query)
    const invalid = query.includes('ml_language=de') ? 'Ungültige(r) Parameter' : 'Invalid parameter(s)'
    t.strictSame(res.json(), {
      code: 'rest_invalid_param',
      message: `${invalid}: ${missing}.`,
      data: { status: 400, params: { [missing]: message }, details: [{ field: missing, message }] },
    })
  }
  const english = 'geoloc_lat and geoloc_lng must be given together.'
  await only('?geoloc_lat=48.2', 'geoloc_lng', english)
  await only('?geoloc_lng=16.37', 'geoloc_lat', english)
  await only('?geoloc_lat=48.2&geoloc=true', 'geoloc_lng', english)
  await only('?geoloc=false&geoloc_lng=16.37&page=1', 'geoloc_lat', english)
  await only('?geoloc_lat=48.2&ml_language=de', 'geoloc_lng', 'geoloc_lat und geoloc_lng müssen zusammen angegeben werden.')
})

t.test('on: geoloc=true keeps events with a published venue that has coordinates; geoloc=false the others', async (t) => {
  const s = await setup(t, ON)
  const located = await place(s, 'Located', P.lat, P.lng) // 1
  const bare = await place(s, 'Bare') // 2
  const draft = await place(s, 'Draft', P.lat, P.lng, { status: 'draft' }) // 3
  const doomed = await place(s, 'Doomed', P.lat, P.lng) // 4
  const far = await place(s, 'Far', -33.8568, 151.2153) // 5
  const event = eventsOf(s)
  await event([located.id]) // 1: coordinates
  await event([bare.id]) // 2: a venue without
  await event([]) // 3: no venue
  await event([bare.id, located.id]) // 4: one of two has them
  await event([draft.id]) // 5: only a draft venue has them
  await event([doomed.id]) // 6: only a trashed venue has them
  await event([far.id]) // 7: coordinates far away (geoloc ignores distance)
  t.equal((await s.inject({ method: 'DELETE', url: `${VENUES}/${doomed.id}`, headers: s.editor })).statusCode, 200)
  for (const value of ['true', '1']) t.same(await ids(t, s, `?geoloc=${value}`), [1, 4, 7], `geoloc=${value}`)
  for (const value of ['false', '0']) t.same(await ids(t, s, `?geoloc=${value}`), [2, 3, 5, 6], `geoloc=${value}`)
  t.same(await ids(t, s, '?geoloc=true', s.editor), [1, 4, 7], 'an editor sees the draft venue, but it does not count')
  t.same(await ids(t, s, ''), [1, 2, 3, 4, 5, 6, 7], 'without geoloc: every event')
  // Coordinates added or cleared later move events between the two sets.
  t.equal((await s.inject({ method: 'PATCH', url: `${VENUES}/${bare.id}`, headers: s.editor, payload: { geo_lat: 1, geo_lng: 2 } })).statusCode, 200)
  t.same(await ids(t, s, '?geoloc=true'), [1, 2, 4, 7])
  t.equal((await s.inject({ method: 'PATCH', url: `${VENUES}/${located.id}`, headers: s.editor, payload: { geo_lat: null, geo_lng: null } })).statusCode, 200)
  t.same(await ids(t, s, '?geoloc=true'), [2, 4, 7])
  t.same(await ids(t, s, '?geoloc=false'), [1, 3, 5, 6])
  // Published again, the draft venue counts.
  t.equal((await s.inject({ method: 'PATCH', url: `${VENUES}/${draft.id}`, headers: s.editor, payload: { status: 'publish' } })).statusCode, 200)
  t.same(await ids(t, s, '?geoloc=true'), [2, 4, 5, 7])
})

t.test('on: geoloc=true, whole body with rest_url naming the filter', async (t) => {
  const s = await setup(t, ON)
  await place(s, 'Dome', P.lat, P.lng)
  await place(s, 'Bare')
  const event = eventsOf(s)
  await event([1])
  await event([2])
  const res = await s.list('?geoloc=1')
  t.equal(res.statusCode, 200)
  t.strictSame(res.json(), {
    events: [eventRecord(1, { venue: [venueRecord(1, 'Dome', { geo_lat: P.lat, geo_lng: P.lng })] })],
    rest_url: `${EVENTS_URL}?page=1&per_page=10&${WINDOW}&geoloc=true`,
    total: 1,
    total_pages: 1,
  })
  t.equal(res.headers['x-total'], '1')
  t.equal(res.headers['x-total-pages'], '1')
})

t.test('on: the geofence boundary: 40.1 km in, 40.3 km out, north, south, east and west (default 40.2 km)', async (t) => {
  const s = await setup(t, ON)
  const dLng1 = eastOffset(P.lat, 40.1)
  const dLng3 = eastOffset(P.lat, 40.3)
  const spots: Array<[string, number, number, number]> = [
    ['North In', northOf(P.lat, 40.1), P.lng, 40.1],
    ['North Out', northOf(P.lat, 40.3), P.lng, 40.3],
    ['South In', northOf(P.lat, -40.1), P.lng, 40.1],
    ['South Out', northOf(P.lat, -40.3), P.lng, 40.3],
    ['East In', P.lat, P.lng + dLng1, 40.1],
    ['East Out', P.lat, P.lng + dLng3, 40.3],
    ['West In', P.lat, P.lng - dLng1, 40.1],
    ['West Out', P.lat, P.lng - dLng3, 40.3],
    ['Centre', P.lat, P.lng, 0],
  ]
  const event = eventsOf(s)
  for (const [name, lat, lng, km] of spots) {
    t.ok(Math.abs(haversine(P.lat, P.lng, lat, lng) - km) < 1e-9, `${name}: ${km} km from the point`)
    const venue = await place(s, name, lat, lng)
    await event([venue.id])
  }
  const res = await s.list(`${near(P.lat, P.lng)}&per_page=50`)
  t.equal(res.statusCode, 200)
  t.strictSame(res.json(), {
    events: [1, 3, 5, 7, 9].map((id) => {
      const [name, lat, lng] = spots[id - 1]!
      return eventRecord(id, { venue: [venueRecord(id, name, { geo_lat: lat, geo_lng: lng })] })
    }),
    rest_url: `${EVENTS_URL}?page=1&per_page=50&${WINDOW}&geoloc_lat=48.2085&geoloc_lng=16.3731`,
    total: 5,
    total_pages: 1,
  })
  // The fence is measured from the point sent: moved 0.2 km north, North Out comes in and South In goes out.
  t.same(await ids(t, s, near(northOf(P.lat, 0.2), P.lng)), [1, 2, 5, 7, 9])
})

t.test('on: CALENDAR_GEOFENCE_KM sets the radius', async (t) => {
  for (const [km, expected] of [[40.2, [1, 3]], [40.35, [1, 2, 3]], [40.05, [3]], [0.001, [3]], [500, [1, 2, 3, 4]]] as const) {
    const s = await setup(t, { config: { extensions: new Set(['geoloc']), geofenceKm: km } })
    const event = eventsOf(s)
    await event([(await place(s, 'In', northOf(P.lat, 40.1), P.lng)).id])
    await event([(await place(s, 'Out', northOf(P.lat, -40.3), P.lng)).id])
    await event([(await place(s, 'Here', P.lat, P.lng)).id])
    await event([(await place(s, 'Graz', 47.0707, 15.4395)).id]) // 144.56 km
    t.same(await ids(t, s, near(P.lat, P.lng)), expected, `geofence ${km} km`)
  }
})

t.test('on: across the antimeridian (179.9° and −179.9° on the equator are 22 km apart)', async (t) => {
  const s = await setup(t, ON)
  const event = eventsOf(s)
  await event([(await place(s, 'East Edge', 0, 179.9)).id]) // 1
  await event([(await place(s, 'West Edge', 0, -179.9)).id]) // 2
  await event([(await place(s, 'Further East', 0, 179.5)).id]) // 3: 66.7 km from −179.9
  await event([(await place(s, 'Meridian 180', 0, 180)).id]) // 4
  await event([(await place(s, 'Fiji North', 60, 179.8)).id]) // 5
  t.ok(Math.abs(haversine(0, -179.9, 0, 179.9) - 22.239) < 0.001)
  t.same(await ids(t, s, near(0, -179.9)), [1, 2, 4], 'point west of the line, venue east of it')
  t.same(await ids(t, s, near(0, 179.9)), [1, 2, 4], 'point east of the line, venue west of it')
  t.same(await ids(t, s, near(0, 180)), [1, 2, 4], 'point on the line (180)')
  t.same(await ids(t, s, near(0, -180)), [1, 2, 4], 'point on the line (−180)')
  t.same(await ids(t, s, near(0, 179.6)), [1, 3], '179.6: 179.9 (33 km) and 179.5 (11 km) in; 180 (44 km) and −179.9 (56 km) out')
  t.ok(Math.abs(haversine(0, 179.6, 0, -179.9) - 55.6) < 0.1)
  // At 60° N a degree of longitude is half as long: 179.8 and −179.7 are 0.5° = 27.8 km apart.
  t.same(await ids(t, s, near(60, -179.7)), [5])
  t.same(await ids(t, s, near(60, -179.3)), [], '0.9° at 60° N is 50 km')
})

t.test('on: near the poles (89.9° with the opposite longitude is 22 km away)', async (t) => {
  const s = await setup(t, ON)
  const event = eventsOf(s)
  await event([(await place(s, 'Arctic Zero', 89.9, 0)).id]) // 1
  await event([(await place(s, 'Arctic Opposite', 89.9, 180)).id]) // 2
  await event([(await place(s, 'Arctic Side', 89.9, -90)).id]) // 3
  await event([(await place(s, 'Arctic Far', 89.5, 180)).id]) // 4: 0.6° from (89.9, 0) = 66.7 km
  await event([(await place(s, 'North Pole', 90, 0)).id]) // 5
  await event([(await place(s, 'Antarctic', -89.9, 45)).id]) // 6
  await event([(await place(s, 'Antarctic Opposite', -89.9, -135)).id]) // 7
  t.ok(Math.abs(haversine(89.9, 0, 89.9, 180) - 22.239) < 0.001)
  t.same(await ids(t, s, near(89.9, 0)), [1, 2, 3, 5], '89.9° N, 0°: opposite and side longitudes match, 89.5° does not')
  t.same(await ids(t, s, near(89.9, 180)), [1, 2, 3, 5])
  t.same(await ids(t, s, near(90, 0)), [1, 2, 3, 5], 'the pole itself: every longitude, within 0.36°')
  t.same(await ids(t, s, near(90, 77)), [1, 2, 3, 5], 'the pole with any longitude is the same point')
  t.same(await ids(t, s, near(89.8, 180)), [1, 2, 3, 4, 5], '89.8° N, 180°: all within 34 km, 89.9° N 0° across the pole')
  t.same(await ids(t, s, near(89.7, 0)), [1, 3, 5], '89.7° N, 0°: 89.9° N 180° is 0.4° away (44 km)')
  t.same(await ids(t, s, near(-89.9, 45)), [6, 7], 'the south pole too')
  t.same(await ids(t, s, near(-90, 0)), [6, 7])
})

t.test('on: near the poles, a venue due east on the same parallel within the fence matches (box wide enough)', async (t) => {
  const s = await setup(t, ON)
  const event = eventsOf(s)
  const cases: Array<[number, number]> = [[89.5, 40.1], [89, 40.1], [85, 40.199], [80, 40.199], [60, 40.199]]
  for (const [lat, km] of cases) {
    const dLng = eastOffset(lat, km)
    t.ok(Math.abs(haversine(lat, 0, lat, dLng) - km) < 1e-9, `${lat}°: ${km} km east is ${dLng.toFixed(4)}° of longitude`)
    await event([(await place(s, `East ${String(lat)}`, lat, dLng)).id])
  }
  for (const [i, [lat]] of cases.entries()) {
    t.same(await ids(t, s, near(lat, 0)), [i + 1], `point at ${lat}° N, 0°`)
    t.same(await ids(t, s, near(-lat, 0)), [], 'the mirror point in the south is far away')
  }
  // The same to the west, across the antimeridian, in the south.
  const s2 = await setup(t, ON)
  const event2 = eventsOf(s2)
  const dLng = eastOffset(-89.5, 40.1)
  await event2([(await place(s2, 'South West', -89.5, -179 - dLng + 360)).id])
  t.ok(Math.abs(haversine(-89.5, -179, -89.5, -179 - dLng + 360) - 40.1) < 1e-9)
  t.same(await ids(t, s2, near(-89.5, -179)), [1], '89.5° S, due west across the antimeridian')
})

t.test('on: venues without coordinates and events without venues never match a point', async (t) => {
  const s = await setup(t, ON)
  const event = eventsOf(s)
  await event([(await place(s, 'Bare')).id]) // 1
  await event([]) // 2
  await event([(await place(s, 'Zero', 0, 0)).id]) // 3: (0, 0) is a real place, not "unknown"
  t.same(await ids(t, s, near(0, 0)), [3])
  t.same(await ids(t, s, near(P.lat, P.lng)), [])
  const res = await s.list(near(P.lat, P.lng))
  t.strictSame(res.json(), { events: [], rest_url: `${EVENTS_URL}?page=1&per_page=10&${WINDOW}&geoloc_lat=48.2085&geoloc_lng=16.3731`, total: 0, total_pages: 0 })
  t.same(await ids(t, s, `${near(0, 0)}&geoloc=false`), [], 'geoloc=false and a point: nothing can be both')
  t.same(await ids(t, s, `${near(0, 0)}&geoloc=true`), [3])
})

t.test('on: several venues: any published venue within the fence matches; drafts and trashed ones do not count', async (t) => {
  const s = await setup(t, ON)
  const far = await place(s, 'Far', -33.8568, 151.2153) // 1
  const closeBy = await place(s, 'Close', northOf(P.lat, 10), P.lng) // 2
  const hidden = await place(s, 'Hidden', northOf(P.lat, 5), P.lng, { status: 'draft' }) // 3
  const pending = await place(s, 'Pending', northOf(P.lat, 6), P.lng, { status: 'pending' }) // 4
  const doomed = await place(s, 'Doomed', northOf(P.lat, 7), P.lng) // 5
  const bare = await place(s, 'Bare') // 6
  const alsoClose = await place(s, 'Also Close', northOf(P.lat, -3), P.lng) // 7
  const event = eventsOf(s)
  await event([far.id, closeBy.id]) // 1: far and near → matches
  await event([closeBy.id, far.id]) // 2: order does not matter
  await event([far.id, hidden.id]) // 3: the near one is a draft
  await event([far.id, pending.id]) // 4: the near one is pending
  await event([far.id, doomed.id]) // 5: the near one will be trashed
  await event([bare.id, far.id]) // 6: no near one at all
  await event([closeBy.id, alsoClose.id, bare.id]) // 7: two near ones → listed once
  t.equal((await s.inject({ method: 'DELETE', url: `${VENUES}/${doomed.id}`, headers: s.editor })).statusCode, 200)
  const res = await s.list(near(P.lat, P.lng))
  t.same(idsOf(res), [1, 2, 7])
  t.equal(res.json().total, 3, 'counted once each')
  t.same(await ids(t, s, near(P.lat, P.lng), s.editor), [1, 2, 7], 'an editor sees the same events: unpublished venues never count')
  t.same(await ids(t, s, near(-33.8568, 151.2153)), [1, 2, 3, 4, 5, 6], 'around the far venue')
  // The matching event is returned with all its readable venues.
  t.strictSame(res.json<{ events: Event[] }>().events[0]!.venue.map((v) => v.id), [1, 2])
  // Publishing the draft venue makes event 3 match; restoring the trashed one, event 5.
  t.equal((await s.inject({ method: 'PATCH', url: `${VENUES}/${hidden.id}`, headers: s.editor, payload: { status: 'publish' } })).statusCode, 200)
  t.same(await ids(t, s, near(P.lat, P.lng)), [1, 2, 3, 7])
})

t.test('on: combined with dates, categories and pagination (rest_url, next link, following it)', async (t) => {
  const s = await setup(t, ON)
  const rock = await s.category('Rock') // 1
  await s.category('Jazz') // 2
  const inside = await place(s, 'Inside', northOf(P.lat, 12), P.lng) // 1
  const outside = await place(s, 'Outside', northOf(P.lat, 80), P.lng) // 2
  const event = eventsOf(s)
  const day = (d: string, fields: Body = {}): Body => ({ start_date: `2026-07-${d} 10:00:00`, end_date: `2026-07-${d} 11:00:00`, ...fields })
  await event([inside.id], day('01', { categories: [rock.id] })) // 1 ✓
  await event([inside.id], day('02', { categories: ['jazz'] })) // 2 wrong category
  await event([outside.id], day('03', { categories: [rock.id] })) // 3 outside
  await event([inside.id], day('04', { categories: [rock.id, 2] })) // 4 ✓
  await event([inside.id], day('20', { categories: [rock.id] })) // 5 after end_date
  await event([inside.id, outside.id], day('05', { categories: ['rock'] })) // 6 ✓
  await event([], day('06', { categories: [rock.id] })) // 7 no venue
  await event([inside.id], { start_date: '2026-06-01 10:00:00', end_date: '2026-06-01 11:00:00', categories: [rock.id] }) // 8 past
  await event([inside.id], day('07', { categories: [rock.id] })) // 9 ✓
  const query = `${near(P.lat, P.lng)}&start_date=2026-07-01&end_date=2026-07-10&categories=rock&geoloc=true&per_page=2`
  const first = await s.list(query)
  t.equal(first.statusCode, 200)
  const common = 'start_date=2026-07-01T00%3A00%3A00%2B00%3A00&end_date=2026-07-10T23%3A59%3A59%2B00%3A00&geoloc_lat=48.2085&geoloc_lng=16.3731&categories=rock&geoloc=true'
  const url = (page: number) => `${EVENTS_URL}?page=${page}&per_page=2&${common}`
  t.strictSame({ ...first.json(), events: [] }, { events: [], rest_url: url(1), next_rest_url: url(2), total: 4, total_pages: 2 })
  t.same(idsOf(first), [1, 4])
  t.equal(first.headers['x-total'], '4')
  t.equal(first.headers['x-total-pages'], '2')
  t.equal(first.headers.link, `<${url(2)}>; rel="next"`)
  const link = new URL(first.json<{ next_rest_url: string }>().next_rest_url)
  const second = await s.inject({ url: link.pathname + link.search })
  t.equal(second.statusCode, 200)
  t.same(idsOf(second), [6, 9])
  t.strictSame({ ...second.json(), events: [] }, { events: [], rest_url: url(2), previous_rest_url: url(1), total: 4, total_pages: 2 })
  t.equal(second.headers.link, `<${url(1)}>; rel="prev"`)
  const past = await s.list(`${query}&page=3`)
  expectError(t, past, 404, 'event-archive-page-not-found')
  // The same without the point: the outside event 3 is back (geoloc=true only asks for coordinates).
  t.same(await ids(t, s, '?start_date=2026-07-01&end_date=2026-07-10&categories=rock&geoloc=true'), [1, 3, 4, 6, 9])
  t.same(await ids(t, s, '?start_date=2026-07-01&end_date=2026-07-10&categories=rock&geoloc=false'), [7])
})

t.test('on: combined with every other filter', async (t) => {
  const s = await setup(t, ON)
  await s.tag('Outdoor') // 1
  const org = await s.organizer({ organizer: 'Crew' }) // 1
  const inside = await place(s, 'Inside', northOf(P.lat, 1), P.lng) // 1
  const inside2 = await place(s, 'Inside Two', northOf(P.lat, -1), P.lng) // 2
  const outside = await place(s, 'Outside', 0, 0) // 3
  const event = eventsOf(s)
  await event([inside.id], { description: 'open air', tags: ['outdoor'], featured: true, organizer: [org.id] }) // 1
  await event([inside2.id], { description: 'cellar' }) // 2
  await event([outside.id], { description: 'open air', tags: ['outdoor'], featured: true, organizer: [org.id] }) // 3
  await event([inside.id], { status: 'draft', description: 'open air' }) // 4
  await event([inside.id], { hide_from_listings: true }) // 5
  await event([inside.id], { start_date: '2029-01-01 10:00:00', end_date: '2029-01-01 11:00:00' }) // 6 beyond the default window
  await event([inside2.id]) // 7, a child of 1 (no write field for it)
  await s.db.updateTable('events').set({ post_parent: 1 }).where('id', '=', 7).execute()
  const point = near(P.lat, P.lng)
  const cases: Array<[string, number[], Record<string, string>?]> = [
    ['', [1, 2, 7]],
    ['&search=open%20air', [1]],
    ['&tags=outdoor', [1]],
    ['&tags=1', [1]],
    ['&featured=true', [1]],
    ['&featured=false', [2, 7]],
    [`&venue=${inside2.id}`, [2, 7]],
    [`&venue=${outside.id}`, []],
    [`&organizer=${org.id}`, [1]],
    ['&include=3,5,6,2', [2, 6]],
    ['&post_parent=1', [7]],
    ['&starts_after=2028-12-31', [6]],
    ['&status=draft', [4], s.editor],
    ['', [1, 2, 4, 7], s.editor],
    ['&ticketed=false', [1, 2, 7]],
    ['&geoloc=0', []],
  ]
  for (const [extra, expected, headers] of cases) t.same(await ids(t, s, `${point}${extra}`, headers), expected, extra || '(point only)')
})

t.test('on: the filter works per language (a German list with a German venue)', async (t) => {
  const s = await setup(t, ON)
  await place(s, 'Dome', P.lat, P.lng) // 1, en
  const dom = await s.inject({ method: 'POST', url: `${VENUES}?ml_language=de`, headers: s.editor, payload: { venue: 'Dom', geo_lat: P.lat, geo_lng: P.lng } })
  t.equal(dom.statusCode, 201)
  t.strictSame(dom.json(), venueRecord(2, 'Dom', { geo_lat: P.lat, geo_lng: P.lng, ml_language: 'de' }))
  await s.event('Event 1', { venue: [1] })
  const german = await s.create({ title: 'Veranstaltung', start_date: '2026-07-01 18:00:00', end_date: '2026-07-01 21:00:00', venue: [2] }, s.editor, '?ml_language=de')
  t.equal(german.id, 2)
  t.same(await ids(t, s, near(P.lat, P.lng)), [1])
  t.same(await ids(t, s, `${near(P.lat, P.lng)}&ml_language=de`), [2])
  t.same(await ids(t, s, `${near(0, 0)}&ml_language=de`), [])
  t.same(await ids(t, s, '?geoloc=true&ml_language=de'), [2])
})

t.test('on: an event whose venue moves in or out of the fence follows it', async (t) => {
  const s = await setup(t, ON)
  const hall = await place(s, 'Hall', northOf(P.lat, 40.3), P.lng)
  const event = eventsOf(s)
  await event([hall.id])
  t.same(await ids(t, s, near(P.lat, P.lng)), [])
  const moved = await s.inject({ method: 'PATCH', url: `${VENUES}/${hall.id}`, headers: s.editor, payload: { geo_lat: northOf(P.lat, 40.1), geo_lng: P.lng } })
  t.equal(moved.statusCode, 200)
  t.same(await ids(t, s, near(P.lat, P.lng)), [1])
  // Relinking the event to another venue changes the answer too.
  const other = await place(s, 'Other', 10, 10)
  t.equal((await s.patch(1, { venue: [other.id] })).statusCode, 200)
  t.same(await ids(t, s, near(P.lat, P.lng)), [])
  t.same(await ids(t, s, near(10, 10)), [1])
  t.equal((await s.patch(1, { venue: [] })).statusCode, 200)
  t.same(await ids(t, s, near(10, 10)), [])
  t.same(await ids(t, s, '?geoloc=false'), [1])
})

t.test('on: the event records carry the venue coordinates', async (t) => {
  const s = await setup(t, ON)
  const hall = await place(s, 'Hall', P.lat, P.lng, { city: 'Wien' })
  const created = await s.event('Event 1', { venue: [hall.id], organizer: [{ organizer: 'Crew' }] })
  const expected = eventRecord(1, {
    venue: [venueRecord(1, 'Hall', { geo_lat: P.lat, geo_lng: P.lng, city: 'Wien' })],
    organizer: [organizerRecord(1, 'Crew')],
  })
  t.strictSame(created, expected)
  const res = await s.list(near(P.lat, P.lng))
  t.strictSame(res.json<{ events: Event[] }>().events, [expected])
})

