/**
 * What goes over the wire, as issue 21 found it wrong: the list envelope's key order (item 8), ids above
 * 2^53 echoed as sent, the inline organizer's e-mail named, the sign of a cost (item 9), form bodies that
 * split only the comma-list form (item 14), and the codes of malformed bodies (item 17).
 */
import t from 'tap'
import { API } from './helpers/build.js'
import { expectError } from './helpers/errors.js'
import { setup } from './helpers/events.js'

const FORM = { 'content-type': 'application/x-www-form-urlencoded' }


// ------------------------------------------------------------------------------------------- item 8

t.test('item 8: every list envelope is <records>, rest_url, next_rest_url?, previous_rest_url?, total, total_pages', async (t) => {
  const s = await setup(t)
  for (let i = 0; i < 3; i++) {
    await s.event(`E${i}`)
    await s.venue({ venue: `V${i}` })
    await s.organizer({ organizer: `O${i}` })
    await s.category(`C${i}`)
    await s.tag(`T${i}`)
  }
  const lists: Array<[string, string]> = [
    ['events', 'events'], ['venues', 'venues'], ['organizers', 'organizers'],
    ['categories?hide_empty=false', 'categories'], ['tags?hide_empty=false', 'tags'],
  ]
  for (const [path, field] of lists) {
    const sep = path.includes('?') ? '&' : '?'
    const middle = await s.inject({ url: `${API}/${path}${sep}per_page=1&page=2` })
    t.same(Object.keys(middle.json()), [field, 'rest_url', 'next_rest_url', 'previous_rest_url', 'total', 'total_pages'], `${field}: a middle page`)
    const last = await s.inject({ url: `${API}/${path}${sep}per_page=1&page=3` })
    t.same(Object.keys(last.json()), [field, 'rest_url', 'previous_rest_url', 'total', 'total_pages'], `${field}: the last page`)
    const first = await s.inject({ url: `${API}/${path}${sep}per_page=1` })
    t.same(Object.keys(first.json()), [field, 'rest_url', 'next_rest_url', 'total', 'total_pages'], `${field}: the first page`)
    const only = await s.inject({ url: `${API}/${path}` })
    t.same(Object.keys(only.json()), [field, 'rest_url', 'total', 'total_pages'], `${field}: one page`)
  }
})

// ------------------------------------------------------------------------------------------ item 14

t.test('item 14: form bodies split only the single comma-list form (a=1,2), not a[]= or repeated keys', async (t) => {
  const s = await setup(t)
  await s.category('Rock, Pop') // 1
  await s.category('Rock') // 2
  await s.category('Pop') // 3
  await s.category('Jazz') // 4
  const post = (form: string) => s.inject({
    method: 'POST', url: `${API}/events`, headers: { ...s.editor, ...FORM },
    payload: `title=F&start_date=2026-07-01+10:00&end_date=2026-07-01+11:00&${form}`,
  })
  const ids = async (form: string): Promise<number[]> => {
    const res = await post(form)
    t.equal(res.statusCode, 201, `${form}: 201`)
    return res.json<{ categories: Array<{ id: number }> }>().categories.map((c) => c.id).sort()
  }
  t.same(await ids('categories[]=Rock%2C+Pop'), [1], 'a[]= keeps its comma')
  t.same(await ids('categories[]=Rock%2C+Pop&categories[]=Jazz'), [1, 4])
  t.same(await ids('categories=Rock%2C+Pop&categories=Jazz'), [1, 4], 'repeated keys keep their commas')
  t.same(await ids('categories=Rock,Jazz'), [2, 4], 'the single comma list splits')
  t.same(await ids('categories=Rock%2CPop'), [2, 3], 'an encoded comma in the single form splits too')
})

// ------------------------------------------------------------------------------------------ item 17

