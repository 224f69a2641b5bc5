/**
 * A third black-box pass over the contract (CONTRACT §3, §5–7, §12, §16, §17): the occurrence routes and
 * /changes under conditional requests, HEAD, unknown methods, trailing slashes, PHP-style arrays, languages;
 * occurrences linking venues and organizers later trashed or deleted; series edits around overrides.
 */
import t from 'tap'
import { expectError } from './helpers/errors.js'
import { API } from './helpers/build.js'
import { EVENTS, eventBody, setup, type Event } from './helpers/events.js'

/** Weekly, Thursdays 21:00–23:30 in Zürich from 2026-11-26, eight of them. */
const WEEKLY = { title: 'Late Night Jazz', timezone: 'Europe/Zurich', start_date: '2026-11-26 21:00:00', end_date: '2026-11-26 23:30:00', recurrence: { rule: 'FREQ=WEEKLY;COUNT=8' } }
const FIRST = '20261126T200000Z'
const THIRD = '20261210T200000Z'
const occ = (id: number, o: string, tail = '') => `${EVENTS}/${id}/occurrences/${o}${tail}`

t.test('HEAD, conditional, trailing slash, unknown methods on occurrence routes and /changes', async (t) => {
  const s = await setup(t)
  const jazz = await s.create(eventBody(WEEKLY))
  const one = await s.inject({ url: occ(jazz.id, THIRD) })
  t.equal(one.statusCode, 200)
  const etag = one.headers.etag as string
  t.ok(etag, 'occurrence has an ETag')
  const head = await s.inject({ method: 'HEAD', url: occ(jazz.id, THIRD) })
  t.equal(head.statusCode, 200, 'HEAD occurrence')
  t.equal(head.body, '', 'HEAD no body')
  t.equal(head.headers.etag, etag, 'HEAD same etag')
  const inm = await s.inject({ url: occ(jazz.id, THIRD), headers: { 'if-none-match': etag } })
  t.equal(inm.statusCode, 304, 'INM occurrence 304')
  const inmHead = await s.inject({ method: 'HEAD', url: occ(jazz.id, THIRD), headers: { 'if-none-match': etag } })
  t.equal(inmHead.statusCode, 304, 'INM HEAD 304')
  const inmStar = await s.inject({ url: occ(jazz.id, THIRD), headers: { 'if-none-match': '*' } })
  t.equal(inmStar.statusCode, 304, 'INM * 304')
  const inmList = await s.inject({ url: occ(jazz.id, THIRD), headers: { 'if-none-match': `"nope", ${etag}` } })
  t.equal(inmList.statusCode, 304, 'INM list 304')
  const inmWeak = await s.inject({ url: occ(jazz.id, THIRD), headers: { 'if-none-match': `W/${etag}` } })
  t.equal(inmWeak.statusCode, 304, 'INM weak compare 304')
  const slash = await s.inject({ url: occ(jazz.id, THIRD, '/') })
  t.equal(slash.statusCode, 200, 'trailing slash occurrence')
  const list = await s.inject({ url: `${EVENTS}/${jazz.id}/occurrences/` })
  t.equal(list.statusCode, 200, 'trailing slash occurrences')
  const listHead = await s.inject({ method: 'HEAD', url: `${EVENTS}/${jazz.id}/occurrences` })
  t.equal(listHead.statusCode, 200, 'HEAD occurrences')
  t.equal(listHead.headers['x-total'], '8')
  const ch = await s.inject({ url: `${API}/changes/` })
  t.equal(ch.statusCode, 200, 'trailing slash changes')
  const chHead = await s.inject({ method: 'HEAD', url: `${API}/changes` })
  t.equal(chHead.statusCode, 200, 'HEAD changes')
  for (const [method, url] of [['DELETE', `${API}/changes`], ['PUT', `${EVENTS}/${jazz.id}/occurrences`], ['GET', occ(jazz.id, THIRD, '/split')], ['PATCH', occ(jazz.id, THIRD, '/split')], ['DELETE', `${EVENTS}/${jazz.id}/occurrences`]] as const) {
    const res = await s.inject({ method, url, headers: s.editor })
    expectError(t, res, 404, 'rest_no_route')
  }
  for (const url of [`${API}/changes`, `${EVENTS}/${jazz.id}/occurrences`, occ(jazz.id, THIRD), occ(jazz.id, THIRD, '/split'), `${API}/webhooks`]) {
    const res = await s.inject({ method: 'OPTIONS', url, headers: { origin: 'https://x.example', 'access-control-request-method': 'POST', 'access-control-request-headers': 'authorization, content-type, if-match, idempotency-key' } })
    t.equal(res.statusCode, 204, `preflight ${url}`)
    t.equal(res.headers['access-control-allow-origin'], '*')
    t.equal(res.headers['access-control-max-age'], '86400')
  }
  const abc = await s.inject({ url: `${EVENTS}/abc/occurrences` })
  expectError(t, abc, 404, 'rest_no_route')
  for (const bad of ['20261210T200000', '20261210', 'x', '20261210T200000Z%20', '2026-12-10T20:00:00Z', '20261310T200000Z', '020261210T200000Z']) {
    const res = await s.inject({ url: occ(jazz.id, bad) })
    t.equal(res.statusCode, 404, `malformed ${bad}`)
  }
  // If-Match stale on occurrence writes
  const stale = '"event-1-0-nope"'
  const p = await s.inject({ method: 'PATCH', url: occ(jazz.id, THIRD), headers: { ...s.editor, 'if-match': stale }, payload: { title: 'X' } })
  expectError(t, p, 412, 'rest-precondition-failed')
  const d = await s.inject({ method: 'DELETE', url: occ(jazz.id, THIRD), headers: { ...s.editor, 'if-match': stale } })
  expectError(t, d, 412, 'rest-precondition-failed')
  const sp = await s.inject({ method: 'POST', url: occ(jazz.id, THIRD, '/split'), headers: { ...s.editor, 'if-match': stale }, payload: {} })
  expectError(t, sp, 412, 'rest-precondition-failed')
  const good = await s.inject({ method: 'PATCH', url: occ(jazz.id, THIRD), headers: { ...s.editor, 'if-match': etag }, payload: { title: 'X' } })
  t.equal(good.statusCode, 200, 'if-match fresh')
  // No Last-Modified is sent, so If-Modified-Since has nothing to compare: the ETag decides (CONTRACT §5).
  t.equal(one.headers['last-modified'], undefined)
  t.equal((await s.inject({ url: occ(jazz.id, THIRD), headers: { 'if-modified-since': 'Wed, 01 Jan 2100 00:00:00 GMT' } })).statusCode, 200)
  // request id, nosniff, content-language
  const rid = await s.inject({ url: occ(jazz.id, THIRD), headers: { 'x-request-id': 'abc-123' } })
  t.equal(rid.headers['x-request-id'], 'abc-123')
  t.equal(rid.headers['x-content-type-options'], 'nosniff')
  t.equal(rid.headers['content-language'], 'en')
  const gz = await s.inject({ url: `${EVENTS}/${jazz.id}/occurrences`, headers: { 'accept-encoding': 'gzip' } })
  t.equal(gz.headers['content-encoding'], 'gzip', 'compressed occurrences')
  const gz2 = await s.inject({ url: `${API}/changes`, headers: { 'accept-encoding': 'br' } })
  t.equal(gz2.headers['content-encoding'], 'br', 'compressed changes')
})

