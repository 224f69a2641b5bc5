/**
 * Markdown tables and the targets of the issue, checked against the figures of one run.
 */
import type { ScenarioResult } from './driver.js'

export interface TargetCheck {
  target: string
  subject: string
  value: number
  limit: number
  unit: string
  /** null: not applicable to this run (e.g. the p99 target is stated for 100,000 events at 10 connections). */
  pass: boolean | null
  note?: string
}

const fixed = (value: number, digits: number): string => (Number.isFinite(value) ? value.toFixed(digits) : 'n/a')

export function formatMs(value: number): string {
  if (!Number.isFinite(value)) return 'n/a'
  return value < 10 ? value.toFixed(2) : value < 100 ? value.toFixed(1) : value.toFixed(0)
}

/** A ratio as the tables show it: three digits under 0.1, so that 0.049 is not shown as the 0.05 it missed. */
const ratioText = (value: number | undefined): string => (value === undefined ? '' : fixed(value, value < 0.1 ? 3 : 2))

/** p99 ÷ p50 of a result: the tail against the middle (issue 49: at most 5 on every workload). */
export const tailRatio = (r: Pick<ScenarioResult, 'p50' | 'p99'>): number => r.p99 / r.p50

export function scenarioTable(results: readonly ScenarioResult[]): string {
  const lines = [
    '| route | req/s | × bytes ceiling | × object ceiling | p50 ms | p99 ms | p99 ÷ p50 | server CPU ms/req | × bytes ceiling per CPU-s | autocannon p50/p99 ms | non-2xx | errors (timeouts) | server CPU | client CPU | host CPU pressure | bytes/resp |',
    '|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|',
  ]
  for (const r of results) {
    lines.push(`| ${r.label}${r.busyBeforeMs !== undefined ? ` ${BUSY_MARK}` : ''} | ${fixed(r.rps, 0)} | ${ratioText(r.ratio)} | ${ratioText(r.objectRatio)} | `
      + `${formatMs(r.p50)} | ${formatMs(r.p99)} | ${fixed(tailRatio(r), 1)} | ${formatMs(cpuMsPerRequest(r))} | ${ratioText(r.cpuRatio)} | ${r.acP50} / ${r.acP99} | `
      + `${r.non2xx} | ${r.errors} (${r.timeouts}) | ${fixed(r.serverCpuPct, 0)} % | `
      + `${fixed(r.clientCpuPct, 0)} % | ${fixed(r.hostCpuPressurePct, 0)} % | ${fixed(r.bytesPerResponse, 0)} |`)
  }
  return lines.join('\n')
}

export function targetLines(checks: readonly TargetCheck[]): string {
  return checks.map((c) => {
    const verdict = c.pass === null ? 'n/a ' : c.pass ? 'PASS' : 'FAIL'
    const value = c.unit === '×' ? fixed(c.value, c.value < 0.1 ? 3 : 2) : c.unit === 'ms' ? formatMs(c.value) : c.unit === '× p50' ? fixed(c.value, 2) : fixed(c.value, 0)
    return `- ${verdict} ${c.target}: ${c.subject} = ${value} ${c.unit} (limit ${c.limit} ${c.unit})${c.note === undefined ? '' : `; ${c.note}`}`
  }).join('\n')
}

const isRead = (r: ScenarioResult): boolean => r.kind === 'single' || r.kind === 'page10' || r.kind === 'page50'

export const FAILED_ANSWERS = 'every answer as expected (2xx; 404 past the last random page), no socket errors'
/** Marks a route measured while the server was still busy (the wait for it to be idle ran out). */
export const BUSY_MARK = '(measured while the server was still busy)'
const IDLE_BEFORE = 'measured on an idle server (it was still busy when the wait for it ran out: its figures are not the route\'s)'
const TIMEOUTS = 'no request timed out'

/** Failed answers (non-2xx or socket errors) and timeouts of each result, as checks. */
function answerChecks(results: readonly ScenarioResult[], suffix: string): TargetCheck[] {
  const checks: TargetCheck[] = []
  for (const r of results) {
    const failed = r.unexpected + (r.errors - r.timeouts)
    const smokeFailed = r.smoke.failed ?? (!r.smoke.timedOut && (r.smoke.status < 200 || r.smoke.status > 299))
    if (failed > 0 || smokeFailed) {
      const first = r.failures[0]
      checks.push({
        target: FAILED_ANSWERS, subject: `${r.label}${suffix}`, value: failed, limit: 0, unit: 'failed', pass: false,
        ...(first === undefined ? {} : { note: `e.g. ${first.method} ${first.path} → ${first.status} ${first.body.slice(0, 160)}` }),
      })
    }
    if (r.busyBeforeMs !== undefined) checks.push({ target: IDLE_BEFORE, subject: `${r.label}${suffix}`, value: r.busyBeforeMs / 1000, limit: 0, unit: 's waited', pass: false })
    const timedOut = r.timeouts + (r.smoke.timedOut ? 1 : 0)
    if (timedOut > 0) checks.push({ target: TIMEOUTS, subject: `${r.label}${suffix}`, value: timedOut, limit: 0, unit: 'timed out', pass: false })
  }
  return checks
}

