/**
 * The HTTP side of venues and organizers, written once: visibility and rights (CONTRACT §6), trash and
 * force delete (§5), conditional requests, list filters. `venues.ts` and `organizers.ts` bind it.
 */
import type { FastifyReply, FastifyRequest } from 'fastify'
import type { Language, Organizer, QueryOf, Venue } from '../contract.js'
import type { Db } from '../db/unit-of-work.js'
import { forbidden, inTrash, invalidParam, notAccessible, notFound } from '../http/errors.js'
import { checkNotModified, etagOf, expectedVersion } from '../http/etag.js'
import { requestedLanguage } from '../http/language.js'
import { checkPage, listLinks, pageOf, type ListPage } from '../http/pagination.js'
import { asSent, sentQueryOf } from '../http/query.js'
import type { Serialized } from '../http/serialized.js'
import { formatUtc } from '../lib/dates.js'
import { linkedSeenBy } from '../lib/event-view.js'
import { modifiedNow } from '../lib/post-dates.js'
import { modifiedShown, modifiedWindow } from '../lib/modified-window.js'
import { canEdit, canRead, canReadEvent, countedEventsScope, editsAll, listScope, statusToStore, type Caller } from '../lib/rights.js'
import { eventOwner } from '../repositories/event-records.js'
import { findLinked, insertLinked, listLinked, updateLinked, type LinkedKind, type LinkedRow, type StoredLinked } from '../repositories/linked.js'
import { deletePost, scopeCondition, trashPost, type PostRef } from '../repositories/posts.js'
import { lost, writeRead } from './compare-and-swap.js'
import type { AppContext } from './context.js'
import { createOnce } from './idempotency.js'
import { checkLinkedUpdate, checkNewLinked, precheckLinkedUpdate, type LinkedBody, type LinkedInput, type Writer } from './linked-input.js'

type LinkedListParams = QueryOf<'listVenues'> | QueryOf<'listOrganizers'>

/** Path parameters as a reference to a record. */
export const byId = (params: { id: number }): PostRef => ({ id: params.id })
export const bySlug = (params: { slug: string }): PostRef => ({ slug: params.slug })

/** Who writes, for the checks of a write body. */
export function writerOf(ctx: AppContext, caller: Caller): Writer {
  return { callerId: caller.id, caller, mayAssignAuthor: editsAll(caller), now: ctx.now(), siteTz: ctx.config.timezone, geoloc: ctx.site.geoloc }
}

/** The language a lookup of `ref` is made in: a slug is always looked up in one (the site's by default). */
export function lookupLanguage(ctx: AppContext, ref: PostRef, requested: Language | undefined): Language | undefined {
  return 'slug' in ref ? requested ?? ctx.config.defaultLanguage : requested
}