t.test('languages on occurrence reads', async (t) => {
  const s = await setup(t)
  const jazz = await s.create(eventBody(WEEKLY))
  for (const lang of ['at', 'de', 'es', 'ch-fr', 'ch-de']) {
    const tr = await s.create(eventBody({ ...WEEKLY, title: `Jazz ${lang}`, translation_of: jazz.id, ml_language: lang }))
    const byId = await s.inject({ url: occ(jazz.id, THIRD, `?ml_language=${lang}`) })
    t.equal(byId.statusCode, 200, `occurrence in ${lang}`)
    t.equal(byId.json<Event>().id, tr.id, `the ${lang} version`)
    t.equal(byId.headers['content-language'], lang)
    const list = await s.inject({ url: `${EVENTS}/${jazz.id}/occurrences?ml_language=${lang}` })
    t.equal(list.statusCode, 200)
    t.equal(list.json<{ occurrences: Event[] }>().occurrences[0]?.id, tr.id, `list in ${lang}`)
    t.match(list.json<{ rest_url: string }>().rest_url, `ml_language=${lang}`)
    const missing = await s.inject({ url: occ(jazz.id, '20261210T210000Z', `?ml_language=${lang}`) })
    expectError(t, missing, 404, 'rest-event-occurrence-not-found')
    const en = await s.inject({ url: occ(jazz.id, '20261210T210000Z') })
    t.not(missing.json<{ message: string }>().message, en.json<{ message: string }>().message, `message in ${lang}`)
  }
  const bad = await s.inject({ url: occ(jazz.id, THIRD, '?ml_language=fr') })
  expectError(t, bad, 400, 'rest_invalid_param', ['ml_language'])
  const empty = await s.inject({ url: `${EVENTS}/${jazz.id}/occurrences?ml_language=` })
  expectError(t, empty, 400, 'rest_invalid_param', ['ml_language'])
  const other = await s.create(eventBody({ ...WEEKLY, title: 'Only English' }))
  const none = await s.inject({ url: occ(other.id, THIRD, '?ml_language=de') })
  expectError(t, none, 404, 'rest-event-not-found')
})

t.test('PHP-style arrays on /events and /changes', async (t) => {
  const s = await setup(t)
  const a = await s.category('Alpha')
  const b = await s.category('Beta')
  const e1 = await s.event('One', { categories: [a.id] })
  const e2 = await s.event('Two', { categories: [b.id] })
  await s.event('Three')
  for (const q of [`categories[]=${a.id}&categories[]=${b.id}`, `categories[0]=${a.id}&categories[1]=${b.id}`, `categories=${a.id},${b.id}`, `categories=${a.id}&categories=${b.id}`, `categories%5B%5D=${a.id}&categories%5B%5D=${b.id}`, `categories%5B0%5D=${a.id}&categories%5B1%5D=${b.id}`, `categories[]=alpha&categories[]=${b.id}`]) {
    const res = await s.list(`?${q}`)
    t.equal(res.statusCode, 200, q)
    t.same(res.json<{ events: Event[] }>().events.map((e) => e.id), [e1.id, e2.id], q)
  }
  for (const q of ['resource[]=events&resource[]=categories', 'resource[0]=events&resource[1]=categories', 'resource%5B%5D=events&resource%5B%5D=categories']) {
    const res = await s.inject({ url: `${API}/changes?${q}` })
    t.equal(res.statusCode, 200, q)
    t.same([...new Set(res.json<{ changes: Array<{ resource: string }> }>().changes.map((c) => c.resource))].sort(), ['categories', 'events'], q)
  }
  expectError(t, await s.list(`?categories[x]=${a.id}`), 400, 'rest_invalid_param', ['categories'])
  const st = await s.list(`?status[]=publish&status[]=draft`, s.editor)
  t.equal(st.statusCode, 200, 'status[]')
  const hs = await s.list('?hide_subsequent_recurrences=yes')
  t.equal(hs.statusCode, 400, 'boolean yes is 400')
  const hs1 = await s.list('?hide_subsequent_recurrences=1')
  t.equal(hs1.statusCode, 200, 'boolean 1')
})

