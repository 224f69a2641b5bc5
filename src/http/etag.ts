/**
 * Strong ETags naming a record's stored version (CONTRACT §5): `If-None-Match` on reads gives 304,
 * a stale `If-Match` on writes gives 412. The version check itself is compare-and-swap in SQL.
 */
import type { FastifyReply, FastifyRequest } from 'fastify'
import { preconditionFailed } from './errors.js'

export function etagOf(resource: string, id: number, version: number): string {
  return `"${resource}-${id}-${version}"`
}

/** A 304 answer, thrown so that handlers keep returning only contract bodies. */
export class NotModified extends Error {
  constructor(readonly etag: string) {
    super('not modified')
  }
}

function tags(header: string): string[] {
  return header.split(',').map((t) => t.trim()).filter((t) => t !== '')
}

/** Sets the ETag and answers 304 when `If-None-Match` names it (weak comparison, RFC 9110). */
export function checkNotModified(req: FastifyRequest, reply: FastifyReply, etag: string): void {
  reply.header('ETag', etag)
  const header = req.headers['if-none-match']
  if (header === undefined) return
  const list = tags(header)
  if (list.includes('*') || list.some((t) => t.replace(/^W\//, '') === etag)) throw new NotModified(etag)
}

/**
 * The version a conditional write must still find: the current one when `If-Match` names the current
 * ETag (strong comparison), none when there is no `If-Match`; a stale one is 412 at once.
 */
export function expectedVersion(req: FastifyRequest, etag: string, version: number): number | undefined {
  const header = req.headers['if-match']
  if (header === undefined) return undefined
  const list = tags(header)
  if (list.includes('*') || list.includes(etag)) return version
  throw preconditionFailed()
}
