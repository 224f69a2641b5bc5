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

/**
 * The id sent in `X-Request-Id` if it is a short token, else a new one; also a new one when the token could be
 * a credential (CONTRACT §6: no header of an answer holds a key or any part of `Authorization`): an API key's
 * form (`cal_…`), or a part of the `Authorization` header sent with it.
 */
export function requestIdOf(sent: string | string[] | undefined, authorization?: string): string {
  if (typeof sent !== 'string' || !TOKEN.test(sent) || KEY_FORM.test(sent)) return randomUUID()
  return authorization !== undefined && authorization.includes(sent) ? randomUUID() : sent
}

/** What an API key begins with (lib/api-keys.ts), in any case. */
const KEY_FORM = /^cal_/i

/** Fastify's `genReqId`: the request's id, from its header or new. */
export function genReqId(req: IncomingMessage): string {
  return requestIdOf(req.headers['x-request-id'], req.headers.authorization)
}
