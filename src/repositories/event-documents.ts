/**
 * Event documents (migration 0009): the answer to an anonymous single read of an event kept in the
 * database as the bytes sent, so that such a read is one indexed statement and bytes out instead of
 * assembling the record (its row, links, linked records, dates, JSON-LD) and serializing it. The terms it
 * shows are left out and read with it (their records change with every event linked or unlinked): the
 * document keeps their ids and where they go (handlers/event-documents.ts puts them in).
 *
 * Documents are kept for published events without a password, as an anonymous caller is shown them
 * (venues and organizers it may not read left out; handlers/event-documents.ts makes them), and only
 * anonymous reads use them. Triggers delete a document in the transaction of any write that changes what
 * it keeps (the migration lists them), on every node and for every writer.
 *
 * What keeps a stored document from ever being stale is when it may be stored. A read that finds none
 * reads next, before anything else, where the data stands (`DataVersion`: the change log's head and the data
 * epoch, which every write of a table a document shows moves); the record it then assembles is offered
 * with that version. Offers are written off the request path, a batch in one write transaction, and only
 * those that still hold inside that transaction are stored: either the version is still the current one
 * (nothing was written between the read and the store), or only this process's units of work wrote since
 * (their journal, db/unit-of-work.ts `writtenBetween`, leads from the offer's version to the current one)
 * and they changed events only, none of them this one, one of the translations it was assembled with, or
 * one in its translation group now. Any other write in between (a venue, a term, an image, raw SQL,
 * another process or node) drops it. Either way the document is what a read would assemble now, and any
 * later write deletes it. (Without the journal, writes dropped offers they did not touch: in the
 * benchmark's mixed workload, about 250 PATCHes a second, one batch of offers in three found a write
 * between its read and its store, 35 of 107 in 4 s; each such offer waited for a later read to be made
 * again.) The write transaction excludes the API's writers (SQLite's one writer; PostgreSQL's write
 * lock, db/postgres-dialect.ts) and, on PostgreSQL, any other writer too: it takes the tables a document
 * shows in SHARE mode without waiting (a writer in the middle of its transaction makes the batch give
 * way and be dropped; one that comes later waits for the batch, and its triggers then see its documents).
 * A batch that loses to a writer is dropped: the next read offers again. A fill (`fill`) stores the
 * missing ones in the background by the same rule.
 *
 * `context` names what the bytes depend on besides the data: the public URL (every `rest_url`), the
 * contract's Event schema, the site's settings that a record shows (`DocumentSite`: the `geoloc` extension,
 * the site time zone) and the format of this code's records (`DOCUMENT_FORMAT`, raised whenever the assembly
 * of a record changes). Documents made under another context are passed by and replaced: a node started with
 * other settings on the same database neither serves nor keeps another's.
 */
import { createHash } from 'node:crypto'
import { CompiledQuery, sql, type Kysely } from 'kysely'
import { VERSION_QUERY, dataVersion, isPostgres, isWriteConflict, joinedIds, versionOf, type DataVersion } from '../db/dialect.js'
import { DOCUMENT_SOURCES } from '../db/migrations/0009-event-documents.js'
import type { Database } from '../db/schema.js'
import { writtenBetween } from '../db/unit-of-work.js'
import { settleLook, type ProvisionalLook } from './read-cache.js'
import type { Site } from './site.js'

/** Raised whenever what a record's assembly makes changes without the contract's Event schema changing. */
export const DOCUMENT_FORMAT = 4

/** Offers waiting to be stored at most (more are passed by: the next read offers again). */
const MAX_WAITING = 1000
/** Changes of this process's writes an offer may be checked against (more: it is dropped). */
const MAX_CHANGES_BETWEEN = 1000
/** Documents stored in one write transaction at most. */
const BATCH = 200
/** Events a fill assembles at once; while the node is saturated, fewer and a round apart. */
const FILL_BATCH = 100
const BUSY_FILL_BATCH = 20
const BUSY_ROUND_MS = 200
/** Event ids a fill looks through per statement. */
const FILL_WINDOW = 5000
/**
 * The bytes of series' documents kept for reads of their occurrences (SQLite, `readOccurrence`) at most: 16 MB, some
 * 3,600 series of 4.4 kB (the benchmark's series' mean; its 20,000 events have 3,773 series with a document).
 */
export const MAX_KEPT_BODY_BYTES = 16 * 1024 * 1024

/** An event's stored document (see the migration for what each part is). */
export interface EventDocument {
  id: number
  /** The event's translation group: `coalesce(translation_group, id)`. */
  group: number
  version: number
  /** The digest of the record without its terms (http/etag.ts `eventDigest`). */
  digest: string
  /** The JSON sent, its categories and tags arrays empty. */
  body: Buffer
  categoryIds: number[]
  tagIds: number[]
  /** Byte offsets in `body` inside the empty categories and tags arrays. */
  categoryAt: number
  tagAt: number
  /** The bytes of `body` a list leaves out (`,"json_ld":{…}`). */
  ldFrom: number
  ldTo: number
}

