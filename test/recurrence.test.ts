/**
 * Recurring series (CONTRACT §17, src/lib/recurrence.ts) by example: the DST rules (a start in a gap
 * skipped and not counted, an overlap's first instant, Lord Howe's half hour), all-day series, the BY
 * parts people use, rdates and exdates, the limits and the horizon, occurrence ids, and every refusal.
 * test/recurrence-oracle.test.ts compares random series with a second expansion.
 */
import t from 'tap'
import { wallToUtc } from '../src/lib/dates.js'
import {
  MAX_OCCURRENCES,
  checkRecurrence,
  expandSeries,
  formatOccurrenceId,
  occurrencesBetween,
  parseOccurrenceId,
  type Occurrence,
  type RecurrenceInput,
  type SeriesStart,
} from '../src/lib/recurrence.js'

const HORIZON = '2031-01-01 00:00:00'

/** A timed series starting at a wall time, lasting `minutes`. */
function timed(timezone: string, start: string, minutes = 60): SeriesStart {
  const startUtc = wallToUtc(start, timezone)
  const endUtc = new Date(Date.parse(`${startUtc.replace(' ', 'T')}Z`) + minutes * 60_000).toISOString().slice(0, 19).replace('T', ' ')
  const end = new Date(Date.parse(`${start.replace(' ', 'T')}Z`) + minutes * 60_000).toISOString().slice(0, 19).replace('T', ' ')
  return { timezone, allDay: false, start, end, startUtc, endUtc }
}

/** An all-day series over `days` days from `day`. */
function allDay(timezone: string, day: string, days = 1): SeriesStart {
  const last = new Date(Date.parse(`${day}T00:00:00Z`) + (days - 1) * 86_400_000).toISOString().slice(0, 10)
  const start = `${day} 00:00:00`
  const end = `${last} 23:59:59`
  return { timezone, allDay: true, start, end, startUtc: wallToUtc(start, timezone), endUtc: wallToUtc(end, timezone) }
}

function expand(series: SeriesStart, input: RecurrenceInput, horizon = HORIZON): Occurrence[] | string {
  const checked = checkRecurrence(input, series.allDay)
  if ('refused' in checked) return checked.refused
  const result = expandSeries(series, checked, horizon)
  return 'refused' in result ? result.refused : result
}

function occurrences(series: SeriesStart, input: RecurrenceInput, horizon = HORIZON): Occurrence[] {
  const result = expand(series, input, horizon)
  if (typeof result === 'string') throw new Error(`refused: ${result}`)
  return result
}

const starts = (list: Occurrence[]): string[] => list.map((o) => o.start)
const utcStarts = (list: Occurrence[]): string[] => list.map((o) => o.startUtc)

t.test('a daily start in a spring-forward gap is skipped and not counted (Europe/Berlin)', async (t) => {
  const list = occurrences(timed('Europe/Berlin', '2026-03-27 02:30:00'), { rule: 'FREQ=DAILY;COUNT=5' })
  t.strictSame(starts(list), ['2026-03-27 02:30:00', '2026-03-28 02:30:00', '2026-03-30 02:30:00', '2026-03-31 02:30:00', '2026-04-01 02:30:00'])
  t.strictSame(utcStarts(list).slice(1, 3), ['2026-03-28 01:30:00', '2026-03-30 00:30:00'])
  t.equal(list[2]?.id, '20260330T003000Z')
})

t.test('a start in a fall-back overlap is the first of its two instants (America/New_York)', async (t) => {
  const list = occurrences(timed('America/New_York', '2026-10-31 01:30:00', 90), { rule: 'FREQ=DAILY;COUNT=3' })
  t.strictSame(utcStarts(list), ['2026-10-31 05:30:00', '2026-11-01 05:30:00', '2026-11-02 06:30:00'])
  // Each lasts as long as the first in real time: 90 minutes after the first 01:30 is 02:00 after the change.
  t.equal(list[1]?.end, '2026-11-01 02:00:00')
  t.equal(list[1]?.endUtc, '2026-11-01 07:00:00')
})

t.test("Lord Howe's half-hour change: 02:15 is skipped in spring, the first 01:45 taken in autumn", async (t) => {
  const spring = occurrences(timed('Australia/Lord_Howe', '2026-10-03 02:15:00'), { rule: 'FREQ=DAILY;COUNT=3' })
  t.strictSame(starts(spring), ['2026-10-03 02:15:00', '2026-10-05 02:15:00', '2026-10-06 02:15:00'])
  t.strictSame(utcStarts(spring), ['2026-10-02 15:45:00', '2026-10-04 15:15:00', '2026-10-05 15:15:00'])
  const autumn = occurrences(timed('Australia/Lord_Howe', '2027-04-03 01:45:00'), { rule: 'FREQ=DAILY;COUNT=2' })
  // 01:45 on 2027-04-04 happens at +11:00 and again at +10:30: the first.
  t.strictSame(utcStarts(autumn), ['2027-04-02 14:45:00', '2027-04-03 14:45:00'])
})

