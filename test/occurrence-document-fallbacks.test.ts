/**
 * The checks of the reads made from a series' stored document (handlers/occurrence-documents.ts for one occurrence,
 * handlers/occurrence-list-items.ts for list items) and what happens when one fails: a document whose text is not
 * what they expect (another serializer's escapes or spacing, a JSON-LD without its dates, places moved) is not used,
 * and the answer is the assembled one, byte for byte (the same app without documents is the oracle), on both
 * engines. Then each check alone, on documents made from a stored one: the compact-JSON reader (`membersUpTo`), the
 * places of a series' values (`slotsOf`: kept per app, refused when they are not where a series has them), the
 * occurrence's answer (`occurrenceAnswer`), a list item's template (`unchangedItem`, `occurrenceFromDocument`).
 */
import { isDeepStrictEqual } from 'node:util'
import { gunzipSync } from 'node:zlib'
import t, { type Test } from 'tap'
import { buildApp } from '../src/app.js'
import { defaultConfig } from '../src/config.js'
import { createCompilers } from '../src/http/compilers.js'
import type { AppContext } from '../src/handlers/context.js'
import type { ListedDocument } from '../src/handlers/event-documents.js'
import { membersUpTo, OCCURRENCE_KEYS, occurrenceAnswer, slotsOf } from '../src/handlers/occurrence-documents.js'
import { occurrenceFromDocument, occurrencesMadeFromDocuments, unchangedItem } from '../src/handlers/occurrence-list-items.js'
import type { EventDocument } from '../src/repositories/event-documents.js'
import { API, API_URL, BASE_URL, NOW } from './helpers/build.js'
import { SPEC } from './helpers/contract.js'
import { EVENTS, eventBody, setup, type Setup } from './helpers/events.js'

/** The stored document of event `id` (read as the app reads it). */
async function storedDocument(t: Test, s: Setup, id: number): Promise<EventDocument> {
  await s.app.fillEventDocuments()
  await s.app.eventDocuments.settled()
  const read = await s.app.eventDocuments.read(id, API_URL)
  if (read === undefined || !read.found) throw new Error(`no document for ${id}`)
  return read.document
}

/** `document` with `from`..`to` of its body replaced by `text`, its offsets after it moved along. */
function spliced(document: EventDocument, from: number, to: number, text: string): EventDocument {
  const inserted = Buffer.from(text)
  const body = Buffer.concat([document.body.subarray(0, from), inserted, document.body.subarray(to)])
  const delta = inserted.length - (to - from)
  const moved = (at: number) => (at >= to ? at + delta : at)
  return { ...document, body, categoryAt: moved(document.categoryAt), tagAt: moved(document.tagAt), ldFrom: moved(document.ldFrom), ldTo: moved(document.ldTo) }
}

/** `document` with the first `find` in its body replaced by `replace`. */
function replaced(document: EventDocument, find: string, replace: string): EventDocument {
  const at = document.body.indexOf(find)
  if (at < 0) throw new Error(`${find} is not in the document`)
  return spliced(document, at, at + Buffer.byteLength(find), replace)
}

/** Writes `document`'s body and places into the event's stored row, as another node's serializer might have. */
async function store(s: Setup, document: EventDocument): Promise<void> {
  await s.db.updateTable('event_documents').set({
    body: document.body, category_at: document.categoryAt, tag_at: document.tagAt, ld_from: document.ldFrom, ld_to: document.ldTo,
  }).where('event_id', '=', document.id).execute()
}

const occurrencesOf = async (s: Setup, id: number): Promise<string[]> =>
  (await s.db.selectFrom('event_occurrences').select('occurrence').where('event_id', '=', id).orderBy('start_utc').execute()).map((r) => r.occurrence)

