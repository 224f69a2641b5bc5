/**
 * A fourth black-box pass over the contract (CONTRACT §1, §3, §4, §14, §16, §17): HEAD beside GET under
 * compression, content negotiation by q-values, PHP clients' form bodies and the reference's date formats,
 * paging edges, recurrence across the odd DST rules (Chatham's 45 minutes, Lord Howe's 30, Kathmandu's
 * +05:45, New York's overlap), splits and cancels at the edges of a series, iCal time zones.
 */
import t from 'tap'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import pg from 'pg'
import SQLite from 'better-sqlite3'
import { expectError } from './helpers/errors.js'
import { API } from './helpers/build.js'
import { contractProblems } from './helpers/contract.js'
import { TEST_ENGINE, engineTest, freshDatabaseUrl } from './helpers/database.js'
import { EVENTS, eventBody, setup, type Event } from './helpers/events.js'
import { freePort } from './helpers/net.js'
import { startReceiver } from './helpers/receiver.js'
import { call, editorKey, startServer } from './helpers/server.js'

const occ = (id: number, o: string, tail = '') => `${EVENTS}/${id}/occurrences/${o}${tail}`
const FORM = { 'content-type': 'application/x-www-form-urlencoded' }
const occurrencesOf = async (s: Awaited<ReturnType<typeof setup>>, id: number): Promise<Event[]> =>
  (await s.inject({ url: `${EVENTS}/${id}/occurrences?per_page=50` })).json<{ occurrences: Event[] }>().occurrences

t.test('HEAD answers with the header fields GET would send, compressed answers included (RFC 9110 §9.3.2; CONTRACT §16)', async (t) => {
  const s = await setup(t)
  const e = await s.event('Headline', { description: 'A long enough description. '.repeat(40), recurrence: { rule: 'FREQ=DAILY;COUNT=30' } })
  const urls = [API, `${API}/doc`, EVENTS, `${EVENTS}/${e.id}`, `${EVENTS}/by-slug/${e.slug}`, `${EVENTS}/${e.id}/occurrences`, occ(e.id, '20260703T180000Z'), `${API}/changes`, `${EVENTS}?ical=1`, `${EVENTS}/${e.id}?ical=1`]
  for (const coding of ['gzip', 'br', 'deflate']) {
    // The two large documents (the spec, the route index) once, in gzip: brotli over 350 kB is slow on a loaded machine.
    for (const url of urls.filter((u) => coding === 'gzip' || (u !== API && u !== `${API}/doc`))) {
      const get = await s.inject({ url, headers: { 'accept-encoding': coding } })
      const head = await s.inject({ method: 'HEAD', url, headers: { 'accept-encoding': coding } })
      t.equal(get.statusCode, 200, `GET ${url}`)
      t.equal(head.statusCode, 200, `HEAD ${url}`)
      t.equal(head.body, '', `HEAD ${url}: no body`)
      t.equal(get.headers['content-encoding'], coding, `GET ${url} ${coding}: compressed`)
      for (const name of ['content-encoding', 'content-type', 'etag', 'vary', 'content-language', 'x-total']) {
        t.equal(head.headers[name], get.headers[name], `HEAD ${url} ${coding}: ${name} as GET's`)
      }
    }
  }
})

t.test('Accept-Encoding by q-values: a coding at q=0 is never used, the preferred one is (CONTRACT §16); Vary names Accept-Encoding', async (t) => {
  const s = await setup(t)
  for (const [accept, coding] of [['br;q=0, gzip', 'gzip'], ['gzip;q=0', undefined], ['*;q=0', undefined], ['identity', undefined], ['gzip;q=0.5, br;q=0.9', 'br'], ['br;q=0.1, gzip;q=0.9', 'gzip'], ['br;q=0, gzip;q=0, deflate;q=0', undefined], ['deflate', 'deflate'], ['gzip;q=1.0, identity; q=0.5, *;q=0', 'gzip']] as const) {
    const res = await s.inject({ url: `${API}/doc`, headers: { 'accept-encoding': accept } })
    t.equal(res.statusCode, 200, accept)
    t.equal(res.headers['content-encoding'], coding, `${accept}: ${coding ?? 'not coded'}`)
    t.match(String(res.headers.vary), /Accept-Encoding/, `${accept}: Vary`)
    t.equal(res.json<{ openapi: string }>().openapi.slice(0, 3), '3.1', `${accept}: the document, decoded`)
  }
})

