/**
 * /tags and /tags/{id} (source §4.10; CONTRACT §2, §3, §5, §6, §7, §10). Tags are categories without
 * `parent`: the rules are the same, names are unique per language.
 */
import t from 'tap'
import type { Schema } from '../src/contract.js'
import { API, build } from './helpers/build.js'
import { insertEvent } from './helpers/fixtures.js'
import { expectError } from './helpers/errors.js'
import { termListTests, termTools, termWriteTests } from './helpers/terms.js'

type Tag = Schema<'Tag'>

const { PATH, URL, setup, names, ids, restUrl } = termTools<Tag>({ collection: 'tags' })

/** The record the server must return for a tag; every field overridable. */
function tag(id: number, name: string, fields: Partial<Tag> = {}): Tag {
  const language = fields.ml_language ?? 'en'
  return {
    id, name, slug: name.toLowerCase(), description: null, count: 0, rest_url: `${URL}/${id}`,
    urls: { self: `${URL}/${id}`, collection: URL }, ml_language: language, translations: { [language]: id }, ...fields,
  }
}

// ---------------------------------------------------------------------------------------------- list

t.test('list: an empty result is page 1 with total 0 and total_pages 0', async (t) => {
  const { list } = await setup(t)
  const res = await list('')
  t.equal(res.statusCode, 200)
  t.strictSame(res.json(), { tags: [], rest_url: `${URL}?page=1&per_page=10`, total: 0, total_pages: 0 })
  t.equal(res.headers['x-total'], '0')
  t.equal(res.headers['x-total-pages'], '0')
  t.equal(res.headers.link, undefined)
})

t.test('list: a page past the last one is 404 tag-archive-page-not-found', async (t) => {
  const { list, create } = await setup(t)
  const empty = await list('?page=2')
  t.equal(empty.statusCode, 404)
  t.strictSame(empty.json(), {
    code: 'tag-archive-page-not-found',
    message: 'The requested tag archive page does not exist.',
    data: { status: 404 },
  })
  for (const name of ['A', 'B', 'C']) await create({ name })
  t.equal((await list('?hide_empty=false&per_page=2&page=2')).statusCode, 200)
  expectError(t, await list('?hide_empty=false&per_page=2&page=3'), 404, 'tag-archive-page-not-found')
})

t.test('list: hide_empty defaults to true and keeps only tags with published events', async (t) => {
  const { list, create, db, publishFor } = await setup(t)
  const used = await create({ name: 'Used' })
  const draftOnly = await create({ name: 'Draft only' })
  await create({ name: 'Unused' })
  await publishFor(used.id)
  await insertEvent(db, { status: 'draft' }, { terms: [draftOnly.id] })

  const byDefault = await list('')
  t.equal(byDefault.statusCode, 200)
  t.strictSame(byDefault.json(), {
    tags: [tag(1, 'Used', { count: 1 })],
    rest_url: `${URL}?page=1&per_page=10`,
    total: 1,
    total_pages: 1,
  })
  t.same(names(await list('?hide_empty=true')), ['Used'])
  t.same(names(await list('?hide_empty=1')), ['Used'])
  t.same(names(await list('?hide_empty=false')), ['Draft only', 'Unused', 'Used'])
  t.same(names(await list('?hide_empty=0')), ['Draft only', 'Unused', 'Used'])
  expectError(t, await list('?hide_empty=yes'), 400, 'rest_invalid_param', ['hide_empty'])
})

t.test('list: default order is by name ascending, case-insensitive', async (t) => {
  const { list, create } = await setup(t)
  await create({ name: 'rock' })
  await create({ name: 'Jazz' })
  await create({ name: 'Blues' })
  await create({ name: 'ambient' })
  const res = await list('?hide_empty=false')
  t.same(ids(res), [4, 3, 2, 1])
  t.same(names(res), ['ambient', 'Blues', 'Jazz', 'rock'])
  t.same(ids(await list('?hide_empty=false&order=asc')), [4, 3, 2, 1])
})

t.test('list: order=desc reverses the order but ties stay by id ascending', async (t) => {
  const { list, create } = await setup(t)
  await create({ name: 'rock' })
  await create({ name: 'Jazz' })
  await create({ name: 'ambient' })
  t.same(ids(await list('?hide_empty=false&order=desc')), [1, 2, 3])
  for (const name of ['x', 'y', 'z']) await create({ name, description: 'same' })
  t.same(ids(await list('?hide_empty=false&orderby=description&order=desc&include=4,5,6')), [4, 5, 6], 'ties by id ascending')
  expectError(t, await list('?order=sideways'), 400, 'rest_invalid_param', ['order'])
})

termListTests({ collection: 'tags', record: tag })

t.test('list: tags have no parent parameter: it is ignored like any unknown parameter', async (t) => {
  const { list, create } = await setup(t)
  await create({ name: 'Rock' })
  const res = await list('?hide_empty=false&parent=99')
  t.equal(res.statusCode, 200)
  t.strictSame(res.json(), { tags: [tag(1, 'Rock')], rest_url: `${URL}?page=1&per_page=10&hide_empty=false`, total: 1, total_pages: 1 })
})

