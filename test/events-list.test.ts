/**
 * GET /events: the envelope and pages (CONTRACT §3), every filter alone and combined, the date window with
 * its defaults, whole-day widening and time zones (§4, reference §6.2), visibility by role and status (§6),
 * password-protected and hidden events, and the "fast by design" checks (query plans, bounded queries).
 */
import t from 'tap'
import type { Test } from 'tap'
import { build } from './helpers/build.js'
import { expectError } from './helpers/errors.js'
import { EVENTS, EVENTS_URL, eventRecord, eventsOf, idsOf, recordStatements, restUrlOf, setup, type Body, type Event, type Setup } from './helpers/events.js'

/** The default window of the pinned clock (2026-06-15 12:00 UTC) on a UTC site, as rest_url shows it. */
const WINDOW = 'start_date=2026-06-15T00%3A00%3A00%2B00%3A00&end_date=2028-06-15T23%3A59%3A59%2B00%3A00'

/** Start and end on one day: `on('2026-07-01', '10:00', '11:00')`. */
function on(day: string, from: string, to: string, fields: Body = {}): Body {
  return { start_date: `${day} ${from}:00`, end_date: `${day} ${to}:00`, ...fields }
}

async function ids(s: Setup, query: string, headers: Record<string, string> = {}): Promise<number[]> {
  const res = await s.list(query, headers)
  if (res.statusCode !== 200) return [-res.statusCode]
  return idsOf(res)
}

/**
 * P past (2026-06-01), A 2026-07-01, B 2026-07-02, C 2026-07-03 (each 10:00–11:00 UTC), F 2029-01-01, beyond
 * the default window: ids 1..5.
 */
async function fiveDays(t: Test) {
  const s = await setup(t)
  await s.event('P', on('2026-06-01', '10:00', '11:00'))
  await s.event('A', on('2026-07-01', '10:00', '11:00'))
  await s.event('B', on('2026-07-02', '10:00', '11:00'))
  await s.event('C', on('2026-07-03', '10:00', '11:00'))
  await s.event('F', on('2029-01-01', '10:00', '11:00'))
  return s
}
const [P, A, B, C, F] = [1, 2, 3, 4, 5]

// -------------------------------------------------------------------------------------------- envelope

t.test('list: an empty result is page 1 with total 0, the default window in rest_url', async (t) => {
  const { list } = await setup(t)
  const res = await list()
  t.equal(res.statusCode, 200)
  t.strictSame(res.json(), { events: [], rest_url: `${EVENTS_URL}?page=1&per_page=10&${WINDOW}`, total: 0, total_pages: 0 })
  t.equal(res.headers['x-total'], '0')
  t.equal(res.headers['x-total-pages'], '0')
  t.equal(res.headers.link, undefined)
})

t.test('list: whole records, no json_ld, with X-Total and X-Total-Pages', async (t) => {
  const { event, list } = await setup(t)
  await event('Event 1', { start_date: '2026-07-02 10:00:00', end_date: '2026-07-02 12:00:00', description: 'First', excerpt: 'One' })
  await event('Event 2')
  const res = await list()
  t.equal(res.statusCode, 200)
  t.strictSame(res.json(), {
    events: [
      eventRecord(2),
      eventRecord(1, { start_date: '2026-07-02 10:00:00', end_date: '2026-07-02 12:00:00', description: 'First', excerpt: 'One' }),
    ],
    rest_url: `${EVENTS_URL}?page=1&per_page=10&${WINDOW}`,
    total: 2,
    total_pages: 1,
  })
  t.equal(res.headers['x-total'], '2')
  t.equal(res.headers['x-total-pages'], '1')
  t.equal(res.headers.link, undefined)
  for (const e of eventsOf(res)) t.notOk('json_ld' in e, 'no json_ld in a list')
})

t.test('list: pages with next/previous links, Link header, clamp, and 404 past the last page', async (t) => {
  const s = await setup(t)
  for (const day of ['01', '02', '03']) await s.event(`E${day}`, on(`2026-07-${day}`, '10:00', '11:00'))
  const url = (page: number, perPage = 2) => `${EVENTS_URL}?page=${page}&per_page=${perPage}&${WINDOW}`

  const first = await s.list('?per_page=2')
  t.equal(first.statusCode, 200)
  t.same(idsOf(first), [1, 2])
  t.strictSame({ ...first.json(), events: [] }, { events: [], rest_url: url(1), next_rest_url: url(2), total: 3, total_pages: 2 })
  t.equal(first.headers['x-total'], '3')
  t.equal(first.headers['x-total-pages'], '2')
  t.equal(first.headers.link, `<${url(2)}>; rel="next"`)

  const second = await s.list('?per_page=2&page=2')
  t.same(idsOf(second), [3])
  t.strictSame({ ...second.json(), events: [] }, { events: [], rest_url: url(2), previous_rest_url: url(1), total: 3, total_pages: 2 })
  t.equal(second.headers.link, `<${url(1)}>; rel="prev"`)

  const middle = await s.list('?per_page=1&page=2')
  t.equal(middle.headers.link, `<${url(3, 1)}>; rel="next", <${url(1, 1)}>; rel="prev"`)

  const past = await s.list('?per_page=2&page=3')
  t.strictSame(past.json(), {
    code: 'event-archive-page-not-found',
    message: 'The requested event archive page does not exist.',
    data: { status: 404 },
  })
  t.equal(past.statusCode, 404)
  expectError(t, await s.list('?page=2'), 404, 'event-archive-page-not-found')

  const clamped = await s.list('?per_page=100')
  t.equal(restUrlOf(clamped), url(1, 50))
  expectError(t, await s.list('?per_page=0'), 400, 'rest_invalid_param', ['per_page'])
  expectError(t, await s.list('?page=0'), 400, 'rest_invalid_param', ['page'])
})

t.test('list: page 2 of an empty result is 404, page 1 is 200', async (t) => {
  const { list } = await setup(t)
  t.equal((await list('?page=1')).statusCode, 200)
  expectError(t, await list('?page=2'), 404, 'event-archive-page-not-found')
})

t.test('list: ordered by UTC start (not wall time), then by id', async (t) => {
  const s = await setup(t)
  // 10:00 in New York is 14:00 UTC: later than the 12:00 UTC event although its wall time is earlier.
  await s.event('New York', { ...on('2026-07-01', '10:00', '11:00'), timezone: 'America/New_York' })
  await s.event('Noon UTC', on('2026-07-01', '12:00', '13:00'))
  await s.event('Two UTC', on('2026-07-01', '14:00', '15:00'))
  await s.event('Early', on('2026-07-01', '09:00', '20:00'))
  t.same(await ids(s, ''), [4, 2, 1, 3])
})

t.test('list: only the requested language (the default language without ml_language)', async (t) => {
  const s = await setup(t)
  await s.event('English')
  await s.create({ title: 'Deutsch', start_date: '2026-07-01 18:00', end_date: '2026-07-01 19:00' }, s.editor, '?ml_language=de')
  t.same(await ids(s, ''), [1])
  t.same(await ids(s, '?ml_language=en'), [1])
  t.same(await ids(s, '?ml_language=de'), [2])
  t.same(await ids(s, '?ml_language=es'), [])
})

