/**
 * Random recurring series for the property tests of the expansion (test/recurrence-oracle.test.ts) and of the
 * API (test/recurring-events-oracle.test.ts): every supported part, zones with gaps and overlaps of an hour, half
 * an hour (Lord Howe) and at 02:45 (Chatham), a 5:45 offset (Kathmandu) and the API's fixed offsets, starting
 * near DST changes over ten years; and the python with dateutil that test/helpers/rrule-oracle.py needs.
 */
import { spawnSync } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import fc from 'fast-check'
import { utcToWall, wallToUtc } from '../../src/lib/dates.js'
import type { SeriesStart } from '../../src/lib/recurrence.js'
import { DAY, MINUTE, offsetFunction } from '../../src/lib/time-zones.js'

/** The second expansion (dateutil and zoneinfo): a JSON list of cases on stdin, a list of answers on stdout. */
export const ORACLE = fileURLToPath(new URL('./rrule-oracle.py', import.meta.url))

export const ZONES = ['Europe/Berlin', 'America/New_York', 'Australia/Lord_Howe', 'Asia/Kathmandu', 'Pacific/Chatham', 'UTC', 'UTC+5:30', 'UTC-3']
const DAYS = ['MO', 'TU', 'WE', 'TH', 'FR', 'SA', 'SU']

/** A python3 with dateutil and zoneinfo (PATH first, then Debian's own), or undefined. */
export function python(): string | undefined {
  for (const candidate of ['python3', '/usr/bin/python3']) {
    const probe = spawnSync(candidate, ['-c', 'import dateutil.rrule, zoneinfo'], { stdio: 'ignore' })
    if (probe.status === 0) return candidate
  }
  return undefined
}

export const iso = (ms: number): string => new Date(ms).toISOString().slice(0, 19).replace('T', ' ')

/** The zone's offset changes in 2021–2032, each as [instant ms, offset before, offset after]. */
function transitions(tz: string): Array<[number, number, number]> {
  const offsetAt = offsetFunction(tz)
  const out: Array<[number, number, number]> = []
  for (let ms = Date.UTC(2021, 0, 1); ms < Date.UTC(2033, 0, 1); ms += DAY) {
    const [before, after] = [offsetAt(ms), offsetAt(ms + DAY)]
    if (before === after) continue
    let [lo, hi] = [ms, ms + DAY]
    while (hi - lo > MINUTE) {
      const mid = Math.floor((lo + hi) / 2 / MINUTE) * MINUTE
      if (offsetAt(mid) === before) lo = mid
      else hi = mid
    }
    out.push([hi, before, after])
  }
  return out
}
export const TRANSITIONS = new Map(ZONES.map((tz) => [tz, transitions(tz)]))

export interface Case extends SeriesStart {
  rule: string | null
  rdates: string[]
  exdates: string[]
  horizonUtc: string
}

const part = <T>(arb: fc.Arbitrary<T>) => fc.option(arb, { nil: undefined, freq: 2 })