t.test('list: post and its alias event keep the tags of that event; unknown event is 400', async (t) => {
  const { list, create, db } = await setup(t)
  for (const name of ['A', 'B', 'C']) await create({ name })
  const event = await insertEvent(db, { status: 'publish' }, { terms: [1, 3] })
  await insertEvent(db, { status: 'publish' }, { terms: [2] })
  const byPost = await list(`?post=${event}`)
  t.equal(byPost.statusCode, 200)
  t.strictSame(byPost.json(), {
    tags: [tag(1, 'A', { count: 1 }), tag(3, 'C', { count: 1 })],
    rest_url: `${URL}?page=1&per_page=10&post=${event}`,
    total: 2,
    total_pages: 1,
  })
  const byEvent = await list(`?event=${event}`)
  t.same(ids(byEvent), [1, 3])
  t.equal(restUrl(byEvent), `${URL}?page=1&per_page=10&event=${event}`)
  expectError(t, await list('?post=999'), 400, 'rest_invalid_param', ['post'])
  expectError(t, await list('?event=999'), 400, 'rest_invalid_param', ['event'])
  expectError(t, await list('?event=abc'), 400, 'rest_invalid_param', ['event'])
})

t.test('list: post on an event without published status still needs hide_empty=false to show its tags', async (t) => {
  const { list, create, db, inject, editor } = await setup(t)
  await create({ name: 'A' })
  const draft = await insertEvent(db, { status: 'draft' }, { terms: [1] })
  const asEditor = async (query: string) => inject({ url: `${PATH}${query}`, headers: editor })
  t.same(ids(await asEditor(`?post=${draft}`)), [])
  t.same(ids(await asEditor(`?post=${draft}&hide_empty=false`)), [1])
  t.same(ids(await list(`?post=${draft}&hide_empty=false`)), [], 'an event the caller cannot read matches nothing (CONTRACT §6)')
})

t.test('list: slug keeps the tag with exactly that slug', async (t) => {
  const { list, create } = await setup(t)
  await create({ name: 'Rock' })
  await create({ name: 'Rock Classics' })
  const res = await list('?hide_empty=false&slug=rock')
  t.strictSame(res.json(), {
    tags: [tag(1, 'Rock')],
    rest_url: `${URL}?page=1&per_page=10&hide_empty=false&slug=rock`,
    total: 1,
    total_pages: 1,
  })
  t.same(ids(await list('?hide_empty=false&slug=roc')), [])
})

t.test('list: ml_language lists that language only, the default language otherwise', async (t) => {
  const { list, create } = await setup(t)
  await create({ name: 'Music' })
  await create({ name: 'Musik', ml_language: 'de', translation_of: 1 })
  await create({ name: 'Sport' }, '?ml_language=de')
  const english = await list('?hide_empty=false')
  t.same(ids(english), [1])
  t.equal(english.headers['content-language'], 'en')
  const german = await list('?hide_empty=false&ml_language=de')
  t.strictSame(german.json(), {
    tags: [
      tag(2, 'Musik', { ml_language: 'de', translations: { en: 1, de: 2 } }),
      tag(3, 'Sport', { ml_language: 'de' }),
    ],
    rest_url: `${URL}?page=1&per_page=10&hide_empty=false&ml_language=de`,
    total: 2,
    total_pages: 1,
  })
  t.equal(german.headers['content-language'], 'de')
  t.same(ids(await list('?hide_empty=false&ml_language=es')), [])
  expectError(t, await list('?ml_language=fr'), 400, 'rest_invalid_param', ['ml_language'])
  expectError(t, await list('?ml_language=DE'), 400, 'rest_invalid_param', ['ml_language'])
  expectError(t, await list('?ml_language='), 400, 'rest_invalid_param', ['ml_language'])
})

t.test('list: every parameter combined; rest_url carries each one sent, URL-encoded, arrays as comma lists', async (t) => {
  const { list, create, db } = await setup(t)
  await create({ name: 'Music' }, '?ml_language=de')
  await create({ name: 'Rock & Roll', description: 'b' }, '?ml_language=de')
  await create({ name: 'Rock Ballads', description: 'a' }, '?ml_language=de')
  await create({ name: 'Rockabilly', description: 'c' }, '?ml_language=de')
  await create({ name: 'Rock Opera' }, '?ml_language=de')
  await create({ name: 'Jazz' }, '?ml_language=de')
  // In English: left out by ml_language=de although included and linked.
  await create({ name: 'Rock English', description: 'z' })
  const event = await insertEvent(db, { language: 'de' }, { terms: [2, 3, 4, 5, 6, 7] })
  const params = (page: number, slug: boolean) => '?ml_language=de&search=ROCK%20&include=2&include=3&include=4&include=6&include=7&exclude=4'
    + `&orderby=description&order=desc&hide_empty=1&event=${event}${slug ? '&slug=rock-roll' : ''}&per_page=1&page=${page}&ignored=x`
  const res = await list(params(1, true))
  t.equal(res.statusCode, 200)
  const sent = (slug: boolean) => 'ml_language=de&search=ROCK%20&include=2%2C3%2C4%2C6%2C7&exclude=4&orderby=description&order=desc'
    + `&hide_empty=true&event=${event}${slug ? '&slug=rock-roll' : ''}`
  t.strictSame(res.json(), {
    tags: [tag(2, 'Rock & Roll', { slug: 'rock-roll', description: 'b', count: 1, ml_language: 'de' })],
    rest_url: `${URL}?page=1&per_page=1&${sent(true)}`,
    total: 1,
    total_pages: 1,
  })
  t.equal(res.headers['x-total'], '1')
  t.equal(res.headers.link, undefined)

  const first = await list(params(1, false))
  t.same(ids(first), [2])
  t.equal(first.json().total, 2)
  t.equal(first.json().next_rest_url, `${URL}?page=2&per_page=1&${sent(false)}`)
  const second = await list(params(2, false))
  t.strictSame(second.json(), {
    tags: [tag(3, 'Rock Ballads', { slug: 'rock-ballads', description: 'a', count: 1, ml_language: 'de' })],
    rest_url: `${URL}?page=2&per_page=1&${sent(false)}`,
    previous_rest_url: `${URL}?page=1&per_page=1&${sent(false)}`,
    total: 2,
    total_pages: 2,
  })
  t.equal(second.headers.link, `<${URL}?page=1&per_page=1&${sent(false)}>; rel="prev"`)
})

