/**
 * Compression (CONTRACT §16): answers over 1 kB are sent `br`, `gzip` or `deflate`, as the client's
 * `Accept-Encoding` prefers, by @fastify/compress: JSON records and lists (the pre-serialized record
 * bytes of `serialized.ts` included), /doc in JSON and YAML, iCal, the Swagger UI's assets. Every answer
 * says `Vary: Accept-Encoding` (`headers.ts`).
 *
 * ETags and codings (RFC 9110 §8.8.3: a strong validator names one representation, and a content
 * coding makes another one). The rule: the ETag a handler computes names the uncompressed (identity)
 * representation; an answer sent compressed carries that tag with the coding appended inside the quotes
 * (`"event-1-3-<digest>"` becomes `"event-1-3-<digest>-br"`), as Apache does. `If-None-Match` and
 * `If-Match` accept either form of the current tag (`etag.ts`), so a client that cached a compressed
 * answer still gets 304, and can still write conditionally with the tag it was given.
 */
import compress from '@fastify/compress'
import type { FastifyInstance, FastifyReply } from 'fastify'
import { CODINGS, codedEtag, type Coding } from './etag.js'

const THRESHOLD_BYTES = 1024

/** Text, JSON, YAML, XML and scripts; never images or event streams. */
const COMPRESSIBLE = /^text\/(?!event-stream)|(?:\+|\/)(?:json|yaml|xml)(?:;|$)|javascript/

export async function registerCompression(app: FastifyInstance): Promise<void> {
  await app.register(compress, {
    global: true,
    threshold: THRESHOLD_BYTES,
    encodings: [...CODINGS],
    // Request bodies in the same codings, on every Node.js (zstd, which Node 24 decodes and 22 does not, is 415).
    requestEncodings: [...CODINGS],
    customTypes: COMPRESSIBLE,
  })
  // After the plugin's own hook on each route (this onRoute hook runs after its one): the coding is known.
  app.addHook('onRoute', (route) => {
    const hooks = route.onSend === undefined ? [] : Array.isArray(route.onSend) ? route.onSend : [route.onSend]
    route.onSend = headLast([...hooks, (_req, reply, payload, done) => {
      tagCoding(reply)
      varyOnce(reply)
      done(null, payload)
    }])
  })
}

/**
 * HEAD answers with the header fields GET would send (RFC 9110 §9.3.2): its coding, the length of the coded
 * body and the coded ETag. Fastify's HEAD route of a GET ends the GET's own onSend hooks with the one that
 * drops the body (and sets the length from it); the hooks added to the HEAD route afterwards (the plugin's,
 * this file's) would then see no body and compress nothing. That hook is moved to the end, after them.
 */
function headLast<T extends { name: string }>(hooks: T[]): T[] {
  const at = hooks.findIndex((hook) => hook.name === 'headRouteOnSendHandler')
  if (at < 0 || at === hooks.length - 1) return hooks
  return [...hooks.slice(0, at), ...hooks.slice(at + 1), hooks[at] as T]
}

function isCoding(value: unknown): value is Coding {
  return CODINGS.some((c) => c === value)
}

/** A compressed answer's ETag names its coding. */
function tagCoding(reply: FastifyReply): void {
  const coding = reply.getHeader('Content-Encoding')
  if (coding === undefined) return
  const etag = reply.getHeader('ETag')
  if (isCoding(coding) && typeof etag === 'string' && etag.startsWith('"')) reply.header('ETag', codedEtag(etag, coding))
}

/**
 * `Vary` names each header once: the plugin appends `accept-encoding` when the value it finds does not
 * hold that token in lower case, though `headers.ts` already wrote `Accept-Encoding`.
 */
function varyOnce(reply: FastifyReply): void {
  const vary = reply.getHeader('Vary')
  // One name (what `headers.ts` writes when the plugin added nothing): nothing to fold.
  if (vary === undefined || (typeof vary === 'string' && !vary.includes(','))) return
  // The few values answers carry, folded once each (`Accept-Encoding, accept-encoding` on every plain answer).
  const known = typeof vary === 'string' ? folded.get(vary) : undefined
  if (known !== undefined) {
    reply.header('Vary', known)
    return
  }
  const value = foldVary(vary)
  if (typeof vary === 'string' && folded.size < 100) folded.set(vary, value)
  reply.header('Vary', value)
}

/** Vary values as sent → as folded (each name once). */
const folded = new Map<string, string>()

function foldVary(vary: string | number | string[]): string {
  const seen = new Set<string>()
  const tokens: string[] = []
  for (const token of (Array.isArray(vary) ? vary : [String(vary)]).flatMap((v) => v.split(','))) {
    const name = token.trim()
    if (name === '' || seen.has(name.toLowerCase())) continue
    seen.add(name.toLowerCase())
    tokens.push(name)
  }
  return tokens.join(', ')
}
