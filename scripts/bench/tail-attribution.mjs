// What a workload's tail lay beside (issue 49): `node scripts/bench/tail-attribution.mjs <probe file> <latency prefix>
// <workload>…` reads the server probe's file (scripts/bench/tail-probe.mjs) and the client's `<prefix><workload>.json`
// (bench `--latency-prefix`) and prints, for the measured window: the client's p50/p99 (every response, unrounded),
// the server's own time a request, its collections, its loop's late turns (and the main thread's CPU in them), the
// client's collections and late turns, each thread's share of a core, and for the responses over the client's p99
// which of these overlapped them.
import { readFileSync } from 'node:fs'
import process from 'node:process'

const [probeFile, prefix, ...keys] = process.argv.slice(2)
if (probeFile === undefined || prefix === undefined) {
  process.stderr.write('usage: node scripts/bench/tail-attribution.mjs <probe file> <latency prefix> <workload>…\n')
  process.exit(2)
}
const probe = JSON.parse(readFileSync(probeFile, 'utf8'))
const quantile = (values, q) => {
  if (values.length === 0) return NaN
  const sorted = Float64Array.from(values).sort()
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]
}
const f = (x, digits = 2) => (Number.isFinite(x) ? x.toFixed(digits) : '-')
const within = (spans, a, b) => spans.filter(([start, length]) => start < b && start + length > a)
const total = (spans) => spans.reduce((sum, [, length]) => sum + length, 0)
const longest = (spans) => spans.reduce((max, [, length]) => Math.max(max, length), 0)
const out = (line) => process.stdout.write(`${line}\n`)

for (const key of keys) {
  const client = JSON.parse(readFileSync(`${prefix}${key}.json`, 'utf8'))
  const { t0, t1 } = client
  const wall = t1 - t0
  const p50 = quantile(client.ms, 0.5)
  const p99 = quantile(client.ms, 0.99)
  const server = []
  for (let i = 0; i < probe.rs.length; i++) if (probe.rs[i] >= t0 && probe.re[i] <= t1) server.push(probe.re[i] - probe.rs[i])
  const gcs = within(probe.gcs, t0, t1)
  // PerformanceObserver's kinds: 1 minor (scavenge), 2 major, 4 incremental, 8 weak callbacks.
  const minor = gcs.filter(([, , kind]) => kind === 1)
  const major = gcs.filter(([, , kind]) => kind !== 1)
  const late = within(probe.stalls, t0, t1)
  const worked = late.filter(([, , cpu]) => cpu > 3)
  const counts = { slow: 0, serverGc: 0, serverLate: 0, clientGc: 0, clientLate: 0, none: 0 }
  for (let i = 0; i < client.ms.length; i++) {
    if (client.ms[i] <= p99) continue
    counts.slow++
    const b = client.ends[i]
    const a = b - client.ms[i]
    const seen = [within(probe.gcs, a, b), within(probe.stalls, a, b), within(client.gcs, a, b), within(client.stalls, a, b)].map((s) => s.length > 0)
    if (seen[0]) counts.serverGc++
    if (seen[1]) counts.serverLate++
    if (seen[2]) counts.clientGc++
    if (seen[3]) counts.clientLate++
    if (!seen.some(Boolean)) counts.none++
  }
  const before = probe.threads.filter((row) => row.t <= t0).at(-1)
  const after = probe.threads.find((row) => row.t >= t1)
  const shares = {}
  if (before !== undefined && after !== undefined) {
    for (const [name, ms] of Object.entries(after.th)) {
      const group = name.replace(/#\d+$/, '')
      shares[group] = (shares[group] ?? 0) + ms - (before.th[name] ?? 0)
    }
  }
  out(`\n== ${key}: ${client.ms.length} responses in ${f(wall / 1000, 1)} s`)
  out(`client p50 ${f(p50)} p99 ${f(p99)} p99.9 ${f(quantile(client.ms, 0.999))} ms, p99 / p50 ${f(p99 / p50, 1)}`)
  out(`server time a request (parsed to finished) p50 ${f(quantile(server, 0.5), 3)} p99 ${f(quantile(server, 0.99), 3)} ms (${server.length})`)
  out(`server GC ${f(total(gcs) / wall * 100, 1)} % of the wall: ${minor.length} scavenges (mean ${f(total(minor) / minor.length)}, max ${f(longest(minor))} ms), `
    + `${major.length} mark-compact steps (${f(total(major), 0)} ms, max ${f(longest(major))})`)
  out(`server loop turns > 3 ms late: ${late.length} (${f(total(late), 0)} ms), of them with > 3 ms of main-thread CPU ${worked.length} `
    + `(${f(worked.reduce((sum, s) => sum + s[2], 0), 0)} ms CPU); client: ${client.gcs.length} collections (${f(total(client.gcs), 0)} ms), `
    + `${client.stalls.length} late turns (${f(total(client.stalls), 0)} ms, max ${f(longest(client.stalls))})`)
  out(`over the client's p99 (${counts.slow}): beside a server collection ${counts.serverGc}, a late server turn ${counts.serverLate}, `
    + `a client collection ${counts.clientGc}, a late client turn ${counts.clientLate}, none of them ${counts.none}`)
  if (after !== undefined && before !== undefined) {
    out(`threads, % of a core: ${Object.entries(shares).filter(([, ms]) => ms > 0).map(([name, ms]) => `${name} ${f(ms / (after.t - before.t) * 100, 0)}`).join(', ')}`)
  }
}
