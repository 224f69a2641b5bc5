/**
 * Content negotiation for the answers that come in more than one media type (`/doc`: JSON or YAML),
 * by the `Accept` header as RFC 9110 §12.5.1 reads it: q-values (`q=0` refuses), media types compared
 * case-insensitively, wildcards. A hand-written pattern had taken any mention of YAML as a request for
 * it, `;q=0` included; `negotiator` (the library express and @fastify/accepts use) reads it properly.
 */
import Negotiator from 'negotiator'
import type { FastifyRequest } from 'fastify'

/**
 * The media type of `offered` the request prefers; the first offered when it names none of them (or
 * sends no `Accept`): a request is never refused over its `Accept` header.
 */
export function preferredMediaType<T extends string>(req: FastifyRequest, offered: readonly [T, ...T[]]): T {
  const accept = req.headers.accept
  if (accept === undefined || accept.trim() === '') return offered[0]
  const chosen = new Negotiator({ headers: { accept } }).mediaType(offered)
  return offered.find((type) => type === chosen) ?? offered[0]
}
