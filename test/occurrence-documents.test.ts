/**
 * An anonymous read of one occurrence answered from its series' stored document (handlers/occurrence-documents.ts,
 * handlers/event-occurrences.ts `fromDocument`) is the answer the assembled record gives, byte for byte: the same
 * status, body, ETag, 304s. Differential: two apps on one database, one with event documents (the new way) and one
 * without (every read assembles: the old way), every occurrence of series in awkward zones (DST changes in Berlin,
 * New York and Lord Howe's half hour, Kolkata), all-day and timed, overridden or not, with venues, organizers,
 * terms and texts that JSON escapes, read anonymously, with `If-None-Match`, compressed, in another language, with
 * a password, by an editor. And the new way is taken: no series is assembled for those anonymous reads.
 */
import t from 'tap'
import { join } from 'node:path'
import { buildApp } from '../src/app.js'
import { defaultConfig } from '../src/config.js'
import { openDatabase, type LoggedStatement } from '../src/db/database.js'
import { EVENT_KEYS, ORGANIZER_KEYS, VENUE_KEYS } from '../src/handlers/event-documents.js'
import { OCCURRENCE_KEYS } from '../src/handlers/occurrence-documents.js'
import { occurrenceRecord } from '../src/lib/occurrence-view.js'
import { findEvent } from '../src/repositories/event-records.js'
import { createCompilers } from '../src/http/compilers.js'
import { API, BASE_URL, NOW } from './helpers/build.js'
import { SPEC } from './helpers/contract.js'
import { EVENTS, eventBody, setup, type Event } from './helpers/events.js'

const AWKWARD = 'Quote " backslash \\ slash / tab\t newline\n ü € 🎷 \u2028 <b>&amp;</b>'