t.test('a PHP client\'s form bodies: nested venue and organizer objects, indexed and sparse arrays, recurrence parts; event booleans are never yes/no (CONTRACT §1, §17)', async (t) => {
  const s = await setup(t)
  const alpha = await s.category('Alpha')
  await s.category('Beta')
  const hall = await s.venue({ venue: 'Existing Hall' })
  const org = await s.organizer({ organizer: 'Existing Org' })
  const base = 'title=Form&start_date=2026-07-01+18:00:00&end_date=2026-07-01+21:00:00'
  const post = (tail: string) => s.inject({ method: 'POST', url: EVENTS, headers: { ...s.editor, ...FORM }, payload: `${base}&${tail}` })
  const inline = await post('venue[venue]=Hall&venue[city]=Bern&venue[show_map]=no&organizer[0][organizer]=O1&organizer[1][organizer]=O2&organizer[1][email]=o2%40example.ch')
  t.equal(inline.statusCode, 201, 'inline objects')
  const e = inline.json<Event>()
  t.same(e.venue.map((v) => [v.venue, v.city, v.show_map, v.show_map_link]), [['Hall', 'Bern', false, true]])
  t.same(e.organizer.map((o) => [o.organizer, o.email]), [['O1', null], ['O2', 'o2@example.ch']])
  for (const tail of [`venue=${hall.id}`, `venue[]=${hall.id}`, `venue[0]=${hall.id}`, `venue[id]=${hall.id}`, `venue[0][id]=${hall.id}`, `venue[3]=${hall.id}`]) {
    const res = await post(tail)
    t.equal(res.statusCode, 201, tail)
    t.same(res.json<Event>().venue.map((v) => v.id), [hall.id], tail)
  }
  const mixed = await post(`organizer[0]=${org.id}&organizer[1][organizer]=Fresh&categories[1]=beta&categories[0]=${alpha.id}`)
  t.equal(mixed.statusCode, 201, 'ids and objects mixed, ids and slugs mixed')
  t.same(mixed.json<Event>().organizer.map((o) => o.organizer), ['Existing Org', 'Fresh'])
  t.same(mixed.json<Event>().categories.map((c) => c.slug).sort(), ['alpha', 'beta'])
  const csv = await post(`organizer=${org.id},${org.id}&categories=alpha,beta`)
  t.equal(csv.statusCode, 201, 'comma lists')
  t.same(csv.json<Event>().organizer.map((o) => o.id), [org.id])
  const rec = await post('recurrence[rule]=FREQ%3DDAILY%3BCOUNT%3D3&recurrence[rdates][0]=2026-07-10+18:00:00&recurrence[rdates][1]=2026-07-11+18:00:00&recurrence[exdates][]=2026-07-02+18:00:00')
  t.equal(rec.statusCode, 201, 'recurrence parts')
  t.same(rec.json<Event>().recurrence, { rule: 'FREQ=DAILY;COUNT=3', rdates: ['2026-07-10 18:00:00', '2026-07-11 18:00:00'], exdates: ['2026-07-02 18:00:00'] })
  t.same((await occurrencesOf(s, rec.json<Event>().id)).map((o) => o.occurrence?.id), ['20260701T180000Z', '20260703T180000Z', '20260710T180000Z', '20260711T180000Z'])
  const none = await post('recurrence=')
  t.equal(none.statusCode, 201)
  t.equal(none.json<Event>().recurrence, null, 'recurrence= is null')
  const allDay = await s.inject({ method: 'POST', url: EVENTS, headers: { ...s.editor, ...FORM }, payload: 'title=AD&start_date=2026-07-01&end_date=2026-07-01&all_day=1&featured=true&sticky=0&recurrence[rule]=FREQ=WEEKLY;COUNT=2&recurrence[exdates]=2026-07-08' })
  t.equal(allDay.statusCode, 201, 'all-day series in a form')
  t.same([allDay.json<Event>().all_day, allDay.json<Event>().featured, allDay.json<Event>().sticky, allDay.json<Event>().recurrence?.exdates], [true, true, false, ['2026-07-08']])
  t.equal(allDay.json<Event>().end_date, '2026-07-01 23:59:59')
  expectError(t, await post('show_map=yes'), 400, 'rest_invalid_param', ['show_map'])
  expectError(t, await post('featured=on'), 400, 'rest_invalid_param', ['featured'])
  expectError(t, await post('tags[a]=x'), 400, 'rest_invalid_param', ['tags'])
  expectError(t, await post('recurrence[rule]=FREQ=DAILY;COUNT=2&recurrence[foo]=1'), 400, 'rest_invalid_param', ['recurrence'])
  expectError(t, await post('organizer[organizer]=Solo&organizer[email]=not-an-address'), 400, 'rest_invalid_param', ['organizer'])
  const venue = await s.venue({ venue: 'Mappable' })
  for (const [body, expected] of [['show_map=no', [false, true]], ['show_map=yes&show_map_link=0', [true, false]], ['show_map=false&show_map_link=yes', [false, true]]] as const) {
    const res = await s.inject({ method: 'PATCH', url: `${API}/venues/${venue.id}`, headers: { ...s.editor, ...FORM }, payload: body })
    t.equal(res.statusCode, 200, body)
    t.same([res.json<{ show_map: boolean }>().show_map, res.json<{ show_map_link: boolean }>().show_map_link], expected, body)
  }
  expectError(t, await s.inject({ method: 'PATCH', url: `${API}/venues/${venue.id}`, headers: { ...s.editor, ...FORM }, payload: 'show_map=off' }), 400, 'rest_invalid_param', ['show_map'])
})