t.test('list: unknown query parameters are ignored', async (t) => {
  const { list, create } = await setup(t)
  await create({ name: 'A' })
  const res = await list('?hide_empty=false&colour=red')
  t.equal(res.statusCode, 200)
  t.same(ids(res), [1])
})

// -------------------------------------------------------------------------------------------- create

t.test('create: 201 with Location, ETag and the record', async (t) => {
  const { inject, editor } = await setup(t)
  const res = await inject({ method: 'POST', url: PATH, headers: editor, payload: { name: 'Live Music', description: 'Gigs & concerts' } })
  t.equal(res.statusCode, 201)
  t.equal(res.headers.location, `${URL}/1`)
  t.match(res.headers.etag, /^"[^"]+"$/, 'a strong ETag')
  t.strictSame(res.json(), tag(1, 'Live Music', { slug: 'live-music', description: 'Gigs & concerts' }))
  const read = await inject({ url: `${PATH}/1` })
  t.equal(read.headers.etag, res.headers.etag, 'the ETag of the stored version')
  t.strictSame(read.json(), res.json())
})

t.test('create: strings are stored exactly as written', async (t) => {
  const { create } = await setup(t)
  const made = await create({ name: '  <b>Rock</b> &amp; "Roll" ', description: '  <p>Loud</p>\n' })
  t.equal(made.name, '  <b>Rock</b> &amp; "Roll" ')
  t.equal(made.description, '  <p>Loud</p>\n')
  t.equal(made.slug, 'b-rock-b-amp-roll')
})

t.test('create: name is required (rest_missing_callback_param listing it)', async (t) => {
  const { inject, editor } = await setup(t)
  for (const payload of [{ description: 'x' }, {}, undefined]) {
    const res = await inject({ method: 'POST', url: PATH, headers: editor, ...(payload !== undefined ? { payload } : {}) })
    expectError(t, res, 400, 'rest_missing_callback_param', ['name'])
    t.equal(res.json().message, 'Missing parameter(s): name.')
  }
  expectError(t, await inject({ method: 'POST', url: PATH, headers: editor, payload: { name: '' } }), 400, 'rest_invalid_param', ['name'])
  expectError(t, await inject({ method: 'POST', url: PATH, headers: editor, payload: { name: 5 } }), 400, 'rest_invalid_param', ['name'])
  t.equal((await inject({ url: `${PATH}?hide_empty=false` })).json().total, 0, 'nothing created')
})

t.test('create: the slug is made from the name and made unique with -2, -3', async (t) => {
  const { create } = await setup(t)
  const a = await create({ name: 'Rock & Roll' })
  const b = await create({ name: 'Rock Roll' })
  const c = await create({ name: 'rock-roll!' })
  t.same([a.slug, b.slug, c.slug], ['rock-roll', 'rock-roll-2', 'rock-roll-3'])
  t.equal((await create({ name: 'Über Straße Café' })).slug, 'ueber-strasse-cafe')
  t.equal((await create({ name: '!!!' })).slug, 'tag-5')
  // A name is at most 200 characters; folded (ü → ue) it makes a slug longer than 200, cut there.
  t.equal((await create({ name: 'ü'.repeat(150) })).slug, 'ue'.repeat(100))
})

t.test('create: slugs are unique per resource: a category and a tag may share one', async (t) => {
  const { inject, editor, create } = await setup(t)
  const category = await inject({ method: 'POST', url: `${API}/categories`, headers: editor, payload: { name: 'Rock' } })
  t.equal(category.json<{ slug: string }>().slug, 'rock')
  t.equal((await create({ name: 'Rock' })).slug, 'rock')
})

