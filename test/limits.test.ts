/**
 * Limits on what one request may make the server do (issue 19): form bodies parse in linear time and
 * take at most 100 values per field (the spec's `maxItems`), and an error answer lists at most 20 names
 * however many the request got wrong, in every language.
 */
import t from 'tap'
import { API, build } from './helpers/build.js'
import { expectError } from './helpers/errors.js'

const FORM = { 'content-type': 'application/x-www-form-urlencoded' }
const EVENT = 'title=Gig&start_date=2026-07-01+20%3A00%3A00&end_date=2026-07-01+23%3A00%3A00'

t.test('a form field repeated 140,000 times is parsed in linear time and refused naming the field', async (t) => {
  const { inject, auth } = await build(t)
  const editor = await auth('editor')
  const payload = `${EVENT}${'&tags=1'.repeat(140_000)}`
  t.ok(Buffer.byteLength(payload) < 1024 * 1024, 'under the body limit')
  const started = performance.now()
  const res = await inject({ method: 'POST', url: `${API}/events`, headers: { ...editor, ...FORM }, payload })
  const elapsed = performance.now() - started
  // Linear: well under a second here; the quadratic copy took minutes for this many values.
  t.ok(elapsed < 5000, `answered in ${Math.round(elapsed)} ms`)
  const body = expectError(t, res, 400, 'rest_invalid_param', ['tags'])
  t.match(body.message, /tags/)
})

t.test('an array field takes at most 100 values, in every form', async (t) => {
  const { inject, auth } = await build(t)
  const editor = await auth('editor')
  const create = await inject({ method: 'POST', url: `${API}/tags`, headers: editor, payload: { name: 'Live' } })
  t.equal(create.statusCode, 201)
  const ids = (n: number) => Array.from({ length: n }, () => '1')
  const fits = await inject({ method: 'POST', url: `${API}/events`, headers: { ...editor, ...FORM }, payload: `${EVENT}&${ids(100).map((v) => `tags=${v}`).join('&')}` })
  t.equal(fits.statusCode, 201, '100 values are accepted')
  const forms = {
    repeated: ids(101).map((v) => `tags=${v}`).join('&'),
    bracketed: ids(101).map((v) => `tags[]=${v}`).join('&'),
    comma: `tags=${ids(101).join(',')}`,
  }
  for (const [name, form] of Object.entries(forms)) {
    const res = await inject({ method: 'POST', url: `${API}/events`, headers: { ...editor, ...FORM }, payload: `${EVENT}&${form}` })
    const body = expectError(t, res, 400, 'rest_invalid_param', ['tags'])
    t.match(body.data.params, { tags: /100/ }, `${name}: the reason names the limit`)
  }
  const json = await inject({ method: 'POST', url: `${API}/events`, headers: editor, payload: { title: 'Gig', start_date: '2026-07-01 20:00:00', end_date: '2026-07-01 23:00:00', tags: ids(101).map(Number) } })
  expectError(t, json, 400, 'rest_invalid_param', ['tags'])
  const query = await inject({ url: `${API}/events?${ids(101).map(() => 'categories=1').join('&')}` })
  expectError(t, query, 400, 'rest_invalid_param', ['categories'])
  const single = await inject({ method: 'POST', url: `${API}/categories`, headers: { ...editor, ...FORM }, payload: 'name=a&name=b&name=c' })
  expectError(t, single, 400, 'rest_invalid_param', ['name'])
})

