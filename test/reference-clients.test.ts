/**
 * Clients of the reference system work unchanged (issue 50): what TEC's own clients and tests send, in
 * the forms PHP's `http_build_query` writes, means what it means there (CONTRACT §1, §4, §5, §6).
 */
import t from 'tap'
import { API, API_URL } from './helpers/build.js'
import { expectError } from './helpers/errors.js'
import { setup } from './helpers/events.js'
import { documentProblems } from './helpers/wire.js'

type Listed = { id: number }
const termIds = (res: { json: <T>() => T }, key: 'categories' | 'tags'): number[] => res.json<Record<string, Listed[]>>()[key]?.map((r) => r.id) ?? []

t.test('cause 5: `event` and `post` on term lists are both checked, and `event` wins', async (t) => {
  const s = await setup(t)
  await s.category('Rock') // 1
  await s.category('Jazz') // 2
  await s.tag('Loud') // 3
  await s.tag('Soft') // 4
  const rock = await s.event('Rock night', { categories: [1], tags: [3] })
  const jazz = await s.event('Jazz night', { categories: [2], tags: [4] })
  for (const [collection, first, second] of [['categories', 1, 2], ['tags', 3, 4]] as const) {
    const list = (query: string) => s.inject({ url: `${API}/${collection}${query}` })
    t.same(termIds(await list(`?event=${rock.id}&post=${jazz.id}`), collection), [first], `${collection}: event wins over post`)
    t.same(termIds(await list(`?post=${jazz.id}&event=${rock.id}`), collection), [first], `${collection}: whatever the order sent`)
    t.same(termIds(await list(`?post=${jazz.id}`), collection), [second], `${collection}: post alone still filters`)
    expectError(t, await list(`?post=${rock.id}&event=999`), 400, 'rest_invalid_param', ['event'])
    expectError(t, await list(`?event=${rock.id}&post=999`), 400, 'rest_invalid_param', ['post'])
  }
})

t.test('cause 7: an empty `slug` filter on term lists is 400 (it can never match)', async (t) => {
  const s = await setup(t)
  await s.category('Rock')
  await s.tag('Loud')
  for (const collection of ['categories', 'tags'] as const) {
    expectError(t, await s.inject({ url: `${API}/${collection}?slug=` }), 400, 'rest_invalid_param', ['slug'])
    expectError(t, await s.inject({ url: `${API}/${collection}?slug=&hide_empty=false` }), 400, 'rest_invalid_param', ['slug'])
    const named = await s.inject({ url: `${API}/${collection}?slug=${collection === 'tags' ? 'loud' : 'rock'}&hide_empty=false` })
    t.equal(termIds(named, collection).length, 1, `${collection}: a slug still filters`)
  }
})

