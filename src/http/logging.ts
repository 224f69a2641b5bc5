/**
 * What the request log may show. A key sent in the URL (`?api_key=…`, refused, but sent all the same) was
 * logged verbatim with the URL; so were an event's `password`. Every URL in a log line goes through
 * `redactUrl`, which keeps the parameter names and replaces the values of those that look like
 * credentials; request headers are never logged (Fastify's request serializer logs none, and the one
 * here keeps it that way), so neither is `Authorization`.
 */
import type { FastifyServerOptions } from 'fastify'

/** Where log lines go (pino's destination): tests collect them. */
export interface LogStream {
  write(line: string): void
}

/** Query parameters whose values are never logged (compared case-insensitively). */
export const SECRET_PARAMETERS = ['api_key', 'apikey', 'key', 'token', 'access_token', 'password', 'secret', 'client_secret'] as const

const SECRET = new Set<string>(SECRET_PARAMETERS)
const REDACTED = '[redacted]'

/** The URL with the values of credential-looking query parameters replaced; anything else as sent. */
export function redactUrl(url: string): string {
  const start = url.indexOf('?')
  if (start === -1) return url
  const pairs = url.slice(start + 1).split('&').map((pair) => {
    const equals = pair.indexOf('=')
    const rawName = equals === -1 ? pair : pair.slice(0, equals)
    let name = rawName
    try {
      name = decodeURIComponent(rawName.replace(/\+/g, ' '))
    } catch {
      // Undecodable: compared as sent.
    }
    const bare = name.endsWith('[]') ? name.slice(0, -2) : name
    return SECRET.has(bare.trim().toLowerCase()) ? `${rawName}=${REDACTED}` : pair
  })
  return `${url.slice(0, start)}?${pairs.join('&')}`
}

interface LoggedRequest {
  method: string
  url: string
  hostname?: string
  ip?: string
  socket?: { remotePort?: number }
}

/** Fastify's `logger` option: the level, the request serializer above, and where lines go (tests). */
export function loggerOptions(level: string, stream?: LogStream): FastifyServerOptions['logger'] {
  if (level === 'silent') return false
  return {
    level,
    ...(stream !== undefined ? { stream } : {}),
    serializers: {
      req: (req: LoggedRequest) => ({
        method: req.method,
        url: redactUrl(req.url),
        host: req.hostname,
        remoteAddress: req.ip,
        remotePort: req.socket?.remotePort,
      }),
    },
    // Anything else that carries a URL or headers into a line.
    redact: { paths: ['req.headers.authorization', 'headers.authorization', 'res.headers["set-cookie"]'], censor: REDACTED },
  }
}