t.test('occurrence links to venues and organizers trashed, deleted, restored; series venue changes', async (t) => {
  const s = await setup(t)
  const hall = await s.venue({ venue: 'Hall' })
  const cave = await s.venue({ venue: 'Cave' })
  const club = await s.organizer({ organizer: 'Club' })
  const jazz = await s.create(eventBody({ ...WEEKLY, venue: [cave.id] }))
  const p = await s.inject({ method: 'PATCH', url: occ(jazz.id, THIRD), headers: s.editor, payload: { venue: [hall.id], organizer: [club.id] } })
  t.equal(p.statusCode, 200)
  // the series' venue changes: the override keeps Hall, the others follow
  const other = await s.venue({ venue: 'Barn' })
  t.equal((await s.patch(jazz.id, { venue: [other.id] })).statusCode, 200)
  t.same((await s.inject({ url: occ(jazz.id, THIRD) })).json<Event>().venue.map((v) => v.id), [hall.id], 'override keeps its venue')
  t.same((await s.inject({ url: occ(jazz.id, FIRST) })).json<Event>().venue.map((v) => v.id), [other.id], 'others follow')
  const byVenue = await s.list(`?venue=${hall.id}&start_date=2026-11-01`)
  t.same(byVenue.json<{ events: Event[] }>().events.map((e) => e.occurrence?.id), [THIRD], 'venue filter finds the override')
  const byOther = await s.list(`?venue=${other.id}&start_date=2026-11-01`)
  t.equal(byOther.json<{ total: number }>().total, 7, 'the series venue on the other seven')
  const etag1 = (await s.inject({ url: occ(jazz.id, THIRD) })).headers.etag
  // trash Hall: left out everywhere, matches no filter
  t.equal((await s.inject({ method: 'DELETE', url: `${API}/venues/${hall.id}`, headers: s.editor })).statusCode, 200)
  const anon = await s.inject({ url: occ(jazz.id, THIRD) })
  t.same(anon.json<Event>().venue, [], 'trashed venue left out (anonymous)')
  t.not(anon.headers.etag, etag1, 'etag moved')
  const ed = await s.inject({ url: occ(jazz.id, THIRD), headers: s.editor })
  t.same(ed.json<Event>().venue, [], 'trashed venue left out (editor)')
  const inList = await s.list('?start_date=2026-11-01&per_page=50')
  const third = inList.json<{ events: Event[] }>().events.find((e) => e.occurrence?.id === THIRD)
  t.same(third?.venue, [], 'trashed venue left out in the list')
  const occList = await s.inject({ url: `${EVENTS}/${jazz.id}/occurrences?per_page=50` })
  t.same(occList.json<{ occurrences: Event[] }>().occurrences.find((e) => e.occurrence?.id === THIRD)?.venue, [], 'left out of the occurrences list')
  const filt = await s.list(`?venue=${hall.id}&start_date=2026-11-01`, s.editor)
  t.equal(filt.statusCode, 200)
  t.equal(filt.json<{ total: number }>().total, 0, 'a trashed venue matches no filter (editor)')
  const filtAnon = await s.list(`?venue=${hall.id}&start_date=2026-11-01`)
  t.equal(filtAnon.statusCode, 400, 'anonymous: a venue it cannot read is 400')
  const ical = await s.inject({ url: `${EVENTS}/${jazz.id}?ical=1` })
  t.notMatch(ical.body, /Hall/, 'no trashed venue in the feed')
  // restore brings it back
  t.equal((await s.inject({ method: 'PATCH', url: `${API}/venues/${hall.id}`, headers: s.editor, payload: { status: 'publish' } })).statusCode, 200)
  t.same((await s.inject({ url: occ(jazz.id, THIRD) })).json<Event>().venue.map((v) => v.id), [hall.id], 'restored venue back')
  t.same((await s.list(`?venue=${hall.id}&start_date=2026-11-01`)).json<{ events: Event[] }>().events.map((e) => e.occurrence?.id), [THIRD], 'and found by filter again')
  // organizer trashed then deleted for good
  t.equal((await s.inject({ method: 'DELETE', url: `${API}/organizers/${club.id}`, headers: s.editor })).statusCode, 200)
  t.same((await s.inject({ url: occ(jazz.id, THIRD) })).json<Event>().organizer, [], 'trashed organizer left out')
  t.equal((await s.inject({ method: 'DELETE', url: `${API}/organizers/${club.id}?force=true`, headers: s.editor })).statusCode, 200)
  t.same((await s.inject({ url: occ(jazz.id, THIRD) })).json<Event>().organizer, [], 'deleted organizer gone')
  const fo = await s.list(`?organizer=${club.id}`)
  t.equal(fo.statusCode, 400, 'deleted organizer unknown in filter')
  // delete Hall for good: the override's venue goes, the occurrence stays overridden only if other changes
  t.equal((await s.inject({ method: 'DELETE', url: `${API}/venues/${hall.id}?force=true`, headers: s.editor })).statusCode, 200)
  const after = (await s.inject({ url: occ(jazz.id, THIRD) })).json<Event>()
  t.same(after.venue, [], 'deleted venue gone')
  t.equal(after.occurrence?.overridden, true, 'still its own (the venue change stays: no venue)')
})

t.test('exdate of an overridden occurrence; the override does not come back', async (t) => {
  const s = await setup(t)
  const jazz = await s.create(eventBody(WEEKLY))
  t.equal((await s.inject({ method: 'PATCH', url: occ(jazz.id, THIRD), headers: s.editor, payload: { title: 'Special' } })).statusCode, 200)
  const ex = await s.patch(jazz.id, { recurrence: { rule: 'FREQ=WEEKLY;COUNT=8', exdates: ['2026-12-10 21:00:00'] } })
  t.equal(ex.statusCode, 200)
  expectError(t, await s.inject({ url: occ(jazz.id, THIRD) }), 404, 'rest-event-occurrence-not-found')
  t.equal((await s.inject({ url: `${EVENTS}/${jazz.id}/occurrences` })).json<{ total: number }>().total, 7)
  const back = await s.patch(jazz.id, { recurrence: { rule: 'FREQ=WEEKLY;COUNT=8', exdates: [] } })
  t.equal(back.statusCode, 200)
  const o = (await s.inject({ url: occ(jazz.id, THIRD) })).json<Event>()
  t.equal(o.title, 'Late Night Jazz', 'the override was dropped with the exdate')
  t.equal(o.occurrence?.overridden, false)
  // exdate via occurrence DELETE of an overridden one, then the same via series
  t.equal((await s.inject({ method: 'PATCH', url: occ(jazz.id, THIRD), headers: s.editor, payload: { start_date: '2026-12-11 21:00:00' } })).statusCode, 200)
  const del = await s.inject({ method: 'DELETE', url: occ(jazz.id, THIRD), headers: s.editor })
  t.equal(del.statusCode, 200)
  t.same(del.json<Event>().recurrence?.exdates, ['2026-12-10 21:00:00'], 'original start joins exdates, not the moved one')
  const list = await s.list('?start_date=2026-12-09&end_date=2026-12-12')
  t.equal(list.json<{ total: number }>().total, 0, 'the moved occurrence is gone from lists')
  const again = await s.inject({ method: 'DELETE', url: occ(jazz.id, THIRD), headers: s.editor })
  expectError(t, again, 404, 'rest-event-occurrence-not-found')
})

t.test('hide_subsequent_recurrences with filters', async (t) => {
  const s = await setup(t)
  const hall = await s.venue({ venue: 'Hall' })
  const jazz = await s.create(eventBody(WEEKLY))
  const single = await s.event('Single', { start_date: '2026-12-01 10:00:00', end_date: '2026-12-01 11:00:00' })
  t.equal((await s.inject({ method: 'PATCH', url: occ(jazz.id, THIRD), headers: s.editor, payload: { venue: [hall.id], title: 'Blue Special' } })).statusCode, 200)
  t.equal((await s.inject({ method: 'PATCH', url: occ(jazz.id, '20261224T200000Z'), headers: s.editor, payload: { title: 'Blue Xmas', start_date: '2026-11-20 21:00:00' } })).statusCode, 200)
  const q = (extra: string) => s.list(`?start_date=2026-11-01&hide_subsequent_recurrences=true${extra}`)
  const all = await q('')
  t.same(all.json<{ events: Event[] }>().events.map((e) => [e.id, e.occurrence?.id ?? null]), [[jazz.id, '20261224T200000Z'], [single.id, null]], 'first by start: the moved one')
  t.equal(all.json<{ total: number }>().total, 2)
  t.match(all.json<{ rest_url: string }>().rest_url, 'hide_subsequent_recurrences=true')
  const v = await q(`&venue=${hall.id}`)
  t.same(v.json<{ events: Event[] }>().events.map((e) => e.occurrence?.id), [THIRD], 'venue filter')
  const srch = await q('&search=blue')
  t.same(srch.json<{ events: Event[] }>().events.map((e) => e.occurrence?.id), ['20261224T200000Z'], 'search')
  const later = await s.list('?start_date=2026-12-05&hide_subsequent_recurrences=true')
  t.same(later.json<{ events: Event[] }>().events.map((e) => e.occurrence?.id), [THIRD], 'start_date after the first')
  const paged = await s.list('?start_date=2026-11-01&hide_subsequent_recurrences=1&per_page=1&page=2')
  t.equal(paged.statusCode, 200)
  t.same(paged.json<{ events: Event[] }>().events.map((e) => e.id), [single.id])
  t.equal(paged.headers['x-total'], '2')
  const past = await s.list('?start_date=2026-11-01&hide_subsequent_recurrences=1&per_page=1&page=3')
  expectError(t, past, 404, 'event-archive-page-not-found')
  const ical = await s.inject({ url: `${EVENTS}?start_date=2026-11-01&hide_subsequent_recurrences=true&ical=1` })
  t.equal(ical.statusCode, 200)
  t.equal(ical.headers['x-total'], '2', 'feed counts')
})

