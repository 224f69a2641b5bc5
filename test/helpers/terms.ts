/**
 * What the /categories and /tags suites share: the helpers of each and the list tests whose rules are the
 * same for both (order, pages, search, include and exclude). Each suite calls `termListTests` with its
 * resource and adds what is its own (a category's parent, a tag's lack of one).
 */
import t from 'tap'
import type { Test } from 'tap'
import type { Schema } from '../../src/contract.js'
import { API, API_URL, build, type Injected } from './build.js'
import { expectError } from './errors.js'
import { insertEvent } from './fixtures.js'

export interface TermKind<R> {
  collection: 'categories' | 'tags'
  /** The record the server must return for a term; every field overridable. */
  record(id: number, name: string, fields?: Partial<TermLike>): R
}

interface TermLike {
  id: number
  name: string
  slug: string
  description: string | null
  count: number
  ml_language: Schema<'Language'>
  translations: Record<string, number>
}

/** The paths, a fresh-app `setup` and the readers of list answers for one collection. */
export function termTools<R extends TermLike>(kind: Pick<TermKind<R>, 'collection'>) {
  const PATH = `${API}/${kind.collection}`
  const URL = `${API_URL}/${kind.collection}`

  /** A fresh app with an editor and a `create` that asserts the 201 and returns the record. */
  async function setup(t: Test) {
    const built = await build(t)
    const editor = await built.auth('editor')
    async function create(body: Record<string, unknown>, query = ''): Promise<R> {
      const res = await built.inject({ method: 'POST', url: `${PATH}${query}`, headers: editor, payload: body })
      t.equal(res.statusCode, 201, `created ${JSON.stringify(body)}`)
      return res.json<R>()
    }
    async function list(query: string): Promise<Injected> {
      return built.inject({ url: `${PATH}${query}` })
    }
    /** Links published events to each id so that `hide_empty` keeps them. */
    async function publishFor(...ids: number[]): Promise<number> {
      return insertEvent(built.db, { status: 'publish' }, { terms: ids })
    }
    return { ...built, editor, create, list, publishFor }
  }

  const items = (res: Injected): R[] => res.json<Record<string, R[]>>()[kind.collection] ?? []
  const names = (res: Injected): string[] => items(res).map((c) => c.name)
  const ids = (res: Injected): number[] => items(res).map((c) => c.id)
  const restUrl = (res: Injected): string => res.json<{ rest_url: string }>().rest_url
  return { PATH, URL, setup, items, names, ids, restUrl }
}

