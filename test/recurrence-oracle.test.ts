/**
 * The expansion of recurring series (src/lib/recurrence.ts) against an independent one: Python's
 * dateutil.rrule on wall times with zoneinfo (the system's tz database, not ICU), corrected for RFC 5545's
 * DST rules (test/helpers/rrule-oracle.py). Random rules use every supported part, in zones with gaps and
 * overlaps of an hour, half an hour (Lord Howe) and at 02:45 (Chatham), a 5:45 offset (Kathmandu) and the
 * API's fixed offsets, starting near DST changes over ten years. Debian's python3-dateutil is needed:
 * `.ci/run` installs it, and with CI=true its absence fails this file instead of skipping it.
 */
import { spawnSync } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import fc from 'fast-check'
import t from 'tap'
import { utcToWall, wallToUtc } from '../src/lib/dates.js'
import { checkRecurrence, expandSeries, type Occurrence, type SeriesStart } from '../src/lib/recurrence.js'
import { DAY, MINUTE, offsetFunction } from '../src/lib/time-zones.js'
import { propertyRuns, propertySeed } from './helpers/property.js'

const SEED = Number(process.env.RECURRENCE_ORACLE_SEED ?? propertySeed(451745))
const RUNS = Number(process.env.RECURRENCE_ORACLE_RUNS ?? propertyRuns(200))
const ORACLE = fileURLToPath(new URL('./helpers/rrule-oracle.py', import.meta.url))

const ZONES = ['Europe/Berlin', 'America/New_York', 'Australia/Lord_Howe', 'Asia/Kathmandu', 'Pacific/Chatham', 'UTC', 'UTC+5:30', 'UTC-3']
const DAYS = ['MO', 'TU', 'WE', 'TH', 'FR', 'SA', 'SU']

/** A python3 with dateutil and zoneinfo (PATH first, then Debian's own), or undefined. */
function python(): string | undefined {
  for (const candidate of ['python3', '/usr/bin/python3']) {
    const probe = spawnSync(candidate, ['-c', 'import dateutil.rrule, zoneinfo'], { stdio: 'ignore' })
    if (probe.status === 0) return candidate
  }
  return undefined
}

const iso = (ms: number): string => new Date(ms).toISOString().slice(0, 19).replace('T', ' ')

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
const TRANSITIONS = new Map(ZONES.map((tz) => [tz, transitions(tz)]))

interface Case extends SeriesStart {
  rule: string | null
  rdates: string[]
  exdates: string[]
  horizonUtc: string
}

const part = <T>(arb: fc.Arbitrary<T>) => fc.option(arb, { nil: undefined, freq: 2 })

const caseArb: fc.Arbitrary<Case> = fc
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

function ours(c: Case): Array<[string, string, string, string, string]> | { refused: string } {
  const checked = checkRecurrence({ rule: c.rule, rdates: c.rdates, exdates: c.exdates }, c.allDay)
  if ('refused' in checked) return checked
  const result = expandSeries(c, checked, c.horizonUtc)
  if ('refused' in result) return result
  return result.map((o: Occurrence) => [o.id, o.start, o.end, o.startUtc, o.endUtc])
}

t.test('random series expand as dateutil and zoneinfo expand them', async (t) => {
  const interpreter = python()
  if (interpreter === undefined) {
    if (process.env.CI === 'true') {
      t.fail('python3-dateutil is missing: CI must check the expansion with a second one (.ci/run installs it)')
    } else {
      t.comment('NOTE: python3 with dateutil is not installed, so the expansion was NOT checked against a second one (apt-get install python3-dateutil).')
    }
    return
  }
  const cases = fc.sample(caseArb, { numRuns: RUNS, seed: SEED })
  const started = Date.now()
  const mine = cases.map(ours)
  const ms = Date.now() - started
  const run = spawnSync(interpreter, [ORACLE], { input: JSON.stringify(cases), encoding: 'utf8', maxBuffer: 256 * 1024 * 1024 })
  t.equal(run.status, 0, run.stderr)
  const theirs = JSON.parse(run.stdout) as unknown[]
  let mismatches = 0
  const seen = { occurrences: 0, refused: 0, nearDstChange: 0 }
  cases.forEach((c, i) => {
    const got = mine[i]
    if (Array.isArray(got)) {
      seen.occurrences += got.length
      const changes = TRANSITIONS.get(c.timezone) ?? []
      const near = (o: [string, string, string, string, string]): boolean =>
        changes.some(([at]) => Math.abs(Date.parse(`${o[3].replace(' ', 'T')}Z`) - at) < DAY)
      seen.nearDstChange += got.filter(near).length
    } else {
      seen.refused++
    }
    if (JSON.stringify(got) !== JSON.stringify(theirs[i]) && mismatches++ < 3) {
      t.strictSame(got, theirs[i], `case ${i}: ${JSON.stringify(c)}`)
    }
  })
  t.equal(mismatches, 0, `every series expands alike (${cases.length} series)`)
  t.ok(seen.occurrences > cases.length, 'the series have occurrences to compare')
  t.ok(seen.nearDstChange > cases.length / 10, 'many occurrences fall within a day of a DST change')
  t.comment(`recurrence oracle: ${JSON.stringify(seen)}; ours in ${ms} ms (seed ${SEED}, ${cases.length} runs)`)
})
