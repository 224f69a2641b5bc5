/**
 * What the replay (http/replay.ts) records and keeps, over real HTTP on a bare Fastify app with it in front (the
 * app's own routes answer in one form only; these routes answer in the others): an answer is replayed only as
 * it was sent (the buffer path and the stream path, byte for byte and header by header), an answer carrying a
 * header a request has of its own or no `X-Request-Id` is not recorded, nor one larger than the bytes recordings
 * may take; recordings beyond the count or the bytes drop the oldest first. `registerReplay` refuses a server
 * with another request listener, and a replay that fails is answered by the full path when nothing was sent yet.
 */
import { request, Agent, type IncomingHttpHeaders, type IncomingMessage, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { Readable } from 'node:stream'
import t, { type Test } from 'tap'
import Fastify, { type FastifyInstance } from 'fastify'
import { genReqId } from '../src/http/request-id.js'
import { MAX_RECORDING_BYTES, MAX_RECORDINGS, registerReplay, type Replay, type ReplaySources } from '../src/http/replay.js'

interface Answer {
  status: number
  headers: IncomingHttpHeaders
  /** Names and values as on the wire, Date and X-Request-Id left out. */
  raw: string[]
  body: Buffer
}

interface Served {
  app: FastifyInstance
  replay: Replay
  /** Full-path answers made by the routes. */
  handled: () => number
  get(path: string, headers?: Record<string, string>): Promise<Answer>
  errors: string[]
}

/**
 * A Fastify app with the replay in front, a generation that never moves, and routes that mark their answers
 * replayable: `/text/:n` (n bytes, buffer path), `/stream` (a stream), `/cookie` (a Set-Cookie), `/no-id`,
 * `/raw-header` (a header set on Node's response, not Fastify's reply).
 */
const buffers = {
  own: Buffer.alloc(40_000, 'a'),
  slice: Buffer.alloc(40_000, 'a').subarray(100, 30_100),
}

async function served(t: Test, sources: Partial<ReplaySources> = {}): Promise<Served> {
  const errors: string[] = []
  const app = Fastify({ genReqId, logger: { level: 'error', stream: { write: (line: string) => { errors.push(line) } } } })
  const replay = registerReplay(app, { arrived: () => {}, lookNow: () => 1, look: async () => 1, open: () => true, ...sources })
  let handled = 0
  app.addHook('onRequest', async (req, reply) => {
    handled += 1
    req.replayable = 1
    reply.header('x-request-id', req.id)
  })
  app.get('/text/:n', async (req) => 'x'.repeat(Number((req.params as { n: string }).n)))
  app.get('/stream', async (req, reply) => reply.type('text/plain').send(Readable.from([Buffer.from('one,'), Buffer.from('two,'), Buffer.from('three')])))
  app.get('/cookie', async (req, reply) => reply.header('set-cookie', 'a=b').send('with a cookie'))
  app.get('/raw-header', async (req, reply) => {
    reply.raw.setHeader('x-raw', 'set on Node\'s response')
    return 'a header set on the raw response'
  })
  app.get('/no-id', async (req, reply) => {
    reply.removeHeader('x-request-id')
    return 'no id'
  })
  // The same buffer every time (`buffers`, by name): its own memory (`own`, 40 kB, as a list's body is) or a slice of
  // a larger one (`slice`).
  app.get('/buffer/:name', async (req, reply) => reply.type('application/json; charset=utf-8').send(buffers[(req.params as { name: 'own' | 'slice' }).name]))
  await app.listen({ port: 0, host: '127.0.0.1' })
  t.teardown(() => app.close())
  const { port } = app.server.address() as AddressInfo
  const agent = new Agent({ keepAlive: true, maxSockets: 1 })
  t.teardown(() => agent.destroy())
  const get = (path: string, headers: Record<string, string> = {}) => new Promise<Answer>((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path, headers, agent }, (res) => {
      const chunks: Buffer[] = []
      res.on('data', (chunk: Buffer) => chunks.push(chunk))
      res.on('end', () => {
        const raw: string[] = []
        for (let i = 0; i < res.rawHeaders.length; i += 2) {
          const name = String(res.rawHeaders[i])
          if (!['date', 'x-request-id'].includes(name.toLowerCase())) raw.push(name, String(res.rawHeaders[i + 1]))
        }
        resolve({ status: res.statusCode ?? 0, headers: res.headers, raw, body: Buffer.concat(chunks) })
      })
      res.on('error', reject)
    })
    req.on('error', reject)
    req.end()
  })
  return { app, replay, handled: () => handled, get, errors }
}

