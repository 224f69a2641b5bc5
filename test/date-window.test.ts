/**
 * The default window of a list (no date filter: the site's today … two years ahead) is remembered for the
 * site day it was made on (lib/date-window.ts): every answer must be the one worked out afresh, also for
 * instants a millisecond either side of a local midnight, at a DST change at midnight (Santiago), in zones
 * of odd offsets, and when the zone changes between two lists.
 */
import t from 'tap'
import fc from 'fast-check'
import { DATE_FILTERS, dateWindow, type DateWindow } from '../src/lib/date-window.js'
import { addDays, addYears, endOfDayUtc, isoWithOffset, parseFilterDate, requireDateTimeMs, startOfDayUtc } from '../src/lib/dates.js'

const ZONES = ['UTC', 'America/New_York', 'Europe/Berlin', 'America/Santiago', 'Australia/Lord_Howe', 'Asia/Kathmandu', 'Pacific/Chatham', 'UTC+5:45', 'UTC-9.5']

/** The default window worked out afresh, without what `dateWindow` remembers. */
function fresh(tz: string, now: Date): DateWindow {
  const today = parseFilterDate('today', tz, now)
  if (today === null) throw new Error('no today')
  const start = startOfDayUtc(today.localDay, tz)
  const end = endOfDayUtc(addYears(today.localDay, 2), tz)
  return { bounds: { start_date: start, end_date: end }, shown: [['start_date', isoWithOffset(start, tz)], ['end_date', isoWithOffset(end, tz)]] }
}

t.test('the remembered default window is the one worked out afresh, at every instant near a local midnight', async (t) => {
  let checked = 0
  // An instant: a zone, a day from 2020 to 2030, and an offset from that day's local midnight (a millisecond,
  // a second, an hour either side, or anywhere in the day).
  const instant = fc.record({
    zone: fc.constantFrom(...ZONES),
    day: fc.integer({ min: 0, max: 11 * 366 }),
    offset: fc.oneof(fc.constantFrom(-1, 0, 1, -1000, 999, 1000, -3_600_000, 3_600_000), fc.integer({ min: -86_400_000, max: 2 * 86_400_000 })),
  })
  await fc.assert(fc.asyncProperty(fc.array(instant, { minLength: 1, maxLength: 12 }), async (instants) => {
    for (const { zone, day, offset } of instants) {
      const localDay = addDays('2020-01-01', day)
      const now = new Date(requireDateTimeMs(startOfDayUtc(localDay, zone), 'test') + offset)
      const got = dateWindow({}, zone, now)
      const want = fresh(zone, now)
      checked++
      if (JSON.stringify(got) !== JSON.stringify(want)) {
        t.fail(`${zone} at ${now.toISOString()}`, { got, want })
        return false
      }
    }
    return true
  }), { seed: 20261127, numRuns: 400 })
  t.ok(checked > 1000, `${checked} windows agreed`)
})

t.test('one list a millisecond before a local midnight and the next one at it, in every zone, on DST days too', async (t) => {
  // 2026-09-06: Santiago's clocks go from 00:00 to 01:00 (the day begins at 01:00); 2026-04-05 and 2026-10-04:
  // Lord Howe's half-hour changes; 2026-03-29 and 2026-10-25: Berlin's; 2026-03-08 and 2026-11-01: New York's.
  const days = ['2026-09-05', '2026-09-06', '2026-04-04', '2026-04-05', '2026-10-03', '2026-10-04', '2026-03-28', '2026-03-29', '2026-10-24', '2026-10-25', '2026-03-07', '2026-03-08', '2026-10-31', '2026-11-01', '2028-02-28', '2028-02-29']
  for (const zone of ZONES) {
    for (const day of days) {
      const midnight = requireDateTimeMs(startOfDayUtc(day, zone), 'test')
      for (const offset of [-1, 0, 1, -1000, 999, -1, 0]) {
        const now = new Date(midnight + offset)
        t.same(dateWindow({}, zone, now), fresh(zone, now), `${zone} at ${now.toISOString()}`)
      }
    }
  }
})

t.test('a caller changing the window it got does not change the next one', async (t) => {
  const now = new Date('2026-11-27T12:00:00Z')
  const first = dateWindow({}, 'Europe/Berlin', now) as DateWindow
  first.bounds.start_date = 'changed'
  first.shown.push(['x', 'y'])
  const [pair] = first.shown
  if (pair !== undefined) pair[1] = 'changed'
  t.same(dateWindow({}, 'Europe/Berlin', now), fresh('Europe/Berlin', now))
})

t.test('a window with any date filter is worked out from it, whatever was remembered', async (t) => {
  const now = new Date('2026-11-27T12:00:00Z')
  dateWindow({}, 'UTC', now)
  for (const name of DATE_FILTERS) {
    const got = dateWindow({ [name]: '2027-01-01' }, 'UTC', now) as DateWindow
    t.ok(got.bounds[name] !== undefined, `${name} is in force`)
  }
  t.same(dateWindow({ include: [1] }, 'UTC', now), { bounds: {}, shown: [] }, 'include lifts the window')
})
