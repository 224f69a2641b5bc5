/**
 * The iCalendar form of the event reads (CONTRACT §14): whether a request asks for it, and how a feed
 * is answered. `ical=1`/`ical=0` decides when sent; otherwise `Accept` does, read by negotiator as for
 * `/doc`: `text/calendar` when the client ranks it above `application/json` (by quality, then by how
 * specific the range is, then by its order in the header), JSON otherwise: without `Accept`, with
 * `*\/*`, or with both named alike and JSON first. Either way the answer depends on `Accept`, so these
 * routes say `Vary: Accept`.
 *
 * A feed's ETag names its bytes (the feed is made from the records only, nothing of the moment of the
 * request), under a prefix of its own, so it never equals the JSON answer's tag; `If-None-Match` gives
 * 304 as on JSON (`etag.ts`), and compression appends its coding as for every answer (`compression.ts`).
 */
import { createHash } from 'node:crypto'
import type { FastifyReply, FastifyRequest } from 'fastify'
import { checkNotModified } from './etag.js'
import { preferredMediaType } from './negotiation.js'

export const ICAL_MEDIA_TYPE = 'text/calendar; charset=utf-8'

/** Whether the answer is to be the iCalendar form; sets `Vary: Accept` (the answer depends on it either way). */
export function wantsIcal(req: FastifyRequest, reply: FastifyReply, ical: boolean | undefined): boolean {
  reply.header('Vary', 'Accept')
  if (ical !== undefined) return ical
  // JSON offered first: negotiator keeps it when nothing in the header ranks text/calendar above it.
  return preferredMediaType(req, ['application/json', 'text/calendar']) === 'text/calendar'
}

/** The tag of a feed: a digest of its bytes. */
export function feedEtag(text: string): string {
  return `"ical-${createHash('sha256').update(text).digest('base64url').slice(0, 22)}"`
}

/** Answers with the feed `text` (or 304 when `If-None-Match` names it). */
export function sendFeed(req: FastifyRequest, reply: FastifyReply, text: string): string {
  checkNotModified(req, reply, feedEtag(text))
  reply.type(ICAL_MEDIA_TYPE)
  return text
}
