/**
 * Recurring series in the iCalendar feeds (CONTRACT §14, §17): a series is one VEVENT with DTSTART;TZID,
 * RRULE, RDATE and EXDATE, plus one VEVENT per changed occurrence with the series' UID and a RECURRENCE-ID; a
 * list feed holds each matching series once, in list order, with its changed occurrences. Two independent
 * readers expand the feeds and must find exactly the occurrences the server has (its occurrence rows, with
 * their changes, as `GET /events/{id}/occurrences` shows them): ical.js (Mozilla's, with the feed's own VTIMEZONEs) and Python's icalendar with dateutil and
 * the system's tz database (test/helpers/ical-expand.py). Series in Berlin, New York, Vienna (all-day) and a
 * fixed offset, across DST changes and a spring-forward gap. Changes of occurrences are written as the
 * occurrence routes write them (rows of `event_overrides`, the occurrence's row moved and flagged); a change
 * of one changes the feeds' ETags.
 */
import { spawnSync } from 'node:child_process'
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import ICAL from 'ical.js'
import t, { type Test } from 'tap'
import type { Kysely } from 'kysely'
import type { Database } from '../src/db/schema.js'
import { utcToWall, wallToUtc } from '../src/lib/dates.js'
import { checkRecurrence, expandSeries } from '../src/lib/recurrence.js'
import { API, build, type Built } from './helpers/build.js'
import { parseFeed, utcOf, wall } from './helpers/ical.js'

/** Occurrences compared up to here (unbounded series have rows up to five years after the pinned clock). */
const HORIZON = '2028-01-01 00:00:00'
const EXPAND = join(import.meta.dirname, 'helpers', 'ical-expand.py')

/** [occurrence id, start, end, summary]: timed as UTC instants, all-day as first and last local day. */
type Row = [string, string, string, string]

interface Series { id: number; title: string; timezone: string; allDay: boolean }

async function create(s: Built, editor: { authorization: string }, body: Record<string, unknown>): Promise<Series> {
  const res = await s.inject({ method: 'POST', url: `${API}/events`, headers: editor, payload: body })
  if (res.statusCode !== 201) throw new Error(`create answered ${res.statusCode}: ${res.body}`)
  const e = res.json<{ id: number; title: string; timezone: string; all_day: boolean }>()
  return { id: e.id, title: e.title, timezone: e.timezone, allDay: e.all_day }
}

/**
 * Changes one occurrence as the occurrence routes do: its override row (version one more), its row's dates and
 * flag. `start`/`end`: wall times in the series' zone (all-day: days).
 */
async function change(db: Kysely<Database>, series: Series, occurrence: string, fields: { title?: string; description?: string; start?: string; end?: string; venues?: number[] }): Promise<void> {
  const start = fields.start === undefined ? undefined : series.allDay ? `${fields.start} 00:00:00` : fields.start
  const end = fields.end === undefined ? undefined : series.allDay ? `${fields.end} 23:59:59` : fields.end
  const startUtc = start === undefined ? null : wallToUtc(start, series.timezone)
  const endUtc = end === undefined ? null : wallToUtc(end, series.timezone)
  const row = {
    event_id: series.id, occurrence, title: fields.title ?? null, description: fields.description ?? null, excerpt: null,
    start_date: start ?? null, end_date: end ?? null, start_utc: startUtc, end_utc: endUtc, cost: null, website: null,
    venues: fields.venues === undefined ? null : JSON.stringify(fields.venues), organizers: null,
  }
  const existing = await db.selectFrom('event_overrides').select('version').where('event_id', '=', series.id).where('occurrence', '=', occurrence).executeTakeFirst()
  if (existing === undefined) await db.insertInto('event_overrides').values(row).execute()
  else await db.updateTable('event_overrides').set({ ...row, version: Number(existing.version) + 1 }).where('event_id', '=', series.id).where('occurrence', '=', occurrence).execute()
  const moved = await db.updateTable('event_occurrences')
    .set({ overridden: 1, ...(startUtc === null ? {} : { start_utc: startUtc }), ...(endUtc === null ? {} : { end_utc: endUtc }) })
    .where('event_id', '=', series.id).where('occurrence', '=', occurrence).executeTakeFirst()
  if (Number(moved.numUpdatedRows) !== 1) throw new Error(`no occurrence ${occurrence} of event ${series.id}`)
}