t.test('create: an explicit slug is normalised and made unique', async (t) => {
  const { create } = await setup(t)
  t.equal((await create({ name: 'One', slug: '  My Slug!! ' })).slug, 'my-slug')
  t.equal((await create({ name: 'Two', slug: 'MY-SLUG' })).slug, 'my-slug-2')
  t.equal((await create({ name: 'Three', slug: 'my slug' })).slug, 'my-slug-3')
  t.equal((await create({ name: 'Four', slug: '' })).slug, 'four', 'an empty slug falls back to the name')
  t.equal((await create({ name: 'my slug 2' })).slug, 'my-slug-2-2', 'a slug made from the name avoids taken ones too')
})

t.test('create: names are unique per language (term_exists)', async (t) => {
  const { inject, editor, create } = await setup(t)
  await create({ name: 'Rock' })
  for (const name of ['Rock', 'ROCK', 'rock']) {
    const res = await inject({ method: 'POST', url: PATH, headers: editor, payload: { name } })
    t.equal(res.statusCode, 400, name)
    t.strictSame(res.json(), {
      code: 'term_exists',
      message: 'A term with the name provided already exists with this parent.',
      data: {
        status: 400,
        params: { name: 'A term with the name provided already exists with this parent.' },
        details: [{ field: 'name', message: 'A term with the name provided already exists with this parent.' }],
      },
    })
  }
  const german = await create({ name: 'Rock', ml_language: 'de' })
  t.strictSame(german, tag(2, 'Rock', { ml_language: 'de' }), 'same name and slug in another language')
  const category = await inject({ method: 'POST', url: `${API}/categories`, headers: editor, payload: { name: 'Rock' } })
  t.equal(category.statusCode, 201, 'a category may have the name of a tag')
  t.equal((await inject({ url: `${PATH}?hide_empty=false` })).json().total, 1)
})

t.test('create: tags have no parent: the field is rejected', async (t) => {
  const { inject, editor } = await setup(t)
  for (const parent of [0, 1]) {
    const res = await inject({ method: 'POST', url: PATH, headers: editor, payload: { name: 'Rock', parent } })
    expectError(t, res, 400, 'rest_invalid_param', ['parent'])
  }
  t.equal((await inject({ url: `${PATH}?hide_empty=false` })).json().total, 0)
})

t.test('create: an unknown body field is 400 naming it', async (t) => {
  const { inject, editor } = await setup(t)
  const res = await inject({ method: 'POST', url: PATH, headers: editor, payload: { name: 'Rock', colour: 'red' } })
  expectError(t, res, 400, 'rest_invalid_param', ['colour'])
  t.equal(res.json().message, 'Invalid parameter(s): colour.')
  t.equal((await inject({ url: `${PATH}?hide_empty=false` })).json().total, 0)
})

t.test('create: a form-urlencoded body works like JSON', async (t) => {
  const { inject, editor, create } = await setup(t)
  await create({ name: 'Music' })
  const res = await inject({
    method: 'POST', url: PATH, headers: { ...editor, 'content-type': 'application/x-www-form-urlencoded' },
    payload: 'name=Rock+%26+Roll&description=Loud%20%26%20proud&slug=Rock+N+Roll&ml_language=en',
  })
  t.equal(res.statusCode, 201)
  t.equal(res.headers.location, `${URL}/2`)
  t.strictSame(res.json(), tag(2, 'Rock & Roll', { slug: 'rock-n-roll', description: 'Loud & proud' }))
  const bad = await inject({
    method: 'POST', url: PATH, headers: { ...editor, 'content-type': 'application/x-www-form-urlencoded' },
    payload: 'name=Jazz&translation_of=abc',
  })
  expectError(t, bad, 400, 'rest_invalid_param', ['translation_of'])
  const unknown = await inject({
    method: 'POST', url: PATH, headers: { ...editor, 'content-type': 'application/x-www-form-urlencoded' },
    payload: 'name=Jazz&colour=red',
  })
  expectError(t, unknown, 400, 'rest_invalid_param', ['colour'])
  const missing = await inject({
    method: 'POST', url: PATH, headers: { ...editor, 'content-type': 'application/x-www-form-urlencoded' },
    payload: 'description=x',
  })
  expectError(t, missing, 400, 'rest_missing_callback_param', ['name'])
})

t.test('create: other media types are 415, malformed JSON 400', async (t) => {
  const { inject, editor } = await setup(t)
  const text = await inject({ method: 'POST', url: PATH, headers: { ...editor, 'content-type': 'text/plain' }, payload: 'name=Rock' })
  expectError(t, text, 415, 'rest_unsupported_media_type')
  const broken = await inject({ method: 'POST', url: PATH, headers: { ...editor, 'content-type': 'application/json' }, payload: '{"name":' })
  expectError(t, broken, 400, 'rest_invalid_json')
})

