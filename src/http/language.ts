/**
 * The language a request asks for (the six codes are the contract's `ml_language` enum, src/contract.ts).
 */
import type { FastifyRequest } from 'fastify'
import { isLanguage, type Language } from '../contract.js'

/**
 * The language a request asks for, body first (writes may carry `ml_language` there), then the query.
 * An invalid value is left for validation to reject; here it simply does not count.
 */
export function requestedLanguage(req: FastifyRequest): Language | undefined {
  const body = req.body
  if (body !== null && typeof body === 'object' && 'ml_language' in body && isLanguage(body.ml_language)) {
    return body.ml_language
  }
  const query = req.query
  if (query !== null && typeof query === 'object' && 'ml_language' in query && isLanguage(query.ml_language)) {
    return query.ml_language
  }
  return undefined
}
