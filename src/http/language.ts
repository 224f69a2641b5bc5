/**
 * Languages of the data and of the texts served. The six codes are the contract's `ml_language` enum.
 */
import type { FastifyRequest } from 'fastify'

export const LANGUAGES = ['at', 'en', 'de', 'es', 'ch-fr', 'ch-de'] as const
export type Language = (typeof LANGUAGES)[number]

export function isLanguage(value: unknown): value is Language {
  return typeof value === 'string' && (LANGUAGES as readonly string[]).includes(value)
}

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

/** A stored language code; anything else means the database was written by something other than this app. */
export function asLanguage(value: string): Language {
  if (!isLanguage(value)) throw new Error(`stored language is not a known code: ${value}`)
  return value
}