t.test('an occurrence read from its series\' document is the assembled answer, byte for byte', async (t) => {
  const file = join(t.testdir(), 'calendar.db')
  const s = await setup(t, { file })
  // Made through the API without the helpers, whose messages would carry these texts' line breaks into TAP.
  const post = async <T>(path: string, payload: Record<string, unknown>, query = ''): Promise<T> => {
    const res = await s.inject({ method: 'POST', url: `${API}/${path}${query}`, headers: s.editor, payload })
    t.equal(res.statusCode, 201, `POST ${path}`)
    if (res.statusCode !== 201) t.comment(res.body)
    return res.json<T>()
  }
  const venue = await post<{ id: number }>('venues', { venue: `Hall ${AWKWARD}`, address: 'Street 1', city: 'Zürich', country: 'Switzerland', website: 'https://hall.example/' })
  const other = await post<{ id: number }>('venues', { venue: 'Annex' })
  const organizerId = (await post<{ id: number }>('organizers', { organizer: `Org ${AWKWARD}`, email: 'o@example.org', phone: '+41 1' })).id
  const jazz = await post<{ id: number }>('categories', { name: `Jazz ${AWKWARD}` })
  const blues = await post<{ id: number }>('categories', { name: 'Blues' })
  const tag = await post<{ id: number }>('tags', { name: 'late' })
  const series: Event[] = []
  const make = async (fields: Record<string, unknown>) => series.push(await post<Event>('events', eventBody(fields)))
  await make({ title: `Berlin ${AWKWARD}`, description: `<p>${AWKWARD}</p>`, excerpt: AWKWARD, timezone: 'Europe/Berlin', start_date: '2026-03-20 20:30:00',
    end_date: '2026-03-20 23:00:00', venue: [venue.id, other.id], organizer: [organizerId], categories: [jazz.id, blues.id], tags: [tag.id], cost: 'CHF 25',
    website: 'https://example.org/berlin', recurrence: { rule: 'FREQ=WEEKLY;COUNT=40' } })
  await make({ title: 'New York', timezone: 'America/New_York', start_date: '2026-10-28 01:30:00', end_date: '2026-10-28 03:00:00', venue: [other.id],
    recurrence: { rule: 'FREQ=DAILY;COUNT=12' } })
  await make({ title: 'Lord Howe', timezone: 'Australia/Lord_Howe', start_date: '2026-03-30 01:45:00', end_date: '2026-03-30 02:15:00',
    recurrence: { rule: 'FREQ=WEEKLY;COUNT=30' } })
  await make({ title: 'Kolkata', timezone: 'Asia/Kolkata', start_date: '2026-07-01 09:00:00', end_date: '2026-07-01 10:00:00', categories: [blues.id],
    recurrence: { rule: 'FREQ=MONTHLY;COUNT=14' } })
  await make({ title: 'All day', all_day: true, timezone: 'Europe/Berlin', start_date: '2026-03-27', end_date: '2026-03-28', tags: [tag.id],
    recurrence: { rule: 'FREQ=WEEKLY;COUNT=8' } })
  await make({ title: 'UTC', timezone: 'UTC', start_date: '2026-07-01 18:00:00', end_date: '2026-07-02 01:00:00', recurrence: { rule: 'FREQ=DAILY;COUNT=5' } })
  await make({ title: 'Protected', recurrence: { rule: 'FREQ=DAILY;COUNT=3' } })
  t.equal((await s.patch(series.at(-1)?.id as number, { password: 'secret' })).statusCode, 200, 'a password set')
  await make({ title: 'Draft', status: 'draft', recurrence: { rule: 'FREQ=DAILY;COUNT=3' } })
  await make({ title: 'Single', venue: [venue.id] })
  await post('events', eventBody({ title: 'Berlin de', translation_of: series[0]?.id }), '?ml_language=de')
  // Occurrences changed alone: a title, a venue, moved dates.
  const occurrencesOf = async (id: number): Promise<string[]> =>
    (await s.db.selectFrom('event_occurrences').select('occurrence').where('event_id', '=', id).orderBy('start_utc').execute()).map((r) => r.occurrence)
  const berlin = await occurrencesOf(series[0]?.id as number)
  const overrides: Array<[number, string, Record<string, unknown>]> = [
    [series[0]?.id as number, berlin[3] as string, { title: `Special ${AWKWARD}`, venue: [other.id] }],
    [series[0]?.id as number, berlin[6] as string, { start_date: '2026-05-02 21:00:00', end_date: '2026-05-02 23:30:00', cost: '10 EUR' }],
    [series[4]?.id as number, (await occurrencesOf(series[4]?.id as number))[2] as string, { description: 'Moved nothing, said more' }],
  ]
  for (const [id, occurrence, body] of overrides) {
    const res = await s.inject({ method: 'PATCH', url: `${EVENTS}/${id}/occurrences/${occurrence}`, headers: s.editor, payload: body })
    t.equal(res.statusCode, 200, `override ${id} ${occurrence}`)
  }
  await s.app.fillEventDocuments()
  await s.app.eventDocuments.settled()

  // The old way: another app on the same database, without documents (every read assembles). The new way without a
  // read cache, so that a read which assembles the series shows it (`select e.*`) every time.
  const statements: LoggedStatement[] = []
  const url = s.url
  const handle = await openDatabase(url)
  t.teardown(() => handle.close())
  const old = await buildApp({ db: handle.db, config: defaultConfig({ publicUrl: BASE_URL, eventDocuments: false }), now: () => NOW, spec: SPEC, compilers: createCompilers() })
  t.teardown(() => old.close())
  const logged = await openDatabase(url, { log: (statement) => statements.push(statement) })
  t.teardown(() => logged.close())
  const fresh = await buildApp({ db: logged.db, config: defaultConfig({ publicUrl: BASE_URL, cacheEntries: 0 }), now: () => NOW, spec: SPEC, compilers: createCompilers() })
  t.teardown(() => fresh.close())

  const compare = async (path: string, headers: Record<string, string> = {}) => {
    const [a, b] = [await fresh.inject({ url: path, headers }), await old.inject({ url: path, headers })]
    const same = a.statusCode === b.statusCode && a.rawPayload.equals(b.rawPayload) && a.headers.etag === b.headers.etag
      && a.headers['content-type'] === b.headers['content-type'] && a.headers['content-encoding'] === b.headers['content-encoding'] && a.headers.vary === b.headers.vary
    if (!same) t.fail(`${path} ${JSON.stringify(headers)}`, { new: [a.statusCode, a.headers.etag, a.body.slice(0, 2000)], old: [b.statusCode, b.headers.etag, b.body.slice(0, 2000)] })
    return { res: a, same }
  }
  let compared = 0
  let differ = 0
  let fromDocuments = 0
  for (const event of series) {
    for (const occurrence of await occurrencesOf(event.id)) {
      const path = `${EVENTS}/${event.id}/occurrences/${occurrence}`
      statements.length = 0
      const { res, same } = await compare(path)
      compared += 1
      if (!same) differ += 1
      // The anonymous read of a published series without a password: no series assembled (no `select e.*`), and
      // for an occurrence without an override, from the document's text (no second read of the occurrence).
      const overridden = overrides.some(([id, o]) => id === event.id && o === occurrence)
      if (res.statusCode === 200 && !statements.some((st) => /^select e\.\*/.test(st.sql) || (!overridden && /^select o\.event_id/.test(st.sql)))) fromDocuments += 1
      const etag = res.headers.etag as string | undefined
      if (etag !== undefined) {
        await compare(path, { 'if-none-match': etag })
        await compare(path, { 'if-none-match': `W/${etag}, "other"` })
      }
      await compare(path, { 'accept-encoding': 'gzip' })
    }
  }
  const [berlinSeries, , , , allDay] = series as [Event, Event, Event, Event, Event]
  const anonymous = series.filter((e) => e.title !== 'Protected' && e.title !== 'Draft')
  const readable = (await Promise.all(anonymous.map(async (e) => (await occurrencesOf(e.id)).length))).reduce((a, b) => a + b, 0)
  t.equal(differ, 0, `${compared} occurrences: none differs`)
  t.equal(fromDocuments, readable, `all ${readable} readable occurrences answered without assembling their series`)
  // The series changed: its document made again, the text remembered of the old one is not used.
  t.equal((await s.patch(berlinSeries.id, { title: 'Berlin renamed', cost: '30 EUR' })).statusCode, 200, 'the series renamed')
  await s.app.fillEventDocuments()
  await s.app.eventDocuments.settled()
  for (const occurrence of berlin.slice(0, 5)) {
    const { res } = await compare(`${EVENTS}/${berlinSeries.id}/occurrences/${occurrence}`)
    t.match(res.json<Event>().title, /^(Berlin renamed|Special)/, 'the new title')
  }
  // Other callers and forms go the old way, and agree.
  const first = berlin[0] as string
  await compare(`${EVENTS}/${berlinSeries.id}/occurrences/${first}?ml_language=de`)
  await compare(`${EVENTS}/${berlinSeries.id}/occurrences/${first}?password=wrong`)
  await compare(`${EVENTS}/${berlinSeries.id}/occurrences/${first}`, s.editor)
  await compare(`${EVENTS}/${berlinSeries.id}/occurrences/20260320T193000Z`)
  await compare(`${EVENTS}/${berlinSeries.id}/occurrences/20200101T000000Z`)
  await compare(`${EVENTS}/${berlinSeries.id}/occurrences/nonsense`)
  await compare(`${EVENTS}/${allDay.id}/occurrences/20260327T000000Z`)
  await compare(`${EVENTS}/${series[6]?.id}/occurrences/${(await occurrencesOf(series[6]?.id as number))[0]}?password=secret`)
})