export function linkedOperations<Rec extends Venue | Organizer, C extends LinkedBody & { ml_language?: Language; translation_of?: number }, U extends LinkedBody, O>(
  ctx: AppContext, kind: LinkedKind<LinkedRow, Rec, O>, input: LinkedInput<C | U, O>, collection: 'venues' | 'organizers',
) {
  const { resource } = kind
  // What a caller is shown of a record (its `translations` as the caller may read them), and its tag.
  const shown = (caller: Caller | null, record: Rec): Rec => linkedSeenBy(caller, record)
  const etag = (stored: StoredLinked<Rec>, caller: Caller | null): string => etagOf(resource, shown(caller, stored.record), stored.version)
  const label = (ref: PostRef): [number | string, 'id' | 'slug'] => ('id' in ref ? [ref.id, 'id'] : [ref.slug, 'slug'])

  async function find(ref: PostRef, language: Language | undefined, reader: Db = ctx.db): Promise<StoredLinked<Rec>> {
    const stored = await findLinked(reader, ctx.site, kind, ref, lookupLanguage(ctx, ref, language))
    if (stored === undefined) throw notFound(resource, ...label(ref))
    return stored
  }

  /** Found, and the caller may change it: 404, then 410 for the trash (unless restoring), then 403. */
  async function findForWrite(req: FastifyRequest, ref: PostRef, restoring: boolean, reader: Db): Promise<StoredLinked<Rec>> {
    const stored = await find(ref, requestedLanguage(req), reader)
    const { record } = stored
    if (record.status === 'trash' && !restoring) throw inTrash(resource)
    if (!canEdit(req.user, record) && !(record.status === 'trash' && editsAll(req.user))) throw forbidden(403)
    return stored
  }

  return {
    async list(req: FastifyRequest, query: LinkedListParams): Promise<{ records: Rec[]; list: ListPage }> {
      const scope = listScope(req.user, query.status)
      if (scope.kind === 'refused') throw invalidParam('status', 'statusNotAllowed')
      const event = query.event === undefined ? undefined : await eventOwner(ctx.db, query.event)
      if (query.event !== undefined && event === undefined) throw invalidParam('event', 'unknownEvent')
      const modified = modifiedWindow(query, ctx.config.timezone, ctx.now())
      if ('invalid' in modified) throw invalidParam(modified.invalid, 'invalidFilterDate')
      const page = pageOf(query)
      // An event the caller cannot read matches nothing (CONTRACT §6): its links stay hidden.
      const hidden = event !== undefined && !canReadEvent(req.user, event)
      const result = hidden ? { total: 0, records: async () => [] } : await listLinked(ctx.db, ctx.site, kind, {
        language: query.ml_language ?? ctx.config.defaultLanguage,
        scope,
        offset: page.offset,
        limit: page.perPage,
        nowUtc: formatUtc(ctx.now()),
        eventReader: countedEventsScope(req.user),
        ...(query.search !== undefined ? { search: query.search } : {}),
        ...(query.event !== undefined ? { event: query.event } : {}),
        ...(query.has_events !== undefined ? { hasEvents: query.has_events } : {}),
        ...(query.only_with_upcoming !== undefined ? { onlyWithUpcoming: query.only_with_upcoming } : {}),
        ...modified,
      }, scopeCondition(kind.table, scope))
      const totalPages = checkPage(resource, page, result.total)
      const records = result.total === 0 ? [] : (await result.records()).map((r) => shown(req.user, r))
      // The modified window as the instants it stood for (CONTRACT §3): following a link later runs the same query.
      const window = modifiedShown(modified, ctx.config.timezone)
      const sent = sentQueryOf(req)
        .filter((name) => name !== 'modified_after' && name !== 'modified_before')
        .map((name): [string, unknown] => [name, asSent(req, (query as Record<string, unknown>)[name])])
      const links = listLinks(`${ctx.apiUrl}/${collection}`, page, totalPages, [...window, ...sent])
      return { records, list: { links, total: result.total, totalPages } }
    },

    async get(req: FastifyRequest, ref: PostRef, language: Language | undefined, reply: FastifyReply): Promise<Rec> {
      const stored = await find(ref, language)
      const { record } = stored
      const visible = record.status === 'trash' ? canEdit(req.user, record) || editsAll(req.user) : canRead(req.user, record)
      if (!visible) throw notAccessible(resource)
      checkNotModified(req, reply, etag(stored, req.user))
      return shown(req.user, record)
    },

    /** `serialize`: the record's JSON by the contract's schema (what a retry under the same Idempotency-Key is sent again). */
    async create(req: FastifyRequest, body: C, reply: FastifyReply, serialize: (record: Rec) => Serialized<Rec>): Promise<Serialized<Rec>> {
      const user = req.user
      if (user === null) throw forbidden(401)
      const language = requestedLanguage(req) ?? ctx.config.defaultLanguage
      const writer = writerOf(ctx, user)
      return createOnce(ctx, req, reply,
        async (trx) => insertLinked(trx, kind, await checkNewLinked(trx, input, body, language, body.translation_of, statusToStore(user, body.status), writer)),
        async (reader, id) => {
          const stored = await find({ id }, undefined, reader)
          return { body: serialize(shown(user, stored.record)), location: `${ctx.apiUrl}/${collection}/${id}`, etag: etag(stored, user) }
        })
    },

    async update(req: FastifyRequest, ref: PostRef, body: U, reply: FastifyReply): Promise<Rec> {
      const user = req.user
      if (user === null) throw forbidden(401)
      const writer = writerOf(ctx, user)
      // Fields first (400), then the record (404/410), rights (403) and If-Match (412): CONTRACT §1.
      await precheckLinkedUpdate(ctx.db, input, body, writer)
      const stored = await writeRead(ctx.db, req, async (reader, write) => {
        const current = await findForWrite(req, ref, body.status !== undefined, reader)
        const { record } = current
        // Setting another author is a right on the record (403), checked before If-Match (412).
        if (body.author !== undefined && body.author !== user.id && !editsAll(user)) throw forbidden(403)
        const expected = expectedVersion(req, () => etag(current, user), current.version) ?? current.version
        const status = body.status === undefined ? undefined : statusToStore(user, body.status, record.status)
        const from = { id: record.id, name: current.name, slug: record.slug, language: record.ml_language, dates: { date: record.date, date_utc: record.date_utc } }
        return write(async (trx) => {
          const update = await checkLinkedUpdate(trx, input, from, body, status, writer)
          // Inside the unit of work, so that nothing it wrote (a new image record) stays behind.
          if (!(await updateLinked(trx, kind, update, expected))) lost()
          return find({ id: record.id }, undefined, trx)
        })
      })
      reply.header('ETag', etag(stored, user))
      return shown(user, stored.record)
    },

    async remove(req: FastifyRequest, reply: FastifyReply, ref: PostRef, force: boolean): Promise<Rec | { deleted: true; previous: Rec }> {
      const answer = await writeRead(ctx.db, req, async (reader, write) => {
        const current = await find(ref, requestedLanguage(req), reader)
        const { record } = current
        if (record.status === 'trash' && !force) throw inTrash(resource)
        if (!canEdit(req.user, record) && !editsAll(req.user)) throw forbidden(403)
        const expected = expectedVersion(req, () => etag(current, req.user), current.version) ?? current.version
        const trashed = await write(async (trx) => {
          const done = force
            ? await deletePost(trx, kind.table, record.id, expected)
            : await trashPost(trx, kind.table, record.id, expected, modifiedNow(ctx.now(), ctx.config.timezone))
          if (!done) lost()
          return force ? undefined : find({ id: record.id }, undefined, trx)
        })
        return { record, trashed }
      })
      if (answer.trashed === undefined) return { deleted: true, previous: shown(req.user, answer.record) }
      // A trash answer is a single-record answer: the trashed record's ETag (CONTRACT §5).
      reply.header('ETag', etag(answer.trashed, req.user))
      return shown(req.user, answer.trashed.record)
    },
  }
}
