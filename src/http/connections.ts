/**
 * How long a connection may last and how it ends. Fastify's defaults let a client hold a socket for
 * ever (no request or connection timeout), kept every socket that had been answered early while its
 * body was still coming, reset the connections it had accepted but not yet read on shutdown, and closed
 * sockets on an unread body so abruptly that the client often lost the answer (a 413 ended in EPIPE).
 * This module sets the timeouts (CONTRACT §11, config.ts), caps the number of open connections, closes
 * a connection after an answer to a body it did not read (after a bounded lingering close, so that the
 * client reads the answer), and drains on shutdown: stop accepting, answer every request on a
 * connection already accepted with `Connection: close`, then close.
 */
import type { IncomingMessage } from 'node:http'
import { Server as NetServer, type Socket } from 'node:net'
import type { FastifyInstance, FastifyServerOptions } from 'fastify'
import type { ConnectionLimits } from '../config.js'

declare module 'fastify' {
  interface FastifyInstance {
    /** Stops accepting, lets the requests on open connections finish, resolves once every connection closed. */
    drainConnections(): Promise<void>
  }
}

/**
 * After answering a body it did not read, the server reads and drops at most this much, for at most LINGER_MS.
 * More than a client sends whole in one go (the abuse tests send 16 MiB): a close while the client still writes
 * resets the connection, and a client that had not yet read the answer loses it (with 4 MiB: one 413 of the
 * test's 30 lost to EPIPE, in a CI run on a loaded machine). LINGER_MS still bounds how long a connection is read.
 */
export const LINGER_BYTES = 64 * 1024 * 1024
export const LINGER_MS = 1000

/** On shutdown, connections still arriving are taken for at most this long before the listener closes. */
const ACCEPT_WINDOW_MS = 1000

/** Fastify's options for Node's timeouts: headers, whole request, idle keep-alive, and no traffic at all. */
export function connectionOptions(limits: ConnectionLimits): Pick<FastifyServerOptions, 'connectionTimeout' | 'keepAliveTimeout' | 'requestTimeout' | 'forceCloseConnections' | 'return503OnClosing'> & { http: { headersTimeout: number; connectionsCheckingInterval: number; requireHostHeader: boolean } } {
  return {
    requestTimeout: limits.requestTimeoutMs,
    keepAliveTimeout: limits.keepAliveTimeoutMs,
    // A socket on which nothing moves either way (a client that stops reading its answer) is cut as well.
    connectionTimeout: limits.requestTimeoutMs,
    http: {
      headersTimeout: limits.headersTimeoutMs,
      // Node checks the header and request timeouts on this interval (30 s by default, which would let a
      // request of a 1 s limit live for 31 s).
      connectionsCheckingInterval: Math.max(10, Math.min(1000, Math.floor(limits.headersTimeoutMs / 4))),
      // Node's own answer to a missing Host is a bare 400; client-errors.ts gives it the contract's body.
      requireHostHeader: false,
    },
    // Shutdown is drainConnections' (below): Fastify would close fresh connections and answer 503.
    forceCloseConnections: false,
    return503OnClosing: false,
  }
}

interface ConnectionState {
  /** Requests on it not yet answered. */
  active: number
  /** Requests on it answered. */
  served: number
}

/** Registers the connection handling; what it returns says whether the server is draining (shutdown began). */
export function registerConnectionHandling(app: FastifyInstance, limits: ConnectionLimits): { closing(): boolean } {
  const sockets = new Map<Socket, ConnectionState>()
  let closing = false
  let accepted = 0
  let server: NetServer | undefined

  app.addHook('onReady', async () => {
    const http = app.server
    server = http
    http.maxConnections = limits.maxConnections
    http.on('connection', (socket: Socket) => {
      accepted++
      sockets.set(socket, { active: 0, served: 0 })
      socket.once('close', () => sockets.delete(socket))
    })
    http.on('request', (req: IncomingMessage, res) => {
      const state = sockets.get(req.socket)
      if (state === undefined) return
      state.active++
      res.once('close', () => {
        state.active--
        state.served++
        // Answered with keep-alive before the shutdown began: nothing more will come on it.
        if (closing && state.active === 0 && !req.socket.destroyed) req.socket.end()
      })
    })
  })

  app.addHook('onSend', (req, reply, payload, done) => {
    if (bodyUnread(req.raw)) {
      reply.header('Connection', 'close')
      // None when the request's stream was destroyed (a body whose Content-Encoding did not decode): Node then closes it.
      const socket = req.raw.socket as Socket | null
      if (socket !== null) lingerOnClose(socket)
    } else if (closing) {
      reply.header('Connection', 'close')
    }
    done(null, payload)
  })

  app.decorate('drainConnections', async function drainConnections(): Promise<void> {
    closing = true
    if (server === undefined || !server.listening) return
    const listener = server
    // Connections the kernel has already accepted are taken (and answered) first, instead of reset when
    // the listening socket closes: libuv takes them a few per turn of the event loop, so turns are
    // given until two in a row take none (the first may end in the turn the signal came in, after its
    // poll), bounded in time since new ones may keep coming.
    const started = Date.now()
    for (let idle = 0; idle < 2 && Date.now() - started < ACCEPT_WINDOW_MS;) {
      const before = accepted
      await new Promise((resolve) => setImmediate(resolve))
      idle = accepted === before ? idle + 1 : 0
    }
    // net's close, not http's: http's would also cut every connection that has not yet sent its request.
    const closed = new Promise<void>((resolve) => NetServer.prototype.close.call(listener, () => resolve()))
    for (const [socket, state] of sockets) if (state.active === 0 && state.served > 0) socket.end()
    const cut = setTimeout(() => {
      for (const socket of sockets.keys()) socket.destroy()
    }, limits.shutdownTimeoutMs)
    await closed
    clearTimeout(cut)
  })
  return { closing: () => closing }
}

/** Whether the request announced a body the server has not read to its end (an early error answer). */
function bodyUnread(req: IncomingMessage): boolean {
  if (req.complete) return false
  const length = req.headers['content-length']
  return req.headers['transfer-encoding'] !== undefined || (length !== undefined && length !== '0')
}

/**
 * Replaces the abrupt close Node does after a `Connection: close` answer (`destroySoon`: the socket is
 * destroyed as soon as the answer is written, and the unread body in the kernel's buffer makes it send a
 * reset, which can make the client lose the answer) with a lingering one: our side is half-closed after
 * the answer, what the client still sends is read and dropped, and the socket is destroyed when the
 * client closes its side, after LINGER_BYTES, or after LINGER_MS, whichever comes first.
 */
function lingerOnClose(socket: Socket & { lingering?: boolean }): void {
  if (socket.lingering === true) return
  socket.lingering = true
  socket.destroySoon = function lingeringClose(this: Socket): void {
    if (this.writable) this.end()
    let dropped = 0
    const timer = setTimeout(() => this.destroy(), LINGER_MS)
    timer.unref()
    this.on('data', (chunk: Buffer) => {
      dropped += chunk.length
      if (dropped > LINGER_BYTES) this.destroy()
    })
    this.once('end', () => this.destroy())
    this.once('close', () => clearTimeout(timer))
    this.resume()
  }
}
