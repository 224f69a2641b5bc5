/**
 * `modified_after` and `modified_before` on the lists of events, venues and organizers (CONTRACT §12):
 * date values as the event filters take them (§4), read as exact UTC instants (never widened to a whole
 * day: a day alone is its 00:00:00 in the site time zone), compared with `modified_utc`.
 */
import { isoWithOffset, parseFilterDate } from './dates.js'

export interface ModifiedWindow {
  modifiedAfter?: string
  modifiedBefore?: string
}

/** The window as UTC instants; `invalid` names the first value that is not a date. */
export function modifiedWindow(query: { modified_after?: string; modified_before?: string }, siteTz: string, now: Date): ModifiedWindow | { invalid: 'modified_after' | 'modified_before' } {
  const out: ModifiedWindow = {}
  for (const [name, key] of [['modified_after', 'modifiedAfter'], ['modified_before', 'modifiedBefore']] as const) {
    const value = query[name]
    if (value === undefined) continue
    const parsed = parseFilterDate(value, siteTz, now)
    if (parsed === null) return { invalid: name }
    out[key] = parsed.utc
  }
  return out
}

/**
 * The window for a list's `rest_url` (CONTRACT §3): each value sent, as the instant it stood for in site wall time
 * with its UTC offset, so that following the link later runs the same query (`now`, `today`, a DST overlap).
 */
export function modifiedShown(window: ModifiedWindow, siteTz: string): Array<[string, string]> {
  const shown: Array<[string, string]> = []
  if (window.modifiedAfter !== undefined) shown.push(['modified_after', isoWithOffset(window.modifiedAfter, siteTz)])
  if (window.modifiedBefore !== undefined) shown.push(['modified_before', isoWithOffset(window.modifiedBefore, siteTz)])
  return shown
}