/** A series with a venue, an organizer, terms, one occurrence overridden; documents on, no read cache; the oracle beside. */
async function seriesWithOracle(t: Test) {
  const s = await setup(t, { config: { cacheEntries: 0 } })
  const oracle = await buildApp({ db: s.db, config: defaultConfig({ publicUrl: BASE_URL, cacheEntries: 0, eventDocuments: false }), now: () => NOW, spec: SPEC, compilers: createCompilers() })
  t.teardown(() => oracle.close())
  const venue = await s.venue({ venue: 'Hall', city: 'Vienna' })
  const annex = await s.venue({ venue: 'Annex' })
  const organizer = await s.inject({ method: 'POST', url: `${API}/organizers`, headers: s.editor, payload: { organizer: 'Club' } })
  const jazz = await s.category('Jazz')
  const series = await s.create(eventBody({ title: 'Night', timezone: 'Europe/Berlin', start_date: '2026-03-20 20:00:00', end_date: '2026-03-20 23:00:00',
    venue: [venue.id, annex.id], organizer: [organizer.json<{ id: number }>().id], categories: [jazz.id], recurrence: { rule: 'FREQ=WEEKLY;COUNT=6' } }))
  const occurrences = await occurrencesOf(s, series.id)
  const patched = await s.inject({ method: 'PATCH', url: `${EVENTS}/${series.id}/occurrences/${occurrences[2]}`, headers: s.editor, payload: { title: 'Special' } })
  t.equal(patched.statusCode, 200, 'an occurrence overridden')
  const document = await storedDocument(t, s, series.id)
  /**
   * Every occurrence read (plain, If-None-Match, gzip) and the list, against the oracle; how many differ. With
   * `occurrencesAsJson`, a single occurrence's body need only be the same JSON (its ETag and status the same bytes):
   * a stored document's bytes are trusted as `GET /events/{id}` trusts them.
   */
  const compareAll = async (label: string, lists = true, occurrencesAsJson = false): Promise<number> => {
    let differ = 0
    const json = (res: { rawPayload: Buffer; headers: Record<string, unknown> }): unknown =>
      JSON.parse((res.headers['content-encoding'] === 'gzip' ? gunzipSync(res.rawPayload) : res.rawPayload).toString('utf8') || 'null')
    const same = async (url: string, headers: Record<string, string> = {}) => {
      const [a, b] = [await s.inject({ url, headers }), await oracle.inject({ url, headers })]
      const bodies = occurrencesAsJson && url.includes('/occurrences/') ? isDeepStrictEqual(json(a), json(b)) : a.rawPayload.equals(b.rawPayload)
      if (a.statusCode !== b.statusCode || !bodies || a.headers.etag !== b.headers.etag || a.headers['x-total'] !== b.headers['x-total']) {
        differ += 1
        t.fail(`${label}: ${url} ${JSON.stringify(headers)} differs from the assembled answer`, { new: [a.statusCode, a.headers.etag, a.body.slice(0, 600)], old: [b.statusCode, b.headers.etag, b.body.slice(0, 600)] })
      }
      return a
    }
    for (const occurrence of occurrences) {
      const url = `${EVENTS}/${series.id}/occurrences/${occurrence}`
      const res = await same(url)
      if (typeof res.headers.etag === 'string') await same(url, { 'if-none-match': res.headers.etag })
      await same(url, { 'accept-encoding': 'gzip' })
    }
    if (lists) {
      await same(`${EVENTS}?start_date=2026-01-01&end_date=2026-12-31`)
      await same(`${EVENTS}?start_date=2026-01-01&end_date=2026-12-31&per_page=2&page=2`)
    }
    return differ
  }
  return { s, oracle, series, occurrences, document, compareAll }
}

