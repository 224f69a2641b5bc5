/**
 * iCalendar feeds (CONTRACT §14): negotiation (`ical`, `Accept`, JSON by default), every property
 * checked against the JSON of the same event with an independent parser (ical.js), all-day and
 * multi-day events, three time zones across their DST changes, escaping and folding, stable UIDs and a
 * growing SEQUENCE, ETags and 304, compression, visibility and password protection (§6), languages
 * (§7), the list's filters, order and cap, and a feed of 2,000 events.
 */
import { ICalEvent } from 'ical-generator'
import t from 'tap'
import type { Test } from 'tap'
import { insertEvent } from './helpers/fixtures.js'
import { EVENTS, setup, type Body, type Event, type Setup } from './helpers/events.js'
import { expectError } from './helpers/errors.js'
import { lineProblems, parseFeed, text, time, utcOf, wall } from './helpers/ical.js'
import { API, type Injected } from './helpers/build.js'

const CAL = { accept: 'text/calendar' }

function isFeed(t: Test, res: Injected): void {
  t.equal(res.statusCode, 200, res.statusCode === 200 ? 'a feed' : res.body.slice(0, 300))
  t.equal(res.headers['content-type'], 'text/calendar; charset=utf-8')
}

async function feed(t: Test, s: Setup, query = '?ical=1', headers: Record<string, string> = {}): Promise<{ res: Injected; parsed: ReturnType<typeof parseFeed> }> {
  const res = await s.list(query, headers)
  isFeed(t, res)
  t.strictSame(lineProblems(res.rawPayload), [], 'CRLF, at most 75 octets a line, no UTF-8 sequence split')
  return { res, parsed: parseFeed(res.body) }
}


/** Counts the VEVENTs ical-generator writes from now until the test ends. */
function countVevents(t: Test): { count: () => number; reset: () => void } {
  let written = 0
  const original = ICalEvent.prototype.toString
  ICalEvent.prototype.toString = function (this: ICalEvent) {
    written += 1
    return original.call(this)
  }
  t.teardown(() => {
    ICalEvent.prototype.toString = original
  })
  return { count: () => written, reset: () => { written = 0 } }
}

t.test('negotiation: ical=1/true or Accept preferring text/calendar; JSON by default; invalid parameters get JSON errors', async (t) => {
  const s = await setup(t)
  await s.event('Concert')
  // Accept alone decides only by quality: text/calendar strictly above JSON (or acceptable while JSON is not).
  const feeds: Array<readonly [string, Record<string, string>]> = [
    ['?ical=1', {}], ['?ical=true', {}], ['', CAL], ['', { accept: 'TEXT/Calendar' }], ['', { accept: 'text/*' }],
    ['', { accept: 'application/json;q=0.5, text/calendar' }], ['', { accept: 'text/calendar, application/json;q=0.9' }],
    ['', { accept: 'text/calendar, */*;q=0.1' }], ['', { accept: 'text/calendar; charset="utf-8", application/json;q=0' }],
    ['?ical=1', { accept: 'application/json' }],
  ]
  for (const [query, headers] of feeds) {
    const res = await s.list(query, headers)
    isFeed(t, res)
    t.comment(`feed for ${query} ${JSON.stringify(headers)}`)
    t.match(String(res.headers.vary), /Accept\b.*Accept-Encoding|Accept-Encoding.*Accept\b/, 'Vary names Accept (and Accept-Encoding)')
  }
  const jsons: Array<readonly [string, Record<string, string>]> = [
    ['', {}], ['', { accept: '' }], ['', { accept: '*/*' }], ['', { accept: 'application/json' }],
    ['', { accept: 'text/calendar, application/json' }], ['', { accept: 'application/json, text/calendar' }],
    ['', { accept: 'text/calendar;q=0.8, application/json;q=0.8' }], ['', { accept: 'text/calendar, */*' }],
    ['', { accept: 'text/calendar;q=0.5, application/json' }], ['', { accept: 'text/calendar;q=0, */*' }],
    ['', { accept: 'text/html' }], ['', { accept: 'not a media type' }], ['?ical=0', CAL], ['?ical=false', {}],
  ]
  for (const [query, headers] of jsons) {
    const res = await s.list(query, headers)
    t.equal(res.statusCode, 200)
    t.match(res.headers['content-type'], /^application\/json/, `JSON for ${query} ${JSON.stringify(headers)}`)
    t.match(String(res.headers.vary), /\bAccept\b/)
  }
  expectError(t, await s.list('?ical=maybe'), 400, 'rest_invalid_param')
  expectError(t, await s.list('?ical=1&start_date=soon'), 400, 'rest_invalid_param')
  expectError(t, await s.list('', { accept: 'text/calendar' }).then(() => s.list('?status=draft', CAL)), 400, 'rest_invalid_param')
  expectError(t, await s.get(99, '?ical=1'), 404, 'rest-event-not-found')
  const single = await s.get(1, '', CAL)
  isFeed(t, single)
  const bySlug = await s.inject({ url: `${EVENTS}/by-slug/concert?ical=1` })
  isFeed(t, bySlug)
  t.equal(bySlug.body, single.body, 'by id and by slug: the same feed')
})

