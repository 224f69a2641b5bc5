/**
 * Health checks for orchestrators and load balancers (CONTRACT §16), outside the namespace and outside
 * the spec: `GET /healthz` answers 200 while the process runs (liveness: nothing is asked of the
 * database, so a slow database never gets the process restarted); `GET /readyz` answers 200 when every
 * readiness check passes (the database answers, the migrations are applied) and 503 naming the checks
 * that failed otherwise, so traffic goes elsewhere. Probes come every few seconds: their lines are
 * logged at warn only (never the info line of every request).
 */
import type { FastifyInstance } from 'fastify'

export type CheckResult = 'ok' | 'failed'

/** Each readiness check by name; one that throws or is slower than the timeout has failed. */
export type ReadinessChecks = Record<string, () => Promise<boolean>>

const CHECK_TIMEOUT_MS = 2000

export function registerHealth(app: FastifyInstance, checks: ReadinessChecks): void {
  const quiet = { logLevel: 'warn' as const, schema: { hide: true }, config: { rateLimit: false } }
  app.get('/healthz', quiet, async (_req, reply) => {
    reply.header('Cache-Control', 'no-store')
    return { status: 'ok' }
  })
  app.get('/readyz', quiet, async (_req, reply) => {
    const results: Record<string, CheckResult> = {}
    await Promise.all(Object.entries(checks).map(async ([name, check]) => {
      results[name] = (await withTimeout(check())) ? 'ok' : 'failed'
    }))
    const ready = Object.values(results).every((r) => r === 'ok')
    reply.code(ready ? 200 : 503).header('Cache-Control', 'no-store')
    return { status: ready ? 'ok' : 'unavailable', checks: results }
  })
}

async function withTimeout(check: Promise<boolean>): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined
  const late = new Promise<boolean>((resolve) => {
    timer = setTimeout(() => resolve(false), CHECK_TIMEOUT_MS)
    timer.unref()
  })
  try {
    return await Promise.race([check.catch(() => false), late])
  } finally {
    clearTimeout(timer)
  }
}
