/**
 * What reads compute, remembered until the data changes: list totals (counting a wide filter reads
 * every matching index entry; the page itself does not), the ids of list pages, and assembled records
 * (a record joins its row with terms, venues, organizers, images and translations, and derives dates,
 * costs and JSON-LD).
 *
 * The repositories read through it (`recordsById`, `rememberedResult`); handlers see it only for hot answers
 * (`hotAnswer`, below). It is
 * bound to the database it remembers (`useReadCache`) and never used inside a unit of work, whose
 * reads must see its own writes.
 *
 * What drops it is the change log (CONTRACT §12), read in one place: before a read, `sync` asks the
 * engine for the log's last position (`dataVersion`, one statement). When it moved, by a write of this
 * process or of any other node, the entries since the last look name the records that changed: each
 * is dropped with the records that embed it (an event shows its venues, organizers and terms), and so
 * are the list results that depend on their resources, when next found (each result catches up with the
 * changes taken in since it last did: a write costs the same however many results are remembered); but a
 * result that can be rechecked (every id of a list with link filters, in order) is kept when only events
 * changed, with their ids, and the read that next finds it asks its recheck whether it still holds (those
 * in the list still matching and in their place, the others not matching now: statements by id instead of
 * the list's), trusted only if the data did not move meanwhile. The same statement reads the data epoch,
 * which triggers move whenever a table the cache reads is written (migration 0007): when it moved
 * while the log stayed put, rows changed outside the log (raw SQL, another process's direct write),
 * and everything is dropped. Writes to tables the cache does not read (the webhook dispatcher's
 * claims and attempts, API keys, retention's pruning of the log, other schemas or databases) move
 * neither and drop nothing. Each read belongs to the generation `sync` returns; anything computed
 * while a change was being taken in is not kept (`set` with that generation), so a value computed
 * across a change is never served.
 *
 * One look per request, not per read: given `moments` (a count that moves whenever a request arrives
 * and whenever a unit of work of this process ends), a `sync` that finds the count where it was when
 * the last look was asked for answers that look's generation without asking the engine again. No
 * request arrived since that question was sent, so every request still reading began before it: what
 * the look saw was committed before their arrival or concurrently with it, and a write of this process
 * moves the count. A request that arrives, and a read after a write, always look again; so does a read
 * after any other read of the data version (dialect.ts `versionsReadSoFar`): an event document is offered
 * at the version read before it is assembled, and the fill between requests reads one too, so what they
 * assemble must come from a look at least that new (else a record cached before a raw write, with no
 * request since, would be stored as the event's document). On SQLite the look is taken in as soon as it
 * is asked (the connection's probe answers at once): reads of one request that start together (a
 * document's categories and tags) share it, where an awaited answer would let each of them ask.
 *
 * A reader may make the look itself (`Look`): on PostgreSQL, where a look is a round trip of its own, an anonymous
 * read by id reads the event's stored document in the look's statement (repositories/event-documents.ts
 * `readWithVersion`), one round trip instead of two; what it read is of the very snapshot the look saw. An
 * anonymous list page there takes its look on trust (`provisionalLook`, `onTrust`): its cached reads use the last
 * look's generation, and the statement of its event documents reads the version and settles it before the page
 * is answered (read again after a real look when the data had moved). A page that looked for itself reads on that
 * look (`withLook`): with requests arriving all the time, "no request arrived since" seldom holds, and each of its
 * cached reads asked the engine again, a round trip each. A read on either that reads another version in its own
 * flow asks the engine again for what it reads after (`onVersionRead`).
 *
 * It counts its hits and misses (`stats`), which the metrics module reads through `readCacheStats`.
 *
 * Hot answers (issue 49): the bytes of an answer a read sent and what its headers say (an anonymous single read
 * of an event: its ETag; an anonymous JSON list of events: X-Total, X-Total-Pages, Link, keyed by its URL and
 * the window the clock makes of it), kept for the generation they were made in and served only while it is the
 * current one: any change taken in (a write of this process or of another node, a raw write that moved the
 * epoch) leaves them all unused, and the next read makes its answer again. A URL asked again and again (a front
 * page, a widget, a probe) is then one look at the data version and bytes out; on SQLite without a promise
 * (`hotAnswerNow`), the probe answering at once. At most MAX_ANSWERS of them within MAX_ANSWER_BYTES, the least
 * recently used dropped first.
 *
 * Bounded: at most `maxEntries` records, and `maxEntries × RESULTS_PER_RECORD` list results and lookups
 * within about MAX_RESULT_BYTES, the least recently used dropped first. Off (every call computes) when
 * created with 0 entries.
 */
import { AsyncLocalStorage } from 'node:async_hooks'
import type { Kysely } from 'kysely'
import { dataVersion, onVersionRead, versionProbeOf, versionsReadSoFar, type DataVersion } from '../db/dialect.js'
import type { ChangeResource, Database } from '../db/schema.js'
import type { Db } from '../db/unit-of-work.js'
import { changesBetween as changesInLog } from './changes.js'
import { NO_FOOTPRINT, footprintsOf, type Footprint } from './footprints.js'