t.test('/changes cursors: malformed, future, time, across trash and restore, paging edge', async (t) => {
  const s = await setup(t)
  const first = await s.inject({ url: `${API}/changes` })
  const start = first.json<{ next_cursor: string }>().next_cursor
  for (const since of ['', 'abc', '2026-06-01', '1718000000', 'now ', 'NOW', '%00', 'djE6OTk5', 'v1:1']) {
    const res = await s.inject({ url: `${API}/changes?since=${encodeURIComponent(since)}` })
    t.equal(res.statusCode, 400, `since=${since}`)
  }
  const e = await s.event('Sync me')
  const v = await s.venue({ venue: 'Place' })
  const afterCreate = (await s.inject({ url: `${API}/changes?since=${start}` })).json<{ next_cursor: string; changes: Array<{ id: number; action: string; resource: string }> }>()
  t.same(afterCreate.changes.map((c) => [c.resource, c.action]), [['events', 'created'], ['venues', 'created']])
  const c1 = afterCreate.next_cursor
  t.equal((await s.remove(e.id)).statusCode, 200)
  const trashed = (await s.inject({ url: `${API}/changes?since=${c1}` })).json<{ next_cursor: string; changes: Array<{ id: number; action: string; record?: unknown }> }>()
  t.same(trashed.changes.map((c) => c.action), ['deleted'], 'anonymous sees the trash as deleted')
  t.equal(trashed.changes[0]?.record, undefined)
  const edTrashed = (await s.inject({ url: `${API}/changes?since=${c1}`, headers: s.editor })).json<{ changes: Array<{ id: number; action: string; record?: { status: string } }> }>()
  t.same(edTrashed.changes.map((c) => c.action), ['deleted'], 'a trashed event is no list\'s: deleted for an editor too')
  const c2 = trashed.next_cursor
  t.equal((await s.patch(e.id, { status: 'publish' })).statusCode, 200)
  const restored = (await s.inject({ url: `${API}/changes?since=${c2}` })).json<{ changes: Array<{ id: number; action: string; record?: { status: string } }> }>()
  t.same(restored.changes.map((c) => c.action), ['created'], 'restored: created again for anonymous')
  const across = (await s.inject({ url: `${API}/changes?since=${c1}` })).json<{ changes: Array<{ id: number; action: string }> }>()
  t.same(across.changes.map((c) => c.action), ['updated'], 'across trash and restore: updated')
  const fromStart = (await s.inject({ url: `${API}/changes?since=${start}` })).json<{ changes: Array<{ id: number; action: string; resource: string }> }>()
  t.same(fromStart.changes.map((c) => [c.resource, c.action]), [['venues', 'created'], ['events', 'created']], 'from before the create: created')
  // paging at the edge: per_page equal to the number of changes
  const exact = (await s.inject({ url: `${API}/changes?since=${start}&per_page=2` })).json<{ has_more: boolean; next_cursor: string; changes: unknown[] }>()
  t.equal(exact.changes.length, 2)
  t.equal(exact.has_more, false, 'exactly a page: no more')
  const tail = (await s.inject({ url: `${API}/changes?since=${exact.next_cursor}` })).json<{ has_more: boolean; next_cursor: string; changes: unknown[] }>()
  t.same(tail.changes, [])
  t.equal(tail.next_cursor, exact.next_cursor, 'nothing changed: the same cursor')
  const one = (await s.inject({ url: `${API}/changes?since=${start}&per_page=1` })).json<{ has_more: boolean; next_cursor: string; changes: unknown[] }>()
  t.equal(one.has_more, true)
  const two = (await s.inject({ url: `${API}/changes?since=${one.next_cursor}&per_page=1` })).json<{ has_more: boolean; next_cursor: string; changes: unknown[] }>()
  t.equal(two.changes.length, 1)
  t.equal(two.has_more, false)
  for (const pp of ['0', '-1', 'x', '1.5', '']) {
    const res = await s.inject({ url: `${API}/changes?per_page=${pp}` })
    t.equal(res.statusCode, 400, `per_page=${pp}`)
  }
  const big = await s.inject({ url: `${API}/changes?per_page=100000` })
  t.equal(big.statusCode, 200, 'clamped')
  const nowRes = (await s.inject({ url: `${API}/changes?since=now` })).json<{ changes: unknown[]; next_cursor: string; has_more: boolean }>()
  t.same(nowRes.changes, [])
  t.equal(nowRes.has_more, false)
  const res2 = await s.inject({ url: `${API}/changes?resource=events,bogus` })
  t.equal(res2.statusCode, 400)
  const lang = await s.inject({ url: `${API}/changes?ml_language=xx` })
  t.equal(lang.statusCode, 400)
  const huge = await s.inject({ url: `${API}/changes?since=${'A'.repeat(5000)}` })
  t.equal(huge.statusCode, 400)
})

