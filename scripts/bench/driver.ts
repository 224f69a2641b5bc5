/**
 * Drives one scenario with autocannon over loopback: a smoke request, a warm-up run (discarded), then
 * the measured run. Besides autocannon's own figures (req/s average, integer-millisecond p50/p99,
 * non-2xx), it keeps every response time at full resolution (autocannon's histogram has 1 ms buckets,
 * too coarse for sub-millisecond routes) and the CPU the server used meanwhile.
 */
import { writeFileSync } from 'node:fs'
import { PerformanceObserver, monitorEventLoopDelay } from 'node:perf_hooks'
import autocannon from 'autocannon'
import { cpuPressureMicros, cpuSecondsOf, waitIdle } from './processes.js'

export interface BenchRequest {
  method: 'GET' | 'POST' | 'PATCH'
  /** Path and query, e.g. `/calendar/events/v1/events/12`. */
  path: string
  body?: string
  /** Headers of this request alone, over the scenario's (a workload's writes carry the key, its reads do not). */
  headers?: Record<string, string>
}

export type Kind = 'ceiling' | 'single' | 'page10' | 'page50' | 'write'

export interface Scenario {
  key: string
  label: string
  kind: Kind
  /** The next request; called once per request, round-robin over its own data. */
  next: () => BenchRequest
  headers?: Record<string, string>
  /** The status every answer must have … */
  expect: number
  /** … or any of these (workloads whose random pages may lie past the last one). */
  accept?: readonly number[]
}

/** Whether an answer's status is one the scenario expects. */
function expected(scenario: Scenario, status: number): boolean {
  return status === scenario.expect || (scenario.accept?.includes(status) ?? false)
}

export interface RunOptions {
  /** The servers' origins: autocannon spreads its connections over them (connection i to origin i mod n). */
  origins: readonly string[]
  connections: number
  duration: number
  warmup: number
  /** Seconds before a request counts as timed out. */
  timeout: number
  /** pids of the processes under test, for their CPU use (summed). */
  pids: readonly number[]
  /**
   * A file prefix: the measured run's every response (its end on the monotonic clock and its time), the client's
   * collections and its loop's stalls are written to `<prefix><key>.json`, to lay beside a server probe's records.
   */
  latencyPrefix?: string
}

export interface Failure {
  method: string
  path: string
  status: number
  body: string
}

export interface ScenarioResult {
  key: string
  label: string
  kind: Kind
  method: string
  connections: number
  durationS: number
  /** autocannon `requests.average` (requests per second, averaged over 1 s samples). */
  rps: number
  requests: number
  /** autocannon `latency.p50` / `latency.p99`: integer milliseconds. */
  acP50: number
  acP99: number
  /** From every response time, unrounded (ms). */
  p50: number
  p90: number
  p99: number
  max: number
  non2xx: number
  /** Answers with a status the scenario does not expect (a 404 past the last page is expected by random pages). */
  unexpected: number
  /** Socket errors and timeouts (autocannon counts a timeout as an error too). */
  errors: number
  timeouts: number
  statusCodes: Record<string, number>
  bytesPerResponse: number
  /** CPU of the processes under test during the measured run, % of one core (summed over nodes). */
  serverCpuPct: number
  /** CPU of this (client) process during the measured run, % of one core. */
  clientCpuPct: number
  /**
   * The client's own delays during the measured run (ms): its event loop's delay (p99, max, at 1 ms resolution) and
   * the time its collections paused it. A response time includes them: a tail they match is the client's.
   */
  clientLoop?: { delayP99: number; delayMax: number; gcMs: number; gcCount: number; gcMaxMs: number }
  /**
   * Share of the measured run during which some task on the machine waited for a CPU (Linux PSI):
   * near 0 on a quiet machine; high values mean other work competed for the cores.
   */
  hostCpuPressurePct: number
  /** One request before the warm-up; `timedOut` when it got no answer within the timeout. */
  smoke: { status: number; bytes: number; ms: number; timedOut: boolean; failed?: boolean }
  /** How long the server was still busy before this scenario started (left over from the previous one), ms. */
  idleBeforeMs: number
  /** Set when the server was still busy when a wait for it ran out (MAX_DRAIN_MS), before the run or after its warm-up: the ms waited in all. This run measured a busy server. */
  busyBeforeMs?: number
  /** How long the server stayed busy after the run ended (requests still queued when the client stopped), ms. */
  drainMs: number
  /** A few failing answers, replayed one at a time, when anything was not as expected. */
  failures: Failure[]
  /** req/s ÷ the bytes ceiling's req/s (issue 49's targets; the object ceiling's where a run has no bytes ceiling). */
  ratio?: number
  /** req/s ÷ the object ceiling's req/s (the benchmark's first ceiling: an object serialized per request). */
  objectRatio?: number
  /**
   * Requests per CPU-second of the server ÷ the same for the (bytes) ceiling: the ratio with contention from
   * other work on the machine taken out (what `ratio` would be if both had a whole core to themselves).
   */
  cpuRatio?: number
}

