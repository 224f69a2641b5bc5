/**
 * `modified_after` and `modified_before` on the lists of events, venues and organizers (CONTRACT §12):
 * date values as the event filters take them (§4), read as exact UTC instants (never widened to a whole
 * day: a day alone is its 00:00:00 in the site time zone), compared with `modified_utc`.
 */
import { parseFilterDate } from './dates.js'

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