t.test('a weekly series keeps its wall time across DST, and UNTIL in UTC bounds it', async (t) => {
  const list = occurrences(timed('Europe/Berlin', '2026-03-17 19:00:00'), { rule: 'FREQ=WEEKLY;BYDAY=TU;UNTIL=20260407T170000Z' })
  t.strictSame(starts(list), ['2026-03-17 19:00:00', '2026-03-24 19:00:00', '2026-03-31 19:00:00', '2026-04-07 19:00:00'])
  t.strictSame(utcStarts(list).slice(-2), ['2026-03-31 17:00:00', '2026-04-07 17:00:00'])
})

t.test('UNTIL as a local wall time and as a local day', async (t) => {
  const series = timed('America/New_York', '2026-01-05 18:00:00')
  t.equal(occurrences(series, { rule: 'FREQ=DAILY;UNTIL=20260107T180000' }).length, 3)
  t.equal(occurrences(series, { rule: 'FREQ=DAILY;UNTIL=20260107T175959' }).length, 2)
  t.equal(occurrences(series, { rule: 'FREQ=DAILY;UNTIL=20260107' }).length, 3)
})

t.test('an all-day series: days, ids YYYYMMDD, each day whole in the zone, across DST', async (t) => {
  const list = occurrences(allDay('Europe/Berlin', '2026-03-28', 2), { rule: 'FREQ=DAILY;COUNT=3' })
  t.strictSame(list.map((o) => o.id), ['20260328', '20260329', '20260330'])
  t.strictSame(list[1], {
    id: '20260329',
    start: '2026-03-29 00:00:00',
    end: '2026-03-30 23:59:59',
    startUtc: '2026-03-28 23:00:00',
    endUtc: '2026-03-30 21:59:59',
  })
  t.strictSame(parseOccurrenceId('20260329', true), { day: '2026-03-29' })
})

t.test('monthly on the last Friday (BYDAY=FR;BYSETPOS=-1) and with an ordinal (-1FR)', async (t) => {
  const series = timed('Europe/Berlin', '2026-01-30 19:00:00')
  const bySetPos = occurrences(series, { rule: 'FREQ=MONTHLY;BYDAY=FR;BYSETPOS=-1;COUNT=6' })
  t.strictSame(starts(bySetPos).map((s) => s.slice(0, 10)), ['2026-01-30', '2026-02-27', '2026-03-27', '2026-04-24', '2026-05-29', '2026-06-26'])
  t.strictSame(starts(occurrences(series, { rule: 'FREQ=MONTHLY;BYDAY=-1FR;COUNT=6' })), starts(bySetPos))
})

t.test('the windows the rule is read in do not cut a period: BYSETPOS over whole months', async (t) => {
  // The first window ends on 2027-03-06, after the first Friday of March and before its last (dateutil agrees).
  const list = occurrences(timed('UTC', '2026-01-30 10:00:00'), { rule: 'FREQ=MONTHLY;BYDAY=FR;BYSETPOS=-1;COUNT=20' })
  t.strictSame(starts(list).slice(12).map((s) => s.slice(0, 10)), ['2027-01-29', '2027-02-26', '2027-03-26', '2027-04-30', '2027-05-28', '2027-06-25', '2027-07-30', '2027-08-27'])
})

t.test('BYSETPOS picks among wall times before a gap drops one: no last Sunday at 02:30 in March', async (t) => {
  const list = occurrences(timed('Europe/Berlin', '2026-01-25 02:30:00'), { rule: 'FREQ=MONTHLY;BYDAY=SU;BYSETPOS=-1;COUNT=4' })
  t.strictSame(starts(list).map((s) => s.slice(0, 10)), ['2026-01-25', '2026-02-22', '2026-04-26', '2026-05-31'])
})

