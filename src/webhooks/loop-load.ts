/**
 * How busy this process's event loop has been lately, and with what: over the last window of at least
 * WINDOW_MS, the share of time it spent running code rather than waiting (Node's event loop
 * utilization) and how many requests came in. The webhook dispatcher gives way to requests when they
 * keep the loop nearly always busy; a loop kept busy by the dispatcher alone is not saturated.
 */
import { performance, type EventLoopUtilization } from 'node:perf_hooks'

const WINDOW_MS = 100

/** A loop busier than this, while requests come in, is saturated. */
export const SATURATED_LOOP = 0.5

export interface LoopLoad {
  /** 0 to 1. */
  utilization: number
  /** Requests that came in during the window. */
  requests: number
}

/** A reader of the last completed window; `requests` counts the requests received so far. */
export function eventLoopLoad(requests: () => number, now: () => number = () => performance.now()): () => LoopLoad {
  let from: EventLoopUtilization = performance.eventLoopUtilization()
  let fromAt = now()
  let fromRequests = requests()
  let last: LoopLoad = { utilization: 0, requests: 0 }
  return () => {
    const at = now()
    if (at - fromAt >= WINDOW_MS) {
      const current = performance.eventLoopUtilization()
      last = { utilization: performance.eventLoopUtilization(current, from).utilization, requests: requests() - fromRequests }
      from = current
      fromAt = at
      fromRequests = requests()
    }
    return last
  }
}

/** Whether a window's load is requests keeping the loop nearly always busy. */
export function saturatedByRequests(load: LoopLoad): boolean {
  return load.requests > 0 && load.utilization > SATURATED_LOOP
}
