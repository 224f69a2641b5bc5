/**
 * Cold anonymous reads by id answered before routing (http/replay.ts "Cold reads", issue 49): a plain anonymous
 * `GET /events/{id}` with no recording of its own is answered from the event's stored document with the headers of
 * a full path's answer to such a read (its own ETag, length and request id), on SQLite. Over real HTTP (`inject`
 * does not pass there). The oracle is the full path over the same socket: the same request with an
 * `If-None-Match` that names no tag (never replayed nor read cold, answered 200 by the whole chain). Compared
 * header by header (in order, as on the wire) and byte by byte for many events (languages, translations, terms,
 * venues, organizers, all-day, a series), after writes of what they show (terms renamed, counts moved, a venue
 * renamed, the event itself, from another handle); with Accept, X-No-Compression, an Origin, a request id sent.
 * Not cold: compressed answers, iCalendar, conditional requests (304 as before), drafts, protected and trashed
 * events, unknown ids, leading zeros, queries; each answered as before. A cold answer has its log line and its
 * count in the metrics, and an event read cold twice is recorded (replayed the third time). Both engines: on
 * PostgreSQL the look at the data version reads the document in the same statement, one round trip (as the full
 * path's look), which the last test counts.
 */
import type { AddressInfo } from 'node:net'
import t, { type Test } from 'tap'
import { API, loggedApp } from './helpers/build.js'
import { engineTest, TEST_ENGINE, writeFromAnotherHandle } from './helpers/database.js'
import { setup, type Setup } from './helpers/events.js'
import { FULL, listenAndGet, pipelined, PLAIN_READ_VARIANTS, sameAsFull, type Answer, type Get } from './helpers/socket-answers.js'

type Wire = Get

async function listening(t: Test, s: Pick<Setup, 'app'>): Promise<Wire> {
  return listenAndGet(t, s.app)
}

/** The log lines written. */
function logLines(): { stream: { write(line: string): void }; lines: Array<Record<string, unknown>> } {
  const lines: Array<Record<string, unknown>> = []
  return { stream: { write: (line: string) => { lines.push(JSON.parse(line) as Record<string, unknown>) } }, lines }
}

/** Events of many shapes, their documents stored; the ids of those an anonymous caller reads, and of those it may not. */
async function events(s: Setup): Promise<{ readable: number[]; refused: number[]; terms: { jazz: number; outdoor: number; hall: number } }> {
  const jazz = await s.category('Jazz')
  const blues = await s.category('Blues')
  const outdoor = await s.tag('Outdoor')
  const hall = await s.venue({ venue: 'Hall', city: 'Vienna', status: 'publish' })
  const club = await s.organizer({ organizer: 'Club', status: 'publish' })
  const a = await s.event('A', { status: 'publish', categories: [jazz.id], tags: [outdoor.id], venue: [hall.id], organizer: [club.id], image: 'https://img.example/a.png' })
  const b = await s.event('B "quoted" — ünïcödé ✓', { status: 'publish', categories: [jazz.id, blues.id], venue: [hall.id], description: `<p>${'Long text. '.repeat(200)}</p>` })
  const c = await s.event('C', { status: 'publish', categories: [blues.id], organizer: [club.id], tags: [outdoor.id] })
  const de = await s.create({ title: 'A auf Deutsch', start_date: '2026-07-01 18:00:00', end_date: '2026-07-01 21:00:00', status: 'publish', translation_of: a.id, ml_language: 'de' })
  const fr = await s.create({ title: 'Soirée', start_date: '2026-07-02 18:00:00', end_date: '2026-07-02 21:00:00', status: 'publish', ml_language: 'ch-fr' })
  const allDay = await s.event('All day', { status: 'publish', all_day: true, start_date: '2026-07-03 00:00:00', end_date: '2026-07-04 23:59:59' })
  const series = await s.event('Weekly', { status: 'publish', recurrence: { rule: 'FREQ=WEEKLY;COUNT=5' } })
  const bare = await s.event('Bare', { status: 'publish' })
  const draft = await s.event('Draft', { status: 'draft', categories: [jazz.id] })
  const protectedEvent = await s.event('Protected', { status: 'publish' })
  t.equal((await s.patch(protectedEvent.id, { password: 'open sesame' })).statusCode, 200)
  const trashed = await s.event('Trashed', { status: 'publish' })
  t.equal((await s.remove(trashed.id)).statusCode, 200)
  const readable = [a.id, b.id, c.id, de.id, fr.id, allDay.id, series.id, bare.id]
  // Their documents stored (a read offers one; the offers stored off the request path).
  for (const id of readable) await s.get(id)
  await s.app.eventDocuments.settled()
  return { readable, refused: [draft.id, protectedEvent.id, trashed.id], terms: { jazz: jazz.id, outdoor: outdoor.id, hall: hall.id } }
}