t.test('an error lists at most 20 names, then how many more, in message and details alike', async (t) => {
  const { inject, auth } = await build(t)
  const editor = await auth('editor')
  const body: Record<string, unknown> = { title: 'Gig', start_date: '2026-07-01 20:00:00', end_date: '2026-07-01 23:00:00' }
  for (let i = 0; i < 60_000; i++) body[`k${i}`] = i
  const expectedNames = Array.from({ length: 20 }, (_, i) => `k${i}`)
  const messages = {
    en: `Invalid parameter(s): ${expectedNames.join(', ')} and 59980 more.`,
  }
  for (const language of ['en', 'de', 'at', 'ch-de', 'ch-fr', 'es'] as const) {
    const res = await inject({ method: 'POST', url: `${API}/events?ml_language=${language}`, headers: editor, payload: body })
    t.ok(res.body.length < 10_000, `${language}: the answer is small (${res.body.length} bytes)`)
    const error = expectError(t, res, 400, 'rest_invalid_param', expectedNames)
    t.equal(error.data.details?.length, 20, `${language}: 20 details`)
    t.match(error.message, /59980|59.980|59 980|59’980/, `${language}: the message says how many more`)
    t.notMatch(error.message, /k20\b/, `${language}: the 21st name is not listed`)
    if (language === 'en') t.equal(error.message, messages.en)
  }
  const few = await inject({ method: 'POST', url: `${API}/categories`, headers: editor, payload: { name: 'Jazz', colour: 'blue' } })
  t.equal(expectError(t, few, 400, 'rest_invalid_param', ['colour']).message, 'Invalid parameter(s): colour.')
})

t.test('DELETE ignores its body, however large: never an undeclared 413', async (t) => {
  const { inject, auth } = await build(t)
  const editor = await auth('editor')
  t.equal((await inject({ method: 'POST', url: `${API}/categories`, headers: editor, payload: { name: 'Rock' } })).statusCode, 201)
  const big = `{"x":"${'a'.repeat(1_100_000)}"}`
  const res = await inject({ method: 'DELETE', url: `${API}/categories/1`, headers: { ...editor, 'content-type': 'application/json' }, payload: big })
  t.equal(res.statusCode, 200, 'deleted; the body is ignored')
  const other = await inject({ method: 'DELETE', url: `${API}/tags/99`, headers: { ...editor, 'content-type': 'text/plain' }, payload: big })
  t.equal(other.statusCode, 404)
})

t.test('a term name is at most 200 characters, and an event names a term by at most as many (no 500 on PostgreSQL)', async (t) => {
  const { inject, auth } = await build(t)
  const editor = await auth('editor')
  // Text no compression shortens: PostgreSQL refused its index row for a name of 9,000 characters (a 500).
  let seed = 1
  const noise = (n: number) => Array.from({ length: n }, () => {
    seed = (seed * 48271) % 2147483647
    return 'abcdefghijklmnopqrstuvwxyz0123456789'[seed % 36]
  }).join('')
  for (const collection of ['categories', 'tags'] as const) {
    const fits = await inject({ method: 'POST', url: `${API}/${collection}`, headers: editor, payload: { name: noise(200) } })
    t.equal(fits.statusCode, 201, `${collection}: 200 characters are accepted`)
    for (const length of [201, 9000]) {
      expectError(t, await inject({ method: 'POST', url: `${API}/${collection}`, headers: editor, payload: { name: noise(length) } }), 400, 'rest_invalid_param', ['name'])
      expectError(t, await inject({ method: 'POST', url: `${API}/${collection}`, headers: { ...editor, ...FORM }, payload: `name=${noise(length)}` }), 400, 'rest_invalid_param', ['name'])
      const id = fits.json<{ id: number }>().id
      expectError(t, await inject({ method: 'POST', url: `${API}/${collection}/${id}`, headers: editor, payload: { name: noise(length) } }), 400, 'rest_invalid_param', ['name'])
      // No term can have such a name: an event naming one is refused by the same bound, in every form.
      expectError(t, await inject({ method: 'POST', url: `${API}/events`, headers: editor, payload: { title: 'Gig', start_date: '2026-07-01 20:00:00', end_date: '2026-07-01 23:00:00', [collection]: [noise(length)] } }), 400, 'rest_invalid_param', [collection])
      for (const form of [`${collection}=${noise(length)}`, `${collection}[]=${noise(length)}`, `${collection}[0]=${noise(length)}`]) {
        expectError(t, await inject({ method: 'POST', url: `${API}/events`, headers: { ...editor, ...FORM }, payload: `${EVENT}&${form}` }), 400, 'rest_invalid_param', [collection])
      }
    }
  }
  const listed = await inject({ url: `${API}/tags?hide_empty=false&per_page=50`, headers: editor })
  t.equal(listed.json<{ total: number }>().total, 1, 'no tag made by a refused request')
})
