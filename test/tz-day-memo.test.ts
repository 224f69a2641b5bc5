/**
 * The zone offsets and abbreviations remembered per UTC day (src/lib/time-zones.ts constantOverDay,
 * src/lib/tz-abbreviation.ts sameAllDay) against the uncached ICU computation: at every second of the
 * neighbourhood of each transition of a dozen awkward zones in 2020–2030, and at random instants and
 * wall times of 1900–2100 (fast-check, seeded). Wall → UTC conversion is checked too: it reads the
 * offset function several times around the wall time.
 */
import fc from 'fast-check'
import t from 'tap'
import { DAY, HOUR, MINUTE, SECOND, exactOffsetMs, isFixedZone, offsetFunction, wallMsToUtcMs } from '../src/lib/time-zones.js'
import { exactAbbreviation, tzAbbreviation } from '../src/lib/tz-abbreviation.js'
import { propertyRuns, propertySeed, seededRandom } from './helpers/property.js'

const ZONES = [
  'Europe/Berlin',
  'America/New_York',
  'Australia/Lord_Howe', // 30-minute DST
  'Asia/Kathmandu', // +05:45, +05:30 before 1986
  'Pacific/Chatham', // +12:45 / +13:45
  'America/Sao_Paulo', // DST until 2019
  'Africa/Casablanca', // DST paused for Ramadan
  'Europe/Dublin', // negative DST in ICU's rules
  'Antarctica/Troll', // +00 / +02
  'Pacific/Apia', // skipped 2011-12-30
  'Asia/Tokyo',
  'UTC',
  'Etc/UTC', // the tz database's fixed zones: offset and abbreviation read once
  'GMT',
  'Etc/GMT+5',
  'Etc/GMT-14',
  'UTC+5:30', // a manual offset
] as const

/** 'YYYY-MM-DD HH:MM:SS' of an instant, as stored (start_utc). */
function utcString(ms: number): string {
  return new Date(ms).toISOString().slice(0, 19).replace('T', ' ')
}

/** The second at which the offset changes, between lo (old offset) and hi (new offset). */
function bisect(tz: string, lo: number, hi: number): number {
  const before = exactOffsetMs(tz, lo)
  while (hi - lo > SECOND) {
    const mid = lo + Math.floor((hi - lo) / 2 / SECOND) * SECOND
    if (exactOffsetMs(tz, mid) === before) lo = mid
    else hi = mid
  }
  return hi
}

/**
 * Every change of offset of tz in [from, to), found on a twelve-hour grid and refined to the second.
 * The grid is finer than the tz database's closest two transitions (95.7 hours; see constantOverDay),
 * so it sees each one. (These zones change abbreviation only with their offset in 2020–2030.)
 */
function transitions(tz: string, from: number, to: number): number[] {
  const found: number[] = []
  const step = 12 * HOUR
  let previous = exactOffsetMs(tz, from)
  for (let ms = from + step; ms < to; ms += step) {
    const state = exactOffsetMs(tz, ms)
    if (state !== previous) found.push(bisect(tz, ms - step, ms))
    previous = state
  }
  return found
}

const FROM_2020 = Date.UTC(2020, 0, 1)
const TO_2031 = Date.UTC(2031, 0, 1)
const FROM_1900 = Date.UTC(1900, 0, 1)
const TO_2101 = Date.UTC(2101, 0, 1)

t.test('around every transition of 2020–2030, the memos agree with ICU at each instant', (t) => {
  const random = seededRandom(propertySeed(45))
  const counts: Record<string, number> = {}
  for (const tz of ZONES) {
    const found = transitions(tz, FROM_2020, TO_2031)
    counts[tz] = found.length
    // Instants within ±2 h of each transition: every minute, the seconds either side, and random
    // seconds; asked in a shuffled order so that a day is first remembered from any of its instants.
    const instants: number[] = []
    for (const at of found) {
      for (let d = -2 * HOUR; d <= 2 * HOUR; d += MINUTE) instants.push(at + d)
      instants.push(at - SECOND, at + SECOND)
      for (let i = 0; i < 20; i++) instants.push(at + Math.floor((random() * 4 - 2) * HOUR / SECOND) * SECOND)
    }
    for (let i = instants.length - 1; i > 0; i--) {
      const j = Math.floor(random() * (i + 1))
      ;[instants[i], instants[j]] = [instants[j] as number, instants[i] as number]
    }
    const offsetAt = offsetFunction(tz)
    let wrong = 0
    for (const ms of instants) {
      if (offsetAt(ms) !== exactOffsetMs(tz, ms)) wrong++
      if (tzAbbreviation(tz, utcString(ms)) !== exactAbbreviation(tz, ms)) wrong++
    }
    t.equal(wrong, 0, `${tz}: ${instants.length} instants around ${found.length} transitions`)
  }
  // The zones with DST change twice a year; Casablanca around Ramadan; Apia until its DST ended (2021).
  const casablanca = counts['Africa/Casablanca'] ?? 0
  t.ok(casablanca >= 10, `Casablanca: ${casablanca}`)
  t.same({ ...counts, 'Africa/Casablanca': 0 }, {
    'Europe/Berlin': 22,
    'America/New_York': 22,
    'Australia/Lord_Howe': 22,
    'Asia/Kathmandu': 0,
    'Pacific/Chatham': 22,
    'America/Sao_Paulo': 0,
    'Africa/Casablanca': 0,
    'Europe/Dublin': 22,
    'Antarctica/Troll': 22,
    'Pacific/Apia': 3,
    'Asia/Tokyo': 0,
    UTC: 0,
    'Etc/UTC': 0,
    GMT: 0,
    'Etc/GMT+5': 0,
    'Etc/GMT-14': 0,
    'UTC+5:30': 0,
  })
  t.end()
})