/** A read of `path` and the full path's answer to it, equal header by header and byte by byte; whether it was cold. */
async function same(t: Test, s: Setup, wire: Wire, path: string, headers: Record<string, string>, label: string): Promise<{ wasCold: boolean; answer: Answer }> {
  const { taken, answer } = await sameAsFull(t, wire, () => s.app.replay.colds, path, headers, label)
  return { wasCold: taken, answer }
}

t.test('a cold read is the full path\'s answer, header by header and byte by byte, for every event and after every write', async (t) => {
  const s = await setup(t, { file: `${t.testdir()}/calendar.db` })
  const wire = await listening(t, s)
  const { readable, terms } = await events(s)
  // The full path's first answer (recorded) gives the headers' template.
  await wire(`${API}/events/${readable[0]}`)
  const variants = PLAIN_READ_VARIANTS
  const rounds: Array<[string, () => Promise<unknown>]> = [
    ['as stored', async () => undefined],
    ['a category renamed', () => s.inject({ method: 'PATCH', url: `${API}/categories/${terms.jazz}`, headers: s.editor, payload: { name: 'Jazz & more' } })],
    ['a tag\'s count moved', () => s.event('D', { status: 'publish', tags: [terms.outdoor] })],
    ['a venue renamed', () => s.inject({ method: 'PATCH', url: `${API}/venues/${terms.hall}`, headers: s.editor, payload: { venue: 'Great Hall' } })],
    ['an event renamed', () => s.patch(readable[1] ?? 0, { title: 'B renamed' })],
    ['an event written from another handle', () => writeFromAnotherHandle(s.url, readable[2] ?? 0)],
  ]
  let colds = 0
  for (const [what, write] of rounds) {
    await write()
    for (const headers of variants) {
      // Each variant's first request is the full path's (its template); then every event.
      await wire(`${API}/events/${readable[0]}`, headers)
      await s.app.eventDocuments.settled()
      for (const id of readable) {
        const { wasCold, answer } = await same(t, s, wire, `${API}/events/${id}`, headers, `${what}, event ${id}, ${JSON.stringify(headers)}`)
        if (wasCold) colds += 1
        t.equal(answer.status, 200)
        if (headers['x-request-id'] !== undefined) t.equal(answer.id, 'probe-17', 'the request id sent is followed')
      }
      await s.app.eventDocuments.settled()
    }
  }
  // Every read of a stored document with a template but none of its own was cold.
  t.ok(colds >= readable.length * variants.length, `reads answered cold: ${colds}`)
  const record = JSON.parse((await wire(`${API}/events/${readable[1]}`)).body.toString('utf8')) as { title: string; categories: Array<{ name: string }> }
  t.equal(record.title, 'B renamed', 'the write is seen')
  t.ok(record.categories.some((c) => c.name === 'Jazz & more'), 'the term\'s current record')
})

t.test('what is not read cold is answered as before: coded, iCalendar, conditional, refused, unknown, other forms of the URL', async (t) => {
  const s = await setup(t, { file: `${t.testdir()}/calendar.db` })
  const wire = await listening(t, s)
  const { readable, refused } = await events(s)
  const [first = 0, second = 0, third = 0] = readable
  for (const headers of [{}, { 'accept-encoding': 'gzip' }, { accept: 'text/calendar' }] as Array<Record<string, string>>) await wire(`${API}/events/${first}`, headers)
  const before = s.app.replay.colds
  const gzip = await same(t, s, wire, `${API}/events/${second}`, { 'accept-encoding': 'gzip' }, 'gzip')
  t.match(gzip.answer.headers.join('\n'), /content-encoding\ngzip/i, 'compressed by the full path')
  const ical = await same(t, s, wire, `${API}/events/${second}`, { accept: 'text/calendar' }, 'iCalendar')
  t.match(ical.answer.body.toString('utf8'), /BEGIN:VCALENDAR/, 'a feed')
  for (const id of refused) {
    const answer = await same(t, s, wire, `${API}/events/${id}`, {}, `refused event ${id}`)
    t.ok([403, 404, 410].includes(answer.answer.status), `event ${id}: ${answer.answer.status}`)
  }
  for (const path of [`${API}/events/999999`, `${API}/events/0${third}`, `${API}/events/${third}?ml_language=en`, `${API}/events/${third}/`, `${API}/events/${third}?`]) {
    await same(t, s, wire, path, {}, path)
  }
  t.equal(s.app.replay.colds, before, 'none of them cold')
  // Conditional: 304 from the full path with the tag a cold read gave.
  const plain = await wire(`${API}/events/${third}`)
  t.equal(s.app.replay.colds, before + 1, 'a plain read is')
  const etag = plain.headers[plain.headers.findIndex((h) => h.toLowerCase() === 'etag') + 1] ?? ''
  const conditional = await wire(`${API}/events/${third}`, { 'if-none-match': etag })
  t.equal(conditional.status, 304, 'If-None-Match with the cold answer\'s tag: 304')
  t.equal(conditional.body.length, 0)
  const keyed = await wire(`${API}/events/${third}`, s.editor)
  t.equal(keyed.status, 200, 'with a key: the full path')
  t.equal(s.app.replay.colds, before + 1)
})

