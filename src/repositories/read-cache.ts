/**
 * What reads compute, remembered until the data changes: list totals (counting a wide filter reads
 * every matching index entry; the page itself does not), the ids of list pages, and assembled records
 * (a record joins its row with terms, venues, organizers, images and translations, and derives dates,
 * costs and JSON-LD).
 *
 * Everything is dropped when the data may have changed: on every write of this process (`invalidate`,
 * called before the write's answer is sent) and whenever `dataVersion` moves (another process
 * committed, or this connection changed rows outside the HTTP layer). Each read first calls `sync`,
 * which returns the generation it belongs to; what it computes is kept only if no change happened in
 * between (`set` with that generation), so a value computed across a write is never served.
 *
 * Bounded: at most `maxEntries` records and `maxEntries` list results and lookups, the least recently
 * used dropped first. Off (every call computes) where the engine gives no change signal (PostgreSQL) or
 * when created with 0 entries.
 */
import type { Kysely } from 'kysely'
import type { Database } from '../db/schema.js'
import { dataVersion } from '../db/dialect.js'

export const DEFAULT_CACHE_ENTRIES = 2500

export interface ReadCache {
  /** The generation of this read, after dropping everything if the data changed; undefined: caching off. */
  sync(db: Kysely<Database>): Promise<number | undefined>
  /**
   * A list total: remembered, or computed (and remembered if nothing changed meanwhile). `synced`: the
   * generation a `sync` of this same read just returned, which saves looking at the data version again.
   */
  count(db: Kysely<Database>, key: string, compute: () => Promise<number>, synced?: number): Promise<number>
  /** The ids of a list page, remembered like totals. */
  ids(db: Kysely<Database>, key: string, compute: () => Promise<number[]>, synced?: number): Promise<readonly number[]>
  /** The id a lookup (a slug) resolves to, remembered like totals; an id not found is not remembered. */
  lookup(db: Kysely<Database>, key: string, compute: () => Promise<number | undefined>, synced?: number): Promise<number | undefined>
  /** A remembered record (never to be mutated by its reader). */
  get<T>(key: string): T | undefined
  /** Remembers a record computed during `generation`; ignored if the data changed since. */
  set(generation: number | undefined, key: string, value: unknown): void
  invalidate(): void
}

export function createReadCache(maxEntries = DEFAULT_CACHE_ENTRIES): ReadCache {
  const records = new Map<string, unknown>()
  const results = new Map<string, unknown>()
  let generation = 0
  let seenVersion: string | undefined

  // A Map keeps insertion order: a hit moves to the end, so the first key is the least recently used.
  const recall = <V>(map: Map<string, V>, key: string): V | undefined => {
    const value = map.get(key)
    if (value !== undefined) {
      map.delete(key)
      map.set(key, value)
    }
    return value
  }
  const remember = <V>(map: Map<string, V>, key: string, value: V) => {
    if (map.size >= maxEntries) {
      const oldest = map.keys().next()
      if (oldest.done !== true) map.delete(oldest.value)
    }
    map.set(key, value)
  }

  async function remembered<T>(db: Kysely<Database>, key: string, compute: () => Promise<T>, synced: number | undefined): Promise<T> {
    const current = synced ?? await cache.sync(db)
    if (current === undefined) return compute()
    const hit = recall(results, key)
    if (hit !== undefined) return hit as T
    const value = await compute()
    if (generation === current) remember(results, key, value)
    return value
  }

  const cache: ReadCache = {
    async sync(db) {
      if (maxEntries <= 0) return undefined
      const version = await dataVersion(db)
      if (version === undefined) return undefined
      if (version !== seenVersion) {
        cache.invalidate()
        seenVersion = version
      }
      return generation
    },
    count: (db, key, compute, synced) => remembered(db, `count:${key}`, compute, synced),
    ids: (db, key, compute, synced) => remembered(db, `ids:${key}`, compute, synced),
    lookup: (db, key, compute, synced) => remembered(db, `lookup:${key}`, compute, synced),
    get<T>(key: string) {
      return recall(records, key) as T | undefined
    },
    set(current, key, value) {
      if (current !== undefined && current === generation) remember(records, key, value)
    },
    invalidate() {
      records.clear()
      results.clear()
      generation += 1
    },
  }
  return cache
}