export const DEFAULT_CACHE_ENTRIES = 1000

/** What `syncNow` answers when the look must be waited for. */
export const WAIT: unique symbol = Symbol('wait')

/** A record changed since the last look at the log, as the log names it. */
export interface ChangedRecord {
  resource: ChangeResource
  record_id: number
}

/**
 * The records changed at positions after `from` up to `to`, or undefined when the log no longer holds
 * them all (retention pruned some, or too many to be worth picking out): then everything is dropped.
 */
export type ChangesBetween = (db: Db, from: number, to: number) => Promise<readonly ChangedRecord[] | undefined>

export interface ReadCache {
  /**
   * The generation of this read, after taking in what changed since the last look; undefined: caching off.
   * `look`: how to read where the data stands when a look is asked of the engine (default `dataVersion`): a
   * statement that reads something else in the same snapshot besides (see `hotAnswer`).
   */
  sync(db: Db, look?: Look): Promise<number | undefined>
  /**
   * `sync` when it can answer without waiting (the last look still holds, or SQLite's probe answers at once
   * and finds no change to take in), else WAIT (then `sync`: a change it found is being taken in already).
   */
  syncNow(db: Db): number | undefined | typeof WAIT
  /**
   * Any computed result, remembered under `key` (`<kind>:<table>:…`) until its resources change (undefined
   * is not remembered). With `recheck`, a change of events only (no other resource it depends on) keeps it
   * with the changed events' ids, and the next hit asks `recheck` whether it still holds (see `Recheck`).
   */
  remember<T>(db: Db, key: string, compute: () => Promise<T>, recheck?: Recheck<T>, relevant?: Relevant<T>): Promise<T>
  /** A remembered record (never to be mutated by its reader). */
  get<T>(key: string): T | undefined
  /** A remembered record if there is one, else undefined without counting a miss (the caller looks elsewhere). */
  peek<T>(key: string): T | undefined
  /**
   * Remembers a record computed during `generation` (ignored if the data changed since); `embeds`:
   * the keys of the records it shows (`venue:3`), whose change drops it too.
   */
  set(generation: number | undefined, key: string, value: unknown, embeds?: readonly string[]): void
  /**
   * The current generation taken on trust, without asking the engine (see `provisionalLook`), or undefined when a
   * look must be asked: caching off, a change being taken in, no look made yet, or since the last one a unit of
   * work of this process ended.
   */
  provisional(): ProvisionalLook | undefined
  /**
   * A look already taken for a request (it returned `generation`) made the request's own for what it reads next
   * (`onTrust`), settled; undefined when that generation is not the current one (or caching is off).
   */
  looked(generation: number): ProvisionalLook | undefined
  /** Whether `look` holds at `version` (read after it was taken): the data did not move and no change was taken in since. */
  settle(look: ProvisionalLook, version: DataVersion | undefined): boolean
  /** Whether a hot answer is kept under `key` in the current generation (not counted as a hit or a miss). */
  holdsAnswer(key: string): boolean
  /** The hot answer kept under `key` in generation `current` (the one `sync` returned), if that is still the current one. */
  answer<T>(current: number | undefined, key: string): T | undefined
  /** Keeps a hot answer of `bytes` bytes made during `current` (ignored if the data changed since). */
  keepAnswer(current: number | undefined, key: string, value: unknown, bytes: number): void
  /** Drops everything. */
  invalidate(): void
  /** Lookups so far that found what they asked for and that did not, of records and of results. */
  stats(): ReadCacheStats
}

/**
 * A look at where the data stands that a caller makes itself: one statement that reads the data version and
 * what the caller is about to read in the same snapshot (PostgreSQL: one round trip instead of two).
 */
export type Look = () => Promise<DataVersion | undefined>

/**
 * A request's look at the data version taken on trust (`provisionalLook`): the generation of the last look, its
 * version, and whether a version read since (in the request's own statements) showed it still held.
 */
export interface ProvisionalLook {
  /** The cache whose generation it is. */
  cache: ReadCache
  generation: number
  version: DataVersion
  settled: boolean
  /** Found not to hold, or its request answered: nothing more is read on it. */
  over: boolean
}

/** The provisional look of the request whose reads run inside `onTrust`. */
const trusted = new AsyncLocalStorage<ProvisionalLook>()

// A read on a look taken on trust that reads another version than the look's (an event document's version, read
// before what is assembled and offered at it) no longer reads on that look: what it computes after must come from a
// look at least as new (see "One look per request" above), so its next cached read asks the engine. Only reads of
// its own flow count (ten requests in flight read versions all the time: a count over the process, as `lastHolds`
// keeps, would end every look at once). A provisional look not settled yet is settled by that read and found not to
// hold as before (`settle`).
onVersionRead((version) => {
  const look = trusted.getStore()
  if (look !== undefined && (version.head !== look.version.head || version.epoch !== look.version.epoch)) look.over = true
})

/** Thrown by `settleLook` when a provisional look did not hold: the request is answered again after a real look. */
export class LookMoved extends Error {
  constructor() {
    super('the data moved since the look taken on trust')
  }
}