t.test('list: categories, tags, venue and organizer of another language are unknown in this one (400 naming the filter), by id as by slug', async (t) => {
  const s = await setup(t)
  const kategorie = await s.category('Musik', '?ml_language=de')
  const schlagwort = await s.tag('Draussen', '?ml_language=de')
  const saal = await s.venue({ venue: 'Saal', ml_language: 'de' })
  const veranstalter = await s.organizer({ organizer: 'Verein', ml_language: 'de' })
  const deutsch = await s.create({
    title: 'Deutsch', start_date: '2026-07-01 18:00', end_date: '2026-07-01 19:00',
    categories: [kategorie.id], tags: [schlagwort.id], venue: [saal.id], organizer: [veranstalter.id],
  }, s.editor, '?ml_language=de')
  const filters: Array<[string, string]> = [
    ['categories', String(kategorie.id)], ['categories', kategorie.slug], ['tags', String(schlagwort.id)], ['tags', schlagwort.slug],
    ['venue', String(saal.id)], ['organizer', String(veranstalter.id)],
  ]
  for (const [name, value] of filters) {
    t.same(await ids(s, `?ml_language=de&${name}=${value}`), [deutsch.id], `${name}=${value} in German`)
    for (const language of ['', '&ml_language=en', '&ml_language=es']) {
      expectError(t, await s.list(`?${name}=${value}${language}`), 400, 'rest_invalid_param', [name])
    }
  }
})

// ----------------------------------------------------------------------------------- the date window

t.test('list: the default window is today 00:00 to today+2y 23:59:59; past events are hidden', async (t) => {
  const s = await setup(t)
  await s.event('Yesterday', on('2026-06-14', '10:00', '11:00'))
  await s.event('Earlier today', on('2026-06-15', '08:00', '09:00'))
  await s.event('Running since yesterday', { start_date: '2026-06-14 23:00:00', end_date: '2026-06-15 13:00:00' })
  await s.event('Last second', { start_date: '2028-06-15 22:00:00', end_date: '2028-06-15 23:59:59' })
  await s.event('Ends after the window', { start_date: '2028-06-15 23:00:00', end_date: '2028-06-16 00:00:00' })
  await s.event('Starts after the window', on('2028-06-16', '10:00', '11:00'))
  await s.event('First second', { start_date: '2026-06-15 00:00:00', end_date: '2026-06-15 00:30:00' })
  const res = await s.list()
  t.same(idsOf(res), [7, 2, 4])
  t.equal(restUrlOf(res), `${EVENTS_URL}?page=1&per_page=10&${WINDOW}`)
  // An explicit start_date finds the past ones (the end default still applies).
  t.same(await ids(s, '?start_date=2026-06-01'), [1, 3, 7, 2, 4])
})

t.test('list: start_date alone keeps events starting at or after it, widened to 00:00 unless strict', async (t) => {
  const s = await fiveDays(t)
  t.same(await ids(s, '?start_date=2026-07-02'), [B, C])
  t.same(await ids(s, '?start_date=2026-07-02%2023:00'), [B, C], 'widened to 00:00:00 of its day')
  t.same(await ids(s, '?start_date=2026-07-02%2010:00:00&strict_dates=true'), [B, C], 'start = X is kept')
  t.same(await ids(s, '?start_date=2026-07-02%2010:00:01&strict_dates=true'), [C])
  t.same(await ids(s, '?start_date=2026-05-01'), [P, A, B, C], 'the default end_date still applies')
  const res = await s.list('?start_date=2026-07-02%2023:00')
  t.equal(restUrlOf(res), `${EVENTS_URL}?page=1&per_page=10&start_date=2026-07-02T00%3A00%3A00%2B00%3A00&end_date=2028-06-15T23%3A59%3A59%2B00%3A00`)
  const strict = await s.list('?start_date=2026-07-02%2010:00:01&strict_dates=1')
  t.equal(restUrlOf(strict), `${EVENTS_URL}?page=1&per_page=10&start_date=2026-07-02T10%3A00%3A01%2B00%3A00&end_date=2028-06-15T23%3A59%3A59%2B00%3A00&strict_dates=true`)
})

t.test('list: end_date alone keeps events ending at or before it, widened to 23:59:59 unless strict', async (t) => {
  const s = await fiveDays(t)
  t.same(await ids(s, '?end_date=2026-07-02'), [A, B], 'the default start_date (today) still applies')
  t.same(await ids(s, '?end_date=2026-07-02%2005:00'), [A, B], 'widened to 23:59:59 of its day')
  t.same(await ids(s, '?end_date=2026-07-02%2011:00:00&strict_dates=true'), [A, B], 'end = X is kept')
  t.same(await ids(s, '?end_date=2026-07-02%2010:59:59&strict_dates=true'), [A])
  t.same(await ids(s, '?end_date=2030-01-01'), [A, B, C, F])
  t.equal(restUrlOf(await s.list('?end_date=2026-07-02%2005:00')),
    `${EVENTS_URL}?page=1&per_page=10&start_date=2026-06-15T00%3A00%3A00%2B00%3A00&end_date=2026-07-02T23%3A59%3A59%2B00%3A00`)
})

t.test('list: start_date and end_date together', async (t) => {
  const s = await fiveDays(t)
  t.same(await ids(s, '?start_date=2026-07-01&end_date=2026-07-02'), [A, B])
  t.same(await ids(s, '?start_date=2026-06-01&end_date=2026-06-01'), [P])
  t.same(await ids(s, '?start_date=2026-07-02&end_date=2026-07-01'), [], 'an empty range is no error')
})

t.test('list: starts_before alone: start < X (23:59:59 unless strict), and no default window', async (t) => {
  const s = await fiveDays(t)
  t.same(await ids(s, '?starts_before=2026-07-02'), [P, A, B])
  t.same(await ids(s, '?starts_before=2026-07-02%2010:00:00&strict_dates=true'), [P, A], 'start = X is left out')
  t.same(await ids(s, '?starts_before=2030-01-01'), [P, A, B, C, F], 'neither default applies')
  t.equal(restUrlOf(await s.list('?starts_before=2026-07-02')), `${EVENTS_URL}?page=1&per_page=10&starts_before=2026-07-02T23%3A59%3A59%2B00%3A00`)
})

t.test('list: starts_after alone: start > X (23:59:59 unless strict), and no default window', async (t) => {
  const s = await fiveDays(t)
  t.same(await ids(s, '?starts_after=2026-07-01'), [B, C, F], 'widened to the end of its day')
  t.same(await ids(s, '?starts_after=2026-07-01%2010:00:00&strict_dates=true'), [B, C, F], 'start = X is left out')
  t.same(await ids(s, '?starts_after=2026-07-01%2009:59:59&strict_dates=true'), [A, B, C, F])
  t.same(await ids(s, '?starts_after=2026-05-01'), [P, A, B, C, F], 'neither default applies')
})

t.test('list: an end bound keeps an event that starts and ends at the bound (the listing index stops at the bound, not before)', async (t) => {
  const s = await setup(t)
  await s.event('An instant', on('2026-07-02', '11:00', '11:00'))
  await s.event('Up to the bound', on('2026-07-02', '10:00', '11:00'))
  await s.event('A second later', on('2026-07-02', '11:00', '11:01'))
  t.same(await ids(s, '?end_date=2026-07-02%2011:00:00&strict_dates=true'), [2, 1], 'end_date: end <= X, so start <= X, kept at X')
  t.same(await ids(s, '?start_date=2026-07-02%2011:00:00&end_date=2026-07-02%2011:00:00&strict_dates=true'), [1], 'a window of one instant holds the event of that instant')
  t.same(await ids(s, '?ends_before=2026-07-02%2011:00:01&strict_dates=true'), [2, 1], 'ends_before: end < X, so start < X')
  t.same(await ids(s, '?ends_before=2026-07-02%2011:00:00&strict_dates=true'), [], 'ends_before the instant: neither')
  t.equal((await s.list('?end_date=2026-07-02%2011:00:00&strict_dates=true')).headers['x-total'], '2', 'the total counts them too')
})