t.test('date filter values: every form §4 names, as the instant rest_url carries; anything else 400 naming the parameter', async (t) => {
  const s = await setup(t)
  await s.event('One')
  const cases: Array<[string, string]> = [
    ['2026-07-01 10:00', '2026-07-01T10:00:00+00:00'], ['2026-07-01 10:00:30', '2026-07-01T10:00:30+00:00'], ['2026-07-01', '2026-07-01T00:00:00+00:00'],
    ['1782900000', '2026-07-01T10:00:00+00:00'], ['now', '2026-06-15T12:00:00+00:00'], ['today', '2026-06-15T00:00:00+00:00'],
    ['tomorrow', '2026-06-16T00:00:00+00:00'], ['yesterday', '2026-06-14T00:00:00+00:00'], ['2026-07-01T10:00:00+02:00', '2026-07-01T08:00:00+00:00'],
    ['2026-07-01T10:00:00Z', '2026-07-01T10:00:00+00:00'], ['2026-07-01T10:00:00.000Z', '2026-07-01T10:00:00+00:00'], ['2026-07-01T10:00:00-05:30', '2026-07-01T15:30:00+00:00'],
  ]
  for (const [value, instant] of cases) {
    const res = await s.list(`?starts_after=${encodeURIComponent(value)}&strict_dates=true`)
    t.equal(res.statusCode, 200, value)
    t.equal(new URL(res.json<{ rest_url: string }>().rest_url).searchParams.get('starts_after'), instant, `${value} is ${instant}`)
  }
  // Without strict_dates the day is widened in the site zone: starts_after to the end of that day.
  const wide = await s.list('?starts_after=2026-07-01T10:00:00Z')
  t.equal(new URL(wide.json<{ rest_url: string }>().rest_url).searchParams.get('starts_after'), '2026-07-01T23:59:59+00:00')
  for (const bad of ['2026-02-30', '2026-07-01 24:00:00', '2026-07-01 10:00:60', '2026-7-1', '1782900000.5', 'next monday', '']) {
    expectError(t, await s.list(`?starts_after=${encodeURIComponent(bad)}`), 400, 'rest_invalid_param', ['starts_after'])
  }
  for (const [q, name] of [['per_page=0', 'per_page'], ['per_page=-1', 'per_page'], ['per_page=2.5', 'per_page'], ['per_page=1e1', 'per_page'], ['per_page=', 'per_page'], ['page=0', 'page'], ['page=1.0', 'page'], ['per_page=5&per_page=6', 'per_page']] as const) {
    expectError(t, await s.list(`?${q}`), 400, 'rest_invalid_param', [name])
  }
  const clamped = await s.list('?per_page=51')
  t.equal(new URL(clamped.json<{ rest_url: string }>().rest_url).searchParams.get('per_page'), '50', 'clamped to 50')
  for (const list of ['events', 'venues', 'organizers', 'categories', 'tags']) {
    const res = await s.inject({ url: `${API}/${list}?per_page=500&hide_empty=false` })
    t.equal(new URL(res.json<{ rest_url: string }>().rest_url).searchParams.get('per_page'), '50', `${list} clamped`)
  }
  expectError(t, await s.list('?page=2'), 404, 'event-archive-page-not-found')
  for (const v of ['TRUE', 'yes', 'on', '2', '']) expectError(t, await s.list(`?featured=${v}`), 400, 'rest_invalid_param', ['featured'])
})

