/**
 * Writes of one occurrence (CONTRACT §17): PATCH/POST/PUT of its own changes, DELETE (cancel) and POST …/split,
 * on both engines: each success, every refusal with nothing written, ETags, the change log, webhooks' payloads,
 * split semantics (COUNT and UNTIL rules, a split of a split, overrides moved), Idempotency-Key replays.
 */
import t from 'tap'
import type { Test } from 'tap'
import { expectError } from './helpers/errors.js'
import { API, build } from './helpers/build.js'
import { EVENTS, eventBody, setup, type Body, type Event, type Setup } from './helpers/events.js'
import { startReceiver } from './helpers/receiver.js'

/** A weekly series: Thursdays 21:00–23:30 in Zürich from 2026-11-26, eight of them. */
const WEEKLY = { title: 'Late Night Jazz', timezone: 'Europe/Zurich', start_date: '2026-11-26 21:00:00', end_date: '2026-11-26 23:30:00', recurrence: { rule: 'FREQ=WEEKLY;COUNT=8' } }
/** Its third occurrence, 2026-12-10 21:00 in Zürich. */
const THIRD = '20261210T200000Z'
const FIFTH = '20261224T200000Z'

const url = (id: number, occurrence: string, tail = '') => `${EVENTS}/${id}/occurrences/${occurrence}${tail}`

/** Everything a write may change: the series' rows, overrides, occurrences and change log. */
async function snapshot(s: Setup): Promise<unknown> {
  const [events, overrides, occurrences, changes] = await Promise.all([
    s.db.selectFrom('events').select(['id', 'version', 'modified', 'recurrence', 'title']).orderBy('id').execute(),
    s.db.selectFrom('event_overrides').selectAll().orderBy('event_id').orderBy('occurrence').execute(),
    s.db.selectFrom('event_occurrences').select(['event_id', 'occurrence', 'start_utc', 'end_utc', 'overridden']).orderBy('event_id').orderBy('occurrence').execute(),
    s.db.selectFrom('changes').select(['resource', 'record_id', 'action']).execute(),
  ])
  return JSON.parse(JSON.stringify({ events, overrides, occurrences: occurrences.map((o) => ({ ...o, overridden: Number(o.overridden) })), changes }))
}

async function changesOf(s: Setup): Promise<Array<{ record_id: number; action: string }>> {
  return (await s.db.selectFrom('changes').select(['record_id', 'action']).where('resource', '=', 'events').orderBy('position').execute())
    .map((c) => ({ record_id: Number(c.record_id), action: c.action }))
}

async function series(t: Test, s: Setup, fields: Body = {}): Promise<Event> {
  return s.create(eventBody({ ...WEEKLY, ...fields }))
}