const cpuNote = (r: ScenarioResult): string => `per CPU-s ${fixed(r.cpuRatio ?? NaN, 2)} ×`

/** Server CPU milliseconds per request: the cost of a request, much less sensitive to other work on the machine than latency. */
export const cpuMsPerRequest = (r: ScenarioResult): number => (r.serverCpuPct / 100 / r.rps) * 1000

/**
 * The targets of the realistic workloads (issue 49): the ratio to the bytes ceiling of the same run, no
 * absolute times. Every request differs, but for the two repeated URLs (one single read, one list of 10:
 * a front page, a widget, a probe). They replace the older repeated-URL targets below for these scenarios.
 */
export const REALISTIC_TARGETS: Readonly<Record<string, { ratio: number }>> = {
  'event-by-id-repeated': { ratio: 0.5 },
  'events-list-10': { ratio: 0.2 },
  'random-by-id': { ratio: 0.30 },
  'random-filter': { ratio: 0.10 },
  'random-search': { ratio: 0.10 },
  'mixed-90-10': { ratio: 0.10 },
  'event-create': { ratio: 0.04 },
}

/**
 * The realistic target of the read only a database with series has (`--series`): issue 45 asks for 0.8 × what
 * its partner without series gets (`random-by-id`, ≥ 0.30 ×); `--series-compare` measures the ratio itself.
 */
const SERIES_READ_TARGETS: Readonly<Record<string, { ratio: number }>> = { 'random-by-occurrence': { ratio: 0.24 } }

/** Latency discipline (issue 49): p99 at most this many times p50 on every realistic workload. */
export const MAX_TAIL_RATIO = 5

/** The keys of the realistic workloads, which `--realistic` runs (in the order the bench defines its scenarios). */
export const REALISTIC_KEYS: readonly string[] = Object.keys(REALISTIC_TARGETS)

/** The memory limit of issue 49: anonymous memory (RssAnon + RssShmem) at 1,000,000 events, MB. */
export const MAX_ANON_MB = 250

/** The memory check: the server's peak anonymous memory, against the limit where the run is at the size it is stated for. */
export function memoryTarget(peakAnonKb: number, events: number): TargetCheck {
  const stated = events >= 1_000_000
  return {
    target: `anonymous memory (RssAnon + RssShmem) ≤ ${MAX_ANON_MB} MB at 1,000,000 events`, subject: 'API server, peak while measured',
    value: peakAnonKb / 1024, limit: MAX_ANON_MB, unit: 'MB', pass: stated ? peakAnonKb / 1024 <= MAX_ANON_MB : null,
    ...(stated ? {} : { note: `this run: ${events.toLocaleString('en')} events` }),
  }
}

/** The per-run targets: ratios to the ceiling, p99 of reads, no failed answers, start-up time. */
export function runTargets(results: readonly ScenarioResult[], context: { events: number; connections: number; startupMs: number }): TargetCheck[] {
  const checks: TargetCheck[] = []
  for (const r of results) {
    if (r.ratio === undefined) continue
    const realistic = REALISTIC_TARGETS[r.key] ?? SERIES_READ_TARGETS[r.key]
    if (realistic !== undefined) {
      checks.push({ target: `realistic: ≥ ${realistic.ratio} × bytes ceiling`, subject: r.label, value: r.ratio, limit: realistic.ratio, unit: '×', pass: r.ratio >= realistic.ratio, note: cpuNote(r) })
      const tail = tailRatio(r)
      checks.push({
        target: `realistic: p99 ≤ ${MAX_TAIL_RATIO} × p50`, subject: r.label, value: tail, limit: MAX_TAIL_RATIO, unit: '× p50',
        pass: tail <= MAX_TAIL_RATIO, note: `p50 ${formatMs(r.p50)} ms, p99 ${formatMs(r.p99)} ms`,
      })
      continue
    }
    if (r.kind === 'single') checks.push({ target: 'single-record read ≥ 0.5 × ceiling', subject: r.label, value: r.ratio, limit: 0.5, unit: '×', pass: r.ratio >= 0.5, note: cpuNote(r) })
    if (r.kind === 'page10') checks.push({ target: 'page of 10 ≥ 0.25 × ceiling', subject: r.label, value: r.ratio, limit: 0.25, unit: '×', pass: r.ratio >= 0.25, note: cpuNote(r) })
  }
  const stated = context.events === 100_000 && context.connections === 10
  // No absolute time for the realistic workloads (issue 49): their tail is held to their own p50.
  for (const r of results.filter((r) => isRead(r) && REALISTIC_TARGETS[r.key] === undefined)) {
    checks.push({
      target: 'read p99 < 10 ms (100,000 events, 10 connections)',
      subject: r.label,
      value: r.p99,
      limit: 10,
      unit: 'ms',
      pass: stated ? r.p99 < 10 : null,
      ...(stated ? {} : { note: `this run: ${context.events} events, ${context.connections} connections` }),
    })
  }
  checks.push(...answerChecks(results, ''))
  checks.push({ target: 'process start to first answer < 1 s', subject: 'API server', value: context.startupMs, limit: 1000, unit: 'ms', pass: context.startupMs < 1000 })
  return checks
}