t.test('every property of a VEVENT matches the JSON of the same event', async (t) => {
  const s = await setup(t, { config: { extensions: new Set(['geoloc']), timezone: 'Europe/Zurich' } })
  const venue = await s.venue({ venue: 'Volkshaus', address: 'Stauffacherstrasse 60', city: 'Zürich', zip: '8004', country: 'Switzerland', geo_lat: 47.3769, geo_lng: 8.5268 })
  const withMail = await s.organizer({ organizer: 'Jazz Club "Zürich"', email: 'info@jazzclub.example' })
  const noMail = await s.organizer({ organizer: 'Friends; of Jazz', website: 'https://friends.example/jazz' })
  const jazz = await s.category('Jazz, live')
  const night = await s.category('Night')
  const a = await s.event('Late Night Jazz', {
    start_date: '2026-07-01 21:00:00', end_date: '2026-07-01 23:30:00', timezone: 'Europe/Zurich',
    description: 'Two sets.', website: 'https://jazzclub.example/late-night', venue: [venue.id], organizer: [withMail.id], categories: [jazz.id, night.id],
  })
  const b = await s.event('Open Stage', { start_date: '2026-07-02 20:00:00', end_date: '2026-07-02 22:00:00', organizer: [noMail.id] })
  const { res, parsed } = await feed(t, s)
  const cal = parsed.calendar
  t.equal(text(cal, 'version'), '2.0')
  t.match(text(cal, 'prodid'), /^-\/\/.+\/\/.+\/\/EN$/)
  t.equal(text(cal, 'calscale'), 'GREGORIAN')
  t.equal(text(cal, 'method'), 'PUBLISH')
  t.equal(text(cal, 'x-wr-calname'), 'Events – calendar.test', 'a list feed: the events of the host')
  t.equal(text(cal, 'x-wr-timezone'), 'Europe/Zurich', 'the site zone')
  t.equal(String(cal.getFirstProperty('refresh-interval')?.getFirstValue()), 'PT1H')
  t.strictSame(cal.getAllSubcomponents('vtimezone').map((z) => text(z, 'tzid')), ['Europe/Zurich'], 'a VTIMEZONE for the zone in use')
  t.equal(res.headers['x-total'], '2')
  t.strictSame(parsed.events.map((e) => text(e, 'uid')), [`${a.id}@calendar.test`, `${b.id}@calendar.test`], 'in list order, UID <id>@<host>')

  const e = parsed.event(a.id)
  t.equal(text(e, 'sequence'), '0', 'SEQUENCE 0 for an event never updated')
  t.equal(utcOf(time(e, 'dtstamp')), a.modified_utc)
  t.equal(utcOf(time(e, 'created')), a.date_utc)
  t.equal(utcOf(time(e, 'last-modified')), a.modified_utc)
  t.equal(e.getFirstProperty('dtstart')?.getParameter('tzid'), 'Europe/Zurich')
  t.equal(wall(time(e, 'dtstart')), a.start_date)
  t.equal(wall(time(e, 'dtend')), a.end_date)
  t.equal(utcOf(time(e, 'dtstart')), a.utc_start_date)
  t.equal(utcOf(time(e, 'dtend')), a.utc_end_date)
  t.equal(text(e, 'summary'), a.title)
  t.equal(text(e, 'description'), a.description)
  t.equal(text(e, 'location'), 'Volkshaus, Stauffacherstrasse 60, Zürich, 8004, Switzerland')
  t.strictSame(e.getFirstPropertyValue('geo'), [47.3769, 8.5268])
  const organizer = e.getFirstProperty('organizer')
  t.equal(organizer?.getParameter('cn'), 'Jazz Club "Zürich"')
  t.equal(organizer?.getFirstValue(), 'mailto:info@jazzclub.example')
  t.strictSame(e.getFirstProperty('categories')?.getValues(), a.categories.map((c) => c.name))
  t.equal(text(e, 'url'), a.website)
  t.equal(text(e, 'status'), 'CONFIRMED')

  const o = parsed.event(b.id)
  t.equal(o.getFirstProperty('organizer')?.getParameter('cn'), 'Friends; of Jazz')
  t.equal(o.getFirstProperty('organizer')?.getFirstValue(), 'https://friends.example/jazz', 'no e-mail: its website')
  t.equal(text(o, 'url'), b.rest_url, 'no website: rest_url')
  t.equal(text(o, 'location'), undefined)
  t.equal(text(o, 'description'), undefined)
})

t.test('all-day and multi-day events', async (t) => {
  const s = await setup(t)
  const one = await s.event('Fair', { all_day: true, start_date: '2026-07-01 00:00:00', end_date: '2026-07-01 23:59:59' })
  const three = await s.event('Festival', { all_day: true, start_date: '2026-07-10 00:00:00', end_date: '2026-07-12 23:59:59' })
  const span = await s.event('Camp', { start_date: '2026-07-20 18:00:00', end_date: '2026-07-23 10:00:00' })
  const { parsed } = await feed(t, s)
  for (const [event, start, end] of [[one, '2026-07-01', '2026-07-02'], [three, '2026-07-10', '2026-07-13']] as const) {
    const e = parsed.event(event.id)
    t.ok(time(e, 'dtstart').isDate, 'DTSTART;VALUE=DATE')
    t.equal(time(e, 'dtstart').toString(), start)
    t.equal(time(e, 'dtend').toString(), end, 'DTEND the day after the last day')
  }
  t.equal(wall(time(parsed.event(span.id), 'dtstart')), span.start_date)
  t.equal(wall(time(parsed.event(span.id), 'dtend')), span.end_date)
})