export interface ReadCacheStats {
  hits: { records: number; results: number; answers: number }
  misses: { records: number; results: number; answers: number }
}

/** Hot answers kept at most, and the bytes they may take (see the opening comment). */
export const MAX_ANSWERS = 512
export const MAX_ANSWER_BYTES = 8 * 1024 * 1024

/** A remembered record or result, and when it was stored or last moved to the end (see `recall`). */
interface Entry {
  value: unknown
  stamp: number
}

/**
 * Whether a remembered result still holds after the events `changed` changed (and nothing else it depends
 * on), asked against the data as it stands now: false when it may not (it is then computed again).
 */
export type Recheck<T> = (value: T, changed: readonly number[]) => Promise<boolean>

/**
 * Whether the changed event `id`, as it stands after the change (`footprint`, read when the change was taken in),
 * may matter to a remembered result that can be rechecked: false only when it matches the result's filter neither
 * now (the footprint shows none of what a match needs) nor in the result as it was computed (the value does not
 * hold it). Such an event is not made a suspect (see `catchUp`).
 */
export type Relevant<T> = (value: T, id: number, footprint: Footprint) => boolean

/** A remembered result: the tables it depends on; with a recheck, the events changed since it was computed. */
interface Result extends Entry {
  tables: ReadonlySet<string>
  /** Its estimated size (`sizeOf`). */
  bytes: number
  recheck?: Recheck<unknown>
  relevant?: Relevant<unknown>
  suspects?: Set<number>
  /** The number of the last change taken in that it has learnt of (see `catchUp`). */
  seen: number
}

/**
 * Changed events a result is kept with at most (more: it is dropped, as without a recheck). Under the benchmark's
 * 90/10 mix a list is read again after some 220 PATCHes of random events on average (800 lists of links, 10 %
 * writes): at 128 most lists were dropped before their next read and read again (2–3 ms a list with series); the
 * recheck looks up only the changed events linked to the list's targets (`changedMatchesQuery`), a probe each.
 */
const MAX_SUSPECTS = 512

/**
 * A change taken in, as the results remembered before it learn of it: the tables it wrote and the events it changed,
 * with their footprints as they stood at the change's position (undefined: not read, or the data moved meanwhile).
 */
interface Change {
  tables: ReadonlySet<string>
  /** Whether `tables` is `events` alone (a write of events only: most changes). */
  eventsAlone: boolean
  events: readonly number[]
  footprints?: ReadonlyMap<number, Footprint>
}

/** Changed events whose footprints are read when a change is taken in, at most (a bulk change: every one a suspect). */
const MAX_FOOTPRINTS = 1000

/**
 * The footprints of the events `ids` exactly as they stood at `to` (the version the change was taken in at): read,
 * then the version read again; if it moved (another write committed meanwhile, whose state the read may have seen),
 * undefined. On a failure too: then every changed event is a suspect, as without footprints.
 */
async function footprintsAt(db: Db, ids: readonly number[], to: DataVersion): Promise<ReadonlyMap<number, Footprint> | undefined> {
  if (ids.length === 0 || ids.length > MAX_FOOTPRINTS) return undefined
  try {
    const found = await footprintsOf(db, ids)
    const after = await dataVersion(db)
    return after !== undefined && after.head === to.head && after.epoch === to.epoch ? found : undefined
  } catch {
    return undefined
  }
}

/** Changes kept for the results to catch up with (`catchUp`) at most; the older half is then taken in by every result at once. */
const MAX_CHANGES_KEPT = 1024

/**
 * List results and lookups kept per record kept (`maxEntries` records): a result is a number or a list of
 * ids (up to 1,000), a record 27–40 kB, and a site's lists have many more keys than its pages have records
 * (each filter, page and search needle its own): with as many results as records, a random search (thousands of
 * needles) pushed out the costly counts (5 ms a common two-letter needle's) before they were asked again.
 */
export const RESULTS_PER_RECORD = 8
/** The memory list results may take at most, as estimated (`sizeOf`): 32 MB. */
export const MAX_RESULT_BYTES = 32 * 1024 * 1024

/** About how many bytes a remembered result takes (its key, and its value: numbers, ids, maps of them, sets of bits). */
function sizeOf(key: string, value: unknown): number {
  const base = 96 + key.length * 2
  if (Array.isArray(value)) return base + 16 + value.length * 8
  if (ArrayBuffer.isView(value)) return base + 64 + value.byteLength
  if (value instanceof Map) return base + 64 + value.size * 96
  if (typeof value === 'string') return base + value.length * 2
  return base + 16
}

/** The record kind of each resource of the log (`event:12` is the key of event 12). */
const KIND: Record<ChangeResource, string> = { events: 'event', venues: 'venue', organizers: 'organizer', categories: 'category', tags: 'tag' }

