/**
 * Hot answers (read-cache.ts, issue 49): an anonymous `GET /events/{id}` asked again is answered from the
 * bytes the read before it sent, and never stale. Two apps on one database, each with its own read cache,
 * are two nodes (A and B). Each check first makes the answer hot on the reader (the metrics' `answers`
 * hits prove the next read came from it), then writes, then reads at once: a write through this node, a
 * write through the other node, a write from another handle outside the API, and a write to a category
 * the event shows are each seen by the very next read on both nodes, with a new ETag (the tag from before
 * the write is no 304). Every answer is checked against the contract.
 */
import t, { type Test } from 'tap'
import type { FastifyInstance } from 'fastify'
import { buildApp } from '../src/app.js'
import { defaultConfig } from '../src/config.js'
import { openDatabase } from '../src/db/database.js'
import { createCompilers } from '../src/http/compilers.js'
import { readCacheStats } from '../src/repositories/read-cache.js'
import { API, BASE_URL, NOW, build } from './helpers/build.js'
import { SPEC, contractProblems } from './helpers/contract.js'
import { writeFromAnotherHandle } from './helpers/database.js'

interface Node {
  name: string
  app: FastifyInstance
  db: Parameters<typeof readCacheStats>[0]
}

interface Read {
  status: number
  body: string
  etag: string | undefined
}

t.test('a write is seen by the next read on this node and on the other, however hot the answer was', async (t) => {
  const a = await build(t, { file: `${t.testdir()}/calendar.db` })
  const other = await openDatabase(a.url)
  const appB = await buildApp({ db: other.db, config: defaultConfig({ publicUrl: BASE_URL }), now: () => NOW, spec: SPEC, compilers: createCompilers() })
  t.teardown(async () => {
    await appB.close()
    await other.close()
  })
  const A: Node = { name: 'A', app: a.app, db: a.db }
  const B: Node = { name: 'B', app: appB, db: other.db }
  const editor = await a.auth('editor')

  async function send(node: Node, method: 'GET' | 'POST' | 'PATCH', path: string, headers: Record<string, string> = {}, body?: object): Promise<Read> {
    const url = `${API}${path}`
    const res = await node.app.inject({ method, url, headers, ...(body === undefined ? {} : { payload: body }) })
    t.same(contractProblems(method, url, res), [], `${node.name}: ${method} ${path} keeps the contract`)
    const etag = res.headers.etag
    return { status: res.statusCode, body: res.body, etag: typeof etag === 'string' ? etag : undefined }
  }
  const answerHits = (node: Node) => readCacheStats(node.db)?.hits.answers ?? 0

  /** Reads event `id` on `node` until its answer is hot (the document stored, the answer kept), and proves the last read a hot one. */
  async function hot(node: Node, id: number): Promise<Read> {
    await send(node, 'GET', `/events/${id}`)
    await node.app.eventDocuments.settled()
    const made = await send(node, 'GET', `/events/${id}`)
    const before = answerHits(node)
    const again = await send(node, 'GET', `/events/${id}`)
    t.equal(answerHits(node), before + 1, `${node.name}: event ${id} read again from its hot answer`)
    t.same(again, made, `${node.name}: the hot answer is the answer made before it`)
    return again
  }

  /** The next read on `node` after a write: the change shown, with a new ETag, and the old tag no 304. */
  async function seen(node: Node, id: number, was: Read, shows: (event: Record<string, unknown>) => boolean, what: string): Promise<void> {
    const now = await send(node, 'GET', `/events/${id}`)
    t.equal(now.status, 200)
    t.ok(shows(JSON.parse(now.body) as Record<string, unknown>), `${node.name}: the next read shows ${what}`)
    t.not(now.etag, was.etag, `${node.name}: with a new ETag after ${what}`)
    const conditional = await send(node, 'GET', `/events/${id}`, { 'if-none-match': was.etag ?? '' })
    t.equal(conditional.status, 200, `${node.name}: the tag from before ${what} is no 304`)
  }

  const category = JSON.parse((await send(A, 'POST', '/categories', editor, { name: 'Concerts' })).body) as { id: number }
  const created = await send(A, 'POST', '/events', editor, {
    title: 'Jazz night', status: 'publish', start_date: '2026-07-01 20:00:00', end_date: '2026-07-01 23:00:00', categories: [category.id],
  })
  t.equal(created.status, 201)
  const id = (JSON.parse(created.body) as { id: number }).id
  const title = (event: Record<string, unknown>) => event.title

  const steps: Array<{ what: string; write: () => Promise<void>; shows: (event: Record<string, unknown>) => boolean }> = [
    {
      what: 'a write through node A',
      write: async () => { t.equal((await send(A, 'PATCH', `/events/${id}`, editor, { title: 'Written on A' })).status, 200) },
      shows: (event) => title(event) === 'Written on A',
    },
    {
      what: 'a write through node B',
      write: async () => { t.equal((await send(B, 'PATCH', `/events/${id}`, editor, { title: 'Written on B' })).status, 200) },
      shows: (event) => title(event) === 'Written on B',
    },
    {
      what: 'a write from another handle',
      write: () => writeFromAnotherHandle(a.url, id),
      shows: (event) => event.excerpt === 'written elsewhere',
    },
    {
      what: 'a rename of a category the event shows',
      write: async () => { t.equal((await send(B, 'PATCH', `/categories/${category.id}`, editor, { name: 'Live music' })).status, 200) },
      shows: (event) => (event.categories as Array<{ name: string }>)[0]?.name === 'Live music',
    },
  ]
  for (const step of steps) {
    const was = [await hot(A, id), await hot(B, id)]
    await step.write()
    await seen(A, id, was[0] as Read, step.shows, step.what)
    await seen(B, id, was[1] as Read, step.shows, step.what)
  }
})

