/**
 * Searched lists with occurrences changed alone (CONTRACT §17: `search` over an occurrence's own title and
 * description), the window's plan (event-filters.ts `searchedInWindow`): which overridden occurrences hold a needle
 * is matched in memory against their texts read once (`overriddenMatches`, `overriddenTextsQuery`), where a
 * statement per needle checked each (`overriddenMatchesQuery`, the old way). Differential, on both engines: series
 * in two languages (some protected), single events, overrides that change the title, the description or both (so
 * that an occurrence gains a match its series lacks, and loses one its series has), random texts of few letters
 * (with `ß`, `é`, upper case); for every needle of two and three letters and some awkward ones, the in-memory
 * answer against the statement's, then totals and pages of searched lists in several windows and both languages
 * against the statements that check every occurrence (the window's plan turned off). Then again after overrides
 * and a series change (the texts read again, not the ones remembered). And searches that read the texts at once
 * (each its own read, as requests in flight together on PostgreSQL do) leave the window's overridden places found
 * for the texts kept, so that later needles find them no more.
 */
import t from 'tap'
import { foldCase } from '../src/db/dialect.js'
import { countEvents, eventEntries, overriddenMatches, overriddenMatchesQuery, overriddenPlacesFound, searchPlanBounds, type EventFilter } from '../src/repositories/event-filters.js'
import { EVENTS, eventBody, setup, type Event, type Setup } from './helpers/events.js'
import { propertySeed, seededRandom } from './helpers/property.js'

const random = seededRandom(propertySeed(4545))
const pick = <T>(list: readonly T[]): T => list[Math.floor(random() * list.length)] as T
const LETTERS = ['a', 'b', 'c', 'd', 'A', 'B', 'ß', 'é', 's']
const word = () => Array.from({ length: 2 + Math.floor(random() * 4) }, () => pick(LETTERS)).join('')
const text = () => Array.from({ length: 1 + Math.floor(random() * 3) }, word).join(' ')

const NEEDLES = [
  ...['a', 'b', 'c', 'd'].flatMap((x) => ['a', 'b', 'c', 'd'].flatMap((y) => [`${x}${y}`, ...['a', 'b', 'c'].map((z) => `${x}${y}${z}`)])),
  'AB', 'aBc', 'ss', 'SS', 'ß', 'é', 'É', 'aé', 'ßé', 'éa', 'Aß', 'ssa', 'a b', 'b a', '%', 'a%', '_', 'a_b', '\\', "a'", 'abcd', 'bad', 'cab', 'dab',
]

interface Override {
  id: number
  occurrence: string
}

/** `overriddenMatchesQuery`'s rows as `overriddenMatches` answers them. */
async function statementAnswer(s: Setup, needle: string): Promise<Array<[number, string, boolean]>> {
  return (await overriddenMatchesQuery(s.db, needle).execute()).map((r): [number, string, boolean] => [Number(r.id), r.occurrence, Number(r.hit) === 1])
    .sort((a, b) => a[0] - b[0] || a[1].localeCompare(b[1]))
}

async function memoryAnswer(s: Setup, needle: string): Promise<Array<[number, string, boolean]>> {
  return [...(await overriddenMatches(s.db, needle))].flatMap(([id, hits]) => [...hits].map(([occurrence, hit]): [number, string, boolean] => [id, occurrence, hit]))
    .sort((a, b) => a[0] - b[0] || a[1].localeCompare(b[1]))
}