t.test('cause 4: several statuses are their union on /events, /venues and /organizers, each allowed as alone', async (t) => {
  const s = await setup(t)
  const author = await s.auth('author')
  await s.event('Published') // 1
  await s.event('Draft', { status: 'draft' }) // 2
  await s.event('Pending', { status: 'pending' }) // 3
  await s.event('Private', { status: 'private' }) // 4
  await s.event('Own draft', { status: 'draft' }, author) // 5
  await s.venue({ venue: 'Published' }) // 1
  await s.venue({ venue: 'Draft', status: 'draft' }) // 2
  await s.venue({ venue: 'Private', status: 'private' }) // 3
  await s.organizer({ organizer: 'Published' }) // 1
  await s.organizer({ organizer: 'Draft', status: 'draft' }) // 2
  await s.organizer({ organizer: 'Pending', status: 'pending' }) // 3
  const ids = async (path: string, headers: Record<string, string> = s.editor): Promise<number[]> => {
    const res = await s.inject({ url: `${API}/${path}`, headers })
    t.equal(res.statusCode, 200, `${path}: 200`)
    const key = path.split('?')[0] ?? ''
    return (res.json<Record<string, Listed[]>>()[key] ?? []).map((r) => r.id).sort((a, b) => a - b)
  }
  for (const form of ['status=publish,draft', 'status=publish&status=draft', 'status%5B%5D=draft&status%5B%5D=publish', 'status%5B0%5D=publish&status%5B1%5D=draft', 'status=draft,publish,draft']) {
    t.same(await ids(`events?${form}`), [1, 2, 5], `events ${form}`)
    t.same(await ids(`venues?${form}`), [1, 2], `venues ${form}`)
    t.same(await ids(`organizers?${form}`), [1, 2], `organizers ${form}`)
  }
  t.same(await ids('events?status=private,pending'), [3, 4])
  t.same(await ids('events?status=publish,draft', author), [1, 5], 'an author: published ones plus its own, of those statuses')
  t.same(await ids('events?status=publish', {}), [1], 'one status as before')
  const rest = await s.inject({ url: `${API}/events?status%5B%5D=publish&status%5B%5D=draft`, headers: s.editor })
  t.ok(rest.json<{ rest_url: string }>().rest_url.endsWith('&status=publish%2Cdraft'), 'rest_url names the union')
  const venues = await s.inject({ url: `${API}/venues?status%5B1%5D=draft&status%5B0%5D=publish&search=e`, headers: s.editor })
  t.equal(venues.json<{ rest_url: string }>().rest_url, `${API_URL}/venues?page=1&per_page=10&status=publish%2Cdraft&search=e`, 'in the order of the indexes, where first sent')
  for (const path of ['events', 'venues', 'organizers']) {
    expectError(t, await s.inject({ url: `${API}/${path}?status=publish,draft` }), 400, 'rest_invalid_param', ['status'])
    expectError(t, await s.inject({ url: `${API}/${path}?status=publish,trash`, headers: s.editor }), 400, 'rest_invalid_param', ['status'])
    expectError(t, await s.inject({ url: `${API}/${path}?status=publish,nope`, headers: s.editor }), 400, 'rest_invalid_param', ['status'])
    expectError(t, await s.inject({ url: `${API}/${path}?status=`, headers: s.editor }), 400, 'rest_invalid_param', ['status'])
  }
})

t.test('cause 3: indexed query arrays (`a[0]=1&a[1]=2`) filter like the other forms; a bracketed name that does not fit is 400', async (t) => {
  const s = await setup(t)
  await s.category('Jazz') // 1
  await s.category('Rock') // 2
  await s.tag('Loud') // 3
  await s.venue({ venue: 'Hall' }) // 1
  await s.organizer({ organizer: 'Club' }) // 1
  await s.event('Jazz night', { categories: [1], venue: [1] }) // 1
  await s.event('Rock night', { categories: [2], tags: [3], organizer: [1] }) // 2
  await s.event('Nothing') // 3
  const ids = async (query: string): Promise<number[]> => {
    const res = await s.list(query)
    t.equal(res.statusCode, 200, `${query}: 200`)
    return res.json<{ events: Listed[] }>().events.map((e) => e.id)
  }
  const q = (text: string) => text.replace(/\[/g, '%5B').replace(/\]/g, '%5D')
  t.same(await ids(q('?categories[0]=jazz')), [1])
  t.same(await ids('?categories[0]=jazz'), [1], 'brackets sent unescaped, as curl -g does')
  t.same(await ids(q('?categories[0]=jazz&categories[1]=2')), [1, 2])
  t.same(await ids(q('?categories[0]=rock&tags[0]=loud')), [2])
  t.same(await ids(q('?venue[0]=1')), [1])
  t.same(await ids(q('?organizer[0]=1')), [2])
  t.same(await ids(q('?include[1]=3&include[0]=1')), [1, 3])
  t.same(await ids(q('?colour[0]=red')), [1, 2, 3], 'an unknown parameter is ignored, bracketed or not')
  expectError(t, await s.list(q('?venue[0]=999')), 400, 'rest_invalid_param', ['venue'])
  expectError(t, await s.list(q('?categories[0]=nope')), 400, 'rest_invalid_param', ['categories'])
  expectError(t, await s.list(q('?categories[x]=jazz')), 400, 'rest_invalid_param', ['categories'])
  expectError(t, await s.list(q('?featured[0]=1')), 400, 'rest_invalid_param', ['featured'])
  expectError(t, await s.list(q('?search[a]=jazz')), 400, 'rest_invalid_param', ['search'])
  // Deeper than any field nests: still the field's, refused by name, never dropped.
  expectError(t, await s.list(q('?tags[0][0][0][0]=loud')), 400, 'rest_invalid_param', ['tags'])
  expectError(t, await s.list(q(`?categories${'[0]'.repeat(500)}=jazz`)), 400, 'rest_invalid_param', ['categories'])
  const venues = await s.inject({ url: `${API}/venues?${q('include[0]=1')}` })
  expectError(t, await s.inject({ url: `${API}/tags?${q('include[0]=x')}` }), 400, 'rest_invalid_param', ['include'])
  t.equal(venues.statusCode, 200)
  const rest = await s.list(q('?categories[1]=2&categories[0]=jazz&per_page=5'))
  t.ok(rest.json<{ rest_url: string }>().rest_url.includes('&categories=jazz%2C2'), 'rest_url: the comma form, in the order of the indexes')
})