/** Enough for ~100k req/s for 20 s; beyond that, later samples are not kept (counted in `dropped`). */
const MAX_SAMPLES = 2_000_000
const samples = new Float64Array(MAX_SAMPLES)
/** Each response's end (monotonicMs), kept only when a latency file is asked for. */
const ends = new Float64Array(MAX_SAMPLES)

/** Milliseconds on the monotonic clock every process on the machine shares (CLOCK_MONOTONIC). */
const monotonicMs = (): number => Number(process.hrtime.bigint()) / 1e6

/**
 * Watches this process while a run is measured: its event loop's delay (a 1 ms timer's lateness), every
 * collection (start and length) and every turn of the loop that a 1 ms timer found over 2 ms late.
 */
function clientLoop() {
  const histogram = monitorEventLoopDelay({ resolution: 1 })
  histogram.enable()
  const offset = monotonicMs() - performance.now()
  const gcs: Array<[number, number]> = []
  const observer = new PerformanceObserver((list) => {
    for (const entry of list.getEntries()) gcs.push([entry.startTime + offset, entry.duration])
  })
  observer.observe({ entryTypes: ['gc'] })
  const stalls: Array<[number, number]> = []
  let last = monotonicMs()
  const timer = setInterval(() => {
    const now = monotonicMs()
    if (now - last > 3) stalls.push([last, now - last])
    last = now
  }, 1)
  return {
    stop() {
      clearInterval(timer)
      histogram.disable()
      observer.disconnect()
      const round = (x: number) => Math.round(x * 1000) / 1000
      return {
        gcs: gcs.map(([s, d]) => [round(s), round(d)]),
        stalls: stalls.map(([s, d]) => [round(s), round(d)]),
        summary: {
          delayP99: histogram.percentile(99) / 1e6, delayMax: histogram.max / 1e6,
          gcMs: gcs.reduce((sum, [, d]) => sum + d, 0), gcCount: gcs.length, gcMaxMs: gcs.reduce((m, [, d]) => Math.max(m, d), 0),
        },
      }
    },
  }
}

function percentile(sorted: Float64Array, p: number): number {
  if (sorted.length === 0) return NaN
  const index = Math.min(sorted.length - 1, Math.max(0, Math.ceil(p * sorted.length) - 1))
  return sorted[index] ?? NaN
}

async function send(origin: string, request: BenchRequest, headers: Record<string, string> | undefined, timeoutS: number): Promise<{ status: number; body: string; ms: number }> {
  const started = performance.now()
  const response = await fetch(`${origin}${request.path}`, {
    method: request.method,
    headers: { ...(headers ?? {}), ...(request.headers ?? {}) },
    ...(request.body !== undefined ? { body: request.body } : {}),
    signal: AbortSignal.timeout(timeoutS * 1000),
  })
  const body = await response.text()
  return { status: response.status, body, ms: performance.now() - started }
}

/** Replays up to `count` requests of the scenario one at a time and keeps the unexpected answers. */
async function probe(scenario: Scenario, origin: string, count: number, timeoutS: number): Promise<Failure[]> {
  const failures: Failure[] = []
  for (let i = 0; i < count && failures.length < 3; i++) {
    const request = scenario.next()
    try {
      const answer = await send(origin, request, scenario.headers, timeoutS)
      if (!expected(scenario, answer.status)) {
        failures.push({ method: request.method, path: request.path, status: answer.status, body: answer.body.slice(0, 400) })
      }
    } catch (error) {
      failures.push({ method: request.method, path: request.path, status: 0, body: String(error) })
    }
  }
  return failures
}

function cannon(scenario: Scenario, options: RunOptions, duration: number): autocannon.Instance {
  return autocannon({
    url: options.origins.length === 1 ? (options.origins[0] ?? '') : [...options.origins],
    connections: options.connections,
    duration,
    timeout: options.timeout,
    requests: [{
      setupRequest: (request) => {
        const next = scenario.next()
        return {
          ...request,
          method: next.method,
          path: next.path,
          headers: { ...(request.headers ?? {}), ...(scenario.headers ?? {}), ...(next.headers ?? {}) },
          ...(next.body !== undefined ? { body: next.body } : {}),
        }
      },
    }],
  })
}

/**
 * The longest wait for a server to work off abandoned requests. A synchronous server cannot drop a
 * request whose client gave up, so a slow route leaves up to `connections` × (requests sent per
 * connection) behind; the next scenario must not pay for them.
 */
const MAX_DRAIN_MS = 180_000

/** CPU seconds of all the processes under test. */
function cpuSecondsOfAll(pids: readonly number[]): number {
  return pids.reduce((sum, pid) => sum + cpuSecondsOf(pid), 0)
}

/** Waits until every process under test is idle; the milliseconds waited in all, and whether one was still busy when its wait ran out. */
async function waitAllIdle(pids: readonly number[], maxMs: number): Promise<{ waited: number; stillBusy: boolean }> {
  let waited = 0
  let stillBusy = false
  for (const pid of pids) {
    const ms = await waitIdle(pid, maxMs)
    waited += ms
    if (ms >= maxMs) stillBusy = true
  }
  return { waited, stillBusy }
}

