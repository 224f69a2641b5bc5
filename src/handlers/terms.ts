/**
 * The operations shared by categories and tags, written once and bound to a taxonomy by
 * `categories.ts` and `tags.ts`.
 */
import type { FastifyReply, FastifyRequest } from 'fastify'
import { invalidParam } from '../http/errors.js'
import { checkNotModified, etagOf, expectedVersion } from '../http/etag.js'
import type { Language } from '../contract.js'
import { requestedLanguage } from '../http/language.js'
import { checkPage, listLinks, pageOf, setListHeaders } from '../http/pagination.js'
import { sentQueryOf } from '../http/query.js'
import {
  countTerms, createTerm, deleteTerm, eventExists, findTerm, listTerms, termExists, updateTerm,
  type FoundTerm, type TermKind, type TermListQuery,
} from '../repositories/terms.js'
import type { AppContext } from './context.js'

export interface TermListParams {
  page?: number
  per_page?: number
  search?: string
  exclude?: number[]
  include?: number[]
  order?: TermListQuery['order']
  orderby?: TermListQuery['orderby']
  hide_empty?: boolean
  parent?: number
  post?: number
  event?: number
  slug?: string
  ml_language?: Language
}

export interface TermBody {
  name?: string
  description?: string | null
  slug?: string
  parent?: number
  ml_language?: Language
  translation_of?: number
}

export function termOperations<R extends { id: number; rest_url: string }>(ctx: AppContext, kind: TermKind<R>) {
  const { taxonomy, resource } = kind
  const repo = { db: ctx.db, apiUrl: ctx.apiUrl, cache: ctx.cache }
  const languageOf = (req: FastifyRequest): Language => requestedLanguage(req) ?? ctx.config.defaultLanguage
  const etag = (found: FoundTerm<R>): string => etagOf(resource, found.row.id, found.row.version)

  return {
    async list(req: FastifyRequest, query: TermListParams, reply: FastifyReply) {
      const language = query.ml_language ?? ctx.config.defaultLanguage
      const post = query.post ?? query.event
      if (post !== undefined && !(await eventExists(ctx.db, post))) {
        throw invalidParam(query.post !== undefined ? 'post' : 'event', 'unknownEvent')
      }
      // Tags have no `parent` parameter: like any unknown parameter it is ignored (it is not even coerced).
      const parent = taxonomy === 'category' ? query.parent : undefined
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
      const total = await countTerms(repo, kind, filter)
      const totalPages = checkPage(resource, page, total)
      const records = total === 0 ? [] : await listTerms(repo, kind, filter)
      const sent = sentQueryOf(req).map((name): [string, unknown] => [name, (query as Record<string, unknown>)[name]])
      const links = listLinks(`${ctx.apiUrl}/${kind.collection}`, page, totalPages, sent)
      setListHeaders(reply, total, totalPages, links)
      return { records, links, total, totalPages }
    },

    async get(req: FastifyRequest, id: number, language: Language | undefined, reply: FastifyReply): Promise<R> {
      const found = await findTerm(repo, kind, id, language)
      checkNotModified(req, reply, etag(found))
      return found.record
    },

    async create(req: FastifyRequest, body: TermBody & { name: string }, reply: FastifyReply): Promise<R> {
      const found = await createTerm(repo, kind, {
        name: body.name,
        language: languageOf(req),
        ...(body.description !== undefined ? { description: body.description } : {}),
        ...(body.slug !== undefined ? { slug: body.slug } : {}),
        ...(body.parent !== undefined ? { parent: body.parent } : {}),
        ...(body.translation_of !== undefined ? { translationOf: body.translation_of } : {}),
      })
      reply.code(201).header('Location', found.record.rest_url).header('ETag', etag(found))
      return found.record
    },

    async update(req: FastifyRequest, id: number, body: TermBody | undefined, reply: FastifyReply): Promise<R> {
      const current = await findTerm(repo, kind, id, requestedLanguage(req))
      const expected = expectedVersion(req, etag(current), current.row.version)
      const input = body ?? {}
      const found = await updateTerm(repo, kind, current.row, {
        ...(input.name !== undefined ? { name: input.name } : {}),
        ...(input.description !== undefined ? { description: input.description } : {}),
        ...(input.slug !== undefined ? { slug: input.slug } : {}),
        ...(input.parent !== undefined ? { parent: input.parent } : {}),
      }, expected)
      reply.header('ETag', etag(found))
      return found.record
    },

    async remove(req: FastifyRequest, id: number): Promise<R> {
      const current = await findTerm(repo, kind, id, requestedLanguage(req))
      const expected = expectedVersion(req, etag(current), current.row.version)
      await deleteTerm(repo, current.row, expected)
      return current.record
    },
  }
}