/** A body as PHP's `http_build_query` writes it: nested arrays and objects as bracketed names. */
function httpBuildQuery(data: Record<string, unknown>): string {
  const pairs: string[] = []
  const walk = (prefix: string, value: unknown): void => {
    if (Array.isArray(value)) value.forEach((v, i) => walk(`${prefix}[${i}]`, v))
    else if (typeof value === 'object' && value !== null) for (const [k, v] of Object.entries(value)) walk(`${prefix}[${k}]`, v)
    else pairs.push(`${encodeURIComponent(prefix)}=${encodeURIComponent(typeof value === 'boolean' ? (value ? '1' : '0') : String(value))}`)
  }
  for (const [key, value] of Object.entries(data)) walk(key, value)
  return pairs.join('&')
}

const FORM = { 'content-type': 'application/x-www-form-urlencoded' }
type Linked = { id: number; venue?: string; organizer?: string; city?: string | null; show_map?: boolean; email?: string | null }
type Written = { id: number; venue: Linked[]; organizer: Linked[]; categories: Listed[]; tags: Listed[] }

t.test('cause 2: PHP form bodies (objects, lists of objects, indexed lists) mean what the same JSON means, and the document says so', async (t) => {
  const s = await setup(t)
  await s.category('Jazz') // 1
  await s.tag('Loud') // 2
  await s.venue({ venue: 'Old hall' }) // venue 1
  await s.organizer({ organizer: 'Old club' }) // organizer 1
  await s.organizer({ organizer: 'Other club' }) // organizer 2
  const post = async (payload: string, expected = 201) => {
    const res = await s.inject({ method: 'POST', url: `${API}/events`, headers: { ...s.editor, ...FORM }, payload })
    t.equal(res.statusCode, expected, `${decodeURIComponent(payload)}: ${res.statusCode}`)
    if (expected < 300) t.strictSame(documentProblems('POST', `${API}/events`, payload), [], `the document accepts ${decodeURIComponent(payload)}`)
    return res
  }
  const base = { title: 'Gig', start_date: '2026-07-01 20:00', end_date: '2026-07-01 22:00' }
  const single = (await post(httpBuildQuery({ ...base, venue: { venue: 'Hall', city: 'Bern', show_map: false } }))).json<Written>()
  t.strictSame(single.venue.map((v) => [v.venue, v.city, v.show_map]), [['Hall', 'Bern', false]], 'venue[venue]=Hall&venue[city]=Bern: one new venue')
  const many = (await post(httpBuildQuery({ ...base, organizer: [{ organizer: 'A', email: 'a@example.com' }, { organizer: 'B' }] }))).json<Written>()
  t.strictSame(many.organizer.map((o) => [o.organizer, o.email]), [['A', 'a@example.com'], ['B', null]], 'organizer[0][organizer]=A&organizer[1][organizer]=B: two, in order')
  const ids = (await post(httpBuildQuery({ ...base, organizer: [2, 1], venue: [1], categories: ['jazz'], tags: [2] }))).json<Written>()
  t.strictSame([ids.organizer.map((o) => o.id), ids.venue.map((v) => v.id), ids.categories.map((c) => c.id), ids.tags.map((c) => c.id)], [[2, 1], [1], [1], [2]], 'organizer[0]=2&organizer[1]=1: existing ones')
  const refs = (await post(httpBuildQuery({ ...base, organizer: [{ id: 1 }, { organizer: 'C' }] }))).json<Written>()
  t.strictSame(refs.organizer.map((o) => o.organizer), ['Old club', 'C'], 'organizer[0][id]=1: the existing record')
  const reordered = (await post('title=Gig&start_date=2026-07-01&end_date=2026-07-01&organizer%5B1%5D=1&organizer%5B0%5D=2')).json<Written>()
  t.strictSame(reordered.organizer.map((o) => o.id), [2, 1], 'in the order of the indexes, not of the keys')
  // The same payload as JSON gives the same links.
  const json = await s.inject({ method: 'POST', url: `${API}/events`, headers: s.editor, payload: { ...base, organizer: [2, 1], venue: [1], categories: ['jazz'], tags: [2] } })
  const fromJson = json.json<Written>()
  t.strictSame([fromJson.organizer.map((o) => o.id), fromJson.venue.map((v) => v.id), fromJson.categories.map((c) => c.id)], [[2, 1], [1], [1]])
  // Updates take the same forms.
  const patched = await s.inject({ method: 'PATCH', url: `${API}/events/${ids.id}`, headers: { ...s.editor, ...FORM }, payload: httpBuildQuery({ venue: [{ venue: 'New hall' }], organizer: [1] }) })
  t.equal(patched.statusCode, 200)
  t.strictSame([patched.json<Written>().venue.map((v) => v.venue), patched.json<Written>().organizer.map((o) => o.id)], [['New hall'], [1]])
  // A bracketed name that does not fit its field is 400 naming it; nothing is created.
  const before = (await s.inject({ url: `${API}/venues?per_page=50`, headers: s.editor })).json<{ total: number }>().total
  for (const [payload, field] of [
    ['title%5B0%5D=Gig&start_date=2026-07-01&end_date=2026-07-01', 'title'],
    [`${httpBuildQuery(base)}&venue%5Bcolour%5D=red`, 'venue'],
    [`${httpBuildQuery(base)}&colour%5Bx%5D=red`, 'colour'],
    [`${httpBuildQuery(base)}&featured%5B0%5D=1`, 'featured'],
    [`${httpBuildQuery(base)}&organizer%5B0%5D%5Bid%5D=999`, 'organizer'],
    [`${httpBuildQuery(base)}&venue%5B0%5D%5Bvenue%5D=Hall&venue%5B0%5D%5Bvenue%5D=Other`, 'venue'],
    [`${httpBuildQuery(base)}&venue%5Bvenue%5D=Hall&venue%5Bshow_map%5D=maybe`, 'venue'],
    [`${httpBuildQuery(base)}&venue%5B0%5D%5Bvenue%5D%5Bx%5D%5By%5D=Hall`, 'venue'],
  ] as const) {
    expectError(t, await post(payload, 400), 400, 'rest_invalid_param', [field])
  }
  t.equal((await s.inject({ url: `${API}/venues?per_page=50`, headers: s.editor })).json<{ total: number }>().total, before, 'no venue created by a refused body')
})

