/**
 * The `Idempotency-Key` header (CONTRACT §18): 1–255 printable ASCII characters, on the operations whose
 * spec declares it (every create). A malformed key is a 400 naming the header, checked before the body is
 * validated (like the parameters the validator checks), so that it is refused before anything is
 * claimed or written. What a key does is the handlers' (handlers/idempotency.ts).
 */
import type { FastifyInstance, FastifyRequest } from 'fastify'
import { isRecord } from '../lib/json.js'
import { invalidParam } from './errors.js'

const HEADER = 'idempotency-key'

/** What a key may be: 1–255 printable ASCII characters (space to tilde). */
const KEY_FORM = /^[\x20-\x7e]{1,255}$/

/** The key sent, if any; a malformed one is 400 naming the header. */
export function idempotencyKeyOf(req: FastifyRequest): string | undefined {
  const key = req.headers[HEADER]
  if (key === undefined) return undefined
  if (typeof key !== 'string' || !KEY_FORM.test(key)) throw invalidParam('Idempotency-Key', 'invalidIdempotencyKey')
  return key
}

/** Whether the route's operation declares the header (its schema's headers, as glue made them from the spec). */
function takesKey(req: FastifyRequest): boolean {
  const headers: unknown = req.routeOptions.schema?.headers
  const properties = isRecord(headers) ? headers.properties : undefined
  return isRecord(properties) && Object.keys(properties).some((name) => name.toLowerCase() === HEADER)
}

export function registerIdempotencyKeyCheck(app: FastifyInstance): void {
  app.addHook('preValidation', (req, _reply, done) => {
    try {
      if (req.headers[HEADER] !== undefined && takesKey(req)) idempotencyKeyOf(req)
    } catch (error) {
      done(error as Error)
      return
    }
    done()
  })
}