t.test('list: ends_before alone: end < X (23:59:59 unless strict), and no default window', async (t) => {
  const s = await fiveDays(t)
  t.same(await ids(s, '?ends_before=2026-07-02'), [P, A, B])
  t.same(await ids(s, '?ends_before=2026-07-02%2011:00:00&strict_dates=true'), [P, A], 'end = X is left out')
  t.same(await ids(s, '?ends_before=2026-06-01'), [P], 'a past event without any start_date')
})

t.test('list: ends_after alone: end > X (23:59:59 unless strict), and no default window', async (t) => {
  const s = await fiveDays(t)
  t.same(await ids(s, '?ends_after=2026-07-02'), [C, F])
  t.same(await ids(s, '?ends_after=2026-07-02%2011:00:00&strict_dates=true'), [C, F], 'end = X is left out')
  t.same(await ids(s, '?ends_after=2026-07-02%2010:59:59&strict_dates=true'), [B, C, F])
  t.same(await ids(s, '?ends_after=2026-05-01'), [P, A, B, C, F])
})

t.test('list: relative filters combine with each other and with an explicit start_date or end_date', async (t) => {
  const s = await fiveDays(t)
  t.same(await ids(s, '?starts_after=2026-06-30&ends_before=2026-07-02'), [A, B])
  t.same(await ids(s, '?starts_after=2026-06-30&starts_before=2026-07-03'), [A, B, C])
  t.same(await ids(s, '?ends_after=2026-06-01&ends_before=2026-07-01'), [A], 'P ends on the 1st, widened to its end')
  // An explicit start_date stays; the default end_date is dropped because a relative filter is sent.
  t.same(await ids(s, '?start_date=2026-07-02&ends_after=2026-07-01'), [B, C, F])
  t.same(await ids(s, '?end_date=2026-07-01&starts_before=2026-07-03'), [P, A])
  const res = await s.list('?ends_after=2026-07-01&start_date=2026-07-02')
  t.equal(restUrlOf(res), `${EVENTS_URL}?page=1&per_page=10&start_date=2026-07-02T00%3A00%3A00%2B00%3A00&ends_after=2026-07-01T23%3A59%3A59%2B00%3A00`)
})

t.test('list: inclusive versus strict at day boundaries (events at 16:00 and 20:00, range 15:00–18:00)', async (t) => {
  const s = await setup(t)
  await s.event('At four', on('2026-07-10', '16:00', '17:00'))
  await s.event('At eight', on('2026-07-10', '20:00', '21:00'))
  const range = 'start_date=2026-07-10%2015:00&end_date=2026-07-10%2018:00'
  t.same(await ids(s, `?${range}`), [1, 2], 'inclusive: the whole day')
  t.same(await ids(s, `?${range}&strict_dates=false`), [1, 2])
  t.same(await ids(s, `?${range}&strict_dates=0`), [1, 2])
  t.same(await ids(s, `?${range}&strict_dates=true`), [1], 'strict: only the 16:00 event')
  t.same(await ids(s, `?${range}&strict_dates=1`), [1])
  expectError(t, await s.list(`?${range}&strict_dates=yes`), 400, 'rest_invalid_param', ['strict_dates'])
})

t.test('list: date values in every accepted form', async (t) => {
  const s = await setup(t)
  await s.event('A', on('2026-07-01', '10:00', '11:00'))
  await s.event('B', on('2026-07-02', '10:00', '11:00'))
  const strict = (q: string) => ids(s, `?${q}&strict_dates=true`)
  // 1782900000 is 2026-07-01T10:00:00Z.
  t.same(await strict('start_date=1782900000'), [1, 2], 'UNIX timestamp')
  t.same(await strict('start_date=1782900001'), [2])
  t.same(await strict('start_date=2026-07-01T12:00:00%2B02:00'), [1, 2], 'ISO 8601 with an offset')
  t.same(await strict('start_date=2026-07-01T12:00:01%2B02:00'), [2])
  t.same(await strict('start_date=2026-07-01T10:00:01Z'), [2], 'ISO 8601 with Z')
  t.same(await strict('start_date=2026-07-01%2010:01'), [2], 'without seconds')
  t.same(await strict('start_date=2026-07-01T10:00'), [1, 2], 'with T, no offset: site wall time')
  // Without strict_dates the offset is converted first, then widened: 23:30 at -05:00 is 04:30 UTC on the 2nd.
  t.same(await ids(s, '?start_date=2026-07-01T23:30:00-05:00'), [2])
  t.same(await ids(s, '?end_date=2026-07-01T23:30:00-05:00'), [1, 2])
  t.same(await strict('end_date=2026-07-01T23:30:00-05:00'), [1])
})

t.test('list: now, today, tomorrow and yesterday follow the pinned clock', async (t) => {
  const s = await setup(t)
  await s.event('Yesterday', on('2026-06-14', '10:00', '11:00'))
  await s.event('This morning', on('2026-06-15', '08:00', '09:00'))
  await s.event('This afternoon', on('2026-06-15', '14:00', '15:00'))
  await s.event('Tomorrow', on('2026-06-16', '10:00', '11:00'))
  t.same(await ids(s, '?start_date=yesterday'), [1, 2, 3, 4])
  t.same(await ids(s, '?start_date=today'), [2, 3, 4])
  t.same(await ids(s, '?start_date=now'), [2, 3, 4], 'now is widened to its day')
  t.same(await ids(s, '?start_date=now&strict_dates=true'), [3, 4])
  t.same(await ids(s, '?start_date=tomorrow'), [4])
  t.same(await ids(s, '?end_date=today'), [2, 3])
  t.same(await ids(s, '?start_date=yesterday&end_date=yesterday'), [1])
  t.same(await ids(s, '?starts_before=now&strict_dates=true'), [1, 2])
  t.same(await ids(s, '?ends_after=now&strict_dates=true'), [3, 4])
})

t.test('list: an invalid date is 400 naming the parameter', async (t) => {
  const { list } = await setup(t)
  for (const name of ['start_date', 'end_date', 'starts_before', 'starts_after', 'ends_before', 'ends_after']) {
    for (const value of ['next%20week', '2026-02-30', '2026-13-01', '2026-07-01%2025:00', '']) {
      expectError(t, await list(`?${name}=${value}`), 400, 'rest_invalid_param', [name])
    }
  }
})

t.test('list: an event in America/New_York on a UTC site is filtered by its UTC instants', async (t) => {
  const s = await setup(t)
  // 20:00–22:00 EDT on 1 July is 00:00–02:00 UTC on 2 July.
  await s.event('Evening in New York', { start_date: '2026-07-01 20:00:00', end_date: '2026-07-01 22:00:00', timezone: 'America/New_York' })
  t.same(await ids(s, '?start_date=2026-07-02'), [1])
  t.same(await ids(s, '?start_date=2026-07-01&end_date=2026-07-01'), [], 'its UTC end is on the 2nd')
  t.same(await ids(s, '?start_date=2026-07-01&end_date=2026-07-02'), [1])
  t.same(await ids(s, '?start_date=2026-07-01T20:00:00-04:00&strict_dates=true'), [1])
  t.same(await ids(s, '?start_date=2026-07-01T20:00:01-04:00&strict_dates=true'), [])
})