t.test('a cold read has its log line and its count; read cold twice, it is recorded and replayed', async (t) => {
  const log = logLines()
  const s = await setup(t, { file: `${t.testdir()}/calendar.db`, config: { metrics: true, logLevel: 'info' }, logStream: log.stream })
  const wire = await listening(t, s)
  const { readable } = await events(s)
  const [first = 0, second = 0] = readable
  await wire(`${API}/events/${first}`)
  const counted = async (): Promise<number> => {
    const text = (await s.app.inject({ url: '/metrics' })).body
    const line = text.split('\n').find((l) => l.startsWith('http_request_duration_seconds_count{') && l.includes('route="/calendar/events/v1/events/:id"') && l.includes('method="GET"') && l.includes('status_code="200"'))
    return line === undefined ? 0 : Number(line.split(' ').pop())
  }
  const count = await counted()
  const { colds, replayed } = s.app.replay
  const one = await wire(`${API}/events/${second}`)
  t.equal(s.app.replay.colds, colds + 1, 'cold')
  t.equal(await counted(), count + 1, 'counted in the request metrics')
  const full = await wire(`${API}/events/${second}`, FULL)
  const lineOf = (reqId: string) => log.lines.find((l) => l.reqId === reqId && l.msg === 'request')
  const fields = (line: Record<string, unknown> | undefined) => Object.keys(line ?? {}).filter((k) => !['time', 'reqId', 'durationMs'].includes(k)).map((k) => [k, line?.[k]])
  t.ok(lineOf(one.id) !== undefined, 'a log line')
  t.same(fields(lineOf(one.id)), fields(lineOf(full.id)), 'the same fields and values as the full path\'s, in the same order')
  t.same(Object.keys(lineOf(one.id) ?? {}), Object.keys(lineOf(full.id) ?? {}), 'the same keys in the same order')
  await wire(`${API}/events/${second}`)
  t.equal(s.app.replay.colds, colds + 2, 'cold again (asked once before: recorded now)')
  t.equal(s.app.replay.replayed, replayed, 'not replayed yet')
  const third = await wire(`${API}/events/${second}`)
  t.equal(s.app.replay.replayed, replayed + 1, 'the third read is replayed')
  t.equal(third.body.toString('base64'), one.body.toString('base64'))
  t.strictSame(third.headers, one.headers)
})

t.test('a cold read that fails is the full path\'s to answer, and to log', async (t) => {
  const log = logLines()
  const s = await setup(t, { file: `${t.testdir()}/calendar.db`, config: { logLevel: 'info' }, logStream: log.stream })
  const wire = await listening(t, s)
  const { readable } = await events(s)
  const [first = 0, second = 0] = readable
  await wire(`${API}/events/${first}`)
  const documents = s.app.eventDocuments
  const read = documents.read.bind(documents)
  // PostgreSQL reads the document in the look's statement (`readWithVersion`), on both paths.
  const withVersion = documents.readWithVersion
  let failures = 0
  const failing = async (): Promise<never> => {
    failures += 1
    throw Object.assign(new Error('the database cannot serve'), { code: TEST_ENGINE === 'sqlite' ? 'SQLITE_IOERR' : '57P01' })
  }
  documents.read = failing
  if (withVersion !== undefined) documents.readWithVersion = failing
  const { colds } = s.app.replay
  const answer = await wire(`${API}/events/${second}`)
  t.equal(failures, 2, 'the cold read failed, then the full path\'s read')
  t.equal(s.app.replay.colds, colds, 'not answered cold')
  const full = await wire(`${API}/events/${second}`, FULL)
  t.equal(answer.status, full.status, `the full path's answer: ${full.status}`)
  t.equal(answer.body.toString('utf8'), full.body.toString('utf8'))
  t.notOk(log.lines.some((l) => l.msg === 'replaying an answer failed'), 'no error of the replay\'s logged')
  documents.read = read
  documents.readWithVersion = withVersion
  t.equal((await wire(`${API}/events/${second}`)).status, 200, 'answered again once the database serves')
  t.equal(s.app.replay.colds, colds + 1, 'cold')
})