/** The occurrences the server has for a series (its rows and overrides), before the horizon, as readers compare them. */
async function serverRows(db: Kysely<Database>, series: Series): Promise<Row[]> {
  const rows = await db.selectFrom('event_occurrences').select(['occurrence', 'start_utc', 'end_utc'])
    .where('event_id', '=', series.id).where('start_utc', '<', HORIZON).orderBy('start_utc').orderBy('occurrence').execute()
  const titles = new Map((await db.selectFrom('event_overrides').select(['occurrence', 'title']).where('event_id', '=', series.id).execute())
    .map((o) => [o.occurrence, o.title]))
  return rows.map((r): Row => {
    const summary = titles.get(r.occurrence) ?? series.title
    if (!series.allDay) return [r.occurrence, r.start_utc, r.end_utc, summary]
    return [r.occurrence, utcToWall(r.start_utc, series.timezone).slice(0, 10), utcToWall(r.end_utc, series.timezone).slice(0, 10), summary]
  })
}

/** The series' rows as the expansion makes them (no change applied): a check of the rows the readers are compared with. */
async function expandedIds(db: Kysely<Database>, id: number): Promise<string[]> {
  const row = await db.selectFrom('events').selectAll().where('id', '=', id).executeTakeFirstOrThrow()
  const allDay = Number(row.all_day) === 1
  const checked = checkRecurrence(JSON.parse(row.recurrence ?? 'null') as { rule: string | null; rdates: string[]; exdates: string[] }, allDay)
  if ('refused' in checked) throw new Error(checked.refused)
  const all = expandSeries({ timezone: row.timezone, allDay, start: row.start_date, end: row.end_date, startUtc: row.start_utc, endUtc: row.end_utc }, checked, row.recurrence_through_utc ?? '9999-01-01 00:00:00')
  if ('refused' in all) throw new Error(all.refused)
  return all.filter((o) => o.startUtc < HORIZON).map((o) => o.id).sort()
}

/** `GET /events/{id}/occurrences`, every page, before the horizon, as the readers are compared. */
async function routeRows(s: Built, series: Series): Promise<Row[]> {
  const rows: Row[] = []
  for (let page = 1; ; page++) {
    const res = await s.inject({ url: `${API}/events/${series.id}/occurrences?per_page=50&page=${page}` })
    if (res.statusCode !== 200) throw new Error(`occurrences answered ${res.statusCode}: ${res.body}`)
    const body = res.json<{ occurrences: Array<{ title: string; start_date: string; end_date: string; utc_start_date: string; utc_end_date: string; occurrence: { id: string } }>; total_pages: number }>()
    for (const o of body.occurrences) {
      if (o.utc_start_date >= HORIZON) continue
      rows.push(series.allDay
        ? [o.occurrence.id, o.start_date.slice(0, 10), o.end_date.slice(0, 10), o.title]
        : [o.occurrence.id, o.utc_start_date, o.utc_end_date, o.title])
    }
    if (page >= body.total_pages) return rows
  }
}

/** ical.js: the series' VEVENT with its changed occurrences related, expanded before the horizon. */
function icaljsRows(text: string, series: Series): Row[] {
  const feed = parseFeed(text)
  const mine = feed.events.filter((e) => String(e.getFirstPropertyValue('uid')).startsWith(`${series.id}@`))
  const master = mine.find((e) => !e.hasProperty('recurrence-id'))
  if (master === undefined) throw new Error(`no VEVENT for series ${series.id}`)
  const event = new ICAL.Event(master, { exceptions: mine.filter((e) => e !== master), strictExceptions: true })
  const horizon = ICAL.Time.fromDateTimeString(`${HORIZON.replace(' ', 'T')}Z`)
  const rows: Row[] = []
  const iterator = event.iterator()
  for (let next = iterator.next(); next !== null && next !== undefined; next = iterator.next()) {
    if (next.compare(horizon) >= 0) break
    // ical.js knows nothing of gaps: a wall time that does not exist is no occurrence (RFC 5545 §3.3.10).
    if (!series.allDay && next.zone?.tzid !== 'UTC' && utcToWall(wallToUtc(wall(next), series.timezone), series.timezone) !== wall(next)) continue
    const details = event.getOccurrenceDetails(next)
    const summary = String(details.item.summary)
    if (series.allDay) {
      const last = details.endDate.clone()
      last.adjust(-1, 0, 0, 0)
      rows.push([wall(details.recurrenceId).slice(0, 10).replaceAll('-', ''), wall(details.startDate).slice(0, 10), wall(last).slice(0, 10), summary])
    } else {
      const id = utcOf(details.recurrenceId).replace(/[-:]/g, '').replace(' ', 'T') + 'Z'
      rows.push([id, utcOf(details.startDate), utcOf(details.endDate), summary])
    }
  }
  return rows
}