t.test('list: events on the daylight-saving change day in New York are found with an explicit start_date', async (t) => {
  const s = await setup(t)
  // 8 March 2026: 02:00 EST becomes 03:00 EDT. 01:00 EST is 06:00 UTC; 03:30 EDT is 07:30 UTC.
  await s.event('Before the change', { start_date: '2026-03-08 01:00:00', end_date: '2026-03-08 04:00:00', timezone: 'America/New_York' })
  await s.event('After the change', { start_date: '2026-03-08 03:30:00', end_date: '2026-03-08 05:00:00', timezone: 'America/New_York' })
  t.same(await ids(s, ''), [], 'both are past: outside the default window')
  t.same(await ids(s, '?start_date=2026-03-08&end_date=2026-03-08'), [1, 2])
  t.same(await ids(s, '?start_date=2026-03-08T07:00:00Z&strict_dates=true'), [2])
  t.same(await ids(s, '?start_date=2026-03-08T06:00:00Z&strict_dates=true&end_date=2026-03-08T08:00:00Z'), [1])
  const [before, after] = eventsOf(await s.list('?start_date=2026-03-01'))
  t.match(before, { timezone_abbr: 'EST', utc_start_date: '2026-03-08 06:00:00', utc_end_date: '2026-03-08 08:00:00' })
  t.match(after, { timezone_abbr: 'EDT', utc_start_date: '2026-03-08 07:30:00', utc_end_date: '2026-03-08 09:00:00' })
})

t.test('list: all-day events span their whole day in their own zone', async (t) => {
  const s = await setup(t)
  await s.event('All day UTC', { start_date: '2026-07-01', end_date: '2026-07-01', all_day: true })
  // All day in Zurich is 2026-06-30 22:00:00 to 2026-07-01 21:59:59 UTC.
  await s.event('All day Zurich', { start_date: '2026-07-01', end_date: '2026-07-01', all_day: true, timezone: 'Europe/Zurich' })
  t.same(await ids(s, '?start_date=2026-07-01&end_date=2026-07-01'), [1])
  t.same(await ids(s, '?start_date=2026-06-30&end_date=2026-07-01'), [2, 1])
  t.same(await ids(s, '?start_date=2026-07-01T00:00:00Z&end_date=2026-07-01T23:59:59Z&strict_dates=true'), [1])
  t.same(await ids(s, '?start_date=2026-07-01T00:00:00Z&end_date=2026-07-01T23:59:58Z&strict_dates=true'), [])
  t.match(eventsOf(await s.list('?start_date=2026-06-30')), [
    { id: 2, all_day: true, start_date: '2026-07-01 00:00:00', end_date: '2026-07-01 23:59:59', utc_start_date: '2026-06-30 22:00:00', utc_end_date: '2026-07-01 21:59:59' },
    { id: 1, all_day: true, start_date: '2026-07-01 00:00:00', end_date: '2026-07-01 23:59:59', utc_start_date: '2026-07-01 00:00:00', utc_end_date: '2026-07-01 23:59:59' },
  ])
})

t.test('list: a site time zone other than UTC moves the day boundaries of the default window', async (t) => {
  const bodies = [
    // 23:30 on the 14th in Zurich: before today there.
    { title: 'Z1', start_date: '2026-06-14T21:30:00Z', end_date: '2026-06-14T22:15:00Z' },
    // 00:30 on the 15th in Zurich: today there, yesterday in UTC.
    { title: 'Z2', start_date: '2026-06-14T22:30:00Z', end_date: '2026-06-14T23:00:00Z' },
    // Ends at 23:59:59 on 2028-06-15 in Zurich: the last second of the window there.
    { title: 'Z3', start_date: '2028-06-15T20:00:00Z', end_date: '2028-06-15T21:59:59Z' },
    // Ends at 00:30 on 2028-06-16 in Zurich: past the window there, inside it in UTC.
    { title: 'Z4', start_date: '2028-06-15T21:00:00Z', end_date: '2028-06-15T22:30:00Z' },
  ]
  const zurich = await setup(t, { config: { timezone: 'Europe/Zurich' } })
  const utc = await setup(t)
  for (const body of bodies) {
    await zurich.create(body)
    await utc.create(body)
  }
  const res = await zurich.list()
  t.same(idsOf(res), [2, 3])
  t.equal(restUrlOf(res), `${EVENTS_URL}?page=1&per_page=10&${WINDOW.replaceAll('%2B00%3A00', '%2B02%3A00')}`, 'the window in Zurich wall time, with its offset')
  t.same(await ids(utc, ''), [3, 4])
  // Without a zone, an event is in the site zone.
  t.match(eventsOf(res)[0], { timezone: 'Europe/Zurich', timezone_abbr: 'CEST', start_date: '2026-06-15 00:30:00', utc_start_date: '2026-06-14 22:30:00' })
})

t.test('list: a site time zone other than UTC moves the day boundaries of explicit dates', async (t) => {
  const s = await setup(t, { config: { timezone: 'Europe/Zurich' } })
  await s.create({ title: 'Late on the 30th UTC', start_date: '2026-06-30T21:59:00Z', end_date: '2026-06-30T21:59:30Z' })
  await s.create({ title: 'Midnight in Zurich', start_date: '2026-06-30T22:00:00Z', end_date: '2026-07-01T21:59:59Z' })
  await s.create({ title: 'Just after', start_date: '2026-07-01T21:00:00Z', end_date: '2026-07-01T22:00:00Z' })
  t.same(await ids(s, '?start_date=2026-07-01&end_date=2026-07-01'), [2], 'the 1st in Zurich is 2026-06-30 22:00 to 2026-07-01 21:59:59 UTC')
  t.same(await ids(s, '?start_date=2026-07-01&end_date=2026-07-02'), [2, 3])
  t.same(await ids(s, '?start_date=2026-06-30&end_date=2026-06-30'), [1])
  // A value without an offset is Zurich wall time; with strict_dates it is exact.
  t.same(await ids(s, '?start_date=2026-07-01%2000:00:00&strict_dates=true&end_date=2026-07-01%2023:59:59'), [2])
  t.same(await ids(s, '?starts_after=2026-06-30'), [2, 3], 'the end of the 30th in Zurich is 21:59:59 UTC')
  t.equal(restUrlOf(await s.list('?start_date=2026-07-01&end_date=2026-07-01')),
    `${EVENTS_URL}?page=1&per_page=10&start_date=2026-07-01T00%3A00%3A00%2B02%3A00&end_date=2026-07-01T23%3A59%3A59%2B02%3A00`)
})

t.test('list: the site time zone decides what today is near midnight', async (t) => {
  // 22:30 UTC on the 15th is 00:30 on the 16th in Zurich.
  const now = new Date('2026-06-15T22:30:00Z')
  const zurich = await setup(t, { config: { timezone: 'Europe/Zurich' }, now })
  const utc = await setup(t, { now })
  for (const s of [zurich, utc]) {
    await s.create({ title: 'Late on the 15th', start_date: '2026-06-15T21:00:00Z', end_date: '2026-06-15T21:30:00Z' })
    await s.create({ title: 'Early on the 16th', start_date: '2026-06-15T23:00:00Z', end_date: '2026-06-15T23:30:00Z' })
  }
  t.same(await ids(zurich, ''), [2])
  t.same(await ids(utc, ''), [1, 2])
  t.same(await ids(zurich, '?start_date=today'), [2])
  t.same(await ids(zurich, '?start_date=yesterday'), [1, 2])
})

// ------------------------------------------------------------------------------------ other filters

