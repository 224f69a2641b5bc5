/**
 * Recurring events over HTTP (CONTRACT §17): `recurrence` on create, read, update and clear, in JSON and
 * form bodies; every refusal is 400 naming `recurrence` with nothing written; the rows of
 * `event_occurrences` are exactly the series' expansion (docs/recurrence.md), on both engines.
 */
import t from 'tap'
import type { Test } from 'tap'
import { formatUtc } from '../src/lib/dates.js'
import { checkRecurrence, expandSeries, type RecurrenceInput } from '../src/lib/recurrence.js'
import { API, NOW } from './helpers/build.js'
import { expectError } from './helpers/errors.js'
import { EVENTS, eventBody, setup, type Event, type Setup } from './helpers/events.js'

const HORIZON_DAYS = 1826

/** The horizon of the pinned clock: NOW + 1826 days. */
const HORIZON_UTC = formatUtc(new Date(NOW.getTime() + HORIZON_DAYS * 86_400_000))

interface Row {
  occurrence: string
  start_utc: string
  end_utc: string
  overridden: number
  status: string
  language: string
}

/** The event's occurrence rows, by id. */
async function rowsOf(s: Setup, id: number): Promise<Row[]> {
  const rows = await s.db.selectFrom('event_occurrences').select(['occurrence', 'start_utc', 'end_utc', 'overridden', 'status', 'language'])
    .where('event_id', '=', id).orderBy('start_utc').orderBy('occurrence').execute()
  return rows.map((r) => ({ ...r, overridden: Number(r.overridden) }))
}

/** The rows the expansion of the record's series gives (the single row for a single event). */
function expectedRows(record: Event): Array<Pick<Row, 'occurrence' | 'start_utc' | 'end_utc'>> {
  if (record.recurrence === null) {
    const id = record.all_day ? record.start_date.slice(0, 10).replaceAll('-', '') : `${record.utc_start_date.replace(/[-:]/g, '').replace(' ', 'T')}Z`
    return [{ occurrence: id, start_utc: record.utc_start_date, end_utc: record.utc_end_date }]
  }
  const checked = checkRecurrence(record.recurrence, record.all_day)
  if ('refused' in checked) throw new Error(checked.refused)
  const expanded = expandSeries({
    timezone: record.timezone, allDay: record.all_day, start: record.start_date, end: record.end_date,
    startUtc: record.utc_start_date, endUtc: record.utc_end_date,
  }, checked, HORIZON_UTC)
  if ('refused' in expanded) throw new Error(expanded.refused)
  return expanded.map((o) => ({ occurrence: o.id, start_utc: o.startUtc, end_utc: o.endUtc }))
}

async function rowsMatch(t: Test, s: Setup, record: Event, label: string): Promise<void> {
  const rows = await rowsOf(s, record.id)
  t.strictSame(rows.map(({ occurrence, start_utc, end_utc }) => ({ occurrence, start_utc, end_utc })), expectedRows(record), `${label}: rows are the expansion`)
  t.ok(rows.every((r) => r.status === record.status && r.language === record.ml_language), `${label}: rows copy the listing columns`)
}

async function throughOf(s: Setup, id: number): Promise<string | null> {
  const row = await s.db.selectFrom('events').select('recurrence_through_utc').where('id', '=', id).executeTakeFirstOrThrow()
  return row.recurrence_through_utc
}

const WEEKLY: RecurrenceInput = { rule: 'freq=weekly;byday=tu,th;count=10', rdates: ['2026-08-01 19:00:00'], exdates: ['2026-07-09 19:00:00'] }

t.test('create a series: recurrence as sent (parts upper-cased), occurrence null, rows are the expansion', async (t) => {
  const s = await setup(t)
  const created = await s.create(eventBody({ title: 'Jazz', timezone: 'Europe/Berlin', start_date: '2026-07-07 19:00:00', end_date: '2026-07-07 21:30:00', recurrence: WEEKLY }))
  t.strictSame(created.recurrence, { rule: 'FREQ=WEEKLY;BYDAY=TU,TH;COUNT=10', rdates: ['2026-08-01 19:00:00'], exdates: ['2026-07-09 19:00:00'] })
  t.equal(created.occurrence, null)
  const keys = Object.keys(created)
  t.strictSame(keys.slice(-3), ['translations', 'recurrence', 'occurrence'], 'recurrence and occurrence close the record')
  const read = await s.get(created.id)
  t.equal(read.statusCode, 200)
  const { json_ld: _ld, ...record } = read.json<Event>()
  t.strictSame(record, created, 'a read shows what the create answered')
  t.strictSame(Object.keys(read.json()).slice(-3), ['recurrence', 'occurrence', 'json_ld'])
  await rowsMatch(t, s, created, 'created')
  t.equal((await rowsOf(s, created.id)).length, 10, 'COUNT=10 less one exdate plus one rdate')
  t.equal(await throughOf(s, created.id), null, 'a bounded series has no horizon')
})

