/**
 * Event passwords (CONTRACT §6) are compared in constant time, over digests so that lengths leak
 * nothing either.
 */
import { createHash, timingSafeEqual } from 'node:crypto'

export function samePassword(given: string, stored: string): boolean {
  const digest = (s: string) => createHash('sha256').update(s, 'utf8').digest()
  return timingSafeEqual(digest(given), digest(stored))
}