t.test('list: search is a case-insensitive literal substring of title or description', async (t) => {
  const s = await setup(t)
  await s.event('100% Jazz')
  await s.event('Jazz_Night')
  await s.event('Rock', { description: 'A JAZZY evening' })
  await s.event('Back\\slash')
  await s.event('Plain', { description: '100 percent' })
  await s.event('Jazz Later', { ...on('2026-06-01', '10:00', '11:00') })
  t.same(await ids(s, '?search=jazz'), [1, 2, 3], 'the date window still applies')
  t.same(await ids(s, '?search=%25'), [1], '% is a plain character')
  t.same(await ids(s, '?search=_'), [2], '_ is a plain character')
  t.same(await ids(s, '?search=%5C'), [4], '\\ is a plain character')
  t.same(await ids(s, '?search=J_zz'), [])
  t.same(await ids(s, '?search=0%25%20j'), [1])
  t.same(await ids(s, '?search=100'), [1, 5], 'title or description')
  t.same(await ids(s, '?search=jazz&start_date=2026-05-01'), [6, 1, 2, 3])
  t.same(await ids(s, '?search='), [1, 2, 3, 4, 5], 'an empty search filters nothing')
  t.equal(restUrlOf(await s.list('?search=100%25%20jazz')), `${EVENTS_URL}?page=1&per_page=10&${WINDOW}&search=100%25%20jazz`)
})

t.test('list: search folds case beyond ASCII, also where a letter folds into ASCII', async (t) => {
  const s = await setup(t)
  await s.event('Zero \u212a') // KELVIN SIGN, lower-cased "k"
  await s.event('Zmo\u0130') // CAPITAL I WITH DOT ABOVE, lower-cased "i" + U+0307
  await s.event('Caf\u00c9 Zoom') // É
  await s.event('Plain', { description: 'ZERO K' })
  t.same(await ids(s, '?search=o%20k'), [1, 4], 'KELVIN SIGN is found by "k", like the ASCII K')
  t.same(await ids(s, '?search=moi'), [2], 'U+0130 is found by "i"')
  t.same(await ids(s, '?search=caf%C3%A9'), [3], 'É by é')
  t.same(await ids(s, '?search=CAF%C3%89%20z'), [3])
})

t.test('list: categories and tags by id or slug, OR within one, AND between the two', async (t) => {
  const s = await setup(t)
  await s.category('Rock') // 1
  await s.category('Jazz') // 2
  await s.category('Pop') // 3
  await s.tag('Outdoor') // 4
  await s.tag('Indoor') // 5
  await s.event('E1', { categories: ['rock'], tags: ['outdoor'] })
  await s.event('E2', { categories: [2] })
  await s.event('E3', { categories: [1, 'jazz'], tags: [4] })
  await s.event('E4')
  await s.event('E5', { categories: ['Pop'], tags: ['Indoor'] })
  t.same(await ids(s, '?categories=rock'), [1, 3])
  t.same(await ids(s, '?categories=1'), [1, 3])
  t.same(await ids(s, '?categories=rock,2'), [1, 2, 3], 'slug and id mixed, OR')
  t.same(await ids(s, '?categories[]=1&categories[]=jazz'), [1, 2, 3])
  t.same(await ids(s, '?categories=1&categories=3'), [1, 3, 5])
  t.same(await ids(s, '?tags=outdoor'), [1, 3])
  t.same(await ids(s, '?tags=4,indoor'), [1, 3, 5])
  t.same(await ids(s, '?categories=jazz&tags=outdoor'), [3], 'AND between categories and tags')
  t.same(await ids(s, '?categories=rock,jazz&tags=4'), [1, 3])
  t.same(await ids(s, '?categories=pop&tags=outdoor'), [])
  // An empty list is refused like any other value that is not one (CONTRACT §1: none is silently dropped).
  for (const name of ['categories', 'tags', 'venue', 'organizer', 'include', 'status']) {
    for (const empty of [`${name}=`, `${name}[]=`, `${name}=,`, `${name}[0]=`]) expectError(t, await s.list(`?${empty}`), 400, 'rest_invalid_param', [name])
  }
  t.equal(restUrlOf(await s.list('?tags=4&categories[]=rock&categories[]=2')),
    `${EVENTS_URL}?page=1&per_page=10&${WINDOW}&tags=4&categories=rock%2C2`)
})

t.test('list: an unknown category or tag, by id or slug, is 400 naming the parameter', async (t) => {
  const s = await setup(t)
  await s.category('Rock') // 1
  await s.tag('Outdoor') // 2
  await s.event('E1', { categories: ['rock'] })
  expectError(t, await s.list('?categories=nope'), 400, 'rest_invalid_param', ['categories'])
  expectError(t, await s.list('?categories=rock,99'), 400, 'rest_invalid_param', ['categories'])
  expectError(t, await s.list('?categories=2'), 400, 'rest_invalid_param', ['categories'])
  expectError(t, await s.list('?categories=outdoor'), 400, 'rest_invalid_param', ['categories'])
  expectError(t, await s.list('?tags=rock'), 400, 'rest_invalid_param', ['tags'])
  expectError(t, await s.list('?tags=1'), 400, 'rest_invalid_param', ['tags'])
  expectError(t, await s.list('?tags=99999999999999999999'), 400, 'rest_invalid_param', ['tags'])
})

t.test('list: venue and organizer by id, OR within one; unknown is 400', async (t) => {
  const s = await setup(t)
  await s.venue({ venue: 'V1' })
  await s.venue({ venue: 'V2' })
  await s.venue({ venue: 'V3' })
  await s.organizer({ organizer: 'O1' })
  await s.organizer({ organizer: 'O2' })
  await s.event('E1', { venue: [1], organizer: [1] })
  await s.event('E2', { venue: [2], organizer: [2] })
  await s.event('E3', { venue: [1, 3], organizer: [1, 2] })
  await s.event('E4')
  t.same(await ids(s, '?venue=1'), [1, 3])
  t.same(await ids(s, '?venue=2,3'), [2, 3])
  t.same(await ids(s, '?venue[]=2&venue[]=3'), [2, 3])
  t.same(await ids(s, '?organizer=2'), [2, 3])
  t.same(await ids(s, '?organizer=1&organizer=2'), [1, 2, 3])
  t.same(await ids(s, '?venue=1&organizer=2'), [3], 'AND between venue and organizer')
  expectError(t, await s.list('?venue=99'), 400, 'rest_invalid_param', ['venue'])
  expectError(t, await s.list('?venue=1,99'), 400, 'rest_invalid_param', ['venue'])
  expectError(t, await s.list('?venue=abc'), 400, 'rest_invalid_param', ['venue'])
  expectError(t, await s.list('?organizer=99'), 400, 'rest_invalid_param', ['organizer'])
  expectError(t, await s.list('?organizer=3'), 400, 'rest_invalid_param', ['organizer'])
})

t.test('list: featured keeps featured (true) or non-featured (false) events', async (t) => {
  const s = await setup(t)
  await s.event('Featured', { featured: true })
  await s.event('Not featured', { featured: false })
  await s.event('Default')
  t.same(await ids(s, '?featured=true'), [1])
  t.same(await ids(s, '?featured=1'), [1])
  t.same(await ids(s, '?featured=false'), [2, 3])
  t.same(await ids(s, '?featured=0'), [2, 3])
  t.same(await ids(s, ''), [1, 2, 3])
  expectError(t, await s.list('?featured=yes'), 400, 'rest_invalid_param', ['featured'])
  t.equal(restUrlOf(await s.list('?featured=1')), `${EVENTS_URL}?page=1&per_page=10&${WINDOW}&featured=true`)
})