export interface ScalePoint {
  events: number
  startupMs: number
  peakRssKb: number
  loadSeconds: number
  dbBytes: number
  results: ScenarioResult[]
}

export function scaleTable(points: readonly ScalePoint[]): string {
  const at = (name: string) => points.map((p) => `${name} @ ${p.events.toLocaleString('en')}`)
  const header = ['route', ...at('p50 ms'), ...at('p99 ms'), ...at('req/s'), ...at('server CPU ms/req')]
  if (points.length >= 2) header.push('p50 largest ÷ smallest', 'CPU ms/req largest ÷ smallest')
  const lines = [`| ${header.join(' | ')} |`, `|---|${header.slice(1).map(() => '---:').join('|')}|`]
  const keys = points[0]?.results.map((r) => r.key) ?? []
  for (const key of keys) {
    const rows = points.map((p) => p.results.find((r) => r.key === key))
    const label = rows[0]?.label ?? key
    const cells = [
      label,
      ...rows.map((r) => formatMs(r?.p50 ?? NaN)),
      ...rows.map((r) => formatMs(r?.p99 ?? NaN)),
      ...rows.map((r) => fixed(r?.rps ?? NaN, 0)),
      ...rows.map((r) => (r === undefined ? 'n/a' : formatMs(cpuMsPerRequest(r)))),
    ]
    const first = rows[0]
    const last = rows[rows.length - 1]
    if (points.length >= 2) {
      cells.push(fixed((last?.p50 ?? NaN) / (first?.p50 ?? NaN), 2))
      cells.push(first === undefined || last === undefined ? 'n/a' : fixed(cpuMsPerRequest(last) / cpuMsPerRequest(first), 2))
    }
    lines.push(`| ${cells.join(' | ')} |`)
  }
  lines.push('', '| events | peak RSS (VmHWM) MB | start to first answer ms | load s | database MB |', '|---:|---:|---:|---:|---:|')
  for (const p of points) {
    lines.push(`| ${p.events.toLocaleString('en')} | ${fixed(p.peakRssKb / 1024, 0)} | ${fixed(p.startupMs, 0)} | ${fixed(p.loadSeconds, 1)} | ${fixed(p.dbBytes / 1048576, 0)} |`)
  }
  return lines.join('\n')
}

/** The scale targets: p50 at the largest size within 1.5× of the smallest; RSS under 250 MB at 1,000,000. */
export function scaleTargets(points: readonly ScalePoint[]): TargetCheck[] {
  const checks: TargetCheck[] = []
  const smallest = points[0]
  const largest = points[points.length - 1]
  if (smallest !== undefined && largest !== undefined && points.length >= 2) {
    const stated = smallest.events === 1000 && largest.events === 1_000_000
    for (const r of largest.results) {
      const base = smallest.results.find((b) => b.key === r.key)
      if (base === undefined) continue
      const ratio = r.p50 / base.p50
      checks.push({
        target: `p50 @ ${largest.events.toLocaleString('en')} within 1.5 × p50 @ ${smallest.events.toLocaleString('en')}`,
        subject: r.label,
        value: ratio,
        limit: 1.5,
        unit: '×',
        pass: stated ? ratio <= 1.5 : null,
        note: Number.isFinite(r.p50)
          ? `${formatMs(base.p50)} → ${formatMs(r.p50)} ms; server CPU per request ${formatMs(cpuMsPerRequest(base))} → ${formatMs(cpuMsPerRequest(r))} ms`
          : `${formatMs(base.p50)} ms → no answer within the timeout`,
      })
    }
  }
  for (const p of points) {
    if (p.events === 1_000_000) {
      checks.push({ target: 'peak RSS < 250 MB at 1,000,000 events', subject: 'API server VmHWM', value: p.peakRssKb / 1024, limit: 250, unit: 'MB', pass: p.peakRssKb / 1024 < 250 })
    }
    checks.push({ target: 'process start to first answer < 1 s', subject: `API server, ${p.events.toLocaleString('en')} events`, value: p.startupMs, limit: 1000, unit: 'ms', pass: p.startupMs < 1000 })
  }
  for (const p of points) checks.push(...answerChecks(p.results, ` @ ${p.events.toLocaleString('en')}`))
  return checks
}

