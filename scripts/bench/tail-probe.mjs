// A probe loaded into the API server to explain a tail (issue 49): `npm run bench -- … --server-node-args "--import
// ./scripts/bench/tail-probe.mjs" --latency-prefix DIR/`, with TAIL_PROBE_OUT=DIR/probe in the environment. It keeps,
// on the monotonic clock the client's latency file uses, each request's server time (`http.server.request.start` to
// `response.finish`: after Node parsed it, so the wait in the socket before is not in it), every collection, every
// turn of the event loop a 1 ms timer found over 3 ms late with the main thread's CPU in it (a turn that was work,
// or the process waiting for a core), each thread's CPU every 500 ms; written at exit to <TAIL_PROBE_OUT>-<pid>.json.
// scripts/bench/tail-attribution.mjs lays them beside the client's.
import dc from 'node:diagnostics_channel'
import { readFileSync, readdirSync, writeFileSync } from 'node:fs'
import { PerformanceObserver, performance } from 'node:perf_hooks'
import process from 'node:process'
import { setInterval } from 'node:timers'

const now = () => Number(process.hrtime.bigint()) / 1e6
const offset = now() - performance.now()
const MAX = 3_000_000
const starts = new Float64Array(MAX)
const ends = new Float64Array(MAX)
let requests = 0
const started = Symbol('tailProbeStart')
dc.subscribe('http.server.request.start', ({ request }) => { request[started] = now() })
dc.subscribe('http.server.response.finish', ({ request }) => {
  const start = request[started]
  if (start !== undefined && requests < MAX) {
    starts[requests] = start
    ends[requests++] = now()
  }
})

const gcs = []
new PerformanceObserver((list) => {
  for (const entry of list.getEntries()) gcs.push([entry.startTime + offset, entry.duration, entry.detail?.kind ?? 0])
}).observe({ entryTypes: ['gc'] })

const stalls = []
let last = now()
let lastCpu = process.threadCpuUsage()
setInterval(() => {
  const t = now()
  const cpu = process.threadCpuUsage()
  if (t - last > 3) stalls.push([last, t - last, (cpu.user - lastCpu.user + cpu.system - lastCpu.system) / 1000])
  last = t
  lastCpu = cpu
}, 1).unref()

const threads = []
function sampleThreads() {
  const row = { t: now(), th: {} }
  for (const id of readdirSync('/proc/self/task')) {
    try {
      const stat = readFileSync(`/proc/self/task/${id}/stat`, 'utf8')
      const close = stat.lastIndexOf(')')
      const fields = stat.slice(close + 2).split(' ')
      // utime + stime in clock ticks (100 a second): ms.
      row.th[`${stat.slice(stat.indexOf('(') + 1, close)}#${id}`] = (Number(fields[11]) + Number(fields[12])) * 10
    } catch {
      // The thread ended between the listing and the read.
    }
  }
  threads.push(row)
}
setInterval(sampleThreads, 500).unref()

process.on('exit', () => {
  sampleThreads()
  const round = (x) => Math.round(x * 1000) / 1000
  writeFileSync(`${process.env.TAIL_PROBE_OUT ?? '/tmp/tail-probe'}-${process.pid}.json`, JSON.stringify({
    rs: Array.from(starts.subarray(0, requests), round), re: Array.from(ends.subarray(0, requests), round), gcs, stalls, threads,
  }))
})
