/**
 * Two servers on one SQLite file (the README says several may share one): their writes contend for the
 * file's write lock, and none may fail for it. Each server takes several concurrent writers doing what
 * reads before it writes: event creates with terms and an inline venue, slug changes, venue and tag
 * creates. Every answer must be a 2xx; no write may answer 500 (or anything else) because another
 * process writes. Bounded: a fixed number of requests, on 127.0.0.1 only.
 */
import t from 'tap'
import { join } from 'node:path'
import { Agent, getGlobalDispatcher, setGlobalDispatcher } from 'undici'
import { freePort } from './helpers/net.js'
import { call, editorKey, startServer, type Server } from './helpers/server.js'
import { freshDatabaseUrl } from './helpers/database.js'

const WRITERS_PER_SERVER = 6
const ROUNDS = 6

t.test('two processes writing to one file: every write answered 2xx', async (t) => {
  // A connection per request: what is tested is the file's lock between processes, not keep-alive, whose race (a
  // request sent on a socket the server closes as idle at that moment, ECONNRESET) a loaded machine can hit.
  const dispatcher = getGlobalDispatcher()
  setGlobalDispatcher(new Agent({ pipelining: 0 }))
  t.teardown(() => setGlobalDispatcher(dispatcher))
  const file = await freshDatabaseUrl(t, join(t.testdir(), 'calendar.db'))
  const key = await editorKey(file)
  const [one, two] = await Promise.all([startServer(t, file, await freePort()), startServer(t, file, await freePort())])
  if (one === undefined || two === undefined) throw new Error('servers did not start')
  const category = await call(one.base, key, 'POST', '/categories', { name: 'Concerts' })
  t.equal(category.status, 201, 'a category to link')
  const failures: string[] = []
  let unanswered = false
  /** What a server was doing when a request got no answer: running, or exited (and how), and its stderr. */
  const state = async (name: string, server: Server) => {
    const exit = await Promise.race([server.exited, new Promise<undefined>((resolve) => setTimeout(() => resolve(undefined), 2000))])
    return `server ${name} ${exit === undefined ? 'running' : `exited (${String(exit.code ?? exit.signal)})`}, stderr: ${server.stderr().slice(-2000) || 'empty'}`
  }

  async function writer(base: string, name: string): Promise<void> {
    for (let round = 0; round < ROUNDS; round++) {
      const tag = `${name}-tag-${round}`
      const steps: Array<[string, string, Record<string, unknown>]> = [
        ['POST', '/tags', { name: tag }],
        ['POST', '/venues', { venue: `${name} hall ${round}`, city: 'Wien' }],
        ['POST', '/events', {
          title: `${name} concert ${round}`, start_date: '2026-07-01 19:00:00', end_date: '2026-07-01 22:00:00',
          categories: [category.body.id], tags: [tag], venue: [{ venue: `${name} inline hall ${round}`, city: 'Graz' }],
        }],
      ]
      let event: unknown
      for (const [method, path, body] of steps) {
        let res: Awaited<ReturnType<typeof call>>
        try {
          res = await call(base, key, method, path, body)
        } catch (error) {
          // No answer at all (a connection reset, a timeout): said with what each server was doing (below).
          failures.push(`${method} ${path}: no answer (${String(error)}; ${String((error as { cause?: unknown }).cause)})`)
          unanswered = true
          return
        }
        if (res.status < 200 || res.status > 299) failures.push(`${method} ${path}: ${res.status} ${JSON.stringify(res.body).slice(0, 200)}`)
        if (path === '/events') event = res.body.id
      }
      if (typeof event !== 'number') continue
      let res: Awaited<ReturnType<typeof call>>
      try {
        res = await call(base, key, 'PATCH', `/events/${event}`, { slug: `${name}-renamed-${round}` })
      } catch (error) {
        failures.push(`PATCH /events/${event}: no answer (${String(error)}; ${String((error as { cause?: unknown }).cause)})`)
        unanswered = true
        return
      }
      if (res.status !== 200) failures.push(`PATCH /events/${event}: ${res.status} ${JSON.stringify(res.body).slice(0, 200)}`)
    }
  }

  const writers: Array<Promise<void>> = []
  for (let n = 0; n < WRITERS_PER_SERVER; n++) {
    writers.push(writer(one.base, `one-${n}`), writer(two.base, `two-${n}`))
  }
  await Promise.all(writers)
  if (unanswered) failures.push(await state('one', one), await state('two', two))
  t.same(failures, [], 'no write failed because the other process wrote')
  const events = await call(two.base, key, 'GET', '/events?start_date=2026-07-01&end_date=2026-07-02&per_page=1')
  t.equal(events.body.total, 2 * WRITERS_PER_SERVER * ROUNDS, 'every event is there, as either process reads it')
  t.notMatch(one.stderr() + two.stderr(), /database is locked|SQLITE_BUSY/, 'no lock error logged')
})