export const caseArb: fc.Arbitrary<Case> = fc
  .record({
    tz: fc.constantFrom(...ZONES),
    pick: fc.nat(),
    daysBefore: fc.oneof(fc.integer({ min: 0, max: 8 }), fc.integer({ min: 0, max: 60 })),
    quarter: fc.integer({ min: 0, max: 3 }),
    anyTime: fc.oneof({ arbitrary: fc.constant(null), weight: 3 }, { arbitrary: fc.integer({ min: 0, max: 24 * 4 - 1 }), weight: 1 }),
    allDay: fc.boolean(),
    durationQuarters: fc.integer({ min: 0, max: 26 * 4 }),
    allDayDays: fc.integer({ min: 0, max: 2 }),
    freq: fc.constantFrom('DAILY', 'WEEKLY', 'MONTHLY', 'YEARLY'),
    interval: part(fc.integer({ min: 1, max: 3 })),
    end: fc.oneof(
      fc.record({ count: fc.integer({ min: 1, max: 40 }) }),
      fc.record({ untilDays: fc.integer({ min: -2, max: 900 }), form: fc.constantFrom('instant', 'wall', 'day') }),
      fc.constant({}),
    ),
    days: part(fc.uniqueArray(fc.constantFrom(...DAYS), { minLength: 1, maxLength: 3 })),
    ordinal: part(fc.constantFrom(1, 2, 3, 4, -1, -2, -3, -4)),
    monthDays: part(fc.uniqueArray(fc.integer({ min: -31, max: 31 }).filter((n) => n !== 0), { minLength: 1, maxLength: 2 })),
    months: part(fc.uniqueArray(fc.integer({ min: 1, max: 12 }), { minLength: 2, maxLength: 4 })),
    setPos: part(fc.constantFrom(1, 2, -1, -2)),
    wkst: part(fc.constantFrom(...DAYS)),
    lower: fc.boolean(),
    horizonDays: fc.integer({ min: 20, max: 700 }),
    extra: fc.array(fc.integer({ min: -5, max: 400 }), { maxLength: 3 }),
    removed: fc.array(fc.integer({ min: 0, max: 60 }), { maxLength: 3 }),
  })
  .map((r) => {
    const list = TRANSITIONS.get(r.tz) ?? []
    let wallMs: number
    if (list.length > 0 && r.anyTime === null) {
      // The clock time of a DST change (the earlier of its two wall readings), on a day before it.
      const [at, before, after] = list[r.pick % list.length] as [number, number, number]
      const shift = Math.abs(after - before)
      wallMs = at + Math.min(before, after) + Math.floor((r.quarter * 15 * MINUTE) % shift) - r.daysBefore * DAY
    } else {
      wallMs = Date.UTC(2021, 0, 1) + (r.pick % 3650) * DAY + (r.anyTime ?? 0) * 15 * MINUTE
    }
    const allDay = r.allDay
    let start = iso(wallMs)
    if (allDay) start = `${start.slice(0, 10)} 00:00:00`
    // A start the zone skips is stored as the wall time it became, as an event's own start is.
    const startUtc = wallToUtc(start, r.tz)
    if (!allDay) start = utcToWall(startUtc, r.tz)
    let end: string
    let endUtc: string
    if (allDay) {
      end = `${iso(Date.parse(`${start.slice(0, 10)}T00:00:00Z`) + r.allDayDays * DAY).slice(0, 10)} 23:59:59`
      endUtc = wallToUtc(end, r.tz)
    } else {
      endUtc = iso(Date.parse(`${startUtc.replace(' ', 'T')}Z`) + r.durationQuarters * 15 * MINUTE)
      end = utcToWall(endUtc, r.tz)
    }
    const startWallMs = Date.parse(`${start.replace(' ', 'T')}Z`)
    const parts = [`FREQ=${r.freq}`]
    // A monthly rule with BYMONTH steps through every month, or it may never meet one of them.
    if (r.interval !== undefined && !(r.freq === 'MONTHLY' && r.months !== undefined)) parts.push(`INTERVAL=${r.interval}`)
    if ('count' in r.end) parts.push(`COUNT=${r.end.count}`)
    if ('untilDays' in r.end) {
      const base = r.end.form === 'instant' ? Date.parse(`${startUtc.replace(' ', 'T')}Z`) : startWallMs
      const text = iso(base + r.end.untilDays * DAY).replace(/[-:]/g, '').replace(' ', 'T')
      parts.push(`UNTIL=${r.end.form === 'day' || allDay ? text.slice(0, 8) : r.end.form === 'instant' ? `${text}Z` : text}`)
    }
    const periodic = r.freq === 'MONTHLY' || r.freq === 'YEARLY'
    // Ordinals only where the contract allows them; BYSETPOS only over plain weekdays, which every
    // period has at least four of, so that no rule is empty for centuries.
    const ordinal = periodic && r.setPos === undefined && r.monthDays === undefined ? r.ordinal : undefined
    if (r.days !== undefined) parts.push(`BYDAY=${r.days.map((d) => `${ordinal ?? ''}${d}`).join(',')}`)
    const monthDays = r.freq === 'WEEKLY' || r.setPos !== undefined ? undefined : r.monthDays
    const months = r.freq === 'WEEKLY' ? undefined : r.months
    if (monthDays !== undefined) {
      // Days past the 28th only where every month is open to them.
      parts.push(`BYMONTHDAY=${monthDays.map((d) => (months !== undefined || r.days !== undefined ? Math.sign(d) * Math.min(Math.abs(d), 28) : d)).join(',')}`)
    }
    if (months !== undefined && r.freq !== 'DAILY') parts.push(`BYMONTH=${months.join(',')}`)
    // A daily period has one candidate: BYSETPOS there would make most rules empty for ever.
    if (r.setPos !== undefined && r.days !== undefined && r.freq !== 'DAILY' && (r.freq !== 'WEEKLY' || r.days.length >= Math.abs(r.setPos))) {
      parts.push(`BYSETPOS=${r.setPos}`)
    }
    if (r.wkst !== undefined) parts.push(`WKST=${r.wkst}`)
    const rule = r.lower ? parts.join(';').toLowerCase() : parts.join(';')
    const dateForm = (ms: number): string => (allDay ? iso(ms).slice(0, 10) : iso(ms))
    const rdates = r.extra.map((days) => dateForm(startWallMs + days * DAY + (days % 2) * 45 * MINUTE))
    const exdates = r.removed.map((days) => dateForm(startWallMs + days * DAY))
    const horizonUtc = iso(Date.parse(`${startUtc.replace(' ', 'T')}Z`) + r.horizonDays * DAY)
    return { timezone: r.tz, allDay, start, end, startUtc, endUtc, rule, rdates, exdates, horizonUtc }
  })