t.test('create: ml_language in the body, in the query, and both (the body wins)', async (t) => {
  const { inject, editor } = await setup(t)
  const inBody = await inject({ method: 'POST', url: PATH, headers: editor, payload: { name: 'Musik', ml_language: 'de' } })
  t.equal(inBody.statusCode, 201)
  t.equal(inBody.headers['content-language'], 'de')
  t.strictSame(inBody.json(), tag(1, 'Musik', { ml_language: 'de' }))
  const inQuery = await inject({ method: 'POST', url: `${PATH}?ml_language=es`, headers: editor, payload: { name: 'Música' } })
  t.strictSame(inQuery.json(), tag(2, 'Música', { slug: 'musica', ml_language: 'es' }))
  t.equal(inQuery.headers['content-language'], 'es')
  const both = await inject({ method: 'POST', url: `${PATH}?ml_language=es`, headers: editor, payload: { name: 'Musique', ml_language: 'ch-fr' } })
  t.strictSame(both.json(), tag(3, 'Musique', { ml_language: 'ch-fr' }))
  t.equal(both.headers['content-language'], 'ch-fr')
  const neither = await inject({ method: 'POST', url: PATH, headers: editor, payload: { name: 'Music' } })
  t.equal(neither.json<Tag>().ml_language, 'en')
  expectError(t, await inject({ method: 'POST', url: PATH, headers: editor, payload: { name: 'X', ml_language: 'fr' } }), 400, 'rest_invalid_param', ['ml_language'])
  expectError(t, await inject({ method: 'POST', url: `${PATH}?ml_language=xx`, headers: editor, payload: { name: 'X' } }), 400, 'rest_invalid_param', ['ml_language'])
})

t.test('create: translation_of links translations and allows one record per language', async (t) => {
  const { inject, editor, create } = await setup(t)
  const music = await create({ name: 'Music' })
  const musik = await create({ name: 'Musik', ml_language: 'de', translation_of: music.id })
  t.strictSame(musik, tag(2, 'Musik', { ml_language: 'de', translations: { en: 1, de: 2 } }))
  const musica = await create({ name: 'Música', translation_of: musik.id }, '?ml_language=es')
  t.strictSame(musica, tag(3, 'Música', { slug: 'musica', ml_language: 'es', translations: { en: 1, de: 2, es: 3 } }))
  const original = await inject({ url: `${PATH}/1` })
  t.strictSame(original.json(), tag(1, 'Music', { translations: { en: 1, de: 2, es: 3 } }))

  const post = (payload: Record<string, unknown>) => inject({ method: 'POST', url: PATH, headers: editor, payload })
  expectError(t, await post({ name: 'Musik 2', ml_language: 'de', translation_of: music.id }), 400, 'rest_invalid_param', ['translation_of'])
  const twice = await post({ name: 'Music 2', translation_of: musik.id })
  t.equal(twice.statusCode, 400)
  t.strictSame(twice.json(), {
    code: 'rest_invalid_param',
    message: 'Invalid parameter(s): translation_of.',
    data: {
      status: 400,
      params: { translation_of: 'The translation group already has a version in this language.' },
      details: [{ field: 'translation_of', message: 'The translation group already has a version in this language.' }],
    },
  })
  expectError(t, await post({ name: 'Musique', ml_language: 'ch-fr', translation_of: 99 }), 400, 'rest_invalid_param', ['translation_of'])
  const category = await inject({ method: 'POST', url: `${API}/categories`, headers: editor, payload: { name: 'Category' } })
  expectError(t, await post({ name: 'Musique', ml_language: 'ch-fr', translation_of: category.json<{ id: number }>().id }), 400, 'rest_invalid_param', ['translation_of'])
  expectError(t, await post({ name: 'Musique', ml_language: 'ch-fr', translation_of: 0 }), 400, 'rest_invalid_param', ['translation_of'])
  t.equal((await inject({ url: `${PATH}?hide_empty=false&ml_language=de` })).json().total, 1, 'nothing created')
})

t.test('create: a body over 1 MiB is 413 rest_payload_too_large', async (t) => {
  const { inject, editor } = await setup(t)
  const res = await inject({ method: 'POST', url: PATH, headers: editor, payload: { name: 'x'.repeat(1024 * 1024 + 1) } })
  expectError(t, res, 413, 'rest_payload_too_large')
  t.equal((await inject({ url: `${PATH}?hide_empty=false` })).json().total, 0)
})

// ---------------------------------------------------------------------------------------------- read

t.test('read: 200 with the record and its ETag', async (t) => {
  const { inject, create, publishFor } = await setup(t)
  await create({ name: 'Music', description: 'All music' })
  await create({ name: 'Rock' })
  await publishFor(2)
  const res = await inject({ url: `${PATH}/2` })
  t.equal(res.statusCode, 200)
  t.match(res.headers.etag, /^"[^"]+"$/)
  t.strictSame(res.json(), tag(2, 'Rock', { count: 1 }))
  t.strictSame((await inject({ url: `${PATH}/1/` })).json(), tag(1, 'Music', { description: 'All music' }), 'trailing slash')
})

t.test('read: an unknown id is 404 rest-tag-not-found; a category id is not a tag', async (t) => {
  const { inject, editor } = await setup(t)
  const res = await inject({ url: `${PATH}/42` })
  t.equal(res.statusCode, 404)
  t.strictSame(res.json(), { code: 'rest-tag-not-found', message: 'Tag with ID 42 does not exist.', data: { status: 404 } })
  const category = await inject({ method: 'POST', url: `${API}/categories`, headers: editor, payload: { name: 'A category' } })
  expectError(t, await inject({ url: `${PATH}/${category.json<{ id: number }>().id}` }), 404, 'rest-tag-not-found')
  expectError(t, await inject({ url: `${PATH}/abc` }), 404, 'rest_no_route')
})