t.test('recurrence across odd DST rules: gaps skipped and not counted, overlaps at their first instant, offsets of 30 and 45 minutes (CONTRACT §17); VTIMEZONE with the real offsets (§14)', async (t) => {
  const s = await setup(t)
  const seen = async (body: Record<string, unknown>) => (await occurrencesOf(s, (await s.create(body)).id)).map((o) => `${o.occurrence?.id} ${o.start_date} ${o.utc_start_date} ${o.timezone_abbr} ${o.utc_end_date}`)
  // Chatham: +12:45, DST from the last Sunday of September 02:45 → 03:45.
  t.same(await seen({ title: 'Chatham', timezone: 'Pacific/Chatham', start_date: '2026-09-26 03:00:00', end_date: '2026-09-26 04:00:00', recurrence: { rule: 'FREQ=DAILY;COUNT=3' } }), [
    '20260925T141500Z 2026-09-26 03:00:00 2026-09-25 14:15:00 +1245 2026-09-25 15:15:00',
    '20260927T131500Z 2026-09-28 03:00:00 2026-09-27 13:15:00 +1345 2026-09-27 14:15:00',
    '20260928T131500Z 2026-09-29 03:00:00 2026-09-28 13:15:00 +1345 2026-09-28 14:15:00',
  ], 'Chatham: 27 September 03:00 does not exist')
  // Lord Howe: +10:30 / +11, DST ends the first Sunday of April 02:00 → 01:30 (a 30-minute overlap).
  t.same(await seen({ title: 'Lord Howe back', timezone: 'Australia/Lord_Howe', start_date: '2026-04-04 01:45:00', end_date: '2026-04-04 02:15:00', recurrence: { rule: 'FREQ=DAILY;COUNT=3' } }), [
    '20260403T144500Z 2026-04-04 01:45:00 2026-04-03 14:45:00 +11 2026-04-03 15:15:00',
    '20260404T144500Z 2026-04-05 01:45:00 2026-04-04 14:45:00 +11 2026-04-04 15:15:00',
    '20260405T151500Z 2026-04-06 01:45:00 2026-04-05 15:15:00 +1030 2026-04-05 15:45:00',
  ], 'Lord Howe: 5 April 01:45 happens twice, the first is taken')
  // Lord Howe: DST starts the first Sunday of October 02:00 → 02:30.
  const forward = await s.create({ title: 'Lord Howe forward', timezone: 'Australia/Lord_Howe', start_date: '2026-10-03 02:15:00', end_date: '2026-10-03 03:00:00', recurrence: { rule: 'FREQ=DAILY;COUNT=3' } })
  t.same((await occurrencesOf(s, forward.id)).map((o) => o.occurrence?.id), ['20261002T154500Z', '20261004T151500Z', '20261005T151500Z'], 'Lord Howe: 4 October 02:15 does not exist')
  t.same(await seen({ title: 'New York', timezone: 'America/New_York', start_date: '2026-10-31 01:30:00', end_date: '2026-10-31 02:30:00', recurrence: { rule: 'FREQ=DAILY;COUNT=3' } }), [
    '20261031T053000Z 2026-10-31 01:30:00 2026-10-31 05:30:00 EDT 2026-10-31 06:30:00',
    '20261101T053000Z 2026-11-01 01:30:00 2026-11-01 05:30:00 EDT 2026-11-01 06:30:00',
    '20261102T063000Z 2026-11-02 01:30:00 2026-11-02 06:30:00 EST 2026-11-02 07:30:00',
  ], 'New York: 1 November 01:30 is EDT')
  t.same(await seen({ title: 'Kathmandu', timezone: 'Asia/Kathmandu', start_date: '2026-07-31 00:10:00', end_date: '2026-07-31 01:00:00', recurrence: { rule: 'FREQ=MONTHLY;BYDAY=-1FR;COUNT=3' } }), [
    '20260730T182500Z 2026-07-31 00:10:00 2026-07-30 18:25:00 +0545 2026-07-30 19:15:00',
    '20260827T182500Z 2026-08-28 00:10:00 2026-08-27 18:25:00 +0545 2026-08-27 19:15:00',
    '20260924T182500Z 2026-09-25 00:10:00 2026-09-24 18:25:00 +0545 2026-09-24 19:15:00',
  ], 'Kathmandu: the last Friday, +05:45')
  const lines = (await s.inject({ url: `${EVENTS}/${forward.id}?ical=1` })).body.split('\r\n')
  const zone = lines.slice(lines.indexOf('BEGIN:VTIMEZONE'), lines.indexOf('END:VTIMEZONE') + 1).filter((l) => /^(TZID|TZOFFSET|DTSTART|RRULE)/.test(l))
  t.same(zone.sort(), ['TZID:Australia/Lord_Howe', 'TZOFFSETFROM:+1100', 'TZOFFSETTO:+1030', 'DTSTART:19700405T020000', 'RRULE:FREQ=YEARLY;BYMONTH=4;BYDAY=1SU', 'TZOFFSETFROM:+1030', 'TZOFFSETTO:+1100', 'DTSTART:19701004T020000', 'RRULE:FREQ=YEARLY;BYMONTH=10;BYDAY=1SU'].sort(), 'Lord Howe VTIMEZONE: half-hour offsets')
  t.ok(lines.includes('DTSTART;TZID=Australia/Lord_Howe:20261003T021500'))
})

