/**
 * When a webhook delivery that failed is tried again (CONTRACT §13): a list of growing delays, one per
 * retry, written `5s,30s,2m,10m,1h,6h,24h` (`CALENDAR_WEBHOOK_RETRY_SCHEDULE`), each spread by jitter
 * so that deliveries that failed together are not retried together. After the last, a delivery is given up.
 */
export const DEFAULT_RETRY_SCHEDULE = '5s,30s,2m,10m,1h,6h,24h'

const UNITS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 }

/** The delays in milliseconds, or undefined when `text` is not such a list (at most 20 delays, each up to 7 days). */
export function parseRetrySchedule(text: string): number[] | undefined {
  const parts = text.split(',').map((p) => p.trim())
  if (parts.length === 0 || parts.length > 20) return undefined
  const delays: number[] = []
  for (const part of parts) {
    const match = /^(\d{1,9})(ms|s|m|h|d)$/.exec(part)
    if (match === null) return undefined
    const ms = Number(match[1]) * (UNITS[match[2] ?? ''] ?? 0)
    if (ms > 7 * UNITS.d!) return undefined
    delays.push(ms)
  }
  return delays
}

/** Jitter: a delay is drawn between 80 % and 120 % of its step. */
export const JITTER = 0.2

/**
 * The delay before retry number `retry` (1 = the first retry), or undefined when the schedule has no
 * more. `random` is in [0, 1).
 */
export function retryDelay(schedule: readonly number[], retry: number, random: number): number | undefined {
  const step = schedule[retry - 1]
  if (step === undefined) return undefined
  return Math.round(step * (1 - JITTER + 2 * JITTER * random))
}