/** A document offered to be stored, with the events of its translation group it was assembled with. */
export interface OfferedDocument extends EventDocument {
  /** The ids its record's `translations` named (its own among them). */
  members: readonly number[]
}

/** What a read of a page's documents finds: those stored, and where the data stood when some were not. */
export interface DocumentsRead {
  found: Map<number, EventDocument>
  /** Read after the documents when some were missing (what their assembled records are offered with). */
  version?: DataVersion
}

/** What a read by id finds: the stored document, else where the data stood when it looked. */
export type DocumentRead =
  | { found: true; document: EventDocument }
  | { found: false; version: DataVersion }

/** A document with the row of one occurrence of its event (`undefined` when it has none with that id). */
export interface OccurrenceDocument {
  document: EventDocument
  /** The occurrence's dates as its row holds them (UTC), and whether an override changes it. */
  occurrence: { startUtc: string; endUtc: string; overridden: boolean } | undefined
}

/** The key of event `id`'s occurrence `occurrence` in `readOccurrencesWithVersion`'s reads. */
export function occurrenceKey(id: number, occurrence: string): string {
  return `${id}/${occurrence}`
}

export interface EventDocuments {
  /** The document of event `id` for `apiUrl`, or else where the data stands (read next); undefined when off. */
  read(id: number, apiUrl: string): Promise<DocumentRead | undefined>
  /**
   * Where the data stands and the document of event `id` for `apiUrl` (else that same version: `read`'s
   * answer), both in one statement and one snapshot: a request's look at the data version (read-cache.ts
   * `Look`) and its read, one round trip: a call of the schema's function `event_document` (migration 0023), whose
   * statement stays planned per connection. Undefined on SQLite, whose look is a probe that answers at once.
   * `read` is undefined when off.
   */
  readWithVersion?: (id: number, apiUrl: string) => Promise<{ version: DataVersion | undefined; read: DocumentRead | undefined }>
  /**
   * `readWithVersion` for several events at once (`ids`, distinct): where the data stands and each one's document
   * (else that same version), one statement and one snapshot: a call of the schema's function `event_documents_read`
   * (migration 0025). The look of the anonymous reads by id held in one turn of the replay (http/replay.ts). Undefined on
   * SQLite; `reads` undefined when off.
   */
  readManyWithVersion?: (ids: readonly number[], apiUrl: string) => Promise<{ version: DataVersion | undefined; reads: Map<number, DocumentRead> | undefined }>
  /**
   * The document of event `id` for `apiUrl` with the row of its occurrence `occurrence`, one statement; undefined
   * when there is no document (nothing else is read then) or when off. An anonymous read of an occurrence.
   */
  readOccurrence(id: number, apiUrl: string, occurrence: string): Promise<OccurrenceDocument | undefined>
  /**
   * `readOccurrence` and where the data stands, in one statement and one snapshot (as `readWithVersion`): a call of the
   * schema's function `occurrence_document` (migration 0022), whose statement stays planned per connection. Undefined on SQLite.
   */
  readOccurrenceWithVersion?: (id: number, apiUrl: string, occurrence: string) => Promise<{ version: DataVersion | undefined; read: OccurrenceDocument | undefined }>
  /**
   * `readOccurrenceWithVersion` for several occurrences at once (`asked`: event id and occurrence id, distinct pairs):
   * where the data stands and each one's read by `occurrenceKey` (none where its series has no document), one statement
   * and one snapshot: a call of the schema's function `occurrence_documents_read` (migration 0027). The look of the
   * anonymous reads of occurrences held in one turn of the replay (http/replay.ts). Undefined on SQLite; `reads`
   * undefined when off.
   */
  readOccurrencesWithVersion?: (asked: ReadonlyArray<readonly [id: number, occurrence: string]>, apiUrl: string) =>
    Promise<{ version: DataVersion | undefined; reads: Map<string, OccurrenceDocument> | undefined }>
  /**
   * The documents of events `ids` (a page) for `apiUrl`, one statement; undefined when off. With a look taken on
   * trust not settled yet (read-cache.ts `provisionalLook`), the statement reads the data version too and settles
   * it (`LookMoved` thrown when it did not hold).
   */
  readMany(ids: readonly number[], apiUrl: string, look?: ProvisionalLook): Promise<DocumentsRead | undefined>
  /** Offers the document of a record assembled at `version` to be stored (off the request path). */
  offer(version: DataVersion, apiUrl: string, document: OfferedDocument): void
  /**
   * Stores the documents missing for this public URL, one pass over the events in id order, a batch at
   * a time, giving way to requests (while the node is saturated, a small batch every BUSY_ROUND_MS).
   * Resolves when the pass is done or the store closed (true), or when it failed (false, the error told to
   * `onError`: the caller starts it again later); at most one pass runs.
   */
  fill(apiUrl: string, assemble: (ids: readonly number[]) => Promise<OfferedDocument[]>): Promise<boolean>
  /**
   * Stores the documents missing for this public URL of events `ids` alone (what this process's writes left without
   * one: a create's new event, an update's, whose document its triggers deleted), by the same rule and giving way to
   * requests as `fill`, after any pass running; resolves as `fill` does.
   */
  fillEvents(apiUrl: string, ids: readonly number[], assemble: (ids: readonly number[]) => Promise<OfferedDocument[]>): Promise<boolean>
  /** Resolves once every offer made so far has been stored or dropped. */
  settled(): Promise<void>
  /** Stops storing (waits for a batch being written). */
  close(): Promise<void>
  /** Reads that found a document and did not, documents stored (and of those, carried across writes), offers dropped (stale or lost). */
  stats(): EventDocumentStats
}