/** The list tests whose rules are the same for categories and tags. */
export function termListTests<R extends TermLike>(kind: TermKind<R>): void {
  const tools = termTools(kind)
  const { setup, items, names, ids, restUrl } = tools

  t.test('list: orderby=id, slug and name', async (t) => {
    const { list, create } = await setup(t)
    await create({ name: 'Zulu', slug: 'alpha' })
    await create({ name: 'Alpha', slug: 'zulu' })
    await create({ name: 'Mike', slug: 'mike' })
    t.same(ids(await list('?hide_empty=false&orderby=id')), [1, 2, 3])
    t.same(ids(await list('?hide_empty=false&orderby=id&order=desc')), [3, 2, 1])
    t.same(ids(await list('?hide_empty=false&orderby=slug')), [1, 3, 2])
    t.same(ids(await list('?hide_empty=false&orderby=slug&order=desc')), [2, 3, 1])
    t.same(ids(await list('?hide_empty=false&orderby=name')), [2, 3, 1])
    t.same(ids(await list('?hide_empty=false&orderby=name&order=desc')), [1, 3, 2])
    expectError(t, await list('?orderby=colour'), 400, 'rest_invalid_param', ['orderby'])
  })

  t.test(`list: orderby=description puts ${kind.collection} without one first, ties by id`, async (t) => {
    const { list, create } = await setup(t)
    await create({ name: 'A', description: 'beta' })
    await create({ name: 'B' })
    await create({ name: 'C', description: 'alpha' })
    await create({ name: 'D', description: 'beta' })
    t.same(ids(await list('?hide_empty=false&orderby=description')), [2, 3, 1, 4])
    t.same(ids(await list('?hide_empty=false&orderby=description&order=desc')), [1, 4, 3, 2])
  })

  t.test('list: orderby=count sorts by published events linked, ties by id', async (t) => {
    const { list, create, publishFor } = await setup(t)
    for (const name of ['A', 'B', 'C', 'D']) await create({ name })
    await publishFor(2, 3)
    await publishFor(2)
    await publishFor(4)
    const asc = await list('?hide_empty=false&orderby=count')
    t.same(ids(asc), [1, 3, 4, 2])
    t.same(items(asc).map((c) => c.count), [0, 1, 1, 2])
    t.same(ids(await list('?hide_empty=false&orderby=count&order=desc')), [2, 3, 4, 1])
  })

  t.test('list: orderby=include follows the order of include', async (t) => {
    const { list, create } = await setup(t)
    for (const name of ['A', 'B', 'C', 'D']) await create({ name })
    t.same(ids(await list('?hide_empty=false&include=3,1,4&orderby=include')), [3, 1, 4])
    t.same(ids(await list('?hide_empty=false&include=3,1,4&orderby=include&order=desc')), [4, 1, 3])
    // Without orderby, include keeps the default name order.
    t.same(ids(await list('?hide_empty=false&include=3,1,4')), [1, 3, 4])
  })

  t.test('list: page and per_page walk the pages with links and headers', async (t) => {
    const { list, create } = await setup(t)
    for (const name of ['A', 'B', 'C', 'D', 'E']) await create({ name })
    const base = `${tools.URL}?page=`
    const first = await list('?hide_empty=false&per_page=2')
    t.equal(first.statusCode, 200)
    t.strictSame(first.json(), {
      [kind.collection]: [kind.record(1, 'A'), kind.record(2, 'B')],
      rest_url: `${base}1&per_page=2&hide_empty=false`,
      next_rest_url: `${base}2&per_page=2&hide_empty=false`,
      total: 5,
      total_pages: 3,
    })
    t.equal(first.headers['x-total'], '5')
    t.equal(first.headers['x-total-pages'], '3')
    t.equal(first.headers.link, `<${base}2&per_page=2&hide_empty=false>; rel="next"`)

    const second = await list('?hide_empty=false&per_page=2&page=2')
    t.strictSame(second.json(), {
      [kind.collection]: [kind.record(3, 'C'), kind.record(4, 'D')],
      rest_url: `${base}2&per_page=2&hide_empty=false`,
      next_rest_url: `${base}3&per_page=2&hide_empty=false`,
      previous_rest_url: `${base}1&per_page=2&hide_empty=false`,
      total: 5,
      total_pages: 3,
    })
    t.equal(second.headers.link,
      `<${base}3&per_page=2&hide_empty=false>; rel="next", <${base}1&per_page=2&hide_empty=false>; rel="prev"`)

    const last = await list('?hide_empty=false&per_page=2&page=3')
    t.strictSame(last.json(), {
      [kind.collection]: [kind.record(5, 'E')],
      rest_url: `${base}3&per_page=2&hide_empty=false`,
      previous_rest_url: `${base}2&per_page=2&hide_empty=false`,
      total: 5,
      total_pages: 3,
    })
    t.equal(last.headers.link, `<${base}2&per_page=2&hide_empty=false>; rel="prev"`)
    t.equal(last.headers['x-total-pages'], '3')
  })

  t.test('list: per_page defaults to 10 and is clamped to 50', async (t) => {
    const { list, create } = await setup(t)
    for (let i = 1; i <= 51; i++) await create({ name: `Term ${String(i).padStart(2, '0')}` })
    const byDefault = await list('?hide_empty=false')
    t.equal(ids(byDefault).length, 10)
    t.equal(byDefault.json().total_pages, 6)
    const clamped = await list('?hide_empty=false&per_page=500')
    t.equal(clamped.statusCode, 200)
    t.equal(ids(clamped).length, 50)
    t.equal(restUrl(clamped), `${tools.URL}?page=1&per_page=50&hide_empty=false`)
    t.equal(clamped.json().next_rest_url, `${tools.URL}?page=2&per_page=50&hide_empty=false`)
    t.equal(clamped.json().total, 51)
    t.equal(clamped.json().total_pages, 2)
    t.equal(clamped.headers['x-total-pages'], '2')
    t.same(ids(await list('?hide_empty=false&per_page=51&page=2')), [51])
  })

  t.test('list: per_page and page below 1 or not integers are 400', async (t) => {
    const { list } = await setup(t)
    expectError(t, await list('?per_page=0'), 400, 'rest_invalid_param', ['per_page'])
    expectError(t, await list('?per_page=-1'), 400, 'rest_invalid_param', ['per_page'])
    expectError(t, await list('?per_page=ten'), 400, 'rest_invalid_param', ['per_page'])
    expectError(t, await list('?page=0'), 400, 'rest_invalid_param', ['page'])
    expectError(t, await list('?page=1.5'), 400, 'rest_invalid_param', ['page'])
  })

  t.test('list: search is a case-insensitive substring of name or slug', async (t) => {
    const { list, create } = await setup(t)
    await create({ name: 'Rock Music' })
    await create({ name: 'Jazz', slug: 'smooth-rocking' })
    await create({ name: 'Classical' })
    const res = await list('?hide_empty=false&search=ROCK')
    t.equal(res.statusCode, 200)
    t.strictSame(res.json(), {
      [kind.collection]: [kind.record(2, 'Jazz', { slug: 'smooth-rocking' }), kind.record(1, 'Rock Music', { slug: 'rock-music' })],
      rest_url: `${tools.URL}?page=1&per_page=10&hide_empty=false&search=ROCK`,
      total: 2,
      total_pages: 1,
    })
    t.same(names(await list('?hide_empty=false&search=k%20m')), ['Rock Music'])
    t.same(names(await list('?hide_empty=false&search=opera')), [])
  })

  t.test('list: search treats %, _ and \\ as plain characters', async (t) => {
    const { list, create } = await setup(t)
    await create({ name: '100% Jazz' })
    await create({ name: '100 Jazz' })
    await create({ name: 'a_b' })
    await create({ name: 'axb' })
    await create({ name: 'back\\slash' })
    await create({ name: 'backslash' })
    const percent = await list('?hide_empty=false&search=%25')
    t.same(names(percent), ['100% Jazz'])
    t.equal(restUrl(percent), `${tools.URL}?page=1&per_page=10&hide_empty=false&search=%25`)
    t.same(names(await list('?hide_empty=false&search=0%25%20J')), ['100% Jazz'])
    t.same(names(await list('?hide_empty=false&search=_')), ['a_b'])
    t.same(names(await list('?hide_empty=false&search=a_b')), ['a_b'])
    t.same(names(await list('?hide_empty=false&search=%5C')), ['back\\slash'])
    await create({ name: 'Drum & Bass' })
    const ampersand = await list('?hide_empty=false&search=%26')
    t.same(names(ampersand), ['Drum & Bass'])
    t.equal(restUrl(ampersand), `${tools.URL}?page=1&per_page=10&hide_empty=false&search=%26`)
  })

  t.test('list: exclude leaves out ids, unknown ids match nothing, in all three array forms', async (t) => {
    const { list, create } = await setup(t)
    for (const name of ['A', 'B', 'C', 'D']) await create({ name })
    for (const query of ['exclude=2&exclude=4', 'exclude[]=2&exclude[]=4', 'exclude=2,4', 'exclude=2,4,999']) {
      const res = await list(`?hide_empty=false&${query}`)
      t.equal(res.statusCode, 200, query)
      t.same(ids(res), [1, 3], query)
      t.equal(res.json().total, 2, query)
    }
    t.equal(restUrl(await list('?hide_empty=false&exclude[]=2&exclude[]=4')), `${tools.URL}?page=1&per_page=10&hide_empty=false&exclude=2%2C4`)
    t.same(ids(await list('?hide_empty=false&exclude=999')), [1, 2, 3, 4])
    expectError(t, await list('?exclude=abc'), 400, 'rest_invalid_param', ['exclude'])
  })

  t.test('list: include keeps only those ids, unknown ids match nothing, in all three array forms', async (t) => {
    const { list, create } = await setup(t)
    for (const name of ['A', 'B', 'C', 'D']) await create({ name })
    for (const query of ['include=4&include=2', 'include[]=4&include[]=2', 'include=4,2', 'include=4,2,999']) {
      const res = await list(`?hide_empty=false&${query}`)
      t.equal(res.statusCode, 200, query)
      t.same(ids(res), [2, 4], query)
    }
    const unknown = await list('?hide_empty=false&include=999')
    t.strictSame(unknown.json(), { [kind.collection]: [], rest_url: `${tools.URL}?page=1&per_page=10&hide_empty=false&include=999`, total: 0, total_pages: 0 })
    t.equal(restUrl(await list('?hide_empty=false&include=4&include=2')), `${tools.URL}?page=1&per_page=10&hide_empty=false&include=4%2C2`)
    expectError(t, await list('?include=1,x'), 400, 'rest_invalid_param', ['include'])
  })

  t.test('list: include and exclude together', async (t) => {
    const { list, create } = await setup(t)
    for (const name of ['A', 'B', 'C', 'D']) await create({ name })
    t.same(ids(await list('?hide_empty=false&include=1,2,3&exclude=2')), [1, 3])
  })

}

