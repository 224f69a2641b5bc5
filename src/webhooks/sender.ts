/**
 * One HTTP attempt of a webhook delivery (CONTRACT §13): a POST with the signed headers and the body,
 * through undici, answered within `timeoutMs` (10 s) or abandoned; redirects are never followed (a 3xx
 * is a failure like any other non-2xx); at most 64 kB of the answer are read, and only its start is
 * kept, for the attempt's `error`. Connections resolve their host through the address guard.
 */
import { Agent, request } from 'undici'
import { guardedLookup, refusedLiteral } from './address-guard.js'

/** How much of a receiver's answer is read at most. */
export const MAX_ANSWER_BYTES = 64 * 1024
/** How much of it the attempt's error keeps. */
const SHOWN_ANSWER_CHARS = 200

export interface SendResult {
  /** The receiver's status, or null when no answer came. */
  status: number | null
  /** What went wrong; null for a 2xx. */
  error: string | null
  delivered: boolean
}

export interface Sender {
  send(url: string, headers: Record<string, string>, body: string, signal?: AbortSignal): Promise<SendResult>
  close(): Promise<void>
}

export function createSender(options: { allowPrivate: boolean; timeoutMs: number }): Sender {
  const agent = new Agent({
    connect: { lookup: guardedLookup(options.allowPrivate) },
    headersTimeout: options.timeoutMs,
    bodyTimeout: options.timeoutMs,
    connections: 64,
  })
  return {
    async send(url, headers, body, stop) {
      let target: URL
      try {
        target = new URL(url)
      } catch {
        return { status: null, error: 'the URL is not valid', delivered: false }
      }
      if (refusedLiteral(target, options.allowPrivate)) return { status: null, error: 'the address is not public', delivered: false }
      const signals = [AbortSignal.timeout(options.timeoutMs), ...(stop !== undefined ? [stop] : [])]
      try {
        const answer = await request(target, {
          method: 'POST', headers: { 'content-type': 'application/json', 'user-agent': 'calendar-events-webhooks', ...headers },
          body, dispatcher: agent, signal: AbortSignal.any(signals),
        })
        const text = await readSome(answer.body, MAX_ANSWER_BYTES)
        const status = answer.statusCode
        if (status >= 200 && status < 300) return { status, error: null, delivered: true }
        const shown = text.slice(0, SHOWN_ANSWER_CHARS).replace(/\s+/g, ' ').trim()
        const why = status >= 300 && status < 400 ? ' (redirects are not followed)' : ''
        return { status, error: `HTTP ${status}${why}${shown === '' ? '' : `: ${shown}`}`, delivered: false }
      } catch (error) {
        return { status: null, error: describe(error, signals[0]!.aborted), delivered: false }
      }
    },
    close: () => agent.close(),
  }
}

/** Reads at most `limit` bytes of a body as text, then lets the rest go. */
async function readSome(body: AsyncIterable<Buffer> & { destroy(): unknown }, limit: number): Promise<string> {
  const chunks: Buffer[] = []
  let size = 0
  for await (const chunk of body) {
    chunks.push(chunk)
    size += chunk.length
    if (size >= limit) {
      body.destroy()
      break
    }
  }
  return Buffer.concat(chunks).subarray(0, limit).toString('utf8')
}

function describe(error: unknown, timedOut: boolean): string {
  if (timedOut) return 'no answer within the timeout'
  const code = typeof error === 'object' && error !== null && 'code' in error ? String(error.code) : ''
  if (code === 'EWEBHOOKADDRESS' || (error instanceof Error && error.cause instanceof Error && 'code' in error.cause && error.cause.code === 'EWEBHOOKADDRESS')) {
    return 'the host resolves to an address that is not public'
  }
  const message = error instanceof Error ? error.message : String(error)
  return `${code !== '' ? `${code}: ` : ''}${message}`.slice(0, 300)
}
