/**
 * The NUL character (U+0000) is refused in every query parameter a route knows and every body field: it
 * ends strings in C and PostgreSQL cannot store it in text at all, so accepting it on SQLite would make
 * the engines differ (CONTRACT §15). A 400 naming the field, before validation; a path segment with
 * one names no record (the repositories look nothing up for it).
 */
import type { FastifyInstance, FastifyRequest } from 'fastify'
import { isRecord } from '../lib/json.js'
import { invalidParam } from './errors.js'

/** Whether `value` holds U+0000 anywhere: in a string, or in a key or value of what it contains. */
export function holdsNul(value: unknown): boolean {
  // A loop, not recursion: a body may nest deeper than the stack (6,000 arrays in 12 kB were a 500).
  const pending: unknown[] = [value]
  while (pending.length > 0) {
    const next = pending.pop()
    if (typeof next === 'string') {
      if (next.includes('\u0000')) return true
    } else if (Array.isArray(next)) {
      for (const item of next) pending.push(item)
    } else if (isRecord(next)) {
      for (const [key, inner] of Object.entries(next)) {
        if (key.includes('\u0000')) return true
        pending.push(inner)
      }
    }
  }
  return false
}

export function registerNulGuard(app: FastifyInstance): void {
  // Called back, not a promise per request.
  app.addHook('preValidation', (req, _reply, done) => {
    done(nulIn(req))
  })
}

/** The 400 a request's NUL character earns, or undefined when it sends none. */
function nulIn(req: FastifyRequest): Error | undefined {
  // Query parameters the route does not know are ignored (CONTRACT §1), NUL and all.
  const query = isRecord(req.query) ? req.query : {}
  for (const name of req.sentQuery) if (holdsNul(query[name])) return invalidParam(name, 'nulCharacter')
  if (!isRecord(req.body)) return undefined
  for (const [name, value] of Object.entries(req.body)) {
    if (name.includes('\u0000') || holdsNul(value)) return invalidParam(name, 'nulCharacter')
  }
  return undefined
}