t.test('a stored document another serializer wrote otherwise is not used: every occurrence and list item is the assembled answer', async (t) => {
  const cases: Array<{ what: string; change: (d: EventDocument) => EventDocument; trusted?: true }> = [
    // The same record, a member written with an escape: a list item's template refuses it; one occurrence's read
    // answers the document's bytes with its values put in, as `GET /events/{id}` answers the document (the same JSON).
    { what: 'a title written with an escape', change: (d) => replaced(d, '"title":"Night"', '"title":"\\u004eight"'), trusted: true },
    // The same record, a space after a key's colon: no compact member, no template.
    { what: 'a space after "start_date":', change: (d) => replaced(d, '"start_date":"', '"start_date": "') },
    // The JSON-LD without its dates (outside the digest): the text cannot be edited, the record read back from it.
    { what: 'a JSON-LD without startDate', change: (d) => replaced(d, '"startDate":', '"startDateX":') },
  ]
  for (const { what, change, trusted } of cases) {
    await t.test(what, async (t) => {
      const { s, document, compareAll } = await seriesWithOracle(t)
      // As stored, the occurrences only: no list item made yet in this app, so that the first is checked on the changed document.
      t.equal(await compareAll('as stored', false), 0, 'as stored: the assembled answers')
      const made = occurrencesMadeFromDocuments()
      await store(s, change(document))
      t.equal(await compareAll(what, true, trusted), 0, `${what}: the assembled answers`)
      if (trusted) {
        const read = await s.inject({ url: `${EVENTS}/${document.id}` })
        t.match(read.body, '"title":"\\u004eight"', `${what}: the series' own read answers the stored bytes too`)
      }
      if (what !== 'a JSON-LD without startDate') t.equal(occurrencesMadeFromDocuments(), made, 'no list item made from the document')
    })
  }
})

t.test('membersUpTo reads compact JSON objects only, up to the last member wanted', async (t) => {
  const text = '{"a":1,"b":"x\\"}","c":{"d":[1,{"e":"]"}]},"f":[],"g":null}'
  const bytes = Buffer.from(text)
  const spans = (members: Map<string, readonly [number, number]> | undefined) => [...(members ?? new Map<string, readonly [number, number]>())].map(([key, [from, to]]) => [key, text.slice(from, to)])
  t.same(spans(membersUpTo(bytes, 0, ['a', 'b', 'c', 'f', 'g'])), [['a', '1'], ['b', '"x\\"}"'], ['c', '{"d":[1,{"e":"]"}]}'], ['f', '[]'], ['g', 'null']])
  t.same(spans(membersUpTo(bytes, 0, ['b'])), [['b', '"x\\"}"']], 'one member: read up to it')
  t.same([...(membersUpTo(Buffer.from('x{"k":"v"}y'), 1, ['k']) ?? [])], [['k', [6, 9]]], 'an object inside a text')
  t.equal(membersUpTo(bytes, 0, ['a', 'z']), undefined, 'a member missing')
  t.equal(membersUpTo(Buffer.from('{"a":1,"a":2,"b":3}'), 0, ['a', 'b']), undefined, 'a member twice')
  for (const bad of ['[]', '{"a":1', '{ "a":1}', '{"a}', '{"a"1}', '{"a":"b}', '{"a":{"b":"c}}', '{"a":{{}', '{"a\\"":1}', '{"a":{"b":1}']) {
    t.equal(membersUpTo(Buffer.from(bad), 0, ['a', 'z']), undefined, bad)
  }
})

