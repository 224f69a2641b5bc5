/**
 * Random series created over HTTP (CONTRACT §17) read back through `GET /events/{id}/occurrences`, page by
 * page, and compared with a second expansion (Python's dateutil and zoneinfo: test/helpers/rrule-oracle.py),
 * on the engine under test. The series are those of test/recurrence-oracle.test.ts (every supported part,
 * starts at DST changes); a series the oracle refuses must be a 400 naming `recurrence`. Each case's clock is
 * set so that the server's horizon is the case's. Seeded (`RECURRING_EVENTS_ORACLE_SEED`,
 * `RECURRING_EVENTS_ORACLE_RUNS`, test/helpers/property.ts); without python3-dateutil it fails under CI=true.
 */
import { spawnSync } from 'node:child_process'
import fc from 'fast-check'
import t from 'tap'
import { expectError } from './helpers/errors.js'
import { EVENTS, setup, type Event } from './helpers/events.js'
import { propertyRuns, propertySeed } from './helpers/property.js'
import { caseArb, ORACLE, python, type Case } from './helpers/recurrence-cases.js'

const SEED = Number(process.env.RECURRING_EVENTS_ORACLE_SEED ?? propertySeed(20261206))
const RUNS = Number(process.env.RECURRING_EVENTS_ORACLE_RUNS ?? propertyRuns(20))
const HORIZON_DAYS = 1826
/** Occurrences at most in a compared series: every one is read page by page. */
const MOST = 200

type Row = [string, string, string, string, string]

/** The body that creates the case's series: exact instants for timed events, days for all-day ones. */
function bodyOf(c: Case): Record<string, unknown> {
  const instant = (utc: string) => `${utc.replace(' ', 'T')}Z`
  return {
    title: 'Oracle', timezone: c.timezone, all_day: c.allDay,
    start_date: c.allDay ? c.start.slice(0, 10) : instant(c.startUtc),
    end_date: c.allDay ? c.end.slice(0, 10) : instant(c.endUtc),
    recurrence: { rule: c.rule, rdates: c.rdates, exdates: c.exdates },
  }
}

t.test('random series read back through GET /events/{id}/occurrences as dateutil and zoneinfo expand them', async (t) => {
  const interpreter = python()
  if (interpreter === undefined) {
    if (process.env.CI === 'true') t.fail('python3-dateutil is missing: CI must check the occurrences with a second expansion (.ci/run installs it)')
    else t.comment('NOTE: python3 with dateutil is not installed, so the occurrences were NOT checked against a second expansion.')
    return
  }
  // More cases than runs, the oracle's answers first: the runs are those whose series are small enough to read whole.
  const sampled = fc.sample(caseArb, { numRuns: RUNS * 4, seed: SEED })
  const run = spawnSync(interpreter, [ORACLE], { input: JSON.stringify(sampled), encoding: 'utf8', maxBuffer: 256 * 1024 * 1024 })
  t.equal(run.status, 0, run.stderr)
  const answers = JSON.parse(run.stdout) as Array<Row[] | { refused: string }>
  const picked = sampled.map((c, i) => ({ c, expected: answers[i] })).filter(({ expected }) => !Array.isArray(expected) || expected.length <= MOST).slice(0, RUNS)
  t.ok(picked.length >= Math.min(RUNS, 5), `enough series to compare (${picked.length})`)

  let now = new Date()
  const s = await setup(t, { clock: () => now })
  const seen = { series: 0, refused: 0, occurrences: 0 }
  for (const [i, { c, expected }] of picked.entries()) {
    // The server's horizon (now + 1826 days) is the case's.
    now = new Date(Date.parse(`${c.horizonUtc.replace(' ', 'T')}Z`) - HORIZON_DAYS * 86_400_000)
    const label = `case ${i}: ${JSON.stringify(c)}`
    const created = await s.inject({ method: 'POST', url: EVENTS, headers: s.editor, payload: bodyOf(c) })
    if (expected === undefined || !Array.isArray(expected)) {
      seen.refused++
      expectError(t, created, 400, 'rest_invalid_param', ['recurrence'])
      continue
    }
    t.equal(created.statusCode, 201, label)
    if (created.statusCode !== 201) {
      t.comment(created.body)
      continue
    }
    seen.series++
    const id = created.json<Event>().id
    const got: Row[] = []
    let url: string | undefined = `${EVENTS}/${id}/occurrences?per_page=50`
    let total = -1
    while (url !== undefined) {
      const res = await s.inject({ url, headers: s.editor })
      t.equal(res.statusCode, 200)
      const page = res.json<{ occurrences: Event[]; total: number; next_rest_url?: string }>()
      total = page.total
      for (const o of page.occurrences) got.push([o.occurrence?.id ?? '', o.start_date, o.end_date, o.utc_start_date, o.utc_end_date])
      url = page.next_rest_url?.replace(/^https?:\/\/[^/]+/, '')
    }
    seen.occurrences += got.length
    t.equal(total, expected.length, `${label}: total`)
    if (JSON.stringify(got) !== JSON.stringify(expected)) t.strictSame(got, expected, label)
    // The original start of each occurrence is its own (none of them is moved).
    const first = (await s.inject({ url: `${EVENTS}/${id}/occurrences?per_page=1`, headers: s.editor })).json<{ occurrences: Event[] }>().occurrences[0]
    if (first !== undefined) t.equal(first.occurrence?.original_utc_start_date, first.utc_start_date)
  }
  t.ok(seen.series > 0, 'some series were created and compared')
  t.comment(`recurring events oracle: ${JSON.stringify(seen)} (seed ${SEED}, ${picked.length} runs)`)
})