t.test('reads are cold while templates are kept, recordings or none', async (t) => {
  const s = await setup(t, { file: `${t.testdir()}/calendar.db` })
  const wire = await listening(t, s)
  const { readable } = await events(s)
  const [first = 0, second = 0, third = 0] = readable
  await wire(`${API}/events/${first}`)
  t.equal(s.app.replay.size, 1, 'the full path\'s answer recorded')
  t.equal((await s.patch(third, { title: 'Moved on' })).statusCode, 200)
  const { colds } = s.app.replay
  await wire(`${API}/events/${first}`)
  t.equal(s.app.replay.colds, colds + 1, 'its recording stale: read cold')
  t.equal(s.app.replay.size, 0, 'no recording left')
  await wire(`${API}/events/${second}`)
  t.equal(s.app.replay.colds, colds + 2, 'another event read cold')
})

engineTest('postgres', t, 'PostgreSQL: a cold read is one statement, the look at the data version reading the document', async (t) => {
  const s = await setup(t)
  const { readable } = await events(s)
  const { statements, app } = await loggedApp(t, s.url)
  const wire = await listening(t, { app })
  // Each event read once by the full path (its terms' records in the read cache), then the template's read.
  for (const id of readable) t.equal((await wire(`${API}/events/${id}`, FULL)).status, 200)
  await wire(`${API}/events/${readable[0]}`)
  const call = /^select h, e, event_id, .* from event_document\(\$1, \$2\)$/
  for (const id of readable.slice(1)) {
    for (const when of ['first', 'again']) {
      statements.length = 0
      const { colds } = app.replay
      const answer = await wire(`${API}/events/${id}`)
      t.equal(answer.status, 200)
      t.equal(app.replay.colds, colds + 1, `event ${id} read ${when}: cold`)
      t.strictSame(statements.map((st) => call.test(st.sql)), [true], `event ${id} read ${when}: one statement, event_document's`)
    }
    // Read cold twice, it was recorded: replayed after the bare look.
    statements.length = 0
    const { replayed } = app.replay
    await wire(`${API}/events/${id}`)
    t.equal(app.replay.replayed, replayed + 1, `event ${id} read a third time: replayed`)
    t.strictSame(statements.map((st) => /^select h, e from data_version\(\)$/.test(st.sql)), [true], 'one statement, data_version()\'s')
  }
})

engineTest('postgres', t, 'PostgreSQL: cold reads held in one turn share one look, which reads all their documents', async (t) => {
  const s = await setup(t)
  const { readable, refused } = await events(s)
  const { statements, app } = await loggedApp(t, s.url)
  const wire = await listening(t, { app })
  const { port } = app.server.address() as AddressInfo
  const full = new Map<number, Answer>()
  for (const id of [...readable, ...refused]) full.set(id, await wire(`${API}/events/${id}`, FULL))
  await wire(`${API}/events/${readable[0]}`)
  const batch = readable.slice(1)
  // The same event twice in the batch: one document read for both.
  const ids = [...batch, batch[0] ?? 0]
  statements.length = 0
  const { colds, looks } = app.replay
  const answers = await pipelined(port, ids.map((id) => `${API}/events/${id}`))
  t.equal(app.replay.colds, colds + ids.length, 'all cold')
  t.equal(app.replay.looks, looks + 1, 'one look for them all')
  t.strictSame(statements.map((st) => /^select h, e, event_id, .* from event_documents_read\(\$1, \$2\)$/.test(st.sql)), [true], 'one statement, event_documents_read\'s')
  t.strictSame(statements[0]?.parameters[0], batch, 'the distinct ids, in the order held')
  ids.forEach((id, i) => {
    t.equal(answers[i]?.status, 200)
    t.equal(answers[i]?.body, full.get(id)?.body.toString('utf8'), `event ${id}: the full path's bytes`)
  })
  // Events without a document in the batch: answered by the full path, as before.
  const mixed = [batch[1] ?? 0, ...refused, batch[2] ?? 0]
  const { colds: before } = app.replay
  const answered = await pipelined(port, mixed.map((id) => `${API}/events/${id}`))
  t.equal(app.replay.colds, before + 2, 'those with a document cold')
  mixed.forEach((id, i) => {
    t.equal(answered[i]?.status, full.get(id)?.status, `event ${id}: the full path's status`)
    t.equal(answered[i]?.body, full.get(id)?.body.toString('utf8'), `event ${id}: the full path's bytes`)
  })
})
