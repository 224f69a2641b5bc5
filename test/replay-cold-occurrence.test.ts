/**
 * Cold anonymous reads of occurrences answered before routing (http/replay.ts "Cold reads", issue 45): a plain
 * anonymous `GET /events/{id}/occurrences/{occurrence}` of an occurrence without an override is answered from its
 * series' stored document with the headers of a full path's answer to such a read (its own ETag, length and request
 * id), on both engines. The oracle is the full path over the same socket (a request with an `If-None-Match` that names no
 * tag), compared header by header in order and byte by byte, for timed and all-day series, several occurrences, after
 * a term renamed, the series patched, another occurrence overridden, a write from another handle. Not cold (answered
 * as before): an overridden occurrence, an unknown or malformed occurrence id, a trailing slash or a query, a
 * conditional request (304 with the cold answer's tag). A template recorded from a read by id serves no occurrence
 * read. On PostgreSQL the look at the data version reads the series' document and the occurrence's row in the same
 * statement (`occurrence_document`), one round trip, which the last test counts.
 */
import t, { type Test } from 'tap'
import { API, loggedApp } from './helpers/build.js'
import { engineTest, writeFromAnotherHandle } from './helpers/database.js'
import { setup, type Setup } from './helpers/events.js'
import type { AddressInfo } from 'node:net'
import { FULL, listenAndGet, pipelined, sameAsFull, type Answer, type Get } from './helpers/socket-answers.js'

type Wire = Get

async function listening(t: Test, s: Pick<Setup, 'app'>): Promise<Wire> {
  return listenAndGet(t, s.app)
}

/** A read of `path` and the full path's answer to it, equal header by header and byte by byte; whether it was cold. */
async function same(t: Test, s: Setup, wire: Wire, path: string, headers: Record<string, string>, label: string): Promise<{ wasCold: boolean; answer: Answer }> {
  const { taken, answer } = await sameAsFull(t, wire, () => s.app.replay.colds, path, headers, label)
  return { wasCold: taken, answer }
}

/** Series of both kinds, their documents stored, and their occurrence ids. */
async function series(s: Setup): Promise<{ timed: number; allDay: number; weekly: string[]; daily: string[]; jazz: number; outdoor: number }> {
  const jazz = await s.category('Jazz')
  const outdoor = await s.tag('Outdoor')
  const hall = await s.venue({ venue: 'Hall', city: 'Vienna', status: 'publish' })
  const timed = await s.event('Weekly "quoted" — ünïcödé', { status: 'publish', categories: [jazz.id], tags: [outdoor.id], venue: [hall.id], recurrence: { rule: 'FREQ=WEEKLY;COUNT=6' } })
  const allDay = await s.event('Daily', { status: 'publish', all_day: true, start_date: '2026-07-01', end_date: '2026-07-01', tags: [outdoor.id], recurrence: { rule: 'FREQ=DAILY;COUNT=4' } })
  const occurrencesOf = async (id: number): Promise<string[]> =>
    (await s.db.selectFrom('event_occurrences').select('occurrence').where('event_id', '=', id).orderBy('start_utc').execute()).map((r) => r.occurrence)
  const weekly = await occurrencesOf(timed.id)
  const daily = await occurrencesOf(allDay.id)
  await stored(s, [timed.id, allDay.id])
  return { timed: timed.id, allDay: allDay.id, weekly, daily, jazz: jazz.id, outdoor: outdoor.id }
}

/** The events' documents stored again (a read by id offers one; stored off the request path). */
async function stored(s: Setup, ids: number[]): Promise<void> {
  await s.app.eventDocuments.settled()
  for (const id of ids) await s.get(id)
  await s.app.eventDocuments.settled()
}

const occurrenceUrl = (id: number, occurrence: string) => `${API}/events/${id}/occurrences/${occurrence}`