/** A python3 with icalendar and dateutil (PATH first, then Debian's own), or undefined. */
function python(): string | undefined {
  for (const candidate of ['python3', '/usr/bin/python3']) {
    if (spawnSync(candidate, ['-c', 'import icalendar, dateutil'], { stdio: 'ignore' }).status === 0) return candidate
  }
  return undefined
}

/** Python's rows per UID for a feed, or undefined (said in the output; a failure under CI=true). */
function pythonRows(t: Test, raw: Buffer): Record<string, Row[]> | undefined {
  const interpreter = python()
  if (interpreter === undefined) {
    if (process.env.CI === 'true') t.fail('python3-icalendar and python3-dateutil are missing: CI must check the feeds with a second reader')
    else t.comment('NOTE: python3-icalendar or python3-dateutil is not installed, so the feeds were NOT checked with the second reader.')
    return undefined
  }
  const file = join(t.testdir(), 'feed.ics')
  writeFileSync(file, raw)
  const run = spawnSync(interpreter, [EXPAND, file, HORIZON], { encoding: 'utf8' })
  t.equal(run.status, 0, run.stderr)
  return JSON.parse(run.stdout) as Record<string, Row[]>
}

interface Fixture { s: Built; editor: { authorization: string }; series: Series[]; single: Series }

async function fixture(t: Test): Promise<Fixture> {
  const s = await build(t, { file: join(t.testdir(), 'calendar.db') })
  const editor = await s.auth('editor')
  const series = [
    // Weekly across the end of summer time, UNTIL as a wall time, an rdate, an exdate; one occurrence moved a day and renamed.
    await create(s, editor, { title: 'Choir rehearsal', timezone: 'Europe/Berlin', start_date: '2026-09-01 19:00:00', end_date: '2026-09-01 20:30:00', recurrence: { rule: 'FREQ=WEEKLY;BYDAY=TU,TH;UNTIL=20261210T190000', rdates: ['2026-11-07 11:00:00'], exdates: ['2026-10-29 19:00:00'] } }),
    // The last Friday of the month, COUNT, across New York's change.
    await create(s, editor, { title: 'Book club', timezone: 'America/New_York', start_date: '2026-07-31 18:30:00', end_date: '2026-07-31 20:00:00', recurrence: { rule: 'FREQ=MONTHLY;BYDAY=FR;BYSETPOS=-1;COUNT=12' } }),
    // All-day, yearly, one year cancelled, one moved.
    await create(s, editor, { title: 'Summer festival', all_day: true, timezone: 'Europe/Vienna', start_date: '2026-07-18', end_date: '2026-07-19', recurrence: { rule: 'FREQ=YEARLY;BYMONTH=7;BYDAY=3SA;UNTIL=20300720T000000Z', exdates: ['2028-07-15'] } }),
    // Unbounded daily at 02:30 in Berlin: no occurrence on the day of the gap.
    await create(s, editor, { title: 'Night shift', timezone: 'Europe/Berlin', start_date: '2027-03-20 02:30:00', end_date: '2027-03-20 04:00:00', recurrence: { rule: 'FREQ=DAILY;INTERVAL=2' } }),
    // A fixed offset: its own VTIMEZONE.
    await create(s, editor, { title: 'Stand-up', timezone: 'UTC+5:30', start_date: '2026-07-06 09:00:00', end_date: '2026-07-06 09:15:00', recurrence: { rule: 'FREQ=WEEKLY;INTERVAL=2;BYDAY=MO,FR;COUNT=10', rdates: ['2026-07-08 12:00:00'], exdates: ['2026-07-20 09:00:00'] } }),
    // Only rdates.
    await create(s, editor, { title: 'Open days', timezone: 'Europe/Berlin', start_date: '2026-09-05 10:00:00', end_date: '2026-09-05 16:00:00', recurrence: { rule: null, rdates: ['2026-10-10 10:00:00', '2026-11-14 10:00:00'] } }),
    // An rdate and an exdate whose wall times fall in Berlin's spring-forward gap: no occurrence, so not in the feed
    // either (a reader takes a gap RDATE as the instant an hour later, RFC 5545 §3.3.5).
    await create(s, editor, { title: 'Early market', timezone: 'Europe/Berlin', start_date: '2027-03-21 02:30:00', end_date: '2027-03-21 04:00:00', recurrence: { rule: 'FREQ=WEEKLY;UNTIL=20270411T023000', rdates: ['2027-03-28 02:15:00', '2027-03-29 02:30:00'], exdates: ['2027-03-28 02:45:00'] } }),
  ]
  const [choir, books, festival] = series as [Series, Series, Series]
  await change(s.db, choir, '20261103T180000Z', { title: 'Choir rehearsal (moved)', start: '2026-11-04 20:00:00', end: '2026-11-04 21:30:00' })
  await change(s.db, choir, '20260903T170000Z', { title: 'Choir: first Thursday' })
  const venue = await s.inject({ method: 'POST', url: `${API}/venues`, headers: editor, payload: { venue: 'Town Library', city: 'Hoboken', country: 'United States' } })
  await change(s.db, books, '20261127T233000Z', { title: 'Book club, Thanksgiving', description: 'Bring leftovers.', venues: [venue.json<{ id: number }>().id] })
  await change(s.db, festival, '20270717', { title: 'Summer festival (a week later)', start: '2027-07-24', end: '2027-07-25' })
  const single = await create(s, editor, { title: 'Once only', timezone: 'Europe/Berlin', start_date: '2026-10-01 19:00:00', end_date: '2026-10-01 21:00:00' })
  return { s, editor, series, single }
}

