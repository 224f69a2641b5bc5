/**
 * Hot list answers (issue 49): an anonymous JSON `GET /events` asked again is answered from the bytes the
 * list before it sent, with the same X-Total, X-Total-Pages and Link, and never stale. Each check makes the
 * list hot and proves the next read a hot one by the read cache's `answers` hits; a cold answer and the hot
 * one after it are compared header by header and byte by byte (variants: pages with Link, a relative window,
 * CORS, compression, a filter by term); a write through the API, a write from another database handle
 * (through the change log, and raw, outside it) are each seen by the very next read; and a list's default
 * window moving at midnight is a new answer, never the day before's. Every answer is checked against the contract.
 */
import t, { type Test } from 'tap'
import type { LightMyRequestResponse } from 'fastify'
import { readCacheStats } from '../src/repositories/read-cache.js'
import { API, NOW, build, type Built } from './helpers/build.js'
import { rawWriteFromAnotherHandle, writeFromAnotherHandle } from './helpers/database.js'

/** Headers made anew on every request, whatever answers it. */
const PER_REQUEST = new Set(['date', 'x-request-id'])

const headersOf = (res: LightMyRequestResponse): Record<string, unknown> =>
  Object.fromEntries(Object.entries(res.headers).filter(([name]) => !PER_REQUEST.has(name)).sort(([a], [b]) => a.localeCompare(b)))

const answerHits = (s: Built) => readCacheStats(s.db)?.hits.answers ?? 0

async function withEvents(t: Test, s: Built): Promise<{ editor: { authorization: string }; ids: number[]; category: { id: number; slug: string } }> {
  const editor = await s.auth('editor')
  const category = (await s.inject({ method: 'POST', url: `${API}/categories`, headers: editor, payload: { name: 'Concerts' } })).json<{ id: number; slug: string }>()
  const ids: number[] = []
  const starts = ['2026-06-15 20:00:00', '2026-07-01 20:00:00', '2026-07-02 20:00:00']
  for (const [i, start] of starts.entries()) {
    const res = await s.inject({
      method: 'POST', url: `${API}/events`, headers: editor,
      payload: { title: `Night ${i}`, status: 'publish', start_date: start, end_date: start.replace('20:00', '23:00'), categories: i === 0 ? [] : [category.id] },
    })
    t.equal(res.statusCode, 201)
    ids.push(res.json<{ id: number }>().id)
  }
  return { editor, ids, category }
}

/** Reads `url` until its answer is hot (documents stored, the answer kept); the cold answer before it and the hot one. */
async function coldThenHot(t: Test, s: Built, url: string, headers: Record<string, string> = {}): Promise<{ cold: LightMyRequestResponse; hot: LightMyRequestResponse }> {
  await s.inject({ url, headers })
  await s.app.eventDocuments.settled()
  const cold = await s.inject({ url, headers })
  const before = answerHits(s)
  const hot = await s.inject({ url, headers })
  t.equal(answerHits(s), before + 1, `${url} ${JSON.stringify(headers)}: read again from its hot answer`)
  return { cold, hot }
}

t.test('a hot list answers what the cold one did, header by header and byte by byte', async (t) => {
  const s = await build(t)
  const { category } = await withEvents(t, s)
  const variants: Array<{ url: string; headers?: Record<string, string> }> = [
    { url: `${API}/events` },
    { url: `${API}/events?per_page=1&page=2` },
    { url: `${API}/events?per_page=1`, headers: { origin: 'https://widget.example', 'accept-encoding': 'gzip' } },
    { url: `${API}/events?starts_after=now&per_page=2`, headers: { accept: 'application/json', 'accept-language': 'de' } },
    { url: `${API}/events?categories=${category.slug}`, headers: { 'accept-encoding': 'br' } },
  ]
  for (const { url, headers } of variants) {
    // Each URL's first read is made from the data (no answer is kept for it yet; the documents may be filled after it).
    const first = await s.inject({ url, ...(headers === undefined ? {} : { headers }) })
    t.equal(first.statusCode, 200)
    const { cold, hot } = await coldThenHot(t, s, url, headers)
    t.same(headersOf(hot), headersOf(cold), `${url}: every header the same`)
    t.same(headersOf(cold), headersOf(first), `${url}: as the very first answer's`)
    t.equal(hot.rawPayload.toString('base64'), cold.rawPayload.toString('base64'), `${url}: the same bytes`)
    t.equal(hot.body, first.body, `${url}: the same list as the very first answer`)
  }
  const paged = await s.inject({ url: `${API}/events?per_page=1&page=2` })
  t.match(paged.headers.link, /rel="next".*rel="prev"/, 'the Link header is kept (next and prev)')
  t.equal(paged.headers['x-total'], '3')
  t.equal(paged.headers['x-total-pages'], '3')
})