t.test('a cold read of an occurrence is the full path\'s answer, header by header and byte by byte, after every write', async (t) => {
  const s = await setup(t, { file: `${t.testdir()}/calendar.db` })
  const wire = await listening(t, s)
  const { timed, allDay, weekly, daily, jazz, outdoor } = await series(s)
  // A read by id's template serves no occurrence read.
  await wire(`${API}/events/${timed}`)
  const before = s.app.replay.colds
  await same(t, s, wire, occurrenceUrl(timed, weekly[0] ?? ''), {}, 'with a by-id template only')
  t.equal(s.app.replay.colds, before, 'not cold: no occurrence template yet')
  const variants: Array<Record<string, string>> = [{}, { accept: 'application/json' }, { 'accept-encoding': 'gzip', 'x-no-compression': '1' }, { 'x-request-id': 'probe-17' }]
  const rounds: Array<[string, () => Promise<unknown>]> = [
    ['as stored', async () => undefined],
    ['a category renamed', () => s.inject({ method: 'PATCH', url: `${API}/categories/${jazz}`, headers: s.editor, payload: { name: 'Jazz & more' } })],
    ['a tag\'s count moved', () => s.event('D', { status: 'publish', tags: [outdoor] })],
    ['the series patched', () => s.patch(timed, { title: 'Weekly renamed' })],
    ['another occurrence overridden', () => s.inject({ method: 'PATCH', url: occurrenceUrl(timed, weekly[5] ?? ''), headers: s.editor, payload: { title: 'Special' } })],
    ['the all-day series written from another handle', () => writeFromAnotherHandle(s.url, allDay)],
  ]
  const reads: Array<[number, string]> = [...weekly.slice(0, 5).map((o): [number, string] => [timed, o]), ...daily.map((o): [number, string] => [allDay, o])]
  let colds = 0
  for (const [what, write] of rounds) {
    await write()
    await stored(s, [timed, allDay])
    for (const headers of variants) {
      // Each variant's first request is the full path's (its template); then every occurrence.
      await wire(occurrenceUrl(timed, weekly[5] ?? ''), headers)
      for (const [id, occurrence] of reads) {
        const { replayed } = s.app.replay
        const { wasCold, answer } = await same(t, s, wire, occurrenceUrl(id, occurrence), headers, `${what}, ${id}/${occurrence}, ${JSON.stringify(headers)}`)
        // Read cold, or replayed (a URL read cold before in the same generation with the same key: recorded).
        if (wasCold || s.app.replay.replayed === replayed + 1) colds += 1
        t.equal(answer.status, 200)
        if (headers['x-request-id'] !== undefined) t.equal(answer.id, 'probe-17', 'the request id sent is followed')
      }
      await s.app.eventDocuments.settled()
    }
  }
  t.equal(colds, reads.length * variants.length * rounds.length, 'every read of an occurrence without an override was cold (or replayed once recorded)')
  const record = JSON.parse((await wire(occurrenceUrl(timed, weekly[1] ?? ''))).body.toString('utf8')) as { title: string; categories: Array<{ name: string }> }
  t.equal(record.title, 'Weekly renamed', 'the write is seen')
  t.ok(record.categories.some((c) => c.name === 'Jazz & more'), 'the term\'s current record')
})