t.test('BYMONTHDAY=-1 is the last day of each month; the second Sunday of May yearly', async (t) => {
  const last = occurrences(timed('UTC', '2026-01-31 12:00:00'), { rule: 'FREQ=MONTHLY;BYMONTHDAY=-1;COUNT=4' })
  t.strictSame(starts(last).map((s) => s.slice(0, 10)), ['2026-01-31', '2026-02-28', '2026-03-31', '2026-04-30'])
  const mothers = occurrences(timed('America/New_York', '2026-05-10 10:00:00'), { rule: 'FREQ=YEARLY;BYMONTH=5;BYDAY=2SU;COUNT=3' })
  t.strictSame(starts(mothers).map((s) => s.slice(0, 10)), ['2026-05-10', '2027-05-09', '2028-05-14'])
})

t.test('a yearly series on February 29 occurs in leap years only', async (t) => {
  const list = occurrences(timed('Asia/Kathmandu', '2024-02-29 09:00:00'), { rule: 'FREQ=YEARLY;COUNT=3' })
  t.strictSame(starts(list).map((s) => s.slice(0, 10)), ['2024-02-29', '2028-02-29', '2032-02-29'])
  t.equal(list[0]?.id, '20240229T031500Z')
})

t.test('a yearly BYDAY ordinal counts weekdays of its own year: a 53rd Monday only where a year has 53 (as dateutil)', async (t) => {
  // 2027 and 2028 have 52 Mondays, 2029 and 2035 have 53 (dateutil: DTSTART, 2029-12-31, 2035-12-31).
  const list = occurrences(timed('UTC', '2027-01-04 10:00:00'), { rule: 'FREQ=YEARLY;BYDAY=53MO;COUNT=3' }, '2040-01-01 00:00:00')
  t.strictSame(starts(list).map((s) => s.slice(0, 10)), ['2027-01-04', '2029-12-31', '2035-12-31'])
  const last = occurrences(timed('UTC', '2027-01-04 10:00:00'), { rule: 'FREQ=YEARLY;BYDAY=-53MO;COUNT=3' }, '2040-01-01 00:00:00')
  t.strictSame(starts(last).map((s) => s.slice(0, 10)), ['2027-01-04', '2029-01-01', '2035-01-01'])
  const first = occurrences(timed('UTC', '2027-01-04 10:00:00'), { rule: 'FREQ=YEARLY;BYDAY=1MO,-1FR;COUNT=4' }, '2040-01-01 00:00:00')
  t.strictSame(starts(first).map((s) => s.slice(0, 10)), ['2027-01-04', '2027-12-31', '2028-01-03', '2028-12-29'])
})

t.test('an rdate in a DST gap is skipped like the rule\'s occurrences; one before the start is refused', async (t) => {
  const series = timed('Europe/Berlin', '2027-01-04 10:00:00')
  t.strictSame(starts(occurrences(series, { rule: null, rdates: ['2027-03-28 02:30:00', '2027-03-29 02:30:00'] })),
    ['2027-01-04 10:00:00', '2027-03-29 02:30:00'])
  t.equal(expand(series, { rule: 'FREQ=DAILY;COUNT=2', rdates: ['2027-01-03 10:00:00'] }), 'rdateBeforeStart')
  // An all-day rdate is a day: never in a gap.
  t.strictSame(starts(occurrences(allDay('America/Santiago', '2026-08-01'), { rule: null, rdates: ['2026-09-06'] })),
    ['2026-08-01 00:00:00', '2026-09-06 00:00:00'])
})

t.test('DTSTART is the first occurrence and counts, even off the rule', async (t) => {
  const list = occurrences(timed('UTC', '2026-01-05 10:00:00'), { rule: 'FREQ=WEEKLY;BYDAY=WE;COUNT=3' })
  t.strictSame(starts(list).map((s) => s.slice(0, 10)), ['2026-01-05', '2026-01-07', '2026-01-14'])
})

t.test('rdates add, exdates remove by wall time, an exdate matching nothing changes nothing', async (t) => {
  const series = timed('Pacific/Chatham', '2026-06-01 09:00:00')
  const list = occurrences(series, {
    rule: 'FREQ=DAILY;COUNT=3',
    rdates: ['2026-06-10 14:00:00', '2026-06-02 09:00:00'],
    exdates: ['2026-06-03 09:00:00', '2026-06-20 09:00:00'],
  })
  t.strictSame(starts(list), ['2026-06-01 09:00:00', '2026-06-02 09:00:00', '2026-06-10 14:00:00'])
  // Chatham: +12:45 in June.
  t.equal(list[2]?.startUtc, '2026-06-10 01:15:00')
  t.strictSame(starts(occurrences(series, { rule: null, rdates: ['2026-06-05 09:00:00'] })), ['2026-06-01 09:00:00', '2026-06-05 09:00:00'])
})

