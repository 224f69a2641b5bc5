/**
 * The part of autocannon 9's programmatic API the benchmark uses (the package ships no types).
 */
declare module 'autocannon' {
  import type { EventEmitter } from 'node:events'

  namespace autocannon {
    interface Request {
      method?: string
      path?: string
      headers?: Record<string, string>
      body?: string | Buffer
      /** Called before every request; returns the request to send (a falsy value restarts the sequence). */
      setupRequest?: (request: Request, context: Record<string, unknown>) => Request | null | undefined
    }

    interface Options {
      /** One target, or several: connection i goes to url[i mod n]. */
      url: string | string[]
      connections?: number
      /** Seconds. */
      duration?: number
      amount?: number
      /** Seconds per request before it counts as a timeout. */
      timeout?: number
      pipelining?: number
      method?: string
      headers?: Record<string, string>
      body?: string
      requests?: Request[]
      bailout?: number
    }

    /** Requests are per second, latency in integer milliseconds, throughput in bytes per second. */
    interface Histogram {
      average: number
      mean: number
      stddev: number
      min: number
      max: number
      total: number
      sent?: number
      p0_001: number
      p0_01: number
      p0_1: number
      p1: number
      p2_5: number
      p10: number
      p25: number
      p50: number
      p75: number
      p90: number
      p97_5: number
      p99: number
      p99_9: number
      p99_99: number
      p99_999: number
    }

    interface Result {
      url: string
      connections: number
      duration: number
      start: Date
      finish: Date
      errors: number
      timeouts: number
      mismatches: number
      non2xx: number
      resets: number
      '1xx': number
      '2xx': number
      '3xx': number
      '4xx': number
      '5xx': number
      statusCodeStats: Record<string, { count: number }>
      requests: Histogram
      latency: Histogram
      throughput: Histogram
    }

    interface Instance extends EventEmitter, PromiseLike<Result> {
      stop(): void
    }
  }

  function autocannon(options: autocannon.Options): autocannon.Instance
  export = autocannon
}
