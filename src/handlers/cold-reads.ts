/**
 * The cold reads' answers (http/replay.ts "Cold reads", SQLite): an anonymous read by id and an anonymous read of an
 * occurrence without an override, answered before routing from the stored documents as the full path answers them
 * (handlers/events.ts through `documentAnswer`, handlers/event-occurrences.ts through `documentOccurrence`). Undefined
 * whenever the full path is to answer (no document, a term gone, an overridden or unknown occurrence).
 *
 * PostgreSQL (`postgresColdSources`): the turn's look reading the documents of the cold reads by id it answers for in
 * its own statement (`lookWith`: `event_document` for one, `event_documents_read` for several, migration 0025), or,
 * when it holds no cold read by id, the series' documents and rows of the cold reads of occurrences it answers for
 * (`lookWithOccurrences`: `occurrence_document` for one, migration 0022, the full path's statement;
 * `occurrence_documents_read` for several, migration 0027); their terms read with that look's generation (read-cache.ts
 * `withLook`: no look again). Cold reads of occurrences held in a turn whose look read documents by id read theirs after it.
 */
import { PREFIX } from '../http/spec.js'
import { linkHeader } from '../http/pagination.js'
import { normaliseQuery } from '../http/query.js'
import type { ReplaySources } from '../http/replay.js'
import type { AppContext } from './context.js'
import type { ColdAnswer, ColdList } from '../http/replay.js'
import { coldList } from './event-lists.js'
import type { ListQuery } from './event-list-input.js'
import { occurrenceKey, type DocumentRead, type EventDocuments, type OccurrenceDocument } from '../repositories/event-documents.js'
import { lookedGeneration, withLook } from '../repositories/read-cache.js'
import { documentAnswer } from './event-documents.js'
import { documentOccurrence } from './occurrence-documents.js'

export type ColdSources = NonNullable<ReplaySources['cold']> & { occurrence: NonNullable<NonNullable<ReplaySources['cold']>['occurrence']> }

/**
 * How the list route checks its query (app.ts takes them from the route once it is registered): its `querystring`
 * schema, which `preValidation` normalises the query for (http/query.ts), and the validator Fastify runs on it.
 */
export interface ListQueryCheck {
  schema: unknown
  valid(query: unknown): query is ListQuery
}

/**
 * The answer of a cold list (http/replay.ts "Cold lists"): `query` (as Fastify's parser reads the plain query of `url`)
 * normalised and validated as the route does; an invalid one, or any refusal, is the full path's to answer (its 400).
 */
async function coldListAnswer(ctx: AppContext, check: ListQueryCheck | undefined, url: string, query: Record<string, string>): Promise<ColdList | undefined> {
  if (check === undefined) return undefined
  const values: Record<string, unknown> = { ...query }
  const digits = new Map<number, string>()
  const names = normaliseQuery(values, check.schema, digits)
  if (!check.valid(values)) return undefined
  const made = await coldList(ctx, url, values, { names, digits })
  return made === undefined ? undefined : { body: made.body, total: made.page.total, totalPages: made.page.totalPages, link: linkHeader(made.page.links) }
}

/** `listCheck`: the list route's query check once it is registered (undefined before: no cold list). */
export function coldSources(ctx: AppContext, listCheck: () => ListQueryCheck | undefined = () => undefined): ColdSources {
  return {
    path: `${PREFIX}/events/`,
    list: (url, query) => coldListAnswer(ctx, listCheck(), url, query),
    answer: async (id) => {
      const read = await ctx.documents.read(id, ctx.apiUrl)
      if (read?.found !== true) return undefined
      const made = await documentAnswer(ctx, read.document)
      return made === undefined ? undefined : { etag: made.etag, body: made.body() }
    },
    occurrence: async (eventId, id, generation) => coldOccurrence(ctx, await ctx.documents.readOccurrence(eventId, ctx.apiUrl, id), id, generation),
  }
}

/** A cold read's answer to a read of occurrence `id` from its series' document and row (none: the full path answers). */
async function coldOccurrence(ctx: AppContext, read: OccurrenceDocument | undefined, id: string, generation: number | undefined): Promise<ColdAnswer | undefined> {
  // An overridden occurrence (or none): the full path's, without reading the terms.
  if (read?.occurrence === undefined || read.occurrence.overridden) return undefined
  const made = await documentOccurrence(ctx, read, id, generation)
  return typeof made !== 'object' || made.answer === undefined ? undefined : { etag: made.answer.etag, body: made.answer.body() }
}

/** A cold read's answer from the document read (none: the full path answers). */
async function coldAnswer(ctx: AppContext, read: DocumentRead | undefined): Promise<ColdAnswer | undefined> {
  if (read?.found !== true) return undefined
  const made = await documentAnswer(ctx, read.document)
  return made === undefined ? undefined : { etag: made.etag, body: made.body() }
}

/** PostgreSQL's cold reads (see the file's opening comment); undefined where the version is not read with a document (SQLite). */
export function postgresColdSources(ctx: AppContext): NonNullable<ReplaySources['cold']> | undefined {
  const { db } = ctx
  if (ctx.documents.readWithVersion === undefined) return undefined
  return {
    path: `${PREFIX}/events/`,
    // A cold read held past the look's documents (a stale recording, or past MAX_LOOKED_WITH): read after it.
    answer: async (id, generation) => withLook(db, generation, async () => coldAnswer(ctx, await ctx.documents.read(id, ctx.apiUrl))),
    lookWith: async (ids) => {
      let reads: Map<number, DocumentRead> | undefined
      let asked = false
      const generation = await lookedGeneration(db, async () => {
        asked = true
        // Taken when called (tests replace them).
        const { readWithVersion, readManyWithVersion } = ctx.documents as Required<EventDocuments>
        const [id] = ids
        if (ids.length === 1 && id !== undefined) {
          const both = await readWithVersion(id, ctx.apiUrl)
          reads = both.read === undefined ? undefined : new Map([[id, both.read]])
          return both.version
        }
        const all = await readManyWithVersion(ids, ctx.apiUrl)
        reads = all.reads
        return all.version
      })
      if (!asked) return { generation, made: undefined }
      return { generation, made: new Map(ids.map((id) => [id, () => withLook(db, generation, () => coldAnswer(ctx, reads?.get(id)))])) }
    },
    occurrence: async (eventId, id, generation) =>
      withLook(db, generation, async () => coldOccurrence(ctx, await ctx.documents.readOccurrence(eventId, ctx.apiUrl, id), id, generation)),
    lookWithOccurrences: async (asked) => {
      let reads: Map<string, OccurrenceDocument> | undefined
      let sent = false
      const generation = await lookedGeneration(db, async () => {
        sent = true
        // Taken when called (tests replace them).
        const { readOccurrenceWithVersion, readOccurrencesWithVersion } = ctx.documents as Required<EventDocuments>
        const [one] = asked
        if (asked.length === 1 && one !== undefined) {
          const both = await readOccurrenceWithVersion(one[0], ctx.apiUrl, one[1])
          reads = both.read === undefined ? undefined : new Map([[occurrenceKey(...one), both.read]])
          return both.version
        }
        const all = await readOccurrencesWithVersion(asked, ctx.apiUrl)
        reads = all.reads
        return all.version
      })
      if (!sent) return { generation, made: undefined }
      return { generation, made: (eventId, id) => withLook(db, generation, () => coldOccurrence(ctx, reads?.get(occurrenceKey(eventId, id)), id, generation)) }
    },
  }
}