t.test('occurrence reads of protected, draft, trashed series; paging past the end', async (t) => {
  const s = await setup(t)
  const pw = await s.create(eventBody(WEEKLY))
  t.equal((await s.patch(pw.id, { password: 'secret' })).statusCode, 200)
  expectError(t, await s.inject({ url: occ(pw.id, THIRD) }), 403, 'event-password-protected')
  expectError(t, await s.inject({ url: `${EVENTS}/${pw.id}/occurrences` }), 403, 'event-password-protected')
  t.equal((await s.inject({ url: occ(pw.id, THIRD, '?password=secret') })).statusCode, 200)
  const ol = await s.inject({ url: `${EVENTS}/${pw.id}/occurrences?password=secret&per_page=2` })
  t.equal(ol.statusCode, 200)
  t.notMatch(ol.json<{ rest_url: string }>().rest_url, /secret/, 'no password in rest_url')
  t.notMatch(String(ol.headers.link), /secret/, 'no password in Link')
  t.notMatch(ol.json<{ next_rest_url?: string }>().next_rest_url ?? '', /secret/, 'no password in next')
  const inList = await s.list('?start_date=2026-11-01&per_page=1')
  t.equal(inList.json<{ events: Event[] }>().events[0]?.description, null)
  const draft = await s.create(eventBody({ ...WEEKLY, status: 'draft' }))
  expectError(t, await s.inject({ url: occ(draft.id, THIRD) }), 403, 'event-not-accessible')
  expectError(t, await s.inject({ url: `${EVENTS}/${draft.id}/occurrences` }), 403, 'event-not-accessible')
  t.equal((await s.inject({ url: occ(draft.id, THIRD), headers: s.editor })).statusCode, 200)
  const gone = await s.create(eventBody(WEEKLY))
  t.equal((await s.remove(gone.id)).statusCode, 200)
  expectError(t, await s.inject({ url: occ(gone.id, THIRD) }), 410, 'event-no-longer-available')
  expectError(t, await s.inject({ url: `${EVENTS}/${gone.id}/occurrences` }), 410, 'event-no-longer-available')
  expectError(t, await s.inject({ method: 'PATCH', url: occ(gone.id, THIRD), headers: s.editor, payload: { title: 'x' } }), 410, 'event-is-in-trash')
  expectError(t, await s.inject({ method: 'POST', url: occ(gone.id, THIRD, '/split'), headers: s.editor, payload: {} }), 410, 'event-is-in-trash')
  expectError(t, await s.inject({ method: 'DELETE', url: occ(gone.id, THIRD), headers: s.editor }), 410, 'event-is-in-trash')
  const jazz = await s.create(eventBody(WEEKLY))
  const past = await s.inject({ url: `${EVENTS}/${jazz.id}/occurrences?per_page=5&page=3` })
  expectError(t, past, 404, 'event-archive-page-not-found')
  const empty = await s.inject({ url: `${EVENTS}/${jazz.id}/occurrences?start_date=2030-01-01` })
  t.equal(empty.statusCode, 200)
  t.equal(empty.json<{ total_pages: number }>().total_pages, 0)
  for (const q of ['page=0', 'per_page=0', 'page=x', 'start_date=garbage', 'strict_dates=maybe']) {
    expectError(t, await s.inject({ url: `${EVENTS}/${jazz.id}/occurrences?${q}` }), 400, 'rest_invalid_param')
  }
  const clamp = await s.inject({ url: `${EVENTS}/${jazz.id}/occurrences?per_page=500` })
  t.match(clamp.json<{ rest_url: string }>().rest_url, 'per_page=50')
  expectError(t, await s.inject({ url: `${EVENTS}/999999/occurrences` }), 404, 'rest-event-not-found')
  expectError(t, await s.inject({ url: occ(999999, THIRD) }), 404, 'rest-event-not-found')
})

t.test('odd queries, health, form bodies on occurrence writes', async (t) => {
  const s = await setup(t)
  const hall = await s.venue({ venue: 'Hall' })
  const barn = await s.venue({ venue: 'Barn' })
  const jazz = await s.create(eventBody(WEEKLY))
  // A scalar sent twice or in brackets is never silently narrowed: 400 naming it (CONTRACT §1).
  for (const [q, name] of [['per_page=10&per_page=20', 'per_page'], ['page=1&page=2', 'page'], ['ml_language=en&ml_language=de', 'ml_language'], ['ml_language[]=en', 'ml_language'], ['start_date[]=2026-01-01', 'start_date'], ['page=1e3', 'page'], ['per_page=+5', 'per_page'], ['page= 1', 'page']] as const) {
    expectError(t, await s.inject({ url: `${EVENTS}/${jazz.id}/occurrences?${q}` }), 400, 'rest_invalid_param', [name])
    expectError(t, await s.list(`?${q}`), 400, 'rest_invalid_param', [name])
  }
  const clamped = await s.inject({ url: `${EVENTS}/${jazz.id}/occurrences?per_page=99999999999999999999` })
  t.equal(clamped.statusCode, 200, 'a huge per_page is clamped')
  t.match(clamped.json<{ rest_url: string }>().rest_url, 'per_page=50')
  expectError(t, await s.inject({ url: `${EVENTS}/${jazz.id}/occurrences?page=99999999999999999999` }), 404, 'event-archive-page-not-found')
  expectError(t, await s.inject({ url: `${EVENTS}/99999999999999999999/occurrences` }), 404, 'rest-event-not-found')
  expectError(t, await s.inject({ url: `${EVENTS}/99999999999999999999/occurrences/${THIRD}` }), 404, 'rest-event-not-found')
  t.equal((await s.inject({ url: `${EVENTS}/${jazz.id}/occurrences?x=${'a'.repeat(20000)}` })).statusCode, 200, 'an unknown 20 kB parameter is ignored')
  const long = await s.inject({ url: `${EVENTS}/${jazz.id}/occurrences`, headers: { 'x-request-id': 'x'.repeat(300) } })
  t.not(long.headers['x-request-id'], 'x'.repeat(300), 'a long request id is not reused')
  t.ok(String(long.headers['x-request-id']).length > 0)
  for (const u of ['/healthz', '/readyz', '/healthz/', '/readyz/']) {
    for (const m of ['GET', 'HEAD'] as const) {
      const res = await s.app.inject({ method: m, url: u })
      t.equal(res.statusCode, 200, `${m} ${u}`)
      t.ok(res.headers['x-request-id'], 'request id')
      t.equal(res.headers['x-content-type-options'], 'nosniff')
    }
    for (const m of ['POST', 'DELETE'] as const) expectError(t, await s.inject({ method: m, url: u }), 404, 'rest_no_route')
  }
  // form bodies on an occurrence
  const form = await s.inject({ method: 'PATCH', url: occ(jazz.id, THIRD), headers: { ...s.editor, 'content-type': 'application/x-www-form-urlencoded' }, payload: `venue[0]=${hall.id}&venue[1]=${barn.id}&title=Form` })
  t.equal(form.statusCode, 200, form.body.slice(0, 300))
  t.same(form.json<Event>().venue.map((v) => v.id), [hall.id, barn.id])
  const form2 = await s.inject({ method: 'PATCH', url: occ(jazz.id, THIRD), headers: { ...s.editor, 'content-type': 'application/x-www-form-urlencoded' }, payload: 'organizer[0][organizer]=Band&organizer[1][organizer]=Crew&venue[venue]=Tent&venue[city]=Bern' })
  t.equal(form2.statusCode, 200, form2.body.slice(0, 300))
  t.same(form2.json<Event>().organizer.map((o) => o.organizer), ['Band', 'Crew'])
  t.same(form2.json<Event>().venue.map((v) => v.venue), ['Tent'])
  const form3 = await s.inject({ method: 'POST', url: occ(jazz.id, '20261224T200000Z', '/split'), headers: { ...s.editor, 'content-type': 'application/x-www-form-urlencoded' }, payload: `title=Split&venue[]=${hall.id}&recurrence[rule]=FREQ%3DWEEKLY%3BCOUNT%3D2` })
  t.equal(form3.statusCode, 201, form3.body.slice(0, 300))
  t.strictSame(form3.json<Event>().recurrence, { rule: 'FREQ=WEEKLY;COUNT=2', rdates: [], exdates: [] })
  t.same(form3.json<Event>().venue.map((v) => v.id), [hall.id])
  const form4 = await s.inject({ method: 'PATCH', url: occ(jazz.id, THIRD), headers: { ...s.editor, 'content-type': 'application/x-www-form-urlencoded' }, payload: 'venue=' })
  t.equal(form4.statusCode, 200, form4.body.slice(0, 300))
  t.same(form4.json<Event>().venue, [], 'venue= empty: no venue on this occurrence')
  expectError(t, await s.inject({ method: 'PATCH', url: occ(jazz.id, THIRD), headers: { ...s.editor, 'content-type': 'application/x-www-form-urlencoded' }, payload: 'title[x]=1' }), 400, 'rest_invalid_param', ['title'])
  expectError(t, await s.inject({ method: 'PATCH', url: occ(jazz.id, THIRD), headers: { ...s.editor, 'content-type': 'text/plain' }, payload: 'x' }), 415, 'rest_unsupported_media_type')
  expectError(t, await s.inject({ method: 'PATCH', url: occ(jazz.id, THIRD), headers: { 'content-type': 'text/plain' }, payload: 'x' }), 401, 'rest_forbidden')
  expectError(t, await s.inject({ method: 'POST', url: occ(jazz.id, THIRD, '/split'), headers: { ...s.editor, 'content-type': 'application/json' }, payload: '{' }), 400, 'rest_invalid_json')
  const head = await s.inject({ method: 'HEAD', url: `${EVENTS}/${jazz.id}?ical=1` })
  t.equal(head.statusCode, 200)
  t.match(String(head.headers['content-type']), /^text\/calendar/)
  t.equal(head.body, '')
  // A split's If-Match is the occurrence's ETag (the spec says so), not the series'.
  const seriesTag = String((await s.get(jazz.id)).headers.etag)
  expectError(t, await s.inject({ method: 'POST', url: occ(jazz.id, '20261217T200000Z', '/split'), headers: { ...s.editor, 'if-match': seriesTag }, payload: {} }), 412, 'rest-precondition-failed')
  const occTag = String((await s.inject({ url: occ(jazz.id, '20261217T200000Z') })).headers.etag)
  t.equal((await s.inject({ method: 'POST', url: occ(jazz.id, '20261217T200000Z', '/split'), headers: { ...s.editor, 'if-match': occTag }, payload: {} })).statusCode, 201)
})