t.test('an unbounded series reaches the horizon, and records it', async (t) => {
  const s = await setup(t)
  const created = await s.create(eventBody({ timezone: 'America/New_York', start_date: '2026-07-01 09:00:00', end_date: '2026-07-01 10:00:00', recurrence: { rule: 'FREQ=MONTHLY;BYDAY=1WE' } }))
  t.strictSame(created.recurrence, { rule: 'FREQ=MONTHLY;BYDAY=1WE', rdates: [], exdates: [] }, 'rdates and exdates default to []')
  await rowsMatch(t, s, created, 'monthly')
  t.equal(await throughOf(s, created.id), HORIZON_UTC)
  const rows = await rowsOf(s, created.id)
  t.ok(rows.length >= 59 && rows.length <= 61, `about five years of months (${rows.length})`)
  t.ok(rows.every((r) => r.start_utc < HORIZON_UTC), 'no occurrence at or past the horizon')
})

t.test('all-day series and a series of rdates alone', async (t) => {
  const s = await setup(t)
  const allDay = await s.create(eventBody({ all_day: true, start_date: '2026-07-01', end_date: '2026-07-02', timezone: 'Europe/Zurich',
    recurrence: { rule: 'FREQ=YEARLY;COUNT=3', exdates: ['2027-07-01'] } }))
  t.strictSame(allDay.recurrence, { rule: 'FREQ=YEARLY;COUNT=3', rdates: [], exdates: ['2027-07-01'] })
  await rowsMatch(t, s, allDay, 'all-day')
  t.strictSame((await rowsOf(s, allDay.id)).map((r) => r.occurrence), ['20260701', '20280701'])
  const dates = await s.create(eventBody({ recurrence: { rule: null, rdates: ['2026-07-03 18:00:00', '2026-07-02 18:00:00'] } }))
  t.strictSame(dates.recurrence, { rule: null, rdates: ['2026-07-03 18:00:00', '2026-07-02 18:00:00'], exdates: [] })
  t.strictSame((await rowsOf(s, dates.id)).map((r) => r.occurrence), ['20260701T180000Z', '20260702T180000Z', '20260703T180000Z'])
})

t.test('update: a new rule, new dates, a new zone rewrite the set; other fields leave it; null makes it single', async (t) => {
  const s = await setup(t)
  const created = await s.create(eventBody({ timezone: 'Europe/Berlin', start_date: '2026-07-07 19:00:00', end_date: '2026-07-07 21:00:00', recurrence: WEEKLY }))
  // An override of an occurrence that stays, and one of an occurrence that goes (written as rec-occ will).
  await s.db.insertInto('event_overrides').values([
    { event_id: created.id, occurrence: '20260714T170000Z', title: 'Moved', description: null, excerpt: null, start_date: null, end_date: null, start_utc: '2026-07-15 17:00:00', end_utc: '2026-07-15 19:00:00', cost: null, website: null, venues: null, organizers: null },
    { event_id: created.id, occurrence: '20260716T170000Z', title: 'Gone', description: null, excerpt: null, start_date: null, end_date: null, start_utc: null, end_utc: null, cost: null, website: null, venues: null, organizers: null },
  ]).execute()

  let res = await s.patch(created.id, { recurrence: { rule: 'FREQ=WEEKLY;BYDAY=TU;COUNT=4' } })
  t.equal(res.statusCode, 200)
  let record = res.json<Event>()
  t.strictSame(record.recurrence, { rule: 'FREQ=WEEKLY;BYDAY=TU;COUNT=4', rdates: [], exdates: [] })
  const rows = await rowsOf(s, created.id)
  t.strictSame(rows.map((r) => [r.occurrence, r.start_utc, r.overridden]), [
    ['20260707T170000Z', '2026-07-07 17:00:00', 0],
    ['20260714T170000Z', '2026-07-15 17:00:00', 1],
    ['20260721T170000Z', '2026-07-21 17:00:00', 0],
    ['20260728T170000Z', '2026-07-28 17:00:00', 0],
  ], 'the kept override keeps its moved dates; the others follow the rule')
  t.strictSame((await s.db.selectFrom('event_overrides').select('occurrence').where('event_id', '=', created.id).execute()).map((r) => r.occurrence),
    ['20260714T170000Z'], 'the override of an occurrence no longer in the set is gone')

  const version = res.headers.etag
  res = await s.patch(created.id, { title: 'Renamed' })
  t.equal(res.statusCode, 200)
  t.strictSame((await rowsOf(s, created.id)).map((r) => r.start_utc), rows.map((r) => r.start_utc), 'a title leaves the rows')
  res = await s.patch(created.id, { recurrence: { rule: 'FREQ=WEEKLY;BYDAY=TU;COUNT=4' } })
  t.equal(res.statusCode, 200)
  t.not(res.headers.etag, version)
  const same = res.headers.etag
  res = await s.patch(created.id, { recurrence: { rule: 'freq=weekly;byday=tu;count=4', rdates: [], exdates: [] } })
  t.equal(res.headers.etag, same, 'sending the same series again changes nothing')

  res = await s.patch(created.id, { start_date: '2026-07-07 20:00:00', end_date: '2026-07-07 22:00:00' })
  t.equal(res.statusCode, 200)
  record = res.json<Event>()
  await rowsMatch(t, s, record, 'new start time')
  t.equal((await s.db.selectFrom('event_overrides').select('occurrence').where('event_id', '=', created.id).execute()).length, 0,
    'a new start time gives every occurrence a new original start: the overrides go')

  res = await s.patch(created.id, { timezone: 'America/New_York' })
  record = res.json<Event>()
  await rowsMatch(t, s, record, 'new zone')
  t.equal((await rowsOf(s, created.id))[0]?.start_utc, '2026-07-08 00:00:00')

  res = await s.patch(created.id, { recurrence: null })
  t.equal(res.statusCode, 200)
  record = res.json<Event>()
  t.equal(record.recurrence, null)
  await rowsMatch(t, s, record, 'single again')
  t.equal(await throughOf(s, created.id), null)

  res = await s.patch(created.id, { start_date: '2026-07-09 20:00:00', end_date: '2026-07-09 22:00:00' })
  record = res.json<Event>()
  await rowsMatch(t, s, record, 'a single event moved (the trigger)')

  res = await s.patch(created.id, { recurrence: { rule: 'FREQ=DAILY' } })
  record = res.json<Event>()
  await rowsMatch(t, s, record, 'single to unbounded')
  t.equal(await throughOf(s, created.id), HORIZON_UTC)
  t.equal((await rowsOf(s, created.id)).length, 1802, 'every day from 2026-07-09 to the horizon, 2031-06-15 12:00 UTC')

  res = await s.patch(created.id, { all_day: true })
  t.equal(res.statusCode, 200)
  record = res.json<Event>()
  await rowsMatch(t, s, record, 'all-day now')
})