t.test('splits and cancels at the edges of a series: an rdate past the rule, the last of an UNTIL, COUNT around exdates, all-day, the last one left (CONTRACT §17)', async (t) => {
  const s = await setup(t)
  const split = (id: number, o: string, body: Record<string, unknown> = {}) => s.inject({ method: 'POST', url: occ(id, o, '/split'), headers: s.editor, payload: body })
  const ids = async (id: number) => (await occurrencesOf(s, id)).map((o) => o.occurrence?.id)
  const rdate = await s.create(eventBody({ title: 'Rdate', recurrence: { rule: 'FREQ=DAILY;COUNT=3', rdates: ['2026-07-10 18:00:00'] } }))
  const r1 = await split(rdate.id, '20260710T180000Z')
  t.equal(r1.statusCode, 201, 'split at an rdate past the rule')
  t.same(await ids(rdate.id), ['20260701T180000Z', '20260702T180000Z', '20260703T180000Z'])
  t.same(r1.json<Event>().recurrence, { rule: null, rdates: [], exdates: [] }, 'the new event: that one occurrence, no rule of 0')
  t.same(await ids(r1.json<Event>().id), ['20260710T180000Z'])
  const until = await s.create(eventBody({ title: 'Until', recurrence: { rule: 'FREQ=DAILY;UNTIL=20260705T180000Z' } }))
  const r2 = await split(until.id, '20260705T180000Z')
  t.equal(r2.statusCode, 201, 'split at the last of an UNTIL series')
  t.same(await ids(until.id), ['20260701T180000Z', '20260702T180000Z', '20260703T180000Z', '20260704T180000Z'])
  t.same(await ids(r2.json<Event>().id), ['20260705T180000Z'])
  const count = await s.create(eventBody({ title: 'Count', recurrence: { rule: 'FREQ=DAILY;COUNT=5', exdates: ['2026-07-02 18:00:00', '2026-07-04 18:00:00', '2026-07-01 12:00:00'] } }))
  const r3 = await split(count.id, '20260703T180000Z')
  t.equal(r3.statusCode, 201)
  t.same([await ids(count.id), await ids(r3.json<Event>().id)], [['20260701T180000Z'], ['20260703T180000Z', '20260705T180000Z']], 'COUNT counts the excluded ones (RFC 5545): none gained, none lost')
  const allDay = await s.create({ title: 'All day', all_day: true, start_date: '2026-07-01', end_date: '2026-07-02', recurrence: { rule: 'FREQ=WEEKLY;COUNT=3' } })
  t.same(await ids(allDay.id), ['20260701', '20260708', '20260715'])
  const r4 = await split(allDay.id, '20260708')
  t.equal(r4.statusCode, 201)
  t.same([await ids(allDay.id), await ids(r4.json<Event>().id)], [['20260701'], ['20260708', '20260715']])
  t.same([r4.json<Event>().start_date, r4.json<Event>().end_date], ['2026-07-08 00:00:00', '2026-07-09 23:59:59'], 'the new series keeps the two-day span')
  // The first occurrence excluded: the first one left cannot be split at (it would leave the series empty).
  const first = await s.create(eventBody({ title: 'First gone', recurrence: { rule: 'FREQ=DAILY;COUNT=3', exdates: ['2026-07-01 18:00:00'] } }))
  expectError(t, await split(first.id, '20260702T180000Z'), 400, 'rest_invalid_param', ['occurrence'])
  expectError(t, await split(first.id, '20260701T180000Z'), 404, 'rest-event-occurrence-not-found')
  // Cancelling the last occurrence left is refused: a series never has none.
  const two = await s.create(eventBody({ title: 'Two', recurrence: { rule: 'FREQ=DAILY;COUNT=2' } }))
  t.equal((await s.inject({ method: 'DELETE', url: occ(two.id, '20260702T180000Z'), headers: s.editor })).statusCode, 200)
  const before = await s.get(two.id)
  expectError(t, await s.inject({ method: 'DELETE', url: occ(two.id, '20260701T180000Z'), headers: s.editor }), 400, 'rest_invalid_param', ['recurrence'])
  t.equal((await s.get(two.id)).headers.etag, before.headers.etag, 'nothing written')
  t.same(await ids(two.id), ['20260701T180000Z'])
})