t.test('languages in occurrence write bodies; split of a translation', async (t) => {
  const s = await setup(t)
  const jazz = await s.create(eventBody(WEEKLY))
  const de = await s.create(eventBody({ ...WEEKLY, title: 'Jazz spät', translation_of: jazz.id, ml_language: 'de' }))
  const body = await s.inject({ method: 'PATCH', url: occ(jazz.id, THIRD), headers: s.editor, payload: { ml_language: 'de', title: 'Sonder' } })
  t.equal(body.statusCode, 200)
  t.equal(body.json<Event>().id, de.id, 'the de version changed')
  t.equal(body.headers['content-language'], 'de')
  t.equal((await s.inject({ url: occ(jazz.id, THIRD) })).json<Event>().title, 'Late Night Jazz', 'en untouched')
  const q = await s.inject({ method: 'PATCH', url: occ(jazz.id, THIRD, '?ml_language=de'), headers: s.editor, payload: { title: 'Sonder 2' } })
  t.equal(q.statusCode, 200)
  t.equal(q.json<Event>().id, de.id)
  const bad = await s.inject({ method: 'PATCH', url: occ(jazz.id, THIRD), headers: s.editor, payload: { ml_language: 'fr', title: 'x' } })
  expectError(t, bad, 400, 'rest_invalid_param', ['ml_language'])
  const del = await s.inject({ method: 'DELETE', url: occ(jazz.id, '20261217T200000Z', '?ml_language=de'), headers: s.editor })
  t.equal(del.statusCode, 200)
  t.equal(del.json<Event>().id, de.id, 'delete in de')
  t.equal((await s.inject({ url: occ(jazz.id, '20261217T200000Z') })).statusCode, 200, 'en occurrence stays')
  const sp = await s.inject({ method: 'POST', url: occ(jazz.id, '20261224T200000Z', '/split'), headers: s.editor, payload: { ml_language: 'de' } })
  t.equal(sp.statusCode, 201)
  const made = sp.json<Event>()
  t.equal(made.ml_language, 'de')
  t.strictSame(made.translations, { de: made.id })
  t.equal((await s.inject({ url: `${EVENTS}/${jazz.id}/occurrences` })).json<{ total: number }>().total, 8, 'en series untouched')
  const spEn = await s.inject({ method: 'POST', url: occ(jazz.id, '20261224T200000Z', '/split'), headers: s.editor, payload: {} })
  t.equal(spEn.statusCode, 201)
  t.equal(spEn.json<Event>().ml_language, 'en')
})

t.test('CORS preflights are never rate limited nor counted: a browser client behind a shared address keeps its preflights (CONTRACT §1, §16)', async (t) => {
  const s = await setup(t, { config: { rateLimit: 3 } })
  const jazz = await s.create(eventBody(WEEKLY))
  const urls = [occ(jazz.id, THIRD), `${EVENTS}/${jazz.id}/occurrences`, `${API}/changes`, occ(jazz.id, THIRD, '/split'), `${API}/webhooks`, EVENTS]
  const preflight = { origin: 'https://app.example', 'access-control-request-method': 'PATCH', 'access-control-request-headers': 'authorization, content-type' }
  for (const url of urls) {
    for (let i = 0; i < 4; i++) {
      const res = await s.inject({ method: 'OPTIONS', url, headers: preflight, remoteAddress: '10.0.0.9' })
      t.equal(res.statusCode, 204, `preflight ${i + 1} of ${url}`)
      t.equal(res.headers['access-control-allow-origin'], '*')
    }
  }
  const statuses: number[] = []
  for (let i = 0; i < 4; i++) statuses.push((await s.inject({ url: urls[i % 3] ?? '', remoteAddress: '10.0.0.9' })).statusCode)
  t.same(statuses, [200, 200, 200, 429], 'the address\'s whole budget is left for its requests; the fourth is limited')
})