t.test('what is not read cold is answered as before: overridden, unknown, malformed, other forms of the URL, conditional', async (t) => {
  const s = await setup(t, { file: `${t.testdir()}/calendar.db` })
  const wire = await listening(t, s)
  const { timed, allDay, weekly, daily } = await series(s)
  t.equal((await s.inject({ method: 'PATCH', url: occurrenceUrl(timed, weekly[2] ?? ''), headers: s.editor, payload: { title: 'Special' } })).statusCode, 200)
  await stored(s, [timed])
  await wire(occurrenceUrl(timed, weekly[0] ?? ''))
  const before = s.app.replay.colds
  const overridden = await same(t, s, wire, occurrenceUrl(timed, weekly[2] ?? ''), {}, 'overridden')
  t.equal(overridden.answer.status, 200)
  t.match(overridden.answer.body.toString('utf8'), /Special/, 'the override\'s title')
  const w1 = weekly[1] ?? ''
  const paths: Array<[string, number]> = [
    [occurrenceUrl(timed, '20200101T000000Z'), 404],
    [occurrenceUrl(timed, daily[0] ?? ''), 404],
    [occurrenceUrl(allDay, w1), 404],
    [occurrenceUrl(timed, w1.slice(0, 15) + 'z'), 404],
    [occurrenceUrl(timed, w1.slice(0, 15)), 404],
    [occurrenceUrl(999_999, w1), 404],
    [`${occurrenceUrl(timed, w1)}/`, 0],
    [`${occurrenceUrl(timed, w1)}?`, 0],
    [`${occurrenceUrl(timed, w1)}?ml_language=en`, 0],
    [`${API}/events/0${timed}/occurrences/${w1}`, 0],
  ]
  for (const [path, status] of paths) {
    const { answer } = await same(t, s, wire, path, {}, path)
    if (status !== 0) t.equal(answer.status, status, `${path}: ${status}`)
  }
  t.equal(s.app.replay.colds, before, 'none of them cold')
  const plain = await wire(occurrenceUrl(timed, w1))
  t.equal(s.app.replay.colds, before + 1, 'a plain read is')
  const etag = plain.headers[plain.headers.findIndex((h) => h.toLowerCase() === 'etag') + 1] ?? ''
  const conditional = await wire(occurrenceUrl(timed, w1), { 'if-none-match': etag })
  t.equal(conditional.status, 304, 'If-None-Match with the cold answer\'s tag: 304')
  t.equal(conditional.body.length, 0)
  const gzip = await same(t, s, wire, occurrenceUrl(timed, w1), { 'accept-encoding': 'gzip' }, 'gzip')
  t.match(gzip.answer.headers.join('\n'), /content-encoding\ngzip/i, 'compressed by the full path')
  t.equal(s.app.replay.colds, before + 1)
})

t.test('an occurrence read cold twice is recorded and replayed', async (t) => {
  const s = await setup(t, { file: `${t.testdir()}/calendar.db` })
  const wire = await listening(t, s)
  const { timed, weekly } = await series(s)
  await wire(occurrenceUrl(timed, weekly[0] ?? ''))
  const { colds, replayed } = s.app.replay
  const url = occurrenceUrl(timed, weekly[1] ?? '')
  const one = await wire(url)
  t.equal(s.app.replay.colds, colds + 1, 'cold')
  t.equal(s.app.replay.size, 0, 'not recorded the first time')
  await wire(url)
  t.equal(s.app.replay.colds, colds + 2, 'cold again (asked once before: recorded now)')
  t.equal(s.app.replay.replayed, replayed, 'not replayed yet')
  const third = await wire(url)
  t.equal(s.app.replay.replayed, replayed + 1, 'the third read is replayed')
  t.equal(third.body.toString('base64'), one.body.toString('base64'))
  t.strictSame(third.headers, one.headers)
  t.equal((await s.patch(timed, { title: 'Moved on' })).statusCode, 200)
  await stored(s, [timed])
  const after = await wire(url)
  t.equal(s.app.replay.colds, colds + 3, 'its recording stale: read cold')
  t.match(after.body.toString('utf8'), /Moved on/)
})

