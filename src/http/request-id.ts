/**
 * Every answer names its request (CONTRACT §16): `X-Request-Id`, the same id every log line of that
 * request carries (Fastify's `reqId`), so that an operator can find a client's report in the logs. A
 * proxy or client that already named the request is followed when its id is a short token; anything
 * else (too long, spaces, control characters that could forge log lines) is replaced by a new id.
 */
import { randomUUID } from 'node:crypto'
import type { IncomingMessage } from 'node:http'

export const REQUEST_ID_HEADER = 'X-Request-Id'

const TOKEN = /^[A-Za-z0-9._-]{1,64}$/

/** The id sent in `X-Request-Id` if it is a short token, else a new one. */
export function requestIdOf(sent: string | string[] | undefined): string {
  return typeof sent === 'string' && TOKEN.test(sent) ? sent : randomUUID()
}

/** Fastify's `genReqId`: the request's id, from its header or new. */
export function genReqId(req: IncomingMessage): string {
  return requestIdOf(req.headers['x-request-id'])
}
