/**
 * The HTTP side of venues and organizers, written once: visibility and rights (CONTRACT §6), trash and
 * force delete (§5), conditional requests, list envelopes. `venues.ts` and `organizers.ts` bind it.
 */
import type { FastifyReply, FastifyRequest } from 'fastify'
import { forbidden, inTrash, invalidParam, notAccessible, notFound, preconditionFailed } from '../http/errors.js'
import { checkNotModified, etagOf, expectedVersion } from '../http/etag.js'
import type { Language, WritableStatus } from '../contract.js'
import { requestedLanguage } from '../http/language.js'
import { checkPage, listLinks, pageOf, setListHeaders } from '../http/pagination.js'
import { sentQueryOf } from '../http/query.js'
import { canEdit, canRead, editsAll, listScope, statusToStore } from '../lib/rights.js'
import {
  checkUpdateInput, deleteLinked, findLinked, insertLinked, isEvent, listLinked, nowUtc, trashLinked, updateLinked,
  type Found, type LinkedKind, type LinkedRow, type Repo, type WriteInput,
} from '../repositories/linked.js'
import { scopeCondition, type PostRef } from '../repositories/posts.js'
import { withTransaction } from '../db/unit-of-work.js'
import type { AppContext } from './context.js'

export interface LinkedListParams {
  page?: number
  per_page?: number
  search?: string
  event?: number
  has_events?: boolean
  only_with_upcoming?: boolean
  status?: WritableStatus
  ml_language?: Language
}

interface Dated {
  date: string
  date_utc: string
}

export function repoOf(ctx: AppContext): Repo {
  return {
    db: ctx.db,
    apiUrl: ctx.apiUrl,
    siteTz: ctx.config.timezone,
    defaultLanguage: ctx.config.defaultLanguage,
    geoloc: ctx.config.extensions.has('geoloc'),
    cache: ctx.cache,
  }
}

