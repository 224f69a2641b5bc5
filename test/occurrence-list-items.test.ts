/**
 * A series' occurrences in anonymous lists made from the series' stored document (handlers/occurrence-list-items.ts,
 * issue 45) must be byte for byte what the record makes: every list page over many occurrences of series timed and
 * all-day, in zones with daylight saving time (the clocks moved within the series; an all-day series whose days start
 * in a gap at midnight and end in an overlap), several days long, with terms, venues and organizers (one a draft,
 * left out), some occurrences overridden (texts, dates, venues) and single events between them, against the same app
 * with documents and the read cache off (it assembles every item). An occurrence without an override has its row made
 * from its id (timed and all-day alike): counted. Then after writes that change what a
 * document shows (a term renamed, a series edited: a template is used only for the bytes it was made for; a series
 * moved to another zone, an occurrence overridden).
 */
import t, { type Test } from 'tap'
import type { FastifyInstance } from 'fastify'
import { buildApp } from '../src/app.js'
import { defaultConfig } from '../src/config.js'
import { createCompilers } from '../src/http/compilers.js'
import { occurrenceRowsFromIds, occurrencesMadeFromDocuments } from '../src/handlers/occurrence-list-items.js'
import { SPEC } from './helpers/contract.js'
import { EVENTS, eventBody, setup, type Event, type Setup } from './helpers/events.js'
import { API, BASE_URL, NOW } from './helpers/build.js'

/** The window the pages list: every occurrence below. */
const WINDOW = 'start_date=2026-01-01&end_date=2028-12-31'

/** The same app on the same database, without documents or read cache: it assembles every item. */
async function assembling(t: Test, s: Setup): Promise<FastifyInstance> {
  const app = await buildApp({ db: s.db, config: defaultConfig({ publicUrl: BASE_URL, cacheEntries: 0, eventDocuments: false }), now: () => NOW, spec: SPEC, compilers: createCompilers() })
  t.teardown(() => app.close())
  return app
}

/** Every page of `query` (twice: the first read may store documents, the second reads them) against the oracle's. */
async function samePages(t: Test, s: Setup, oracle: FastifyInstance, query: string, label: string): Promise<number> {
  const made = occurrencesMadeFromDocuments()
  let items = 0
  for (let page = 1; ; page++) {
    const url = `${EVENTS}?${query}&per_page=40&page=${page}`
    const expected = await oracle.inject({ url })
    for (const round of [1, 2]) {
      const read = await s.inject({ url })
      if (read.statusCode !== expected.statusCode || read.body !== expected.body
        || read.headers['x-total'] !== expected.headers['x-total'] || read.headers.link !== expected.headers.link) {
        const a = read.body
        const b = expected.body
        let at = 0
        while (at < a.length && a[at] === b[at]) at++
        t.fail(`${label}: page ${page} (read ${round}) differs from the assembled one`, {
          status: [read.statusCode, expected.statusCode], offset: at, read: a.slice(Math.max(0, at - 200), at + 200), assembled: b.slice(Math.max(0, at - 200), at + 200),
        })
        return items
      }
      await s.app.eventDocuments.settled()
    }
    if (expected.statusCode !== 200) break
    items += expected.json<{ events: Event[] }>().events.length
    if (page >= Number(expected.headers['x-total-pages'])) break
  }
  t.pass(`${label}: ${items} items as assembled, ${occurrencesMadeFromDocuments() - made} made from documents`)
  return occurrencesMadeFromDocuments() - made
}