t.test('json_ld and iCalendar leave out a linked venue or organizer the caller could not read (a draft, the trash), as the record does (CONTRACT §2, §5)', async (t) => {
  const s = await setup(t)
  const draft = await s.venue({ venue: 'Secret Draft Hall', status: 'draft', address: 'Hidden 1' })
  const trashed = await s.venue({ venue: 'Trashy Hall', address: 'Gone 2' })
  const org = await s.organizer({ organizer: 'Draft Org', status: 'draft', email: 'd@example.ch' })
  const e = await s.event('Linked', { venue: [draft.id, trashed.id], organizer: [org.id] })
  t.equal((await s.inject({ method: 'DELETE', url: `${API}/venues/${trashed.id}`, headers: s.editor })).statusCode, 200)
  for (const url of [`${EVENTS}/${e.id}`, `${EVENTS}/by-slug/${e.slug}`]) {
    const anon = await s.inject({ url })
    t.same([anon.json<Event>().venue, anon.json<Event>().organizer], [[], []], `${url}: no links shown`)
    const ld = JSON.stringify((anon.json<Event>() as unknown as { json_ld: unknown }).json_ld)
    t.notMatch(ld, /Secret|Trashy|Draft Org|Hidden|Gone/, `${url}: json_ld shows neither`)
  }
  const editor = await s.get(e.id, '', s.editor)
  const ld = JSON.stringify((editor.json<Event>() as unknown as { json_ld: unknown }).json_ld)
  t.match(ld, /Secret Draft Hall/, 'an editor sees the draft venue')
  t.notMatch(ld, /Trashy/, 'nobody sees the trashed one')
  for (const url of [`${EVENTS}/${e.id}?ical=1`, `${EVENTS}?ical=1`]) {
    const ics = (await s.inject({ url })).body
    t.notMatch(ics, /Secret|Trashy|Draft Org|Hidden|Gone/, `${url}: no LOCATION or ORGANIZER`)
  }
  const changes = await s.inject({ url: `${API}/changes?resource=events` })
  t.notMatch(changes.body, /Secret|Trashy|Draft Org/, '/changes records leave them out')
})

/** Holds the tables' locks from another connection (SQLite: the whole file, BEGIN EXCLUSIVE with a write). */
async function holdLock(url: string, tables: readonly string[]): Promise<() => Promise<void>> {
  if (TEST_ENGINE === 'postgres') {
    const other = new pg.Client({ connectionString: url.replace(/\?.*$/, '') })
    await other.connect()
    const schema = new URL(url).searchParams.get('schema') ?? 'public'
    await other.query('begin')
    await other.query(`lock table ${tables.map((table) => `"${schema}".${table}`).join(', ')} in access exclusive mode`)
    return async () => {
      await other.query('rollback')
      await other.end()
    }
  }
  const other = new SQLite(url)
  other.exec('begin exclusive')
  other.exec('update events set title = title where id = 1')
  return () => {
    other.exec('rollback')
    other.close()
    return Promise.resolve()
  }
}