t.test('list: status for anonymous callers and subscribers is publish only; other statuses are 400', async (t) => {
  const s = await setup(t)
  await s.event('Published')
  await s.event('Draft', { status: 'draft' })
  await s.event('Pending', { status: 'pending' })
  await s.event('Private', { status: 'private' })
  await s.event('Trashed')
  t.equal((await s.remove(5)).statusCode, 200)
  const subscriber = await s.auth('subscriber')
  for (const headers of [{}, subscriber]) {
    t.same(await ids(s, '', headers), [1])
    t.same(await ids(s, '?status=publish', headers), [1])
    for (const status of ['draft', 'pending', 'private']) {
      expectError(t, await s.list(`?status=${status}`, headers), 400, 'rest_invalid_param', ['status'])
    }
  }
  expectError(t, await s.list('?status=trash'), 400, 'rest_invalid_param', ['status'])
})

t.test('list: editors see every status but trash, and may ask for one', async (t) => {
  const s = await setup(t)
  await s.event('Published')
  await s.event('Draft', { status: 'draft' })
  await s.event('Pending', { status: 'pending' })
  await s.event('Private', { status: 'private' })
  await s.event('Trashed')
  t.equal((await s.remove(5)).statusCode, 200)
  const admin = await s.auth('administrator')
  for (const headers of [s.editor, admin]) {
    t.same(await ids(s, '', headers), [1, 2, 3, 4])
    t.same(await ids(s, '?status=draft', headers), [2])
    t.same(await ids(s, '?status=pending', headers), [3])
    t.same(await ids(s, '?status=private', headers), [4])
    t.same(await ids(s, '?status=publish', headers), [1])
    expectError(t, await s.list('?status=trash', headers), 400, 'rest_invalid_param', ['status'])
  }
})

t.test('list: authors and contributors see published events plus their own', async (t) => {
  const s = await setup(t)
  const author = await s.auth('author') // user 2
  const contributor = await s.auth('contributor') // user 3
  await s.event('Published by the editor')
  await s.event('Draft by the editor', { status: 'draft' })
  await s.event('Draft by the author', { status: 'draft' }, author)
  await s.event('Draft by the contributor', {}, contributor)
  await s.event('Pending by the contributor', { status: 'publish' }, contributor)
  await s.event('Private by the author', { status: 'private' }, author)
  t.same(await ids(s, '', author), [1, 3, 6])
  t.same(await ids(s, '?status=draft', author), [3])
  t.same(await ids(s, '', contributor), [1, 4, 5])
  t.same(await ids(s, '?status=pending', contributor), [5])
  t.same(await ids(s, '?status=private', contributor), [])
  t.same(await ids(s, ''), [1])
})

t.test('list: post_parent keeps the children of an existing event; an unknown one is 400', async (t) => {
  const s = await setup(t)
  await s.event('Parent')
  await s.event('Child')
  await s.event('Other')
  // There is no write field for the parent: it is set in storage.
  await s.db.updateTable('events').set({ post_parent: 1 }).where('id', '=', 2).execute()
  t.same(await ids(s, '?post_parent=1'), [2])
  t.same(await ids(s, '?post_parent=3'), [])
  expectError(t, await s.list('?post_parent=99'), 400, 'rest_invalid_param', ['post_parent'])
  expectError(t, await s.list('?post_parent=0'), 400, 'rest_invalid_param', ['post_parent'])
  expectError(t, await s.list('?post_parent=abc'), 400, 'rest_invalid_param', ['post_parent'])
})

t.test('list: ticketed=true is 400 event-tickets-not-active; ticketed=false filters nothing', async (t) => {
  const s = await setup(t)
  await s.event('One')
  await s.event('Two')
  for (const value of ['true', '1']) {
    const body = expectError(t, await s.list(`?ticketed=${value}`), 400, 'event-tickets-not-active')
    t.equal(body.message, 'Event Tickets is not active: this service has no ticketing module.')
  }
  t.same(await ids(s, '?ticketed=false'), [1, 2])
  t.same(await ids(s, '?ticketed=0'), [1, 2])
  expectError(t, await s.list('?ticketed=maybe'), 400, 'rest_invalid_param', ['ticketed'])
})

t.test('list: include ignores every date filter, the default window included', async (t) => {
  const s = await fiveDays(t)
  await s.event('Draft', { status: 'draft' }) // 6
  t.same(await ids(s, `?include=${P},${F}`), [P, F], 'past and far-future events')
  t.same(await ids(s, `?include[]=${P}&include[]=${A}`), [P, A])
  t.same(await ids(s, `?include=${P}&start_date=2026-07-01&end_date=2026-07-02`), [P])
  t.same(await ids(s, `?include=${P}&starts_after=2026-07-01&ends_before=2026-07-02&strict_dates=true`), [P])
  t.same(await ids(s, `?include=${A},99`), [A], 'unknown ids match nothing')
  t.same(await ids(s, '?include=99'), [])
  t.same(await ids(s, '?include=6'), [], 'the status rules still apply')
  t.same(await ids(s, '?include=6', s.editor), [6])
  t.same(await ids(s, `?include=${P},${A},${B}&search=B`), [B], 'other filters still apply')
  t.equal(restUrlOf(await s.list(`?include=${P},${F}`)), `${EVENTS_URL}?page=1&per_page=10&include=1%2C5`, 'no date window')
  t.equal(restUrlOf(await s.list(`?include=${P}&start_date=2026-07-01&ends_before=2026-07-02`)),
    `${EVENTS_URL}?page=1&per_page=10&include=1&start_date=2026-07-01&ends_before=2026-07-02`, 'ignored dates still show as sent')
  expectError(t, await s.list('?include=0'), 400, 'rest_invalid_param', ['include'])
  expectError(t, await s.list('?include=a'), 400, 'rest_invalid_param', ['include'])
})

t.test('list: events hidden from listings are left out of every list but readable by id', async (t) => {
  const s = await setup(t)
  await s.event('Hidden', { hide_from_listings: true })
  await s.event('Shown')
  t.same(await ids(s, ''), [2])
  t.same(await ids(s, '', s.editor), [2])
  t.same(await ids(s, '?include=1'), [])
  t.same(await ids(s, '?search=Hidden'), [])
  const res = await s.get(1)
  t.equal(res.statusCode, 200)
  t.match(res.json(), { id: 1, hide_from_listings: true })
  t.equal((await s.inject({ url: `${EVENTS}/by-slug/hidden` })).statusCode, 200)
  // Unhiding brings it back.
  t.equal((await s.patch(1, { hide_from_listings: false })).statusCode, 200)
  t.same(await ids(s, ''), [1, 2])
})

t.test('list: a password-protected event keeps its place without description and excerpt', async (t) => {
  const s = await setup(t)
  await s.event('Secret', { description: 'hidden jazz', excerpt: 'the excerpt', ...on('2026-07-01', '10:00', '11:00') })
  await s.event('Open', { description: 'open jazz', excerpt: 'open excerpt', ...on('2026-07-02', '10:00', '11:00') })
  t.equal((await s.patch(1, { password: 'sesame' })).statusCode, 200)
  const res = await s.list()
  t.equal(res.statusCode, 200)
  t.strictSame(eventsOf(res), [
    eventRecord(1, { title: 'Secret', slug: 'secret', ...on('2026-07-01', '10:00', '11:00'), description: null, excerpt: null }),
    eventRecord(2, { title: 'Open', slug: 'open', ...on('2026-07-02', '10:00', '11:00'), description: 'open jazz', excerpt: 'open excerpt' }),
  ] as Event[])
  const editorList = await s.inject({ url: `${EVENTS}`, headers: s.editor })
  t.strictSame(eventsOf(editorList)[0], eventsOf(res)[0], 'blanked for an editor too: lists never show protected text')
  t.same(await ids(s, '?search=jazz'), [2], 'its description is not searched')
  t.same(await ids(s, '?search=jazz', s.editor), [2], 'not even for an editor')
  t.same(await ids(s, '?search=secret'), [1], 'its title is')
})