// With the read cache off (every page made from the data), and on (what it remembers, the overridden occurrences
// among it, dropped by the writes below; hot answers kept per URL).
for (const cacheEntries of [0, 1000]) t.test(`occurrences made from their series' documents are the records' bytes (read cache of ${cacheEntries})`, async (t) => {
  const s = await setup(t, { config: { cacheEntries } })
  const oracle = await assembling(t, s)
  const jazz = await s.category('Jazz')
  const outdoor = await s.tag('Outdoor')
  const hall = await s.venue({ venue: 'Hall', city: 'Vienna', status: 'publish' })
  const park = await s.venue({ venue: 'Park', city: 'Graz', status: 'publish' })
  const backRoom = await s.venue({ venue: 'Back room', status: 'draft' })
  const club = await s.organizer({ organizer: 'Club', status: 'publish' })
  const links = { categories: [jazz.id], tags: [outdoor.id], venue: [hall.id, backRoom.id], organizer: [club.id] }
  const series = [
    // Timed, across the spring and autumn changes of their zones (Lord Howe moves by half an hour).
    await s.create(eventBody({ title: 'Berlin weekly', timezone: 'Europe/Berlin', start_date: '2026-03-02 19:30:00', end_date: '2026-03-02 22:00:00', recurrence: { rule: 'FREQ=WEEKLY;COUNT=40' }, ...links })),
    await s.create(eventBody({ title: 'New York late', timezone: 'America/New_York', start_date: '2026-02-27 23:30:00', end_date: '2026-02-28 01:15:00', recurrence: { rule: 'FREQ=WEEKLY;COUNT=45' }, status: 'publish' })),
    await s.create(eventBody({ title: 'Lord Howe daily', timezone: 'Australia/Lord_Howe', start_date: '2026-03-30 01:45:00', end_date: '2026-03-30 02:45:00', recurrence: { rule: 'FREQ=DAILY;COUNT=20' }, venue: [park.id] })),
    await s.create(eventBody({ title: 'UTC monthly', timezone: 'UTC', start_date: '2026-01-31 10:00:00', end_date: '2026-01-31 11:00:00', recurrence: { rule: 'FREQ=MONTHLY;BYMONTHDAY=-1;COUNT=24' } })),
    // All-day, one and three days long, over the changes too; one with an RDATE and an EXDATE.
    await s.create(eventBody({ title: 'Zurich fair', all_day: true, timezone: 'Europe/Zurich', start_date: '2026-03-20', end_date: '2026-03-22', recurrence: { rule: 'FREQ=WEEKLY;COUNT=35' }, ...links })),
    await s.create(eventBody({ title: 'Chicago day', all_day: true, timezone: 'America/Chicago', start_date: '2026-02-28', end_date: '2026-02-28',
      recurrence: { rule: 'FREQ=WEEKLY;BYDAY=SA,SU;COUNT=40', rdates: ['2026-06-03'], exdates: ['2026-03-08'] } })),
    // All-day in Santiago: 2026-04-04 ends in the hour repeated at midnight, 2026-09-06 starts in the hour skipped at midnight.
    await s.create(eventBody({ title: 'Santiago weekend', all_day: true, timezone: 'America/Santiago', start_date: '2026-03-28', end_date: '2026-03-28',
      recurrence: { rule: 'FREQ=WEEKLY;BYDAY=SA,SU;COUNT=52' } })),
  ]
  // Single events between them.
  for (let i = 0; i < 5; i++) await s.event(`Single ${i}`, { start_date: `2026-0${3 + i}-1${i} 18:00:00`, end_date: `2026-0${3 + i}-1${i} 20:00:00`, ...links })
  // Some occurrences changed alone: texts, moved dates, another venue.
  const occurrencesOf = async (event: Event) => (await s.db.selectFrom('event_occurrences').select('occurrence')
    .where('event_id', '=', event.id).orderBy('start_utc').execute()).map((r) => r.occurrence)
  const overrides: Array<[Event, number, Record<string, unknown>]> = [
    [series[0] as Event, 3, { title: 'Berlin special' }],
    [series[0] as Event, 7, { start_date: '2026-04-15 20:00:00' }],
    [series[1] as Event, 5, { venue: [park.id], cost: '12 EUR' }],
    [series[4] as Event, 2, { description: 'Changed alone' }],
  ]
  for (const [event, n, body] of overrides) {
    const occurrence = (await occurrencesOf(event))[n] as string
    const res = await s.inject({ method: 'PATCH', url: `${EVENTS}/${event.id}/occurrences/${occurrence}`, headers: s.editor, payload: body })
    t.equal(res.statusCode, 200, `override ${event.title} ${occurrence}`)
  }

  const fromIds = occurrenceRowsFromIds()
  const first = await samePages(t, s, oracle, WINDOW, 'the window')
  t.ok(first > 150, 'most occurrences were made from documents')
  t.ok(occurrenceRowsFromIds() - fromIds > 150, 'their rows made from their ids')
  // The weekend the clocks go forward at midnight in Santiago (its Sunday starts at 01:00), a page not asked before:
  // every occurrence on it made from its id, the all-day ones too.
  const rows = occurrenceRowsFromIds()
  const weekend = (await s.inject({ url: `${EVENTS}?start_date=2026-09-05&end_date=2026-09-07&per_page=30` })).json<{ events: Event[] }>().events
  t.equal(weekend.filter((e) => e.all_day && e.id === series[6]?.id).length, 2, 'the page shows both days of the Santiago weekend')
  t.equal(occurrenceRowsFromIds() - rows, weekend.filter((e) => e.occurrence !== null && !e.occurrence.overridden).length, 'every one made from its id')
  await samePages(t, s, oracle, `${WINDOW}&categories=${jazz.id}`, 'a category')
  await samePages(t, s, oracle, `${WINDOW}&venue=${park.id}`, 'a venue (an occurrence\'s own)')
  await samePages(t, s, oracle, `${WINDOW}&ml_language=en&hide_subsequent_recurrences=true`, 'hide_subsequent_recurrences')
  await samePages(t, s, oracle, `${WINDOW}&include=${series[0]?.id},${series[4]?.id}`, 'include (wholes)')

  // Writes that change what the documents show, then pages again.
  const writes: Array<[string, () => Promise<unknown>]> = [
    ['a term renamed', () => s.inject({ method: 'PATCH', url: `${API}/categories/${jazz.id}`, headers: s.editor, payload: { name: 'Jazz & more' } })],
    ['a series edited', () => s.patch((series[0] as Event).id, { title: 'Berlin weekly, renamed', description: 'Now <b>with</b> "quotes" & more' })],
    ['a series moved to another zone', () => s.patch((series[3] as Event).id, { timezone: 'Europe/London' })],
    ['an occurrence overridden (all-day)', async () => s.inject({ method: 'PATCH', url: `${EVENTS}/${(series[5] as Event).id}/occurrences/${(await occurrencesOf(series[5] as Event))[4]}`, headers: s.editor, payload: { title: 'Sunday special' } })],
    ['an occurrence overridden (timed: its row no longer from its id)', async () => s.inject({ method: 'PATCH', url: `${EVENTS}/${(series[1] as Event).id}/occurrences/${(await occurrencesOf(series[1] as Event))[10]}`, headers: s.editor, payload: { title: 'Late special', start_date: '2026-05-09 22:00:00' } })],
    ['an override dropped (its occurrence where the rule puts it again)', async () => s.inject({ method: 'PUT', url: `${EVENTS}/${(series[0] as Event).id}/occurrences/${(await occurrencesOf(series[0] as Event))[3]}`, headers: s.editor, payload: { title: null } })],
  ]
  for (const [label, write] of writes) {
    await write()
    await samePages(t, s, oracle, WINDOW, `after ${label}`)
  }
})