t.test('iCalendar of a split series', async (t) => {
  const s = await setup(t)
  const jazz = await s.create(eventBody(WEEKLY))
  t.equal((await s.inject({ method: 'PATCH', url: occ(jazz.id, '20270107T200000Z'), headers: s.editor, payload: { title: 'New Year' } })).statusCode, 200)
  t.equal((await s.inject({ method: 'PATCH', url: occ(jazz.id, THIRD), headers: s.editor, payload: { title: 'Early' } })).statusCode, 200)
  const before = await s.inject({ url: `${EVENTS}/${jazz.id}?ical=1` })
  const sp = await s.inject({ method: 'POST', url: occ(jazz.id, '20261224T200000Z', '/split'), headers: s.editor, payload: {} })
  t.equal(sp.statusCode, 201)
  const made = sp.json<Event>()
  const a = await s.inject({ url: `${EVENTS}/${jazz.id}?ical=1` })
  const b = await s.inject({ url: `${EVENTS}/${made.id}?ical=1` })
  const feed = await s.inject({ url: `${EVENTS}?start_date=2026-11-01&ical=1` })
  t.not(a.headers.etag, before.headers.etag)
  const lines = (text: string) => text.slice(text.indexOf('BEGIN:VEVENT')).split('\r\n').filter((l) => /^(UID|RRULE|RECURRENCE-ID|SUMMARY|DTSTART;)/.test(l))
  const first = [`UID:${jazz.id}@calendar.test`, 'DTSTART;TZID=Europe/Zurich:20261126T210000', 'SUMMARY:Late Night Jazz', 'RRULE:FREQ=WEEKLY;COUNT=4',
    `UID:${jazz.id}@calendar.test`, 'DTSTART;TZID=Europe/Zurich:20261210T210000', 'SUMMARY:Early', 'RECURRENCE-ID;TZID=Europe/Zurich:20261210T210000']
  const second = [`UID:${made.id}@calendar.test`, 'DTSTART;TZID=Europe/Zurich:20261224T210000', 'SUMMARY:Late Night Jazz', 'RRULE:FREQ=WEEKLY;COUNT=4',
    `UID:${made.id}@calendar.test`, 'DTSTART;TZID=Europe/Zurich:20270107T210000', 'SUMMARY:New Year', 'RECURRENCE-ID;TZID=Europe/Zurich:20270107T210000']
  t.strictSame(lines(a.body), first, 'the first series ends before the split, keeping its own change')
  t.strictSame(lines(b.body), second, 'the new series, its own UID, the moved change under it')
  t.strictSame(lines(feed.body), [...first, ...second], 'the list feed: each series once with its changes')
  t.equal(feed.headers['x-total'], '2')
})

t.test('a browser client may send X-Request-Id, which the server reuses (CONTRACT §16): every preflight allows it', async (t) => {
  const s = await setup(t)
  const jazz = await s.create(eventBody(WEEKLY))
  for (const url of [occ(jazz.id, THIRD), `${EVENTS}/${jazz.id}/occurrences`, `${API}/changes`, EVENTS, `${API}/webhooks`]) {
    const res = await s.inject({ method: 'OPTIONS', url, headers: { origin: 'https://app.example', 'access-control-request-method': 'GET', 'access-control-request-headers': 'x-request-id' } })
    t.equal(res.statusCode, 204)
    const allowed = String(res.headers['access-control-allow-headers']).split(',').map((h) => h.trim().toLowerCase())
    t.ok(allowed.includes('x-request-id'), `${url}: allows X-Request-Id`)
  }
  const read = await s.inject({ url: occ(jazz.id, THIRD), headers: { origin: 'https://app.example', 'x-request-id': 'page-42.load' } })
  t.equal(read.headers['x-request-id'], 'page-42.load', 'and reuses it')
})

t.test('a PHP client\'s http_build_query bodies and queries: indexed and nested brackets, + for spaces, 1/0 booleans', async (t) => {
  const s = await setup(t)
  const form = { ...s.editor, 'content-type': 'application/x-www-form-urlencoded' }
  const body = 'title=Late+Night+Jazz&timezone=Europe%2FZurich&start_date=2026-11-26+21%3A00%3A00&end_date=2026-11-26+23%3A30%3A00&recurrence%5Brule%5D=FREQ%3DWEEKLY%3BCOUNT%3D4&recurrence%5Brdates%5D%5B0%5D=2026-12-01+21%3A00%3A00&recurrence%5Brdates%5D%5B1%5D=2026-12-02+21%3A00%3A00&recurrence%5Bexdates%5D%5B0%5D=2026-12-03+21%3A00%3A00&featured=1&sticky=0'
  const res = await s.inject({ method: 'POST', url: EVENTS, headers: form, payload: body })
  t.equal(res.statusCode, 201)
  const e = res.json<Event>()
  t.strictSame(e.recurrence, { rule: 'FREQ=WEEKLY;COUNT=4', rdates: ['2026-12-01 21:00:00', '2026-12-02 21:00:00'], exdates: ['2026-12-03 21:00:00'] })
  t.strictSame([e.title, e.featured, e.sticky], ['Late Night Jazz', true, false])
  const occs = await s.inject({ url: `${EVENTS}/${e.id}/occurrences?start_date=2026-12-01+22%3A00%3A00&strict_dates=1&per_page=2` })
  t.equal(occs.statusCode, 200)
  t.same(occs.json<{ occurrences: Event[] }>().occurrences.map((o) => o.occurrence?.id), ['20261202T200000Z', '20261210T200000Z'])
  const nested = await s.inject({ method: 'PATCH', url: occ(e.id, '20261217T200000Z'), headers: form, payload: 'venue%5B0%5D%5Bvenue%5D=Tent&venue%5B0%5D%5Bcity%5D=Bern&organizer%5B0%5D%5Borganizer%5D=Band&cost=25' })
  t.equal(nested.statusCode, 200)
  t.same(nested.json<Event>().venue.map((v) => [v.venue, v.city]), [['Tent', 'Bern']])
  t.same(nested.json<Event>().organizer.map((o) => o.organizer), ['Band'])
  t.equal(nested.json<Event>().cost, '25')
  t.equal((await s.list('?search=late+night&start_date=2026-11-01')).json<{ total: number }>().total, 5, '+ is a space')
  const ch = await s.inject({ url: `${API}/changes?resource%5B0%5D=venues` })
  t.same(ch.json<{ changes: Array<{ resource: string }> }>().changes.map((c) => c.resource), ['venues'])
  const sp = await s.inject({ method: 'POST', url: occ(e.id, '20261210T200000Z', '/split'), headers: form, payload: 'title=Winter&tags=' })
  t.equal(sp.statusCode, 201)
  t.equal(sp.json<Event>().title, 'Winter')
})

t.test('an empty path segment where an occurrence id or a slug goes is no route: 404 rest_no_route, before authentication (CONTRACT §1, §10)', async (t) => {
  const s = await setup(t)
  const jazz = await s.create(eventBody(WEEKLY))
  const paths = [`${EVENTS}/${jazz.id}/occurrences//`, `${EVENTS}/${jazz.id}/occurrences//split`, `${EVENTS}/by-slug//`, `${API}/venues/by-slug//`, `${API}/organizers/by-slug//`]
  for (const url of paths) {
    for (const method of ['GET', 'HEAD', 'POST', 'PATCH', 'PUT', 'DELETE'] as const) {
      for (const headers of [s.editor, {}]) {
        const res = await s.inject({ method, url, headers, ...(method === 'GET' || method === 'HEAD' || method === 'DELETE' ? {} : { payload: {} }) })
        t.equal(res.statusCode, 404, `${method} ${url}`)
        if (method !== 'HEAD') t.equal(res.json<{ code: string }>().code, 'rest_no_route', `${method} ${url}`)
      }
    }
  }
  for (const url of paths) expectError(t, await s.inject({ method: 'OPTIONS', url }), 404, 'rest_no_route')
  // The segments themselves still route: a slug or occurrence id that matches nothing is that resource's 404.
  expectError(t, await s.inject({ url: `${EVENTS}/by-slug/nope` }), 404, 'rest-event-not-found')
  expectError(t, await s.inject({ url: `${EVENTS}/by-slug/a%0Ab` }), 404, 'rest-event-not-found')
  expectError(t, await s.inject({ url: `${API}/venues/by-slug/a%2Fb/` }), 404, 'rest-venue-not-found')
  expectError(t, await s.inject({ url: occ(jazz.id, 'x%0Ay') }), 404, 'rest-event-occurrence-not-found')
  t.equal((await s.inject({ url: `${EVENTS}/by-slug/${jazz.slug}/` })).statusCode, 200)
  t.equal((await s.inject({ url: occ(jazz.id, THIRD, '/') })).statusCode, 200)
})