export interface EventDocumentStats {
  hits: number
  misses: number
  stored: number
  /** Of those stored, offered at a version this process's writes of other events had since left. */
  carried: number
  dropped: number
  /** Of the hits, reads of an occurrence that took its series' document's body from those kept (SQLite). */
  keptBodies: number
}

/** A series' document's body kept for reads of its occurrences, with what names it. */
interface KeptBody {
  context: string
  version: number
  digest: string
  body: Buffer
}

interface Offer extends OfferedDocument {
  seen: DataVersion
  context: string
}

/** A document's row. */
interface DocumentRow {
  event_id: number | string
  grp: number | string
  version: number | string
  digest: string
  body: Buffer
  category_ids: string
  tag_ids: string
  category_at: number | string
  tag_at: number | string
  ld_from: number | string
  ld_to: number | string
}

function documentOf(row: DocumentRow): EventDocument {
  return {
    id: Number(row.event_id), group: Number(row.grp), version: Number(row.version), digest: row.digest, body: row.body,
    categoryIds: joinedIds(row.category_ids), tagIds: joinedIds(row.tag_ids), categoryAt: Number(row.category_at), tagAt: Number(row.tag_at),
    ldFrom: Number(row.ld_from), ldTo: Number(row.ld_to),
  }
}

/** The site's settings that an event's record shows: venues' coordinates (`geoloc`), `date` and `modified` (the time zone). */
export type DocumentSite = Pick<Site, 'geoloc' | 'timeZone'>

/** The digest naming what a document depends on besides the data (see the file's opening comment). */
export function documentContext(apiUrl: string, eventSchema: unknown, site: DocumentSite): string {
  const settings = { geoloc: site.geoloc, timeZone: site.timeZone }
  return createHash('sha256').update(JSON.stringify([DOCUMENT_FORMAT, apiUrl, eventSchema, settings])).digest('base64url').slice(0, 22)
}

export interface EventDocumentOptions {
  /** Off: every read assembles (reads find nothing, offers are passed by). */
  enabled: boolean
  /** The contract's Event schema (part of every document's context). */
  eventSchema: unknown
  /** The site's settings a record shows (part of every document's context). */
  site: DocumentSite
  /** A batch failed for another reason than losing to a writer. */
  onError?: (error: unknown) => void
  /** Whether requests keep the node busy (a fill then takes a small share). */
  saturated?: () => boolean
  /** Event ids a fill looks through per statement (default FILL_WINDOW). */
  fillWindow?: number
}