t.test('a translation has its own recurrence; deleting an event deletes its rows', async (t) => {
  const s = await setup(t)
  const en = await s.create(eventBody({ recurrence: { rule: 'FREQ=DAILY;COUNT=3' } }))
  const de = await s.create(eventBody({ translation_of: en.id, ml_language: 'de' }))
  t.equal(de.recurrence, null)
  t.equal((await rowsOf(s, de.id)).length, 1)
  t.equal((await rowsOf(s, en.id)).length, 3)
  t.equal((await s.remove(en.id, '?force=true')).statusCode, 200)
  t.equal((await rowsOf(s, en.id)).length, 0)
})

t.test('form bodies: recurrence[rule], recurrence[rdates][], recurrence[exdates][]; recurrence= is null', async (t) => {
  const s = await setup(t)
  const form = { 'content-type': 'application/x-www-form-urlencoded' }
  const payload = new URLSearchParams([
    ['title', 'Form'], ['start_date', '2026-07-01 18:00:00'], ['end_date', '2026-07-01 19:00:00'],
    ['recurrence[rule]', 'FREQ=DAILY;COUNT=3'], ['recurrence[rdates][]', '2026-07-10 18:00:00'], ['recurrence[rdates][]', '2026-07-11 18:00:00'],
    ['recurrence[exdates][]', '2026-07-02 18:00:00'],
  ]).toString()
  let res = await s.inject({ method: 'POST', url: EVENTS, headers: { ...s.editor, ...form }, payload })
  t.equal(res.statusCode, 201, res.body)
  const created = res.json<Event>()
  t.strictSame(created.recurrence, { rule: 'FREQ=DAILY;COUNT=3', rdates: ['2026-07-10 18:00:00', '2026-07-11 18:00:00'], exdates: ['2026-07-02 18:00:00'] })
  await rowsMatch(t, s, created, 'form')

  // Many dates under one name (more than other lists take): none is dropped.
  const many = Array.from({ length: 400 }, (_, i): [string, string] => ['recurrence[rdates][]', formatUtc(new Date(Date.UTC(2027, 0, 1 + i, 18))).replace(/:\d\d$/, ':00')])
  res = await s.inject({ method: 'PATCH', url: `${EVENTS}/${created.id}`, headers: { ...s.editor, ...form },
    payload: new URLSearchParams([['recurrence[rule]', ''], ...many]).toString() })
  t.equal(res.statusCode, 200, res.body)
  const updated = res.json<Event>()
  t.equal(updated.recurrence?.rule, null, 'recurrence[rule]= is null')
  t.equal(updated.recurrence?.rdates.length, 400)
  t.equal((await rowsOf(s, created.id)).length, 401)

  res = await s.inject({ method: 'PATCH', url: `${EVENTS}/${created.id}`, headers: { ...s.editor, ...form }, payload: 'recurrence=' })
  t.equal(res.statusCode, 200, res.body)
  t.equal(res.json<Event>().recurrence, null)
  t.equal((await rowsOf(s, created.id)).length, 1)
})