t.test('a write is seen by the next list however hot it was: through the API, from another handle, raw', async (t) => {
  const s = await build(t, { file: `${t.testdir()}/calendar.db` })
  const { editor, ids } = await withEvents(t, s)
  const id = ids[1] as number
  const url = `${API}/events`
  const excerptOf = (res: LightMyRequestResponse) => res.json<{ events: Array<{ id: number; excerpt: string; title: string }> }>().events.find((e) => e.id === id)
  const steps: Array<{ what: string; write: () => Promise<void>; shows: (res: LightMyRequestResponse) => boolean }> = [
    {
      what: 'a write through the API',
      write: async () => { t.equal((await s.inject({ method: 'PATCH', url: `${API}/events/${id}`, headers: editor, payload: { title: 'Renamed' } })).statusCode, 200) },
      shows: (res) => excerptOf(res)?.title === 'Renamed',
    },
    {
      what: 'a write from another handle',
      write: () => writeFromAnotherHandle(s.url, id),
      shows: (res) => excerptOf(res)?.excerpt === 'written elsewhere',
    },
    {
      what: 'a raw write from another handle, outside the change log',
      write: () => rawWriteFromAnotherHandle(s.url, id),
      shows: (res) => excerptOf(res)?.excerpt === 'raw',
    },
    {
      what: 'a new event from another app on the same database',
      write: async () => {
        const res = await s.inject({
          method: 'POST', url: `${API}/events`, headers: editor,
          payload: { title: 'Late addition', status: 'publish', start_date: '2026-08-01 20:00:00', end_date: '2026-08-01 22:00:00' },
        })
        t.equal(res.statusCode, 201)
      },
      shows: (res) => res.headers['x-total'] === '4',
    },
  ]
  for (const step of steps) {
    const { hot } = await coldThenHot(t, s, url)
    t.notOk(step.shows(hot), `not yet: ${step.what}`)
    await step.write()
    const before = answerHits(s)
    const next = await s.inject({ url })
    t.equal(next.statusCode, 200)
    t.ok(step.shows(next), `the next list shows ${step.what}`)
    t.equal(answerHits(s), before, `${step.what}: the next list is not the hot answer`)
  }
})

t.test('a list is kept as its hot answer only when its URL was made before: lists asked once keep nothing', async (t) => {
  const s = await build(t)
  const { editor, ids } = await withEvents(t, s)
  await s.inject({ url: `${API}/events?per_page=3` })
  await s.app.eventDocuments.settled()
  const hotReads = async (url: string) => {
    const before = answerHits(s)
    t.equal((await s.inject({ url })).statusCode, 200)
    return answerHits(s) - before
  }
  // Lists asked once each (a random filter's pages): none of them kept, so none of them is hot when asked again.
  const once = [1, 2, 3].map((perPage) => `${API}/events?per_page=${perPage}&page=1&order=desc`)
  for (const url of once) t.equal(await hotReads(url), 0, `${url}: made`)
  for (const url of once) t.equal(await hotReads(url), 0, `${url}: made again, not read from a hot answer`)
  for (const url of once) t.equal(await hotReads(url), 1, `${url}: hot from its third read`)
  // After a write the next read makes the list again and keeps it at once (it was made before): the one after is hot.
  t.equal((await s.inject({ method: 'PATCH', url: `${API}/events/${ids[0] ?? 0}`, headers: editor, payload: { title: 'Renamed' } })).statusCode, 200)
  await s.app.eventDocuments.settled()
  const url = once[0] ?? ''
  t.equal(await hotReads(url), 0, 'made after the write')
  t.equal(await hotReads(url), 1, 'hot again at once')
})

t.test('a list\'s default window moves at midnight, and its hot answer with it', async (t) => {
  let now = NOW
  const s = await build(t, { clock: () => now })
  await withEvents(t, s)
  const url = `${API}/events`
  const { hot } = await coldThenHot(t, s, url)
  t.equal(hot.headers['x-total'], '3', 'today\'s event is in today\'s window')
  now = new Date('2026-06-15T23:59:59Z')
  const late = await coldThenHot(t, s, url)
  t.equal(late.hot.body, hot.body, 'the same answer until the day ends')
  now = new Date('2026-06-16T00:00:00Z')
  const before = answerHits(s)
  const tomorrow = await s.inject({ url })
  t.equal(answerHits(s), before, 'the next day\'s list is not the day before\'s hot answer')
  t.equal(tomorrow.headers['x-total'], '2', 'yesterday\'s event has left the window')
  t.match(tomorrow.json<{ rest_url: string }>().rest_url, /start_date=2026-06-16/, 'the window starts on the new day')
})

t.test('hot lists are for anonymous JSON lists only', async (t) => {
  const s = await build(t)
  const { editor } = await withEvents(t, s)
  const url = `${API}/events`
  await coldThenHot(t, s, url)
  const before = answerHits(s)
  const asEditor = await s.inject({ url, headers: editor })
  const asFeed = await s.inject({ url: `${url}?ical=1` })
  t.equal(asEditor.statusCode, 200)
  t.equal(asFeed.statusCode, 200)
  t.equal(answerHits(s), before, 'an editor\'s list and a feed are not answered from it')
  t.equal((await s.inject({ url, headers: editor })).statusCode, 200)
  t.equal(answerHits(s), before, 'nor an editor\'s list asked again')
  await s.inject({ url })
  t.equal(answerHits(s), before + 1, 'an anonymous JSON list is')
})