/** The tables a remembered result depends on, from its key `<kind>:<table>:…`. */
function dependenciesOf(key: string): ReadonlySet<string> {
  const [kind, table = ''] = key.split(':', 2)
  const tables = new Set([table])
  const list = kind === 'count' || kind === 'ids' || kind === 'all'
  // Every list can filter by event (venues, organizers and terms by `event`/`post`, venues by upcoming events).
  if (list) tables.add('events')
  // Event lists filter on their venues' coordinates (geoloc).
  if (table === 'events' && list) tables.add('venues')
  return tables
}

const TABLE: Record<ChangeResource, string> = { events: 'events', venues: 'venues', organizers: 'organizers', categories: 'terms', tags: 'terms' }

/**
 * `moments`: see above (undefined: every `sync` asks the engine). `writes`: a count that moves whenever a unit of
 * work of this process ends (undefined: no look is taken on trust, `provisional`).
 */
export function createReadCache(maxEntries = DEFAULT_CACHE_ENTRIES, changesBetween: ChangesBetween = changesInLog, moments?: () => number, writes?: () => number): ReadCache {
  const records = new Map<string, Entry>()
  const results = new Map<string, Result>()
  const maxResults = maxEntries * RESULTS_PER_RECORD
  let resultBytes = 0
  const dropResult = (key: string) => {
    const entry = results.get(key)
    if (entry === undefined) return
    results.delete(key)
    resultBytes -= entry.bytes
  }
  // Which remembered records show a record (`venue:3` → `event:12`, …), and the reverse, to forget both ways.
  const shownIn = new Map<string, Set<string>>()
  const shows = new Map<string, readonly string[]>()
  let generation = 0
  let seen: DataVersion | undefined
  let catchingUp: Promise<void> | undefined
  // The last look: the generation it returned, `moments()` when its question was sent, and the count of
  // versions read once it was answered (another read of the version since, by anyone, means look again).
  let last: { generation: number; at: number; reads: number; writes: number | undefined } | undefined
  const counts: ReadCacheStats = { hits: { records: 0, results: 0, answers: 0 }, misses: { records: 0, results: 0, answers: 0 } }
  // Hot answers, all of generation `answersOf` (those of an older one are never served, and cleared when the next is kept).
  const answers = new Map<string, { value: unknown; bytes: number; stamp: number }>()
  let answerBytes = 0
  let answerStamp = 0
  let answersOf = -1
  const clearAnswers = () => {
    answers.clear()
    answerBytes = 0
  }

  // A Map keeps insertion order and the oldest entry goes first. A hit moves its entry to the end once half
  // the cache or more was stored since it was stored or last moved: an entry read again before the other
  // half is stored stays, as with a move on every hit (which a cache of two still makes), without a delete
  // and a set on every hit (a page's terms are hit a dozen times).
  let stamp = 0
  // The changes taken in that results may not have learnt of yet (`catchUp`): `changes[i]` is change number
  // `changesBefore + i + 1`; a result brought up to number n has learnt of every change up to n.
  const changes: Change[] = []
  let changesBefore = 0
  const recall = <E extends Entry>(map: Map<string, E>, key: string): E | undefined => {
    const entry = map.get(key)
    if (entry !== undefined && stamp - entry.stamp >= maxEntries / 2) {
      map.delete(key)
      map.set(key, entry)
      entry.stamp = ++stamp
    }
    return entry
  }
  const forgetRecord = (key: string) => {
    records.delete(key)
    for (const shown of shows.get(key) ?? []) shownIn.get(shown)?.delete(key)
    shows.delete(key)
  }
  const dropRecord = (key: string) => {
    forgetRecord(key)
    const embedders = shownIn.get(key)
    if (embedders === undefined) return
    shownIn.delete(key)
    for (const embedder of embedders) forgetRecord(embedder)
  }

  async function takeIn(db: Db, from: DataVersion, to: DataVersion): Promise<void> {
    // A log that went back (the database restored from a copy) names nothing of what changed.
    const changed = to.head < from.head ? undefined : await changesBetween(db, from.head, to.head)
    if (changed === undefined) {
      cache.invalidate()
      return
    }
    const tables = new Set<string>()
    const events = new Set<number>()
    for (const { resource, record_id: id } of changed) {
      dropRecord(`${KIND[resource]}:${id}`)
      tables.add(TABLE[resource])
      if (resource === 'events') events.add(id)
    }
    // The results learn of it when next found (`catchUp`): a write costs the same however many are remembered.
    const ids = [...events]
    const footprints = await footprintsAt(db, ids, to)
    changes.push({ tables, eventsAlone: tables.size === 1 && tables.has('events'), events: ids, ...(footprints === undefined ? {} : { footprints }) })
    if (changes.length > MAX_CHANGES_KEPT) {
      // The older half goes: the results that have not learnt of all of it do so now (once every
      // MAX_CHANGES_KEPT / 2 changes, each result at most once).
      const gone = changes.length - MAX_CHANGES_KEPT / 2
      for (const [key, entry] of results) if (entry.seen < changesBefore + gone) catchUp(key, entry)
      changes.splice(0, gone)
      changesBefore += gone
    }
  }

  /**
   * Brings a remembered result up to the last change taken in: dropped (false) when one of them wrote a table
   * it depends on, unless only events of what it depends on changed and it can be rechecked: then it is kept
   * with their ids (`suspects`, MAX_SUSPECTS at most), which the read that found it rechecks (`stillHolds`).
   */
  function catchUp(key: string, entry: Result): boolean {
    const head = changesBefore + changes.length
    if (entry.seen === head) return true
    // Not so (the results catch up before changes are forgotten); if it were, it is dropped.
    if (entry.seen < changesBefore) {
      dropResult(key)
      return false
    }
    // Walked once per change since the result's last read (some 200 PATCHes under the 90/10 mix): nothing made per
    // change unless it adds a suspect.
    const { tables, recheck, relevant, value } = entry
    let suspects = entry.suspects
    for (let i = entry.seen - changesBefore; i < changes.length; i++) {
      const change = changes[i] as Change
      let hit = false
      let eventsOnly = true
      if (change.eventsAlone) hit = tables.has('events')
      else {
        for (const table of tables) {
          if (!change.tables.has(table)) continue
          hit = true
          if (table !== 'events') eventsOnly = false
        }
      }
      if (!hit) continue
      if (!eventsOnly || recheck === undefined) {
        dropResult(key)
        return false
      }
      // Only the changed events that may matter to it (`Relevant`, from their footprints) are suspects.
      const { footprints } = change
      for (const id of change.events) {
        if (footprints === undefined || relevant === undefined || relevant(value, id, footprints.get(id) ?? NO_FOOTPRINT)) (suspects ??= new Set<number>()).add(id)
      }
      if (suspects !== undefined && suspects.size > MAX_SUSPECTS) {
        dropResult(key)
        return false
      }
    }
    if (suspects !== undefined && suspects.size > 0) entry.suspects = suspects
    entry.seen = head
    return true
  }

  /**
   * Whether a result kept with changed events still holds (its suspects then forgotten), else it is dropped.
   * Trusted only when the data did not move while it was rechecked: no change was taken in since the
   * request's look (`generation` is still `current`) and the log's head and the epoch read after the recheck
   * are the look's, so the recheck read the state the look saw.
   */
  async function stillHolds(db: Db, key: string, entry: Result, current: number): Promise<boolean> {
    const suspects = entry.suspects
    let holds = false
    if (entry.recheck !== undefined && suspects !== undefined) {
      const looked = seen
      holds = (await entry.recheck(entry.value, [...suspects])) && generation === current
      if (holds) {
        const now = await dataVersion(db)
        holds = now !== undefined && looked !== undefined && seen === looked && now.head === looked.head && now.epoch === looked.epoch
      }
    }
    // Another recheck may have settled or dropped it meanwhile; only this entry's state is changed.
    if (holds && entry.suspects === suspects) entry.suspects = undefined
    else if (!holds && results.get(key) === entry) dropResult(key)
    return holds
  }

  /**
   * Takes in a look at the data `version` (asked when `moments()` was `at`, `reads` versions had been read and
   * `wrote` units of work of this process had ended):
   * the generation it belongs to, undefined when there is no version, or WAIT when a change is being taken
   * in (this look began taking it in, or another had): then look again once it is.
   */
  function takeLook(db: Db, version: DataVersion | undefined, at: number | undefined, reads: number, wrote: number | undefined): number | undefined | typeof WAIT {
    if (version === undefined) return undefined
    // Another read began taking in a change while this one asked: wait for it, then look again.
    if (catchingUp !== undefined) return WAIT
    if (seen === undefined) {
      cache.invalidate()
      seen = version
    } else if (version.head !== seen.head) {
      // Nothing begun before this point is kept, and every read waits until the change is taken in.
      generation += 1
      const from = seen
      seen = version
      catchingUp = takeIn(db, from, version).catch(() => cache.invalidate()).finally(() => {
        catchingUp = undefined
      })
      return WAIT
    } else if (version.epoch !== seen.epoch) {
      cache.invalidate()
      seen = version
    }
    // Its own read is the one counted since `reads`; any other (concurrent) one leaves the look unusable.
    last = at === undefined ? undefined : { generation, at, reads: reads + 1, writes: wrote }
    return generation
  }

  /** Whether the last look still answers for this read (see "One look per request" above). */
  const lastHolds = (): boolean =>
    last !== undefined && moments !== undefined && catchingUp === undefined && last.at === moments() && last.reads === versionsReadSoFar()

  const cache: ReadCache = {
    async sync(db, look) {
      if (maxEntries <= 0) return undefined
      // A read of a request that took its look on trust (`onTrust`): that generation, while it is the current one.
      const onTrust = trusted.getStore()
      if (onTrust !== undefined && onTrust.cache === cache && !onTrust.over && onTrust.generation === generation && catchingUp === undefined) return generation
      if (lastHolds()) return (last as { generation: number }).generation
      for (;;) {
        if (catchingUp !== undefined) {
          await catchingUp
          continue
        }
        const at = moments?.()
        const reads = versionsReadSoFar()
        const wrote = writes?.()
        const probe = versionProbeOf(db)
        const looked = takeLook(db, probe !== undefined ? probe() : await (look !== undefined ? look() : dataVersion(db)), at, reads, wrote)
        if (looked !== WAIT) return looked
      }
    },
    syncNow(db) {
      if (maxEntries <= 0) return undefined
      if (lastHolds()) return (last as { generation: number }).generation
      const probe = versionProbeOf(db)
      if (catchingUp !== undefined || probe === undefined) return WAIT
      const at = moments?.()
      const reads = versionsReadSoFar()
      return takeLook(db, probe(), at, reads, writes?.())
    },
    async remember<T>(db: Db, key: string, compute: () => Promise<T>, recheck?: Recheck<T>, relevant?: Relevant<T>): Promise<T> {
      const current = await cache.sync(db)
      if (current === undefined) return compute()
      const hit = recall(results, key)
      if (hit !== undefined && catchUp(key, hit) && (hit.suspects === undefined || (await stillHolds(db, key, hit, current)))) {
        counts.hits.results += 1
        return hit.value as T
      }
      counts.misses.results += 1
      const value = await compute()
      if (generation === current && value !== undefined) {
        const bytes = sizeOf(key, value)
        dropResult(key)
        // The oldest make room, by count and by estimated size.
        while (results.size > 0 && (results.size >= maxResults || resultBytes + bytes > MAX_RESULT_BYTES)) {
          const oldest = results.keys().next()
          if (oldest.done === true) break
          dropResult(oldest.value)
        }
        results.set(key, { value, tables: dependenciesOf(key), stamp: ++stamp, seen: changesBefore + changes.length, bytes, ...(recheck === undefined ? {} : { recheck: recheck as Recheck<unknown> }), ...(relevant === undefined ? {} : { relevant: relevant as Relevant<unknown> }) })
        resultBytes += bytes
      }
      return value
    },
    get<T>(key: string) {
      const entry = recall(records, key)
      if (entry === undefined) counts.misses.records += 1
      else counts.hits.records += 1
      return entry?.value as T | undefined
    },
    peek<T>(key: string) {
      const entry = recall(records, key)
      if (entry !== undefined) counts.hits.records += 1
      return entry?.value as T | undefined
    },
    set(current, key, value, embeds = []) {
      if (current === undefined || current !== generation) return
      if (records.size >= maxEntries) {
        const oldest = records.keys().next()
        if (oldest.done !== true) forgetRecord(oldest.value)
      }
      forgetRecord(key)
      records.set(key, { value, stamp: ++stamp })
      if (embeds.length === 0) return
      shows.set(key, embeds)
      for (const shown of embeds) {
        let set = shownIn.get(shown)
        if (set === undefined) shownIn.set(shown, set = new Set())
        set.add(key)
      }
    },
    provisional() {
      if (maxEntries <= 0 || moments === undefined || writes === undefined || seen === undefined || last === undefined || catchingUp !== undefined) return undefined
      // Versions read elsewhere since the last look (other requests' statements: all the time with requests in flight on
      // PostgreSQL) do not keep it from being taken: the version that settles it is read in the request's own statement and
      // must be the look's own (`settle`), and a version of another read in its flow ends it (`onVersionRead` above).
      if (last.generation !== generation || last.writes !== writes()) return undefined
      return { cache, generation, version: seen, settled: false, over: false }
    },
    looked(current) {
      if (maxEntries <= 0 || seen === undefined || current !== generation || catchingUp !== undefined) return undefined
      return { cache, generation, version: seen, settled: true, over: false }
    },
    settle(look, version) {
      if (look.settled) return true
      const holds = version !== undefined && generation === look.generation && catchingUp === undefined
        && version.head === look.version.head && version.epoch === look.version.epoch
      if (!holds) {
        // The next read asks the engine (and takes in what changed).
        look.over = true
        last = undefined
        return false
      }
      look.settled = true
      // The version read that settled it is this look's own.
      if (last !== undefined && last.generation === generation) last = { ...last, reads: versionsReadSoFar() }
      return true
    },
    holdsAnswer(key) {
      return answersOf === generation && answers.has(key)
    },
    answer<T>(current: number | undefined, key: string) {
      if (current === undefined || current !== generation || answersOf !== generation) return undefined
      const entry = answers.get(key)
      if (entry === undefined) {
        counts.misses.answers += 1
        return undefined
      }
      counts.hits.answers += 1
      // The most recently used last, moved there once a quarter of them were kept since (as `recall` does).
      if (answerStamp - entry.stamp >= MAX_ANSWERS / 4) {
        answers.delete(key)
        answers.set(key, entry)
        entry.stamp = ++answerStamp
      }
      return entry.value as T
    },
    keepAnswer(current, key, value, bytes) {
      if (current === undefined || current !== generation || bytes > MAX_ANSWER_BYTES) return
      if (answersOf !== generation) {
        clearAnswers()
        answersOf = generation
      }
      const old = answers.get(key)
      if (old !== undefined) {
        answers.delete(key)
        answerBytes -= old.bytes
      }
      while (answers.size > 0 && (answers.size >= MAX_ANSWERS || answerBytes + bytes > MAX_ANSWER_BYTES)) {
        const oldest = answers.keys().next()
        if (oldest.done === true) break
        answerBytes -= answers.get(oldest.value)?.bytes ?? 0
        answers.delete(oldest.value)
      }
      answers.set(key, { value, bytes, stamp: ++answerStamp })
      answerBytes += bytes
    },
    invalidate() {
      last = undefined
      clearAnswers()
      records.clear()
      results.clear()
      resultBytes = 0
      changesBefore += changes.length
      changes.length = 0
      shownIn.clear()
      shows.clear()
      generation += 1
    },
    stats() {
      return { hits: { ...counts.hits }, misses: { ...counts.misses } }
    },
  }
  return cache
}