t.test('three time zones across their DST changes: wall times equal the JSON, instants the UTC dates', async (t) => {
  const s = await setup(t)
  const made: Event[] = []
  // Berlin leaves DST on 25 Oct 2026, New York on 1 Nov 2026, Sydney enters it on 4 Oct 2026.
  for (const [zone, start, end] of [
    ['Europe/Berlin', '2026-10-24 20:00:00', '2026-10-26 09:00:00'],
    ['America/New_York', '2026-10-31 22:00:00', '2026-11-01 03:30:00'],
    ['Australia/Sydney', '2026-10-03 23:00:00', '2026-10-04 05:00:00'],
  ] as const) {
    made.push(await s.event(`In ${zone}`, { timezone: zone, start_date: start, end_date: end }))
  }
  const { parsed } = await feed(t, s)
  t.strictSame(parsed.calendar.getAllSubcomponents('vtimezone').map((z) => text(z, 'tzid')).sort(), ['America/New_York', 'Australia/Sydney', 'Europe/Berlin'])
  for (const event of made) {
    const e = parsed.event(event.id)
    t.equal(e.getFirstProperty('dtstart')?.getParameter('tzid'), event.timezone)
    t.equal(wall(time(e, 'dtstart')), event.start_date, `${event.timezone} start wall time`)
    t.equal(wall(time(e, 'dtend')), event.end_date, `${event.timezone} end wall time`)
    t.equal(utcOf(time(e, 'dtstart')), event.utc_start_date, `${event.timezone} start instant by the feed's VTIMEZONE`)
    t.equal(utcOf(time(e, 'dtend')), event.utc_end_date, `${event.timezone} end instant by the feed's VTIMEZONE`)
  }
  // A wall time that occurs twice (Berlin, 02:30 on 25 Oct 2026): its first occurrence is what a TZID local
  // time means (RFC 5545 §3.3.5), so it is written so; the second is written in UTC.
  const twice = await s.event('Twice', { timezone: 'Europe/Berlin', start_date: '2026-10-25 02:30:00', end_date: '2026-10-25 02:45:00' })
  t.equal(twice.utc_start_date, '2026-10-25 00:30:00', 'the API takes the first occurrence')
  const second = await s.event('Second', { timezone: 'Europe/Berlin', start_date: '2026-10-25T02:30:00+01:00', end_date: '2026-10-25T03:30:00+01:00' })
  t.equal(second.start_date, '2026-10-25 02:30:00')
  t.equal(second.utc_start_date, '2026-10-25 01:30:00', 'the second occurrence')
  const howe = await s.event('Lord Howe', { timezone: 'Australia/Lord_Howe', start_date: '2027-04-04 01:45:00', end_date: '2027-04-04 03:00:00' })
  t.equal(howe.utc_start_date, '2027-04-03 14:45:00', 'the first of 01:45 (+11:00, then +10:30)')
  const twiceFeed = await feed(t, s)
  for (const [event, zone] of [[twice, 'Europe/Berlin'], [howe, 'Australia/Lord_Howe']] as const) {
    const e = twiceFeed.parsed.event(event.id)
    t.equal(e.getFirstProperty('dtstart')?.getParameter('tzid'), zone, `${event.title}: the first occurrence with its TZID`)
    t.equal(wall(time(e, 'dtstart')), event.start_date)
    t.match(twiceFeed.res.body, new RegExp(`DTSTART;TZID=${zone}:${event.start_date.replace(/[- :]/g, '').replace(/^(\d{8})/, '$1T')}\r\n`))
  }
  t.ok(twiceFeed.parsed.calendar.getAllSubcomponents('vtimezone').some((z) => text(z, 'tzid') === 'Australia/Lord_Howe'), 'with its VTIMEZONE')
  const secondFeed = twiceFeed.parsed.event(second.id)
  t.equal(secondFeed.getFirstProperty('dtstart')?.getParameter('tzid'), undefined, 'the second occurrence in UTC')
  t.equal(utcOf(time(secondFeed, 'dtstart')), second.utc_start_date)
  t.equal(utcOf(time(secondFeed, 'dtend')), second.utc_end_date)
  // A legacy alias is named by the TZID of its definition; a manual offset has a fixed-offset VTIMEZONE.
  const alias = await s.event('Alias', { timezone: 'Asia/Calcutta', start_date: '2026-08-01 10:00:00', end_date: '2026-08-01 11:00:00' })
  const manual = await s.event('Manual', { timezone: 'UTC+5:30', start_date: '2026-08-02 10:00:00', end_date: '2026-08-02 11:00:00' })
  const west = await s.event('West', { timezone: 'UTC-3.5', start_date: '2026-08-03 10:00:00', end_date: '2026-08-03 11:00:00' })
  const again = (await feed(t, s)).parsed
  t.equal(again.event(alias.id).getFirstProperty('dtstart')?.getParameter('tzid'), 'Asia/Kolkata')
  t.equal(utcOf(time(again.event(alias.id), 'dtstart')), alias.utc_start_date)
  for (const [event, tzid] of [[manual, 'UTC+0530'], [west, 'UTC-0330']] as const) {
    const e = again.event(event.id)
    t.equal(e.getFirstProperty('dtstart')?.getParameter('tzid'), tzid, `${event.timezone}: TZID ${tzid}`)
    t.equal(wall(time(e, 'dtstart')), event.start_date)
    t.equal(utcOf(time(e, 'dtstart')), event.utc_start_date, `${event.timezone}: the instant by the feed's VTIMEZONE`)
    t.equal(utcOf(time(e, 'dtend')), event.utc_end_date)
    t.ok(again.calendar.getAllSubcomponents('vtimezone').some((z) => text(z, 'tzid') === tzid), `${tzid} has its VTIMEZONE`)
  }
})

t.test('a long description with commas, semicolons, newlines and emoji: escaped, folded, read back equal', async (t) => {
  const s = await setup(t)
  const description = `Bring: chairs, blankets; snacks.\nSecond line\r\nThird, with \\ and "quotes" 🎷🎺🥁 ${'Zürich – ü'.repeat(20)} ${'🎉'.repeat(40)} end`
  const title = `Summer; Jazz, ${'ø'.repeat(50)} 🎷`
  const event = await s.event(title, { description })
  const { res, parsed } = await feed(t, s)
  t.ok(res.rawPayload.toString('utf8').split('\r\n').length > 10, 'folded over many lines')
  t.equal(text(parsed.event(event.id), 'description'), event.description?.replace(/\r\n/g, '\n'), 'the description as stored (a CRLF reads back as a newline)')
  t.equal(text(parsed.event(event.id), 'summary'), title)
})