t.test('overridden occurrences matched in memory answer as the statement per needle did; searched lists as the statements do', async (t) => {
  const s = await setup(t)
  const series: Event[] = []
  // What each series' own texts are, for telling the overrides' gained and lost matches apart.
  const texts = new Map<number, { title: string; description: string | null }>()
  const holds = (id: number, needle: string) => {
    const own = texts.get(id)
    const folded = foldCase(needle)
    return own !== undefined && (foldCase(own.title).includes(folded) || (own.description !== null && foldCase(own.description).includes(folded)))
  }
  for (let i = 0; i < 12; i++) {
    const day = String(1 + i).padStart(2, '0')
    const rule = i % 3 === 0 ? `FREQ=DAILY;INTERVAL=${3 + i};COUNT=${8 + i}` : `FREQ=WEEKLY;COUNT=${6 + i}`
    const fields = {
      title: text(), description: i % 4 === 3 ? null : text(), start_date: `2026-07-${day} 18:00:00`, end_date: `2026-07-${day} 20:00:00`,
      recurrence: { rule },
    }
    const created = await s.create(eventBody(fields), s.editor, i % 3 === 1 ? '?ml_language=de' : '')
    series.push(created)
    // Protected: its description is not searched (CONTRACT §6), nor an override's (`search_description` null).
    if (i % 5 === 4) t.equal((await s.patch(created.id, { password: 'sesame' })).statusCode, 200)
    texts.set(created.id, { title: fields.title, description: i % 5 === 4 ? null : fields.description })
  }
  for (let i = 0; i < 6; i++) await s.create(eventBody({ title: text(), description: text(), start_date: `2026-08-${String(10 + i)} 10:00:00`, end_date: `2026-08-${String(10 + i)} 11:00:00` }), s.editor, i % 2 === 0 ? '?ml_language=de' : '')
  const override = async (o: Override, body: Record<string, unknown>) => {
    const res = await s.inject({ method: 'PATCH', url: `${EVENTS}/${o.id}/occurrences/${o.occurrence}`, headers: s.editor, payload: body })
    t.equal(res.statusCode, 200, `override ${o.id} ${o.occurrence}: ${res.body.slice(0, 200)}`)
  }
  const occurrencesOf = async (id: number): Promise<string[]> =>
    (await s.db.selectFrom('event_occurrences').select('occurrence').where('event_id', '=', id).orderBy('start_utc').execute()).map((r) => r.occurrence)
  const changeSome = async () => {
    for (const event of series) {
      const occurrences = await occurrencesOf(event.id)
      for (let k = 0; k < 3; k++) {
        const body = pick<Record<string, unknown>>([
          { title: text() }, { description: text() }, { title: text(), description: text() }, { description: '' }, { title: text(), description: null },
          { title: `${event.title} ${word()}` }, { venue: [] },
        ])
        await override({ id: event.id, occurrence: pick(occurrences) }, body)
      }
    }
  }
  await changeSome()

  const windows = [
    { startGte: '2026-06-15 00:00:00', endLte: '2028-06-15 23:59:59' },
    { startGte: '2026-07-20 00:00:00', endLte: '2026-10-31 23:59:59' },
    { startGte: '2026-09-01 00:00:00' },
  ]
  const check = async (label: string) => {
    const overridden = Number((await s.db.selectFrom('event_overrides').select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow()).n)
    t.ok(overridden >= 20, `${label}: ${overridden} overrides`)
    // The overrides gain and lose matches their series have not: else the differential proves little.
    let gained = 0
    let lost = 0
    let differences = 0
    for (const needle of NEEDLES) {
      const want = await statementAnswer(s, needle)
      const got = await memoryAnswer(s, needle)
      if (JSON.stringify(got) !== JSON.stringify(want)) {
        differences++
        t.fail(`${label}: the overridden occurrences holding ${JSON.stringify(needle)}`, { got, want })
      }
      // The series' own match, as its occurrences not changed alone show it (`holds`): compared with the override's.
      for (const [id, , hit] of want) {
        if (hit && !holds(id, needle)) gained++
        if (!hit && holds(id, needle)) lost++
      }
    }
    t.equal(differences, 0, `${label}: ${NEEDLES.length} needles, the in-memory answer is the statement's`)
    t.ok(gained > 0 && lost > 0, `${label}: occurrences that match where their series does not (${gained}) and the reverse (${lost})`)

    // Lists: the window's plan against the statements that check every occurrence (the plan off: a bound of 0 ids).
    const filters: EventFilter[] = []
    for (const needle of NEEDLES) {
      for (const language of ['en', 'de'] as const) {
        for (const window of windows) filters.push({ language, scope: { kind: 'all', statuses: ['publish'] }, ...window, search: needle })
      }
    }
    const answer = async (f: EventFilter) => {
      const total = await countEvents(s.db, f)
      const pages = total === 0 ? [] : await Promise.all([0, 7].filter((offset) => offset < total).map((offset) => eventEntries(s.db, f, offset, 10, total)))
      return JSON.stringify({ total, pages })
    }
    const bounds = { ...searchPlanBounds }
    const wanted: string[] = []
    Object.assign(searchPlanBounds, { eventIdsUpTo: 0 })
    try {
      for (const f of filters) wanted.push(await answer(f))
    } finally {
      Object.assign(searchPlanBounds, bounds)
    }
    let listed = 0
    let found = 0
    for (const [i, f] of filters.entries()) {
      const got = await answer(f)
      if (got !== wanted[i]) {
        t.fail(`${label}: ${JSON.stringify(f)}`, { got, want: wanted[i] })
        return
      }
      listed++
      if (!got.startsWith('{"total":0,')) found++
    }
    t.equal(listed, filters.length, `${label}: ${listed} searched lists (${found} not empty) as the statements answer them`)
  }
  await check('first overrides')
  // More overrides, and a series' own title changed: nothing remembered of the texts before is used.
  await changeSome()
  const renamed = series[1] as Event
  const title = text()
  t.equal((await s.patch(renamed.id, { title })).statusCode, 200)
  texts.set(renamed.id, { title, description: texts.get(renamed.id)?.description ?? null })
  await check('after more overrides and a series changed')
})