t.test('every refusal is 400 naming recurrence, with nothing written', async (t) => {
  const s = await setup(t)
  const existing = await s.create(eventBody({ title: 'Kept', recurrence: { rule: 'FREQ=DAILY;COUNT=2' } }))
  const before = await rowsOf(s, existing.id)
  const cases: Array<[string, Record<string, unknown>]> = [
    ['malformed rule', { recurrence: { rule: 'FREQ' } }],
    ['no FREQ', { recurrence: { rule: 'COUNT=3' } }],
    ['finer frequency', { recurrence: { rule: 'FREQ=HOURLY;COUNT=3' } }],
    ['unsupported part', { recurrence: { rule: 'FREQ=DAILY;BYHOUR=3' } }],
    ['unsupported part BYWEEKNO', { recurrence: { rule: 'FREQ=YEARLY;BYWEEKNO=3' } }],
    ['unknown part', { recurrence: { rule: 'FREQ=DAILY;FOO=1' } }],
    ['repeated part', { recurrence: { rule: 'FREQ=DAILY;COUNT=2;COUNT=3' } }],
    ['malformed value', { recurrence: { rule: 'FREQ=DAILY;INTERVAL=0' } }],
    ['part not for frequency', { recurrence: { rule: 'FREQ=WEEKLY;BYMONTHDAY=3' } }],
    ['BYSETPOS alone', { recurrence: { rule: 'FREQ=MONTHLY;BYSETPOS=1' } }],
    ['COUNT with UNTIL', { recurrence: { rule: 'FREQ=DAILY;COUNT=3;UNTIL=20270101T000000Z' } }],
    ['COUNT over 3,500', { recurrence: { rule: 'FREQ=DAILY;COUNT=3501' } }],
    ['more than 3,500 occurrences', { recurrence: { rule: 'FREQ=DAILY;UNTIL=20400101' } }],
    ['UNTIL before the start', { recurrence: { rule: 'FREQ=DAILY;UNTIL=20260601' } }],
    ['every occurrence excluded', { recurrence: { rule: 'FREQ=DAILY;COUNT=1', exdates: ['2026-07-01 18:00:00'] } }],
    ['more than 1,000 dates', { recurrence: { rule: 'FREQ=DAILY;COUNT=2', rdates: Array.from({ length: 600 }, (_, i) => `2027-01-01 ${String(i % 24).padStart(2, '0')}:${String(Math.floor(i / 24)).padStart(2, '0')}:00`), exdates: Array.from({ length: 401 }, (_, i) => `2028-01-01 ${String(i % 24).padStart(2, '0')}:${String(Math.floor(i / 24)).padStart(2, '0')}:00`) } }],
    ['more than 1,000 rdates in one list', { recurrence: { rule: null, rdates: Array.from({ length: 1001 }, (_, i) => `2027-01-01 ${String(i % 24).padStart(2, '0')}:${String(Math.floor(i / 24)).padStart(2, '0')}:00`) } }],
    ['malformed rdate', { recurrence: { rule: 'FREQ=DAILY;COUNT=2', rdates: ['2026-07-05T18:00:00Z'] } }],
    ['a day where a wall time is due', { recurrence: { rule: null, rdates: ['2026-07-05'] } }],
    ['malformed exdate', { recurrence: { rule: 'FREQ=DAILY;COUNT=2', exdates: ['2026-02-30 18:00:00'] } }],
    ['too sparse', { recurrence: { rule: 'FREQ=DAILY;BYMONTH=2;BYMONTHDAY=30;COUNT=3' } }],
  ]
  const count = async () => Number((await s.db.selectFrom('events').select((eb) => eb.fn.countAll().as('n')).executeTakeFirstOrThrow()).n)
  const rowCount = async () => Number((await s.db.selectFrom('event_occurrences').select((eb) => eb.fn.countAll().as('n')).executeTakeFirstOrThrow()).n)
  const events = await count()
  const rows = await rowCount()
  for (const [label, body] of cases) {
    const created = await s.inject({ method: 'POST', url: EVENTS, headers: s.editor, payload: eventBody(body) })
    const error = expectError(t, created, 400, 'rest_invalid_param', ['recurrence'])
    const updated = await s.patch(existing.id, body)
    expectError(t, updated, 400, 'rest_invalid_param', ['recurrence'])
    t.comment(`${label}: ${JSON.stringify((error.data.params as Record<string, string>).recurrence)}`)
  }
  t.equal(await count(), events, 'no event was created')
  t.equal(await rowCount(), rows, 'no occurrence row was written')
  t.strictSame(await rowsOf(s, existing.id), before, "the series' rows are as they were")
  t.strictSame((await s.get(existing.id)).json<Event>().recurrence, existing.recurrence)

  // The dates of an all-day series must be days: a series made all-day with wall-time dates is refused.
  const timed = await s.create(eventBody({ recurrence: { rule: null, rdates: ['2026-07-05 18:00:00'] } }))
  expectError(t, await s.patch(timed.id, { all_day: true }), 400, 'rest_invalid_param', ['recurrence'])
  t.equal((await s.get(timed.id)).json<Event>().all_day, false)
})

