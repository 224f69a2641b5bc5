/**
 * List envelopes (CONTRACT §3): page/per_page with the clamp, the out-of-range page error, `rest_url`
 * with the effective query, next/previous links, and the X-Total, X-Total-Pages and Link headers.
 */
import type { FastifyReply } from 'fastify'
import type { ListLinks } from '../contract.js'
import { archivePageNotFound, type Resource } from './errors.js'
import { queryValueText } from './query.js'
import { listBody, sendSerialized, type Serialized, type SerializedPieces } from './serialized.js'

export const MAX_PER_PAGE = 50

export interface Page {
  page: number
  perPage: number
  offset: number
}

export function pageOf(query: { page?: number; per_page?: number }): Page {
  const page = query.page ?? 1
  const perPage = Math.min(query.per_page ?? 10, MAX_PER_PAGE)
  return { page, perPage, offset: (page - 1) * perPage }
}

/**
 * Rejects a page past the last one before any rows are read (page 1 of an empty list is fine), so
 * the offset used in SQL is always small.
 */
export function checkPage(resource: Resource, page: Page, total: number): number {
  const totalPages = Math.ceil(total / page.perPage)
  if (page.page > Math.max(1, totalPages)) throw archivePageNotFound(resource)
  return totalPages
}

/**
 * `rest_url` carries page, per_page (after clamping), then every other parameter in `params` in order,
 * URL-encoded. Next and previous are present only when those pages exist.
 */
export function listLinks(collectionUrl: string, page: Page, totalPages: number, params: Array<[string, unknown]>): ListLinks {
  const rest = params.filter(([name, value]) => name !== 'page' && name !== 'per_page' && value !== undefined)
  const url = (p: number): string => {
    const parts = [['page', p], ['per_page', page.perPage], ...rest].map(([name, value]) =>
      `${encodeURIComponent(String(name))}=${encodeURIComponent(queryValueText(value))}`)
    return `${collectionUrl}?${parts.join('&')}`
  }
  const links: ListLinks = { rest_url: url(page.page) }
  if (page.page < totalPages) links.next_rest_url = url(page.page + 1)
  if (page.page > 1 && page.page - 1 <= totalPages) links.previous_rest_url = url(page.page - 1)
  return links
}

export function setListHeaders(reply: FastifyReply, total: number, totalPages: number, links: ListLinks): void {
  reply.header('X-Total', String(total))
  reply.header('X-Total-Pages', String(totalPages))
  const link = linkHeader(links)
  if (link !== undefined) reply.header('Link', link)
}

/** The `Link` header of a list page: its next and previous pages, undefined when it has neither. */
export function linkHeader(links: ListLinks): string | undefined {
  const link: string[] = []
  if (links.next_rest_url !== undefined) link.push(`<${links.next_rest_url}>; rel="next"`)
  if (links.previous_rest_url !== undefined) link.push(`<${links.previous_rest_url}>; rel="prev"`)
  return link.length > 0 ? link.join(', ') : undefined
}

/** What a list answer is made of once its page is read. */
export interface ListPage {
  links: ListLinks
  total: number
  totalPages: number
}

/**
 * Answers a list route: the X-Total, X-Total-Pages and Link headers, and the envelope (made by the
 * route's schema) with the records' JSON, as made once per record, in its array `field`.
 */
export function sendList<F extends string, R>(reply: FastifyReply, field: F, list: ListPage, items: ReadonlyArray<Serialized<R> | SerializedPieces<R>>): Serialized<ListEnvelope<F, R>> {
  setListHeaders(reply, list.total, list.totalPages, list.links)
  return sendSerialized(reply, listBodyOf(field, list, items))
}

/** A list route's body (see `sendList`) without its headers. */
export function listBodyOf<F extends string, R>(field: F, list: ListPage, items: ReadonlyArray<Serialized<R> | SerializedPieces<R>>): Serialized<ListEnvelope<F, R>> {
  // The array is serialized empty and the records' JSON put into it (see `listBody`); keys in the order of CONTRACT §3.
  const { rest_url, next_rest_url, previous_rest_url } = list.links
  const envelope = {
    [field]: [], rest_url,
    ...(next_rest_url !== undefined ? { next_rest_url } : {}),
    ...(previous_rest_url !== undefined ? { previous_rest_url } : {}),
    total: list.total, total_pages: list.totalPages,
  } as unknown as ListEnvelope<F, R>
  return listBody(envelope, field, items)
}

/** A list body: the records' array under `field`, the links and the totals. */
export type ListEnvelope<F extends string, R> = { [K in F]: R[] } & ListLinks & { total: number; total_pages: number }
