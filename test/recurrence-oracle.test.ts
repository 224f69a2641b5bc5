/**
 * The expansion of recurring series (src/lib/recurrence.ts) against an independent one: Python's
 * dateutil.rrule on wall times with zoneinfo (the system's tz database, not ICU), corrected for RFC 5545's
 * DST rules (test/helpers/rrule-oracle.py). Random rules use every supported part, in zones with gaps and
 * overlaps of an hour, half an hour (Lord Howe) and at 02:45 (Chatham), a 5:45 offset (Kathmandu) and the
 * API's fixed offsets, starting near DST changes over ten years. Debian's python3-dateutil is needed:
 * `.ci/run` installs it, and with CI=true its absence fails this file instead of skipping it.
 */
import { spawnSync } from 'node:child_process'
import fc from 'fast-check'
import t from 'tap'
import { checkRecurrence, expandSeries, type Occurrence } from '../src/lib/recurrence.js'
import { DAY } from '../src/lib/time-zones.js'
import { propertyRuns, propertySeed } from './helpers/property.js'
import { caseArb, ORACLE, python, TRANSITIONS, type Case } from './helpers/recurrence-cases.js'

const SEED = Number(process.env.RECURRENCE_ORACLE_SEED ?? propertySeed(451745))
const RUNS = Number(process.env.RECURRENCE_ORACLE_RUNS ?? propertyRuns(200))

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
