/**
 * The operations shared by categories and tags, written once and bound to a taxonomy by
 * `categories.ts` and `tags.ts`: list filters, reads with conditional requests, and writes as one unit
 * of work each (checks first, then the write, then the record read back).
 */
import type { FastifyReply, FastifyRequest } from 'fastify'
import type { Category, Language, QueryOf, Schema, Tag } from '../contract.js'
import type { Db } from '../db/unit-of-work.js'
import { invalidParam, notFound } from '../http/errors.js'
import { checkNotModified, etagOf, expectedVersion } from '../http/etag.js'
import { requestedLanguage } from '../http/language.js'
import { checkPage, listLinks, pageOf, type ListPage } from '../http/pagination.js'
import { asSent, sentQueryOf } from '../http/query.js'
import type { Serialized } from '../http/serialized.js'
import { canReadEvent } from '../lib/rights.js'
import { eventOwner } from '../repositories/event-records.js'
import { deleteTerm, insertTerm, moveChildrenUp, updateTerm } from '../repositories/term-writes.js'
import { countTerms, findTerm, listTerms, termExists, type StoredTerm, type TermKind, type TermListQuery } from '../repositories/terms.js'
import { lost, writeRead } from './compare-and-swap.js'
import type { AppContext } from './context.js'
import { createOnce } from './idempotency.js'
import { checkNewTerm, checkTermUpdate, type TermBody } from './term-input.js'

type TermListParams = QueryOf<'listCategories'> | QueryOf<'listTags'>

export function termOperations<R extends Category | Tag>(ctx: AppContext, kind: TermKind<R>) {
  const { taxonomy, resource } = kind
  const languageOf = (req: FastifyRequest): Language => requestedLanguage(req) ?? ctx.config.defaultLanguage
  const etag = (stored: StoredTerm<R>): string => etagOf(resource, stored.record, stored.version)

  async function find(id: number, language: Language | undefined, reader: Db = ctx.db): Promise<StoredTerm<R>> {
    const stored = await findTerm(reader, ctx.site, kind, id, language)
    if (stored === undefined) throw notFound(resource, id)
    return stored
  }

  return {
    async list(req: FastifyRequest, query: TermListParams): Promise<{ records: R[]; list: ListPage }> {
      const language = query.ml_language ?? ctx.config.defaultLanguage
      // `event` and `post` name the same filter; both are checked (an unknown id is 400 whichever it is),
      // and `event` wins when both are sent, as in the reference (CONTRACT §6).
      const owners = { event: query.event === undefined ? undefined : await eventOwner(ctx.db, query.event), post: query.post === undefined ? undefined : await eventOwner(ctx.db, query.post) }
      if (query.event !== undefined && owners.event === undefined) throw invalidParam('event', 'unknownEvent')
      if (query.post !== undefined && owners.post === undefined) throw invalidParam('post', 'unknownEvent')
      const post = query.event ?? query.post
      const event = query.event !== undefined ? owners.event : owners.post
      // An event the caller cannot read matches nothing (CONTRACT §6): its terms stay hidden.
      const hidden = event !== undefined && !canReadEvent(req.user, event)
      // Tags have no `parent` parameter: like any unknown parameter it is ignored (it is not even coerced).
      const parent = taxonomy === 'category' && 'parent' in query ? query.parent : undefined
      if (parent !== undefined && parent !== 0 && !(await termExists(ctx.db, taxonomy, parent, language))) {
        throw invalidParam('parent', 'parentNotFound')
      }
      const page = pageOf(query)
      const filter: TermListQuery = {
        language,
        offset: page.offset,
        limit: page.perPage,
        order: query.order ?? 'asc',
        orderby: query.orderby ?? 'name',
        hideEmpty: query.hide_empty ?? true,
        ...(query.search !== undefined ? { search: query.search } : {}),
        // An empty list (`include=`) filters nothing, as for events.
        ...(query.include !== undefined && query.include.length > 0 ? { include: query.include } : {}),
        ...(query.exclude !== undefined ? { exclude: query.exclude } : {}),
        ...(parent !== undefined ? { parent } : {}),
        ...(post !== undefined ? { post } : {}),
        ...(query.slug !== undefined ? { slug: query.slug } : {}),
      }
      const total = hidden ? 0 : await countTerms(ctx.db, kind, filter)
      const totalPages = checkPage(resource, page, total)
      const records = total === 0 ? [] : await listTerms(ctx.db, ctx.site, kind, filter)
      const sent = sentQueryOf(req).map((name): [string, unknown] => [name, asSent(req, (query as Record<string, unknown>)[name])])
      const links = listLinks(`${ctx.apiUrl}/${kind.collection}`, page, totalPages, sent)
      return { records, list: { links, total, totalPages } }
    },

    async get(req: FastifyRequest, id: number, language: Language | undefined, reply: FastifyReply): Promise<R> {
      const stored = await find(id, language)
      checkNotModified(req, reply, etag(stored))
      return stored.record
    },

    /** `serialize`: the record's JSON by the contract's schema (what a retry under the same Idempotency-Key is sent again). */
    async create(req: FastifyRequest, body: Schema<'CategoryCreate'>, reply: FastifyReply, serialize: (record: R) => Serialized<R>): Promise<Serialized<R>> {
      const language = languageOf(req)
      return createOnce(ctx, req, reply,
        async (trx) => insertTerm(trx, kind, await checkNewTerm(trx, kind, body, language, body.translation_of)),
        async (reader, id) => {
          const stored = await find(id, undefined, reader)
          return { body: serialize(stored.record), location: stored.record.rest_url, etag: etag(stored) }
        })
    },

    async update(req: FastifyRequest, id: number, body: TermBody | undefined, reply: FastifyReply): Promise<R> {
      const stored = await writeRead(ctx.db, req, async (reader, write) => {
        const current = await find(id, requestedLanguage(req), reader)
        const expected = expectedVersion(req, () => etag(current), current.version) ?? current.version
        return write(async (trx) => {
          const values = await checkTermUpdate(trx, kind, current, body ?? {})
          if (!(await updateTerm(trx, kind, values, expected))) lost()
          return find(current.record.id, undefined, trx)
        })
      })
      reply.header('ETag', etag(stored))
      return stored.record
    },

    /**
     * Deletes a term for good; its children move up to its parent, a child whose name a term there
     * already has renamed to the first free `<name> 2`, `<name> 3`… (`moveChildrenUp`).
     */
    async remove(req: FastifyRequest, id: number): Promise<R> {
      return writeRead(ctx.db, req, async (reader, write) => {
        const current = await find(id, requestedLanguage(req), reader)
        const expected = expectedVersion(req, () => etag(current), current.version) ?? current.version
        await write(async (trx) => {
          if (!(await deleteTerm(trx, kind, current.record.id, expected))) lost()
          await moveChildrenUp(trx, kind, current.record.id, current.parent)
        })
        return current.record
      })
    },
  }
}
