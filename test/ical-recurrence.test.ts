/**
 * A series' RRULE, RDATE and EXDATE lines (src/lib/ical-recurrence.ts) read back by an independent parser:
 * ical.js parses a VEVENT with them (and the zone's VTIMEZONE from ical-zones.ts) and expands it with its
 * own recurrence code and zone definitions; the occurrences must be ours. ical.js knows nothing of DST gaps:
 * a wall time that does not exist is dropped here before comparing, and where that
 * happens in a COUNT rule ical.js has counted it (RFC 5545 says not to), so ours go on one further.
 */
import ICAL from 'ical.js'
import t, { type Test } from 'tap'
import { utcToWall, wallToUtc } from '../src/lib/dates.js'
import { recurrenceId, recurrenceLines } from '../src/lib/ical-recurrence.js'
import { vtimezone, zoneId } from '../src/lib/ical-zones.js'
import { checkRecurrence, expandSeries, type Occurrence, type RecurrenceInput, type SeriesStart } from '../src/lib/recurrence.js'
import { utcOf, wall } from './helpers/ical.js'

const HORIZON = '2031-01-01 00:00:00'

function series(timezone: string, start: string, allDay = false): SeriesStart {
  const wallStart = allDay ? `${start} 00:00:00` : start
  const end = allDay ? `${start} 23:59:59` : start
  return { timezone, allDay, start: wallStart, end, startUtc: wallToUtc(wallStart, timezone), endUtc: wallToUtc(end, timezone) }
}

interface Expanded {
  ours: Occurrence[]
  lines: string[]
  /** ical.js's occurrences that exist in the zone: [wall, utc]. */
  theirs: Array<[string, string]>
  /** How many of ical.js's wall times were in a gap. */
  gaps: number
}

/** `zone`: the TZID the VEVENT is written with (default: the zone's own, `zoneId`); null writes it in UTC. */
function bothWays(s: SeriesStart, input: RecurrenceInput, zone?: string | null): Expanded {
  const checked = checkRecurrence(input, s.allDay)
  if ('refused' in checked) throw new Error(checked.refused)
  const ours = expandSeries(s, checked, HORIZON)
  if ('refused' in ours) throw new Error(ours.refused)
  const tzid = s.allDay || zone === null ? undefined : zone ?? zoneId(s.timezone)
  const lines = recurrenceLines(checked, s.timezone, tzid, s.allDay)
  const dtstart = s.allDay
    ? `DTSTART;VALUE=DATE:${s.start.slice(0, 10).replaceAll('-', '')}`
    : tzid !== undefined
      ? `DTSTART;TZID=${tzid}:${s.start.replace(/[-:]/g, '').replace(' ', 'T')}`
      : `DTSTART:${s.startUtc.replace(/[-:]/g, '').replace(' ', 'T')}Z`
  const text = [
    'BEGIN:VCALENDAR', 'VERSION:2.0', 'PRODID:-//test//recurrence//EN',
    ...(tzid !== undefined ? [(vtimezone(tzid) ?? '').replace(/\r?\n/g, '\r\n').trim()] : []),
    'BEGIN:VEVENT', 'UID:1@example.org', 'DTSTAMP:20260101T000000Z', dtstart, ...lines, 'END:VEVENT', 'END:VCALENDAR', '',
  ].join('\r\n')
  const calendar = new ICAL.Component(ICAL.parse(text))
  for (const zone of calendar.getAllSubcomponents('vtimezone')) ICAL.TimezoneService.register(zone)
  const event = new ICAL.Event(calendar.getFirstSubcomponent('vevent') as ICAL.Component)
  const iterator = event.iterator()
  const theirs: Array<[string, string]> = []
  let gaps = 0
  const horizon = ICAL.Time.fromDateTimeString(HORIZON.replace(' ', 'T') + 'Z')
  for (let next = iterator.next(); next !== null && next !== undefined && next.compare(horizon) < 0; next = iterator.next()) {
    if (!s.allDay && tzid !== undefined) {
      // Whether the wall time exists is asked of ICU (dates.ts): ical.js 2.2 turns some instants of a
      // change day back into the wrong wall time (Chatham's 20:15Z on 2026-04-05 as 10:00, not 09:00).
      if (utcToWall(wallToUtc(wall(next), s.timezone), s.timezone) !== wall(next)) {
        gaps++
        continue
      }
    }
    if (s.allDay) theirs.push([wall(next), wallToUtc(wall(next), s.timezone)])
    else if (tzid === undefined) theirs.push([utcToWall(utcOf(next), s.timezone), utcOf(next)])
    else theirs.push([wall(next), utcOf(next)])
  }
  return { ours, lines, theirs, gaps }
}

function same(t: Test, e: Expanded, counted: boolean) {
  const ours = e.ours.map((o) => [o.start, o.startUtc])
  t.strictSame(ours.slice(0, counted ? ours.length - e.gaps : ours.length), e.theirs, e.lines.join(' | '))
}

