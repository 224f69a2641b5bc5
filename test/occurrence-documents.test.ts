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
import { OCCURRENCE_KEYS, occurrenceAnswersWritten } from '../src/handlers/occurrence-documents.js'
import { occurrenceRecord } from '../src/lib/occurrence-view.js'
import { findEvent } from '../src/repositories/event-records.js'
import { createCompilers } from '../src/http/compilers.js'
import { occurrenceEtag, unchangedOccurrenceDates } from '../src/http/etag.js'
import { dateDetails } from '../src/lib/dates.js'
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
  let unchanged = 0
  let written = 0
  for (const event of series) {
    for (const occurrence of await occurrencesOf(event.id)) {
      const path = `${EVENTS}/${event.id}/occurrences/${occurrence}`
      statements.length = 0
      const before = occurrenceAnswersWritten()
      const { res, same } = await compare(path)
      compared += 1
      if (!same) differ += 1
      // The anonymous read of a published series without a password: no series assembled (no `select e.*`), and
      // for an occurrence without an override, from the document's text (no second read of the occurrence), its values
      // written straight into bytes (`fastAnswer`: the long way never taken instead).
      const overridden = overrides.some(([id, o]) => id === event.id && o === occurrence)
      if (res.statusCode === 200 && !statements.some((st) => /^select e\.\*/.test(st.sql) || (!overridden && /^select o\.event_id/.test(st.sql)))) fromDocuments += 1
      if (res.statusCode === 200 && !overridden) unchanged += 1
      if (occurrenceAnswersWritten() === before + 1) written += 1
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
  t.equal(written, unchanged, `all ${unchanged} readable occurrences without an override written straight into bytes`)
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

t.test('an occurrence\'s ETag changes with everything its answer shows, read from the document or assembled', async (t) => {
  const s = await setup(t, { file: join(t.testdir(), 'calendar.db') })
  const handle = await openDatabase(s.url)
  t.teardown(() => handle.close())
  // The old way beside it (no documents: every read assembles), which must agree on every answer and ETag.
  const old = await buildApp({ db: handle.db, config: defaultConfig({ publicUrl: BASE_URL, eventDocuments: false }), now: () => NOW, spec: SPEC, compilers: createCompilers() })
  t.teardown(() => old.close())
  const hall = await s.venue({ venue: 'Hall' })
  const annex = await s.venue({ venue: 'Annex' })
  const jazz = await s.category('Jazz')
  const late = await s.tag('late')
  const series = await s.create(eventBody({ title: 'Weekly', timezone: 'Europe/Berlin', start_date: '2026-03-20 20:30:00', end_date: '2026-03-20 23:00:00',
    venue: [hall.id], categories: [jazz.id], tags: [late.id], recurrence: { rule: 'FREQ=WEEKLY;COUNT=10' } }))
  const ids = (await s.db.selectFrom('event_occurrences').select('occurrence').where('event_id', '=', series.id).orderBy('start_utc').execute()).map((r) => r.occurrence)
  const [first, second] = ids as [string, string]
  const path = (occurrence: string, query = '') => `${EVENTS}/${series.id}/occurrences/${occurrence}${query}`
  const seen: Array<{ what: string; etag: string; body: string }> = []

  /** The answer now (its document made first, so that the anonymous read is made from it), checked against every earlier one. */
  const read = async (what: string, occurrence = first, query = '', headers: Record<string, string> = {}) => {
    await s.app.fillEventDocuments()
    await s.app.eventDocuments.settled()
    const res = await s.inject({ url: path(occurrence, query), headers })
    const assembled = await old.inject({ url: path(occurrence, query), headers })
    t.equal(res.statusCode, 200, `${what}: 200`)
    const etag = res.headers.etag as string
    t.ok(res.rawPayload.equals(assembled.rawPayload) && etag === assembled.headers.etag, `${what}: the assembled answer's bytes and ETag`)
    for (const before of seen) {
      if (before.body !== res.body) t.not(etag, before.etag, `${what}: another ETag than ${before.what}'s (other bytes)`)
      else if (before.etag === etag) t.pass(`${what}: ${before.what}'s bytes and ETag`)
    }
    // No earlier ETag of other bytes is answered 304; the current one is, in the form held (`W/`, a coding).
    const stale = seen.filter((b) => b.body !== res.body).map((b) => b.etag)
    if (stale.length > 0) {
      for (const app of [s, old]) {
        const again = await app.inject({ url: path(occurrence, query), headers: { ...headers, 'if-none-match': stale.join(', ') } })
        t.equal(again.statusCode, 200, `${what}: 200 for the ETags of other bytes`)
      }
    }
    const held = await s.inject({ url: path(occurrence, query), headers: { ...headers, 'if-none-match': `W/${etag}` } })
    t.equal(held.statusCode, 304, `${what}: 304 for its own ETag`)
    seen.push({ what, etag, body: res.body })
    return res
  }

  await read('the first occurrence')
  await read('another occurrence', second)
  t.equal((await s.patch(series.id, { title: 'Weekly, renamed' })).statusCode, 200, 'the series renamed')
  await read('the series renamed')
  t.equal((await s.inject({ method: 'PATCH', url: `${API}/categories/${jazz.id}`, headers: s.editor, payload: { name: 'Jazz & Soul' } })).statusCode, 200, 'the category renamed')
  await read('its category renamed')
  t.equal((await s.inject({ method: 'PATCH', url: `${API}/tags/${late.id}`, headers: s.editor, payload: { name: 'later' } })).statusCode, 200, 'the tag renamed')
  await read('its tag renamed')
  t.equal((await s.inject({ method: 'PATCH', url: `${API}/venues/${hall.id}`, headers: s.editor, payload: { venue: 'Great Hall' } })).statusCode, 200, 'the venue renamed')
  await read('its venue renamed')
  // The occurrence's row alone (its dates), the series and its document as they were: only the occurrence's members tell.
  const moved = await s.db.selectFrom('event_occurrences').select(['start_utc', 'end_utc']).where('event_id', '=', series.id).where('occurrence', '=', first).executeTakeFirstOrThrow()
  await s.db.updateTable('event_occurrences').set({ start_utc: '2026-03-20 20:30:00', end_utc: '2026-03-20 23:30:00' })
    .where('event_id', '=', series.id).where('occurrence', '=', first).execute()
  const movedAnswer = await read('its row\'s dates alone moved')
  t.equal(movedAnswer.json<Event>().utc_end_date, '2026-03-20 23:30:00', 'the moved dates shown')
  await s.db.updateTable('event_occurrences').set(moved).where('event_id', '=', series.id).where('occurrence', '=', first).execute()
  await read('its row\'s dates back')
  const override = (payload: Record<string, unknown>) => s.inject({ method: 'PATCH', url: path(first), headers: s.editor, payload })
  t.equal((await override({ title: 'Special' })).statusCode, 200, 'an override')
  await read('an override')
  t.equal((await override({ venue: [annex.id] })).statusCode, 200, 'the override changed')
  await read('the override changed')
  t.equal((await s.inject({ method: 'PATCH', url: `${API}/venues/${annex.id}`, headers: s.editor, payload: { venue: 'Small Annex' } })).statusCode, 200, 'its venue renamed')
  await read('the override\'s venue renamed')
  await read('an occurrence without an override', second)
  const de = await s.create(eventBody({ title: 'Wöchentlich', translation_of: series.id, timezone: 'Europe/Berlin', start_date: '2026-03-20 20:30:00',
    end_date: '2026-03-20 23:00:00', recurrence: { rule: 'FREQ=WEEKLY;COUNT=10' } }), s.editor, '?ml_language=de')
  t.ok(de.id > 0, 'a translation')
  await read('in another language', second, '?ml_language=de')
  const gzip = await s.inject({ url: path(second), headers: { 'accept-encoding': 'gzip' } })
  const plain = await s.inject({ url: path(second) })
  t.equal(gzip.headers.etag, `${(plain.headers.etag as string).slice(0, -1)}-gzip"`, 'compressed: the ETag names its coding')
  t.equal((await s.inject({ url: path(second), headers: { 'if-none-match': gzip.headers.etag as string } })).statusCode, 304, 'either form is 304')
})

t.test('occurrenceEtag: each of its inputs, and each text an occurrence\'s members are made of, changes it', async (t) => {
  const s = await setup(t)
  const created = await s.create(eventBody({ timezone: 'Europe/Berlin', start_date: '2026-03-20 18:00:00', end_date: '2026-03-20 21:00:00',
    recurrence: { rule: 'FREQ=WEEKLY;COUNT=3' } }))
  const stored = await findEvent(s.db, { apiUrl: `${BASE_URL}${API}`, geoloc: false, timeZone: 'UTC' }, { id: created.id }, undefined)
  const series = stored?.record as Event
  const state = { id: '20260327T170000Z', startUtc: '2026-03-27 17:00:00', endUtc: '2026-03-27 20:00:00' }
  const record = occurrenceRecord(series, state, null)
  const base = occurrenceEtag('"event-1-1-a"', series.id, 1, state.id, 0, record)
  t.not(occurrenceEtag('"event-1-1-b"', series.id, 1, state.id, 0, record), base, 'the series\' ETag')
  t.not(occurrenceEtag('"event-1-1-a"', series.id, 2, state.id, 0, record), base, 'the series\' version')
  t.not(occurrenceEtag('"event-1-1-a"', series.id, 1, '20260403T160000Z', 0, record), base, 'the occurrence id')
  t.not(occurrenceEtag('"event-1-1-a"', series.id, 1, state.id, 1, record), base, 'the override\'s version')
  const texts: Array<[string, (r: Event) => Event]> = [
    ['start_date', (r) => ({ ...r, start_date: '2026-03-27 19:00:00' })],
    ['end_date', (r) => ({ ...r, end_date: '2026-03-27 22:00:00' })],
    ['utc_start_date', (r) => ({ ...r, utc_start_date: '2026-03-27 18:00:00' })],
    ['utc_end_date', (r) => ({ ...r, utc_end_date: '2026-03-27 21:00:00' })],
    ['timezone_abbr', (r) => ({ ...r, timezone_abbr: 'CEST' })],
    ['original_start_date', (r) => ({ ...r, occurrence: { ...r.occurrence, original_start_date: '2026-03-27 19:00:00' } as Event['occurrence'] })],
    ['original_utc_start_date', (r) => ({ ...r, occurrence: { ...r.occurrence, original_utc_start_date: '2026-03-27 18:00:00' } as Event['occurrence'] })],
  ]
  const seen = new Set([base])
  for (const [what, change] of texts) {
    const etag = occurrenceEtag('"event-1-1-a"', series.id, 1, state.id, 0, change(record))
    t.notOk(seen.has(etag), `its ${what}`)
    seen.add(etag)
  }
  // With an override, every member of the record counts (its texts, venues and organizers may be its own).
  const overridden = occurrenceRecord(series, state, { title: 'Special' })
  const withOverride = occurrenceEtag('"event-1-1-a"', series.id, 1, state.id, 1, overridden)
  t.not(occurrenceEtag('"event-1-1-a"', series.id, 1, state.id, 1, { ...overridden, title: 'Other' }), withOverride, 'an overridden one\'s title')
  t.not(occurrenceEtag('"event-1-1-a"', series.id, 1, state.id, 1, { ...overridden, cost: 'EUR 5' }), withOverride, 'an overridden one\'s cost')
})

t.test('an occurrence\'s ten members are made of the texts its ETag names, its id and its series\' record', async (t) => {
  // What lets the ETag name seven short texts instead of the ten members: the rest of each member is a function of them.
  const s = await setup(t)
  const made: Array<Record<string, unknown>> = [
    { timezone: 'Europe/Berlin', start_date: '2026-03-20 18:00:00', end_date: '2026-03-20 21:00:00', recurrence: { rule: 'FREQ=WEEKLY;COUNT=12' } },
    { timezone: 'America/New_York', start_date: '2026-10-28 01:30:00', end_date: '2026-10-28 03:00:00', recurrence: { rule: 'FREQ=DAILY;COUNT=12' } },
    { timezone: 'Australia/Lord_Howe', start_date: '2026-03-30 01:45:00', end_date: '2026-03-31 02:15:00', recurrence: { rule: 'FREQ=WEEKLY;COUNT=30' } },
    { all_day: true, timezone: 'Europe/Berlin', start_date: '2026-03-27', end_date: '2026-03-29', recurrence: { rule: 'FREQ=WEEKLY;COUNT=8' } },
  ]
  let checked = 0
  for (const fields of made) {
    const created = await s.create(eventBody(fields))
    const stored = await findEvent(s.db, { apiUrl: `${BASE_URL}${API}`, geoloc: false, timeZone: 'UTC' }, { id: created.id }, undefined)
    const series = stored?.record as Event
    const rows = await s.db.selectFrom('event_occurrences').select(['occurrence', 'start_utc', 'end_utc']).where('event_id', '=', created.id).execute()
    for (const row of rows) {
      const record = occurrenceRecord(series, { id: row.occurrence, startUtc: row.start_utc, endUtc: row.end_utc }, null)
      const [startDate, endDate, utcStart, utcEnd, abbr, originalStart, originalUtcStart] = unchangedOccurrenceDates(record) as string[]
      const rebuilt = {
        start_date: startDate, start_date_details: dateDetails(startDate as string), end_date: endDate, end_date_details: dateDetails(endDate as string),
        utc_start_date: utcStart, utc_start_date_details: dateDetails(utcStart as string), utc_end_date: utcEnd, utc_end_date_details: dateDetails(utcEnd as string),
        timezone_abbr: abbr,
        occurrence: { id: row.occurrence, original_start_date: originalStart, original_utc_start_date: originalUtcStart, overridden: false, rest_url: `${series.rest_url}/occurrences/${row.occurrence}` },
      }
      if (JSON.stringify(OCCURRENCE_KEYS.map((key) => record[key])) !== JSON.stringify(OCCURRENCE_KEYS.map((key) => rebuilt[key]))) t.fail(`${row.occurrence}: rebuilt`, { record, rebuilt })
      checked += 1
    }
  }
  t.equal(checked, 62, 'every occurrence\'s members rebuilt')
})
