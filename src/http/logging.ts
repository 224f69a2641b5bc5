/**
 * What the log shows, and how. One info line per request, written when it is answered (`registerRequestLog`):
 * method, route, URL, status, duration and the request id (every line of a request carries `reqId`,
 * the id its `X-Request-Id` names); Fastify's own two lines per request are off. JSON lines in
 * production; pretty lines for a terminal with CALENDAR_LOG_FORMAT=pretty (`npm run dev`, through
 * pino-pretty, a development dependency loaded only then). Routes that ask for a quieter level (the
 * health checks) log no info line.
 *
 * What the request log may show. A key sent in the URL (`?api_key=…`, refused, but sent all the same) was
 * logged verbatim with the URL; so were an event's `password`. Every URL in a log line goes through
 * `redactUrl`, which keeps the parameter names and replaces the values of those that look like
 * credentials; request headers are never logged (Fastify's request serializer logs none, and the one
 * here keeps it that way), so neither is `Authorization`.
 */
import { LogController, type FastifyBaseLogger, type FastifyInstance, type FastifyRequest, type FastifyServerOptions } from 'fastify'

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
export function loggerOptions(level: string, stream?: LogStream, format: 'json' | 'pretty' = 'json'): FastifyServerOptions['logger'] {
  if (level === 'silent') return false
  const pretty = format === 'pretty' && stream === undefined
  return {
    level,
    ...(stream !== undefined ? { stream } : {}),
    ...(pretty ? { transport: { target: 'pino-pretty', options: { translateTime: 'SYS:HH:MM:ss.l', ignore: 'pid,hostname' } } } : {}),
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

/** Fastify's `logController`: its own two lines per request (incoming, completed) are off. */
export function requestLogController(): LogController {
  return new LogController({ disableRequestLogging: true })
}

/** The route a request matched, as registered, without find-my-way's parameter patterns; `unknown` when none. */
export function routeLabel(req: FastifyRequest): string {
  const url = req.routeOptions.url
  if (url === undefined) return 'unknown'
  let label = labels.get(url)
  if (label === undefined) {
    label = url.replace(/\([^)]*\)/g, '')
    // The routes' URLs as registered: a few hundred at most.
    if (labels.size < 10_000) labels.set(url, label)
  }
  return label
}

const labels = new Map<string, string>()

/** Whether `log` writes info lines (pino's check; a logger without one is asked to write them). */
function infoWritten(log: FastifyBaseLogger): boolean {
  const enabled = (log as { isLevelEnabled?: (level: string) => boolean }).isLevelEnabled
  return enabled === undefined || enabled.call(log, 'info')
}

/** The one line per request, at info, when it has been answered (Fastify's own request lines are off). */
export function registerRequestLog(app: FastifyInstance): void {
  app.addHook('onResponse', (req, reply, done) => {
    // Made only when it is written (not at LOG_LEVEL warn and above).
    if (infoWritten(req.log)) {
      req.log.info({
        method: req.method,
        route: routeLabel(req),
        url: redactUrl(req.url),
        status: reply.statusCode,
        durationMs: Math.round(reply.elapsedTime * 10) / 10,
      }, 'request')
    }
    done()
  })
}