export function linkedOperations<R extends LinkedRow & Dated, Rec, C extends WriteInput & { ml_language?: Language; translation_of?: number }, U extends WriteInput, O>(
  ctx: AppContext, kind: LinkedKind<R, Rec, C, U, O>,
) {
  const repo = repoOf(ctx)
  const { resource } = kind
  const etag = (row: LinkedRow): string => etagOf(resource, row.id, row.version)
  const label = (ref: PostRef): [number | string, 'id' | 'slug'] => ('id' in ref ? [ref.id, 'id'] : [ref.slug, 'slug'])

  async function find(ref: PostRef, language: Language | undefined): Promise<Found<R, Rec>> {
    const found = await findLinked(repo, kind, ref, language)
    if (found === undefined) throw notFound(resource, ...label(ref))
    return found
  }

  /** Found, and the caller may change it: 404, then 410 for the trash (unless restoring), then 403. */
  async function findForWrite(req: FastifyRequest, ref: PostRef, restoring: boolean): Promise<Found<R, Rec>> {
    const found = await find(ref, requestedLanguage(req))
    if (found.row.status === 'trash' && !restoring) throw inTrash(resource)
    if (!canEdit(req.user, found.row) && !(found.row.status === 'trash' && editsAll(req.user))) throw forbidden(403)
    return found
  }

  async function reread(id: number): Promise<Found<R, Rec>> {
    return find({ id }, undefined)
  }

  return {
    async list(req: FastifyRequest, query: LinkedListParams, reply: FastifyReply) {
      const scope = listScope(req.user, query.status)
      if (scope.kind === 'refused') throw invalidParam('status', 'statusNotAllowed')
      if (query.event !== undefined && !(await isEvent(ctx.db, query.event))) throw invalidParam('event', 'unknownEvent')
      const page = pageOf(query)
      const result = await listLinked(repo, kind, {
        language: query.ml_language ?? ctx.config.defaultLanguage,
        scope,
        offset: page.offset,
        limit: page.perPage,
        nowUtc: nowUtc(ctx.now()),
        ...(query.search !== undefined ? { search: query.search } : {}),
        ...(query.event !== undefined ? { event: query.event } : {}),
        ...(query.has_events !== undefined ? { hasEvents: query.has_events } : {}),
        ...(query.only_with_upcoming !== undefined ? { onlyWithUpcoming: query.only_with_upcoming } : {}),
      }, scopeCondition(kind.table, scope))
      const totalPages = checkPage(resource, page, result.total)
      const records = result.total === 0 ? [] : await result.records()
      const sent = sentQueryOf(req).map((name): [string, unknown] => [name, (query as Record<string, unknown>)[name]])
      const links = listLinks(`${ctx.apiUrl}/${kind.collection}`, page, totalPages, sent)
      setListHeaders(reply, result.total, totalPages, links)
      return { records, links, total: result.total, totalPages }
    },

    async get(req: FastifyRequest, ref: PostRef, language: Language | undefined, reply: FastifyReply): Promise<Rec> {
      const found = await find(ref, language)
      const visible = found.row.status === 'trash' ? canEdit(req.user, found.row) || editsAll(req.user) : canRead(req.user, found.row)
      if (!visible) throw notAccessible(resource)
      checkNotModified(req, reply, etag(found.row))
      return found.record
    },

    async create(req: FastifyRequest, body: C, reply: FastifyReply): Promise<Rec> {
      const user = req.user
      if (user === null) throw forbidden(401)
      const language = requestedLanguage(req) ?? ctx.config.defaultLanguage
      const id = await withTransaction(ctx.db, (trx) => insertLinked(trx, repo, kind, body, language, body.translation_of, {
        callerId: user.id,
        mayAssignAuthor: editsAll(user),
        status: statusToStore(user, body.status),
        now: ctx.now(),
      }))
      const found = await reread(id)
      reply.code(201).header('Location', `${ctx.apiUrl}/${kind.collection}/${id}`).header('ETag', etag(found.row))
      return found.record
    },

    async update(req: FastifyRequest, ref: PostRef, input: U, reply: FastifyReply): Promise<Rec> {
      const user = req.user
      if (user === null) throw forbidden(401)
      // Fields first (400), then the record (404/410), rights (403) and If-Match (412): CONTRACT §1.
      await checkUpdateInput(repo, kind, input)
      const current = await findForWrite(req, ref, input.status !== undefined)
      // Setting another author is a right on the record (403), checked before If-Match (412).
      if (input.author !== undefined && input.author !== user.id && !editsAll(user)) throw forbidden(403)
      const expected = expectedVersion(req, etag(current.row), current.row.version) ?? current.row.version
      const status = input.status === undefined ? undefined : statusToStore(user, input.status, current.row.status)
      await withTransaction(ctx.db, async (trx) => {
        const written = await updateLinked(trx, repo, kind, current.row, input, expected, {
          callerId: user.id,
          mayAssignAuthor: editsAll(user),
          status,
          now: ctx.now(),
        })
        // Thrown inside the transaction so that nothing it wrote (a new image record) stays behind.
        if (!written) throw preconditionFailed()
      })
      const found = await reread(current.row.id)
      reply.header('ETag', etag(found.row))
      return found.record
    },

    async remove(req: FastifyRequest, ref: PostRef, force: boolean): Promise<Rec | { deleted: true; previous: Rec }> {
      const current = await find(ref, requestedLanguage(req))
      if (current.row.status === 'trash' && !force) throw inTrash(resource)
      if (!canEdit(req.user, current.row) && !editsAll(req.user)) throw forbidden(403)
      const expected = expectedVersion(req, etag(current.row), current.row.version) ?? current.row.version
      if (force) {
        await deleteLinked(repo, kind, current.row, expected)
        return { deleted: true, previous: current.record }
      }
      await trashLinked(repo, kind, current.row, expected, ctx.now())
      return (await reread(current.row.id)).record
    },
  }
}

/** Path parameters as a reference to a record. */
export const byId = (params: { id: number }): PostRef => ({ id: params.id })
export const bySlug = (params: { slug: string }): PostRef => ({ slug: params.slug })
