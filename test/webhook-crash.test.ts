/**
 * Webhooks survive crashes (CONTRACT §13): the real server as a child process, a receiver on loopback
 * in this process (which answers some requests 500, so that retries are pending too), writers sending
 * changes, and the server SIGKILLed at a random moment, several times, with changes and deliveries in
 * flight. After the last restart every change of the log, acknowledged or committed just before a
 * kill, reaches the receiver at least once, signed (standardwebhooks' verifier), and the receiver's set
 * of changes, deduplicated by `webhook-id`, is exactly the set of changes. Every wait is bounded.
 */
import t from 'tap'
import { join } from 'node:path'
import { openDatabase } from '../src/db/database.js'
import { freshDatabaseUrl } from './helpers/database.js'
import { freePort } from './helpers/net.js'
import { startReceiver } from './helpers/receiver.js'
import { call, editorKey, startServer, type Server } from './helpers/server.js'

const ROUNDS = 3
const WORKERS = 4
/** Short retries; a killed node's leases run out after the 10 s timeout and 5 s more. */
const ENV = { CALENDAR_WEBHOOK_ALLOW_PRIVATE: 'true', CALENDAR_WEBHOOK_RETRY_SCHEDULE: '100ms,200ms,400ms,800ms,1s,1s,1s,1s,1s,1s' }

/** One writer: tags and venues created and updated, one request at a time, until the server dies. */
async function writer(n: number, base: string, key: string, acked: Set<string>, stop: () => boolean): Promise<void> {
  const venues: number[] = []
  for (let i = 0; i < 200 && !stop(); i++) {
    const venue = venues[i % Math.max(1, venues.length)]
    const [method, path, body] = i % 3 === 0 || venue === undefined
      ? ['POST', '/venues', { venue: `Hall ${n}-${i}` }] as const
      : i % 3 === 1 ? ['POST', '/tags', { name: `Tag ${n}-${i}` }] as const
        : ['PATCH', `/venues/${venue}`, { city: `City ${i}` }] as const
    let res
    try {
      res = await call(base, key, method, path, body)
    } catch (error) {
      if (stop()) return
      throw error
    }
    if (res.status >= 300) throw new Error(`${method} ${path}: ${res.status}`)
    const id = Number(res.body.id)
    acked.add(`${path.startsWith('/tags') ? 'tags' : 'venues'}:${id}`)
    if (path === '/venues') venues.push(id)
  }
}

t.test('SIGKILL with changes and deliveries in flight, several times: every change is delivered', async (t) => {
  const file = await freshDatabaseUrl(t, join(t.testdir(), 'calendar.db'))
  const key = await editorKey(file, 'administrator')
  const receiver = await startReceiver(t)
  // One request in five fails: retries are pending at every kill.
  let count = 0
  receiver.fallback = { status: 200 }
  const answer = () => (++count % 5 === 0 ? { status: 500 } : { status: 200 })
  const acked = new Set<string>()
  let server: Server = await startServer(t, file, await freePort(), ENV)
  const created = await call(server.base, key, 'POST', '/webhooks', { url: receiver.url, events: ['*'] })
  t.equal(created.status, 201)
  receiver.secret = String(created.body.secret)
  for (let round = 0; round < ROUNDS; round++) {
    for (let i = 0; i < 500; i++) receiver.answers.push(answer())
    let killed = false
    const killAfter = 20 + Math.floor(Math.random() * 40)
    const before = acked.size
    const watch = setInterval(() => {
      if (!killed && acked.size - before >= killAfter) {
        killed = true
        server.child.kill('SIGKILL')
      }
    }, 5)
    await Promise.all(Array.from({ length: WORKERS }, (_v, n) => writer(n + round * WORKERS, server.base, key, acked, () => killed)))
    clearInterval(watch)
    const exit = await server.exited
    t.equal(exit.signal, 'SIGKILL', `round ${round + 1}: killed after ${acked.size - before} acknowledged writes, ${receiver.received.length} requests received so far`)
    server = await startServer(t, file, await freePort(), ENV)
  }
  receiver.answers.length = 0
  // The set of changes, now that no more are written: every position of the log.
  const handle = await openDatabase(file)
  const changes = await handle.db.selectFrom('changes').select(['position', 'resource', 'record_id']).execute()
  await handle.close()
  const positions = new Set(changes.map((c) => String(c.position)))
  const delivered = () => new Set(receiver.received.map((r) => r.id.split('_')[2] ?? ''))
  await receiver.until((got) => got.length > 0 && [...positions].every((p) => delivered().has(p)), 90_000,
    () => `delivered ${[...positions].filter((p) => delivered().has(p)).length} of ${positions.size} changes`)
  t.same([...delivered()].sort(), [...positions].sort(), 'the receiver\'s deduplicated set is exactly the set of changes')
  const logged = new Set(changes.map((c) => `${c.resource}:${c.record_id}`))
  t.ok([...acked].every((a) => logged.has(a)), `every one of ${acked.size} acknowledged writes is a change of the log`)
  t.ok(receiver.received.every((r) => r.verified), `all ${receiver.received.length} requests verify with standardwebhooks`)
  t.comment(`${positions.size} changes, ${receiver.received.length} requests (${receiver.received.length - positions.size} repeats: retries and attempts cut by a kill)`)
  server.child.kill('SIGTERM')
  t.same(await server.exited, { code: 0, signal: null }, 'the last server stops cleanly on SIGTERM')
})