t.test('a series\' own feed: one VEVENT, its changed occurrences with RECURRENCE-ID; both readers expand it as the server has it', async (t) => {
  const { s, series } = await fixture(t)
  for (const one of series) {
    const res = await s.inject({ url: `${API}/events/${one.id}?ical=1` })
    t.equal(res.statusCode, 200)
    const feed = parseFeed(res.body)
    const changed = await s.db.selectFrom('event_overrides').select('occurrence').where('event_id', '=', one.id).execute()
    t.equal(feed.events.length, 1 + changed.length, `${one.title}: the series and each changed occurrence`)
    t.ok(feed.events.every((e) => String(e.getFirstPropertyValue('uid')) === `${one.id}@calendar.test`), 'one UID')
    const rows = await serverRows(s.db, one)
    t.strictSame(rows.map((r) => r[0]).sort(), await expandedIds(s.db, one.id), `${one.title}: the server's rows are the expansion`)
    t.strictSame(await routeRows(s, one), rows, `${one.title}: GET /events/{id}/occurrences shows them`)
    t.strictSame(icaljsRows(res.body, one), rows, `${one.title}: ical.js reads the occurrences the server has`)
    const py = pythonRows(t, res.rawPayload)
    if (py !== undefined) t.strictSame(py[`${one.id}@calendar.test`], rows, `${one.title}: python reads them too`)
  }
  const choir = parseFeed((await s.inject({ url: `${API}/events/${series[0]?.id ?? 0}?ical=1` })).body)
  const lines = choir.events.map((e) => e.toString())
  t.match(lines[0], /RRULE:FREQ=WEEKLY;BYDAY=TU,TH;UNTIL=20261210T180000Z/, 'UNTIL in UTC')
  t.match(lines[0], /RDATE;TZID=Europe\/Berlin:20261107T110000/)
  t.match(lines[0], /EXDATE;TZID=Europe\/Berlin:20261029T190000/)
  t.ok(lines.slice(1).some((l) => l.includes('RECURRENCE-ID;TZID=Europe/Berlin:20261103T190000')), 'RECURRENCE-ID as the wall time of the original start')
  const market = (await s.inject({ url: `${API}/events/${series[6]?.id ?? 0}?ical=1` })).body
  t.match(market, /RDATE;TZID=Europe\/Berlin:20270329T023000/, 'an rdate that is an occurrence is written')
  t.notMatch(market, /20270328T0215|20270328T0245/, 'rdates and exdates in a DST gap are no occurrence: not written')
  const festival = parseFeed((await s.inject({ url: `${API}/events/${series[2]?.id ?? 0}?ical=1` })).body)
  t.match(festival.events[1]?.toString(), /RECURRENCE-ID;VALUE=DATE:20270717/, 'all-day: a date')
  // A changed occurrence carries what changed: description and venue as well as title and dates.
  const books = parseFeed((await s.inject({ url: `${API}/events/${series[1]?.id ?? 0}?ical=1` })).body)
  const thanksgiving = books.events.find((e) => e.hasProperty('recurrence-id'))
  t.equal(thanksgiving?.getFirstPropertyValue('description'), 'Bring leftovers.')
  t.equal(thanksgiving?.getFirstPropertyValue('location'), 'Town Library, Hoboken, United States')
  t.notOk(books.events[0]?.hasProperty('location'), 'the series itself has no venue')
  // By slug, and with Accept: text/calendar, the same feed.
  const slug = (await s.inject({ url: `${API}/events/${series[1]?.id ?? 0}` })).json<{ slug: string }>().slug
  const byId = await s.inject({ url: `${API}/events/${series[1]?.id ?? 0}`, headers: { accept: 'text/calendar' } })
  t.equal((await s.inject({ url: `${API}/events/by-slug/${slug}?ical=1` })).body, byId.body, 'by slug and by Accept alike')
})