t.test('the buffer path and the stream path are replayed as sent; a request id of its own each time', async (t) => {
  const s = await served(t)
  for (const path of ['/text/10', '/stream']) {
    const full = await s.get(path, { 'x-request-id': 'first' })
    const handled = s.handled()
    const replayed = await s.get(path, { 'x-request-id': 'second' })
    t.equal(s.handled(), handled, `${path}: the second is not handled by the route`)
    t.equal(replayed.status, 200)
    t.same(replayed.raw, full.raw, `${path}: every header the same, in the same order`)
    t.equal(replayed.body.toString('latin1'), full.body.toString('latin1'), `${path}: the same bytes`)
    t.equal(full.headers['x-request-id'], 'first')
    t.equal(replayed.headers['x-request-id'], 'second', `${path}: the replay carries its own request's id`)
  }
  t.equal((await s.get('/stream')).body.toString(), 'one,two,three')
  t.equal(s.replay.replayed, 3)
})

t.test('an answer sent as one buffer of its own is recorded without a copy; a slice of a larger buffer is copied', async (t) => {
  const s = await served(t)
  for (const name of ['own', 'slice'] as const) {
    const buffer = buffers[name]
    buffer.fill('a')
    const full = await s.get(`/buffer/${name}`)
    t.equal(full.body.length, buffer.length)
    // Changed after it was sent (never done to a body kept by the read cache: here only to tell a copy from the bytes).
    buffer.fill('b')
    const handled = s.handled()
    const replayed = await s.get(`/buffer/${name}`)
    t.equal(s.handled(), handled, `${name}: replayed`)
    t.same(replayed.raw, full.raw, `${name}: every header the same`)
    const expected = name === 'own' ? 'b' : 'a'
    t.equal(replayed.body.toString('latin1'), expected.repeat(buffer.length),
      name === 'own' ? 'its own buffer: the recording holds those bytes, not a copy' : 'a slice: the recording holds a copy (not the larger buffer)')
    buffer.fill('a')
  }
})

t.test('answers carrying a header of a request of their own, or no X-Request-Id, are not recorded', async (t) => {
  const s = await served(t)
  // A header set on Node's response before Fastify writes the head is not in what Fastify gives `writeHead`.
  for (const path of ['/cookie', '/no-id', '/raw-header']) {
    const first = await s.get(path)
    const second = await s.get(path)
    t.equal(second.status, 200)
    t.equal(second.body.toString(), first.body.toString())
    t.same(second.raw, first.raw, `${path}: the same headers`)
  }
  t.match((await s.get('/raw-header')).headers, { 'x-raw': 'set on Node\'s response' })
  t.equal(s.replay.size, 0, 'nothing recorded')
  t.equal(s.replay.replayed, 0, 'nothing replayed')
  t.equal(s.handled(), 7, 'each request answered by its route')
})

t.test('an answer larger than the bytes recordings may take is not recorded; the bytes and the count drop the oldest', async (t) => {
  const s = await served(t)
  const over = MAX_RECORDING_BYTES + 1
  const big = await s.get(`/text/${over}`)
  t.equal(big.body.length, over)
  t.equal(s.replay.size, 0, 'too large to record')
  t.equal((await s.get(`/text/${over}`)).body.length, over, 'answered again by the full path')
  t.equal(s.replay.replayed, 0)

  // Three answers of 3 MB: the third does not fit beside the first two, and the oldest goes.
  const third = Math.floor(MAX_RECORDING_BYTES / 3) + 1
  for (const n of [third, third + 1, third + 2]) await s.get(`/text/${n}`)
  t.equal(s.replay.size, 2, 'the oldest dropped for the bytes')
  let handled = s.handled()
  t.equal((await s.get(`/text/${third + 2}`)).body.length, third + 2)
  t.equal((await s.get(`/text/${third + 1}`)).body.length, third + 1)
  t.equal(s.handled(), handled, 'the two newest replayed')
  t.equal((await s.get(`/text/${third}`)).body.length, third)
  t.equal(s.handled(), handled + 1, 'the oldest answered by the full path')

  // MAX_RECORDINGS small answers after it: the count drops the oldest.
  for (let n = 0; n < MAX_RECORDINGS; n++) await s.get(`/text/${n}`)
  t.equal(s.replay.size, MAX_RECORDINGS, 'no more than MAX_RECORDINGS')
  handled = s.handled()
  await s.get(`/text/${MAX_RECORDINGS - 1}`)
  await s.get('/text/1')
  t.equal(s.handled(), handled, 'the newest replayed')
  await s.get(`/text/${third}`)
  t.equal(s.handled(), handled + 1, 'the large one, the oldest, dropped')
})