export function createEventDocuments(db: Kysely<Database>, options: EventDocumentOptions): EventDocuments {
  const postgres = isPostgres(db)
  const placeholder = (n: number) => (postgres ? `$${n}` : '?')
  const COLUMNS = 'event_id, grp, version, digest, category_ids, tag_ids, category_at, tag_at, ld_from, ld_to, body'
  const readText = `select ${COLUMNS} from event_documents where event_id = ${placeholder(1)} and context = ${placeholder(2)}`
  // PostgreSQL (the only engine that reads the two together): the version's one row, the document's columns beside
  // it (null when there is none), the statement kept planned in a function of the schema (migration 0023, which says why).
  const versionAndReadText = `select h, e, ${COLUMNS} from event_document($1, $2)`
  // The same for several events (migration 0025): a row per document found, the version on each (one row of nulls beside it when none is).
  const versionAndManyText = `select h, e, ${COLUMNS} from event_documents_read($1, $2)`
  // A document and one occurrence's row beside it: its dates (`start|end`), its override's version when it has one.
  // Scalar subqueries, each an index lookup (SQLite took 70–120 µs for the same as left joins, 9–19 µs so). The
  // occurrence id is the first placeholder: SQLite binds them as they come (the id twice), PostgreSQL by number.
  const occurrenceId = postgres ? '$1' : '?'
  const occurrenceColumns = `d.${COLUMNS.split(', ').join(', d.')}, `
    + `(select o.start_utc || '|' || o.end_utc from event_occurrences as o where o.event_id = d.event_id and o.occurrence = ${occurrenceId}) as o_dates, `
    + `(select v.version from event_overrides as v where v.event_id = d.event_id and v.occurrence = ${occurrenceId}) as o_override`
  const occurrenceText = `select ${occurrenceColumns} from event_documents as d where d.event_id = ${placeholder(2)} and d.context = ${placeholder(3)}`
  // SQLite, a series whose document's bytes are kept (`keptBodies`): the same without the body, its length instead
  // (read from the row's header: the body's overflow pages are not read).
  const occurrenceKeptText = occurrenceText.replace('d.body, ', 'length(d.body) as body_length, ')
  // PostgreSQL: the same with the data version, the statement kept planned in a function of the schema (migration
  // 0022, which says why): its one row, the document's columns and the occurrence's beside it (null when there is none).
  const versionAndOccurrenceText = 'select h, e, event_id, grp, version, digest, category_ids, tag_ids, category_at, tag_at, ld_from, ld_to, body, '
    + 'o_dates, o_override from occurrence_document($1, $2, $3)'
  // The same for several occurrences (migration 0027): a row per occurrence whose series has a document, its id on it.
  const versionAndOccurrencesText = 'select h, e, event_id, grp, version, digest, category_ids, tag_ids, category_at, tag_at, ld_from, ld_to, body, '
    + 'o_id, o_dates, o_override from occurrence_documents_read($1, $2, $3)'
  const occurrenceArgs = (id: number, apiUrl: string, occurrence: string): unknown[] =>
    (postgres ? [occurrence, id, contextOf(apiUrl)] : [occurrence, occurrence, id, contextOf(apiUrl)])
  // A page's documents: the context, then the ids (at most a page of 100). SQLite: each row found by its id alone
  // (`+context`: the context checked on the row, not looked up in `event_documents_context` first, a second b-tree's
  // probe per id; issue 49, the ten documents of a random list's page 110 → 95 µs of CPU).
  const manyTexts = new Map<number, string>()
  const manyText = (n: number): string => {
    let text = manyTexts.get(n)
    if (text === undefined) {
      const ids = Array.from({ length: n }, (_, i) => placeholder(i + 2)).join(', ')
      text = `select ${COLUMNS} from event_documents where ${postgres ? '' : '+'}context = ${placeholder(1)} and event_id in (${ids})`
      manyTexts.set(n, text)
    }
    return text
  }
  const contexts = new Map<string, string>()
  const contextOf = (apiUrl: string): string => {
    let context = contexts.get(apiUrl)
    if (context === undefined) {
      context = documentContext(apiUrl, options.eventSchema, options.site)
      contexts.set(apiUrl, context)
    }
    return context
  }
  // SQLite: the bodies of the series' documents last read with an occurrence, by event id, at most MAX_KEPT_BODY_BYTES
  // in all (the least recently read dropped first): see `readOccurrence`.
  const keptBodies = new Map<number, KeptBody>()
  let keptBytes = 0
  const keepBody = (document: EventDocument, context: string): void => {
    const old = keptBodies.get(document.id)
    if (old !== undefined) {
      keptBodies.delete(document.id)
      keptBytes -= old.body.length
    }
    if (document.body.length > MAX_KEPT_BODY_BYTES) return
    while (keptBytes + document.body.length > MAX_KEPT_BODY_BYTES) {
      const [id, oldest] = keptBodies.entries().next().value as [number, KeptBody]
      keptBodies.delete(id)
      keptBytes -= oldest.body.length
    }
    keptBodies.set(document.id, { context, version: document.version, digest: document.digest, body: document.body })
    keptBytes += document.body.length
  }
  const waiting = new Map<number, Offer>()
  const counts: EventDocumentStats = { hits: 0, misses: 0, stored: 0, carried: 0, dropped: 0, keptBodies: 0 }
  let running: Promise<void> | undefined
  /** The last pass queued (passes run one after another), and the whole pass of `fill` while one is queued or running. */
  let filling: Promise<boolean> | undefined
  let whole: Promise<boolean> | undefined
  const queued = (run: () => Promise<void>): Promise<boolean> => {
    const pass: Promise<boolean> = (filling ?? Promise.resolve(true)).then(run).then(() => true, (error: unknown) => {
      options.onError?.(error)
      return false
    })
    filling = pass
    void pass.finally(() => {
      if (filling === pass) filling = undefined
    })
    return pass
  }
  let closed = !options.enabled
  const saturated = options.saturated ?? (() => false)
  const window = options.fillWindow ?? FILL_WINDOW

  async function store(batch: readonly Offer[]): Promise<void> {
    try {
      await db.transaction().execute(async (trx) => {
        if (postgres) await sql`lock table ${sql.join(DOCUMENT_SOURCES.map((t) => sql.table(t)))} in share mode nowait`.execute(trx)
        const { rows } = await sql<{ h: number | string; e: number | string }>`${sql.raw(VERSION_QUERY)}`.execute(trx)
        const now = rows[0] === undefined ? undefined : versionOf(rows[0])
        const fresh = now === undefined ? [] : await stillHolding(trx, batch, now)
        counts.dropped += batch.length - fresh.length
        if (fresh.length === 0) return
        await trx.insertInto('event_documents')
          .values(fresh.map((o) => ({
            event_id: o.id, grp: o.group, context: o.context, version: o.version, digest: o.digest, body: o.body,
            category_ids: o.categoryIds.join(','), tag_ids: o.tagIds.join(','), category_at: o.categoryAt, tag_at: o.tagAt,
            ld_from: o.ldFrom, ld_to: o.ldTo,
          })))
          .onConflict((c) => c.column('event_id').doUpdateSet((eb) => ({
            grp: eb.ref('excluded.grp'), context: eb.ref('excluded.context'), version: eb.ref('excluded.version'),
            digest: eb.ref('excluded.digest'), body: eb.ref('excluded.body'), category_ids: eb.ref('excluded.category_ids'),
            tag_ids: eb.ref('excluded.tag_ids'), category_at: eb.ref('excluded.category_at'), tag_at: eb.ref('excluded.tag_at'),
            ld_from: eb.ref('excluded.ld_from'), ld_to: eb.ref('excluded.ld_to'),
          })))
          .execute()
        counts.stored += fresh.length
        counts.carried += fresh.filter((o) => o.seen.head !== now?.head || o.seen.epoch !== now.epoch).length
      })
    } catch (error) {
      counts.dropped += batch.length
      // Losing to a writer (busy, a lock not free at once) is expected; anything else is told.
      const code = typeof error === 'object' && error !== null && 'code' in error ? error.code : undefined
      if (!isWriteConflict(error) && code !== '55P03') options.onError?.(error)
    }
  }

  /**
   * The offers of `batch` that still hold at version `now` (the file's opening comment): per version they
   * were made at, the events this process's units of work changed since, and then where those events are
   * now (one statement for the batch).
   */
  async function stillHolding(trx: Kysely<Database>, batch: readonly Offer[], now: DataVersion): Promise<Offer[]> {
    const keyOf = (v: DataVersion) => `${v.head}:${v.epoch}`
    // Per version: the events changed since, or null when anything else may have been written.
    const since = new Map<string, number[] | null>()
    for (const offer of batch) {
      const key = keyOf(offer.seen)
      if (since.has(key)) continue
      const changes = writtenBetween(db, offer.seen, now, MAX_CHANGES_BETWEEN)
      since.set(key, changes === undefined || changes.some((c) => c.resource !== 'event') ? null : changes.map((c) => c.id))
    }
    const changed = [...new Set([...since.values()].flatMap((ids) => ids ?? []))]
    const groups = new Map<number, number>()
    if (changed.length > 0) {
      const rows = await trx.selectFrom('events').select(['id', sql<number | string>`coalesce(translation_group, id)`.as('grp')])
        .where('id', 'in', changed).execute()
      for (const row of rows) groups.set(Number(row.id), Number(row.grp))
    }
    return batch.filter((offer) => {
      const ids = since.get(keyOf(offer.seen))
      return ids !== null && ids !== undefined && ids.every((id) => id !== offer.id && !offer.members.includes(id) && groups.get(id) !== offer.group)
    })
  }

  async function drain(): Promise<void> {
    while (waiting.size > 0 && !closed) {
      const batch: Offer[] = []
      for (const [id, offer] of waiting) {
        waiting.delete(id)
        batch.push(offer)
        if (batch.length >= BATCH) break
      }
      await store(batch)
    }
  }

  const schedule = () => {
    running ??= new Promise<void>((resolve) => setImmediate(resolve)).then(drain).finally(() => {
      running = undefined
      if (waiting.size > 0 && !closed) schedule()
    })
  }

  /**
   * Published events without a password in `(after, upTo]` with no document of `context`, in id order,
   * each event's document looked up by its id.
   *
   * - SQLite reads indexes only for all but the events it returns (their passwords it reads from the
   *   table): the events' ids and statuses from `events_by_id_listing` (migration 0011) and the documents'
   *   contexts from `event_documents_context` (0015). Through the tables a pass read every event's row and
   *   every document's (a page each), at every start, when nothing was missing.
   * - PostgreSQL: `offset 0` keeps the `not exists` a lookup per event (the planner does not turn such a
   *   subquery into a join). As a join, its plan rested on the statistics of the documents' contexts, which
   *   are stale whenever the documents changed since the last ANALYZE (a new public URL, a fill on a new
   *   database, autovacuum off): estimating no document of this context, it read every document once per
   *   event, 2.8 s a statement at 20,000 events instead of 11 ms.
   */
  async function missing(after: number, upTo: number, context: string, limit: number): Promise<number[]> {
    const { rows } = postgres
      ? await sql<{ id: number | string }>`select e.id from events as e
        where e.id > ${after} and e.id <= ${upTo} and e.status = 'publish' and e.password is null and not exists
          (select 1 from event_documents as d where d.event_id = e.id and d.context = ${context} offset 0)
        order by e.id limit ${limit}`.execute(db)
      : await sql<{ id: number }>`select m.id from (select e.id from events as e indexed by events_by_id_listing
        where e.id > ${after} and e.id <= ${upTo} and e.status = 'publish' and not exists
          (select 1 from event_documents as d indexed by event_documents_context where d.context = ${context} and d.event_id = e.id)) as m
        join events as p on p.id = m.id where p.password is null order by m.id limit ${limit}`.execute(db)
    return rows.map((r) => Number(r.id))
  }

  /** Of `ids` (sorted), the published events without a password and with no document of `context`, in id order. */
  async function missingAmong(ids: readonly number[], context: string): Promise<number[]> {
    const { rows } = postgres
      ? await sql<{ id: number | string }>`select e.id from events as e
        where e.id = any(${[...ids]}::bigint[]) and e.status = 'publish' and e.password is null and not exists
          (select 1 from event_documents as d where d.event_id = e.id and d.context = ${context} offset 0)
        order by e.id`.execute(db)
      : await sql<{ id: number }>`select e.id from events as e
        where e.id in (select value from json_each(${JSON.stringify(ids)})) and e.status = 'publish' and e.password is null and not exists
          (select 1 from event_documents as d indexed by event_documents_context where d.context = ${context} and d.event_id = e.id)
        order by e.id`.execute(db)
    return rows.map((r) => Number(r.id))
  }

  /**
   * The start of a fill's round: a pause first while requests keep the process busy, then where the data stands before
   * anything is read (what is assembled is stored only if it still does) and how many events the round takes;
   * undefined when the fill stops (closed, or no version to read).
   */
  async function fillRound(): Promise<{ version: ReturnType<typeof versionOf>; limit: number } | undefined> {
    const busy = saturated()
    if (busy) await new Promise((resolve) => setTimeout(resolve, BUSY_ROUND_MS))
    if (closed) return undefined
    const { rows } = await sql<{ h: number | string; e: number | string }>`${sql.raw(VERSION_QUERY)}`.execute(db)
    if (rows[0] === undefined) return undefined
    return { version: versionOf(rows[0]), limit: busy ? BUSY_FILL_BATCH : FILL_BATCH }
  }

  /** `fillPass` over events `ids` alone. */
  async function fillEventsPass(apiUrl: string, ids: readonly number[], assemble: (ids: readonly number[]) => Promise<OfferedDocument[]>): Promise<void> {
    const context = contextOf(apiUrl)
    const sorted = [...new Set(ids)].sort((a, b) => a - b)
    let at = 0
    while (!closed && at < sorted.length) {
      const round = await fillRound()
      if (round === undefined) return
      const { version, limit } = round
      const missingIds = await missingAmong(sorted.slice(at, at + limit), context)
      at += limit
      if (missingIds.length > 0) {
        const documents = await assemble(missingIds)
        if (documents.length > 0 && !closed) await store(documents.map((d) => ({ ...d, seen: version, context })))
      }
      await new Promise((resolve) => setImmediate(resolve))
    }
  }

  async function fillPass(apiUrl: string, assemble: (ids: readonly number[]) => Promise<OfferedDocument[]>): Promise<void> {
    const context = contextOf(apiUrl)
    const top = Number((await db.selectFrom('events').select((eb) => eb.fn.max('id').as('top')).executeTakeFirst())?.top ?? 0)
    let after = 0
    while (!closed && after < top) {
      const round = await fillRound()
      if (round === undefined) return
      const { version, limit } = round
      // A window of ids at a time: on a database that has its documents, no statement reads every event at once.
      const upTo = Math.min(after + window, top)
      const ids = await missing(after, upTo, context, limit)
      after = ids.length === limit ? (ids.at(-1) as number) : upTo
      if (ids.length > 0) {
        const documents = await assemble(ids)
        if (documents.length > 0 && !closed) await store(documents.map((d) => ({ ...d, seen: version, context })))
      }
      await new Promise((resolve) => setImmediate(resolve))
    }
  }

  async function readWithVersion(id: number, apiUrl: string): Promise<{ version: DataVersion | undefined; read: DocumentRead | undefined }> {
    if (closed) return { version: await dataVersion(db), read: undefined }
    const { rows } = await db.executeQuery<{ h: number | string; e: number | string } & (DocumentRow | { [K in keyof DocumentRow]: null })>(
      CompiledQuery.raw(versionAndReadText, [id, contextOf(apiUrl)]))
    const row = rows[0]
    if (row === undefined) return { version: undefined, read: undefined }
    const version = versionOf(row)
    if (row.event_id !== null) {
      counts.hits += 1
      return { version, read: { found: true, document: documentOf(row as DocumentRow) } }
    }
    counts.misses += 1
    return { version, read: { found: false, version } }
  }

  async function readManyWithVersion(ids: readonly number[], apiUrl: string): Promise<{ version: DataVersion | undefined; reads: Map<number, DocumentRead> | undefined }> {
    if (closed) return { version: await dataVersion(db), reads: undefined }
    const { rows } = await db.executeQuery<{ h: number | string; e: number | string } & (DocumentRow | { [K in keyof DocumentRow]: null })>(
      CompiledQuery.raw(versionAndManyText, [[...ids], contextOf(apiUrl)]))
    const first = rows[0]
    if (first === undefined) return { version: undefined, reads: undefined }
    const version = versionOf(first)
    const reads = new Map<number, DocumentRead>()
    for (const row of rows) if (row.event_id !== null) reads.set(Number(row.event_id), { found: true, document: documentOf(row as DocumentRow) })
    counts.hits += reads.size
    counts.misses += ids.length - reads.size
    for (const id of ids) if (!reads.has(id)) reads.set(id, { found: false, version })
    return { version, reads }
  }

  type OccurrenceRow = DocumentRow & { o_dates: string | null; o_override: number | string | null }
  type KeptOccurrenceRow = Omit<OccurrenceRow, 'body'> & { body_length: number }

  function occurrenceDocumentOf(row: OccurrenceRow): OccurrenceDocument {
    counts.hits += 1
    const bar = row.o_dates?.indexOf('|') ?? -1
    return {
      document: documentOf(row),
      occurrence: row.o_dates === null || bar < 0 ? undefined
        : { startUtc: row.o_dates.slice(0, bar), endUtc: row.o_dates.slice(bar + 1), overridden: row.o_override !== null },
    }
  }

  async function readOccurrenceWithVersion(id: number, apiUrl: string, occurrence: string): Promise<{ version: DataVersion | undefined; read: OccurrenceDocument | undefined }> {
    if (closed) return { version: await dataVersion(db), read: undefined }
    const { rows } = await db.executeQuery<{ h: number | string; e: number | string } & (OccurrenceRow | { [K in keyof OccurrenceRow]: null })>(
      CompiledQuery.raw(versionAndOccurrenceText, occurrenceArgs(id, apiUrl, occurrence)))
    const row = rows[0]
    if (row === undefined) return { version: undefined, read: undefined }
    if (row.event_id === null) counts.misses += 1
    return { version: versionOf(row), read: row.event_id === null ? undefined : occurrenceDocumentOf(row as OccurrenceRow) }
  }

  async function readOccurrencesWithVersion(asked: ReadonlyArray<readonly [id: number, occurrence: string]>, apiUrl: string):
    Promise<{ version: DataVersion | undefined; reads: Map<string, OccurrenceDocument> | undefined }> {
    if (closed) return { version: await dataVersion(db), reads: undefined }
    const { rows } = await db.executeQuery<{ h: number | string; e: number | string; o_id: string | null } & (OccurrenceRow | { [K in keyof OccurrenceRow]: null })>(
      CompiledQuery.raw(versionAndOccurrencesText, [asked.map(([id]) => id), asked.map(([, occurrence]) => occurrence), contextOf(apiUrl)]))
    const first = rows[0]
    if (first === undefined) return { version: undefined, reads: undefined }
    const reads = new Map<string, OccurrenceDocument>()
    for (const row of rows) if (row.event_id !== null && row.o_id !== null) reads.set(occurrenceKey(Number(row.event_id), row.o_id), occurrenceDocumentOf(row as OccurrenceRow))
    counts.misses += asked.length - reads.size
    return { version: versionOf(first), reads }
  }

  return {
    ...(postgres ? { readWithVersion, readManyWithVersion, readOccurrenceWithVersion, readOccurrencesWithVersion } : {}),
    async readOccurrence(id, apiUrl, occurrence) {
      if (closed) return undefined
      const args = occurrenceArgs(id, apiUrl, occurrence)
      const context = args.at(-1) as string
      // SQLite: with the series' document's body kept, its row without the body. The kept bytes serve when the row is
      // the document they were read with: the same event, context, version, digest and length (within a context a
      // document's bytes are the serializer's of the record its digest names: `slotsOf`'s reasoning, handlers/
      // occurrence-documents.ts); else the row is read again with its body. (The body is most of what the statement
      // read: a series' is some 4–6 kB, past the row's page, on overflow pages; 25–29 µs → 18–20 µs on the benchmark's file.)
      const kept = postgres ? undefined : keptBodies.get(id)
      if (kept !== undefined && kept.context === context) {
        const { rows } = await db.executeQuery<KeptOccurrenceRow>(CompiledQuery.raw(occurrenceKeptText, args))
        const row = rows[0]
        if (row === undefined) {
          counts.misses += 1
          return undefined
        }
        if (Number(row.version) === kept.version && row.digest === kept.digest && Number(row.body_length) === kept.body.length) {
          keptBodies.delete(id)
          keptBodies.set(id, kept)
          counts.keptBodies += 1
          return occurrenceDocumentOf({ ...row, body: kept.body })
        }
      }
      // PostgreSQL: the function's statement (its version not taken in), which is planned already.
      const { rows } = await db.executeQuery<OccurrenceRow | { [K in keyof OccurrenceRow]: null }>(
        CompiledQuery.raw(postgres ? versionAndOccurrenceText : occurrenceText, args))
      const row = rows[0]
      if (row === undefined || row.event_id === null) {
        counts.misses += 1
        return undefined
      }
      const read = occurrenceDocumentOf(row)
      if (!postgres) keepBody(read.document, context)
      return read
    },
    fill(apiUrl, assemble) {
      if (closed) return Promise.resolve(true)
      whole ??= queued(() => fillPass(apiUrl, assemble)).finally(() => {
        whole = undefined
      })
      return whole
    },
    fillEvents(apiUrl, ids, assemble) {
      if (closed || ids.length === 0) return Promise.resolve(true)
      return queued(() => fillEventsPass(apiUrl, ids, assemble))
    },
    async read(id, apiUrl) {
      if (closed) return undefined
      const { rows } = await db.executeQuery<DocumentRow>(CompiledQuery.raw(readText, [id, contextOf(apiUrl)]))
      const row = rows[0]
      if (row !== undefined) {
        counts.hits += 1
        return { found: true, document: documentOf(row) }
      }
      counts.misses += 1
      // Read after the document was not found and before anything the record is assembled from.
      const version = await dataVersion(db)
      if (version === undefined) throw new Error('the data version is missing')
      return { found: false, version }
    },
    async readMany(ids, apiUrl, look) {
      const wanted = [...new Set(ids.filter((id) => Number.isSafeInteger(id)))]
      if (closed || wanted.length === 0) return undefined
      if (look !== undefined && !look.settled) {
        // PostgreSQL (SQLite takes no look on trust): the schema's function (migration 0025), planned once per
        // connection; a page's text with its `in (...)` list was parsed and planned at each execution.
        const { rows } = await db.executeQuery<{ h: number | string; e: number | string } & (DocumentRow | { [K in keyof DocumentRow]: null })>(
          CompiledQuery.raw(versionAndManyText, [wanted, contextOf(apiUrl)]))
        const version = rows[0] === undefined ? undefined : versionOf(rows[0])
        settleLook(look, version)
        const found = new Map(rows.flatMap((row) => (row.event_id === null ? [] : [[Number(row.event_id), documentOf(row as DocumentRow)] as const])))
        counts.hits += found.size
        counts.misses += wanted.length - found.size
        // The version of the same snapshot: where the data stood when the missing ones were not found.
        return found.size === wanted.length || version === undefined ? { found } : { found, version }
      }
      const { rows } = await db.executeQuery<DocumentRow>(CompiledQuery.raw(manyText(wanted.length), [contextOf(apiUrl), ...wanted]))
      const found = new Map(rows.map((row) => [Number(row.event_id), documentOf(row)]))
      counts.hits += found.size
      counts.misses += wanted.length - found.size
      if (found.size === wanted.length) return { found }
      const version = await dataVersion(db)
      if (version === undefined) throw new Error('the data version is missing')
      return { found, version }
    },
    offer(version, apiUrl, document) {
      if (closed || waiting.size >= MAX_WAITING) return
      waiting.set(document.id, { ...document, seen: version, context: contextOf(apiUrl) })
      schedule()
    },
    async settled() {
      while (running !== undefined) await running
    },
    async close() {
      closed = true
      waiting.clear()
      while (running !== undefined) await running
      await filling
    },
    stats: () => ({ ...counts }),
  }
}
