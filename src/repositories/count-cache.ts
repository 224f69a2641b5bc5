/**
 * Totals of list queries, remembered until the data changes. Counting a wide filter (the default
 * window of a large calendar) reads every matching index entry; the page itself does not. Entries are
 * dropped on every write of this process (`invalidate`, called before the write's answer is sent) and
 * whenever another process commits (`dataVersion`), and a count computed across a write is not kept.
 */
import type { Kysely } from 'kysely'
import { dataVersion } from '../db/dialect.js'

const MAX_ENTRIES = 5000

export interface CountCache {
  count(db: Kysely<any>, key: string, compute: () => Promise<number>): Promise<number>
  invalidate(): void
}

export function createCountCache(): CountCache {
  const entries = new Map<string, number>()
  let generation = 0
  let seenVersion: number | undefined
  return {
    async count(db, key, compute) {
      const version = await dataVersion(db)
      if (version === undefined) return compute()
      if (version !== seenVersion) {
        entries.clear()
        seenVersion = version
        generation += 1
      }
      const hit = entries.get(key)
      if (hit !== undefined) return hit
      const before = generation
      const total = await compute()
      if (generation === before) {
        if (entries.size >= MAX_ENTRIES) entries.clear()
        entries.set(key, total)
      }
      return total
    },
    invalidate() {
      entries.clear()
      generation += 1
    },
  }
}