const bound = new WeakMap<object, ReadCache>()

/**
 * Makes `cache` remember what the repositories read from `db` (it learns of changes from the log). One
 * cache per database handle (the app that owns the handle binds it).
 */
export function useReadCache(db: Kysely<Database>, cache: ReadCache): void {
  bound.set(db, cache)
}

/** The hit and miss counts of the cache bound to `db` (undefined when none is). */
export function readCacheStats(db: Kysely<Database>): ReadCacheStats | undefined {
  return bound.get(db)?.stats()
}

/**
 * Records for `ids`, in that order (ids with no record left out): those remembered since the last
 * change, the others from `load` (remembered if nothing changed meanwhile, unless `remember` is false:
 * a pass over every record, which would only push out those that are read). `kind` names the records
 * (`event`, `venue`, …): one id space per kind.
 */
export async function recordsById<T>(
  db: Db, kind: string, ids: readonly number[], load: (ids: readonly number[]) => Promise<ReadonlyMap<number, T>>,
  embeds?: (record: T) => readonly string[], remember = true,
): Promise<T[]> {
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
      if (remember) cache?.set(generation, key(id), record, embeds?.(record))
    }
  }
  return ids.flatMap((id) => {
    const record = byId.get(id)
    return record === undefined ? [] : [record]
  })
}