t.test('the key orders the document\'s text is put in are the assembly\'s', async (t) => {
  const s = await setup(t)
  const venue = await s.venue({ venue: 'Hall' })
  const organizer = await s.inject({ method: 'POST', url: `${API}/organizers`, headers: s.editor, payload: { organizer: 'Org' } })
  const created = await s.create(eventBody({ venue: [venue.id], organizer: [organizer.json<{ id: number }>().id], timezone: 'Europe/Berlin',
    start_date: '2026-03-20 18:00:00', end_date: '2026-03-20 21:00:00', recurrence: { rule: 'FREQ=WEEKLY;COUNT=3' } }))
  const stored = await findEvent(s.db, { apiUrl: `${BASE_URL}${API}`, geoloc: false, timeZone: 'UTC' }, { id: created.id }, undefined)
  const record = stored?.record as Event
  t.strictSame(Object.keys(record), EVENT_KEYS)
  t.strictSame(Object.keys(record.venue[0] as object), VENUE_KEYS)
  t.strictSame(Object.keys(record.organizer[0] as object), ORGANIZER_KEYS)
  // An occurrence without an override changes these members of its series' record, and no other (here all of them: CEST after CET).
  const occurrence = occurrenceRecord(record, { id: '20260403T160000Z', startUtc: '2026-04-03 16:00:00', endUtc: '2026-04-03 19:00:00' }, null)
  t.strictSame(Object.keys(occurrence), EVENT_KEYS, 'in the same order')
  t.strictSame(EVENT_KEYS.filter((key) => JSON.stringify(occurrence[key as keyof Event]) !== JSON.stringify(record[key as keyof Event])), [...OCCURRENCE_KEYS])
})