t.test("slotsOf: the places an occurrence's values go, found once a document, refused when they are not where a series has them", async (t) => {
  const { document } = await seriesWithOracle(t)
  const ctx = {} as AppContext
  const slots = slotsOf(ctx, document)
  t.ok(slots !== null, 'the stored document')
  if (slots === null) return
  const text = (span: readonly [number, number]) => document.body.toString('utf8', span[0], span[1])
  t.same(slots.members.map(text), OCCURRENCE_KEYS.map((key) => key === 'occurrence' ? 'null' : JSON.stringify((JSON.parse(document.body.toString('utf8')) as Record<string, unknown>)[key])),
    'each member\'s value as the document has it')
  const ld = (JSON.parse(document.body.toString('utf8')) as { json_ld: { startDate: string; endDate: string } }).json_ld
  t.same([text(slots.ldStart), text(slots.ldEnd)], [JSON.stringify(ld.startDate), JSON.stringify(ld.endDate)], 'the JSON-LD\'s dates')
  t.equal(slotsOf(ctx, document), slots, 'kept while the document is the same')
  t.not(slotsOf(ctx, { ...document, version: document.version + 1 }), slots, 'found again for another version')
  const pretty: EventDocument = { ...document, body: Buffer.from(JSON.stringify(JSON.parse(document.body.toString('utf8')), null, 1)) }
  const refused: Array<[string, EventDocument]> = [
    ['not compact', pretty],
    ['a space before a member\'s colon', replaced(document, '"title":"Night"', '"title" :"Night"')],
    ['no json_ld where the document says', replaced(document, ',"json_ld":', ',"json_lx":')],
    ['a JSON-LD without startDate', replaced(document, '"startDate":', '"startDateX":')],
    ['"occurrence" not null before the JSON-LD', replaced(document, '"occurrence":null', '"occurrence": null')],
    ['a member missing', replaced(document, '"timezone_abbr":', '"timezone_abbx":')],
    ['a time zone not a string', replaced(document, '"timezone":"Europe/Berlin"', '"timezone":1')],
    ['all_day not a boolean', replaced(document, '"all_day":false', '"all_day":0')],
    ['a term\'s array inside a value', { ...document, categoryAt: slots.members[0]?.[0] ?? 0 }],
  ]
  for (const [what, changed] of refused) t.equal(slotsOf({} as AppContext, changed), null, what)
})

t.test('occurrenceAnswer: none with a contract that lacks the members; else the assembled bytes', async (t) => {
  const { document, occurrences } = await seriesWithOracle(t)
  const ctx = { spec: SPEC, json: { category: () => '{}', tag: () => '{}' } } as unknown as AppContext
  const state = { id: occurrences[0] as string, startUtc: '2026-03-20 19:00:00', endUtc: '2026-03-20 22:00:00' }
  const slots = slotsOf(ctx, document)
  t.ok(slots !== null, 'slots')
  if (slots === null) return
  const answer = occurrenceAnswer(ctx, document, slots, state, [], [], '"e"')
  t.ok(answer !== undefined, 'the stored document answers')
  const noSchema = { spec: { document: { components: { schemas: { Event: { properties: {} } } } } } } as unknown as AppContext
  t.equal(occurrenceAnswer(noSchema, document, slots, state, [], [], '"e"'), undefined, 'a contract without the members')
})