t.test('list: every filter combined', async (t) => {
  const s = await setup(t)
  await s.category('Rock') // 1
  await s.tag('Outdoor') // 2
  await s.venue({ venue: 'Hall' }) // 1
  await s.organizer({ organizer: 'Club' }) // 1
  const all = { categories: ['rock'], tags: ['outdoor'], venue: [1], organizer: [1], featured: true, description: 'live music' }
  await s.event('Match', { ...all, ...on('2026-07-01', '20:00', '22:00') }) // 1
  await s.event('Wrong day', { ...all, ...on('2026-07-03', '20:00', '22:00') })
  await s.event('Not featured', { ...all, featured: false, ...on('2026-07-01', '20:00', '22:00') })
  await s.event('No tag', { ...all, tags: [], ...on('2026-07-01', '20:00', '22:00') })
  await s.event('No venue', { ...all, venue: [], ...on('2026-07-01', '20:00', '22:00') })
  await s.event('No organizer', { ...all, organizer: [], ...on('2026-07-01', '20:00', '22:00') })
  await s.event('No category', { ...all, categories: [], ...on('2026-07-01', '20:00', '22:00') })
  await s.event('Other text', { ...all, description: 'theatre', ...on('2026-07-01', '20:00', '22:00') })
  await s.event('Draft', { ...all, status: 'draft', ...on('2026-07-01', '20:00', '22:00') })
  const query = '?start_date=2026-07-01&end_date=2026-07-02&categories=rock&tags=2&venue=1&organizer=1&featured=true&search=MUSIC&ticketed=false&status=publish'
  const res = await s.list(query)
  t.same(idsOf(res), [1])
  t.equal(restUrlOf(res), `${EVENTS_URL}?page=1&per_page=10&start_date=2026-07-01T00%3A00%3A00%2B00%3A00&end_date=2026-07-02T23%3A59%3A59%2B00%3A00` +
    '&categories=rock&tags=2&venue=1&organizer=1&featured=true&search=MUSIC&ticketed=false&status=publish')
  t.same(await ids(s, query.replace('&status=publish', ''), s.editor), [1, 9])
})

t.test('list: rest_url and next_rest_url carry every effective filter, URL-encoded', async (t) => {
  const s = await setup(t)
  await s.category('Rock & Roll') // 1, slug rock-roll
  for (let i = 0; i < 3; i++) await s.event(`Show ${i}`, { categories: [1], description: 'a&b c' })
  const res = await s.list('?per_page=1&search=a%26b%20c&categories=rock-roll,1&featured=0&start_date=2026-07-01T02:00:00%2B02:00&strict_dates=true&unknown=1')
  t.equal(res.statusCode, 200)
  const common = 'start_date=2026-07-01T00%3A00%3A00%2B00%3A00&end_date=2028-06-15T23%3A59%3A59%2B00%3A00&search=a%26b%20c&categories=rock-roll%2C1&featured=false&strict_dates=true'
  t.strictSame({ ...res.json(), events: [] }, {
    events: [],
    rest_url: `${EVENTS_URL}?page=1&per_page=1&${common}`,
    next_rest_url: `${EVENTS_URL}?page=2&per_page=1&${common}`,
    total: 3,
    total_pages: 3,
  })
  t.equal(res.headers.link, `<${EVENTS_URL}?page=2&per_page=1&${common}>; rel="next"`)
  // Following next_rest_url gives the next page with the same filters.
  const next = await s.inject({ url: new URL(res.json<{ next_rest_url: string }>().next_rest_url).pathname + new URL(res.json<{ next_rest_url: string }>().next_rest_url).search })
  t.same(idsOf(next), [2])
  t.equal(restUrlOf(next), `${EVENTS_URL}?page=2&per_page=1&${common}`)
})

t.test('list: rest_url shows starts_*/ends_* as the instants they stood for, so that a later follow runs the same query', async (t) => {
  // Pinned clock 2026-06-15 12:00 UTC, 14:00 in Zurich (CEST, +02:00).
  const s = await setup(t, { config: { timezone: 'Europe/Zurich' } })
  for (const day of ['2026-06-16', '2026-06-17', '2026-06-18']) await s.event(day, on(day, '10:00', '11:00'))
  // Widened to whole Zurich days: after the end of today, before the end of 2026-06-18.
  const res = await s.list('?per_page=1&starts_after=now&ends_before=2026-06-18%2009:00&unknown=1')
  t.equal(res.statusCode, 200)
  const wide = 'starts_after=2026-06-15T23%3A59%3A59%2B02%3A00&ends_before=2026-06-18T23%3A59%3A59%2B02%3A00'
  t.strictSame({ ...res.json(), events: [] }, {
    events: [], rest_url: `${EVENTS_URL}?page=1&per_page=1&${wide}`, next_rest_url: `${EVENTS_URL}?page=2&per_page=1&${wide}`, total: 3, total_pages: 3,
  })
  const next = new URL(res.json<{ next_rest_url: string }>().next_rest_url)
  const followed = await s.inject({ url: next.pathname + next.search })
  t.same(idsOf(followed), [2])
  t.equal(restUrlOf(followed), next.href)
  // Exact with strict_dates: `now` is the clock's instant, `today`/`tomorrow` their days' first second.
  const strict = await s.list('?strict_dates=1&starts_after=now&starts_before=tomorrow&ends_after=today&ends_before=2026-06-18T09:00:00Z')
  t.equal(strict.statusCode, 200)
  t.equal(restUrlOf(strict), `${EVENTS_URL}?page=1&per_page=10&starts_before=2026-06-16T00%3A00%3A00%2B02%3A00` +
    '&starts_after=2026-06-15T14%3A00%3A00%2B02%3A00&ends_before=2026-06-18T11%3A00%3A00%2B02%3A00&ends_after=2026-06-15T00%3A00%3A00%2B02%3A00' +
    '&strict_dates=true')
  t.same(idsOf(strict), [], 'no event starts before tomorrow Zurich time')
})

// ------------------------------------------------------------------------------- fast by design