t.test('read: If-None-Match with the current ETag is 304; with an old one 200', async (t) => {
  const { inject, editor, create } = await setup(t)
  await create({ name: 'Music' })
  const first = await inject({ url: `${PATH}/1` })
  const etag = String(first.headers.etag)
  const notModified = await inject({ url: `${PATH}/1`, headers: { 'if-none-match': etag } })
  t.equal(notModified.statusCode, 304)
  t.equal(notModified.body, '')
  t.equal(notModified.headers.etag, etag)
  t.equal((await inject({ url: `${PATH}/1`, headers: { 'if-none-match': `"other", ${etag}` } })).statusCode, 304)
  t.equal((await inject({ url: `${PATH}/1`, headers: { 'if-none-match': '*' } })).statusCode, 304)

  await inject({ method: 'PATCH', url: `${PATH}/1`, headers: editor, payload: { description: 'changed' } })
  const changed = await inject({ url: `${PATH}/1`, headers: { 'if-none-match': etag } })
  t.equal(changed.statusCode, 200)
  t.not(changed.headers.etag, etag)
  t.equal(changed.json<Tag>().description, 'changed')
})

t.test('read: ml_language picks the translation, or 404 when there is none', async (t) => {
  const { inject, create } = await setup(t)
  await create({ name: 'Music' })
  await create({ name: 'Musik', ml_language: 'de', translation_of: 1 })
  const german = await inject({ url: `${PATH}/1?ml_language=de` })
  t.equal(german.statusCode, 200)
  t.strictSame(german.json(), tag(2, 'Musik', { ml_language: 'de', translations: { en: 1, de: 2 } }))
  t.equal(german.headers['content-language'], 'de')
  t.equal((await inject({ url: `${PATH}/2?ml_language=en` })).json<Tag>().id, 1)
  t.equal((await inject({ url: `${PATH}/2?ml_language=de` })).json<Tag>().id, 2)
  t.equal((await inject({ url: `${PATH}/2` })).json<Tag>().id, 2, 'without ml_language: the record whatever its language')
  const missing = await inject({ url: `${PATH}/1?ml_language=es` })
  t.equal(missing.statusCode, 404)
  t.equal(missing.json().code, 'rest-tag-not-found')
  expectError(t, await inject({ url: `${PATH}/1?ml_language=xx` }), 400, 'rest_invalid_param', ['ml_language'])
})

// -------------------------------------------------------------------------------------------- update

for (const method of ['POST', 'PUT', 'PATCH'] as const) {
  t.test(`update (${method}): partial, omitted fields keep their value, a new ETag`, async (t) => {
    const { inject, editor, create } = await setup(t)
    await create({ name: 'Music' })
    await create({ name: 'Rock', description: 'Loud', slug: 'rock-music' })
    const before = await inject({ url: `${PATH}/2` })
    const res = await inject({ method, url: `${PATH}/2`, headers: editor, payload: { name: 'Rock and Roll' } })
    t.equal(res.statusCode, 200)
    t.strictSame(res.json(), tag(2, 'Rock and Roll', { slug: 'rock-music', description: 'Loud' }))
    t.match(res.headers.etag, /^"[^"]+"$/)
    t.not(res.headers.etag, before.headers.etag)
    const after = await inject({ url: `${PATH}/2` })
    t.equal(after.headers.etag, res.headers.etag)
    t.strictSame(after.json(), res.json())

    const described = await inject({ method, url: `${PATH}/2`, headers: editor, payload: { description: 'Louder' } })
    t.strictSame(described.json(), tag(2, 'Rock and Roll', { slug: 'rock-music', description: 'Louder' }))
    t.not(described.headers.etag, res.headers.etag)
  })
}

t.test('update: null clears the description; null name is 400 and changes nothing', async (t) => {
  const { inject, editor, create } = await setup(t)
  await create({ name: 'Music', description: 'All of it' })
  const cleared = await inject({ method: 'PATCH', url: `${PATH}/1`, headers: editor, payload: { description: null } })
  t.equal(cleared.statusCode, 200)
  t.strictSame(cleared.json(), tag(1, 'Music'))
  const etag = cleared.headers.etag
  for (const payload of [{ name: null }, { name: '' }, { name: null, description: 'x' }, { slug: null }, { parent: 0 }]) {
    expectError(t, await inject({ method: 'PUT', url: `${PATH}/1`, headers: editor, payload }), 400, 'rest_invalid_param', [Object.keys(payload)[0] ?? ''])
  }
  const read = await inject({ url: `${PATH}/1` })
  t.strictSame(read.json(), tag(1, 'Music'))
  t.equal(read.headers.etag, etag, 'nothing written')
})