t.test('control characters are left out of text (RFC 5545 TSAFE-CHAR), a lone CR is a line end; URLs as they are; a zone in any case has its TZID', async (t) => {
  const s = await setup(t)
  const venue = await s.venue({ venue: 'Hall\u0007 \u001bone', city: 'Z\u007Fürich', status: 'publish' })
  const organizer = await s.organizer({ organizer: 'Club\u0001\u001f', website: 'https://club.example/a?b=c,d;e', status: 'publish' })
  const event = await s.event('Title\u0001\u001f\u000b\u000c\u007F\tend', {
    description: 'one\rtwo\r\nthree\u0002', website: 'https://example.com/a?b=c,d;e', venue: [venue.id], organizer: [organizer.id], timezone: 'europe/zurich',
  })
  const { res, parsed } = await feed(t, s)
  const raw = res.rawPayload.toString('utf8')
  t.notMatch(raw, /[\u0000-\u0008\u000B\u000C\u000E-\u001F\u007F]/, 'no control character but tab and CRLF')
  t.notMatch(raw.replace(/\r\n/g, ''), /\r/, 'no CR but in line ends')
  const vevent = parsed.event(event.id)
  t.equal(text(vevent, 'summary'), 'Title\tend')
  t.equal(text(vevent, 'description'), 'one\ntwo\nthree')
  t.equal(text(vevent, 'location'), 'Hall one, Zürich')
  t.equal(text(vevent, 'url'), 'https://example.com/a?b=c,d;e', 'the website as written: a URI value is not escaped')
  const unfolded = raw.replace(/\r\n[ \t]/g, '')
  t.match(unfolded, /\r\nORGANIZER;CN="Club":https:\/\/club\.example\/a\?b=c,d;e\r\n/, 'the organizer by its website, as written')
  t.match(unfolded, /\r\nDTSTART;TZID=Europe\/Zurich:\d{8}T\d{6}\r\n/, 'europe/zurich is named by its TZID')
  t.match(unfolded, /\r\nBEGIN:VTIMEZONE\r\nTZID:Europe\/Zurich\r\n/, 'with its VTIMEZONE')
  t.equal(event.timezone, 'europe/zurich', 'the JSON keeps the zone as sent')
})

t.test('DESCRIPTION is plain text: HTML descriptions converted, plain ones unchanged', async (t) => {
  const s = await setup(t)
  const cases: Array<[string, string]> = [
    ['<p>Doors at 8 &amp; music at 9.</p>\n<p>Line one<br>Line two &lt;3 &#8211; caf&eacute;</p>\n<p>Tickets: <a href="https://tickets.example/jazz?a=1&amp;b=2">here</a>, or <a href="https://club.example">https://club.example</a>.</p>\n<ul><li>Bar</li><li>Garden</li></ul>',
      'Doors at 8 & music at 9.\n\nLine one\nLine two <3 – café\n\nTickets: here (https://tickets.example/jazz?a=1&b=2), or https://club.example.\n\n * Bar\n * Garden'],
    ['First line\nsecond line with <strong>bold</strong> &amp; more', 'First line\nsecond line with bold & more'],
    ['<p>Mail <a href="mailto:info@club.example">us</a><img src="https://club.example/x.png" alt="x"></p>', 'Mail us (info@club.example)'],
    ['Plain: a < b, c > d, R&D, two  spaces\n\nand a paragraph', 'Plain: a < b, c > d, R&D, two  spaces\n\nand a paragraph'],
  ]
  const made: Array<[Event, string]> = []
  for (const [i, [html, plain]] of cases.entries()) made.push([await s.event(`Described ${i}`, { description: html }), plain])
  const { parsed } = await feed(t, s)
  for (const [event, plain] of made) t.equal(text(parsed.event(event.id), 'description'), plain, event.title)
  t.equal((await s.get(made[0]?.[0].id ?? 0)).json<Event>().description, cases[0]?.[0], 'the JSON keeps the HTML')
})

t.test('UID unchanged and SEQUENCE grown after updates; a change that changes nothing leaves both', async (t) => {
  const s = await setup(t)
  const event = await s.event('Moving')
  const before = parseFeed((await s.get(event.id, '?ical=1')).body).event(event.id)
  t.equal(text(before, 'sequence'), '0')
  t.equal((await s.patch(event.id, { start_date: '2026-07-05 18:00:00', end_date: '2026-07-05 21:00:00' })).statusCode, 200)
  const moved = parseFeed((await s.get(event.id, '?ical=1')).body).event(event.id)
  t.equal(text(moved, 'uid'), text(before, 'uid'), 'the UID stays when the event moves')
  t.equal(text(moved, 'sequence'), '1')
  t.equal(wall(time(moved, 'dtstart')), '2026-07-05 18:00:00')
  t.equal((await s.patch(event.id, { title: 'Moving' })).statusCode, 200)
  t.equal(text(parseFeed((await s.get(event.id, '?ical=1')).body).event(event.id), 'sequence'), '1', 'no change, no new SEQUENCE')
  t.equal((await s.patch(event.id, { title: 'Moved' })).statusCode, 200)
  const list = (await feed(t, s)).parsed.event(event.id)
  t.equal(text(list, 'sequence'), '2')
  t.equal(text(list, 'uid'), `${event.id}@calendar.test`)
})