t.test('item 17: a malformed form body says what is wrong with the form; __proto__/constructor keys name the field', async (t) => {
  const s = await setup(t)
  for (const payload of ['title=%e9t%e9', 'title=%ff', 'title=a%C3', Buffer.from([0x74, 0x69, 0x74, 0x6c, 0x65, 0x3d, 0xff, 0xfe])]) {
    const res = await s.inject({ method: 'POST', url: `${API}/venues`, headers: { ...s.editor, ...FORM }, payload: typeof payload === 'string' ? payload.replace('title', 'venue') : payload })
    const body = expectError(t, res, 400, 'rest_invalid_request')
    t.match(body.message, /form/i, `${String(payload)}: the message is about the form`)
    t.notMatch(body.message, /JSON/, 'not about JSON')
  }
  const de = await s.inject({ method: 'POST', url: `${API}/venues?ml_language=de`, headers: { ...s.editor, ...FORM }, payload: 'venue=%e9' })
  t.match(expectError(t, de, 400, 'rest_invalid_request').message, /Formular/, 'translated')
  for (const key of ['__proto__', 'constructor']) {
    const res = await s.inject({
      method: 'POST', url: `${API}/venues`, headers: { ...s.editor, 'content-type': 'application/json' },
      payload: `{"venue":"V","${key}":{"x":1}}`,
    })
    expectError(t, res, 400, 'rest_invalid_param', [key])
    const nested = await s.inject({
      method: 'POST', url: `${API}/events`, headers: { ...s.editor, 'content-type': 'application/json' },
      payload: `{"title":"T","start_date":"2026-07-01 10:00","end_date":"2026-07-01 11:00","venue":[{"venue":"V","${key}":1}]}`,
    })
    t.equal(nested.statusCode, 400, `${key} nested: 400`)
    t.equal(nested.json<{ code: string }>().code, 'rest_invalid_param', `${key} nested: rest_invalid_param`)
  }
  const venues = await s.inject({ url: `${API}/venues` })
  t.equal(venues.json<{ total: number }>().total, 0, 'nothing written')
})

// ------------------------------------------------------------------------------------------- item 9

t.test('item 9: a cost with a minus sign keeps it; ranges stay ranges', async (t) => {
  const s = await setup(t)
  const cases: Array<[string, number[]]> = [['-5', [-5]], ['$-5', [-5]], ['Discount −5 EUR', [-5]], ['10-20', [10, 20]], ['10 -20', [10, 20]], ['$10 – $20', [10, 20]]]
  for (const [cost, values] of cases) {
    const e = await s.event(`Cost ${cost}`, { cost })
    t.same(e.cost_details.values, values, `${cost}: ${JSON.stringify(values)}`)
  }
})

t.test('item 9: ids above 2^53 are echoed as sent in rest_url and messages', async (t) => {
  const s = await setup(t)
  const list = await s.inject({ url: `${API}/events?include=99999999999999999999` })
  t.equal(list.statusCode, 200)
  t.match(list.json<{ rest_url: string }>().rest_url, /include=99999999999999999999(&|$)/, 'include as sent')
  const tags = await s.inject({ url: `${API}/tags?include=9007199254740993&hide_empty=false` })
  t.match(tags.json<{ rest_url: string }>().rest_url, /include=9007199254740993(&|$)/)
  const missing = await s.inject({ url: `${API}/events/9007199254740993` })
  t.match(expectError(t, missing, 404, 'rest-event-not-found').message, /9007199254740993/, 'the 404 names the id sent')
  const venue = await s.list('?venue=9007199254740993')
  t.match(JSON.stringify(expectError(t, venue, 400, 'rest_invalid_param', ['venue'])), /9007199254740993/, 'the 400 names the id sent')
})

t.test('item 9: an inline organizer with a bad e-mail is refused for its e-mail, not as "must be integer"', async (t) => {
  const s = await setup(t)
  const res = await s.inject({
    method: 'POST', url: `${API}/events`, headers: s.editor,
    payload: { title: 'T', start_date: '2026-07-01 10:00', end_date: '2026-07-01 11:00', organizer: [{ organizer: 'O', email: 'not an e-mail' }] },
  })
  const body = expectError(t, res, 400, 'rest_invalid_param', ['organizer'])
  const reason = (body.data.params as Record<string, string>).organizer ?? ''
  t.match(reason, /email/, `names the e-mail: ${reason}`)
  t.notMatch(reason, /integer/, 'not "must be integer"')
})

// --------------------------------------------------------------------------------- issue 46, item 9