t.test('a list feed holds each series once, in list order, with its changed occurrences; both readers agree with the server', async (t) => {
  const { s, series, single } = await fixture(t)
  const res = await s.inject({ url: `${API}/events?ical=1&start_date=2026-07-01&end_date=2027-12-31` })
  t.equal(res.statusCode, 200)
  t.equal(res.headers['x-total'], String(series.length + 1), 'X-Total counts events, each series once')
  const feed = parseFeed(res.body)
  const uids = feed.events.filter((e) => !e.hasProperty('recurrence-id')).map((e) => String(e.getFirstPropertyValue('uid')))
  t.equal(new Set(uids).size, uids.length, 'each event once')
  t.strictSame(new Set(uids), new Set([...series, single].map((e) => `${e.id}@calendar.test`)), 'every matching series and the single event')
  // In list order (by the occurrence's start, then id): by each event's first occurrence, all of them in the window.
  const firsts = await s.db.selectFrom('event_occurrences').select(['event_id', (eb) => eb.fn.min('start_utc').as('first')]).groupBy('event_id').execute()
  const order = firsts.map((f) => ({ id: Number(f.event_id), first: String(f.first) }))
    .sort((a, b) => (a.first < b.first ? -1 : a.first > b.first ? 1 : a.id - b.id)).map((f) => `${f.id}@calendar.test`)
  t.strictSame(uids, order, 'in the order of the list')
  t.equal(feed.events.length, uids.length + 4, 'and the four changed occurrences')
  const py = pythonRows(t, res.rawPayload)
  for (const one of series) {
    const rows = await serverRows(s.db, one)
    t.strictSame(icaljsRows(res.body, one), rows, `${one.title}: ical.js`)
    if (py !== undefined) t.strictSame(py[`${one.id}@calendar.test`], rows, `${one.title}: python`)
  }
})

t.test('renaming a venue linked by one changed occurrence alone changes the feeds\' ETags and their LOCATION', async (t) => {
  const { s, editor, series } = await fixture(t)
  const books = series[1] as Series
  const venues = await s.inject({ url: `${API}/venues?per_page=50` })
  const library = venues.json<{ venues: Array<{ id: number; venue: string }> }>().venues.find((v) => v.venue === 'Town Library')
  if (library === undefined) throw new Error('no Town Library')
  const urls = [`${API}/events/${books.id}?ical=1`, `${API}/events?ical=1&start_date=2026-07-01&end_date=2027-12-31`]
  const tags = new Map<string, string>()
  for (const url of urls) {
    const first = await s.inject({ url })
    t.match(first.body, /LOCATION:Town Library/, `${url}: the changed occurrence's venue`)
    tags.set(url, String(first.headers.etag))
  }
  const renamed = await s.inject({ method: 'PATCH', url: `${API}/venues/${library.id}`, headers: editor, payload: { venue: 'City Library' } })
  t.equal(renamed.statusCode, 200)
  for (const url of urls) {
    const after = await s.inject({ url, headers: { 'if-none-match': tags.get(url) ?? '' } })
    t.equal(after.statusCode, 200, `${url}: the renamed venue is a new feed`)
    t.not(after.headers.etag, tags.get(url))
    t.match(after.body, /LOCATION:City Library/)
  }
})

t.test('a change of one occurrence changes the feeds\' ETags; an unchanged feed is 304', async (t) => {
  const { s, series } = await fixture(t)
  const choir = series[0] as Series
  const urls = [`${API}/events/${choir.id}?ical=1`, `${API}/events?ical=1&start_date=2026-07-01&end_date=2027-12-31`]
  for (const url of urls) {
    const first = await s.inject({ url })
    const tag = String(first.headers.etag)
    t.equal((await s.inject({ url, headers: { 'if-none-match': tag } })).statusCode, 304, `${url}: 304 while nothing changed`)
    await change(s.db, choir, '20261103T180000Z', { title: `Choir rehearsal (moved again, ${url.length})` })
    const after = await s.inject({ url, headers: { 'if-none-match': tag } })
    t.equal(after.statusCode, 200, `${url}: a changed occurrence is a new feed`)
    t.not(after.headers.etag, tag)
    t.match(after.body, /moved again/)
  }
})