t.test('hot answers are for anonymous reads in the event\'s own language only', async (t: Test) => {
  const s = await build(t)
  const editor = await s.auth('editor')
  const created = await s.inject({
    method: 'POST', url: `${API}/events`, headers: editor,
    payload: { title: 'Open air', status: 'publish', start_date: '2026-07-02 20:00:00', end_date: '2026-07-02 22:00:00' },
  })
  const id = created.json<{ id: number }>().id
  for (let i = 0; i < 3; i++) {
    await s.inject({ url: `${API}/events/${id}` })
    await s.app.eventDocuments.settled()
  }
  const before = readCacheStats(s.db)?.hits.answers ?? 0
  const asEditor = await s.inject({ url: `${API}/events/${id}`, headers: editor })
  const inEnglish = await s.inject({ url: `${API}/events/${id}?ml_language=en` })
  t.equal(asEditor.statusCode, 200)
  t.equal(inEnglish.statusCode, 200)
  t.equal(readCacheStats(s.db)?.hits.answers ?? 0, before, 'an editor\'s read and a read naming a language are not answered from it')
  await s.inject({ url: `${API}/events/${id}` })
  t.equal(readCacheStats(s.db)?.hits.answers ?? 0, before + 1, 'an anonymous read is')
})

t.test('a hot answer, 200 or 304, is the answer made from the data, header by header', async (t: Test) => {
  const s = await build(t)
  const editor = await s.auth('editor')
  const create = (title: string) => s.inject({
    method: 'POST', url: `${API}/events`, headers: editor,
    payload: { title, status: 'publish', start_date: '2026-07-03 20:00:00', end_date: '2026-07-03 22:00:00' },
  })
  const id = (await create('Open air')).json<{ id: number }>().id
  const url = `${API}/events/${id}`
  const hits = () => readCacheStats(s.db)?.hits.answers ?? 0
  const perRequest = new Set(['date', 'x-request-id'])
  const headersOf = (res: { headers: Record<string, unknown> }) =>
    Object.fromEntries(Object.entries(res.headers).filter(([name]) => !perRequest.has(name)).sort(([a], [b]) => a.localeCompare(b)))
  for (const headers of [{}, { origin: 'https://widget.example', 'accept-encoding': 'gzip', 'accept-language': 'de' }]) {
    const first = await s.inject({ url, headers })
    await s.app.eventDocuments.settled()
    // Another event created: every hot answer is left unused, and the next read is made from the data again.
    await create('Elsewhere')
    const before = hits()
    // A 304 made from the data keeps nothing; the 200 after it keeps its answer.
    const made304 = await s.inject({ url, headers: { ...headers, 'if-none-match': String(first.headers.etag) } })
    const made = await s.inject({ url, headers })
    t.equal(hits(), before, 'both made from the data')
    const hot = await s.inject({ url, headers })
    const hot304 = await s.inject({ url, headers: { ...headers, 'if-none-match': String(first.headers.etag) } })
    t.equal(hits(), before + 2, 'both answered from the hot answer')
    t.equal(made.statusCode, 200)
    t.equal(made304.statusCode, 304)
    t.same(headersOf(hot), headersOf(made), `${JSON.stringify(headers)}: the hot 200's headers are the made one's`)
    t.same(headersOf(made), headersOf(first), 'and the first answer\'s')
    t.equal(hot.rawPayload.toString('base64'), made.rawPayload.toString('base64'), 'the same bytes')
    t.same(headersOf(hot304), headersOf(made304), `${JSON.stringify(headers)}: the hot 304's headers are the made one's`)
    t.equal(hot304.body, '')
  }
})