t.test('PATCH one occurrence: its own title and dates, the series unchanged, the ETag and change log move', async (t) => {
  const s = await setup(t)
  const jazz = await series(t, s)
  const before = await changesOf(s)
  const res = await s.inject({ method: 'PATCH', url: url(jazz.id, THIRD), headers: s.editor, payload: { title: 'Christmas Special', start_date: '2026-12-10 22:00' } })
  t.equal(res.statusCode, 200)
  const occ = res.json<Event>()
  t.equal(occ.id, jazz.id, 'the series id')
  t.equal(occ.title, 'Christmas Special')
  t.equal(occ.start_date, '2026-12-10 22:00:00')
  t.equal(occ.end_date, '2026-12-11 00:30:00', 'the start alone moves it, keeping its length')
  t.equal(occ.utc_start_date, '2026-12-10 21:00:00')
  t.strictSame(occ.occurrence, {
    id: THIRD, original_start_date: '2026-12-10 21:00:00', original_utc_start_date: '2026-12-10 20:00:00', overridden: true,
    rest_url: `http://calendar.test${API}/events/${jazz.id}/occurrences/${THIRD}`,
  })
  t.strictSame(occ.recurrence, jazz.recurrence)
  t.match(res.headers.etag, /^"event-/)
  const read = await s.inject({ url: url(jazz.id, THIRD) })
  t.equal(read.headers.etag, res.headers.etag, 'the answer\'s ETag is the one a read of the occurrence gives')
  t.strictSame({ ...read.json<Event>(), json_ld: undefined }, { ...occ, json_ld: undefined }, 'and the same record')
  const row = await s.db.selectFrom('event_occurrences').selectAll().where('event_id', '=', jazz.id).where('occurrence', '=', THIRD).executeTakeFirstOrThrow()
  t.strictSame([row.start_utc, row.end_utc, Number(row.overridden)], ['2026-12-10 21:00:00', '2026-12-10 23:30:00', 1], 'the row moved and is flagged')
  const whole = await s.get(jazz.id)
  t.equal(whole.json<Event>().title, 'Late Night Jazz', 'the series keeps its title')
  t.not(whole.headers.etag, undefined)
  const changes = await changesOf(s)
  t.strictSame(changes.slice(before.length), [{ record_id: jazz.id, action: 'updated' }], 'one updated entry')

  // The same body again changes nothing: same ETag, no entry.
  const again = await s.inject({ method: 'PATCH', url: url(jazz.id, THIRD), headers: s.editor, payload: { title: 'Christmas Special' } })
  t.equal(again.statusCode, 200)
  t.equal(again.headers.etag, res.headers.etag, 'nothing changed: same ETag')
  t.equal((await changesOf(s)).length, changes.length, 'nothing changed: no entry')

  // POST and PUT behave the same; null drops a change; the last change gone drops the override.
  const put = await s.inject({ method: 'PUT', url: url(jazz.id, THIRD), headers: s.editor, payload: { start_date: null } })
  t.equal(put.statusCode, 200)
  t.equal(put.json<Event>().start_date, '2026-12-10 21:00:00', 'dates back to the series')
  t.equal(put.json<Event>().title, 'Christmas Special')
  t.not(put.headers.etag, res.headers.etag)
  const post = await s.inject({ method: 'POST', url: url(jazz.id, THIRD), headers: s.editor, payload: { title: null } })
  t.equal(post.statusCode, 200)
  t.equal(post.json<Event>().title, 'Late Night Jazz')
  t.equal(post.json<Event>().occurrence?.overridden, false)
  t.equal(await s.db.selectFrom('event_overrides').select('occurrence').execute().then((r) => r.length), 0, 'no override left')
})

t.test('PATCH: venue, organizer, cost, website, description of one occurrence; If-Match', async (t) => {
  const s = await setup(t)
  const hall = await s.venue({ venue: 'Hall' })
  const club = await s.organizer({ organizer: 'Club' })
  const jazz = await series(t, s, { cost: 'CHF 25' })
  const res = await s.inject({ method: 'PATCH', url: url(jazz.id, THIRD), headers: s.editor, payload: { venue: hall.id, organizer: [club.id], cost: 30, website: 'https://x.example/a', description: 'Special' } })
  t.equal(res.statusCode, 200)
  const occ = res.json<Event>()
  t.strictSame(occ.venue.map((v) => v.id), [hall.id])
  t.strictSame(occ.organizer.map((o) => o.id), [club.id])
  t.equal(occ.cost, '30')
  t.equal(occ.website, 'https://x.example/a')
  t.equal(occ.description, 'Special')
  const etag = String(res.headers.etag)
  const stale = await s.inject({ method: 'PATCH', url: url(jazz.id, THIRD), headers: { ...s.editor, 'if-match': '"occurrence-stale"' }, payload: { title: 'X' } })
  expectError(t, stale, 412, 'rest-precondition-failed')
  const fresh = await s.inject({ method: 'PATCH', url: url(jazz.id, THIRD), headers: { ...s.editor, 'if-match': etag }, payload: { title: 'X' } })
  t.equal(fresh.statusCode, 200, 'the occurrence ETag is accepted')
  // A change of the series changes the occurrence's ETag too.
  await s.patch(jazz.id, { excerpt: 'New' })
  const old = await s.inject({ method: 'PATCH', url: url(jazz.id, THIRD), headers: { ...s.editor, 'if-match': String(fresh.headers.etag) }, payload: { title: 'Y' } })
  expectError(t, old, 412, 'rest-precondition-failed')
  // As on an event (CONTRACT §5), `{ "id": N }` names the existing record N, alone or in the list.
  const byObject = await s.inject({ method: 'PATCH', url: url(jazz.id, FIFTH), headers: s.editor, payload: { venue: { id: hall.id }, organizer: [{ id: club.id }] } })
  t.equal(byObject.statusCode, 200, byObject.body)
  t.strictSame(byObject.json<Event>().venue.map((v) => v.id), [hall.id])
  t.strictSame(byObject.json<Event>().organizer.map((o) => o.id), [club.id])
  // And an object of fields is a record created with the change, in its unit of work.
  const inline = await s.inject({ method: 'PATCH', url: url(jazz.id, FIFTH), headers: s.editor, payload: { venue: [hall.id, { venue: 'Tent', city: 'Bern' }], organizer: { organizer: 'Guest band' } } })
  t.equal(inline.statusCode, 200, inline.body)
  const shown = inline.json<Event>()
  t.strictSame(shown.venue.map((v) => v.venue), ['Hall', 'Tent'])
  t.strictSame(shown.organizer.map((o) => o.organizer), ['Guest band'])
  const tent = shown.venue[1]?.id ?? 0
  t.equal((await s.inject({ url: `${API}/venues/${tent}` })).json<{ city: string }>().city, 'Bern', 'the new venue is a record of its own')
  const venues = (await s.inject({ url: `${API}/venues`, headers: s.editor })).json<{ total: number }>().total
  expectError(t, await s.inject({ method: 'PATCH', url: url(jazz.id, FIFTH), headers: s.editor, payload: { title: 'Z', venue: [{ venue: 'Shed', website: 'not a url' }] } }), 400, 'rest_invalid_param')
  t.equal((await s.inject({ url: `${API}/venues`, headers: s.editor })).json<{ total: number }>().total, venues, 'a refused change creates nothing')
  t.equal((await s.inject({ url: url(jazz.id, FIFTH) })).json<Event>().title, 'Late Night Jazz', 'and changes nothing')
})

t.test('a venue deleted and an organizer trashed that one occurrence alone links: the series is updated (change log, version)', async (t) => {
  const s = await setup(t)
  const hall = await s.venue({ venue: 'Hall' })
  const club = await s.organizer({ organizer: 'Club' })
  const jazz = await series(t, s)
  const linked = await s.inject({ method: 'PATCH', url: url(jazz.id, THIRD), headers: s.editor, payload: { venue: hall.id, organizer: [club.id] } })
  t.equal(linked.statusCode, 200)
  const version = async (): Promise<number> => Number((await s.db.selectFrom('events').select('version').where('id', '=', jazz.id).executeTakeFirstOrThrow()).version)
  for (const [what, path] of [['venue deleted for good', `${API}/venues/${hall.id}?force=true`], ['organizer trashed', `${API}/organizers/${club.id}`]] as const) {
    const before = await changesOf(s)
    const was = await version()
    const res = await s.inject({ method: 'DELETE', url: path, headers: s.editor })
    t.equal(res.statusCode, 200, what)
    t.strictSame((await changesOf(s)).slice(before.length), [{ record_id: jazz.id, action: 'updated' }], `${what}: the series is updated`)
    t.equal(await version(), was + 1, `${what}: its version moves (ETag, SEQUENCE)`)
  }
  const occ = (await s.inject({ url: url(jazz.id, THIRD) })).json<Event>()
  t.strictSame([occ.venue, occ.organizer], [[], []], 'the occurrence shows neither')
})

t.test('PATCH refusals: nothing written', async (t) => {
  const s = await setup(t)
  const jazz = await series(t, s)
  const single = await s.event('Single')
  const author = await s.auth('author')
  const before = await snapshot(s)
  expectError(t, await s.inject({ method: 'PATCH', url: url(jazz.id, THIRD), headers: s.editor, payload: { status: 'draft' } }), 400, 'rest_invalid_param', ['status'])
  expectError(t, await s.inject({ method: 'PATCH', url: url(jazz.id, THIRD), headers: s.editor, payload: { start_date: 'soon' } }), 400, 'rest_invalid_param', ['start_date'])
  expectError(t, await s.inject({ method: 'PATCH', url: url(jazz.id, THIRD), headers: s.editor, payload: { end_date: '2026-12-10 20:00' } }), 400, 'rest_invalid_param', ['end_date'])
  expectError(t, await s.inject({ method: 'PATCH', url: url(jazz.id, THIRD), headers: s.editor, payload: { venue: 999 } }), 400, 'rest_invalid_param', ['venue'])
  expectError(t, await s.inject({ method: 'PATCH', url: url(jazz.id, THIRD), headers: s.editor, payload: { website: 'ftp://x' } }), 400, 'rest_invalid_param', ['website'])
  expectError(t, await s.inject({ method: 'PATCH', url: url(jazz.id, '20261211T200000Z'), headers: s.editor, payload: { title: 'X' } }), 404, 'rest-event-occurrence-not-found')
  expectError(t, await s.inject({ method: 'PATCH', url: url(jazz.id, 'tomorrow'), headers: s.editor, payload: { title: 'X' } }), 404, 'rest-event-occurrence-not-found')
  expectError(t, await s.inject({ method: 'PATCH', url: url(9999, THIRD), headers: s.editor, payload: { title: 'X' } }), 404, 'rest-event-not-found')
  expectError(t, await s.inject({ method: 'PATCH', url: url(jazz.id, THIRD), headers: author, payload: { title: 'X' } }), 403, 'rest_forbidden')
  expectError(t, await s.inject({ method: 'PATCH', url: url(jazz.id, THIRD), payload: { title: 'X' } }), 401, 'rest_forbidden')
  const singleId = `${single.utc_start_date.replace(/[-:]/g, '').replace(' ', 'T')}Z`
  expectError(t, await s.inject({ method: 'PATCH', url: url(single.id, singleId), headers: s.editor, payload: { title: 'X' } }), 400, 'rest_invalid_param', ['occurrence'])
  t.strictSame(await snapshot(s), before, 'nothing written')
  await s.remove(jazz.id)
  const trashed = await snapshot(s)
  expectError(t, await s.inject({ method: 'PATCH', url: url(jazz.id, THIRD), headers: s.editor, payload: { title: 'X' } }), 410, 'event-is-in-trash')
  expectError(t, await s.inject({ method: 'DELETE', url: url(jazz.id, THIRD), headers: s.editor }), 410, 'event-is-in-trash')
  expectError(t, await s.inject({ method: 'POST', url: url(jazz.id, THIRD, '/split'), headers: s.editor, payload: {} }), 410, 'event-is-in-trash')
  t.strictSame(await snapshot(s), trashed, 'nothing written in the trash')
})

t.test('DELETE cancels: the original start joins exdates, the override goes, the row goes', async (t) => {
  const s = await setup(t)
  const jazz = await series(t, s)
  await s.inject({ method: 'PATCH', url: url(jazz.id, THIRD), headers: s.editor, payload: { title: 'Moved', start_date: '2026-12-11 21:00' } })
  const before = await changesOf(s)
  const res = await s.inject({ method: 'DELETE', url: url(jazz.id, THIRD), headers: s.editor })
  t.equal(res.statusCode, 200)
  const cancelled = res.json<Event>()
  t.strictSame(cancelled.recurrence, { rule: 'FREQ=WEEKLY;COUNT=8', rdates: [], exdates: ['2026-12-10 21:00:00'] })
  t.equal(cancelled.occurrence, null)
  t.not(res.headers.etag, undefined)
  t.equal(await s.db.selectFrom('event_overrides').select('occurrence').execute().then((r) => r.length), 0, 'the override is dropped')
  const rows = await s.db.selectFrom('event_occurrences').select('occurrence').where('event_id', '=', jazz.id).execute()
  t.equal(rows.length, 7)
  t.notOk(rows.some((r) => r.occurrence === THIRD))
  t.strictSame((await changesOf(s)).slice(before.length), [{ record_id: jazz.id, action: 'updated' }])
  const snap = await snapshot(s)
  expectError(t, await s.inject({ method: 'DELETE', url: url(jazz.id, THIRD), headers: s.editor }), 404, 'rest-event-occurrence-not-found', undefined)
  expectError(t, await s.inject({ method: 'DELETE', url: url(jazz.id, FIFTH), headers: { ...s.editor, 'if-match': '"x"' } }), 412, 'rest-precondition-failed')
  t.strictSame(await snapshot(s), snap, 'nothing written by the refusals')
  // The last occurrence left cannot be cancelled.
  const once = await s.create(eventBody({ ...WEEKLY, title: 'Once', recurrence: { rule: 'FREQ=WEEKLY;COUNT=1' } }))
  expectError(t, await s.inject({ method: 'DELETE', url: url(once.id, '20261126T200000Z'), headers: s.editor }), 400, 'rest_invalid_param', ['recurrence'])
})

t.test('split with COUNT: the series keeps the occurrences before, a new event the rest, overrides moved', async (t) => {
  const s = await setup(t)
  const jazz = await series(t, s)
  const moved = await s.inject({ method: 'PATCH', url: url(jazz.id, '20270107T200000Z'), headers: s.editor, payload: { title: 'New Year' } })
  t.equal(moved.statusCode, 200)
  await s.inject({ method: 'PATCH', url: url(jazz.id, THIRD), headers: s.editor, payload: { title: 'Early' } })
  const before = await changesOf(s)
  const res = await s.inject({ method: 'POST', url: url(jazz.id, FIFTH, '/split'), headers: s.editor, payload: { title: 'Late Night Jazz (winter)' } })
  t.equal(res.statusCode, 201)
  const made = res.json<Event>()
  t.not(made.id, jazz.id)
  t.equal(res.headers.location, made.rest_url)
  t.equal(made.title, 'Late Night Jazz (winter)', 'the body applies to the new event')
  t.equal(made.slug, 'late-night-jazz-2', 'a new slug (a title sent never changes it)')
  t.equal(made.start_date, '2026-12-24 21:00:00')
  t.equal(made.end_date, '2026-12-24 23:30:00')
  t.strictSame(made.recurrence, { rule: 'FREQ=WEEKLY;COUNT=4', rdates: [], exdates: [] })
  const old = (await s.get(jazz.id)).json<Event>()
  t.strictSame(old.recurrence, { rule: 'FREQ=WEEKLY;COUNT=4', rdates: [], exdates: [] })
  const ids = async (id: number) => (await s.db.selectFrom('event_occurrences').select('occurrence').where('event_id', '=', id).orderBy('occurrence').execute()).map((r) => r.occurrence)
  t.strictSame(await ids(jazz.id), ['20261126T200000Z', '20261203T200000Z', THIRD, '20261217T200000Z'])
  t.strictSame(await ids(made.id), [FIFTH, '20261231T200000Z', '20270107T200000Z', '20270114T200000Z'], 'the later ids stay')
  const overrides = await s.db.selectFrom('event_overrides').select(['event_id', 'occurrence', 'title']).orderBy('occurrence').execute()
  t.strictSame(overrides.map((o) => [Number(o.event_id), o.occurrence, o.title]), [[jazz.id, THIRD, 'Early'], [made.id, '20270107T200000Z', 'New Year']])
  const flagged = await s.db.selectFrom('event_occurrences').select(['occurrence', 'overridden']).where('event_id', '=', made.id).where('overridden', '=', 1).execute()
  t.strictSame(flagged.map((r) => r.occurrence), ['20270107T200000Z'], 'the moved override flags its row')
  t.strictSame((await changesOf(s)).slice(before.length).sort((a, b) => a.record_id - b.record_id), [{ record_id: jazz.id, action: 'updated' }, { record_id: made.id, action: 'created' }], 'updated old, created new')

  // A split of the split.
  const again = await s.inject({ method: 'POST', url: url(made.id, '20270107T200000Z', '/split'), headers: s.editor, payload: {} })
  t.equal(again.statusCode, 201)
  const third = again.json<Event>()
  t.strictSame(third.recurrence?.rule, 'FREQ=WEEKLY;COUNT=2')
  t.equal(third.title, 'Late Night Jazz (winter)')
  t.strictSame(await ids(made.id), [FIFTH, '20261231T200000Z'])
  t.strictSame(await ids(third.id), ['20270107T200000Z', '20270114T200000Z'])
  const last = await s.db.selectFrom('event_overrides').select(['event_id']).where('occurrence', '=', '20270107T200000Z').executeTakeFirstOrThrow()
  t.equal(Number(last.event_id), third.id, 'the override moved again')

  // Splitting at the first occurrence: 400, nothing written.
  const snap = await snapshot(s)
  expectError(t, await s.inject({ method: 'POST', url: url(jazz.id, '20261126T200000Z', '/split'), headers: s.editor, payload: {} }), 400, 'rest_invalid_param', ['occurrence'])
  expectError(t, await s.inject({ method: 'POST', url: url(jazz.id, '20261127T200000Z', '/split'), headers: s.editor, payload: {} }), 404, 'rest-event-occurrence-not-found')
  expectError(t, await s.inject({ method: 'POST', url: url(jazz.id, THIRD, '/split'), headers: s.editor, payload: { bogus: 1 } }), 400, 'rest_invalid_param', ['bogus'])
  t.strictSame(await snapshot(s), snap, 'nothing written')
})

t.test('split with UNTIL and unbounded rules; rdates and exdates go where they belong', async (t) => {
  const s = await setup(t)
  const until = await series(t, s, { recurrence: { rule: 'FREQ=WEEKLY;UNTIL=20270131T000000Z', rdates: ['2026-12-26 21:00:00', '2026-11-28 21:00:00'], exdates: ['2026-12-31 21:00:00', '2026-12-03 21:00:00'] } })
  const res = await s.inject({ method: 'POST', url: url(until.id, FIFTH, '/split'), headers: s.editor })
  t.equal(res.statusCode, 201)
  const made = res.json<Event>()
  t.strictSame(made.recurrence, { rule: 'FREQ=WEEKLY;UNTIL=20270131T000000Z', rdates: ['2026-12-26 21:00:00'], exdates: ['2026-12-31 21:00:00'] })
  const old = (await s.get(until.id)).json<Event>()
  t.strictSame(old.recurrence, { rule: 'FREQ=WEEKLY;UNTIL=20261224T195959Z', rdates: ['2026-11-28 21:00:00'], exdates: ['2026-12-03 21:00:00'] }, 'UNTIL one second before, in UTC')
  const count = async (id: number) => Number((await s.db.selectFrom('event_occurrences').select((eb) => eb.fn.countAll().as('n')).where('event_id', '=', id).executeTakeFirstOrThrow()).n)
  t.equal(await count(until.id), 4, '11-26, 11-28, 12-10, 12-17')
  t.equal(await count(made.id), 6, '12-24, 12-26, 01-07, 01-14, 01-21, 01-28 (12-31 excluded)')

  const open = await series(t, s, { title: 'Open', recurrence: { rule: 'FREQ=WEEKLY' } })
  const split = await s.inject({ method: 'POST', url: url(open.id, FIFTH, '/split'), headers: s.editor, payload: {} })
  t.equal(split.statusCode, 201)
  t.strictSame(split.json<Event>().recurrence?.rule, 'FREQ=WEEKLY')
  t.strictSame((await s.get(open.id)).json<Event>().recurrence?.rule, 'FREQ=WEEKLY;UNTIL=20261224T195959Z')

  const days = await s.create(eventBody({ title: 'Days', all_day: true, start_date: '2026-11-26', end_date: '2026-11-27', timezone: 'Europe/Zurich', recurrence: { rule: 'FREQ=WEEKLY' } }))
  const daySplit = await s.inject({ method: 'POST', url: url(days.id, '20261210', '/split'), headers: s.editor, payload: {} })
  t.equal(daySplit.statusCode, 201)
  t.equal(daySplit.json<Event>().start_date, '2026-12-10 00:00:00')
  t.equal(daySplit.json<Event>().end_date, '2026-12-11 23:59:59', 'an all-day occurrence keeps its days')
  t.strictSame((await s.get(days.id)).json<Event>().recurrence?.rule, 'FREQ=WEEKLY;UNTIL=20261209', 'an all-day series ends on a date')
})

t.test('split: Idempotency-Key replays the first answer and creates nothing more', async (t) => {
  const s = await setup(t)
  const jazz = await series(t, s)
  const headers = { ...s.editor, 'idempotency-key': 'split-1' }
  const first = await s.inject({ method: 'POST', url: url(jazz.id, FIFTH, '/split'), headers, payload: { title: 'Winter' } })
  t.equal(first.statusCode, 201)
  const snap = await snapshot(s)
  const replay = await s.inject({ method: 'POST', url: url(jazz.id, FIFTH, '/split'), headers, payload: { title: 'Winter' } })
  t.equal(replay.statusCode, 201)
  t.equal(replay.headers['idempotent-replayed'], 'true')
  t.equal(replay.body, first.body)
  t.equal(replay.headers.location, first.headers.location)
  t.strictSame(await snapshot(s), snap, 'nothing created again')
  expectError(t, await s.inject({ method: 'POST', url: url(jazz.id, FIFTH, '/split'), headers, payload: { title: 'Other' } }), 422, 'rest_idempotency_key_mismatch')
})

t.test('webhooks: a change of one occurrence, a cancel and a split are sent with the series\' record (and the new event\'s)', async (t) => {
  const built = await build(t, {
    config: { webhooks: { retrySchedule: [1000], disableAfter: 10, allowPrivate: true } },
    webhooks: { now: () => new Date(), random: () => 0.5, timeoutMs: 5000 },
  })
  const admin = await built.auth('administrator')
  const receiver = await startReceiver(t)
  const hook = await built.inject({ method: 'POST', url: `${API}/webhooks`, headers: admin, payload: { url: receiver.url, events: ['event.*'] } })
  receiver.secret = String(hook.json<{ secret: string }>().secret)
  const send = async (method: 'POST' | 'PATCH' | 'DELETE', path: string, payload?: Body) => {
    const res = await built.inject({ method, url: path, headers: admin, ...(payload === undefined ? {} : { payload }) })
    t.ok(res.statusCode < 300, `${method} ${path} → ${res.statusCode}`)
    return res.json<Event>()
  }
  const drain = async () => { while (await built.app.webhooks.runOnce() > 0) { /* until nothing is due */ } }
  const jazz = await send('POST', EVENTS, eventBody(WEEKLY))
  await drain()
  await send('PATCH', url(jazz.id, THIRD), { title: 'Special' })
  await drain()
  await send('DELETE', url(jazz.id, '20261217T200000Z'))
  await drain()
  const made = await send('POST', url(jazz.id, FIFTH, '/split'), {})
  await drain()
  type Sent = { type: string; data: { id: number; record?: Event } }
  const got = receiver.received.map((r) => r.json as unknown as Sent)
  t.ok(receiver.received.every((r) => r.verified), 'signed')
  const types = got.map((g) => `${g.type} ${g.data.id}`)
  t.equal(types.filter((x) => x === `event.updated ${jazz.id}`).length, 3, 'three updates of the series')
  t.ok(types.includes(`event.created ${made.id}`), 'the new event is created')
  const updates = got.filter((g) => g.type === 'event.updated')
  t.equal(updates[0]?.data.record?.title, 'Late Night Jazz', 'the series\' record, not the occurrence\'s')
  t.equal(updates[0]?.data.record?.occurrence, null)
  t.strictSame(updates[1]?.data.record?.recurrence?.exdates, ['2026-12-17 21:00:00'], 'the cancel shows in the series')
  t.strictSame(updates[2]?.data.record?.recurrence?.rule, 'FREQ=WEEKLY;COUNT=4', 'the split ends the series')
})

t.test('a form body: text values, an empty value drops the change', async (t) => {
  const s = await setup(t)
  const hall = await s.venue({ venue: 'Hall' })
  const jazz = await series(t, s)
  const form = { ...s.editor, 'content-type': 'application/x-www-form-urlencoded' }
  const res = await s.inject({ method: 'POST', url: url(jazz.id, THIRD), headers: form, payload: `title=Form&venue[]=${hall.id}&start_date=2026-12-10+22%3A00` })
  t.equal(res.statusCode, 200, res.body.slice(0, 200))
  t.equal(res.json<Event>().title, 'Form')
  t.strictSame(res.json<Event>().venue.map((v) => v.id), [hall.id])
  t.equal(res.json<Event>().start_date, '2026-12-10 22:00:00')
  const cleared = await s.inject({ method: 'PATCH', url: url(jazz.id, THIRD), headers: form, payload: 'title=&start_date=' })
  t.equal(cleared.statusCode, 200, cleared.body.slice(0, 200))
  t.equal(cleared.json<Event>().title, 'Late Night Jazz')
  t.equal(cleared.json<Event>().start_date, '2026-12-10 21:00:00')
  t.equal(cleared.json<Event>().occurrence?.overridden, true, 'the venue change stays')
})

t.test('lists filter an overridden occurrence on its own title, venues, organizers, coordinates and moved dates', async (t) => {
  const s = await setup(t, { config: { extensions: new Set(['geoloc']) } })
  const hall = await s.venue({ venue: 'Hall' })
  const club = await s.venue({ venue: 'Club', geo_lat: 47.37, geo_lng: 8.54 })
  const band = await s.organizer({ organizer: 'Band' })
  const jazz = await series(t, s, { venue: [hall.id] })
  const res = await s.inject({ method: 'PATCH', url: url(jazz.id, THIRD), headers: s.editor,
    payload: { title: 'Christmas Special', description: 'Mulled wine', venue: club.id, organizer: band.id, start_date: '2026-12-11 21:00' } })
  t.equal(res.statusCode, 200)
  // Another occurrence changes its venues to none.
  t.equal((await s.inject({ method: 'PATCH', url: url(jazz.id, FIFTH), headers: s.editor, payload: { venue: [] } })).statusCode, 200)
  const window = 'start_date=2026-11-01&end_date=2027-03-01&per_page=50'
  const total = async (query: string) => {
    const list = await s.list(`?${window}&${query}`)
    t.equal(list.statusCode, 200, query)
    return Number(list.headers['x-total'])
  }
  t.equal(await total('search=christmas'), 1, 'search: its own title')
  t.equal(await total('search=mulled'), 1, 'search: its own description')
  t.equal(await total('search=late%20night'), 7, 'search: the others keep the series\' title')
  // The window's plan serves with overrides present (event-filters.ts `searchedInWindow`): the pages, not only the totals.
  const own = await s.list(`?${window}&search=christmas`)
  t.strictSame(own.json<{ events: Event[] }>().events.map((e) => [e.occurrence?.id, e.title]), [[THIRD, 'Christmas Special']], 'search: the page holds the changed occurrence')
  const others = (await s.list(`?${window}&search=late%20night`)).json<{ events: Event[] }>().events.map((e) => e.occurrence?.id)
  t.equal(others.length, 7)
  t.notOk(others.includes(THIRD), 'search: the series\' title no longer finds the changed occurrence')
  t.equal(await total(`venue=${club.id}`), 1, 'venue: its own venue')
  t.equal(await total(`venue=${hall.id}`), 6, 'venue: the series\' venue, less the two changed')
  t.equal(await total(`organizer=${band.id}`), 1, 'organizer: its own')
  t.equal(await total('geoloc=1'), 1, 'geoloc: its own venue has coordinates')
  t.equal(await total('geoloc=0'), 7, 'geoloc=0: the others')
  t.equal(await total(`venue=${club.id}&search=christmas`), 1, 'both, the venue driving')
  // hide_subsequent_recurrences keeps the first occurrence that matches, its own changes counted.
  const first = await s.list(`?${window}&venue=${club.id}&hide_subsequent_recurrences=true`)
  t.strictSame(first.json<{ events: Event[] }>().events.map((e) => e.occurrence?.id), [THIRD], 'the first matching occurrence is the changed one')
  const firstJazz = await s.list(`?${window}&search=late%20night&hide_subsequent_recurrences=true`)
  t.strictSame(firstJazz.json<{ events: Event[] }>().events.map((e) => e.occurrence?.id), ['20261126T200000Z'])
  const firstSpecial = await s.list(`?${window}&search=christmas&hide_subsequent_recurrences=true`)
  t.strictSame(firstSpecial.json<{ events: Event[] }>().events.map((e) => e.title), ['Christmas Special'], 'lists show the occurrence as changed')
  const day = await s.list('?start_date=2026-12-11&end_date=2026-12-11')
  t.equal(Number(day.headers['x-total']), 1, 'the moved dates: the day it moved to')
  const before = await s.list('?start_date=2026-12-10&end_date=2026-12-10')
  t.equal(Number(before.headers['x-total']), 0, 'not the day it moved from')
  // Dropping the changes puts it back.
  await s.inject({ method: 'PATCH', url: url(jazz.id, THIRD), headers: s.editor, payload: { title: null, description: null, venue: null, organizer: null, start_date: null } })
  t.equal(await total('search=christmas'), 0)
  t.equal(await total(`venue=${club.id}`), 0)
  t.equal(await total(`venue=${hall.id}`), 7)
})

/** `GET /events/{id}/occurrences`, every page: each occurrence's id, original and own dates, and title. */
async function occurrenceSet(t: Test, s: Setup, id: number): Promise<string[][]> {
  const rows: string[][] = []
  for (let page = 1; ; page++) {
    const res = await s.inject({ url: `${EVENTS}/${id}/occurrences?per_page=50&page=${page}` })
    t.equal(res.statusCode, 200)
    const body = res.json<{ occurrences: Event[]; total_pages: number }>()
    for (const o of body.occurrences) {
      const occ = o.occurrence as { id: string; original_start_date: string; original_utc_start_date: string }
      rows.push([occ.id, occ.original_utc_start_date, o.start_date, o.end_date, o.utc_start_date, o.utc_end_date, o.title])
    }
    if (page >= body.total_pages) return rows
  }
}

const sorted = (rows: string[][]): string[][] => [...rows].sort((a, b) => (a[0] as string).localeCompare(b[0] as string))

/**
 * A split at `at` of a new series `fields` whose occurrence `changed` has its own title: 201, the two series'
 * sets together are the original's (ids, dates, titles: the override moved with its occurrence).
 */
async function splitKeepsSet(t: Test, s: Setup, fields: Body, at: string, changed: string): Promise<{ old: Event; made: Event }> {
  const created = await s.create(eventBody({ status: 'publish', ...fields }))
  const patched = await s.inject({ method: 'PATCH', url: url(created.id, changed), headers: s.editor, payload: { title: 'Changed' } })
  t.equal(patched.statusCode, 200)
  const original = await occurrenceSet(t, s, created.id)
  t.ok(original.some((o) => o[0] === changed && o[6] === 'Changed'), 'the override is in the original set')
  const res = await s.inject({ method: 'POST', url: url(created.id, at, '/split'), headers: s.editor, payload: {} })
  t.equal(res.statusCode, 201)
  const made = res.json<Event>()
  const head = await occurrenceSet(t, s, created.id)
  const tail = await occurrenceSet(t, s, made.id)
  t.strictSame(head, original.filter((o) => (o[0] as string) < at), 'the old series keeps the occurrences before')
  t.strictSame(sorted([...head, ...tail]), sorted(original), 'the union of both sets is the original set')
  t.equal(tail[0]?.[0], at, 'the new series starts at the split occurrence')
  const override = await s.db.selectFrom('event_overrides').select(['event_id']).where('occurrence', '=', changed).where('event_id', 'in', [created.id, made.id]).executeTakeFirstOrThrow()
  t.equal(Number(override.event_id), made.id, 'the later override moved')
  return { old: (await s.get(created.id)).json<Event>(), made }
}

t.test('split at an rdate: the rule cannot continue from it, so the new series lists its dates (sets kept)', async (t) => {
  const s = await setup(t)
  // Mondays 4, 11, 18, 25 Jan, 1, 8 Feb and Wednesdays 6, 20 Jan; split at Wednesday 20 Jan.
  const weekly = await splitKeepsSet(t, s, {
    title: 'T13', start_date: '2027-01-04 10:00:00', end_date: '2027-01-04 23:59:00', timezone: 'UTC',
    recurrence: { rule: 'FREQ=WEEKLY;COUNT=6', rdates: ['2027-01-06 10:00:00', '2027-01-20 10:00:00'] },
  }, '20270120T100000Z', '20270201T100000Z')
  t.strictSame(weekly.made.recurrence, { rule: null, rdates: ['2027-01-25 10:00:00', '2027-02-01 10:00:00', '2027-02-08 10:00:00'], exdates: [] })
  t.strictSame(weekly.old.recurrence, { rule: 'FREQ=WEEKLY;COUNT=3', rdates: ['2027-01-06 10:00:00'], exdates: [] })

  // A daily 10:00 rule (UNTIL) with an 18:00 rdate: the time of day is the rule's.
  const daily = await splitKeepsSet(t, s, {
    title: 'Daily', start_date: '2027-01-04 10:00:00', end_date: '2027-01-04 11:00:00', timezone: 'Europe/Zurich',
    recurrence: { rule: 'FREQ=DAILY;UNTIL=20270108T235959Z', rdates: ['2027-01-05 18:00:00'] },
  }, '20270105T170000Z', '20270107T090000Z')
  t.strictSame(daily.made.recurrence, { rule: null, rdates: ['2027-01-06 10:00:00', '2027-01-07 10:00:00', '2027-01-08 10:00:00'], exdates: [] })

  // A COUNT rule every other Monday with an rdate on an off Monday: same weekday and time, not the rule's phase.
  const phase = await splitKeepsSet(t, s, {
    title: 'Phase', start_date: '2027-01-04 10:00:00', end_date: '2027-01-04 12:00:00', timezone: 'UTC',
    recurrence: { rule: 'FREQ=WEEKLY;INTERVAL=2;COUNT=4', rdates: ['2027-01-11 10:00:00'], exdates: ['2027-02-15 10:00:00'] },
  }, '20270111T100000Z', '20270201T100000Z')
  t.strictSame(phase.made.recurrence, { rule: null, rdates: ['2027-01-18 10:00:00', '2027-02-01 10:00:00'], exdates: [] })
  t.strictSame(phase.old.recurrence, { rule: 'FREQ=WEEKLY;INTERVAL=2;COUNT=1', rdates: [], exdates: [] })

  // All-day: the rdates the new series lists are days.
  const days = await splitKeepsSet(t, s, {
    title: 'Days', all_day: true, start_date: '2027-01-04', end_date: '2027-01-04', timezone: 'Europe/Zurich',
    recurrence: { rule: 'FREQ=WEEKLY;COUNT=3', rdates: ['2027-01-06'] },
  }, '20270106', '20270118')
  t.strictSame(days.made.recurrence, { rule: null, rdates: ['2027-01-11', '2027-01-18'], exdates: [] })

  // A split at an occurrence of the rule keeps the rule, as before.
  const kept = await splitKeepsSet(t, s, {
    title: 'Kept', start_date: '2027-01-04 10:00:00', end_date: '2027-01-04 12:00:00', timezone: 'UTC',
    recurrence: { rule: 'FREQ=WEEKLY;COUNT=6', rdates: ['2027-01-06 10:00:00', '2027-01-20 10:00:00'] },
  }, '20270118T100000Z', '20270201T100000Z')
  t.strictSame(kept.made.recurrence, { rule: 'FREQ=WEEKLY;COUNT=4', rdates: ['2027-01-20 10:00:00'], exdates: [] })
})

t.test('split at an rdate of an unbounded rule: 400 naming occurrence, nothing written', async (t) => {
  const s = await setup(t)
  const open = await s.create(eventBody({
    title: 'Open', status: 'publish', start_date: '2027-01-04 10:00:00', end_date: '2027-01-04 11:00:00', timezone: 'UTC',
    recurrence: { rule: 'FREQ=DAILY', rdates: ['2027-01-05 18:00:00'] },
  }))
  const patched = await s.inject({ method: 'PATCH', url: url(open.id, '20270107T100000Z'), headers: s.editor, payload: { title: 'Changed' } })
  t.equal(patched.statusCode, 200)
  const original = await occurrenceSet(t, s, open.id)
  const snap = await snapshot(s)
  const res = await s.inject({ method: 'POST', url: url(open.id, '20270105T180000Z', '/split'), headers: { ...s.editor, 'accept-language': 'de' }, payload: {} })
  expectError(t, res, 400, 'rest_invalid_param', ['occurrence'])
  t.match(res.body, /rdates/, 'the message says the occurrence was added by rdates')
  t.strictSame(await snapshot(s), snap, 'nothing written')
  t.strictSame(await occurrenceSet(t, s, open.id), original, 'the set is unchanged')
  // At an occurrence of the rule the split goes on as before.
  const split = await s.inject({ method: 'POST', url: url(open.id, '20270106T100000Z', '/split'), headers: s.editor, payload: {} })
  t.equal(split.statusCode, 201)
  t.strictSame(split.json<Event>().recurrence, { rule: 'FREQ=DAILY', rdates: [], exdates: [] })
})