export async function runScenario(scenario: Scenario, options: RunOptions): Promise<ScenarioResult> {
  const origin = options.origins[0] ?? ''
  const { waited: idleBeforeMs, stillBusy } = await waitAllIdle(options.pids, MAX_DRAIN_MS)
  let waitedBefore = idleBeforeMs
  let busyBefore = stillBusy
  const first = scenario.next()
  let smoke: ScenarioResult['smoke']
  try {
    const answer = await send(origin, first, scenario.headers, options.timeout)
    smoke = { status: answer.status, bytes: Buffer.byteLength(answer.body), ms: answer.ms, timedOut: false }
  } catch (error) {
    const timedOut = error instanceof Error && (error.name === 'TimeoutError' || error.name === 'AbortError')
    smoke = { status: 0, bytes: 0, ms: NaN, timedOut }
  }

  if (options.warmup > 0) {
    await cannon(scenario, options, options.warmup)
    const afterWarmup = await waitAllIdle(options.pids, MAX_DRAIN_MS)
    waitedBefore += afterWarmup.waited
    if (afterWarmup.stillBusy) busyBefore = true
  }

  let count = 0
  let dropped = 0
  const keepEnds = options.latencyPrefix !== undefined
  // Before autocannon is made: it sends its first requests at once.
  const loop = clientLoop()
  const t0 = monotonicMs()
  const instance = cannon(scenario, options, options.duration)
  instance.on('response', (_client: unknown, _status: number, _bytes: number, ms: number) => {
    if (count < MAX_SAMPLES) {
      if (keepEnds) ends[count] = monotonicMs()
      samples[count++] = ms
    } else dropped++
  })
  const serverCpu0 = cpuSecondsOfAll(options.pids)
  const clientCpu0 = process.cpuUsage()
  const pressure0 = cpuPressureMicros()
  const wall0 = performance.now()
  const result = await instance
  const wallS = (performance.now() - wall0) / 1000
  const t1 = monotonicMs()
  const client = loop.stop()
  if (options.latencyPrefix !== undefined) {
    const round = (x: number) => Math.round(x * 1000) / 1000
    writeFileSync(`${options.latencyPrefix}${scenario.key}.json`, JSON.stringify({
      key: scenario.key, t0, t1,
      ends: Array.from(ends.subarray(0, count), round), ms: Array.from(samples.subarray(0, count), round),
      gcs: client.gcs, stalls: client.stalls,
    }))
  }
  const serverCpuS = cpuSecondsOfAll(options.pids) - serverCpu0
  const clientCpu = process.cpuUsage(clientCpu0)
  const pressureS = (cpuPressureMicros() - pressure0) / 1e6
  const { waited: drainMs } = await waitAllIdle(options.pids, MAX_DRAIN_MS)

  const sorted = samples.slice(0, count).sort()
  const statusCodes: Record<string, number> = {}
  for (const [code, stat] of Object.entries(result.statusCodeStats ?? {})) statusCodes[code] = stat.count
  const unexpected = Object.entries(statusCodes).filter(([code]) => !expected(scenario, Number(code))).reduce((sum, [, n]) => sum + n, 0)
  // Timeouts alone are slowness, not failure: replay only for wrong statuses and socket errors.
  const smokeFailed = !expected(scenario, smoke.status) && !smoke.timedOut
  const failures = smokeFailed || unexpected > 0 || result.errors > result.timeouts
    ? await probe(scenario, origin, 10, options.timeout)
    : []
  if (dropped > 0) process.stderr.write(`bench: ${scenario.key}: ${dropped} response times beyond ${MAX_SAMPLES} not kept\n`)

  return {
    key: scenario.key,
    label: scenario.label,
    kind: scenario.kind,
    method: first.method,
    connections: options.connections,
    durationS: result.duration,
    rps: result.requests.average,
    requests: result.requests.total,
    acP50: result.latency.p50,
    acP99: result.latency.p99,
    p50: percentile(sorted, 0.5),
    p90: percentile(sorted, 0.9),
    p99: percentile(sorted, 0.99),
    max: sorted.length > 0 ? (sorted[sorted.length - 1] ?? NaN) : NaN,
    non2xx: result.non2xx,
    unexpected,
    errors: result.errors,
    timeouts: result.timeouts,
    statusCodes,
    bytesPerResponse: result.requests.total > 0 ? result.throughput.total / result.requests.total : 0,
    serverCpuPct: (serverCpuS / wallS) * 100,
    clientCpuPct: ((clientCpu.user + clientCpu.system) / 1e6 / wallS) * 100,
    clientLoop: client.summary,
    hostCpuPressurePct: (pressureS / wallS) * 100,
    smoke: { ...smoke, failed: smokeFailed },
    idleBeforeMs,
    ...(busyBefore ? { busyBeforeMs: waitedBefore } : {}),
    drainMs,
    failures,
  }
}