t.test('If-Match forms on an occurrence (*, a list, weak never matches); HEAD and OPTIONS with a trailing slash; modified_after sees an occurrence\'s change', async (t) => {
  const s = await setup(t, { clock: (() => { let n = Date.parse('2026-06-15T12:00:00Z'); return () => new Date(n += 1000) })() })
  const jazz = await s.create(eventBody(WEEKLY))
  const tagOf = async () => String((await s.inject({ url: occ(jazz.id, THIRD) })).headers.etag)
  const first = await tagOf()
  t.equal((await s.inject({ method: 'PATCH', url: occ(jazz.id, THIRD), headers: { ...s.editor, 'if-match': '*' }, payload: { title: 'A' } })).statusCode, 200, 'If-Match: *')
  t.equal((await s.inject({ method: 'PATCH', url: occ(jazz.id, THIRD), headers: { ...s.editor, 'if-match': `"x", ${await tagOf()}` }, payload: { title: 'B' } })).statusCode, 200, 'a list holding the current ETag')
  expectError(t, await s.inject({ method: 'PATCH', url: occ(jazz.id, THIRD), headers: { ...s.editor, 'if-match': `W/${await tagOf()}` }, payload: { title: 'C' } }), 412, 'rest-precondition-failed')
  expectError(t, await s.inject({ method: 'PATCH', url: occ(jazz.id, THIRD), headers: { ...s.editor, 'if-match': first }, payload: { title: 'C' } }), 412, 'rest-precondition-failed')
  expectError(t, await s.inject({ method: 'PATCH', url: occ(jazz.id, '20261211T200000Z'), headers: { ...s.editor, 'if-match': '*' }, payload: { title: 'C' } }), 404, 'rest-event-occurrence-not-found')
  t.equal((await s.inject({ method: 'OPTIONS', url: `${API}/changes/` })).statusCode, 204)
  t.equal((await s.inject({ method: 'OPTIONS', url: `${EVENTS}/${jazz.id}/occurrences/` })).statusCode, 204)
  t.equal((await s.inject({ method: 'HEAD', url: occ(jazz.id, THIRD, '/') })).statusCode, 200)
  expectError(t, await s.inject({ url: `${EVENTS}//${jazz.id}/occurrences` }), 404, 'rest_no_route')
  expectError(t, await s.inject({ url: `${EVENTS}/${jazz.id}/Occurrences` }), 404, 'rest_no_route')
  expectError(t, await s.inject({ url: occ(jazz.id, THIRD.toLowerCase()) }), 404, 'rest-event-occurrence-not-found')
  expectError(t, await s.inject({ url: `${EVENTS}/0/occurrences` }), 404, 'rest-event-not-found')
  const mark = (await s.get(jazz.id)).json<Event>().modified_utc.replace(' ', 'T') + 'Z'
  t.equal((await s.list(`?start_date=2026-11-01&modified_after=${mark}`)).json<{ total: number }>().total, 0)
  t.equal((await s.inject({ method: 'PATCH', url: occ(jazz.id, '20261217T200000Z'), headers: s.editor, payload: { title: 'Late' } })).statusCode, 200)
  const after = await s.list(`?start_date=2026-11-01&per_page=50&modified_after=${mark}`)
  t.equal(after.json<{ total: number }>().total, 8, 'every occurrence of the changed series')
})

t.test('a single event as its one occurrence; term counts count events; include lists wholes; /changes in a language; a compressed feed', async (t) => {
  const s = await setup(t)
  const cat = await s.category('Music')
  const single = await s.event('Solo', { categories: [cat.id] })
  const jazz = await s.create(eventBody({ ...WEEKLY, categories: [cat.id] }))
  const list = await s.inject({ url: `${EVENTS}/${single.id}/occurrences` })
  t.equal(list.json<{ total: number }>().total, 1, 'a single event has one occurrence')
  const only = '20260701T180000Z'
  t.equal(list.json<{ occurrences: Event[] }>().occurrences[0]?.occurrence?.id, only)
  t.equal((await s.inject({ url: occ(single.id, only) })).statusCode, 200)
  expectError(t, await s.inject({ method: 'PATCH', url: occ(single.id, only), headers: s.editor, payload: { title: 'x' } }), 400, 'rest_invalid_param', ['occurrence'])
  expectError(t, await s.inject({ method: 'POST', url: occ(single.id, only, '/split'), headers: s.editor, payload: {} }), 400, 'rest_invalid_param', ['occurrence'])
  // The spec: cancelling the only occurrence left is 400 naming recurrence.
  expectError(t, await s.inject({ method: 'DELETE', url: occ(single.id, only), headers: s.editor }), 400, 'rest_invalid_param', ['recurrence'])
  t.equal((await s.inject({ url: `${API}/categories/${cat.id}` })).json<{ count: number }>().count, 2, 'a series counts once')
  const inc = await s.list(`?include=${jazz.id},${single.id}&hide_subsequent_recurrences=true`)
  t.same(inc.json<{ events: Event[] }>().events.map((e) => e.id).sort((x, y) => x - y), [single.id, jazz.id], 'each named event once')
  t.same(inc.json<{ events: Event[] }>().events.map((e) => e.occurrence), [null, null], 'as wholes')
  t.equal(inc.json<{ total: number }>().total, 2)
  const de = await s.create(eventBody({ ...WEEKLY, title: 'Jazz de', translation_of: jazz.id, ml_language: 'de' }))
  const bad = await s.inject({ url: `${API}/changes?ml_language=de&since=bogus` })
  const en = await s.inject({ url: `${API}/changes?since=bogus` })
  expectError(t, bad, 400, 'rest_invalid_param', ['since'])
  t.equal(bad.headers['content-language'], 'de')
  t.not(bad.json<{ message: string }>().message, en.json<{ message: string }>().message, 'told in German')
  t.same((await s.inject({ url: `${API}/changes?ml_language=de` })).json<{ changes: Array<{ id: number }> }>().changes.map((c) => c.id), [de.id])
  const br = await s.inject({ url: `${EVENTS}/${jazz.id}?ical=1`, headers: { 'accept-encoding': 'br' } })
  t.equal(br.headers['content-encoding'], 'br', 'a feed over 1 kB is compressed')
  t.match(br.body, /^BEGIN:VCALENDAR\r\n/)
})
