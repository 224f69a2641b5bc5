/**
 * CONTRACT §9: a client generated from the served document with openapi-typescript and used with
 * openapi-fetch compiles under `tsc --strict` — checked for real, in two languages of the document.
 */
import { execFileSync } from 'node:child_process'
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import t from 'tap'
import { API, build } from './helpers/build.js'

const root = new URL('..', import.meta.url).pathname
const bin = (name: string) => join(root, 'node_modules/.bin', name)

const CLIENT = `
import createClient from 'openapi-fetch'
import type { components, paths } from './api.js'

type Event = components['schemas']['Event']

export async function demo(): Promise<Event['title'] | undefined> {
  // JSON answers (events also come as text/calendar, CONTRACT §14: openapi-fetch picks the media type).
  const client = createClient<paths, 'application/json'>({ baseUrl: 'http://calendar.test/calendar/events/v1' })
  const list = await client.GET('/events', { params: { query: { per_page: 5, categories: [1, 'rock'], featured: true, ml_language: 'de' } } })
  const first: Event | undefined = list.data?.events[0]
  const one = await client.GET('/events/{id}', { params: { path: { id: 1 }, query: { password: 'x' } } })
  await client.GET('/events/by-slug/{slug}', { params: { path: { slug: 'concert' } } })
  const created = await client.POST('/venues', { body: { venue: 'Hall', show_map: 'yes' }, headers: { Authorization: 'Bearer k' } })
  if (created.error !== undefined) return created.error.message
  // Safe retries (CONTRACT §18): a create sent again with its Idempotency-Key is answered the same, once created.
  const retried = await client.POST('/events', {
    params: { header: { 'Idempotency-Key': 'c0ffee-1' } },
    body: { title: 'Jazz Night', start_date: '2026-07-01 19:00', end_date: '2026-07-01 22:00' },
    headers: { Authorization: 'Bearer k' },
  })
  const replayed: boolean = retried.response.headers.get('Idempotent-Replayed') === 'true'
  if (retried.error !== undefined && !replayed) return retried.error.code
  await client.PATCH('/categories/{id}', { params: { path: { id: 2 } }, body: { description: null } })
  await client.DELETE('/events/{id}', { params: { path: { id: 1 }, query: { force: true } } })
  // @ts-expect-error: an unknown path does not compile
  await client.GET('/nope')
  // @ts-expect-error: a wrong body type does not compile
  await client.POST('/tags', { body: { name: 42 } })
  return one.data?.title ?? first?.title
}
`

t.test('a client generated from /doc compiles under tsc --strict', async (t) => {
  const { inject } = await build(t)
  for (const language of ['en', 'ch-fr']) {
    const dir = t.testdir({ 'package.json': JSON.stringify({ type: 'module' }) })
    const doc = await inject({ url: `${API}/doc?ml_language=${language}` })
    t.equal(doc.statusCode, 200)
    writeFileSync(join(dir, 'openapi.json'), doc.body)
    execFileSync(bin('openapi-typescript'), [join(dir, 'openapi.json'), '-o', join(dir, 'api.ts')], { stdio: 'pipe' })
    writeFileSync(join(dir, 'client.ts'), CLIENT)
    // Resolve openapi-fetch from this project's node_modules.
    writeFileSync(join(dir, 'tsconfig.json'), JSON.stringify({
      compilerOptions: {
        strict: true, noEmit: true, target: 'ES2022', module: 'NodeNext', moduleResolution: 'NodeNext', skipLibCheck: false,
        types: [], lib: ['ES2022', 'DOM'], baseUrl: '.', paths: { 'openapi-fetch': [join(root, 'node_modules/openapi-fetch')] },
      },
      files: ['client.ts'],
    }))
    let output = ''
    try {
      execFileSync(bin('tsc'), ['-p', dir], { stdio: 'pipe' })
    } catch (error) {
      output = String((error as { stdout?: Buffer }).stdout ?? error)
    }
    t.equal(output, '', `tsc --strict on the ${language} document`)
  }
})