t.test('update: a form body; an empty description clears it', async (t) => {
  const { inject, editor, create } = await setup(t)
  await create({ name: 'Music', description: 'All of it' })
  await create({ name: 'Rock' })
  const res = await inject({
    method: 'POST', url: `${PATH}/2`, headers: { ...editor, 'content-type': 'application/x-www-form-urlencoded' },
    payload: 'name=Rock+Music&description=Guitars',
  })
  t.equal(res.statusCode, 200)
  t.strictSame(res.json(), tag(2, 'Rock Music', { slug: 'rock', description: 'Guitars' }))
  const cleared = await inject({
    method: 'PATCH', url: `${PATH}/1`, headers: { ...editor, 'content-type': 'application/x-www-form-urlencoded' },
    payload: 'description=',
  })
  t.strictSame(cleared.json(), tag(1, 'Music'))
})

t.test('update: an empty body changes nothing but the version', async (t) => {
  const { inject, editor, create } = await setup(t)
  const made = await create({ name: 'Music', description: 'x' })
  const res = await inject({ method: 'PATCH', url: `${PATH}/1`, headers: editor })
  t.equal(res.statusCode, 200)
  t.strictSame(res.json(), made)
})

t.test('update: the slug is normalised and kept unique; renaming keeps the slug', async (t) => {
  const { inject, editor, create } = await setup(t)
  await create({ name: 'Music' })
  await create({ name: 'Rock' })
  const renamed = await inject({ method: 'PATCH', url: `${PATH}/2`, headers: editor, payload: { name: 'Heavy Metal' } })
  t.equal(renamed.json<Tag>().slug, 'rock')
  const clash = await inject({ method: 'PATCH', url: `${PATH}/2`, headers: editor, payload: { slug: 'MUSIC' } })
  t.strictSame(clash.json(), tag(2, 'Heavy Metal', { slug: 'music-2' }))
  const same = await inject({ method: 'PATCH', url: `${PATH}/2`, headers: editor, payload: { slug: 'music-2' } })
  t.equal(same.json<Tag>().slug, 'music-2', 'its own slug is not a clash')
  const spaced = await inject({ method: 'PATCH', url: `${PATH}/2`, headers: editor, payload: { slug: ' Heavy  Metal! ' } })
  t.equal(spaced.json<Tag>().slug, 'heavy-metal')
})

t.test('update: the name stays unique per language (term_exists)', async (t) => {
  const { inject, editor, create } = await setup(t)
  await create({ name: 'Music' })
  await create({ name: 'Rock' })
  await create({ name: 'Rock', ml_language: 'de' })
  const rename = await inject({ method: 'PATCH', url: `${PATH}/1`, headers: editor, payload: { name: 'ROCK' } })
  expectError(t, rename, 400, 'term_exists', ['name'])
  t.strictSame((await inject({ url: `${PATH}/1` })).json(), tag(1, 'Music'), 'nothing written')
  const recase = await inject({ method: 'PATCH', url: `${PATH}/2`, headers: editor, payload: { name: 'ROCK' } })
  t.equal(recase.statusCode, 200, 'a term may change the case of its own name')
  t.equal(recase.json<Tag>().name, 'ROCK')
  const german = await inject({ method: 'PATCH', url: `${PATH}/3`, headers: editor, payload: { name: 'Music' } })
  t.equal(german.statusCode, 200, 'the name is free in the other language')
  t.strictSame(german.json(), tag(3, 'Music', { slug: 'rock', ml_language: 'de' }))
})

t.test('update: tags have no parent: the field is rejected and nothing is written', async (t) => {
  const { inject, editor, create } = await setup(t)
  await create({ name: 'A' })
  await create({ name: 'B' })
  for (const method of ['POST', 'PUT', 'PATCH'] as const) {
    const res = await inject({ method, url: `${PATH}/2`, headers: editor, payload: { name: 'C', parent: 1 } })
    expectError(t, res, 400, 'rest_invalid_param', ['parent'])
  }
  t.strictSame((await inject({ url: `${PATH}/2` })).json(), tag(2, 'B'))
})

t.test('update: a stale If-Match is 412 and nothing is written; a matching one is 200 with a new ETag', async (t) => {
  const { inject, editor, create } = await setup(t)
  await create({ name: 'Music' })
  const original = String((await inject({ url: `${PATH}/1` })).headers.etag)
  const first = await inject({ method: 'PATCH', url: `${PATH}/1`, headers: { ...editor, 'if-match': original }, payload: { description: 'first' } })
  t.equal(first.statusCode, 200)
  const current = String(first.headers.etag)
  t.not(current, original)

  const stale = await inject({ method: 'PUT', url: `${PATH}/1`, headers: { ...editor, 'if-match': original }, payload: { name: 'Lost update' } })
  t.equal(stale.statusCode, 412)
  t.strictSame(stale.json(), {
    code: 'rest-precondition-failed',
    message: 'The record has changed since it was read (If-Match does not match its current ETag).',
    data: { status: 412 },
  })
  const read = await inject({ url: `${PATH}/1` })
  t.strictSame(read.json(), tag(1, 'Music', { description: 'first' }))
  t.equal(read.headers.etag, current)

  const matching = await inject({ method: 'POST', url: `${PATH}/1`, headers: { ...editor, 'if-match': current }, payload: { name: 'Sound' } })
  t.equal(matching.statusCode, 200)
  t.strictSame(matching.json(), tag(1, 'Sound', { slug: 'music', description: 'first' }))
  t.not(matching.headers.etag, current)
  t.equal((await inject({ method: 'PATCH', url: `${PATH}/1`, headers: { ...editor, 'if-match': '*' }, payload: {} })).statusCode, 200)
})