t.test('searches that read the overrides\' texts at once leave the places of the texts kept: later needles do not find them again', async (t) => {
  const s = await setup(t)
  for (let i = 0; i < 4; i++) {
    const day = String(1 + i).padStart(2, '0')
    const created = await s.create(eventBody({ title: `series ${i} abc`, description: 'bcd', start_date: `2026-07-${day} 18:00:00`, end_date: `2026-07-${day} 20:00:00`, recurrence: { rule: 'FREQ=WEEKLY;COUNT=8' } }))
    const occurrence = (await s.db.selectFrom('event_occurrences').select('occurrence').where('event_id', '=', created.id).orderBy('start_utc').offset(2).limit(1).executeTakeFirstOrThrow()).occurrence
    const res = await s.inject({ method: 'PATCH', url: `${EVENTS}/${created.id}/occurrences/${occurrence}`, headers: s.editor, payload: { title: `changed ${i} xyz` } })
    t.equal(res.statusCode, 200, res.body.slice(0, 200))
  }
  // Anonymous lists in the default window (as the benchmark's random searches), each a needle new to the cache.
  const total = async (search: string) => {
    const res = await s.list(`?search=${search}`)
    t.equal(res.statusCode, 200, `search=${search}: ${res.body.slice(0, 200)}`)
    return Number(res.headers['x-total'])
  }
  // All in flight together: each reads the texts (and the window) itself.
  t.same(await Promise.all(['ab', 'bc', 'cd', 'ser', 'xy', 'anx', 'se', 'ri', 'es', 'bcd'].map(total)), [28, 32, 32, 28, 4, 0, 28, 28, 28, 32], 'the needles counted together')
  const before = overriddenPlacesFound()
  const later = []
  for (const needle of ['ch', 'yz', 'rie', 'ies', 'ge', 'zz']) later.push(await total(needle))
  t.same(later, [4, 4, 28, 28, 4, 0], 'later needles counted')
  t.equal(overriddenPlacesFound() - before, 0, 'later needles use the places found for the texts kept')
})
