/**
 * `occurrencesInWindow` (src/lib/recurrence.ts), what the horizon job adds: for unbounded series (and UNTIL
 * ones) in several zones, across DST changes, with rdates and exdates, every window cut from a series equals
 * the same slice of the whole expansion (`expandSeries` then `occurrencesBetween`), windows that start or end
 * exactly on an occurrence included; and a window years into a daily series past the 3,500 limit still gives
 * its occurrences.
 */
import t from 'tap'
import { wallToUtc } from '../src/lib/dates.js'
import { checkRecurrence, expandSeries, occurrencesBetween, occurrencesInWindow, type Occurrence, type Recurrence, type RecurrenceInput, type SeriesStart } from '../src/lib/recurrence.js'

function series(timezone: string, start: string, minutes: number, allDay = false): SeriesStart {
  const wallStart = allDay ? `${start} 00:00:00` : start
  const end = allDay ? `${start} 23:59:59` : new Date(Date.parse(`${start.replace(' ', 'T')}Z`) + minutes * 60_000).toISOString().slice(0, 19).replace('T', ' ')
  return { timezone, allDay, start: wallStart, end, startUtc: wallToUtc(wallStart, timezone), endUtc: wallToUtc(end, timezone) }
}

function checked(input: RecurrenceInput, allDay: boolean): Recurrence {
  const c = checkRecurrence(input, allDay)
  if ('refused' in c) throw new Error(c.refused)
  return c
}

function whole(s: SeriesStart, r: Recurrence, horizon: string): Occurrence[] {
  const all = expandSeries(s, r, horizon)
  if ('refused' in all) throw new Error(all.refused)
  return all
}

const CASES: Array<[string, SeriesStart, RecurrenceInput]> = [
  ['daily 02:30 in Berlin (gaps skipped)', series('Europe/Berlin', '2026-01-10 02:30:00', 90), { rule: 'FREQ=DAILY;INTERVAL=3', exdates: ['2026-04-02 02:30:00'], rdates: ['2027-03-28 02:30:00'] }],
  ['weekly every other Monday and Friday in New York', series('America/New_York', '2026-01-05 01:30:00', 60), { rule: 'FREQ=WEEKLY;INTERVAL=2;BYDAY=MO,FR;WKST=SU', rdates: ['2026-11-01 01:30:00'] }],
  ['monthly last Friday in Zurich', series('Europe/Zurich', '2026-01-30 19:00:00', 120), { rule: 'FREQ=MONTHLY;BYDAY=-1FR', exdates: ['2026-12-25 19:00:00'] }],
  ['monthly on the 31st, every third month, Lord Howe', series('Australia/Lord_Howe', '2026-01-31 02:15:00', 30), { rule: 'FREQ=MONTHLY;INTERVAL=3;BYMONTHDAY=31' }],
  ['yearly all-day festival in Vienna with a cancelled year', series('Europe/Vienna', '2026-07-18', 0, true), { rule: 'FREQ=YEARLY;BYMONTH=7;BYDAY=3SA', exdates: ['2028-07-15'] }],
  ['daily all-day in Chatham', series('Pacific/Chatham', '2026-03-30', 0, true), { rule: 'FREQ=DAILY;INTERVAL=5' }],
  ['weekdays at a fixed offset, UNTIL', series('UTC+5:30', '2026-02-02 09:00:00', 45), { rule: 'FREQ=WEEKLY;BYDAY=MO,TU,WE,TH,FR;UNTIL=20281231T235959', exdates: ['2026-02-04 09:00:00'] }],
  ['last Sunday 02:30 in Berlin, BYSETPOS', series('Europe/Berlin', '2026-01-25 02:30:00', 60), { rule: 'FREQ=MONTHLY;BYDAY=SU;BYSETPOS=-1' }],
  ['rdates only', series('Europe/Berlin', '2026-01-25 10:00:00', 60), { rule: null, rdates: ['2027-01-01 10:00:00', '2026-06-01 12:00:00'] }],
]

const HORIZON = '2031-06-15 12:00:00'

t.test('every window equals the same slice of the whole expansion', async (t) => {
  for (const [name, s, input] of CASES) {
    const r = checked(input, s.allDay)
    const all = whole(s, r, HORIZON)
    t.ok(all.length > 2, `${name}: a series of ${all.length}`)
    // Windows: fixed spans from the start, and each bounded exactly by occurrences' own starts.
    const bounds = [s.startUtc, '2026-03-29 00:00:00', '2026-03-29 01:00:00', '2026-10-25 00:30:00', '2026-11-01 06:30:00',
      '2027-01-01 00:00:00', '2028-02-29 12:00:00', '2029-07-01 00:00:00', HORIZON]
    for (const o of all.filter((_, i) => i % 7 === 3)) bounds.push(o.startUtc)
    bounds.sort()
    for (let i = 0; i + 1 < bounds.length; i += 1) {
      const [from, to] = [bounds[i] as string, bounds[i + 1] as string]
      t.strictSame(occurrencesInWindow(s, r, from, to), occurrencesBetween(all, from, to), `${name}: [${from}, ${to})`)
    }
    t.strictSame(occurrencesInWindow(s, r, '2020-01-01 00:00:00', HORIZON), all, `${name}: the whole series in one window`)
  }
})

t.test('a window past the 3,500 limit of a write still has its occurrences', async (t) => {
  const s = series('Europe/Berlin', '2026-01-01 09:00:00', 60)
  const r = checked({ rule: 'FREQ=DAILY' }, false)
  const long = expandSeries(s, r, '2036-01-01 00:00:00')
  t.match(long, { refused: 'tooManyOccurrences' }, 'the write would be refused')
  const week = occurrencesInWindow(s, r, '2035-03-24 00:00:00', '2035-03-31 00:00:00')
  t.strictSame(week.map((o) => o.id), ['20350324T080000Z', '20350325T070000Z', '20350326T070000Z', '20350327T070000Z', '20350328T070000Z', '20350329T070000Z', '20350330T070000Z'])
  t.strictSame(week.map((o) => o.start.slice(11)), Array(7).fill('09:00:00'), 'wall times kept across the change')
})

t.test('an empty window, and a rule with COUNT is refused', async (t) => {
  const s = series('Europe/Berlin', '2026-01-01 09:00:00', 60)
  t.strictSame(occurrencesInWindow(s, checked({ rule: 'FREQ=DAILY' }, false), '2027-01-01 00:00:00', '2027-01-01 00:00:00'), [])
  t.strictSame(occurrencesInWindow(s, checked({ rule: 'FREQ=DAILY;UNTIL=20260110' }, false), '2027-01-01 00:00:00', '2028-01-01 00:00:00'), [], 'past UNTIL')
  t.throws(() => occurrencesInWindow(s, checked({ rule: 'FREQ=DAILY;COUNT=5' }, false), '2026-01-01 00:00:00', '2027-01-01 00:00:00'), /COUNT/)
})
