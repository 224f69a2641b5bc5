/**
 * The iCalendar form of the event reads (CONTRACT §14): whether a request asks for it, and how a feed
 * is answered. `ical=1`/`ical=0` decides when sent; otherwise `Accept` does: `text/calendar` only when
 * the header gives it a strictly higher quality than `application/json` (CONTRACT §14: preferred over
 * JSON; acceptable while JSON is not counts), JSON otherwise: without `Accept`, with `*\/*`, and on
 * every tie, whatever the order of the header or how specific its ranges. Either way the answer depends
 * on `Accept`, so these routes say `Vary: Accept`.
 *
 * A feed's ETag is made from what its bytes are made of (the feed holds nothing of the moment of the
 * request): the format, the calendar's options and, for each event in order, its JSON ETag as the caller
 * sees it (id, stored version, digest of the record, so a renamed venue changes it) and whether it is
 * protected. So `If-None-Match` is answered 304 before a single VEVENT is written. The tag has a prefix
 * of its own, so it never equals a JSON answer's tag; compression appends its coding as for every answer
 * (`compression.ts`).
 */
import { createHash } from 'node:crypto'
import type { FastifyReply, FastifyRequest } from 'fastify'
import { checkNotModified } from './etag.js'
import { acceptQuality } from './negotiation.js'

export const ICAL_MEDIA_TYPE = 'text/calendar; charset=utf-8'

/** Whether the answer is to be the iCalendar form; sets `Vary: Accept` (the answer depends on it either way). */
export function wantsIcal(req: FastifyRequest, reply: FastifyReply, ical: boolean | undefined): boolean {
  reply.header('Vary', 'Accept')
  if (ical !== undefined) return ical
  const accept = req.headers.accept
  if (accept === undefined) return false
  return acceptQuality(accept, 'text/calendar') > acceptQuality(accept, 'application/json')
}

/** The tag of a feed: a digest of everything its bytes are made of (`inputs`, in order). */
export function feedEtag(inputs: readonly (string | number)[]): string {
  return `"ical-${createHash('sha256').update(JSON.stringify(inputs)).digest('base64url').slice(0, 22)}"`
}

/** Answers 304 when `If-None-Match` names `etag`, else with the feed `write` makes. */
export function sendFeed(req: FastifyRequest, reply: FastifyReply, etag: string, write: () => string): string {
  checkNotModified(req, reply, etag)
  reply.type(ICAL_MEDIA_TYPE)
  return write()
}