t.test('a rule without COUNT or UNTIL stops at the horizon; occurrencesBetween takes a window', async (t) => {
  const list = occurrences(timed('UTC', '2026-01-01 08:00:00'), { rule: 'FREQ=WEEKLY' }, '2026-03-01 00:00:00')
  t.equal(list.length, 9)
  t.equal(list.at(-1)?.start, '2026-02-26 08:00:00')
  t.strictSame(starts(occurrencesBetween(list, '2026-02-05 08:00:00', '2026-02-19 08:00:00')), ['2026-02-05 08:00:00', '2026-02-12 08:00:00'])
})

t.test('rule parts are returned upper-cased, as sent otherwise', async (t) => {
  const checked = checkRecurrence({ rule: 'freq=weekly;byday=tu,th;count=10' }, false)
  t.notOk('refused' in checked)
  if (!('refused' in checked)) t.strictSame([checked.rule, checked.rdates, checked.exdates], ['FREQ=WEEKLY;BYDAY=TU,TH;COUNT=10', [], []])
})

t.test('occurrence ids: formatted from the original start, parsed strictly', async (t) => {
  t.equal(formatOccurrenceId('2026-03-30 00:30:00', '2026-03-30 02:30:00', false), '20260330T003000Z')
  t.equal(formatOccurrenceId('2026-03-29 22:00:00', '2026-03-30 00:00:00', true), '20260330')
  t.strictSame(parseOccurrenceId('20260330T003000Z', false), { startUtc: '2026-03-30 00:30:00' })
  for (const bad of ['20260330T003000', '20260230T003000Z', '2026-03-30', '20260330T246000Z', '20260330', ' 20260330T003000Z']) {
    t.equal(parseOccurrenceId(bad, false), null, bad)
  }
  for (const bad of ['20260230', '20260330T003000Z', '2026033']) t.equal(parseOccurrenceId(bad, true), null, bad)
})