t.test('fixed zones: the tz database\'s UTC and Etc zones, and no other', (t) => {
  for (const tz of ['UTC', 'Etc/UTC', 'GMT', 'Zulu', 'utc', 'Etc/GMT+5', 'Etc/GMT-14']) t.ok(isFixedZone(tz), `${tz} is fixed`)
  // Zones at +00 or another offset now, with other offsets (LMT, DST) at other times.
  for (const tz of ['Europe/London', 'Africa/Abidjan', 'Atlantic/Reykjavik', 'Asia/Tokyo', 'America/Phoenix']) t.notOk(isFixedZone(tz), `${tz} is not`)
  t.throws(() => isFixedZone('Mars/Olympus'), RangeError)
  // Their offset and abbreviation are ICU's at any instant: the fast-check test below reads them over 1900–2100.
  t.equal(tzAbbreviation('Etc/GMT+5', '1901-01-01 00:00:00'), '-05')
  t.equal(offsetFunction('Etc/GMT-14')(Date.UTC(2150, 0, 1)), 14 * HOUR)
  t.end()
})

t.test('the day a transition falls on is answered per instant', (t) => {
  // 2025-03-30 01:00 UTC: Berlin goes from +01:00 (CET) to +02:00 (CEST).
  const at = Date.UTC(2025, 2, 30, 1)
  const berlin = offsetFunction('Europe/Berlin')
  t.equal(berlin(at - SECOND), HOUR)
  t.equal(berlin(at), 2 * HOUR)
  t.equal(berlin(Date.UTC(2025, 2, 30)), HOUR)
  t.equal(berlin(Date.UTC(2025, 2, 30, 23, 59, 59)), 2 * HOUR)
  t.equal(tzAbbreviation('Europe/Berlin', '2025-03-30 00:59:59'), 'CET')
  t.equal(tzAbbreviation('Europe/Berlin', '2025-03-30 01:00:00'), 'CEST')
  // Pacific/Apia skipped 2011-12-30: at 10:00 UTC on the 30th it went from −10:00 to +14:00.
  const apia = offsetFunction('Pacific/Apia')
  t.equal(apia(Date.UTC(2011, 11, 30, 9, 59, 59)), -10 * HOUR)
  t.equal(apia(Date.UTC(2011, 11, 30, 10)), 14 * HOUR)
  t.end()
})

t.test('random instants and wall times of 1900–2100 (fast-check)', (t) => {
  const runs = propertyRuns(10_000)
  const seed = propertySeed(4545)
  const zone = fc.constantFrom(...ZONES)
  const second = fc.integer({ min: FROM_1900 / SECOND, max: TO_2101 / SECOND - 1 }).map((s) => s * SECOND)
  fc.assert(
    fc.property(zone, second, (tz, ms) => {
      const offsetAt = offsetFunction(tz)
      // The wall time read at ms converted back, with memoised and with uncached offsets.
      const wallMs = ms + exactOffsetMs(tz, ms)
      const exactAt = (utcMs: number): number => exactOffsetMs(tz, utcMs)
      return (
        offsetAt(ms) === exactOffsetMs(tz, ms) &&
        tzAbbreviation(tz, utcString(ms)) === exactAbbreviation(tz, ms) &&
        wallMsToUtcMs(wallMs, offsetAt) === wallMsToUtcMs(wallMs, exactAt) &&
        wallMsToUtcMs(ms, offsetAt) === wallMsToUtcMs(ms, exactAt)
      )
    }),
    { numRuns: runs, seed },
  )
  t.pass(`${runs} runs, seed ${seed}`)
  // Many instants on few days: a day is remembered from one and serves the others.
  const random = seededRandom(seed)
  let wrong = 0
  for (let i = 0; i < 2_000; i++) {
    const tz = ZONES[Math.floor(random() * ZONES.length)] as (typeof ZONES)[number]
    const day = Math.floor(FROM_1900 / DAY) + Math.floor(random() * 40)
    const ms = day * DAY + Math.floor(random() * (DAY / SECOND)) * SECOND
    if (offsetFunction(tz)(ms) !== exactOffsetMs(tz, ms)) wrong++
    if (tzAbbreviation(tz, utcString(ms)) !== exactAbbreviation(tz, ms)) wrong++
  }
  t.equal(wrong, 0, '2,000 instants on 40 days of 1900')
  t.end()
})
