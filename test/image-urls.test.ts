/**
 * Image URLs (issue 21, item 10; CONTRACT §2): a write stores the normalised WHATWG form (spaces and
 * non-ASCII percent-encoded, IDN hosts in punycode), so `image.url` is always a valid `uri`; what does
 * not parse is 400 and writes nothing. No stored value may make a read fail: odd URLs written straight
 * into the database, bypassing the API, still read as records and in every list.
 */
import t from 'tap'
import { API } from './helpers/build.js'
import { expectError } from './helpers/errors.js'
import { setup, type Event, type Venue } from './helpers/events.js'
import { TEST_ENGINE } from './helpers/database.js'

/** RFC 3986 URI characters: what `format: uri` accepts after the scheme. */
const URI_CHARS = /^https?:\/\/[A-Za-z0-9\-._~:/?#[\]@!$&'()*+,;=%]+$/

const ODD = [
  'https://img.example/a b.png',
  'https://img.example/a|b.png',
  'https://img.example/{a}.png',
  'https://img.example/a^b.png',
  'https://img.example/a\\b.png',
  'https://img.example/a"b.png',
  'https://img.example/<a>.png',
  'https://img.example/a`b.png',
  'https://img.example/a%zzb.png',
  'https://img.example/a%2.png',
  'https://img.example/café.png',
  'https://例え.jp/a.png',
  'https://img.example/a.png?x={1}|2^3`4',
  'https://img.example/a.png#frag ment|x',
  'https://img.example/[a].png',
]

t.test('item 10: odd image URLs are stored normalised, read back as valid uris, lists never 500', async (t) => {
  const s = await setup(t)
  const stored: string[] = []
  for (const [i, url] of ODD.entries()) {
    const res = await s.inject({ method: 'POST', url: `${API}/venues`, headers: s.editor, payload: { venue: `R${i}`, image: url } })
    t.equal(res.statusCode, 201, `${url}: 201`)
    const image = res.json<Venue>().image
    t.ok(image !== null && URI_CHARS.test(image.url), `${url} → ${image?.url}: a valid uri`)
    stored.push(image?.url ?? '')
  }
  t.equal(stored[0], 'https://img.example/a%20b.png', 'a space is %20')
  t.equal(stored[10], 'https://img.example/caf%C3%A9.png', 'non-ASCII is percent-encoded')
  t.equal(stored[11], 'https://xn--r8jz45g.jp/a.png', 'an IDN host is punycode')
  t.equal(stored[8], 'https://img.example/a%25zzb.png', 'a bad escape: its % is encoded')
  const list = await s.inject({ url: `${API}/venues?per_page=50` })
  t.equal(list.statusCode, 200, 'the venue list')
  // Events, organizers, and an update that changes the title too.
  const event = await s.inject({ method: 'POST', url: `${API}/events`, headers: s.editor, payload: { title: 'E', start_date: '2026-07-01 10:00', end_date: '2026-07-01 11:00', image: ODD[1] } })
  t.equal(event.statusCode, 201)
  const update = await s.patch(1, { title: 'Changed', image: ODD[3] })
  t.equal(update.statusCode, 200, 'PATCH with an odd image: 200')
  t.equal(update.json<Event>().image?.url, 'https://img.example/a%5Eb.png')
  const organizer = await s.inject({ method: 'POST', url: `${API}/organizers`, headers: s.editor, payload: { organizer: 'O', image: ODD[7] } })
  t.equal(organizer.statusCode, 201)
  // What does not parse is 400, and nothing is written.
  for (const bad of ['https://', 'https://exa mple.com/a.png', 'http://[::1/a.png', 'https://a%zz.example/x.png', 'ftp://img.example/a.png']) {
    const res = await s.inject({ method: 'POST', url: `${API}/venues`, headers: s.editor, payload: { venue: 'Bad', image: bad } })
    expectError(t, res, 400, 'rest_invalid_param', ['image'])
  }
  const bad = await s.patch(1, { title: 'Not saved', image: 'https://exa mple.com/a.png' })
  expectError(t, bad, 400, 'rest_invalid_param', ['image'])
  t.equal((await s.get(1)).json<Event>().title, 'Changed', 'a refused update writes nothing')
})

t.test('item 10: odd URLs stored straight in the database never make a read fail', async (t) => {
  const s = await setup(t)
  await s.venue({ venue: 'Hall', image: 'https://img.example/ok.png' })
  await s.organizer({ organizer: 'Club', image: 'https://img.example/ok.png' })
  await s.event('Night', { image: 'https://img.example/ok.png', venue: [1], organizer: [1] })
  // PostgreSQL cannot store U+0000 at all: that one is for SQLite only.
  const raw = [...ODD, 'not a url at all', '', 'javascript:alert(1)', 'https://img.example/\u0000x', 'https://img.example/\n', '%%%', 'https://例え.jp/ a']
    .filter((url) => TEST_ENGINE === 'sqlite' || !url.includes('\u0000'))
  for (const url of raw) {
    await s.db.updateTable('images').set({ url }).execute()
    for (const path of ['venues/1', 'organizers/1', 'events/1', 'venues', 'organizers', 'events', 'events?search=Night']) {
      const res = await s.inject({ url: `${API}/${path}` })
      t.equal(res.statusCode, 200, `${JSON.stringify(url)}: ${path} 200`)
    }
  }
})