t.test('the refusal is told in the language of the request', async (t) => {
  const s = await setup(t)
  const res = await s.inject({ method: 'POST', url: `${EVENTS}?ml_language=de`, headers: { ...s.editor, 'accept-language': 'de' }, payload: eventBody({ recurrence: { rule: 'FREQ=DAILY;COUNT=2;UNTIL=20270101' } }) })
  const error = expectError(t, res, 400, 'rest_invalid_param', ['recurrence'])
  t.match(JSON.stringify(error.data.params), /COUNT oder UNTIL/)
})

// ------------------------------------------------------------------------------------------- lists

const OCC_URL = (id: number, occurrence: string) => `http://calendar.test/calendar/events/v1/events/${id}/occurrences/${occurrence}`

interface Listed {
  events: Event[]
  total: number
  total_pages: number
}

/** A weekly series (Tuesdays 19:00 Berlin, 4 times from 2026-07-07) and a single event on 2026-07-15 18:00 UTC. */
async function seriesAndSingle(s: Setup): Promise<{ series: Event; single: Event }> {
  const series = await s.create(eventBody({ title: 'Weekly', timezone: 'Europe/Berlin', start_date: '2026-07-07 19:00:00', end_date: '2026-07-07 21:00:00',
    recurrence: { rule: 'FREQ=WEEKLY;COUNT=4' } }))
  const single = await s.create(eventBody({ title: 'Single', start_date: '2026-07-15 18:00:00', end_date: '2026-07-15 19:00:00' }))
  return { series, single }
}

t.test('GET /events lists occurrences: one item per occurrence in start order, each the record for it', async (t) => {
  const s = await setup(t)
  const { series, single } = await seriesAndSingle(s)
  // An override of the third occurrence (as the occurrence routes write it): moved a day, retitled, another cost.
  await s.db.insertInto('event_overrides').values({ event_id: series.id, occurrence: '20260721T170000Z', title: 'Moved one', description: null, excerpt: null,
    start_date: '2026-07-22 20:00:00', end_date: '2026-07-22 22:00:00', start_utc: '2026-07-22 18:00:00', end_utc: '2026-07-22 20:00:00', cost: '5 EUR', website: null, venues: null, organizers: null }).execute()
  await s.db.updateTable('event_occurrences').set({ start_utc: '2026-07-22 18:00:00', end_utc: '2026-07-22 20:00:00', overridden: 1 })
    .where('event_id', '=', series.id).where('occurrence', '=', '20260721T170000Z').execute()

  for (const [who, headers] of [['anonymous', {}], ['anonymous again (documents, cache)', {}], ['editor', s.editor]] as const) {
    const res = await s.list('', headers)
    t.equal(res.statusCode, 200)
    const body = res.json<Listed>()
    t.equal(body.total, 5, `${who}: total counts occurrences`)
    t.equal(res.headers['x-total'], '5')
    t.strictSame(body.events.map((e) => [e.id, e.title, e.start_date, e.occurrence?.id ?? null]), [
      [series.id, 'Weekly', '2026-07-07 19:00:00', '20260707T170000Z'],
      [series.id, 'Weekly', '2026-07-14 19:00:00', '20260714T170000Z'],
      [single.id, 'Single', '2026-07-15 18:00:00', null],
      [series.id, 'Moved one', '2026-07-22 20:00:00', '20260721T170000Z'],
      [series.id, 'Weekly', '2026-07-28 19:00:00', '20260728T170000Z'],
    ], `${who}: in order of the occurrences' start`)
    const second = body.events[1] as Event
    t.strictSame(second.occurrence, { id: '20260714T170000Z', original_start_date: '2026-07-14 19:00:00', original_utc_start_date: '2026-07-14 17:00:00', overridden: false, rest_url: OCC_URL(series.id, '20260714T170000Z') })
    t.equal(second.utc_start_date, '2026-07-14 17:00:00')
    t.equal(second.utc_end_date, '2026-07-14 19:00:00')
    t.equal(second.end_date, '2026-07-14 21:00:00')
    t.strictSame(second.start_date_details, { year: 2026, month: 7, day: 14, hour: 19, minutes: 0, seconds: 0 })
    t.equal(second.id, series.id)
    t.equal(second.rest_url, series.rest_url)
    t.strictSame(second.recurrence, series.recurrence)
    const moved = body.events[3] as Event
    t.strictSame(moved.occurrence, { id: '20260721T170000Z', original_start_date: '2026-07-21 19:00:00', original_utc_start_date: '2026-07-21 17:00:00', overridden: true, rest_url: OCC_URL(series.id, '20260721T170000Z') })
    t.equal(moved.utc_start_date, '2026-07-22 18:00:00')
    t.equal(moved.cost, '5 EUR')
    t.strictSame(moved.cost_details.values, [5])
  }

  const first = await s.list('?hide_subsequent_recurrences=true')
  t.equal(first.statusCode, 200)
  t.strictSame(first.json<Listed>().events.map((e) => [e.id, e.occurrence?.id ?? null]), [[series.id, '20260707T170000Z'], [single.id, null]], 'the first occurrence of each series')
  t.equal(first.json<Listed>().total, 2)
  const later = await s.list('?hide_subsequent_recurrences=1&start_date=2026-07-20')
  t.strictSame(later.json<Listed>().events.map((e) => [e.id, e.occurrence?.id ?? null]), [[series.id, '20260721T170000Z']], 'the first that matches the dates')

  const window = await s.list('?start_date=2026-07-13&end_date=2026-07-20')
  t.strictSame(window.json<Listed>().events.map((e) => e.occurrence?.id ?? null), ['20260714T170000Z', null], 'the date filters apply per occurrence')

  const paged = await s.list('?per_page=2&page=2')
  t.strictSame(paged.json<Listed>().events.map((e) => e.occurrence?.id ?? null), [null, '20260721T170000Z'], 'pages count occurrences')
  t.equal(paged.json<Listed>().total_pages, 3)

  const wholes = await s.list(`?include=${series.id},${single.id}`)
  t.strictSame(wholes.json<Listed>().events.map((e) => [e.id, e.occurrence, e.start_date]), [[series.id, null, '2026-07-07 19:00:00'], [single.id, null, '2026-07-15 18:00:00']], 'include lists wholes')
  t.equal(wholes.json<Listed>().total, 2)
})

