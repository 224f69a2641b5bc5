/**
 * Filters and links never reveal what the caller cannot read (CONTRACT §6, issue 21 items 6 and 12):
 * `event`/`post` on venue, organizer and term lists with an event the caller cannot read match nothing;
 * `venue`/`organizer` on the event list with a record the caller cannot read are 400 like an unknown id;
 * an event write linking a venue or organizer the caller cannot read is 400 naming the field, and
 * writes nothing.
 */
import t from 'tap'
import { API } from './helpers/build.js'
import { expectError } from './helpers/errors.js'
import { setup, type Event } from './helpers/events.js'

type List = { total: number }

t.test('item 6: filters on records the caller cannot read', async (t) => {
  const s = await setup(t)
  const contributor = await s.auth('contributor')
  await s.category('Rock') // 1
  await s.tag('Loud') // 2
  await s.venue({ venue: 'Open Hall' }) // venue 1, published
  await s.venue({ venue: 'Secret Hall', status: 'draft' }) // venue 2, draft
  await s.organizer({ organizer: 'Secret Club', status: 'draft' }) // organizer 1, draft
  await s.organizer({ organizer: 'Open Club' }) // organizer 2, published
  // The draft event links published records too: a filter on it must not reveal those links.
  await s.event('Draft night', { status: 'draft', venue: [1, 2], organizer: [1, 2], categories: [1], tags: [2] }) // event 1
  await s.event('Public night', { venue: [1, 2], organizer: [1] }) // event 2
  t.equal((await s.get(1)).statusCode, 403, 'the draft event is 403 by id')
  for (const path of ['venues?event=1', 'organizers?event=1', 'categories?event=1&hide_empty=false', 'categories?post=1&hide_empty=false', 'tags?post=1&hide_empty=false']) {
    const anonymous = await s.inject({ url: `${API}/${path}` })
    t.equal(anonymous.statusCode, 200, `${path}: 200`)
    t.equal(anonymous.json<List>().total, 0, `${path}: anonymous sees nothing`)
    const other = await s.inject({ url: `${API}/${path}`, headers: contributor })
    t.equal(other.json<List>().total, 0, `${path}: another contributor sees nothing`)
    const editor = await s.inject({ url: `${API}/${path}`, headers: s.editor })
    t.ok(editor.json<List>().total > 0, `${path}: the editor sees the links`)
  }
  // The trashed event: 410 for everyone, so its links are hidden too, even from its editor.
  await s.remove(1)
  const trashed = await s.inject({ url: `${API}/venues?event=1`, headers: s.editor })
  t.equal(trashed.json<List>().total, 0, 'a trashed event matches nothing')
  // The event list: a venue or organizer the caller cannot read is 400 like an unknown id.
  expectError(t, await s.list('?venue=2'), 400, 'rest_invalid_param', ['venue'])
  expectError(t, await s.list('?venue=1,2'), 400, 'rest_invalid_param', ['venue'])
  expectError(t, await s.list('?organizer=1'), 400, 'rest_invalid_param', ['organizer'])
  expectError(t, await s.list('?venue=999'), 400, 'rest_invalid_param', ['venue'])
  expectError(t, await s.list('?venue=2', contributor), 400, 'rest_invalid_param', ['venue'])
  const open = await s.list('?venue=1')
  t.equal(open.json<List>().total, 1, 'a published venue filters')
  const editor = await s.list('?venue=2', s.editor)
  t.equal(editor.json<List>().total, 1, 'the editor may filter on the draft venue')
})

t.test('item 12: linking a venue or organizer the caller cannot read is 400 naming the field; nothing written', async (t) => {
  const s = await setup(t)
  const alice = await s.auth('contributor')
  const bob = await s.auth('contributor')
  const bobVenue = await s.inject({ method: 'POST', url: `${API}/venues`, headers: bob, payload: { venue: 'Bob Hall' } })
  t.equal(bobVenue.json<{ status: string }>().status, 'draft')
  const bobOrganizer = await s.inject({ method: 'POST', url: `${API}/organizers`, headers: bob, payload: { organizer: 'Bob Club' } })
  const venueId = bobVenue.json<{ id: number }>().id
  const organizerId = bobOrganizer.json<{ id: number }>().id
  const body = { title: 'Alice night', start_date: '2026-07-01 18:00', end_date: '2026-07-01 20:00' }
  const venue = await s.inject({ method: 'POST', url: `${API}/events`, headers: alice, payload: { ...body, venue: [venueId] } })
  expectError(t, venue, 400, 'rest_invalid_param', ['venue'])
  const organizer = await s.inject({ method: 'POST', url: `${API}/events`, headers: alice, payload: { ...body, organizer: [organizerId] } })
  expectError(t, organizer, 400, 'rest_invalid_param', ['organizer'])
  const inline = await s.inject({ method: 'POST', url: `${API}/events`, headers: alice, payload: { ...body, venue: [{ venue: 'Inline' }, venueId] } })
  expectError(t, inline, 400, 'rest_invalid_param', ['venue'])
  const venues = await s.inject({ url: `${API}/venues`, headers: s.editor })
  t.equal(venues.json<List>().total, 1, 'no inline venue was created')
  const events = await s.inject({ url: `${API}/events`, headers: s.editor })
  t.equal(events.json<List>().total, 0, 'no event was created')
  // On update too.
  const own = await s.inject({ method: 'POST', url: `${API}/events`, headers: alice, payload: body })
  t.equal(own.statusCode, 201)
  const id = own.json<Event>().id
  const update = await s.inject({ method: 'PATCH', url: `${API}/events/${id}`, headers: alice, payload: { title: 'Changed', organizer: [organizerId] } })
  expectError(t, update, 400, 'rest_invalid_param', ['organizer'])
  t.equal((await s.get(id, '', alice)).json<Event>().title, 'Alice night', 'nothing written')
  // Bob may link his own draft venue; the editor may link it too.
  const bobs = await s.inject({ method: 'POST', url: `${API}/events`, headers: bob, payload: { ...body, venue: [venueId] } })
  t.equal(bobs.statusCode, 201)
  t.same(bobs.json<Event>().venue.map((v) => v.id), [venueId])
  const editors = await s.inject({ method: 'POST', url: `${API}/events`, headers: s.editor, payload: { ...body, venue: [venueId] } })
  t.equal(editors.statusCode, 201)
})