t.test('compatibility: a single venue or organizer where the list is expected is a list of one; { "id": N } names N', async (t) => {
  const s = await setup(t)
  await s.venue({ venue: 'Hall' }) // 1
  await s.organizer({ organizer: 'Club' }) // 1
  await s.organizer({ organizer: 'Band' }) // 2
  const one = await s.event('One', { venue: 1, organizer: { id: 2 } }) as unknown as Written
  t.strictSame([one.venue.map((v) => v.id), one.organizer.map((o) => o.id)], [[1], [2]])
  const inline = await s.event('Inline', { venue: { venue: 'Tent', city: 'Basel' }, organizer: [{ id: 1 }, 2, { organizer: 'Choir' }] }) as unknown as Written
  t.strictSame(inline.venue.map((v) => [v.venue, v.city]), [['Tent', 'Basel']])
  t.strictSame(inline.organizer.map((o) => o.organizer), ['Club', 'Band', 'Choir'])
  const patched = await s.patch(one.id, { venue: { id: 1 }, organizer: 1 })
  t.equal(patched.statusCode, 200)
  t.strictSame(patched.json<Written>().organizer.map((o) => o.id), [1])
  expectError(t, await s.patch(one.id, { organizer: { id: 999 } }), 400, 'rest_invalid_param', ['organizer'])
  expectError(t, await s.patch(one.id, { venue: { id: 1, venue: 'Both' } }), 400, 'rest_invalid_param', ['venue'])
  expectError(t, await s.patch(one.id, { venue: 0 }), 400, 'rest_invalid_param', ['venue'])
  expectError(t, await s.patch(one.id, { venue: 'Hall' }), 400, 'rest_invalid_param', ['venue'])
})