/**
 * `recordsById`, and the data version they hold at: the look of the generation current before they were read, while
 * it is still the current one once they are (undefined: caching off, or a change taken in meanwhile). A record
 * remembered then holds at that version; one assembled meanwhile read the data at that version or a later one, so a
 * unit of work that finds that very version (unit-of-work.ts `writtenSince`) knows nothing wrote between the read and
 * itself. (A look of its own, so that `recordsById`, on every read's path, makes no promise more.)
 */
export async function recordsSeen<T>(
  db: Db, kind: string, ids: readonly number[], load: (ids: readonly number[]) => Promise<ReadonlyMap<number, T>>,
  embeds?: (record: T) => readonly string[],
): Promise<{ records: T[]; version: DataVersion | undefined }> {
  const cache = bound.get(db)
  const generation = cache === undefined ? undefined : await cache.sync(db)
  const records = await recordsById(db, kind, ids, load, embeds)
  return { records, version: generation === undefined ? undefined : cache?.looked(generation)?.version }
}

/**
 * The records of `ids` the read cache holds now (after taking in what changed since it last looked),
 * without loading the others: for reads that have another source for those (stored event documents).
 */
export async function rememberedRecords<T>(db: Db, kind: string, ids: readonly number[]): Promise<Map<number, T>> {
  const found = new Map<number, T>()
  const cache = bound.get(db)
  if (cache === undefined || ids.length === 0 || (await cache.sync(db)) === undefined) return found
  for (const id of ids) {
    const hit = cache.peek<T>(`${kind}:${id}`)
    if (hit !== undefined) found.set(id, hit)
  }
  return found
}

