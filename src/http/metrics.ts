/**
 * Prometheus metrics at `GET /metrics` (CONTRACT §16), served only with CALENDAR_METRICS=true (else the
 * path is an unknown route like any other): requests by route, method and status with their latency
 * (a histogram, whose `_count` is the number of requests), the read cache's hits and misses, the
 * PostgreSQL pool's connections, webhook delivery attempts and backlog, and Node's own process metrics. Each app has its own registry, so that
 * apps built side by side (tests) count apart. The sources of the cache and pool figures are given by
 * `app.ts` as functions: this module reads figures, it does not know where they come from. The path is
 * outside the namespace and the spec; put it behind the proxy's access rules, not on the public side.
 */
import type { FastifyInstance } from 'fastify'
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client'
import { routeLabel } from './logging.js'

export interface MetricSources {
  /** Lookups of the read cache that found and did not find what they asked for, by what was asked. */
  cache(): { hits: Record<string, number>; misses: Record<string, number> } | undefined
  /** The database pool's connections (PostgreSQL; undefined on SQLite). */
  pool(): { total: number; idle: number; waiting: number } | undefined
  /** Webhook delivery attempts by outcome since start, and the deliveries pending now (all nodes). */
  webhooks(): Promise<{ attempts: Record<string, number>; backlog: number }>
}

/** Latency buckets in seconds: most answers take milliseconds. */
const BUCKETS = [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10]

/** Counts one answer in the request metrics (route, method, status, seconds): what `registerMetrics` returns. */
export type ObserveAnswer = (route: string, method: string, status: number, seconds: number) => void

/** Registers the metrics; answers given outside Fastify's chain (http/replay.ts) are counted through what it returns. */
export function registerMetrics(app: FastifyInstance, sources: MetricSources): ObserveAnswer {
  const registry = new Registry()
  collectDefaultMetrics({ register: registry })
  const duration = new Histogram({
    name: 'http_request_duration_seconds',
    help: 'Time from request to answer, by route, method and status.',
    labelNames: ['route', 'method', 'status_code'],
    buckets: BUCKETS,
    registers: [registry],
  })
  new Counter({
    name: 'calendar_read_cache_hits_total',
    help: 'Read-cache lookups that found what they asked for (records by id, list results and lookups, or hot answers kept as bytes).',
    labelNames: ['kind'],
    registers: [registry],
    collect() {
      this.reset()
      for (const [kind, n] of Object.entries(sources.cache()?.hits ?? {})) this.inc({ kind }, n)
    },
  })
  new Counter({
    name: 'calendar_read_cache_misses_total',
    help: 'Read-cache lookups that had to read the database.',
    labelNames: ['kind'],
    registers: [registry],
    collect() {
      this.reset()
      for (const [kind, n] of Object.entries(sources.cache()?.misses ?? {})) this.inc({ kind }, n)
    },
  })
  new Gauge({
    name: 'calendar_db_pool_connections',
    help: 'PostgreSQL pool connections: total, idle, and requests waiting for one (absent on SQLite).',
    labelNames: ['state'],
    registers: [registry],
    collect() {
      this.reset()
      const pool = sources.pool()
      if (pool === undefined) return
      this.set({ state: 'total' }, pool.total)
      this.set({ state: 'idle' }, pool.idle)
      this.set({ state: 'waiting' }, pool.waiting)
    },
  })

  new Counter({
    name: 'calendar_webhook_attempts_total',
    help: 'Webhook delivery attempts of this process, by outcome (delivered, retrying, failed: given up).',
    labelNames: ['outcome'],
    registers: [registry],
    async collect() {
      this.reset()
      for (const [outcome, n] of Object.entries((await sources.webhooks()).attempts)) this.inc({ outcome }, n)
    },
  })
  new Gauge({
    name: 'calendar_webhook_backlog',
    help: 'Webhook deliveries pending (not yet delivered nor given up), over every node.',
    registers: [registry],
    async collect() {
      this.set((await sources.webhooks()).backlog)
    },
  })

  app.addHook('onResponse', (req, reply, done) => {
    duration.observe({ route: routeLabel(req), method: req.method, status_code: String(reply.statusCode) }, reply.elapsedTime / 1000)
    done()
  })
  app.get('/metrics', { logLevel: 'warn', schema: { hide: true }, config: { rateLimit: false } }, async (_req, reply) => {
    reply.type(registry.contentType)
    return registry.metrics()
  })
  return (route, method, status, seconds) => duration.observe({ route, method, status_code: String(status) }, seconds)
}
