/**
 * Requests pipelined on one connection (HTTP/1.1 lets a client send the next request before the answer to the one
 * before): Node hands each to the server as soon as it is parsed and only queues the answers. So a read sent after
 * a write on its connection ran beside the write and answered with the state before it, and a PATCH sent before a
 * DELETE of the same record was refused as not found once the DELETE, run beside it, had committed: RFC 9112 §9.3.2
 * lets a server process pipelined requests in parallel only when they all have safe methods. And a client that sent
 * many reads and read none of the answers had them all made and held in memory at once.
 *
 * Here a request waits until every request before it on its connection was answered, unless it and all of those
 * are safe and fewer than SAFE_IN_FLIGHT are being handled: safe requests that arrive together are still handled
 * together (the replay's one look at the data version for them, http/replay.ts). Requests on different connections
 * are not ordered.
 */
import type { IncomingMessage, Server, ServerResponse } from 'node:http'
import type { Socket } from 'node:net'

/** RFC 9110 §9.2.1. */
const SAFE = new Set(['GET', 'HEAD', 'OPTIONS', 'TRACE'])

/** Safe requests of one connection handled at once at most; the others wait their turn. */
export const SAFE_IN_FLIGHT = 8

type Handler = (req: IncomingMessage, res: ServerResponse) => void

/** A connection's requests being handled (how many, how many not safe), and those that wait (in the order they came). */
interface Line {
  running: number
  unsafe: number
  waiting: Array<{ req: IncomingMessage; res: ServerResponse }>
}

const isSafe = (req: IncomingMessage): boolean => SAFE.has(req.method ?? '')

/**
 * Puts the ordering in front of the server's one `request` listener (Fastify's, or the replay's in front of it:
 * http/replay.ts). Listeners added later (connections.ts counts requests) still see every request as it arrives.
 */
export function orderPipelinedRequests(server: Server): void {
  const listeners = server.listeners('request')
  const first = listeners[0]
  if (first === undefined || listeners.length > 1) throw new Error('orderPipelinedRequests: one request listener was expected on the server')
  const handle = first as Handler
  server.removeListener('request', handle)
  const lines = new WeakMap<Socket, Line>()
  const mayStart = (line: Line, req: IncomingMessage): boolean =>
    line.running === 0 || (line.unsafe === 0 && line.running < SAFE_IN_FLIGHT && isSafe(req))
  const start = (line: Line, req: IncomingMessage, res: ServerResponse): void => {
    const unsafe = !isSafe(req)
    line.running++
    if (unsafe) line.unsafe++
    res.once('close', () => {
      line.running--
      if (unsafe) line.unsafe--
      for (let next = line.waiting[0]; next !== undefined && mayStart(line, next.req); next = line.waiting[0]) {
        line.waiting.shift()
        start(line, next.req, next.res)
      }
    })
    handle.call(server, req, res)
  }
  server.on('request', (req: IncomingMessage, res: ServerResponse) => {
    let line = lines.get(req.socket)
    if (line === undefined) {
      line = { running: 0, unsafe: 0, waiting: [] }
      lines.set(req.socket, line)
    }
    if (line.waiting.length === 0 && mayStart(line, req)) start(line, req, res)
    else line.waiting.push({ req, res })
  })
}