t.test('SEQUENCE grows when a deleted venue, organizer or term unlinks the event (the change log says updated), not when one is renamed', async (t) => {
  const s = await setup(t)
  const venue = await s.venue({ venue: 'Hall' })
  const organizer = await s.organizer({ organizer: 'Club' })
  const category = await s.category('Jazz')
  const tag = await s.tag('live')
  const event = await s.event('Linked', { venue: [venue.id], organizer: [organizer.id], categories: [category.id], tags: [tag.id] })
  const sequence = async (): Promise<string | undefined> => text(parseFeed((await s.get(event.id, '?ical=1')).body).event(event.id), 'sequence')
  t.equal(await sequence(), '0')
  const rename = await s.inject({ method: 'PATCH', url: `${API}/venues/${venue.id}`, headers: s.editor, payload: { venue: 'Big Hall' } })
  t.equal(rename.statusCode, 200)
  t.equal(await sequence(), '0', 'a renamed venue changes only the venue (LOCATION changes, the event was not updated)')
  const since = (await s.inject({ url: `${API}/changes?resource=events`, headers: s.editor })).json<{ next_cursor: string }>().next_cursor
  let expected = 0
  for (const url of [`${API}/venues/${venue.id}?force=true`, `${API}/organizers/${organizer.id}?force=true`, `${API}/categories/${category.id}?force=true`, `${API}/tags/${tag.id}?force=true`]) {
    const etag = String((await s.get(event.id)).headers.etag)
    const removed = await s.inject({ method: 'DELETE', url, headers: s.editor })
    t.equal(removed.statusCode, 200, `deleted ${url}`)
    expected += 1
    t.equal(await sequence(), String(expected), `SEQUENCE ${expected} after ${url}`)
    t.not(String((await s.get(event.id)).headers.etag), etag, 'the event\'s ETag moved')
    expectError(t, await s.patch(event.id, { title: 'Stale' }, { ...s.editor, 'if-match': etag }), 412, 'rest-precondition-failed')
  }
  const changes = await s.inject({ url: `${API}/changes?resource=events&since=${since}`, headers: s.editor })
  t.equal(changes.statusCode, 200)
  t.strictSame(changes.json<{ changes: Array<{ id: number; action: string }> }>().changes.map((c) => [c.id, c.action]), [[event.id, 'updated']], 'the log names the event updated')
  t.equal((await s.patch(event.id, { title: 'Linked again' })).statusCode, 200, 'the current ETag still works without If-Match')
  t.equal(await sequence(), String(expected + 1))
})

t.test('SEQUENCE grows when a linked venue or organizer goes to the trash, comes back or changes status: LOCATION and ORGANIZER come and go', async (t) => {
  const s = await setup(t)
  const venue = await s.venue({ venue: 'Hall' })
  const organizer = await s.organizer({ organizer: 'Club' })
  const event = await s.event('Linked', { venue: [venue.id], organizer: [organizer.id] })
  const entry = async () => {
    const vevent = parseFeed((await s.get(event.id, '?ical=1')).body).event(event.id)
    return { sequence: text(vevent, 'sequence'), location: text(vevent, 'location') !== undefined, organizer: vevent.getFirstProperty('organizer') !== null }
  }
  t.same(await entry(), { sequence: '0', location: true, organizer: true })
  const since = (await s.inject({ url: `${API}/changes?resource=events`, headers: s.editor })).json<{ next_cursor: string }>().next_cursor
  const steps: Array<readonly [string, Record<string, unknown> | undefined, { sequence: string; location: boolean; organizer: boolean }]> = [
    [`/venues/${venue.id}`, undefined, { sequence: '1', location: false, organizer: true }],
    [`/organizers/${organizer.id}`, undefined, { sequence: '2', location: false, organizer: false }],
    [`/venues/${venue.id}`, { status: 'publish' }, { sequence: '3', location: true, organizer: false }],
    [`/organizers/${organizer.id}`, { status: 'draft' }, { sequence: '4', location: true, organizer: false }],
    [`/organizers/${organizer.id}`, { status: 'publish' }, { sequence: '5', location: true, organizer: true }],
    [`/venues/${venue.id}`, { status: 'draft' }, { sequence: '6', location: false, organizer: true }],
    [`/venues/${venue.id}`, { city: 'Bern' }, { sequence: '6', location: false, organizer: true }],
  ]
  for (const [path, body, expected] of steps) {
    const etag = String((await s.get(event.id)).headers.etag)
    const res = await s.inject({ method: body === undefined ? 'DELETE' : 'PATCH', url: `${API}${path}`, headers: s.editor, ...(body === undefined ? {} : { payload: body }) })
    t.equal(res.statusCode, 200, `${body === undefined ? 'DELETE' : 'PATCH'} ${path} ${JSON.stringify(body)}`)
    t.same(await entry(), expected, `after ${path} ${JSON.stringify(body)}`)
    if (body === undefined) t.not(String((await s.get(event.id)).headers.etag), etag, 'the event\'s ETag moved')
  }
  const changes = (await s.inject({ url: `${API}/changes?resource=events&since=${since}` })).json<{ changes: Array<{ id: number; action: string }> }>()
  t.strictSame(changes.changes.map((c) => [c.id, c.action]), [[event.id, 'updated']], 'the log names the event updated')
})

t.test('ETag and 304 on feeds; a feed tag differs from the JSON one; compressed feeds', async (t) => {
  const s = await setup(t)
  const event = await s.event('Tagged', { description: 'x'.repeat(3000) })
  const json = await s.get(event.id)
  const single = await s.get(event.id, '?ical=1')
  t.type(single.headers.etag, 'string')
  t.not(single.headers.etag, json.headers.etag, 'the feed is another representation: another tag')
  const again = await s.get(event.id, '?ical=1', { 'if-none-match': String(single.headers.etag) })
  t.equal(again.statusCode, 304)
  t.equal(again.headers.etag, single.headers.etag)
  t.equal((await s.get(event.id, '?ical=1', { 'if-none-match': String(json.headers.etag) })).statusCode, 200, 'the JSON tag does not match the feed')

  const list = await s.list('?ical=1')
  const tag = String(list.headers.etag)
  t.match(tag, /^"ical-[A-Za-z0-9_-]+"$/)
  const unchanged = await s.list('?ical=1', { 'if-none-match': tag })
  t.equal(unchanged.statusCode, 304, '304 on an unchanged feed')
  t.equal(unchanged.body, '')
  t.equal((await s.list('', { ...CAL, 'if-none-match': tag })).statusCode, 304, 'the same feed asked by Accept')

  const gz = await s.list('?ical=1', { 'accept-encoding': 'gzip' })
  t.equal(gz.headers['content-encoding'], 'gzip', 'a feed over 1 kB is compressed')
  t.equal(gz.headers.etag, `${tag.slice(0, -1)}-gzip"`)
  t.equal(gz.body, list.body)
  t.equal(gz.headers.vary, 'Accept, Accept-Encoding', 'each header named once in Vary')
  const gzJson = await s.get(event.id, '', { 'accept-encoding': 'gzip' })
  t.equal(gzJson.headers['content-encoding'], 'gzip')
  t.equal(gzJson.headers.vary, 'Accept, Accept-Encoding', 'each header named once in Vary (JSON)')
  const gzList = await s.list('', { 'accept-encoding': 'br' })
  t.equal(gzList.headers['content-encoding'], 'br')
  t.equal(gzList.headers.vary, 'Accept, Accept-Encoding', 'each header named once in Vary (a JSON list)')
  t.equal((await s.list('?ical=1', { 'accept-encoding': 'gzip', 'if-none-match': String(gz.headers.etag) })).statusCode, 304)

  t.equal((await s.patch(event.id, { title: 'Retagged' })).statusCode, 200)
  const changed = await s.list('?ical=1', { 'if-none-match': tag })
  t.equal(changed.statusCode, 200, 'a change gives the feed a new tag')
  t.not(changed.headers.etag, tag)
})