/**
 * The hot answer kept under `key` (`<what>:<id>:…`, one name per answer and URL), after the request's look at
 * the data version: `value` when it was made in the generation that look returned, and that `generation`, for
 * `keepHotAnswer` (undefined when there is no cache or it is off). `look`: the caller's own look (`Look`: the
 * version and what it reads next, in one statement), used when the engine is asked and no answer is kept under
 * `key` (one kept is most likely served, and the plain look reads less); the caller tells whether it ran.
 */
export async function hotAnswer<T>(db: Db, key: string, look?: Look): Promise<{ generation: number | undefined; value: T | undefined }> {
  const cache = bound.get(db)
  if (cache === undefined) return { generation: undefined, value: undefined }
  const generation = await cache.sync(db, look !== undefined && !cache.holdsAnswer(key) ? look : undefined)
  return { generation, value: cache.answer<T>(generation, key) }
}

/**
 * `hotAnswer` when it is known without waiting (SQLite's probe, no change to take in: see `syncNow`), else
 * undefined (then ask `hotAnswer`). A read answered from it never yields: no promise, no turn of the loop.
 */
export function hotAnswerNow<T>(db: Db, key: string): { generation: number | undefined; value: T | undefined } | undefined {
  const cache = bound.get(db)
  if (cache === undefined) return { generation: undefined, value: undefined }
  const generation = cache.syncNow(db)
  return generation === WAIT ? undefined : { generation, value: cache.answer<T>(generation, key) }
}

