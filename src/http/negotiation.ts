/**
 * Content negotiation for the answers that come in more than one media type (`/doc`: JSON or YAML),
 * by the `Accept` header as RFC 9110 §12.5.1 reads it: q-values (`q=0` refuses), media types compared
 * case-insensitively, wildcards. A hand-written pattern had taken any mention of YAML as a request for
 * it, `;q=0` included; `negotiator` (the library express and @fastify/accepts use) reads it properly.
 */
import { parse } from 'content-type'
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

/**
 * The quality (RFC 9110 §12.5.1) an `Accept` header gives the media type `type` (`text/calendar`): the
 * `q` of the most specific range that matches it (`text/calendar` over `text/*` over `*\/*`, the first
 * of equals), 0 when none does. The ranges are read by content-type, the parser negotiator itself uses;
 * a header it cannot read gives every type 0.
 */
export function acceptQuality(accept: string, type: string): number {
  const [main] = type.toLowerCase().split('/')
  let best: { specificity: number; q: number } | undefined
  try {
    for (let index = 0; index < accept.length;) {
      const start = /[^\s,]/.exec(accept.slice(index))?.index
      if (start === undefined) break
      const range = parse(accept, { comma: true, start: index + start })
      index = range.index + 1
      const name = range.type.toLowerCase()
      const specificity = name === type.toLowerCase() ? 2 : name === `${main}/*` ? 1 : name === '*/*' ? 0 : -1
      if (specificity < 0 || (best !== undefined && best.specificity >= specificity)) continue
      const q = range.parameters.q === undefined ? 1 : Number.parseFloat(range.parameters.q)
      best = { specificity, q: Number.isNaN(q) ? 0 : Math.min(Math.max(q, 0), 1) }
    }
  } catch {
    return 0
  }
  return best?.q ?? 0
}
