/**
 * What reads compute, remembered until the data changes: list totals (counting a wide filter reads
 * every matching index entry; the page itself does not), the ids of list pages, and assembled records
 * (a record joins its row with terms, venues, organizers, images and translations, and derives dates,
 * costs and JSON-LD).
 *
 * The repositories read through it (`recordsById`, `rememberedResult`); handlers never see it. It is
 * bound to the database it remembers (`useReadCache`) and never used inside a unit of work, whose
 * reads must see its own writes.
 *
 * What drops it, all here: everything goes when a unit of work on this database ends (`onWritten`),
 * and whenever `dataVersion` moves (another process committed, or this connection changed rows outside
 * a unit of work). Each read first calls `sync`, which returns the generation it belongs to; what it
 * computes is kept only if no change happened in between (`set` with that generation), so a value
 * computed across a write is never served.
 *
 * Bounded: at most `maxEntries` records and `maxEntries` list results and lookups, the least recently
 * used dropped first. Off (every call computes) where the engine gives no change signal (PostgreSQL) or
 * when created with 0 entries.
 */
import type { Kysely } from 'kysely'
import { dataVersion } from '../db/dialect.js'
import type { Database } from '../db/schema.js'
import { onWritten, type Db } from '../db/unit-of-work.js'

export const DEFAULT_CACHE_ENTRIES = 2500

export interface ReadCache {
  /** The generation of this read, after dropping everything if the data changed; undefined: caching off. */
  sync(db: Db): Promise<number | undefined>
  /**
   * A list total: remembered, or computed (and remembered if nothing changed meanwhile). `synced`: the
   * generation a `sync` of this same read just returned, which saves looking at the data version again.
   */
  count(db: Db, key: string, compute: () => Promise<number>, synced?: number): Promise<number>
  /** The ids of a list page, remembered like totals. */
  ids(db: Db, key: string, compute: () => Promise<number[]>, synced?: number): Promise<readonly number[]>
  /** The id a lookup (a slug) resolves to, remembered like totals; an id not found is not remembered. */
  lookup(db: Db, key: string, compute: () => Promise<number | undefined>, synced?: number): Promise<number | undefined>
  /** Any computed result, remembered like totals (undefined is not remembered). */
  remember<T>(db: Db, key: string, compute: () => Promise<T>): Promise<T>
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

  async function remembered<T>(db: Db, key: string, compute: () => Promise<T>, synced: number | undefined): Promise<T> {
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
    remember: (db, key, compute) => remembered(db, `result:${key}`, compute, undefined),
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

const bound = new WeakMap<object, ReadCache>()

/**
 * Makes `cache` remember what the repositories read from `db`, and forget it whenever a unit of work on
 * `db` ends. One cache per database handle (the app that owns the handle binds it).
 */
export function useReadCache(db: Kysely<Database>, cache: ReadCache): void {
  bound.set(db, cache)
  onWritten(db, () => cache.invalidate())
}

/**
 * Records for `ids`, in that order (ids with no record left out): those remembered since the last
 * change, the others from `load` (remembered if nothing changed meanwhile). `kind` names the records
 * (`event`, `venue`, …): one id space per kind.
 */
export async function recordsById<T>(db: Db, kind: string, ids: readonly number[], load: (ids: readonly number[]) => Promise<ReadonlyMap<number, T>>): Promise<T[]> {
  if (ids.length === 0) return []
  const cache = bound.get(db)
  const generation = cache === undefined ? undefined : await cache.sync(db)
  const key = (id: number) => `${kind}:${id}`
  const byId = new Map<number, T>()
  if (cache !== undefined && generation !== undefined) {
    for (const id of ids) {
      const hit = cache.get<T>(key(id))
      if (hit !== undefined) byId.set(id, hit)
    }
  }
  const missing = byId.size === 0 ? ids : ids.filter((id) => !byId.has(id))
  if (missing.length > 0) {
    for (const [id, record] of await load(missing)) {
      byId.set(id, record)
      cache?.set(generation, key(id), record)
    }
  }
  return ids.flatMap((id) => {
    const record = byId.get(id)
    return record === undefined ? [] : [record]
  })
}

/** The record of `kind` with this id if it is remembered (and nothing changed since), without loading it. */
export async function rememberedRecord<T>(db: Db, kind: string, id: number): Promise<T | undefined> {
  const cache = bound.get(db)
  if (cache === undefined || (await cache.sync(db)) === undefined) return undefined
  return cache.get<T>(`${kind}:${id}`)
}

/**
 * A computed result (a list total, the ids of a page, the id a slug names) remembered under `key`, which
 * must say everything the result depends on; undefined results are not remembered.
 */
export async function rememberedResult<T>(db: Db, key: string, compute: () => Promise<T>): Promise<T> {
  const cache = bound.get(db)
  return cache === undefined ? compute() : cache.remember(db, key, compute)
}