t.test('calendar properties come before every VTIMEZONE and VEVENT', async (t) => {
  const s = await setup(t, { config: { timezone: 'Europe/Zurich' } })
  await s.event('Zoned', { timezone: 'Europe/Berlin' })
  const { res } = await feed(t, s)
  const lines = res.body.split('\r\n')
  const firstComponent = lines.findIndex((l) => l === 'BEGIN:VTIMEZONE' || l === 'BEGIN:VEVENT')
  t.ok(firstComponent > 0, 'a component follows')
  t.equal(lines[0], 'BEGIN:VCALENDAR')
  for (const name of ['PRODID', 'VERSION', 'CALSCALE', 'METHOD', 'X-WR-CALNAME', 'X-WR-TIMEZONE', 'REFRESH-INTERVAL']) {
    const at = lines.findIndex((l) => l.startsWith(`${name}:`) || l.startsWith(`${name};`))
    t.ok(at > 0 && at < firstComponent, `${name} before the first component`)
  }
  t.equal(lines.filter((l) => /^(X-WR-TIMEZONE|REFRESH-INTERVAL)\b/.test(l)).length, 2, 'each once')
  t.equal(lines.at(-2), 'END:VCALENDAR')
})

t.test('each VEVENT is written once per record: a feed of unchanged events is concatenation; a change rewrites only its event', async (t) => {
  const s = await setup(t)
  const venue = await s.venue({ venue: 'Hall' })
  const events = [await s.event('One', { venue: [venue.id] }), await s.event('Two'), await s.event('Three')]
  const vevents = countVevents(t)
  const first = await feed(t, s)
  t.equal(vevents.count(), 3, 'three VEVENTs written')
  const again = await feed(t, s)
  t.equal(vevents.count(), 3, 'none written again')
  t.equal(again.res.body, first.res.body, 'the same bytes')
  t.equal((await s.patch(events[1]?.id ?? 0, { title: 'Two, moved' })).statusCode, 200)
  const changed = await feed(t, s)
  t.equal(vevents.count(), 4, 'only the changed event written again')
  t.equal(text(changed.parsed.event(events[1]?.id ?? 0), 'summary'), 'Two, moved')
  t.equal((await s.inject({ method: 'PATCH', url: `${API}/venues/${venue.id}`, headers: s.editor, payload: { venue: 'Big Hall' } })).statusCode, 200)
  const renamed = await feed(t, s)
  t.equal(vevents.count(), 5, 'a renamed venue: the event showing it written again')
  t.equal(text(renamed.parsed.event(events[0]?.id ?? 0), 'location'), 'Big Hall')
  t.equal(renamed.res.body.split('BEGIN:VEVENT').length - 1, 3)
})

t.test('a feed ETag is made from its inputs: 304 before any VEVENT is written; every change of the feed changes it', async (t) => {
  // No read cache: every request assembles new records, so nothing written before could be reused.
  const s = await setup(t, { config: { cacheEntries: 0, extensions: new Set(['geoloc']) } })
  const venue = await s.venue({ venue: 'Hall', city: 'Bern' })
  const organizer = await s.organizer({ organizer: 'Club' })
  const category = await s.category('Jazz')
  const draftVenue = await s.inject({ method: 'POST', url: `${API}/venues`, headers: s.editor, payload: { venue: 'Backstage', status: 'draft' } })
  t.equal(draftVenue.statusCode, 201)
  const a = await s.event('A', { venue: [venue.id], organizer: [organizer.id], categories: [category.id], description: 'Text' })
  const b = await s.event('B', { venue: [draftVenue.json<{ id: number }>().id] })
  const vevents = countVevents(t)
  const current = async (query = '?ical=1', headers: Record<string, string> = {}) => {
    const res = await s.list(query, headers)
    isFeed(t, res)
    return { tag: String(res.headers.etag), body: res.body }
  }
  let state = await current()
  vevents.reset()
  const unchanged = await s.list('?ical=1', { 'if-none-match': state.tag })
  t.equal(unchanged.statusCode, 304, 'unchanged: 304')
  t.equal(vevents.count(), 0, 'no VEVENT written for the 304')
  const single = await s.get(a.id, '?ical=1')
  t.equal((await s.get(a.id, '?ical=1', { 'if-none-match': String(single.headers.etag) })).statusCode, 304)
  t.equal(vevents.count(), 1, 'the single feed written once, not for its 304')
  t.not(single.headers.etag, (await s.get(a.id)).headers.etag, 'a feed tag is not the JSON tag')

  const changes: Array<[string, () => Promise<unknown>]> = [
    ['an event retitled', () => s.patch(a.id, { title: 'A, new' })],
    ['a venue renamed (LOCATION)', () => s.inject({ method: 'PATCH', url: `${API}/venues/${venue.id}`, headers: s.editor, payload: { venue: 'Big Hall' } })],
    ['a venue given coordinates (GEO)', () => s.inject({ method: 'PATCH', url: `${API}/venues/${venue.id}`, headers: s.editor, payload: { geo_lat: 46.95, geo_lng: 7.44 } })],
    ['an organizer given an e-mail (ORGANIZER)', () => s.inject({ method: 'PATCH', url: `${API}/organizers/${organizer.id}`, headers: s.editor, payload: { email: 'club@example.org' } })],
    ['a category renamed (CATEGORIES)', () => s.inject({ method: 'PATCH', url: `${API}/categories/${category.id}`, headers: s.editor, payload: { name: 'Free Jazz' } })],
    ['a password set (DESCRIPTION left out)', () => s.patch(a.id, { password: 'sesame' })],
    ['an event moved to another zone (VTIMEZONE)', () => s.patch(b.id, { timezone: 'Europe/Berlin' })],
    ['an event added', () => s.event('C')],
    ['an event trashed', () => s.remove(b.id)],
  ]
  for (const [what, change] of changes) {
    await change()
    const next = await current()
    t.not(next.body, state.body, `${what}: the feed changed`)
    t.not(next.tag, state.tag, `${what}: so did its tag`)
    t.equal((await s.list('?ical=1', { 'if-none-match': next.tag })).statusCode, 304, `${what}: then unchanged, 304`)
    state = next
  }

  // The same matches in other views: an editor also sees the draft venue; another language, another name.
  await s.patch(b.id, { status: 'publish' })
  const anonymous = await current()
  const editor = await current('?ical=1', s.editor)
  t.not(editor.body, anonymous.body, 'an editor sees the draft venue')
  t.not(editor.tag, anonymous.tag, 'another view, another tag')
  const german = await current('?ical=1&ml_language=de')
  t.not(german.tag, anonymous.tag)
})