t.test('GET /events/{id}/occurrences: pages, totals, links, the date filters without a default window', async (t) => {
  const s = await setup(t)
  const { series, single } = await seriesAndSingle(s)
  const url = `${EVENTS}/${series.id}/occurrences`
  let res = await s.inject({ url: `${url}?per_page=3` })
  t.equal(res.statusCode, 200)
  let body = res.json<{ occurrences: Event[]; total: number; total_pages: number; rest_url: string; next_rest_url?: string }>()
  t.strictSame(Object.keys(body), ['occurrences', 'rest_url', 'next_rest_url', 'total', 'total_pages'])
  t.equal(body.total, 4)
  t.equal(body.total_pages, 2)
  t.equal(res.headers['x-total'], '4')
  t.match(String(res.headers.link), /rel="next"/)
  t.strictSame(body.occurrences.map((o) => o.occurrence?.id), ['20260707T170000Z', '20260714T170000Z', '20260721T170000Z'])
  t.equal(body.rest_url, `http://calendar.test${url}?page=1&per_page=3`)
  res = await s.inject({ url: body.next_rest_url?.replace('http://calendar.test', '') ?? '' })
  t.strictSame(res.json<{ occurrences: Event[] }>().occurrences.map((o) => o.occurrence?.id), ['20260728T170000Z'])

  // Past ones too: no default window; start_date and end_date as §4 (whole days).
  const past = await s.create(eventBody({ start_date: '2025-01-01 10:00:00', end_date: '2025-01-01 11:00:00', recurrence: { rule: 'FREQ=YEARLY;COUNT=3' } }))
  res = await s.inject({ url: `${EVENTS}/${past.id}/occurrences` })
  t.equal(res.json<{ total: number }>().total, 3, 'occurrences before today are listed')
  res = await s.inject({ url: `${EVENTS}/${past.id}/occurrences?start_date=2026-01-01&end_date=2026-01-01` })
  t.strictSame(res.json<{ occurrences: Event[] }>().occurrences.map((o) => o.occurrence?.id), ['20260101T100000Z'])
  res = await s.inject({ url: `${EVENTS}/${past.id}/occurrences?start_date=2026-01-01+10:00:01&strict_dates=true` })
  t.strictSame(res.json<{ occurrences: Event[] }>().occurrences.map((o) => o.occurrence?.id), ['20270101T100000Z'])
  expectError(t, await s.inject({ url: `${EVENTS}/${past.id}/occurrences?start_date=soon` }), 400, 'rest_invalid_param', ['start_date'])
  // rest_url and the links carry the effective window as instants with their offset (§3), not `today` as sent:
  // followed tomorrow, a next link runs the same query.
  res = await s.inject({ url: `${EVENTS}/${past.id}/occurrences?start_date=today&end_date=2027-06-30+08:00&per_page=1` })
  body = res.json()
  t.strictSame(body.occurrences.map((o) => o.occurrence?.id), ['20270101T100000Z'])
  t.equal(body.rest_url, `http://calendar.test${EVENTS}/${past.id}/occurrences?page=1&per_page=1&start_date=2026-06-15T00%3A00%3A00%2B00%3A00&end_date=2027-06-30T23%3A59%3A59%2B00%3A00`)
  res = await s.inject({ url: `${EVENTS}/${past.id}/occurrences?start_date=2026-01-01+10:00:01&strict_dates=true&per_page=1` })
  t.equal(res.json<{ rest_url: string }>().rest_url, `http://calendar.test${EVENTS}/${past.id}/occurrences?page=1&per_page=1&start_date=2026-01-01T10%3A00%3A01%2B00%3A00&strict_dates=true`)
  expectError(t, await s.inject({ url: `${EVENTS}/${past.id}/occurrences?page=9` }), 404, 'event-archive-page-not-found')

  res = await s.inject({ url: `${EVENTS}/${single.id}/occurrences` })
  body = res.json()
  t.equal(body.total, 1, 'a single event has one')
  t.strictSame(body.occurrences[0]?.occurrence, { id: '20260715T180000Z', original_start_date: '2026-07-15 18:00:00', original_utc_start_date: '2026-07-15 18:00:00', overridden: false, rest_url: OCC_URL(single.id, '20260715T180000Z') })

  expectError(t, await s.inject({ url: `${EVENTS}/999/occurrences` }), 404, 'rest-event-not-found')
  const draft = await s.create(eventBody({ status: 'draft', recurrence: { rule: 'FREQ=DAILY;COUNT=2' } }))
  expectError(t, await s.inject({ url: `${EVENTS}/${draft.id}/occurrences` }), 403, 'event-not-accessible')
  t.equal((await s.inject({ url: `${EVENTS}/${draft.id}/occurrences`, headers: s.editor })).statusCode, 200)
  const locked = await s.create(eventBody({ recurrence: { rule: 'FREQ=DAILY;COUNT=2' } }))
  t.equal((await s.patch(locked.id, { password: 'sesame' })).statusCode, 200)
  expectError(t, await s.inject({ url: `${EVENTS}/${locked.id}/occurrences` }), 403, 'event-password-protected')
  t.equal((await s.inject({ url: `${EVENTS}/${locked.id}/occurrences?password=sesame` })).statusCode, 200)
  t.equal((await s.remove(series.id)).statusCode, 200)
  expectError(t, await s.inject({ url: `${EVENTS}/${series.id}/occurrences` }), 410, 'event-no-longer-available')
})

