/**
 * The optional per-client rate limit (CONTRACT §16, CALENDAR_RATE_LIMIT requests per minute; off by
 * default): @fastify/rate-limit on every route, keyed by the client's API key when it sends one that
 * authenticates (a digest, never the key itself, is kept), else by its address (which
 * `CALENDAR_TRUST_PROXY` decides): a key that is no client's (unknown, revoked, malformed, made up)
 * counts against the address, or a new random key per request would never be limited. Its hook is a
 * route's, so it runs after authentication's (an app hook) has looked the key up.
 * Answers carry the draft standard's `RateLimit-Limit`, `RateLimit-Remaining` and `RateLimit-Reset`;
 * a client over the limit gets 429 `rest_too_many_requests` with `Retry-After`, written by the one
 * error handler. Health checks and metrics are never limited (their routes opt out).
 */
import { createHash } from 'node:crypto'
import rateLimit from '@fastify/rate-limit'
import type { FastifyInstance, FastifyRequest } from 'fastify'
import { bearerKey } from '../lib/api-keys.js'
import { tooManyRequests } from './errors.js'

/** Addresses and keys remembered at most (least recently used dropped first). */
const CACHE = 10_000

/** The client a request counts against: its key when the key authenticated, else its address. */
export function clientOf(req: FastifyRequest): string {
  const key = req.user === null ? undefined : bearerKey(req.headers.authorization)
  return key === undefined ? `address:${req.ip}` : `key:${createHash('sha256').update(key).digest('base64url')}`
}

/** Registers the limit when `perMinute` is above 0. */
export async function registerRateLimit(app: FastifyInstance, perMinute: number): Promise<void> {
  if (perMinute <= 0) return
  await app.register(rateLimit, {
    global: true,
    max: perMinute,
    timeWindow: 60_000,
    cache: CACHE,
    hook: 'onRequest',
    enableDraftSpec: true,
    keyGenerator: clientOf,
    errorResponseBuilder: (_req, context) => tooManyRequests(Math.max(1, Math.ceil(context.ttl / 1000))),
  })
}

/**
 * Fastify's `trustProxy` from CALENDAR_TRUST_PROXY, which decides the address both limits count by: a
 * number of hops becomes a function (Fastify's types take no number).
 */
export function trustProxyOption(setting: boolean | number | string): boolean | string | ((address: string, hop: number) => boolean) {
  return typeof setting === 'number' ? (_address, hop) => hop < setting : setting
}
