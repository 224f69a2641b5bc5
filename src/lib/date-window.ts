/**
 * The date window of an event list (CONTRACT §4): which date filters bound it, in UTC. Filters are
 * read as site wall time (or at their offset) and, unless `strict_dates`, widened to whole site days;
 * without a relative filter the window defaults to today … two years ahead. `include` lifts the window.
 */
import { addYears, endOfDayUtc, isoWithOffset, parseFilterDate, requireDateTimeMs, startOfDayUtc } from './dates.js'

export const DATE_FILTERS = ['start_date', 'end_date', 'starts_before', 'starts_after', 'ends_before', 'ends_after'] as const
export type DateFilter = (typeof DATE_FILTERS)[number]

export type WindowQuery = Partial<Record<DateFilter, string>> & { include?: number[]; strict_dates?: boolean }

export interface DateWindow {
  /** Each filter in force, as a UTC instant. */
  bounds: Partial<Record<DateFilter, string>>
  /**
   * The date filters in force (the defaults included), for the list's `rest_url`: instants as site wall time
   * with their UTC offset (`2027-11-07T01:00:00-05:00`), so that following the link runs the same query later
   * (`now`, `today`) and in a DST overlap, where a wall time alone names two instants.
   */
  shown: Array<[string, string]>
}

/**
 * The default window (no date filter) last made: it depends on the site's day only, so it holds while
 * `now` is in `[from, to)`, the UTC instants (ms) of that day in `tz` (most lists ask for it; working it
 * out reads the zone's offsets several times).
 */
let lastDefault: { tz: string; from: number; to: number; window: DateWindow } | undefined

/** A copy of `window` for a caller (who may change it). */
const copied = (window: DateWindow): DateWindow => ({ bounds: { ...window.bounds }, shown: window.shown.map(([name, value]) => [name, value]) })

/** The window of a list query; `invalid` names the first filter that is not a date. */
export function dateWindow(query: WindowQuery, siteTz: string, now: Date): DateWindow | { invalid: DateFilter } {
  const bounds: DateWindow['bounds'] = {}
  if (query.include !== undefined && query.include.length > 0) return { bounds, shown: [] }
  const defaults = DATE_FILTERS.every((name) => query[name] === undefined)
  const at = now.getTime()
  if (defaults && lastDefault !== undefined && lastDefault.tz === siteTz && lastDefault.from <= at && at < lastDefault.to) return copied(lastDefault.window)
  const strict = query.strict_dates ?? false
  for (const name of DATE_FILTERS) {
    const value = query[name]
    if (value === undefined) continue
    const parsed = parseFilterDate(value, siteTz, now)
    if (parsed === null) return { invalid: name }
    bounds[name] = strict ? parsed.utc : name === 'start_date' ? startOfDayUtc(parsed.localDay, siteTz) : endOfDayUtc(parsed.localDay, siteTz)
  }
  const relative = (['starts_before', 'starts_after', 'ends_before', 'ends_after'] as const).some((n) => query[n] !== undefined)
  if (!relative) {
    const today = parseFilterDate('today', siteTz, now)
    if (today !== null) {
      bounds.start_date ??= startOfDayUtc(today.localDay, siteTz)
      bounds.end_date ??= endOfDayUtc(addYears(today.localDay, 2), siteTz)
      if (defaults) {
        const window = withShown(bounds, siteTz)
        // The day's last whole second and one more: the next day's first instant.
        const to = requireDateTimeMs(endOfDayUtc(today.localDay, siteTz), 'dateWindow') + 1000
        lastDefault = { tz: siteTz, from: requireDateTimeMs(bounds.start_date, 'dateWindow'), to, window }
        return copied(window)
      }
    }
  }
  return withShown(bounds, siteTz)
}

/**
 * The window of `bounds`, each filter in force shown as site wall time with its offset: `now` or a day sent to
 * `starts_after` names another instant tomorrow, the instant it stood for does not.
 */
function withShown(bounds: DateWindow['bounds'], siteTz: string): DateWindow {
  const shown: Array<[string, string]> = []
  for (const name of DATE_FILTERS) {
    const instant = bounds[name]
    if (instant !== undefined) shown.push([name, isoWithOffset(instant, siteTz)])
  }
  return { bounds, shown }
}