t.test('a weekly series across DST, UNTIL as a wall time, an rdate and an exdate (Europe/Berlin)', async (t) => {
  const e = bothWays(series('Europe/Berlin', '2026-03-10 19:00:00'), {
    rule: 'FREQ=WEEKLY;BYDAY=TU,TH;UNTIL=20260409T190000',
    rdates: ['2026-03-21 11:00:00'],
    exdates: ['2026-03-26 19:00:00'],
  })
  t.strictSame(e.lines, [
    'RRULE:FREQ=WEEKLY;BYDAY=TU,TH;UNTIL=20260409T170000Z',
    'RDATE;TZID=Europe/Berlin:20260321T110000',
    'EXDATE;TZID=Europe/Berlin:20260326T190000',
  ])
  t.equal(e.ours.length, 10)
  same(t, e, false)
})

t.test('the last Friday of the month, COUNT and an exdate (America/New_York)', async (t) => {
  const e = bothWays(series('America/New_York', '2026-01-30 18:30:00'), { rule: 'FREQ=MONTHLY;BYDAY=FR;BYSETPOS=-1;COUNT=12', exdates: ['2026-11-27 18:30:00'] })
  t.equal(e.ours.length, 11)
  same(t, e, false)
})

t.test('a daily series over a DST gap: ical.js counts the skipped 02:30, the RFC does not', async (t) => {
  const e = bothWays(series('Europe/Berlin', '2026-03-27 02:30:00'), { rule: 'FREQ=DAILY;COUNT=5' })
  t.equal(e.gaps, 1)
  same(t, e, true)
})

t.test('UNTIL as a local day, over Lord Howe\'s half-hour gap', async (t) => {
  const e = bothWays(series('Australia/Lord_Howe', '2026-09-30 02:10:00'), { rule: 'FREQ=DAILY;UNTIL=20261008' })
  t.match(e.lines[0], /^RRULE:FREQ=DAILY;UNTIL=20261008T125959Z$/)
  t.equal(e.gaps, 1)
  t.equal(e.ours.length, 8)
  same(t, e, false)
})

t.test('an all-day yearly festival with a cancelled year; UNTIL in UTC becomes a date', async (t) => {
  const e = bothWays(series('Europe/Vienna', '2026-07-18', true), { rule: 'FREQ=YEARLY;BYMONTH=7;BYDAY=3SA;UNTIL=20300720T000000Z', exdates: ['2028-07-15'] })
  t.strictSame(e.lines, ['RRULE:FREQ=YEARLY;BYMONTH=7;BYDAY=3SA;UNTIL=20300720', 'EXDATE;VALUE=DATE:20280715'])
  t.strictSame(e.ours.map((o) => o.id), ['20260718', '20270717', '20290721', '20300720'])
  same(t, e, false)
})

t.test('a fixed offset has its own VTIMEZONE: dates with its TZID, as DTSTART is written', async (t) => {
  const e = bothWays(series('UTC+5:30', '2026-01-05 09:00:00'), {
    rule: 'FREQ=WEEKLY;INTERVAL=2;BYDAY=MO,FR;UNTIL=20260220T090000', rdates: ['2026-01-07 12:00:00'], exdates: ['2026-01-19 09:00:00'],
  })
  t.strictSame(e.lines, ['RRULE:FREQ=WEEKLY;INTERVAL=2;BYDAY=MO,FR;UNTIL=20260220T033000Z', 'RDATE;TZID=UTC+0530:20260107T120000', 'EXDATE;TZID=UTC+0530:20260119T090000'])
  t.equal(e.ours.length, 8)
  same(t, e, false)
})

t.test('a VEVENT written in UTC (a zone without a definition): dates in UTC', async (t) => {
  // Exact while each occurrence's UTC day is its local day: the RRULE then expands in UTC as it would locally.
  const e = bothWays(series('UTC+5:30', '2026-01-05 09:00:00'), { rule: 'FREQ=WEEKLY;INTERVAL=2;BYDAY=MO,FR;COUNT=6', rdates: ['2026-01-07 12:00:00'], exdates: ['2026-01-09 09:00:00'] }, null)
  t.strictSame(e.lines, ['RRULE:FREQ=WEEKLY;INTERVAL=2;BYDAY=MO,FR;COUNT=6', 'RDATE:20260107T063000Z', 'EXDATE:20260109T033000Z'])
  same(t, e, false)
})

t.test('the last day of each month with rdates (Pacific/Chatham)', async (t) => {
  const e = bothWays(series('Pacific/Chatham', '2026-01-31 08:00:00'), { rule: 'FREQ=MONTHLY;BYMONTHDAY=-1;UNTIL=20261231T000000Z', rdates: ['2026-02-14 08:00:00', '2026-04-05 09:00:00'] })
  t.equal(e.ours.length, 14)
  same(t, e, false)
})

t.test('RECURRENCE-ID names the original start as DTSTART is written', async (t) => {
  const original = { start: '2026-03-30 02:30:00', startUtc: '2026-03-30 00:30:00' }
  t.equal(recurrenceId(original, 'Europe/Berlin', false), 'RECURRENCE-ID;TZID=Europe/Berlin:20260330T023000')
  t.equal(recurrenceId(original, undefined, false), 'RECURRENCE-ID:20260330T003000Z')
  t.equal(recurrenceId({ start: '2026-03-30 00:00:00', startUtc: '2026-03-29 22:00:00' }, undefined, true), 'RECURRENCE-ID;VALUE=DATE:20260330')
})