t.test('issue 46: what the document accepts, the server accepts; what the server refuses, the document refuses', async (t) => {
  const { documentProblems } = await import('./helpers/wire.js')
  const s = await setup(t)
  const hall = await s.venue({ venue: 'Hall' })
  const park = await s.venue({ venue: 'Park' })
  const club = await s.organizer({ organizer: 'Club' })
  const crew = await s.organizer({ organizer: 'Crew' })
  const base = 'title=F&start_date=2026-07-01+10:00&end_date=2026-07-01+11:00'
  for (const form of [`venue%5B%5D=${hall.id},${park.id}&organizer%5B%5D=${club.id},${crew.id}`, `venue%5B%5D=${hall.id}&venue%5B%5D=${park.id},&organizer=${club.id},${crew.id}`]) {
    const payload = `${base}&${form}`
    t.strictSame(documentProblems('POST', `${API}/events`, payload), [], `the document accepts ${form}`)
    const res = await s.inject({ method: 'POST', url: `${API}/events`, headers: { ...s.editor, ...FORM }, payload })
    t.equal(res.statusCode, 201, form)
    const event = res.json<{ venue: Array<{ id: number }>; organizer: Array<{ id: number }> }>()
    t.same([event.venue.map((v) => v.id), event.organizer.map((o) => o.id)], [[hall.id, park.id], [club.id, crew.id]])
  }
  const refused: Array<readonly [string, string, string | undefined, string]> = [
    ['GET', `${API}/tags?include=0`, undefined, 'include'],
    ['GET', `${API}/tags?include=1,-2`, undefined, 'include'],
    ['GET', `${API}/tags?exclude=0,1`, undefined, 'exclude'],
    ['GET', `${API}/events?venue=-1`, undefined, 'venue'],
    ['GET', `${API}/events?start_date=2026-13-45`, undefined, 'start_date'],
    ['GET', `${API}/events?end_date=2026-02-32+10:00`, undefined, 'end_date'],
    ['GET', `${API}/venues?modified_after=2026-00-10`, undefined, 'modified_after'],
    ['POST', `${API}/events`, 'title=F&start_date=2026-13-45&end_date=2026-07-01', 'start_date'],
    ['POST', `${API}/events`, `${base}&venue=0`, 'venue'],
  ]
  for (const [method, url, payload, field] of refused) {
    t.not(documentProblems(method, url, payload).length, 0, `the document refuses ${url} ${payload ?? ''}`)
    const res = await s.inject({ method: method === 'GET' ? 'GET' : 'POST', url, headers: { ...s.editor, ...(payload === undefined ? {} : FORM) }, ...(payload === undefined ? {} : { payload }) })
    expectError(t, res, 400, 'rest_invalid_param', [field])
  }
  // A text form's list no longer than what the server takes; repeats of a kind are one filter.
  const all = 'events,venues,organizers,categories,tags'
  const many = Array.from({ length: 30 }, () => all).join(',')
  t.not(documentProblems('GET', `${API}/changes?resource=${many}`).length, 0, '150 entries in one text are more than maxItems')
  const repeated = Array.from({ length: 30 }, () => `resource=${all}`).join('&')
  t.equal((await s.inject({ url: `${API}/changes?${repeated}`, headers: s.editor })).statusCode, 200, 'a kind named many times is named once')
  t.equal((await s.inject({ url: `${API}/changes?resource=${Array.from({ length: 20 }, () => all).join(',')}`, headers: s.editor })).statusCode, 200)
  // The webhook form's `events`: the types there are, as many as there are.
  const admin = await s.auth('administrator')
  for (const events of ['*.*', 'venue.moved', 'x', 'tags.*', 'event.created,venue.gone']) {
    const payload = `url=https%3A%2F%2F93.184.215.14%2Fhook&events=${encodeURIComponent(events)}`
    t.not(documentProblems('POST', `${API}/webhooks`, payload).length, 0, `the document refuses events=${events}`)
    expectError(t, await s.inject({ method: 'POST', url: `${API}/webhooks`, headers: { ...admin, ...FORM }, payload }), 400, 'rest_invalid_param', ['events'])
  }
  const payload = `url=https%3A%2F%2F93.184.215.14%2Fhook&events=${encodeURIComponent('event.*,venue.created,*')}`
  t.strictSame(documentProblems('POST', `${API}/webhooks`, payload), [])
  t.equal((await s.inject({ method: 'POST', url: `${API}/webhooks`, headers: { ...admin, ...FORM }, payload })).statusCode, 201)
})