t.test('fast: the list queries never scan the events table without an index', async (t) => {
  // SQLite's own statements and query plans (PostgreSQL's are checked in test/query-plans.test.ts).
  const built = await build(t, { sqlite: true })
  const recorder = recordStatements(built.sqlite())
  const editor = await built.auth('editor')
  const post = async (url: string, payload: Body) => {
    const res = await built.inject({ method: 'POST', url: `/calendar/events/v1${url}`, headers: editor, payload })
    t.equal(res.statusCode, 201)
  }
  await post('/categories', { name: 'Rock' })
  await post('/venues', { venue: 'Hall' })
  for (let i = 0; i < 6; i++) {
    await post('/events', { title: `E${i}`, start_date: `2026-07-0${i + 1} 10:00`, end_date: `2026-07-0${i + 1} 11:00`, categories: i % 2 === 0 ? [1] : [], venue: [1], featured: i % 3 === 0 })
  }
  // The detector itself: a query on an unindexed column is a full scan, and is caught.
  // Lists read the events' occurrences (migration 0017) as `o`.
  const isFullScan = (line: string) => /^SCAN (events|o)\b/.test(line) && !/USING (COVERING )?INDEX/.test(line)
  const isNarrowSearch = (line: string) => /^SEARCH (events|o) USING .*\(.*\b(start_utc|end_utc|featured|rowid|event_id)\b/.test(line)
  t.ok(recorder.explain({ sql: 'select id from "events" where title = ?', params: ['x'] }).some(isFullScan), 'a full scan is detected')
  const queries = [
    '',
    '?start_date=2026-07-01&end_date=2026-07-31&categories=1',
    '?start_date=2026-07-01&end_date=2026-07-31&venue=1',
    '?featured=true',
    '?start_date=2026-07-01&end_date=2026-07-31&featured=false&per_page=2&page=2',
    '?starts_after=2026-07-02&ends_before=2026-07-05',
  ]
  const author = await built.auth('author')
  for (const headers of [{}, editor, author]) {
    for (const query of queries) {
      let res: Awaited<ReturnType<typeof built.inject>> | undefined
      const statements = await recorder.during(async () => {
        res = await built.inject({ url: `${EVENTS}${query}`, headers })
      })
      t.equal(res?.statusCode, 200, `GET /events${query}`)
      const onEvents = statements.filter((s) => /\b(from|join) "?(events|event_occurrences)"?\b/i.test(s.sql))
      // With a link filter, the matching ids are read whole in list order (the total and every page); else a count and a page.
      const linked = /categories|venue/.test(query)
      t.ok(linked ? onEvents.length >= 1 : onEvents.length >= 2, `${query}: the ${linked ? 'ids in list order are' : 'count and the page query are'} seen`)
      for (const statement of onEvents) {
        const plan = recorder.explain(statement)
        const scans = plan.filter(isFullScan)
        t.same(scans, [], `no full scan of events for ${query || '(default window)'}`, { sql: statement.sql, plan })
        if (!statement.sql.includes('hide_from_listings')) continue
        // The count and page queries: the index narrows by date, featured or id, not by language alone.
        const onTable = plan.filter((line) => /^(SCAN|SEARCH) (events|o)\b/.test(line))
        t.ok(onTable.length > 0 && onTable.every(isNarrowSearch), `an index narrows the events of ${query || '(default window)'}`, { sql: statement.sql, plan })
        if (query === '' && statement.sql.includes('order by')) {
          t.notOk(plan.some((line) => line.includes('TEMP B-TREE')), 'the default window is read in index order, no sort', { plan })
        }
      }
    }
  }
})

t.test('fast: GET /events runs the same number of statements for 5 and for 50 events per page', async (t) => {
  // SQLite's own statements and query plans (PostgreSQL's are checked in test/query-plans.test.ts).
  const built = await build(t, { sqlite: true })
  const recorder = recordStatements(built.sqlite())
  const editor = await built.auth('editor')
  const post = async (url: string, payload: Body) => {
    const res = await built.inject({ method: 'POST', url: `/calendar/events/v1${url}`, headers: editor, payload })
    t.equal(res.statusCode, /\/\d+$/.test(url) ? 200 : 201, `${url} ${JSON.stringify(payload).slice(0, 60)}`)
  }
  for (const name of ['Rock', 'Jazz', 'Pop']) await post('/categories', { name })
  for (const name of ['Outdoor', 'Indoor', 'Free']) await post('/tags', { name })
  for (const name of ['Hall', 'Park', 'Club']) await post('/venues', { venue: name, image: `https://img.test/${name}.png` })
  for (const name of ['Org A', 'Org B', 'Org C']) await post('/organizers', { organizer: name })
  const events = 24
  for (let i = 0; i < events; i++) {
    const k = i % 3
    await post('/events', {
      title: `Event ${i}`,
      start_date: `2026-07-${String(1 + (i % 28)).padStart(2, '0')} 10:00`,
      end_date: `2026-07-${String(1 + (i % 28)).padStart(2, '0')} 12:00`,
      categories: [1 + k, 1 + ((k + 1) % 3)],
      tags: [4 + k, 4 + ((k + 2) % 3)],
      venue: [1 + k, 1 + ((k + 1) % 3)],
      organizer: [1 + ((k + 2) % 3), 1 + k],
      image: `https://img.test/event-${i}.png`,
    })
  }
  // The linked records read once, as any list after the writes would (a write's answer is read inside its unit
  // of work and not remembered), so that both counts below start from the same cache.
  await built.inject({ url: `${EVENTS}?per_page=50` })
  const counts: number[] = []
  for (const perPage of [5, 50]) {
    // An event write between the two reads, so that neither finds the list's total already counted.
    await post('/events/1', { title: `Busts the count cache ${perPage}` })
    let res: Awaited<ReturnType<typeof built.inject>> | undefined
    const statements = await recorder.during(async () => {
      res = await built.inject({ url: `${EVENTS}?per_page=${perPage}` })
    })
    t.equal(res?.statusCode, 200)
    const page = res === undefined ? [] : eventsOf(res)
    t.equal(page.length, Math.min(perPage, events), `${perPage} per page`)
    t.ok(page.every((e) => e.categories.length === 2 && e.tags.length === 2 && e.venue.length === 2 && e.organizer.length === 2 && e.image !== null),
      'every event carries its terms, venues, organizers and image')
    counts.push(statements.length)
  }
  t.equal(counts[0], counts[1], `the same number of statements: ${counts.join(' and ')}`)
  t.ok((counts[0] ?? Infinity) <= 25, `a small, fixed number of statements (${counts[0]})`)
  // The total is remembered until the next write: a second read does not count again.
  const again = await recorder.during(async () => {
    await built.inject({ url: `${EVENTS}?per_page=5&page=2` })
  })
  t.equal(again.filter((s) => /count\(\*\)/i.test(s.sql)).length, 0, 'the cached total is reused for the next page')
  await post('/tags', { name: 'A later write' })
  const afterTagWrite = await recorder.during(async () => {
    await built.inject({ url: `${EVENTS}?per_page=5` })
  })
  t.equal(afterTagWrite.filter((s) => /count\(\*\)/i.test(s.sql)).length, 0, 'a new tag changes no event list: the total stays')
  // The window's matches are kept by event (event-filters.ts `windowMatches`): a write to one of its events is rechecked
  // (its matches looked up by its id), not counted again; one that moves it out of the window is seen by that recheck.
  const windowRead = (sql: string) => /count\(\*\)|group_concat\(|string_agg\(/i.test(sql)
  const rechecked = (sql: string) => /^select "o"\."event_id" as "id", "o"\."occurrence", "o"\."start_utc" from \(select (json_each\.value as id|c\.id) from/.test(sql)
  await post('/events/2', { title: 'A later write' })
  const afterWrite = await recorder.during(async () => {
    await built.inject({ url: `${EVENTS}?per_page=5` })
  })
  t.equal(afterWrite.filter((s) => windowRead(s.sql)).length, 0, 'an event write that changes nothing the list matches keeps its total')
  t.equal(afterWrite.filter((s) => rechecked(s.sql)).length, 1, 'the written event is rechecked by its id')
  const before = Number((await built.inject({ url: `${EVENTS}?per_page=5` })).headers['x-total'])
  await post('/events/2', { start_date: '2020-01-01 10:00:00', end_date: '2020-01-01 11:00:00' })
  let total = NaN
  const afterMove = await recorder.during(async () => {
    total = Number((await built.inject({ url: `${EVENTS}?per_page=5` })).headers['x-total'])
  })
  t.equal(afterMove.filter((s) => windowRead(s.sql)).length, 1, 'an event moved out of the window makes the next read count again')
  t.equal(total, before - 1, 'and the total follows')
})
