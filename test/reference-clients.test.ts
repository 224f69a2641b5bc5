/**
 * Clients of the reference system work unchanged (issue 50): what TEC's own clients and tests send, in
 * the forms PHP's `http_build_query` writes, means what it means there (CONTRACT §1, §4, §5, §6).
 */
import t from 'tap'
import { API, API_URL } from './helpers/build.js'
import { expectError } from './helpers/errors.js'
import { setup } from './helpers/events.js'

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
  const venues = await s.inject({ url: `${API}/venues?${q('include[0]=1')}` })
  expectError(t, await s.inject({ url: `${API}/tags?${q('include[0]=x')}` }), 400, 'rest_invalid_param', ['include'])
  t.equal(venues.statusCode, 200)
  const rest = await s.list(q('?categories[1]=2&categories[0]=jazz&per_page=5'))
  t.ok(rest.json<{ rest_url: string }>().rest_url.includes('&categories=jazz%2C2'), 'rest_url: the comma form, in the order of the indexes')
})