t.test('every refusal is named', async (t) => {
  const series = timed('Europe/Berlin', '2026-01-05 10:00:00')
  const cases: Array<[RecurrenceInput, string]> = [
    [{ rule: 'FREQ=HOURLY' }, 'finerFrequency'],
    [{ rule: 'FREQ=MINUTELY;COUNT=2' }, 'finerFrequency'],
    [{ rule: 'FREQ=SECONDLY' }, 'finerFrequency'],
    [{ rule: 'FREQ=FORTNIGHTLY' }, 'malformedValue'],
    [{ rule: 'FREQ=DAILY;BYHOUR=9' }, 'unsupportedPart'],
    [{ rule: 'FREQ=DAILY;BYMINUTE=0' }, 'unsupportedPart'],
    [{ rule: 'FREQ=DAILY;BYSECOND=0' }, 'unsupportedPart'],
    [{ rule: 'FREQ=YEARLY;BYWEEKNO=20' }, 'unsupportedPart'],
    [{ rule: 'FREQ=YEARLY;BYYEARDAY=100' }, 'unsupportedPart'],
    [{ rule: 'FREQ=DAILY;COUNT=2;UNTIL=20260110T000000Z' }, 'countWithUntil'],
    [{ rule: 'FREQ=DAILY;X-NAME=1' }, 'unknownPart'],
    [{ rule: 'FREQ=DAILY;COLOR=RED' }, 'unknownPart'],
    [{ rule: 'FREQ=DAILY;COUNT=2;COUNT=3' }, 'repeatedPart'],
    [{ rule: 'FREQ=DAILY;FREQ=WEEKLY' }, 'repeatedPart'],
    [{ rule: 'COUNT=3' }, 'missingFrequency'],
    [{ rule: '' }, 'malformedRule'],
    [{ rule: 'FREQ=DAILY;' }, 'malformedRule'],
    [{ rule: 'RRULE:FREQ=DAILY' }, 'malformedRule'],
    [{ rule: 'FREQ = DAILY' }, 'malformedRule'],
    [{ rule: 'FREQ=DAILY;COUNT=0' }, 'malformedValue'],
    [{ rule: 'FREQ=DAILY;COUNT=-1' }, 'malformedValue'],
    [{ rule: 'FREQ=DAILY;COUNT=1.5' }, 'malformedValue'],
    [{ rule: 'FREQ=DAILY;INTERVAL=0' }, 'malformedValue'],
    [{ rule: 'FREQ=DAILY;INTERVAL=10001' }, 'malformedValue'],
    [{ rule: 'FREQ=DAILY;UNTIL=20260230T000000Z' }, 'malformedValue'],
    [{ rule: 'FREQ=DAILY;UNTIL=2026-03-01' }, 'malformedValue'],
    [{ rule: 'FREQ=WEEKLY;BYDAY=XX' }, 'malformedValue'],
    [{ rule: 'FREQ=WEEKLY;BYDAY=' }, 'malformedValue'],
    [{ rule: 'FREQ=WEEKLY;BYDAY=1MO' }, 'partNotForFrequency'],
    [{ rule: 'FREQ=DAILY;BYDAY=-1FR' }, 'partNotForFrequency'],
    [{ rule: 'FREQ=MONTHLY;BYDAY=6MO' }, 'malformedValue'],
    [{ rule: 'FREQ=MONTHLY;BYDAY=0MO' }, 'malformedValue'],
    [{ rule: 'FREQ=YEARLY;BYDAY=54MO' }, 'malformedValue'],
    [{ rule: 'FREQ=MONTHLY;BYMONTHDAY=0' }, 'malformedValue'],
    [{ rule: 'FREQ=MONTHLY;BYMONTHDAY=32' }, 'malformedValue'],
    [{ rule: 'FREQ=WEEKLY;BYMONTHDAY=1' }, 'partNotForFrequency'],
    [{ rule: 'FREQ=YEARLY;BYMONTH=13' }, 'malformedValue'],
    [{ rule: 'FREQ=MONTHLY;BYSETPOS=1' }, 'bySetPosAlone'],
    [{ rule: 'FREQ=MONTHLY;BYDAY=FR;BYSETPOS=0' }, 'malformedValue'],
    [{ rule: 'FREQ=WEEKLY;WKST=XX' }, 'malformedValue'],
    [{ rule: `FREQ=DAILY;COUNT=${MAX_OCCURRENCES + 1}` }, 'tooManyOccurrences'],
    [{ rule: 'FREQ=DAILY;UNTIL=20400101T000000Z' }, 'tooManyOccurrences'],
    [{ rule: 'FREQ=DAILY;UNTIL=20260104T235959Z' }, 'untilBeforeStart'],
    [{ rule: 'FREQ=DAILY;UNTIL=20260104' }, 'untilBeforeStart'],
    [{ rule: 'FREQ=DAILY;COUNT=2', exdates: ['2026-01-05 10:00:00', '2026-01-06 10:00:00'] }, 'noOccurrences'],
    [{ rule: null, exdates: ['2026-01-05 10:00:00'] }, 'noOccurrences'],
    [{ rule: 'FREQ=DAILY;BYMONTH=2;BYMONTHDAY=30;COUNT=3' }, 'tooSparse'],
    [{ rule: 'FREQ=DAILY', rdates: ['2026-01-05'] }, 'malformedDate'],
    [{ rule: 'FREQ=DAILY', exdates: ['2026-01-05T10:00:00'] }, 'malformedDate'],
    [{ rule: 'FREQ=DAILY', exdates: ['2026-02-30 10:00:00'] }, 'malformedDate'],
    [{ rule: 'FREQ=DAILY', rdates: Array.from({ length: 600 }, () => '2026-02-01 10:00:00'), exdates: Array.from({ length: 401 }, () => '2026-02-02 10:00:00') }, 'tooManyDates'],
  ]
  for (const [input, reason] of cases) t.equal(expand(series, input), reason, JSON.stringify(input).slice(0, 120))
  t.equal(expand(allDay('UTC', '2026-01-05'), { rule: 'FREQ=DAILY', rdates: ['2026-01-05 00:00:00'] }), 'malformedDate')
  // At the limits, not past them.
  t.equal((occurrences(series, { rule: `FREQ=DAILY;COUNT=${MAX_OCCURRENCES}` }) as Occurrence[]).length, MAX_OCCURRENCES)
  const dates = Array.from({ length: 500 }, (_, i) => new Date(Date.UTC(2027, 0, 1) + i * 86_400_000).toISOString().slice(0, 10) + ' 10:00:00')
  t.equal(occurrences(series, { rule: null, rdates: dates, exdates: dates }).length, 1)
  // Exdates can bring a rule back under the limit.
  const extra = Array.from({ length: 10 }, (_, i) => new Date(Date.UTC(2026, 0, 6) + i * 86_400_000).toISOString().slice(0, 10) + ' 10:00:00')
  t.equal(occurrences(series, { rule: 'FREQ=DAILY', rdates: [], exdates: extra }, '2035-08-16 00:00:00').length, MAX_OCCURRENCES)
  t.equal(expand(series, { rule: 'FREQ=DAILY', rdates: [], exdates: extra.slice(1) }, '2035-08-16 00:00:00'), 'tooManyOccurrences')
})