t.test('cause 6: a trashed venue or organizer is left out of its events and matches no event filter, for every caller; a restore brings it back', async (t) => {
  const s = await setup(t)
  const admin = await s.auth('administrator')
  await s.venue({ venue: 'Hall' }) // 1
  await s.venue({ venue: 'Park' }) // 2
  await s.organizer({ organizer: 'Club' }) // 1
  await s.organizer({ organizer: 'Band' }) // 2
  const event = await s.event('Gig', { venue: [1, 2], organizer: [1, 2] })
  const names = (record: Written) => [record.venue.map((v) => v.id), record.organizer.map((o) => o.id)]
  const trash = async (collection: string, id: number) => t.equal((await s.inject({ method: 'DELETE', url: `${API}/${collection}/${id}`, headers: s.editor })).statusCode, 200)
  const before = await s.get(event.id, '', admin)
  await trash('venues', 2)
  await trash('organizers', 1)
  for (const [who, headers] of [['anonymous', {}], ['editor', s.editor], ['administrator', admin]] as const) {
    const read = await s.get(event.id, '', headers)
    t.strictSame(names(read.json<Written>()), [[1], [2]], `${who}: the single read leaves the trashed ones out`)
    const listed = (await s.list('', headers)).json<{ events: Written[] }>().events.find((e) => e.id === event.id)
    t.strictSame(listed === undefined ? undefined : names(listed), [[1], [2]], `${who}: the list too`)
    const ld = JSON.stringify(read.json<{ json_ld: unknown }>().json_ld)
    t.notOk(ld.includes('Park') || ld.includes('Club'), `${who}: the JSON-LD names neither`)
  }
  t.not((await s.get(event.id, '', admin)).headers.etag, before.headers.etag, 'what the event shows changed, so does its ETag')
  for (const headers of [s.editor, admin]) {
    t.equal((await s.list('?organizer=1', headers)).json<{ total: number }>().total, 0, 'a trashed organizer matches no event')
    t.equal((await s.list('?venue=2', headers)).json<{ total: number }>().total, 0, 'a trashed venue matches no event')
    t.equal((await s.list('?venue=1,2', headers)).json<{ total: number }>().total, 1, 'the others still filter')
    t.equal((await s.list(`?${'organizer%5B0%5D=1&organizer%5B1%5D=2'}`, headers)).json<{ total: number }>().total, 1)
  }
  expectError(t, await s.list('?organizer=1'), 400, 'rest_invalid_param', ['organizer'])
  // Restoring brings the links back.
  t.equal((await s.inject({ method: 'PATCH', url: `${API}/venues/2`, headers: s.editor, payload: { status: 'publish' } })).statusCode, 200)
  t.equal((await s.inject({ method: 'PATCH', url: `${API}/organizers/1`, headers: s.editor, payload: { status: 'publish' } })).statusCode, 200)
  t.strictSame(names((await s.get(event.id)).json<Written>()), [[1, 2], [1, 2]], 'restored: shown again')
  t.equal((await s.list('?organizer=1')).json<{ total: number }>().total, 1, 'restored: filters again')
})