t.test('registerReplay refuses a server whose request listener is not Fastify\'s alone', async (t) => {
  const app = Fastify()
  t.teardown(() => app.close())
  app.server.on('request', () => {})
  const sources: ReplaySources = { arrived: () => {}, lookNow: () => 1, look: async () => 1, open: () => true }
  t.throws(() => registerReplay(app, sources), /Fastify's request handler alone was expected/)
  const bare = Fastify()
  t.teardown(() => bare.close())
  bare.server.removeAllListeners('request')
  t.throws(() => registerReplay(bare, sources), /Fastify's request handler alone was expected/, 'nor one without it')
})

/** Makes the next replay's `writeHead` fail, before or after the headers were given to Node. */
function breakNextWriteHead(app: FastifyInstance, after: boolean): void {
  const [listener] = app.server.listeners('request') as Array<(req: IncomingMessage, res: ServerResponse) => void>
  if (listener === undefined) throw new Error('no request listener')
  app.server.removeListener('request', listener)
  app.server.on('request', (req: IncomingMessage, res: ServerResponse) => {
    app.server.removeAllListeners('request')
    app.server.on('request', listener)
    const writeHead = res.writeHead
    res.writeHead = function (this: ServerResponse, ...args: unknown[]) {
      res.writeHead = writeHead
      if (after) (writeHead as (...given: unknown[]) => unknown).apply(this, args)
      throw new Error('writeHead failed')
    } as typeof res.writeHead
    listener(req, res)
  })
}

t.test('a replay that fails is answered by the full path if nothing was sent, else its connection closed; the recording dropped', async (t) => {
  const s = await served(t)
  const full = await s.get('/text/20')
  await s.get('/text/20')
  t.equal(s.replay.replayed, 1, 'replayed')
  breakNextWriteHead(s.app, false)
  let handled = s.handled()
  const answered = await s.get('/text/20')
  t.equal(answered.status, 200)
  t.equal(answered.body.toString(), full.body.toString(), 'the full path\'s answer')
  t.equal(s.handled(), handled + 1, 'by the route')
  t.match(s.errors.join(''), /replaying an answer failed/, 'logged')
  t.equal(s.replay.replayed, 1)
  // The full path recorded it again: replayed, then failing after the headers went to Node.
  await s.get('/text/20')
  t.equal(s.replay.replayed, 2)
  breakNextWriteHead(s.app, true)
  handled = s.handled()
  await t.rejects(s.get('/text/20'), 'the connection closed without an answer')
  t.equal(s.handled(), handled, 'not handed to the route (its headers were given already)')
  t.equal(s.replay.size, 0, 'the recording dropped')
  t.equal((await s.get('/text/20')).body.toString(), full.body.toString(), 'the next request: the full path')
  t.equal(s.handled(), handled + 1)
})

t.test('a look that fails: the held requests go the full path, the recordings dropped', async (t) => {
  let failing = false
  const s = await served(t, { lookNow: () => (failing ? 'wait' : 1), look: () => (failing ? Promise.reject(new Error('the database is away')) : Promise.resolve(1)) })
  const full = await s.get('/text/30')
  await s.get('/text/30')
  t.equal(s.replay.replayed, 1)
  failing = true
  const handled = s.handled()
  const answered = await s.get('/text/30')
  t.equal(answered.body.toString(), full.body.toString(), 'the full path\'s answer')
  t.equal(s.handled(), handled + 1, 'by the route')
  t.equal(s.replay.replayed, 1, 'not replayed')
  t.equal(s.replay.size, 1, 'recorded again by the full path (its generation: undefined no more)')
})

t.test('a look that throws (SQLite\'s probe failing: the database cannot serve now): the process stays up, the held requests go the full path', async (t) => {
  let failing = false
  const s = await served(t, {
    lookNow: () => {
      if (failing) throw new Error('SQLITE_IOERR: disk I/O error')
      return 1
    },
  })
  const full = await s.get('/text/40')
  await s.get('/text/40')
  t.equal(s.replay.replayed, 1)
  failing = true
  const handled = s.handled()
  const answered = await s.get('/text/40')
  t.equal(answered.status, 200)
  t.equal(answered.body.toString(), full.body.toString(), 'the full path\'s answer')
  t.equal(s.handled(), handled + 1, 'by the route')
  t.equal(s.replay.replayed, 1, 'not replayed')
})
