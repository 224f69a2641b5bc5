/**
 * Echoes tap's TAP output and ends it with the plain line CI reads: `N passed, N failed, N skipped`.
 * Usage: `set -o pipefail; tap 2>&1 | node --import tsx scripts/tap-summary.ts`.
 */
import { createInterface } from 'node:readline'

let summary: Record<string, number> | undefined
for await (const line of createInterface({ input: process.stdin })) {
  process.stdout.write(`${line}\n`)
  const match = /^# (\{ total: .*\})$/.exec(line)
  if (match?.[1] !== undefined) {
    summary = Object.fromEntries([...match[1].matchAll(/(\w+): (\d+)/g)].map(([, key, value]) => [key, Number(value)]))
  }
}
const pass = summary?.pass ?? 0
const fail = summary === undefined ? 1 : summary.fail ?? 0
const skipped = (summary?.skip ?? 0) + (summary?.todo ?? 0)
process.stdout.write(`${pass} passed, ${fail} failed, ${skipped} skipped\n`)
