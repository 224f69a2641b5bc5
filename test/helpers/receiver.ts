/**
 * A webhook receiver: a real HTTP server on loopback that keeps every request it gets, verifies each
 * signature with the `standardwebhooks` package's own verifier (not with the server's code), and
 * answers as the test says (a status, after a delay). `waitFor` waits for the nth request, bounded.
 */
import { createServer, type IncomingMessage, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import type { Test } from 'tap'
import { Webhook } from 'standardwebhooks'

export interface Received {
  id: string
  timestamp: string
  signature: string
  body: string
  json: { type: string; timestamp: string; data: { resource: string; id: number; cursor: string; ml_language: string; record?: Record<string, unknown> } }
  /** Whether the signature verified with the secret known when it arrived. */
  verified: boolean
}

export interface Answer {
  status: number
  delayMs?: number
  body?: string
}

export interface Receiver {
  url: string
  received: Received[]
  /** The secret signatures are verified with. */
  secret: string | undefined
  /** How the next requests are answered, in turn; when none is left, `fallback`. */
  answers: Answer[]
  fallback: Answer
  waitFor(count: number, timeoutMs?: number): Promise<void>
  /** Waits until `count` requests have come in, answered or not yet (a delayed answer), bounded. */
  waitForArrivals(count: number, timeoutMs?: number): Promise<void>
  /** Waits until `done` holds of what was received (checked on every request), bounded. */
  until(done: (received: readonly Received[]) => boolean, timeoutMs: number, why: () => string): Promise<void>
  close(): Promise<void>
  /** Stops listening (a receiver that is down), keeping what it got; `open` listens again on the same port. */
  down(): Promise<void>
  open(): Promise<void>
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    let text = ''
    req.setEncoding('utf8')
    req.on('data', (chunk: string) => { text += chunk })
    req.on('end', () => resolve(text))
    req.on('error', reject)
  })
}

export async function startReceiver(t: Test, port = 0): Promise<Receiver> {
  const waiters: Array<{ count: number; resolve: () => void }> = []
  const arrivalWaiters: Array<{ count: number; resolve: () => void }> = []
  let arrived = 0
  const conditions: Array<{ done: (received: readonly Received[]) => boolean; resolve: () => void }> = []
  const receiver: Receiver = {
    url: '', received: [], secret: undefined, answers: [], fallback: { status: 200 },
    waitFor(count, timeoutMs = 20_000) {
      if (receiver.received.length >= count) return Promise.resolve()
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`the receiver got ${receiver.received.length} of ${count} requests`)), timeoutMs)
        waiters.push({ count, resolve: () => { clearTimeout(timer); resolve() } })
      })
    },
    waitForArrivals(count, timeoutMs = 20_000) {
      if (arrived >= count) return Promise.resolve()
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`${arrived} of ${count} requests came in`)), timeoutMs)
        arrivalWaiters.push({ count, resolve: () => { clearTimeout(timer); resolve() } })
      })
    },
    until(done, timeoutMs, why) {
      if (done(receiver.received)) return Promise.resolve()
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(why())), timeoutMs)
        conditions.push({ done, resolve: () => { clearTimeout(timer); resolve() } })
      })
    },
    close: async () => { await stop() },
    down: async () => { await stop() },
    open: async () => { await listen(boundPort) },
  }
  let server: Server | undefined
  let boundPort = port
  const sockets = new Set<import('node:net').Socket>()
  const handle = async (req: IncomingMessage, res: import('node:http').ServerResponse) => {
    const body = await readBody(req)
    const headers = { 'webhook-id': String(req.headers['webhook-id'] ?? ''), 'webhook-timestamp': String(req.headers['webhook-timestamp'] ?? ''), 'webhook-signature': String(req.headers['webhook-signature'] ?? '') }
    let verified = false
    try {
      if (receiver.secret !== undefined) {
        new Webhook(receiver.secret).verify(body, headers)
        verified = true
      }
    } catch {
      verified = false
    }
    const answer = receiver.answers.shift() ?? receiver.fallback
    arrived += 1
    for (const w of arrivalWaiters.filter((w) => arrived >= w.count)) {
      arrivalWaiters.splice(arrivalWaiters.indexOf(w), 1)
      w.resolve()
    }
    const reply = () => {
      receiver.received.push({ id: headers['webhook-id'], timestamp: headers['webhook-timestamp'], signature: headers['webhook-signature'], body, json: JSON.parse(body) as Received['json'], verified })
      for (const w of waiters.filter((w) => receiver.received.length >= w.count)) {
        waiters.splice(waiters.indexOf(w), 1)
        w.resolve()
      }
      for (const c of conditions.filter((c) => c.done(receiver.received))) {
        conditions.splice(conditions.indexOf(c), 1)
        c.resolve()
      }
      if (!res.destroyed) res.writeHead(answer.status, { 'content-type': 'text/plain' }).end(answer.body ?? '')
    }
    if (answer.delayMs !== undefined) setTimeout(reply, answer.delayMs).unref()
    else reply()
  }
  async function listen(at: number): Promise<void> {
    server = createServer((req, res) => { void handle(req, res) })
    server.on('connection', (socket) => { sockets.add(socket); socket.on('close', () => sockets.delete(socket)) })
    await new Promise<void>((resolve) => server!.listen(at, '127.0.0.1', resolve))
    boundPort = (server.address() as AddressInfo).port
    receiver.url = `http://127.0.0.1:${boundPort}/hook`
  }
  async function stop(): Promise<void> {
    const s = server
    server = undefined
    if (s === undefined) return
    for (const socket of sockets) socket.destroy()
    await new Promise<void>((resolve) => s.close(() => resolve()))
  }
  await listen(port)
  t.teardown(() => stop())
  return receiver
}