t.test('a list item\'s template: made only when the values are where they should be, once, and each alone', async (t) => {
  const { s, document, series, occurrences } = await seriesWithOracle(t)
  const allDay = await s.create(eventBody({ title: 'Fair', all_day: true, timezone: 'Europe/Berlin', start_date: '2026-03-27', end_date: '2026-03-28', recurrence: { rule: 'FREQ=WEEKLY;COUNT=3' } }))
  const single = await s.event('Once')
  const allDayDocument = await storedDocument(t, s, allDay.id)
  const singleDocument = await storedDocument(t, s, single.id)
  // An app whose first item of a kind, checked against the Event serializer, never matches: the edits are still made.
  const ctx = () => ({ json: { event: () => Buffer.from('(the long way)') } }) as unknown as AppContext
  const id = occurrences[1] as string
  const row = await s.db.selectFrom('event_occurrences').select(['start_utc', 'end_utc']).where('event_id', '=', series.id).where('occurrence', '=', id).executeTakeFirstOrThrow()
  /**
   * The text `unchangedItem` would put into the document for occurrence `id` (its edits' bytes, as given to the
   * page's list form), or undefined when it makes none (the row is then read and the item made the long way).
   */
  const madeFromId = (one: AppContext, d: EventDocument, occurrence: string): string | undefined => {
    let text: string | undefined
    const listed: ListedDocument = (_d, edits) => {
      text ??= (edits ?? []).map(([, , bytes]) => Buffer.concat(bytes).toString('utf8')).join('|')
      return [] as unknown as ReturnType<ListedDocument>
    }
    unchangedItem(one, listed, d, occurrence)
    return text
  }
  /** Whether `text` holds the UTC dates of `r`. */
  const holds = (text: string | undefined, r: { start_utc: string; end_utc: string }) =>
    text !== undefined && text.includes(`"utc_start_date":"${r.start_utc}"`) && text.includes(`"utc_end_date":"${r.end_utc}"`)
  t.ok(holds(madeFromId(ctx(), document, id), row), 'the stored document: the row its id names')
  const body = document.body.toString('utf8')
  const datesAt = Buffer.byteLength(body.slice(0, body.indexOf('"start_date":')))
  const refused: Array<[string, EventDocument]> = [
    ['not JSON', { ...document, body: Buffer.from('{"title":') }],
    ['a single event', singleDocument],
    ['an occurrence\'s own document', replaced(document, '"occurrence":null', '"occurrence":{"occurrence":null}')],
    ['"start_date": twice', replaced(document, '"json_ld":{', '"json_ld":{"start_date":1,')],
    ['the dates not followed by the time zone', replaced(document, ',"timezone":', ',"timezonX":')],
    ['"timezone_abbr": twice', replaced(document, '"json_ld":{', '"json_ld":{"timezone_abbr":1,')],
    ['no "occurrence":null', replaced(document, '"occurrence":null', '"occurrence": null')],
    ['a term\'s array inside the dates', { ...document, categoryAt: datesAt + 2 }],
    ['the JSON-LD over the dates', { ...document, ldFrom: 0, ldTo: document.body.length }],
  ]
  // The series' own UTC dates not dates: no row is made from an id (its duration is not known), an item from a row
  // read still is (the occurrence's dates replace the series'; the first of its kind is checked the long way).
  t.equal(madeFromId(ctx(), replaced(document, /"utc_start_date":"[^"]*"/.exec(body)?.[0] ?? '', '"utc_start_date":"soon"'), id), undefined, 'UTC dates that are not dates')
  for (const [what, changed] of refused) {
    const one = ctx()
    t.equal(madeFromId(one, changed, id), undefined, what)
    const listed: ListedDocument = () => { throw new Error('not to be listed') }
    t.equal(occurrenceFromDocument(one, listed, changed, { id, startUtc: row.start_utc, endUtc: row.end_utc }), undefined, `${what}: no list item`)
  }
  const allDayIds = await occurrencesOf(s, allDay.id)
  const allDayRow = await s.db.selectFrom('event_occurrences').select(['start_utc', 'end_utc']).where('event_id', '=', allDay.id).where('occurrence', '=', allDayIds[1] as string).executeTakeFirstOrThrow()
  t.ok(holds(madeFromId(ctx(), allDayDocument, allDayIds[1] as string), allDayRow), 'an all-day series: its row made from its id too')
  t.equal(madeFromId(ctx(), allDayDocument, `${allDayIds[1]}T000000Z`), undefined, 'an all-day series asked for a timed id')
  t.equal(madeFromId(ctx(), document, 'nonsense'), undefined, 'an id that names no start')
  t.equal(madeFromId(ctx(), document, '99991231T230000Z'), undefined, 'an end past the last representable year')

  // Templates kept per app at most 4096, the oldest made dropped first: a series whose document could not make one
  // is tried again once it was dropped.
  const one = ctx()
  const broken = replaced(document, '"occurrence":null', '"occurrence": null')
  t.equal(madeFromId(one, broken, id), undefined, 'no template')
  t.equal(madeFromId(one, document, id), undefined, 'kept: still none for that series')
  for (let other = 1; other <= 4096; other++) madeFromId(one, { ...document, id: 2_000_000 + other }, id)
  t.ok(holds(madeFromId(one, document, id), row), 'dropped after 4096 others: made again')
})