t.test('after a write of the series, a read of an occurrence stores its document again: the next reads are from it, cold', async (t) => {
  const s = await setup(t, { file: `${t.testdir()}/calendar.db` })
  const wire = await listening(t, s)
  const { timed, weekly } = await series(s)
  await wire(occurrenceUrl(timed, weekly[0] ?? ''))
  for (const [what, write] of [
    ['the series patched', () => s.patch(timed, { title: 'Renamed' })],
    ['an occurrence overridden', () => s.inject({ method: 'PATCH', url: occurrenceUrl(timed, weekly[5] ?? ''), headers: s.editor, payload: { title: 'Special' } })],
  ] as Array<[string, () => Promise<unknown>]>) {
    await write()
    await s.app.eventDocuments.settled()
    const stored = s.app.eventDocuments.stats().stored
    const { colds } = s.app.replay
    // No read by id: the occurrence's read (the full path: no document) offers the series' document.
    await same(t, s, wire, occurrenceUrl(timed, weekly[1] ?? ''), {}, `${what}: the first read`)
    t.equal(s.app.replay.colds, colds, `${what}: the first read is not cold (no document)`)
    await s.app.eventDocuments.settled()
    // (Offered by both reads `same` makes; stored once or twice as the offers meet the store.)
    t.ok(s.app.eventDocuments.stats().stored > stored, `${what}: the series' document stored again`)
    const { wasCold, answer } = await same(t, s, wire, occurrenceUrl(timed, weekly[2] ?? ''), {}, `${what}: the next read`)
    t.equal(answer.status, 200)
    t.equal(wasCold, true, `${what}: the next read is cold`)
    t.match(answer.body.toString('utf8'), /Renamed/, `${what}: the write is seen`)
  }
})

engineTest('postgres', t, 'PostgreSQL: a cold read of an occurrence is one statement, the look at the data version reading the document and the row', async (t) => { // SQLite's look is a probe
  const s = await setup(t)
  const { timed, allDay, weekly, daily } = await series(s)
  const { statements, app } = await loggedApp(t, s.url)
  const wire = await listening(t, { app })
  // The series' terms in the read cache (a full path's read of each), then the template's read.
  for (const [id, occurrence] of [[timed, weekly[0] ?? ''], [allDay, daily[0] ?? '']] as const) t.equal((await wire(occurrenceUrl(id, occurrence), FULL)).status, 200)
  await wire(occurrenceUrl(timed, weekly[0] ?? ''))
  const call = /^select h, e, event_id, .* from occurrence_document\(\$1, \$2, \$3\)$/
  const reads: Array<[number, string]> = [...weekly.slice(1, 4).map((o): [number, string] => [timed, o]), ...daily.slice(1).map((o): [number, string] => [allDay, o])]
  for (const [id, occurrence] of reads) {
    for (const when of ['first', 'again']) {
      statements.length = 0
      const { colds } = app.replay
      const answer = await wire(occurrenceUrl(id, occurrence))
      t.equal(answer.status, 200)
      t.equal(app.replay.colds, colds + 1, `${id}/${occurrence} read ${when}: cold`)
      t.strictSame(statements.map((st) => call.test(st.sql)), [true], `${id}/${occurrence} read ${when}: one statement, occurrence_document's`)
      t.strictSame(statements[0]?.parameters, [occurrence, id, statements[0]?.parameters[2]], 'the occurrence and its series')
    }
    // Read cold twice, it was recorded: replayed after the bare look.
    statements.length = 0
    const { replayed } = app.replay
    await wire(occurrenceUrl(id, occurrence))
    t.equal(app.replay.replayed, replayed + 1, `${id}/${occurrence} read a third time: replayed`)
    t.strictSame(statements.map((st) => /^select h, e from data_version\(\)$/.test(st.sql)), [true], 'one statement, data_version()\'s')
  }
  // An overridden occurrence: the look's statement read it, the full path answers (its look again, as before).
  t.equal((await s.inject({ method: 'PATCH', url: occurrenceUrl(timed, weekly[4] ?? ''), headers: s.editor, payload: { title: 'Special' } })).statusCode, 200)
  const { colds } = app.replay
  const overridden = await wire(occurrenceUrl(timed, weekly[4] ?? ''))
  t.equal(overridden.status, 200)
  t.match(overridden.body.toString('utf8'), /Special/)
  t.equal(app.replay.colds, colds, 'an overridden occurrence is not cold')
})