t.test('every route behind a lock held elsewhere (PostgreSQL ACCESS EXCLUSIVE on the tables, SQLite BEGIN EXCLUSIVE): answered in bounded time, reads 200 or 503, writes 503 with Retry-After and never applied, all back after (CONTRACT §18)', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'calendar-pass4-'))
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  const url = await freshDatabaseUrl(t, join(dir, 'calendar.db'))
  const key = await editorKey(url)
  const server = await startServer(t, url, await freePort(), { CALENDAR_DATABASE_TIMEOUT_MS: '300' })
  const send = async (method: string, path: string, body?: unknown, extra: Record<string, string> = {}) => {
    const began = Date.now()
    const res = await fetch(`${server.base}${path}`, {
      method, headers: { authorization: `Bearer ${key}`, ...(body !== undefined ? { 'content-type': 'application/json' } : {}), ...extra },
      ...(body !== undefined ? { body: JSON.stringify(body) } : {}), signal: AbortSignal.timeout(15_000),
    })
    const text = await res.text()
    const problems = contractProblems(method, `${API}${path}`, { statusCode: res.status, headers: Object.fromEntries(res.headers), body: text })
    if (problems.length > 0) t.fail(`${method} ${path} breaks the contract`, { problems, body: text.slice(0, 300) })
    return { status: res.status, ms: Date.now() - began, text, retryAfter: res.headers.get('retry-after'), replayed: res.headers.get('idempotent-replayed') }
  }
  const series = JSON.parse((await send('POST', '/events', { title: 'Locked', start_date: '2026-12-20 18:00:00', end_date: '2026-12-20 19:00:00', recurrence: { rule: 'FREQ=DAILY;COUNT=3' } })).text) as Event
  t.equal((await send('POST', '/venues', { venue: 'Before' })).status, 201)
  const reads = ['/events?search=Lock', `/events/${series.id}`, `/events/by-slug/${series.slug}`, `/events/${series.id}/occurrences`, `/events/${series.id}/occurrences/20261221T180000Z`,
    '/changes', '/events?ical=1', `/events/${series.id}?ical=1`, '/venues?search=Bef', '/categories?hide_empty=false']
  const writes: Array<[string, string, unknown, Record<string, string>?]> = [
    ['POST', '/events', { title: 'Behind', start_date: '2026-12-20 18:00:00', end_date: '2026-12-20 19:00:00' }, { 'idempotency-key': 'behind-the-lock' }],
    ['PATCH', `/events/${series.id}`, { title: 'Changed' }], ['DELETE', `/events/${series.id}`, undefined],
    ['PATCH', occ(series.id, '20261221T180000Z').slice(API.length), { title: 'One' }], ['POST', occ(series.id, '20261221T180000Z', '/split').slice(API.length), {}],
    ['DELETE', occ(series.id, '20261222T180000Z').slice(API.length), undefined], ['POST', '/venues', { venue: 'Behind' }], ['POST', '/categories', { name: 'Behind' }],
  ]
  const release = await holdLock(url, ['events', 'venues', 'organizers', 'terms', 'change_log'])
  for (const path of reads) {
    const r = await send('GET', path)
    t.ok(r.status === 200 || r.status === 503, `GET ${path} behind the lock: 200 or 503 (${r.status})`)
    if (r.status === 503) t.match(r.retryAfter, /^\d+$/, `GET ${path}: Retry-After`)
    t.ok(r.ms < 3000, `GET ${path}: answered in bounded time (${r.ms} ms)`)
  }
  for (const [method, path, body, extra] of writes) {
    const r = await send(method, path, body, extra)
    t.equal(r.status, 503, `${method} ${path} behind the lock: 503`)
    t.equal((JSON.parse(r.text) as { code: string }).code, 'rest_database_unavailable')
    t.match(r.retryAfter, /^\d+$/, `${method} ${path}: Retry-After`)
    t.ok(r.ms < 3000, `${method} ${path}: answered in bounded time (${r.ms} ms)`)
  }
  t.equal((await fetch(server.base.replace(API, '/healthz'))).status, 200, 'healthz')
  await release()
  const retried = await send('POST', '/events', writes[0]?.[2], { 'idempotency-key': 'behind-the-lock' })
  t.equal(retried.status, 201, 'the same key after a 503 creates: a 503 is not remembered')
  t.equal(retried.replayed, null, 'not a replay')
  for (const path of reads) t.equal((await send('GET', path)).status, 200, `GET ${path} after`)
  const after = JSON.parse((await send('GET', `/events/${series.id}`)).text) as Event
  t.same([after.title, after.status, after.recurrence], ['Locked', 'publish', { rule: 'FREQ=DAILY;COUNT=3', rdates: [], exdates: [] }], 'no refused write was applied')
  const occurrences = JSON.parse((await send('GET', `/events/${series.id}/occurrences`)).text) as { occurrences: Event[] }
  t.same(occurrences.occurrences.map((o) => [o.occurrence?.id, o.title]), [['20261220T180000Z', 'Locked'], ['20261221T180000Z', 'Locked'], ['20261222T180000Z', 'Locked']])
  const venues = JSON.parse((await send('GET', '/venues')).text) as { venues: Array<{ venue: string }> }
  t.same(venues.venues.map((v) => v.venue), ['Before'])
  t.equal(server.child.exitCode, null, 'the process is up')
})