t.test('update: unknown id is 404; unknown or read-only fields are 400', async (t) => {
  const { inject, editor, create } = await setup(t)
  await create({ name: 'Music' })
  expectError(t, await inject({ method: 'PATCH', url: `${PATH}/9`, headers: editor, payload: { name: 'X' } }), 404, 'rest-tag-not-found')
  for (const field of ['translation_of', 'id', 'count', 'colour']) {
    expectError(t, await inject({ method: 'PATCH', url: `${PATH}/1`, headers: editor, payload: { [field]: 2 } }), 400, 'rest_invalid_param', [field])
  }
})

t.test('update and delete: checks run fields (400), then lookup (404), then If-Match (412)', async (t) => {
  const { inject, editor, create } = await setup(t)
  await create({ name: 'Music' })
  const stale = { ...editor, 'if-match': '"stale"' }
  expectError(t, await inject({ method: 'PATCH', url: `${PATH}/99`, headers: stale, payload: { colour: 'red' } }), 400, 'rest_invalid_param', ['colour'])
  expectError(t, await inject({ method: 'PATCH', url: `${PATH}/99`, headers: stale, payload: { name: 'X' } }), 404, 'rest-tag-not-found')
  expectError(t, await inject({ method: 'DELETE', url: `${PATH}/99`, headers: stale }), 404, 'rest-tag-not-found')
  expectError(t, await inject({ method: 'PATCH', url: `${PATH}/1`, headers: stale, payload: { name: 'X' } }), 412, 'rest-precondition-failed')
  expectError(t, await inject({ method: 'DELETE', url: `${PATH}/1`, headers: stale }), 412, 'rest-precondition-failed')
  t.strictSame((await inject({ url: `${PATH}/1` })).json(), tag(1, 'Music'))
})

t.test('update: ml_language selects the version to change; its language never changes', async (t) => {
  const { inject, editor, create } = await setup(t)
  await create({ name: 'Music' })
  await create({ name: 'Musik', ml_language: 'de', translation_of: 1 })
  const res = await inject({ method: 'PATCH', url: `${PATH}/1?ml_language=de`, headers: editor, payload: { description: 'Alle Musik' } })
  t.equal(res.statusCode, 200)
  t.strictSame(res.json(), tag(2, 'Musik', { description: 'Alle Musik', ml_language: 'de', translations: { en: 1, de: 2 } }))
  const body = await inject({ method: 'PATCH', url: `${PATH}/2`, headers: editor, payload: { ml_language: 'en', name: 'All Music' } })
  t.strictSame(body.json(), tag(1, 'All Music', { slug: 'music', translations: { en: 1, de: 2 } }))
  expectError(t, await inject({ method: 'PATCH', url: `${PATH}/1?ml_language=es`, headers: editor, payload: { name: 'X' } }), 404, 'rest-tag-not-found')
})

// -------------------------------------------------------------------------------------------- delete

t.test('delete: permanent, 200 with the deleted record, then 404', async (t) => {
  const { inject, editor, create, publishFor } = await setup(t)
  await create({ name: 'Music', description: 'All' })
  await publishFor(1)
  const res = await inject({ method: 'DELETE', url: `${PATH}/1`, headers: editor })
  t.equal(res.statusCode, 200)
  t.strictSame(res.json(), tag(1, 'Music', { description: 'All', count: 1 }))
  expectError(t, await inject({ url: `${PATH}/1` }), 404, 'rest-tag-not-found')
  expectError(t, await inject({ method: 'DELETE', url: `${PATH}/1`, headers: editor }), 404, 'rest-tag-not-found')
  expectError(t, await inject({ method: 'PATCH', url: `${PATH}/1`, headers: editor, payload: { name: 'X' } }), 404, 'rest-tag-not-found')
  t.equal((await inject({ url: `${PATH}?hide_empty=false` })).json().total, 0)
  const next = await create({ name: 'Music' })
  t.equal(next.id, 2, 'ids are never reused')
  t.equal(next.slug, 'music', 'the slug is free again')
})



termWriteTests({ collection: 'tags', record: tag })

t.test('an empty include or exclude list is 400 naming it, on tags and categories (CONTRACT §1: none is silently dropped)', async (t) => {
  const { inject, auth } = await build(t)
  const editor = await auth('editor')
  await inject({ method: 'POST', url: `${API}/tags`, headers: editor, payload: { name: 'One' } })
  for (const collection of ['tags', 'categories']) {
    for (const name of ['include', 'exclude']) {
      for (const empty of [`${name}=`, `${name}[]=`, `${name}=,`]) {
        expectError(t, await inject({ url: `${API}/${collection}?${empty}&hide_empty=false` }), 400, 'rest_invalid_param', [name])
      }
    }
  }
  t.equal((await inject({ url: `${API}/tags?include=1&hide_empty=false` })).json().total, 1)
})
