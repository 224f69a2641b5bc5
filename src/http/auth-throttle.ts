/**
 * Brute-force protection for API keys (CONTRACT §16): an address whose requests failed authentication
 * (an unknown, revoked or malformed key) more than `limit` times within a minute gets 429
 * `rest_too_many_requests`, with `Retry-After`, on every request that carries an `Authorization` header
 * until that minute has passed. Requests without credentials are never held up, so a blocked address
 * still reads what anyone may read.
 *
 * A fixed window per address, opened by its first failure: simple to reason about, and bounded in
 * memory (windows that ended are swept out once the table grows). Hand-written because
 * @fastify/rate-limit counts requests, not outcomes known only after the key lookup. The clock is the
 * app's (tests move it).
 */
import type { FastifyReply, FastifyRequest } from 'fastify'
import { tooManyRequests } from './errors.js'

const WINDOW_MS = 60_000
/** Past this many addresses, ended windows are swept out at the next failure. */
const SWEEP_AT = 10_000

export interface AuthThrottle {
  /** Throws 429 when the request carries credentials and its address is blocked. */
  check(req: FastifyRequest, reply: FastifyReply): void
  /** Counts a failed authentication of the request's address. */
  failed(req: FastifyRequest): void
}

interface Window {
  start: number
  failures: number
}

/** `limit` 0 turns the throttle off. */
export function createAuthThrottle(limit: number, now: () => Date): AuthThrottle {
  const windows = new Map<string, Window>()
  const current = (address: string, at: number): Window | undefined => {
    const window = windows.get(address)
    if (window !== undefined && at - window.start >= WINDOW_MS) {
      windows.delete(address)
      return undefined
    }
    return window
  }
  return {
    check(req, reply) {
      if (limit <= 0 || req.headers.authorization === undefined) return
      const at = now().getTime()
      const window = current(req.ip, at)
      if (window === undefined || window.failures <= limit) return
      const seconds = Math.max(1, Math.ceil((window.start + WINDOW_MS - at) / 1000))
      req.log.warn({ address: req.ip, failures: window.failures }, 'authentication throttled')
      reply.header('Retry-After', String(seconds))
      throw tooManyRequests(seconds)
    },
    failed(req) {
      if (limit <= 0) return
      const at = now().getTime()
      if (windows.size >= SWEEP_AT) {
        for (const [address, w] of windows) if (at - w.start >= WINDOW_MS) windows.delete(address)
      }
      const window = current(req.ip, at)
      if (window === undefined) windows.set(req.ip, { start: at, failures: 1 })
      else window.failures += 1
    },
  }
}
