/**
 * The checks of the reads made from a series' stored document (handlers/occurrence-documents.ts for one occurrence,
 * handlers/occurrence-list-items.ts for list items) and what happens when one fails: a document whose text is not
 * what they expect (another serializer's escapes or spacing, a JSON-LD without its dates, places moved) is not used,
 * and the answer is the assembled one, byte for byte (the same app without documents is the oracle), on both
 * engines. Then each check alone, on documents made from a stored one: the compact-JSON reader (`membersOf`), the
 * series' text and its proof (`seriesText`: the digest the document keeps), the remembered texts' bound, the
 * occurrence's answer (`occurrenceAnswer`), a list item's template (`unchangedOccurrence`, `occurrenceFromDocument`).
 */
import t, { type Test } from 'tap'
import { buildApp } from '../src/app.js'
import { defaultConfig } from '../src/config.js'
import { createCompilers } from '../src/http/compilers.js'
import { eventDigest, textDigest } from '../src/http/etag.js'
import type { AppContext } from '../src/handlers/context.js'
import { EVENT_KEYS, ORGANIZER_KEYS, VENUE_KEYS, type ListedDocument } from '../src/handlers/event-documents.js'
import { membersOf, occurrenceAnswer, seriesText } from '../src/handlers/occurrence-documents.js'
import { occurrenceFromDocument, occurrencesMadeFromDocuments, unchangedOccurrence } from '../src/handlers/occurrence-list-items.js'
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

/** The record of a document's JSON in the assembled order (event-documents.ts `documentRecord`), terms as written. */
function assembledOrder(body: Buffer): Record<string, unknown> {
  const inOrder = (value: Record<string, unknown>, order: readonly string[]) => {
    const out: Record<string, unknown> = {}
    for (const key of order) if (key in value) out[key] = value[key]
    for (const key of Object.keys(value)) if (!order.includes(key) && key !== 'json_ld') out[key] = value[key]
    return out
  }
  const parsed = JSON.parse(body.toString('utf8')) as Record<string, unknown>
  for (const [name, order] of [['venue', VENUE_KEYS], ['organizer', ORGANIZER_KEYS]] as const) {
    const list = parsed[name]
    if (Array.isArray(list)) parsed[name] = list.map((item: unknown) => (typeof item === 'object' && item !== null ? inOrder(item as Record<string, unknown>, order) : item))
  }
  return inOrder(parsed, EVENT_KEYS)
}

/** The digest a document of this JSON keeps: its record's (terms left out). */
const digestOf = (body: Buffer): string => eventDigest(assembledOrder(body) as unknown as Parameters<typeof eventDigest>[0])