engineTest('postgres', t, 'PostgreSQL: the server\'s connections terminated again and again while venues are written, /changes followed and webhooks delivered: writes 201 or 503, the feed and the receiver get every acknowledged write and nothing else (CONTRACT §12, §13, §18)', async (t) => {
  const base = await freshDatabaseUrl(t)
  const name = `calendar_pass4_${process.pid}`
  const url = `${base}&application_name=${name}`
  const key = await editorKey(url, 'administrator')
  const receiver = await startReceiver(t)
  receiver.fallback = { status: 200 }
  const server = await startServer(t, url, await freePort(), { DATABASE_POOL_SIZE: '4', CALENDAR_WEBHOOK_ALLOW_PRIVATE: 'true', CALENDAR_WEBHOOK_RETRY_SCHEDULE: '100ms,200ms,400ms,800ms,1s,1s,1s,1s,1s,1s' })
  const admin = new pg.Client({ connectionString: base.replace(/\?.*$/, '') })
  await admin.connect()
  t.teardown(() => admin.end())
  const terminate = async () => (await admin.query('select pg_terminate_backend(pid) from pg_stat_activity where application_name = $1', [name])).rowCount ?? 0
  const hook = await call(server.base, key, 'POST', '/webhooks', { url: receiver.url, events: ['venue.*'] })
  t.equal(hook.status, 201)
  receiver.secret = String(hook.body.secret)
  const cursor = String((await call(server.base, key, 'GET', '/changes?since=now')).body.next_cursor)
  const acknowledged: number[] = []
  const writes: number[] = []
  const feeds: number[] = []
  const work = Array.from({ length: 30 }, async (_, i) => {
    await new Promise((resolve) => setTimeout(resolve, i * 20))
    const written = await call(server.base, key, 'POST', '/venues', { venue: `Venue ${i}` })
    writes.push(written.status)
    if (written.status === 201) acknowledged.push(Number(written.body.id))
    feeds.push((await call(server.base, key, 'GET', `/changes?since=${encodeURIComponent(cursor)}`)).status)
  })
  const killer = (async () => {
    let killed = 0
    for (let k = 0; k < 6; k++) {
      await new Promise((resolve) => setTimeout(resolve, 100))
      killed += await terminate()
    }
    return killed
  })()
  await Promise.all(work)
  t.ok(await killer > 0, 'connections were terminated')
  t.ok(writes.every((s) => s === 201 || s === 503), `writes 201 or 503 (${writes.join(',')})`)
  t.ok(feeds.every((s) => s === 200 || s === 503), `/changes 200 or 503 (${feeds.join(',')})`)
  for (let i = 0; i < 50; i++) {
    const after = await call(server.base, key, 'POST', '/venues', { venue: 'After' })
    if (after.status === 201) {
      acknowledged.push(Number(after.body.id))
      break
    }
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
  t.ok(acknowledged.length > 0, 'writes succeed again')
  await receiver.until((got) => acknowledged.every((id) => got.some((r) => r.json.data.id === id && r.json.type === 'venue.created')), 40_000, () => `received ${receiver.received.length} for ${acknowledged.length} acknowledged`)
  const delivered = new Set(receiver.received.map((r) => r.json.data.id))
  t.same([...delivered].sort((a, b) => a - b), [...acknowledged].sort((a, b) => a - b), 'the receiver got every acknowledged write and nothing refused')
  t.ok(receiver.received.every((r) => r.verified), 'every delivery verifies')
  const seen = new Set<number>()
  let since = ''
  for (let more = true; more;) {
    const page = await call(server.base, key, 'GET', `/changes?resource=venues&per_page=500${since === '' ? '' : `&since=${encodeURIComponent(since)}`}`)
    t.equal(page.status, 200)
    for (const change of page.body.changes as Array<{ id: number }>) seen.add(change.id)
    more = page.body.has_more === true
    since = String(page.body.next_cursor)
  }
  t.same([...seen].sort((a, b) => a - b), [...acknowledged].sort((a, b) => a - b), 'the change feed holds every acknowledged write and nothing refused')
  t.equal(server.child.exitCode, null, 'the process is up')
})