/** The delete, count and auth tests whose rules are the same for categories and tags. */
export function termWriteTests<R extends TermLike>(kind: TermKind<R>): void {
  const tools = termTools(kind)
  const { setup, items, ids } = tools

  t.test('delete: links from events are removed', async (t) => {
    const { inject, editor, create, db, publishFor } = await setup(t)
    await create({ name: 'A' })
    await create({ name: 'B' })
    const event = await publishFor(1, 2)
    t.same(ids(await inject({ url: `${tools.PATH}?post=${event}` })), [1, 2])
    t.equal((await inject({ method: 'DELETE', url: `${tools.PATH}/1`, headers: editor })).statusCode, 200)
    const links = await db.selectFrom('event_terms').select(['event_id', 'term_id']).orderBy('term_id').execute()
    t.same(links, [{ event_id: event, term_id: 2 }])
    t.same(ids(await inject({ url: `${tools.PATH}?post=${event}` })), [2])
  })

  t.test('delete: a stale If-Match is 412 and nothing is deleted; a matching one deletes', async (t) => {
    const { inject, editor, create } = await setup(t)
    await create({ name: 'Music' })
    const original = String((await inject({ url: `${tools.PATH}/1` })).headers.etag)
    await inject({ method: 'PATCH', url: `${tools.PATH}/1`, headers: editor, payload: { description: 'x' } })
    const stale = await inject({ method: 'DELETE', url: `${tools.PATH}/1`, headers: { ...editor, 'if-match': original } })
    expectError(t, stale, 412, 'rest-precondition-failed')
    t.equal((await inject({ url: `${tools.PATH}/1` })).statusCode, 200, 'still there')
    const current = String((await inject({ url: `${tools.PATH}/1` })).headers.etag)
    const ok = await inject({ method: 'DELETE', url: `${tools.PATH}/1`, headers: { ...editor, 'if-match': current } })
    t.equal(ok.statusCode, 200)
    t.strictSame(ok.json(), kind.record(1, 'Music', { description: 'x' }))
    t.equal((await inject({ url: `${tools.PATH}/1` })).statusCode, 404)
  })

  t.test('delete: ml_language deletes that language\'s version only', async (t) => {
    const { inject, editor, create } = await setup(t)
    await create({ name: 'Music' })
    await create({ name: 'Musik', ml_language: 'de', translation_of: 1 })
    const res = await inject({ method: 'DELETE', url: `${tools.PATH}/1?ml_language=de`, headers: editor })
    t.strictSame(res.json(), kind.record(2, 'Musik', { ml_language: 'de', translations: { en: 1, de: 2 } }))
    t.strictSame((await inject({ url: `${tools.PATH}/1` })).json(), kind.record(1, 'Music'))
  })

  // --------------------------------------------------------------------------------------------- count

  t.test('count is the number of published events linked', async (t) => {
    const { inject, create, db } = await setup(t)
    await create({ name: 'Music' })
    await create({ name: 'Sports' })
    for (const status of ['publish', 'publish', 'draft', 'pending', 'private', 'trash']) {
      await insertEvent(db, { status }, { terms: [1] })
    }
    await insertEvent(db, { status: 'draft' }, { terms: [2] })
    t.equal((await inject({ url: `${tools.PATH}/1` })).json<R>().count, 2)
    t.equal((await inject({ url: `${tools.PATH}/2` })).json<R>().count, 0)
    const listed = await inject({ url: `${tools.PATH}?hide_empty=false` })
    t.same(items(listed).map((c) => [c.id, c.count]), [[1, 2], [2, 0]])
  })

  // ---------------------------------------------------------------------------------------------- auth

  t.test('auth: anonymous or unknown-key writes are 401 rest_forbidden, before the body is checked', async (t) => {
    const { inject, create } = await setup(t)
    await create({ name: 'Music' })
    const writes = [
      { method: 'POST', url: tools.PATH, payload: { name: 'X' } },
      { method: 'POST', url: tools.PATH, payload: { colour: 'red' } },
      { method: 'POST', url: `${tools.PATH}/1`, payload: { name: 'X' } },
      { method: 'PUT', url: `${tools.PATH}/1`, payload: { name: 'X' } },
      { method: 'PATCH', url: `${tools.PATH}/1`, payload: { name: null } },
      { method: 'DELETE', url: `${tools.PATH}/1` },
      { method: 'PATCH', url: `${tools.PATH}/99`, payload: { name: 'X' } },
    ] as const
    for (const headers of [{}, { authorization: 'Bearer not-a-key' }]) {
      for (const write of writes) {
        const res = await inject({ ...write, headers })
        t.equal(res.statusCode, 401, `${write.method} ${write.url}`)
        t.strictSame(res.json(), { code: 'rest_forbidden', message: 'Sorry, you are not allowed to do that.', data: { status: 401 } })
      }
    }
    t.strictSame((await inject({ url: `${tools.PATH}/1` })).json(), kind.record(1, 'Music'), 'nothing changed')
  })

  t.test('auth: subscribers, contributors and authors may not write terms (403 rest_forbidden)', async (t) => {
    const { inject, auth, create } = await setup(t)
    await create({ name: 'Music' })
    for (const role of ['subscriber', 'contributor', 'author'] as const) {
      const headers = await auth(role)
      for (const write of [
        { method: 'POST', url: tools.PATH, payload: { name: 'X' } },
        { method: 'POST', url: `${tools.PATH}/1`, payload: { name: 'X' } },
        { method: 'PUT', url: `${tools.PATH}/1`, payload: { name: 'X' } },
        { method: 'PATCH', url: `${tools.PATH}/1`, payload: { name: 'X' } },
        { method: 'DELETE', url: `${tools.PATH}/1` },
      ] as const) {
        const res = await inject({ ...write, headers })
        t.equal(res.statusCode, 403, `${role} ${write.method} ${write.url}`)
        t.strictSame(res.json(), { code: 'rest_forbidden', message: 'Sorry, you are not allowed to do that.', data: { status: 403 } })
      }
      t.equal((await inject({ url: `${tools.PATH}/1`, headers })).statusCode, 200, `${role} reads`)
    }
    t.strictSame((await inject({ url: `${tools.PATH}/1` })).json(), kind.record(1, 'Music'), 'nothing changed')
  })

  t.test('auth: editors and administrators manage terms; reads are public', async (t) => {
    const { inject, auth } = await setup(t)
    let id = 0
    for (const role of ['editor', 'administrator'] as const) {
      const headers = await auth(role)
      const created = await inject({ method: 'POST', url: tools.PATH, headers, payload: { name: role } })
      t.equal(created.statusCode, 201, `${role} creates`)
      id = created.json<R>().id
      t.equal((await inject({ method: 'PATCH', url: `${tools.PATH}/${id}`, headers, payload: { description: 'd' } })).statusCode, 200, `${role} updates`)
      t.equal((await inject({ method: 'PUT', url: `${tools.PATH}/${id}`, headers, payload: { description: 'e' } })).statusCode, 200)
      t.equal((await inject({ method: 'POST', url: `${tools.PATH}/${id}`, headers, payload: { description: 'f' } })).statusCode, 200)
      t.strictSame((await inject({ url: `${tools.PATH}/${id}` })).json(), kind.record(id, role, { description: 'f' }), 'anonymous read')
      t.equal((await inject({ url: `${tools.PATH}?hide_empty=false` })).statusCode, 200, 'anonymous list')
      t.equal((await inject({ method: 'DELETE', url: `${tools.PATH}/${id}`, headers })).statusCode, 200, `${role} deletes`)
    }
    t.equal(id, 2)
  })
}