t.test('a feed ETag moves only with what the feed shows: a new translation, a term\'s count, a venue\'s or organizer\'s phone move the JSON tag, not the feed\'s (CONTRACT §5, §14)', async (t) => {
  const s = await setup(t)
  const venue = await s.venue({ venue: 'Hall', city: 'Bern' })
  const organizer = await s.organizer({ organizer: 'Club' })
  const category = await s.category('Jazz')
  const a = await s.event('A', { venue: [venue.id], organizer: [organizer.id], categories: [category.id], description: 'Text' })
  const tagsOf = async () => {
    const [json, single, list] = await Promise.all([s.get(a.id), s.get(a.id, '?ical=1'), s.list('?ical=1')])
    return { json: String(json.headers.etag), single: String(single.headers.etag), singleBody: single.body, list: String(list.headers.etag), listBody: list.body }
  }
  let state = await tagsOf()
  const changes: Array<[string, () => Promise<Injected>]> = [
    ['a translation added (translations)', () => s.inject({ method: 'POST', url: EVENTS, headers: s.editor, payload: { title: 'A (de)', start_date: '2026-07-01 18:00:00', end_date: '2026-07-01 21:00:00', ml_language: 'de', translation_of: a.id } })],
    // An event before the default window: in neither feed, but it counts for the category.
    ['its category\'s count moved by an event outside the feed', () => s.inject({ method: 'POST', url: EVENTS, headers: s.editor, payload: { title: 'Past', start_date: '2020-01-01 18:00:00', end_date: '2020-01-01 19:00:00', categories: [category.id] } })],
    ['a venue\'s phone', () => s.inject({ method: 'PATCH', url: `${API}/venues/${venue.id}`, headers: s.editor, payload: { phone: '+41 31 000 00 00' } })],
    ['an organizer\'s phone', () => s.inject({ method: 'PATCH', url: `${API}/organizers/${organizer.id}`, headers: s.editor, payload: { phone: '+41 31 000 00 01' } })],
  ]
  for (const [what, change] of changes) {
    t.ok((await change()).statusCode < 300, what)
    const next = await tagsOf()
    t.not(next.json, state.json, `${what}: the JSON tag moved`)
    t.equal(next.singleBody, state.singleBody, `${what}: the single feed is the same`)
    t.equal(next.single, state.single, `${what}: so is its tag`)
    t.equal(next.listBody, state.listBody, `${what}: the list feed is the same`)
    t.equal(next.list, state.list, `${what}: so is its tag`)
    state = next
  }
  t.equal((await s.patch(a.id, { title: 'A, new' })).statusCode, 200)
  const retitled = await tagsOf()
  t.not(retitled.single, state.single, 'a new title: a new single feed tag')
  t.not(retitled.list, state.list, 'and list feed tag')
})

t.test('feeds of the same records on another host or in another site zone have other tags', async (t) => {
  const tags: string[] = []
  for (const config of [{}, { publicUrl: 'http://other.test' }, { timezone: 'Europe/Zurich' }]) {
    const s = await setup(t, { config })
    await s.event('Same', { timezone: 'UTC' })
    const res = await s.list('?ical=1')
    isFeed(t, res)
    tags.push(String(res.headers.etag))
  }
  t.equal(new Set(tags).size, 3)
})

t.test('visibility as in JSON lists; password-protected events without DESCRIPTION', async (t) => {
  const s = await setup(t)
  const shown = await s.event('Public', { description: 'Everyone may read this.' })
  const secret = await s.event('Protected', { description: 'Only with the password.' })
  t.equal((await s.patch(secret.id, { password: 'sesame' })).statusCode, 200)
  const draft = await s.event('Draft', { status: 'draft' })
  const hidden = await s.event('Hidden', { hide_from_listings: true })
  const anonymous = (await feed(t, s)).parsed
  t.strictSame(anonymous.events.map((e) => text(e, 'uid')), [`${shown.id}@calendar.test`, `${secret.id}@calendar.test`], 'published, not hidden')
  t.equal(text(anonymous.event(secret.id), 'description'), undefined, 'no DESCRIPTION for a protected event')
  t.equal(text(anonymous.event(secret.id), 'summary'), 'Protected')
  t.equal(text(anonymous.event(shown.id), 'description'), 'Everyone may read this.')
  const json = await s.list('')
  t.strictSame(json.json<{ events: Event[] }>().events.map((e) => e.id), [shown.id, secret.id], 'the JSON list shows the same')
  const editor = (await feed(t, s, '?ical=1', s.editor)).parsed
  t.strictSame(editor.events.map((e) => text(e, 'uid')), [shown.id, secret.id, draft.id].map((id) => `${id}@calendar.test`), 'an editor sees drafts')
  t.equal(text(editor.event(secret.id), 'description'), undefined, 'not even an editor gets the protected text in a feed')
  expectError(t, await s.get(secret.id, '?ical=1'), 403, 'event-password-protected')
  expectError(t, await s.get(draft.id, '?ical=1'), 403, 'event-not-accessible')
  const opened = await s.get(secret.id, '?ical=1&password=sesame')
  isFeed(t, opened)
  t.equal(text(parseFeed(opened.body).event(secret.id), 'description'), undefined)
  isFeed(t, await s.get(hidden.id, '?ical=1'))
})

