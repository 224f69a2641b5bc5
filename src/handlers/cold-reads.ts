/**
 * The cold reads' answers (http/replay.ts "Cold reads", SQLite): an anonymous read by id and an anonymous read of an
 * occurrence without an override, answered before routing from the stored documents as the full path answers them
 * (handlers/events.ts through `documentAnswer`, handlers/event-occurrences.ts through `documentOccurrence`). Undefined
 * whenever the full path is to answer (no document, a term gone, an overridden or unknown occurrence).
 */
import { PREFIX } from '../http/spec.js'
import type { ReplaySources } from '../http/replay.js'
import type { AppContext } from './context.js'
import { documentAnswer } from './event-documents.js'
import { documentOccurrence } from './occurrence-documents.js'

export type ColdSources = NonNullable<ReplaySources['cold']> & { occurrence: NonNullable<NonNullable<ReplaySources['cold']>['occurrence']> }

export function coldSources(ctx: AppContext): ColdSources {
  return {
    path: `${PREFIX}/events/`,
    answer: async (id) => {
      const read = await ctx.documents.read(id, ctx.apiUrl)
      if (read?.found !== true) return undefined
      const made = await documentAnswer(ctx, read.document)
      return made === undefined ? undefined : { etag: made.etag, body: made.body() }
    },
    occurrence: async (eventId, id) => {
      const read = await ctx.documents.readOccurrence(eventId, ctx.apiUrl, id)
      // An overridden occurrence (or none): the full path's, without reading the terms.
      if (read?.occurrence === undefined || read.occurrence.overridden) return undefined
      const made = await documentOccurrence(ctx, read, id)
      return typeof made !== 'object' || made.answer === undefined ? undefined : { etag: made.answer.etag, body: made.answer.body() }
    },
  }
}