t.test('GET /events/{id}/occurrences/{occurrence}: the record for it, with JSON-LD and an ETag; 404 for an id not in the set', async (t) => {
  const s = await setup(t)
  const series = await s.create(eventBody({ timezone: 'Europe/Berlin', start_date: '2026-07-07 19:00:00', end_date: '2026-07-07 21:00:00',
    recurrence: { rule: 'FREQ=WEEKLY;COUNT=4', exdates: ['2026-07-14 19:00:00'] } }))
  const url = `${EVENTS}/${series.id}/occurrences/20260721T170000Z`
  const res = await s.inject({ url })
  t.equal(res.statusCode, 200)
  const record = res.json<Event>()
  t.equal(record.start_date, '2026-07-21 19:00:00')
  t.equal(record.occurrence?.id, '20260721T170000Z')
  t.match(record.json_ld, { startDate: '2026-07-21T19:00:00+02:00' })
  const etag = String(res.headers.etag)
  t.match(etag, /^"event-\d+-\d+-[\w-]{16}"$/)
  t.not(etag, (await s.get(series.id)).headers.etag, 'not the series\' tag')
  t.equal((await s.inject({ url, headers: { 'if-none-match': etag } })).statusCode, 304)
  const other = await s.inject({ url: `${EVENTS}/${series.id}/occurrences/20260728T170000Z` })
  t.not(other.headers.etag, etag, 'each occurrence its own tag')
  t.equal((await s.inject({ url, headers: s.editor })).statusCode, 200)
  await s.patch(series.id, { title: 'Renamed' })
  const after = await s.inject({ url, headers: { 'if-none-match': etag } })
  t.equal(after.statusCode, 200, 'a change of the series changes the tag')
  t.equal(after.json<Event>().title, 'Renamed')
  for (const id of ['20260714T170000Z', '20260722T170000Z', '2026-07-21', '20260721', 'x'.repeat(32), 'x'.repeat(5000), '%C3%A9t%C3%A9']) {
    expectError(t, await s.inject({ url: `${EVENTS}/${series.id}/occurrences/${id}` }), 404, 'rest-event-occurrence-not-found')
  }
  const allDay = await s.create(eventBody({ all_day: true, start_date: '2026-07-01', end_date: '2026-07-01', recurrence: { rule: 'FREQ=DAILY;COUNT=3' } }))
  const day = await s.inject({ url: `${EVENTS}/${allDay.id}/occurrences/20260702` })
  t.equal(day.statusCode, 200)
  t.match(day.json<Event>(), { start_date: '2026-07-02 00:00:00', end_date: '2026-07-02 23:59:59', occurrence: { id: '20260702', original_start_date: '2026-07-02 00:00:00' } })
  expectError(t, await s.inject({ url: `${EVENTS}/${allDay.id}/occurrences/20260702T000000Z` }), 404, 'rest-event-occurrence-not-found')
})

