/**
 * Clients of the reference system work unchanged (issue 50): what TEC's own clients and tests send, in
 * the forms PHP's `http_build_query` writes, means what it means there (CONTRACT §1, §4, §5, §6).
 */
import t from 'tap'
import { API } from './helpers/build.js'
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