/** Issue 45: with series, each random read at least this share of its ratio to the ceiling without series. */
export const SERIES_MIN_RATIO = 0.8

/**
 * The workloads of `--series-compare` (issue 45) and the workload each is compared with on the database without
 * series: an occurrence of a series against an event by id (a database without series has no occurrence to read).
 */
export const SERIES_PARTNERS: Readonly<Record<string, string>> = {
  'random-by-id': 'random-by-id',
  'random-filter': 'random-filter',
  'random-search': 'random-search',
  'random-by-occurrence': 'random-by-id',
}

/** One row of the comparison: a workload with series against its partner without, means over the rounds. */
export interface SeriesComparison {
  key: string
  label: string
  partner: string
  /** × bytes ceiling (req/s ÷ the ceiling's) and × bytes ceiling per CPU-s, without and with series. */
  without: { ratio: number; cpuRatio: number; cpuMs: number; rounds: number }
  with: { ratio: number; cpuRatio: number; cpuMs: number; rounds: number }
  /** with ÷ without: of × ceiling, of × per CPU-s; and the range of the per-round ratios of × ceiling. */
  ratio: number
  cpuRatio: number
  roundRatios: number[]
}

const mean = (values: readonly number[]): number => values.reduce((sum, v) => sum + v, 0) / values.length

/** The comparison rows from the rated results of both databases (several rounds each, in the same order). */
export function seriesComparisons(without: readonly ScenarioResult[], withSeries: readonly ScenarioResult[]): SeriesComparison[] {
  const rows: SeriesComparison[] = []
  for (const [key, partner] of Object.entries(SERIES_PARTNERS)) {
    const a = without.filter((r) => r.key === partner)
    const b = withSeries.filter((r) => r.key === key)
    if (a.length === 0 || b.length === 0) continue
    const side = (runs: readonly ScenarioResult[]) => ({
      ratio: mean(runs.map((r) => r.ratio ?? NaN)), cpuRatio: mean(runs.map((r) => r.cpuRatio ?? NaN)), cpuMs: mean(runs.map(cpuMsPerRequest)), rounds: runs.length,
    })
    const w = side(a)
    const s = side(b)
    rows.push({
      key, label: (b[0] as ScenarioResult).label, partner, without: w, with: s, ratio: s.ratio / w.ratio, cpuRatio: s.cpuRatio / w.cpuRatio,
      roundRatios: b.map((r, i) => (r.ratio ?? NaN) / (a[Math.min(i, a.length - 1)]?.ratio ?? NaN)),
    })
  }
  return rows
}

export function seriesTable(rows: readonly SeriesComparison[]): string {
  const verdict = (value: number) => (value >= SERIES_MIN_RATIO ? 'met' : 'missed')
  const lines = [
    `| workload (with series) | without series: partner | × bytes ceiling without | × with | with ÷ without (rounds) | target | met? | × per CPU-s without | × per CPU-s with | with ÷ without | met? | server CPU ms/req without → with |`,
    '|---|---|---:|---:|---:|---|---|---:|---:|---:|---|---:|',
  ]
  for (const r of rows) {
    lines.push(`| ${r.label} | ${r.partner} | ${ratioText(r.without.ratio)} | ${ratioText(r.with.ratio)} | ${fixed(r.ratio, 2)} (${r.roundRatios.map((x) => fixed(x, 2)).join(', ')}) | ≥ ${SERIES_MIN_RATIO} | ${verdict(r.ratio)} | `
      + `${ratioText(r.without.cpuRatio)} | ${ratioText(r.with.cpuRatio)} | ${fixed(r.cpuRatio, 2)} | ${verdict(r.cpuRatio)} | ${formatMs(r.without.cpuMs)} → ${formatMs(r.with.cpuMs)} |`)
  }
  return lines.join('\n')
}

/** The checks of `--series-compare`: each ratio against the target (req/s and per CPU-s), no failed answers. */
export function seriesTargets(rows: readonly SeriesComparison[], without: readonly ScenarioResult[], withSeries: readonly ScenarioResult[]): TargetCheck[] {
  const checks: TargetCheck[] = []
  for (const r of rows) {
    checks.push({
      target: `issue 45: with series ≥ ${SERIES_MIN_RATIO} × the ratio to the bytes ceiling without`, subject: `${r.label} (against ${r.partner})`, value: r.ratio,
      limit: SERIES_MIN_RATIO, unit: '×', pass: r.ratio >= SERIES_MIN_RATIO, note: `per CPU-s ${fixed(r.cpuRatio, 2)} ×`,
    })
  }
  checks.push(...answerChecks(without, ' (without series)'), ...answerChecks(withSeries, ' (with series)'))
  return checks
}