t.test('lists of occurrences through every plan: linked events, the search index, categories, and their totals', async (t) => {
  const s = await setup(t)
  const venue = await s.venue({ venue: 'Hall' })
  const category = await s.category('Jazz')
  const series = await s.create(eventBody({ title: 'Saxophone night', venue: [venue.id], categories: [category.id], start_date: '2026-07-01 18:00:00', end_date: '2026-07-01 19:00:00',
    recurrence: { rule: 'FREQ=WEEKLY;COUNT=5' } }))
  const single = await s.create(eventBody({ title: 'Saxophone single', venue: [venue.id], categories: [category.id], start_date: '2026-07-09 18:00:00', end_date: '2026-07-09 19:00:00' }))
  await s.create(eventBody({ title: 'Other', start_date: '2026-07-02 18:00:00', end_date: '2026-07-02 19:00:00' }))
  const expected = [
    [series.id, '20260701T180000Z'], [series.id, '20260708T180000Z'], [single.id, null], [series.id, '20260715T180000Z'],
    [series.id, '20260722T180000Z'], [series.id, '20260729T180000Z'],
  ]
  for (const query of [`?venue=${venue.id}`, `?categories=${category.id}`, '?search=saxophone', `?venue=${venue.id}&search=saxo`]) {
    for (const headers of [{}, s.editor]) {
      const res = await s.list(query, headers)
      t.equal(res.statusCode, 200)
      const body = res.json<Listed>()
      t.strictSame(body.events.map((e) => [e.id, e.occurrence?.id ?? null]), expected, `${query}: every occurrence, in order`)
      t.equal(body.total, 6)
      const second = await s.list(`${query}&per_page=2&page=2`, headers)
      t.strictSame(second.json<Listed>().events.map((e) => [e.id, e.occurrence?.id ?? null]), expected.slice(2, 4), `${query}: page 2`)
      const first = await s.list(`${query}&hide_subsequent_recurrences=true`, headers)
      t.strictSame(first.json<Listed>().events.map((e) => [e.id, e.occurrence?.id ?? null]), [expected[0], expected[2]], `${query}: the first of each`)
      t.equal(first.json<Listed>().total, 2)
    }
  }
  // An edit of the series (a list rechecked after it, or read again) moves its occurrences.
  t.equal((await s.patch(series.id, { start_date: '2026-07-02 18:00:00', end_date: '2026-07-02 19:00:00' })).statusCode, 200)
  const moved = await s.list(`?venue=${venue.id}`)
  t.strictSame(moved.json<Listed>().events.map((e) => [e.id, e.occurrence?.id ?? null]), [
    // The same start as the single event's: the event id decides (CONTRACT §17).
    [series.id, '20260702T180000Z'], [series.id, '20260709T180000Z'], [single.id, null], [series.id, '20260716T180000Z'],
    [series.id, '20260723T180000Z'], [series.id, '20260730T180000Z'],
  ])
  const category2 = await s.list(`?categories=${category.id}&search=saxophone`)
  t.equal(category2.json<Listed>().total, 6)
})

t.test('the change log carries the series: its record with recurrence (and occurrence null), an update of the series an update', async (t) => {
  const s = await setup(t)
  const series = await s.create(eventBody({ recurrence: { rule: 'FREQ=DAILY;COUNT=3' } }))
  const first = await s.inject({ url: `${API}/changes`, headers: s.editor })
  t.equal(first.statusCode, 200)
  const body = first.json<{ changes: Array<{ action: string; id: number; record?: Event }>; next_cursor: string }>()
  const change = body.changes.find((c) => c.id === series.id)
  t.strictSame(change?.record?.recurrence, { rule: 'FREQ=DAILY;COUNT=3', rdates: [], exdates: [] })
  t.equal(change?.record?.occurrence, null)
  await s.patch(series.id, { recurrence: { rule: 'FREQ=DAILY;COUNT=4' } })
  const next = await s.inject({ url: `${API}/changes?since=${body.next_cursor}`, headers: s.editor })
  const later = next.json<{ changes: Array<{ action: string; id: number; record?: Event }> }>().changes
  t.strictSame(later.map((c) => [c.action, c.id, c.record?.recurrence?.rule]), [['updated', series.id, 'FREQ=DAILY;COUNT=4']])
})
