/**
 * Echoes tap's TAP output and counts it: `N passed, N failed, N skipped`.
 *
 *   tap 2>&1 | node --import tsx scripts/tap-summary.ts                  ends with that line
 *   tap 2>&1 | node --import tsx scripts/tap-summary.ts --counts FILE     writes it to FILE instead (JSON),
 *                                                                         for scripts/test-ci.sh to label and sum
 *
 * A test file that fails without a failing assertion (killed by a signal, a non-zero exit, a timeout)
 * does not appear in tap's assertion counts (`# { total: 29, pass: 29 }` after a file died of SIGABRT):
 * each such file counts as one failure here, and is named.
 */
import { writeFileSync } from 'node:fs'
import { createInterface } from 'node:readline'

export interface LegCounts {
  passed: number
  failed: number
  skipped: number
  /** Files that failed without a failing assertion of their own. */
  broken: string[]
  /** Percent of lines covered, when the run measured coverage. */
  lines?: number
}

const countsArg = process.argv.indexOf('--counts')
const countsFile = countsArg === -1 ? undefined : process.argv[countsArg + 1]

let summary: Record<string, number> | undefined
let failedInside = false
let lines: number | undefined
const broken: string[] = []
for await (const line of createInterface({ input: process.stdin })) {
  process.stdout.write(`${line}\n`)
  const total = /^# (\{ total: .*\})$/.exec(line)
  if (total?.[1] !== undefined) {
    summary = Object.fromEntries([...total[1].matchAll(/(\w+): (\d+)/g)].map(([, key, value]) => [key, Number(value)]))
    continue
  }
  const covered = /^Lines\s*:\s*([\d.]+)%/.exec(line)
  if (covered?.[1] !== undefined) lines = Number(covered[1])
  // An indented `not ok` is a failing assertion inside the current file (unless it is a todo or a skip).
  if (/^\s+not ok \d+/.test(line) && !/# (TODO|SKIP)\b/i.test(line)) failedInside = true
  // A test point at the top level closes a file.
  const point = /^(not ok|ok) \d+ - (\S+)/.exec(line)
  if (point !== null) {
    if (point[1] === 'not ok' && !failedInside && point[2] !== undefined) broken.push(point[2])
    failedInside = false
  }
}
const counts: LegCounts = {
  passed: summary?.pass ?? 0,
  // No summary at all: tap itself did not finish.
  failed: (summary === undefined ? 1 : summary.fail ?? 0) + broken.length,
  skipped: (summary?.skip ?? 0) + (summary?.todo ?? 0),
  broken,
  ...(lines !== undefined ? { lines } : {}),
}
if (countsFile !== undefined) {
  writeFileSync(countsFile, `${JSON.stringify(counts)}\n`)
} else {
  const named = broken.length > 0 ? ` (failed without a failing assertion: ${broken.join(', ')})` : ''
  process.stdout.write(`${counts.passed} passed, ${counts.failed} failed, ${counts.skipped} skipped${named}\n`)
}