engineTest('postgres', t, 'PostgreSQL: cold reads of occurrences held in one turn share one look, which reads all their series\' documents and rows', async (t) => { // SQLite's look is a probe
  const s = await setup(t)
  const { timed, allDay, weekly, daily } = await series(s)
  const { statements, app } = await loggedApp(t, s.url)
  const wire = await listening(t, { app })
  const { port } = app.server.address() as AddressInfo
  // An overridden occurrence and a draft series: the full path answers them.
  t.equal((await s.inject({ method: 'PATCH', url: occurrenceUrl(timed, weekly[4] ?? ''), headers: s.editor, payload: { title: 'Special' } })).statusCode, 200)
  const draft = await s.event('Draft', { status: 'draft', recurrence: { rule: 'FREQ=DAILY;COUNT=2' } })
  const [drafted] = (await s.db.selectFrom('event_occurrences').select('occurrence').where('event_id', '=', draft.id).execute()).map((r) => r.occurrence)
  await stored(s, [timed, allDay])
  const paths = (pairs: ReadonlyArray<readonly [number, string]>) => pairs.map(([id, occurrence]) => occurrenceUrl(id, occurrence))
  const full = new Map<string, Answer>()
  const pairs: Array<[number, string]> = [...weekly.map((o): [number, string] => [timed, o]), ...daily.map((o): [number, string] => [allDay, o]),
    [timed, '20990101T000000Z'], [draft.id, drafted ?? '']]
  for (const path of paths(pairs)) full.set(path, await wire(path, FULL))
  // The template's read.
  await wire(occurrenceUrl(timed, weekly[0] ?? ''))
  // Of both series, and one asked twice: one document and row read for both.
  const batch: Array<[number, string]> = [[timed, weekly[1] ?? ''], [allDay, daily[1] ?? ''], [timed, weekly[2] ?? ''], [allDay, daily[2] ?? '']]
  const asked = [...batch, batch[0] as [number, string]]
  statements.length = 0
  const { colds, looks } = app.replay
  const answers = await pipelined(port, paths(asked))
  t.equal(app.replay.colds, colds + asked.length, 'all cold')
  t.equal(app.replay.looks, looks + 1, 'one look for them all')
  t.strictSame(statements.map((st) => /^select h, e, event_id, .* from occurrence_documents_read\(\$1, \$2, \$3\)$/.test(st.sql)), [true], 'one statement, occurrence_documents_read\'s')
  t.strictSame(statements[0]?.parameters.slice(0, 2), [batch.map(([id]) => id), batch.map(([, o]) => o)], 'the distinct pairs, in the order held')
  paths(asked).forEach((path, i) => {
    t.equal(answers[i]?.status, 200)
    t.equal(answers[i]?.body, full.get(path)?.body.toString('utf8'), `${path}: the full path's bytes`)
  })
  // With an overridden occurrence, one the series has not, a draft's: read by the look, answered by the full path.
  const mixed: Array<[number, string]> = [[timed, weekly[3] ?? ''], [timed, weekly[4] ?? ''], [timed, '20990101T000000Z'], [draft.id, drafted ?? ''], [allDay, daily[3] ?? '']]
  statements.length = 0
  const { colds: before } = app.replay
  const answered = await pipelined(port, paths(mixed))
  t.equal(app.replay.colds, before + 2, 'those without an override, of a stored series, cold')
  t.ok(/ from occurrence_documents_read\(/.test(statements[0]?.sql ?? ''), 'the look read them all')
  t.equal(statements.filter((st) => /occurrence_document\(|occurrence_documents_read\(/.test(st.sql)).length, 1 + 3, 'the three the full path answers read again there, the others not')
  paths(mixed).forEach((path, i) => {
    t.equal(answered[i]?.status, full.get(path)?.status, `${path}: the full path's status`)
    t.equal(answered[i]?.body, full.get(path)?.body.toString('utf8'), `${path}: the full path's bytes`)
  })
})