t.test('the list filters, order, language and cap; no paging', async (t) => {
  const s = await setup(t, { config: { icalMaxEvents: 2 } })
  const tag = await s.tag('outdoor')
  const c = await s.event('C', { start_date: '2026-07-03 10:00:00', end_date: '2026-07-03 11:00:00', tags: [tag.id] })
  const a = await s.event('A', { start_date: '2026-07-01 10:00:00', end_date: '2026-07-01 11:00:00', tags: [tag.id] })
  const b = await s.event('B', { start_date: '2026-07-02 10:00:00', end_date: '2026-07-02 11:00:00' })
  await s.event('Past', { start_date: '2026-06-01 10:00:00', end_date: '2026-06-01 11:00:00' })
  const de = await s.create({ title: 'Konzert', start_date: '2026-07-04 10:00:00', end_date: '2026-07-04 11:00:00' }, s.editor, '?ml_language=de')
  const uids = (p: ReturnType<typeof parseFeed>) => p.events.map((e) => Number(String(text(e, 'uid')).split('@')[0]))

  const capped = await feed(t, s, '?ical=1&page=7&per_page=1')
  t.strictSame(uids(capped.parsed), [a.id, b.id], 'ordered by start, the first CALENDAR_ICAL_MAX_EVENTS; page and per_page ignored')
  t.equal(capped.res.headers['x-total'], '3', 'X-Total counts every match in the default window')
  t.equal(capped.res.headers['x-total-pages'], '1')
  const tagged = await feed(t, s, `?ical=1&tags=${tag.id}`)
  t.strictSame(uids(tagged.parsed), [a.id, c.id])
  const json = await s.list(`?tags=${tag.id}`)
  t.strictSame(json.json<{ events: Body[] }>().events.map((e) => e.id), [a.id, c.id], 'as the JSON list')
  const german = await feed(t, s, '?ical=1&ml_language=de')
  t.strictSame(uids(german.parsed), [de.id])
  t.equal(german.res.headers['content-language'], 'de')
  const empty = await feed(t, s, '?ical=1&search=nothing-matches')
  t.equal(empty.parsed.events.length, 0)
  t.equal(empty.res.headers['x-total'], '0')
  t.equal(empty.res.headers['x-total-pages'], '0')
})

t.test('X-WR-CALNAME: a list feed names the events of the host in the request\'s language; a single event its title', async (t) => {
  const s = await setup(t, { config: { defaultLanguage: 'de' } })
  const event = await s.event('Konzert; "live"')
  const names: Record<string, string> = {
    en: 'Events – calendar.test', de: 'Veranstaltungen – calendar.test', at: 'Veranstaltungen – calendar.test',
    'ch-de': 'Veranstaltungen – calendar.test', 'ch-fr': 'Événements – calendar.test', es: 'Eventos – calendar.test',
  }
  const tags = new Map<string, string>()
  for (const [language, name] of Object.entries(names)) {
    const { res, parsed } = await feed(t, s, `?ical=1&ml_language=${language}`)
    t.equal(text(parsed.calendar, 'x-wr-calname'), name, language)
    const known = tags.get(res.body)
    if (known === undefined) t.notOk([...tags.values()].includes(String(res.headers.etag)), `${language}: another feed, another tag`)
    else t.equal(res.headers.etag, known, `${language}: the same bytes, the same tag`)
    tags.set(res.body, String(res.headers.etag))
  }
  t.equal(tags.size, 5, 'five different feeds: at and ch-de are the same (no events, the same name)')
  t.equal(text((await feed(t, s)).parsed.calendar, 'x-wr-calname'), names.de, 'without ml_language: the default language')
  const single = await s.get(event.id, '?ical=1')
  isFeed(t, single)
  // An X- property's value is TEXT (RFC 5545 §3.8.8.2), escaped; ical.js hands unknown properties back raw.
  t.equal(text(parseFeed(single.body).calendar, 'x-wr-calname'), 'Konzert\\; "live"', 'a single event: its title, escaped')
})

t.test('a feed of 2,000 events', async (t) => {
  const s = await setup(t)
  for (let i = 0; i < 2000; i += 1) {
    const minute = String(i % 60).padStart(2, '0')
    const day = String(1 + (i % 28)).padStart(2, '0')
    const start = `2026-07-${day} 10:${minute}:00`
    await insertEvent(s.db, { title: `Event, number ${i}; 🎵`, description: `Description ${i}\nsecond line`, start_date: start, end_date: start.replace(' 10:', ' 11:'), start_utc: start, end_utc: start.replace(' 10:', ' 11:') })
  }
  const { res, parsed } = await feed(t, s)
  t.equal(res.headers['x-total'], '2000')
  t.equal(parsed.events.length, 2000, '2,000 VEVENTs')
  const uids = new Set(parsed.events.map((e) => text(e, 'uid')))
  t.equal(uids.size, 2000, 'each with its own UID')
  t.ok(parsed.events.every((e) => /^Event, number \d+; 🎵$/.test(String(text(e, 'summary')))), 'every SUMMARY read back')
})
