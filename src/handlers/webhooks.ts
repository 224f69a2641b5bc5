/**
 * /webhooks operations (CONTRACT §13), administrators only (the spec's security scopes): subscriptions
 * listed, created (the one answer that shows the secret), read, changed, deleted; and their latest
 * delivery attempts, newest first. A URL is checked, DNS included, when it is set (address-guard.ts).
 */
import { hash, randomBytes } from 'node:crypto'
import type { FastifyReply, FastifyRequest } from 'fastify'
import type { Schema } from '../contract.js'
import { withTransaction } from '../db/unit-of-work.js'
import { ApiError, invalidParam } from '../http/errors.js'
import { checkNotModified, expectedVersion } from '../http/etag.js'
import type { Handlers } from '../http/operations.js'
import { listLinks, pageOf, setListHeaders, type Page } from '../http/pagination.js'
import { asSent, sentQueryOf } from '../http/query.js'
import { formatUtc } from '../lib/dates.js'
import { countAttempts, listAttempts, type AttemptListing } from '../repositories/webhook-deliveries.js'
import { countWebhooks, deleteWebhook, findWebhook, insertWebhook, listWebhooks, updateWebhook, type Webhook } from '../repositories/webhooks.js'
import { refusedUrl } from '../webhooks/address-guard.js'
import { messageId } from '../webhooks/payload.js'
import type { AppContext } from './context.js'
import { createOnce } from './idempotency.js'
import { cursorOf } from './changes.js'

type WebhookHandlers = Pick<Handlers, 'listWebhooks' | 'createWebhook' | 'getWebhook' | 'updateWebhook' | 'deleteWebhook' | 'listWebhookDeliveries'>

const notFound = (id: number) => new ApiError(404, 'rest-webhook-not-found', 'notFoundById', { resource: 'webhook', id: String(id) })

/**
 * A subscription's strong ETag (CONTRACT §5's rule for single records): a digest of everything its answer shows, so
 * that a delivery given up (`failures`, `disabled_utc`) moves it as a PATCH does.
 */
export function webhookEtag(webhook: Webhook): string {
  return `"webhook-${webhook.id}-${hash('sha256', JSON.stringify(webhook), 'base64url').slice(0, 16)}"`
}

/**
 * Inside a write's unit of work: the subscription as it stands there checked against the request's `If-Match`
 * (412, nothing written, when it names another tag); undefined when it is gone (404), nothing read without an `If-Match`.
 */
async function checkIfMatch(trx: Parameters<typeof findWebhook>[0], req: FastifyRequest, id: number): Promise<'gone' | undefined> {
  if (req.headers['if-match'] === undefined) return undefined
  const now = await findWebhook(trx, id)
  if (now === undefined) return 'gone'
  expectedVersion(req, () => webhookEtag(now), 0)
  return undefined
}

/** The answer of one subscription, with its ETag. */
function tagged(reply: FastifyReply, webhook: Webhook): Webhook {
  reply.header('ETag', webhookEtag(webhook))
  return webhook
}

/** `whsec_` and the base64 of 32 random bytes (Standard Webhooks). */
function newSecret(): string {
  return `whsec_${randomBytes(32).toString('base64')}`
}

/** A page past the last non-empty one is a 404 (CONTRACT §3); page 1 of nothing is fine. */
function checkPageOf(page: Page, total: number, code: string, resource: string): number {
  const totalPages = Math.ceil(total / page.perPage)
  if (page.page > Math.max(1, totalPages)) throw new ApiError(404, code, 'archivePageNotFound', { resource })
  return totalPages
}

/** The ISO instant of the outbox in the contract's format. */
function contractUtc(iso: string): string {
  return formatUtc(new Date(iso))
}

function attemptRecord(a: AttemptListing): Schema<'WebhookDelivery'> {
  const latest = a.attempt === a.attempts
  return {
    id: a.id, delivery_id: a.delivery_id, message_id: messageId(a.webhook_id, a.position), type: a.type,
    resource: a.resource, record_id: a.record_id, cursor: cursorOf(a.position), attempt: a.attempt,
    attempted_utc: a.attempted_utc, outcome: a.outcome, response_status: a.response_status, error: a.error,
    duration_ms: a.duration_ms, next_attempt_utc: latest && a.status === 'pending' ? contractUtc(a.next_attempt_utc) : null,
  }
}