/** `replaced`, with the digest of its new JSON. */
function rewritten(document: EventDocument, find: string, replace: string): EventDocument {
  const changed = replaced(document, find, replace)
  return { ...changed, digest: digestOf(changed.body) }
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
  /** Every occurrence read (plain, If-None-Match, gzip) and the list, against the oracle; how many differ. */
  const compareAll = async (label: string, lists = true): Promise<number> => {
    let differ = 0
    const same = async (url: string, headers: Record<string, string> = {}) => {
      const [a, b] = [await s.inject({ url, headers }), await oracle.inject({ url, headers })]
      if (a.statusCode !== b.statusCode || !a.rawPayload.equals(b.rawPayload) || a.headers.etag !== b.headers.etag || a.headers['x-total'] !== b.headers['x-total']) {
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
  const cases: Array<{ what: string; change: (d: EventDocument) => EventDocument }> = [
    // The same record, a member written with an escape: the text's digest is not the record's.
    { what: 'a title written with an escape', change: (d) => replaced(d, '"title":"Night"', '"title":"\\u004eight"') },
    // The same record, a space after a key's colon: no compact member, no template.
    { what: 'a space after "start_date":', change: (d) => replaced(d, '"start_date":"', '"start_date": "') },
    // The JSON-LD without its dates (outside the digest): the text cannot be edited, the record read back from it.
    { what: 'a JSON-LD without startDate', change: (d) => replaced(d, '"startDate":', '"startDateX":') },
  ]
  for (const { what, change } of cases) {
    await t.test(what, async (t) => {
      const { s, document, compareAll } = await seriesWithOracle(t)
      // As stored, the occurrences only: no list item made yet in this app, so that the first is checked on the changed document.
      t.equal(await compareAll('as stored', false), 0, 'as stored: the assembled answers')
      const made = occurrencesMadeFromDocuments()
      await store(s, change(document))
      t.equal(await compareAll(what), 0, `${what}: the assembled answers`)
      if (what !== 'a JSON-LD without startDate') t.equal(occurrencesMadeFromDocuments(), made, 'no list item made from the document')
    })
  }
})

t.test('membersOf reads compact JSON objects only', async (t) => {
  const text = '{"a":1,"b":"x\\"}","c":{"d":[1,{"e":"]"}]},"f":[],"g":null}'
  const members = membersOf(text, [0, text.length])
  t.same([...(members ?? new Map<string, [number, number]>())].map(([key, [from, to]]) => [key, text.slice(from, to)]),
    [['a', '1'], ['b', '"x\\"}"'], ['c', '{"d":[1,{"e":"]"}]}'], ['f', '[]'], ['g', 'null']])
  t.same(membersOf('{}', [0, 2]), new Map(), 'an empty object')
  const inner = 'x{"k":"v"}y'
  t.same([...(membersOf(inner, [1, inner.length - 1]) ?? [])], [['k', [6, 9]]], 'an object inside a text')
  for (const bad of ['[]', '{"a":1', '{ "a":1}', '{"a}', '{"a"1}', '{"a":"b}', '{"a":{"b":"c}}', '{"a":{{}', '{"a\\"":1}', '{"a":1,"a":2}', '{"a":{"b":1}']) {
    t.equal(membersOf(bad, [0, bad.length]), undefined, bad)
  }
})

t.test('seriesText: the document\'s text used only when its pieces make the digest it keeps', async (t) => {
  const { document } = await seriesWithOracle(t)
  const text = seriesText(document)
  t.ok(text !== undefined, 'the stored document')
  t.equal(textDigest(`{${text?.pieces.join(',')}}`), document.digest)
  t.equal(seriesText(document), text, 'remembered while its bytes are the same')
  const body = document.body.toString('utf8')
  const venueSpan = membersOf(body, [0, body.length])?.get('venue') ?? [0, 0]
  const venues = body.slice(venueSpan[0], venueSpan[1])
  t.match(venues, /^\[\{.*\},\{.*\}\]$/, 'two venues')
  const pretty: EventDocument = { ...document, body: Buffer.from(JSON.stringify(JSON.parse(document.body.toString('utf8')), null, 1)) }
  const refused: Array<[string, EventDocument]> = [
    ['not compact', pretty],
    ['no json_ld', rewritten(document, '"json_ld":', '"json_lx":')],
    ['a member missing, another in its place', rewritten(document, '"title":', '"titlx":')],
    ['the venues not an array', rewritten(document, `"venue":${venues}`, '"venue":{}')],
    ['a venue not an object', rewritten(document, `"venue":${venues}`, '"venue":[1]')],
    ['venues with a space instead of a comma between them', replaced(document, `"venue":${venues}`, `"venue":${venues.replace('},{', '} {')}`)],
    ['a member the record does not have', replaced(document, '"json_ld":', '"extra":1,"json_ld":')],
    ['a member written with an escape (the digest kept is the record\'s)', replaced(document, '"title":"Night"', '"title":"\\u004eight"')],
    ['a time zone not a string', rewritten(document, '"timezone":"Europe/Berlin"', '"timezone":1')],
  ]
  for (const [what, changed] of refused) t.equal(seriesText({ ...changed, id: document.id + 1000 }), undefined, what)
  // A venue's member that the order does not name goes after the others, as the assembled record has it.
  const extra = rewritten(document, '"venue":[{', '"venue":[{"zz":1,')
  const read = seriesText({ ...extra, id: document.id + 2000 })
  t.ok(read !== undefined, 'a venue with a member of its own')
  t.match(read?.pieces.find((p) => p.startsWith('"venue":')), /^"venue":\[\{"id".*"geo_lng":[^,]*,"zz":1\},\{"id"/)
  // A JSON-LD without its dates: read, but no answer is made from it.
  const noDates = seriesText({ ...replaced(document, '"startDate":', '"startDateX":'), id: document.id + 3000 })
  t.ok(noDates !== undefined && noDates.ldDates === undefined, 'no JSON-LD dates')
})

t.test('seriesText remembers at most 8 MB of documents, the least recently used dropped first', async (t) => {
  const { document } = await seriesWithOracle(t)
  const big = rewritten(document, '"excerpt":null', `"excerpt":"${'x'.repeat(1_000_000)}"`)
  const first = seriesText({ ...big, id: 1_000_001 })
  const second = seriesText({ ...big, id: 1_000_002 })
  t.ok(first !== undefined && second !== undefined)
  for (let id = 1_000_003; id <= 1_000_008; id++) seriesText({ ...big, id })
  t.equal(seriesText({ ...big, id: 1_000_001 }), first, 'still remembered at 8 documents of 1 MB (8 MB is 8 MiB) (and used last now)')
  seriesText({ ...big, id: 1_000_009 })
  const again = seriesText({ ...big, id: 1_000_002 })
  t.not(again, second, 'the least recently used dropped for the ninth')
  t.same(again?.pieces, second?.pieces, 'read again the same')
  t.equal(seriesText({ ...big, id: 1_000_001 }), first, 'the one used since kept')
})

t.test('occurrenceAnswer: none from a document it cannot edit, or with a contract that lacks the members', async (t) => {
  const { s, document, occurrences } = await seriesWithOracle(t)
  const ctx = { spec: SPEC, json: { category: () => '{}', tag: () => '{}' } } as unknown as AppContext
  const state = { id: occurrences[0] as string, startUtc: '2026-03-20 19:00:00', endUtc: '2026-03-20 22:00:00' }
  const text = seriesText(document)
  t.ok(text !== undefined && occurrenceAnswer(ctx, document, text, state, [], [], '"e"') !== undefined, 'the stored document answers')
  const noSchema = { spec: { document: { components: { schemas: { Event: { properties: {} } } } } } } as unknown as AppContext
  if (text !== undefined) t.equal(occurrenceAnswer(noSchema, document, text, state, [], [], '"e"'), undefined, 'a contract without the members')
  const noDates = { ...replaced(document, '"startDate":', '"startDateX":'), id: document.id + 4000 }
  const noDatesText = seriesText(noDates)
  if (noDatesText !== undefined) t.equal(occurrenceAnswer(ctx, noDates, noDatesText, state, [], [], '"e"'), undefined, 'a JSON-LD without its dates')
  // Terms written in the document (they are stored empty, their records put in on each read): not edited.
  const withTerms = rewritten(document, '"categories":[]', '"categories":[1]')
  // Its digest made with the terms as written, so that the text is proved.
  const proved = { ...withTerms, id: document.id + 5000, digest: textDigest(JSON.stringify(assembledOrder(withTerms.body))) }
  const termsText = seriesText(proved)
  t.ok(termsText !== undefined, 'read')
  if (termsText !== undefined) t.equal(occurrenceAnswer(ctx, proved, termsText, state, [], [], '"e"'), undefined, 'terms written in the document')
  t.ok(s)
})

t.test('a list item\'s template: made only when the values are where they should be, once, and each alone', async (t) => {
  const { s, document, series, occurrences } = await seriesWithOracle(t)
  const allDay = await s.create(eventBody({ title: 'Fair', all_day: true, timezone: 'Europe/Berlin', start_date: '2026-03-27', end_date: '2026-03-28', recurrence: { rule: 'FREQ=WEEKLY;COUNT=3' } }))
  const single = await s.event('Once')
  const allDayDocument = await storedDocument(t, s, allDay.id)
  const singleDocument = await storedDocument(t, s, single.id)
  const ctx = () => ({}) as AppContext
  const id = occurrences[1] as string
  const row = await s.db.selectFrom('event_occurrences').select(['start_utc', 'end_utc']).where('event_id', '=', series.id).where('occurrence', '=', id).executeTakeFirstOrThrow()
  t.same(unchangedOccurrence(ctx(), document, id), { id, startUtc: row.start_utc, endUtc: row.end_utc }, 'the stored document: the row its id names')
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
    ['UTC dates that are not dates', replaced(document, /"utc_start_date":"[^"]*"/.exec(body)?.[0] ?? '', '"utc_start_date":"soon"')],
  ]
  for (const [what, changed] of refused) {
    const one = ctx()
    t.equal(unchangedOccurrence(one, changed, id), undefined, what)
    const listed: ListedDocument = () => { throw new Error('not to be listed') }
    t.equal(occurrenceFromDocument(one, listed, changed, { id, startUtc: row.start_utc, endUtc: row.end_utc }), undefined, `${what}: no list item`)
  }
  const allDayId = (await occurrencesOf(s, allDay.id))[1] as string
  t.equal(unchangedOccurrence(ctx(), allDayDocument, allDayId), undefined, 'an all-day series: its rows are read')
  t.equal(unchangedOccurrence(ctx(), allDayDocument, `${allDayId}T000000Z`), undefined, 'an all-day series, even for a timed id')
  t.equal(unchangedOccurrence(ctx(), document, 'nonsense'), undefined, 'an id that names no start')
  t.equal(unchangedOccurrence(ctx(), document, '99991231T230000Z'), undefined, 'an end past the last representable year')

  // Templates kept per app at most 4096, the oldest made dropped first: a series whose document could not make one
  // is tried again once it was dropped.
  const one = ctx()
  const broken = replaced(document, '"occurrence":null', '"occurrence": null')
  t.equal(unchangedOccurrence(one, broken, id), undefined, 'no template')
  t.equal(unchangedOccurrence(one, document, id), undefined, 'kept: still none for that series')
  for (let other = 1; other <= 4096; other++) unchangedOccurrence(one, { ...document, id: 2_000_000 + other }, id)
  t.same(unchangedOccurrence(one, document, id), { id, startUtc: row.start_utc, endUtc: row.end_utc }, 'dropped after 4096 others: made again')
})