/**
 * The current generation from a look at the data version taken now (unless the last one still answers: see
 * "One look per request"), when it is known without waiting (SQLite's probe, no change to take in), else 'wait'
 * (then `lookedGeneration`); undefined when there is no cache or it is off. For answers replayed before routing.
 */
export function generationNow(db: Db): number | undefined | 'wait' {
  const cache = bound.get(db)
  if (cache === undefined) return undefined
  const generation = cache.syncNow(db)
  return generation === WAIT ? 'wait' : generation
}

/**
 * The current generation after a look at the data version (as a read's), waited for; undefined without a cache.
 * `look`: the caller's own look (`Look`: the version and what it reads next, in one statement), used when the engine
 * is asked (the caller tells whether it ran: not when the last look still answers).
 */
export async function lookedGeneration(db: Db, look?: Look): Promise<number | undefined> {
  return bound.get(db)?.sync(db, look)
}

/**
 * Keeps `value` (`bytes` long) as the hot answer under `key`, made from reads that began after the look that
 * returned `generation`: kept only if the data has not changed since (else the next read makes it again).
 */
export function keepHotAnswer(db: Db, generation: number | undefined, key: string, value: unknown, bytes: number): void {
  bound.get(db)?.keepAnswer(generation, key, value, bytes)
}

/**
 * A computed result (a list total, the ids of a page, the id a slug names) remembered under `key`, which
 * must say everything the result depends on; undefined results are not remembered.
 */
export async function rememberedResult<T>(db: Db, key: string, compute: () => Promise<T>, recheck?: Recheck<T>, relevant?: Relevant<T>): Promise<T> {
  const cache = bound.get(db)
  return cache === undefined ? compute() : cache.remember(db, key, compute, recheck, relevant)
}

/**
 * A look at the data version taken on trust for a request on an engine whose look is a statement of its own
 * (PostgreSQL), undefined when none may be taken (SQLite, whose look answers at once; no cache; see
 * `ReadCache.provisional`). The request's cached reads (run inside `onTrust`) then use the generation of the last
 * look without asking the engine, and the request settles it before it answers (`settleLook`, `lookHolds`): with the version read in
 * one of its own statements (the page's event documents: repositories/event-documents.ts `readMany`), else with a
 * look of its own. It holds when that version is the last look's and no change was taken in meanwhile: nothing
 * was written between the last look and a moment after the request arrived, so what the cache held was what a
 * look at that moment would have let it serve. When it does not hold, the request reads everything again after a
 * real look (`LookMoved`).
 */
export function provisionalLook(db: Db): ProvisionalLook | undefined {
  if (versionProbeOf(db) !== undefined) return undefined
  return bound.get(db)?.provisional()
}

/** Whether a hot answer is kept under `key` in the current generation (not counted as a hit or a miss). */
export function holdsHotAnswer(db: Db, key: string): boolean {
  return bound.get(db)?.holdsAnswer(key) === true
}

/** Runs `read` with `look` taken on trust: the cached reads it makes use the look's generation without asking the engine. */
export async function onTrust<T>(look: ProvisionalLook, read: () => Promise<T>): Promise<T> {
  try {
    return await trusted.run(look, read)
  } finally {
    // Work it started that runs on (an offer stored, a timer) looks for itself.
    look.over = true
  }
}

/**
 * Runs `read` with the look that returned `generation` as its own (`onTrust`): a look taken after the request arrived
 * (the replay's look for the requests held in a turn, http/replay.ts), whose generation its cached reads then use
 * without asking the engine again while it is the current one. On PostgreSQL a look is a round trip: a cold read's
 * terms, read after it, looked again whenever another request had arrived meanwhile (twice at once: categories and
 * tags). Else (no cache, or that generation gone) `read` looks for itself.
 */
export async function withLook<T>(db: Db, generation: number | undefined, read: () => Promise<T>): Promise<T> {
  const look = generation === undefined ? undefined : bound.get(db)?.looked(generation)
  return look === undefined ? read() : onTrust(look, read)
}

/**
 * The look taken on trust of the request whose reads run here (`onTrust`) while it is not settled yet, else undefined:
 * a statement the request must send anyway may read the data version beside what it reads and settle it
 * (`settleLook`), so that the request takes no look of its own.
 */
export function unsettledLook(): ProvisionalLook | undefined {
  const look = trusted.getStore()
  return look === undefined || look.settled || look.over ? undefined : look
}

/** Settles `look` with `version` (read in the same snapshot as what the request reads with it); throws `LookMoved` when it did not hold. */
export function settleLook(look: ProvisionalLook, version: DataVersion | undefined): void {
  if (!look.cache.settle(look, version)) throw new LookMoved()
}

/** Whether `look` holds: settled already, else settled now with a look of its own (one statement). */
export async function lookHolds(db: Db, look: ProvisionalLook): Promise<boolean> {
  return look.settled || look.cache.settle(look, await dataVersion(db))
}
