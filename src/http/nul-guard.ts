/**
 * The NUL character (U+0000) is refused in every query parameter a route knows and every body field: it
 * ends strings in C and PostgreSQL cannot store it in text at all, so accepting it on SQLite would make
 * the engines differ (CONTRACT §15). A 400 naming the field, before validation; a path segment with
 * one names no record (the repositories look nothing up for it).
 */
import type { FastifyInstance } from 'fastify'
import { isRecord } from '../lib/json.js'
import { invalidParam } from './errors.js'

/** Whether `value` holds U+0000 anywhere: in a string, or in a key or value of what it contains. */
export function holdsNul(value: unknown): boolean {
  if (typeof value === 'string') return value.includes('\u0000')
  if (Array.isArray(value)) return value.some(holdsNul)
  if (isRecord(value)) return Object.entries(value).some(([key, inner]) => key.includes('\u0000') || holdsNul(inner))
  return false
}

export function registerNulGuard(app: FastifyInstance): void {
  app.addHook('preValidation', async (req) => {
    // Query parameters the route does not know are ignored (CONTRACT §1), NUL and all.
    const query = isRecord(req.query) ? req.query : {}
    for (const name of req.sentQuery) if (holdsNul(query[name])) throw invalidParam(name, 'nulCharacter')
    if (!isRecord(req.body)) return
    for (const [name, value] of Object.entries(req.body)) {
      if (name.includes('\u0000') || holdsNul(value)) throw invalidParam(name, 'nulCharacter')
    }
  })
}