export function webhookHandlers(ctx: AppContext): WebhookHandlers {
  const nowUtc = () => formatUtc(ctx.now())

  async function find(id: number): Promise<Webhook> {
    const found = await findWebhook(ctx.db, id)
    if (found === undefined) throw notFound(id)
    return found
  }

  async function checkUrl(url: string): Promise<void> {
    const refusal = await refusedUrl(url, ctx.config.webhooks.allowPrivate)
    if (refusal !== undefined) throw invalidParam('url', refusal)
  }

  function links(req: FastifyRequest, url: string, page: Page, totalPages: number) {
    const query = (req.query ?? {}) as Record<string, unknown>
    const sent = sentQueryOf(req).map((name): [string, unknown] => [name, asSent(req, query[name])])
    return listLinks(url, page, totalPages, sent)
  }

  return {
    async listWebhooks(req, reply) {
      const page = pageOf(req.query ?? {})
      const total = await countWebhooks(ctx.db)
      const totalPages = checkPageOf(page, total, 'webhook-archive-page-not-found', 'webhook')
      const webhooks = total === 0 ? [] : await listWebhooks(ctx.db, page.perPage, page.offset)
      const list = links(req, `${ctx.apiUrl}/webhooks`, page, totalPages)
      setListHeaders(reply, total, totalPages, list)
      return { webhooks, ...list, total, total_pages: totalPages }
    },

    async createWebhook(req, reply) {
      const body = req.body
      await checkUrl(body.url)
      const secret = newSecret()
      return createOnce(ctx, req, reply,
        (trx) => insertWebhook(trx, {
          url: body.url, events: body.events, description: body.description ?? null, active: body.active ?? true, secret, nowUtc: nowUtc(),
        }),
        async (_reader, created) => ({ body: ctx.json.webhookCreated({ ...created, secret }), location: `${ctx.apiUrl}/webhooks/${created.id}` }))
    },

    async getWebhook(req, reply) {
      const webhook = await find(req.params.id)
      checkNotModified(req, reply, webhookEtag(webhook))
      return webhook
    },

    async updateWebhook(req, reply) {
      const current = await find(req.params.id)
      // A stale If-Match is 412 before the URL's check; checked again inside the write, where nothing comes between.
      expectedVersion(req, () => webhookEtag(current), 0)
      const body = req.body ?? {}
      if (body.url !== undefined && body.url !== current.url) await checkUrl(body.url)
      const updated = await withTransaction(ctx.db, async (trx) => (await checkIfMatch(trx, req, current.id)) === 'gone' ? undefined : updateWebhook(trx, current.id, {
        ...(body.url !== undefined ? { url: body.url } : {}),
        ...(body.events !== undefined ? { events: body.events } : {}),
        ...(body.description !== undefined ? { description: body.description } : {}),
        ...(body.active !== undefined ? { active: body.active } : {}),
      }, nowUtc()))
      if (updated === undefined) throw notFound(current.id)
      return tagged(reply, updated)
    },

    async deleteWebhook(req, reply) {
      const deleted = await withTransaction(ctx.db, async (trx) => (await checkIfMatch(trx, req, req.params.id)) === 'gone' ? undefined : deleteWebhook(trx, req.params.id))
      if (deleted === undefined) throw notFound(req.params.id)
      return tagged(reply, deleted)
    },

    async listWebhookDeliveries(req, reply) {
      const webhook = await find(req.params.id)
      const page = pageOf(req.query ?? {})
      const total = await countAttempts(ctx.db, webhook.id)
      const totalPages = checkPageOf(page, total, 'delivery-archive-page-not-found', 'delivery')
      const deliveries = total === 0 ? [] : (await listAttempts(ctx.db, webhook.id, page.perPage, page.offset)).map(attemptRecord)
      const list = links(req, `${ctx.apiUrl}/webhooks/${webhook.id}/deliveries`, page, totalPages)
      setListHeaders(reply, total, totalPages, list)
      return { deliveries, ...list, total, total_pages: totalPages }
    },
  }
}
