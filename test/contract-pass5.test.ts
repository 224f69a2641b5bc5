/**
 * A fifth black-box pass over the contract, as the product's users use it, over HTTP against two server
 * processes on one database (CONTRACT §5, §12, §13, §14, §15, §17): a site that mirrors the data through
 * /changes, a calendar app subscribed to iCal feeds with If-None-Match, a webhook receiver verifying Standard
 * Webhooks signatures, a typed client walking pages while writes happen, If-Match races between two nodes, a
 * body sent a byte at a time, a client that disconnects mid-write. Every answer is checked against the spec.
 */
import t, { type Test } from 'tap'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { connect } from 'node:net'
import { contractProblems } from './helpers/contract.js'
import { freshDatabaseUrl } from './helpers/database.js'
import { API as PREFIX } from './helpers/build.js'
import { EVENTS, setup } from './helpers/events.js'
import { freePort } from './helpers/net.js'
import { startReceiver, type Received } from './helpers/receiver.js'
import { API, REQUEST_TIMEOUT_MS, editorKey, startServer, type Server } from './helpers/server.js'

type Json = Record<string, any> // eslint-disable-line @typescript-eslint/no-explicit-any
interface Answer { status: number; headers: Record<string, string>; text: string; body: Json }

/** Two nodes on one fresh database (a file on SQLite), an administrator's key, a webhook receiver. */
async function twoNodes(t: Test, env: Record<string, string> = {}) {
  const dir = mkdtempSync(join(tmpdir(), 'calendar-pass5-'))
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  const url = await freshDatabaseUrl(t, join(dir, 'calendar.db'))
  const key = await editorKey(url, 'administrator')
  const common = { CALENDAR_WEBHOOK_ALLOW_PRIVATE: 'true', CALENDAR_WEBHOOK_RETRY_SCHEDULE: '100ms,200ms,400ms,800ms,1s', ...env }
  const [a, b] = await Promise.all([startServer(t, url, await freePort(), common), startServer(t, url, await freePort(), common)])
  const send = async (node: Server, method: string, path: string, body?: unknown, extra: Record<string, string> = {}): Promise<Answer> => {
    const headers: Record<string, string> = { authorization: `Bearer ${key}`, ...extra }
    if (body !== undefined) headers['content-type'] = 'application/json'
    const res = await fetch(`${node.base}${path}`, { method, headers, ...(body !== undefined ? { body: JSON.stringify(body) } : {}), signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS) })
    const text = await res.text()
    const plain: Record<string, string> = {}
    res.headers.forEach((v, k) => { plain[k] = v })
    const problems = contractProblems(method, `${API}${path}`, { statusCode: res.status, headers: plain, body: text })
    if (problems.length > 0) t.fail(`${method} ${path} breaks the contract`, { problems, body: text.slice(0, 400) })
    let parsed: Json = {}
    if (plain['content-type']?.startsWith('application/json') === true && text !== '') parsed = JSON.parse(text) as Json
    return { status: res.status, headers: plain, text, body: parsed }
  }
  return { url, key, a, b, send }
}

type Send = Awaited<ReturnType<typeof twoNodes>>['send']

/**
 * A mirror of the data kept by following `/changes` (§12): each record at its latest change, deleted ones left out.
 * `follow` reads from where the last call stopped, in pages of `perPage`, from the node named, until `has_more` is false.
 */
function changesMirror(t: Test, send: Send, perPage: number) {
  const records = new Map<string, Json>()
  let cursor: string | undefined
  let pages = 0
  return {
    records,
    pages: () => pages,
    async follow(node: Server) {
      for (let more = true; more;) {
        const res = await send(node, 'GET', `/changes?per_page=${perPage}${cursor === undefined ? '' : `&since=${encodeURIComponent(cursor)}`}`)
        t.equal(res.status, 200, `/changes from ${cursor ?? 'the oldest change kept'}`)
        for (const change of res.body.changes as Json[]) {
          const k = `${String(change.resource)}/${String(change.id)}`
          if (change.action === 'deleted') records.delete(k)
          else records.set(k, change.record as Json)
        }
        more = res.body.has_more === true
        cursor = String(res.body.next_cursor)
        pages++
      }
    },
  }
}

/** The VEVENTs of a feed, unfolded, as maps of property name (with parameters) to values. */
function vevents(feed: string): Array<Map<string, string[]>> {
  const lines = feed.replace(/\r\n[ \t]/g, '').split('\r\n')
  const out: Array<Map<string, string[]>> = []
  let current: Map<string, string[]> | undefined
  for (const line of lines) {
    if (line === 'BEGIN:VEVENT') current = new Map()
    else if (line === 'END:VEVENT' && current !== undefined) { out.push(current); current = undefined } else if (current !== undefined) {
      const at = line.search(/[:;]/)
      const name = line.slice(0, at)
      current.set(name, [...(current.get(name) ?? []), line.slice(at)])
    }
  }
  return out
}
const prop = (v: Map<string, string[]>, name: string) => v.get(name)?.[0]?.replace(/^[^:]*:/, '')
const veventKey = (v: Map<string, string[]>) => `${prop(v, 'UID')}|${v.get('RECURRENCE-ID')?.[0] ?? ''}`
/**
 * Renaming a venue, organizer or term changes only that record (§12): a mirror keeps the links of an event and the
 * linked records apart, so an event's copy is compared with its links as ids, the linked records on their own.
 */
function linksAsIds(k: string, r: Json | undefined): Json | undefined {
  if (r === undefined || !k.startsWith('events/')) return r
  const out: Json = { ...r }
  for (const field of ['venue', 'organizer', 'categories', 'tags']) out[field] = (r[field] as Json[]).map((x) => x.id as number)
  return out
}
const positionOf = (cursor: string) => Number(/^v1:(\d+)/.exec(Buffer.from(cursor, 'base64url').toString('latin1'))?.[1])

t.test('a mirror through /changes, a webhook receiver and an iCal subscriber follow random writes from two nodes and end with exactly the server\'s state (CONTRACT §12, §13, §14, §15, §17)', async (t) => {
  const { a, b, send } = await twoNodes(t)
  const receiver = await startReceiver(t)
  const hook = await send(a, 'POST', '/webhooks', { url: receiver.url, events: ['*'] })
  t.equal(hook.status, 201)
  receiver.secret = String(hook.body.secret)
  const nodes = [a, b]
  let turn = 0
  const node = () => nodes[turn++ % 2]!
  const ok = async (method: string, path: string, body?: unknown, status = method === 'POST' && (!path.includes('/occurrences/') || path.endsWith('/split')) ? 201 : 200): Promise<Json> => {
    const res = await send(node(), method, path, body)
    t.equal(res.status, status, `${method} ${path} ${JSON.stringify(body ?? null).slice(0, 80)}`)
    if (res.status !== status) t.comment(res.text.slice(0, 300))
    return res.body
  }

  // The subscriber: the list feed and one series' feed, polled with If-None-Match after every write, on both nodes.
  const feeds = ['/events?ical=1&start_date=2027-01-01&end_date=2027-12-31']
  const seen = new Map<string, { etag: string; body: string }>()
  const sequences = new Map<string, number>()
  const poll = async (why: string, updated: number[] = []) => {
    for (const feed of feeds) {
      const before = seen.get(feed)
      const fresh = await send(a, 'GET', feed)
      const other = await send(b, 'GET', feed)
      t.equal(fresh.status, 200, `${feed} after ${why}`)
      t.equal(other.text, fresh.text, `${feed} after ${why}: both nodes serve the same feed`)
      if (other.text !== fresh.text) {
        // Seen once in about ten runs on SQLite (not reproduced since): say which node lagged and whether it caught up.
        const uids = (text: string) => vevents(text).map((v) => `${veventKey(v)} ${prop(v, 'SEQUENCE') ?? ''} ${prop(v, 'SUMMARY') ?? ''}`)
        const [again, againOther] = [await send(a, 'GET', feed), await send(b, 'GET', feed)]
        t.comment(JSON.stringify({ a: uids(fresh.text), b: uids(other.text), aAgain: again.text === fresh.text, bAgain: againOther.text === other.text, agreeAfter: again.text === againOther.text }))
      }
      t.equal(other.headers.etag, fresh.headers.etag, `${feed} after ${why}: both nodes the same ETag`)
      if (before !== undefined) {
        const conditional = await send(b, 'GET', feed, undefined, { 'if-none-match': before.etag })
        if (fresh.text !== before.body) {
          t.not(fresh.headers.etag, before.etag, `${feed} after ${why}: the body changed, so did the ETag`)
          t.equal(conditional.status, 200, `${feed} after ${why}: If-None-Match with the old ETag gets the new feed`)
        } else if (conditional.status === 304) {
          // An ETag may move while the body stays (a write the feed does not show): only a 304 must mean the same body.
          t.equal(fresh.headers.etag, before.etag, `${feed} after ${why}: 304 only for the same version`)
        }
      }
      seen.set(feed, { etag: fresh.headers.etag!, body: fresh.text })
      for (const v of vevents(fresh.text)) {
        const k = `${feed} ${veventKey(v)}`
        const sequence = Number(prop(v, 'SEQUENCE'))
        const last = sequences.get(k)
        const id = Number(String(prop(v, 'UID')).split('@')[0])
        if (last !== undefined) {
          t.ok(sequence >= last, `${k} after ${why}: SEQUENCE never goes back (${last} → ${sequence})`)
          if (updated.includes(id) && !v.has('RECURRENCE-ID')) t.ok(sequence > last, `${k} after ${why}: SEQUENCE grows with an update of the event (${last} → ${sequence})`)
        }
        sequences.set(k, sequence)
      }
    }
  }

  // The mirror: follows /changes in small pages from the oldest change, alternating nodes.
  const following = changesMirror(t, send, 3)
  const mirror = following.records
  const sync = () => following.follow(node())
  const after = async (why: string, updated: number[] = []) => {
    await poll(why, updated)
    await sync()
  }

  const c1 = await ok('POST', '/categories', { name: 'Jazz' })
  const c2 = await ok('POST', '/categories', { name: 'Rock' })
  const t1 = await ok('POST', '/tags', { name: 'late' })
  const v1 = await ok('POST', '/venues', { venue: 'Moods', address: 'Schiffbaustrasse 6', city: 'Zürich' })
  const v2 = await ok('POST', '/venues', { venue: 'Bird\'s Eye', city: 'Basel' })
  const o1 = await ok('POST', '/organizers', { organizer: 'Jazz Club' })
  await after('terms and linked records')
  const series = await ok('POST', '/events', { title: 'Thursday Jazz', timezone: 'Europe/Zurich', start_date: '2027-03-04 21:00:00', end_date: '2027-03-04 23:00:00', recurrence: { rule: 'FREQ=WEEKLY;COUNT=8' }, venue: [v1.id], organizer: [o1.id], categories: [c1.id], tags: [t1.id] })
  const single = await ok('POST', '/events', { title: 'Rock Night', start_date: '2027-04-02 20:00:00', end_date: '2027-04-02 23:00:00', venue: [v2.id], categories: [c2.id] })
  feeds.push(`/events/${String(series.id)}?ical=1`)
  await after('creates')
  await ok('PATCH', `/events/${String(series.id)}`, { description: 'Every Thursday.' })
  await after('series description', [series.id])
  await ok('PATCH', `/events/${String(series.id)}/occurrences/20270318T200000Z`, { title: 'Thursday Jazz: guest night', venue: [v2.id] })
  await after('one occurrence changed', [series.id])
  t.ok(vevents(seen.get(feeds[1]!)!.body).some((v) => v.get('RECURRENCE-ID')?.[0] === ';TZID=Europe/Zurich:20270318T210000'), 'the changed occurrence has its RECURRENCE-ID')
  await ok('DELETE', `/events/${String(series.id)}/occurrences/20270325T200000Z`)
  await after('one occurrence cancelled', [series.id])
  t.ok(vevents(seen.get(feeds[1]!)!.body).some((v) => (v.get('EXDATE') ?? []).some((x) => x.includes('20270325T210000'))), 'the cancelled occurrence is an EXDATE')
  const split = await ok('POST', `/events/${String(series.id)}/occurrences/20270408T190000Z/split`, { title: 'Thursday Jazz (spring)' })
  await after('split', [series.id])
  const translation = await ok('POST', '/events', { title: 'Rock-Nacht', start_date: '2027-04-02 20:00:00', end_date: '2027-04-02 23:00:00', translation_of: single.id, ml_language: 'de' })
  await after('translation')
  await ok('PATCH', `/venues/${String(v1.id)}`, { venue: 'Moods im Schiffbau' })
  await after('venue renamed')
  await ok('PATCH', `/categories/${String(c1.id)}`, { name: 'Jazz & Blues' })
  await after('category renamed')
  await ok('PATCH', `/organizers/${String(o1.id)}`, { email: 'club@example.ch' })
  await after('organizer e-mail')
  await ok('DELETE', `/tags/${String(t1.id)}`)
  await after('tag deleted')
  await ok('DELETE', `/venues/${String(v2.id)}`)
  await after('venue trashed')
  await ok('PATCH', `/venues/${String(v2.id)}`, { status: 'publish' })
  await after('venue restored')
  await ok('DELETE', `/events/${String(single.id)}`)
  await after('event trashed')
  await ok('PATCH', `/events/${String(single.id)}`, { status: 'publish' })
  await after('event restored')
  await ok('PATCH', `/events/${String(split.id)}`, { status: 'draft' })
  await after('event unpublished')
  await ok('DELETE', `/venues/${String(v1.id)}?force=true`)
  await after('venue deleted for good')
  await ok('DELETE', `/categories/${String(c2.id)}`)
  await after('category deleted')
  await ok('DELETE', `/events/${String(translation.id)}?force=true`)
  await after('translation deleted for good')
  // Random writes from both nodes, deterministic.
  let seed = 7
  const random = (n: number) => { seed = (seed * 1103515245 + 12345) % 2 ** 31; return seed % n }
  const events = [series.id as number, single.id as number, split.id as number]
  for (let i = 0; i < 8; i++) {
    const id = events[random(events.length)]!
    const choice = random(5)
    if (choice === 0) await ok('PATCH', `/events/${id}`, { title: `Retitled ${i}` })
    else if (choice === 1) await ok('POST', '/events', { title: `Extra ${i}`, start_date: `2027-05-${String(10 + i)} 19:00:00`, end_date: `2027-05-${String(10 + i)} 20:00:00`, organizer: [o1.id] })
    else if (choice === 2) await ok('PATCH', `/organizers/${String(o1.id)}`, { organizer: `Jazz Club ${i}` })
    else if (choice === 3) await ok('PATCH', `/events/${id}`, { cost: `${i} CHF` })
    else await ok('POST', '/venues', { venue: `Hall ${i}` })
    await after(`random write ${i}`, choice === 0 || choice === 3 ? [id] : [])
  }

  // The mirror equals the server: every record the lists show, and nothing else.
  const server = new Map<string, Json>()
  for (const resource of ['venues', 'organizers', 'categories', 'tags']) {
    for (let page = 1; ; page++) {
      const res = await send(a, 'GET', `/${resource}?per_page=50&page=${page}${resource === 'categories' || resource === 'tags' ? '&hide_empty=false' : ''}`)
      if (res.status === 404) break
      for (const r of res.body[resource] as Json[]) server.set(`${resource}/${String(r.id)}`, r)
      if (page >= Number(res.body.total_pages)) break
    }
  }
  for (const k of mirror.keys()) {
    if (!k.startsWith('events/')) continue
    const id = k.slice('events/'.length)
    const res = await send(b, 'GET', `/events/${id}`)
    if (res.status === 200) {
      const whole = await send(b, 'GET', `/events?include=${id}&status=publish,draft,pending,private`)
      server.set(k, (whole.body.events as Json[])[0]!)
    }
  }
  for (const resource of ['events']) {
    for (let page = 1; ; page++) {
      const res = await send(a, 'GET', `/${resource}?per_page=50&page=${page}&hide_subsequent_recurrences=true&start_date=2027-01-01&status=publish,draft,pending,private`)
      if (res.status === 404) break
      for (const r of res.body.events as Json[]) if (!server.has(`events/${String(r.id)}`)) t.fail(`event ${String(r.id)} is on the server and not in the mirror`)
      if (page >= Number(res.body.total_pages)) break
    }
  }
  t.same([...mirror.keys()].sort(), [...server.keys()].sort(), 'the mirror holds exactly the server\'s records')
  for (const [k, record] of server) t.same(linksAsIds(k, mirror.get(k)), linksAsIds(k, record), `${k}: the mirror's copy is the server's`)

  // The webhook receiver: the latest delivery of every record says what the server holds; every one verified.
  const latest = new Map<string, Received>()
  const settle = (got: readonly Received[]) => {
    latest.clear()
    for (const r of got) {
      const k = `${r.json.data.resource}/${r.json.data.id}`
      const was = latest.get(k)
      if (was === undefined || positionOf(r.json.data.cursor) > positionOf(was.json.data.cursor)) latest.set(k, r)
    }
    return [...mirror].every(([k, record]) => JSON.stringify(linksAsIds(k, latest.get(k)?.json.data.record)) === JSON.stringify(linksAsIds(k, record)))
  }
  await receiver.until(settle, 15_000, () => `${receiver.received.length} deliveries, not yet the server's state`).catch((e: Error) => t.fail(e.message))
  settle(receiver.received)
  for (const [k, record] of mirror) t.same(linksAsIds(k, latest.get(k)?.json.data.record), linksAsIds(k, record), `${k}: the webhook receiver's latest is the server's`)
  for (const [k, r] of latest) if (!mirror.has(k)) t.ok(r.json.type.endsWith('.deleted'), `${k}: gone from the server, its latest delivery is a delete (${r.json.type})`)
  t.ok(receiver.received.every((r) => r.verified), 'every delivery verifies')
  t.equal(new Set(receiver.received.map((r) => r.id)).size, new Set(receiver.received.map((r) => `${r.id}`)).size)
})

t.test('If-Match races between two nodes: exactly one write wins, the other 412 and writes nothing; a typed client walks every page while another node writes (CONTRACT §3, §5, §15, §17)', async (t) => {
  const { a, b, send } = await twoNodes(t)
  const created = await send(a, 'POST', '/events', { title: 'Contested', start_date: '2027-06-01 18:00:00', end_date: '2027-06-01 19:00:00', recurrence: { rule: 'FREQ=DAILY;COUNT=3' } })
  const venue = await send(b, 'POST', '/venues', { venue: 'Contested Hall' })
  const id = Number(created.body.id)
  const targets: Array<[string, (n: number) => [string, unknown]]> = [
    [`/events/${id}`, (n) => ['PATCH', { title: `Title ${n}` }]],
    [`/venues/${String(venue.body.id)}`, (n) => ['PATCH', { city: `City ${n}` }]],
    [`/events/${id}/occurrences/20270602T180000Z`, (n) => ['PATCH', { title: `Second ${n}` }]],
    [`/events/${id}`, (n) => (n % 2 === 0 ? ['DELETE', undefined] : ['PATCH', { description: `Lost ${n}?` }])],
  ]
  for (const [path, write] of targets) {
    for (let round = 0; round < 3; round++) {
      const read = await send(a, 'GET', path)
      const etag = read.headers.etag!
      const answers = await Promise.all([a, b].map((node, n) => {
        const [method, body] = write(n + round * 2)
        return send(node, method, path, body, { 'if-match': etag })
      }))
      const statuses = answers.map((r) => r.status).sort()
      const winner = answers.find((r) => r.status === 200)
      // The loser is 412; or 410 when the winner trashed the record (the trash is checked before If-Match, §1).
      t.same(statuses, winner?.body.status === 'trash' && statuses.includes(410) ? [200, 410] : [200, 412], `${path} round ${round}: one wins, the other refused (${statuses.join(',')})`)
      const now = await send(b, 'GET', path)
      if (winner !== undefined && now.status === 200) {
        t.equal(now.headers.etag, winner.headers.etag, `${path} round ${round}: the stored version is the winner's`)
        t.same({ ...now.body, json_ld: undefined }, { ...winner.body, json_ld: undefined }, `${path} round ${round}: the stored record is the winner's`)
      }
      if (winner?.body.status === 'trash') t.equal((await send(a, 'PATCH', path, { status: 'publish' })).status, 200, 'restored')
    }
  }

  // The series and one of its occurrences at once: each answer shows what the other changes (§17: an occurrence shows
  // the series' fields, and changing it changes the series' ETag), so with both If-Match read before, one write is refused.
  for (let round = 0; round < 4; round++) {
    const occurrence = `/events/${id}/occurrences/20270603T180000Z`
    const [whole, one] = await Promise.all([send(a, 'GET', `/events/${id}`), send(b, 'GET', occurrence)])
    const answers = await Promise.all([
      send(round % 2 === 0 ? a : b, 'PATCH', `/events/${id}`, { excerpt: `Series ${round}` }, { 'if-match': whole.headers.etag! }),
      send(round % 2 === 0 ? b : a, 'PATCH', occurrence, { cost: `${round} CHF` }, { 'if-match': one.headers.etag! }),
    ])
    const statuses = answers.map((r) => r.status)
    t.ok(statuses.includes(412) && statuses.includes(200), `series and occurrence round ${round}: one wins, the other 412 (${statuses.join(',')})`)
    const [now, nowOne] = await Promise.all([send(b, 'GET', `/events/${id}`), send(a, 'GET', occurrence)])
    if (answers[0]!.status === 200) t.equal(now.headers.etag, answers[0]!.headers.etag, `round ${round}: the series is as its winner answered`)
    if (answers[1]!.status === 200) t.equal(nowOne.headers.etag, answers[1]!.headers.etag, `round ${round}: the occurrence is as its winner answered`)
  }

  // Paging: 13 events, walked 4 at a time by following Link (and next_rest_url) while the other node adds later
  // events and retitles the walked ones: each of the first 13 is seen exactly once.
  for (let i = 0; i < 12; i++) await send(b, 'POST', '/events', { title: `Paged ${i}`, start_date: `2027-07-${String(10 + i)} 18:00:00`, end_date: `2027-07-${String(10 + i)} 19:00:00` })
  const before = await send(a, 'GET', '/events?start_date=2027-06-01&per_page=50')
  const original = (before.body.events as Json[]).map((e) => `${String(e.id)}/${String((e.occurrence as Json | null)?.id ?? '')}`)
  t.equal(original.length, 15, 'the series\' three occurrences and twelve events')
  const walked: string[] = []
  let path: string | undefined = '/events?start_date=2027-06-01&per_page=4'
  for (let page = 0; path !== undefined; page++) {
    const res = await send(page % 2 === 0 ? a : b, 'GET', path)
    t.equal(res.status, 200, path)
    t.equal(res.headers['x-total'], String(res.body.total), 'X-Total is total')
    t.equal(res.headers['x-total-pages'], String(res.body.total_pages), 'X-Total-Pages is total_pages')
    walked.push(...(res.body.events as Json[]).map((e) => `${String(e.id)}/${String((e.occurrence as Json | null)?.id ?? '')}`))
    const next = /<([^>]+)>;\s*rel="next"/.exec(res.headers.link ?? '')?.[1]
    t.equal(next, res.body.next_rest_url as string | undefined, 'Link rel=next is next_rest_url')
    path = next === undefined ? undefined : next.slice(next.indexOf(API) + API.length)
    await send(page % 2 === 0 ? b : a, 'POST', '/events', { title: `Later ${page}`, start_date: `2027-11-${String(10 + page)} 18:00:00`, end_date: `2027-11-${String(10 + page)} 19:00:00` })
    await send(page % 2 === 0 ? b : a, 'PATCH', `/events/${String((before.body.events as Json[])[page + 3]!.id)}`, { title: `Retitled ${page}` })
    t.ok(page < 20, 'the walk ends')
  }
  for (const k of original) t.equal(walked.filter((w) => w === k).length, 1, `${k} seen exactly once`)
})

/** A raw HTTP/1.1 request on its own socket: the body in `chunks`, each written after the previous was flushed. */
async function raw(node: Server, head: string, chunks: Buffer[], close = false): Promise<string> {
  const { port } = new URL(node.base)
  const socket = connect(Number(port), '127.0.0.1')
  await new Promise<void>((resolve, reject) => socket.once('connect', resolve).once('error', reject))
  let answer = ''
  socket.setEncoding('utf8').on('data', (d: string) => { answer += d })
  const ended = new Promise<void>((resolve) => socket.once('close', () => resolve()))
  socket.on('error', () => undefined)
  await new Promise<void>((resolve) => socket.write(head, () => resolve()))
  for (const chunk of chunks) await new Promise<void>((resolve) => socket.write(chunk, () => setImmediate(resolve)))
  if (close) { socket.destroy(); return '' }
  await Promise.race([ended, new Promise((resolve) => setTimeout(resolve, REQUEST_TIMEOUT_MS).unref())])
  socket.destroy()
  return answer
}

t.test('a body sent a byte at a time is read whole; a client gone mid-body writes nothing; a client gone after its body gets all or nothing (CONTRACT §5, §18)', async (t) => {
  const { a, b, key, send } = await twoNodes(t)
  const cat = await send(a, 'POST', '/categories', { name: 'Slow' })
  const body = Buffer.from(JSON.stringify({ title: 'Dripped Ünïcode €', start_date: '2027-06-01 18:00:00', end_date: '2027-06-01 19:00:00', categories: [cat.body.id], venue: { venue: 'Inline Hall', city: 'Genève' }, organizer: [{ organizer: 'Inline Org' }], recurrence: { rule: 'FREQ=WEEKLY;COUNT=4' } }))
  const head = (length: number) => `POST ${API}/events HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${key}\r\nContent-Type: application/json\r\nContent-Length: ${length}\r\nConnection: close\r\n\r\n`
  const dripped = await raw(a, head(body.length), [...body].map((byte) => Buffer.from([byte])))
  t.match(dripped, /^HTTP\/1\.1 201 /, 'a byte at a time: 201')
  const record = JSON.parse(dripped.slice(dripped.indexOf('\r\n\r\n') + 4)) as Json
  t.same([record.title, (record.venue as Json[]).map((v) => v.city), (record.organizer as Json[]).length, (record.recurrence as Json).rule], ['Dripped Ünïcode €', ['Genève'], 1, 'FREQ=WEEKLY;COUNT=4'], 'every byte arrived, UTF-8 split across writes included')
  const since = String((await send(b, 'GET', '/changes?since=now')).body.next_cursor)
  // Gone halfway through the body: nothing is written, not even the inline venue or organizer.
  const half = Buffer.from(JSON.stringify({ title: 'Half', start_date: '2027-06-02 18:00:00', end_date: '2027-06-02 19:00:00', venue: { venue: 'Half Hall' } }))
  await raw(a, head(half.length), [half.subarray(0, Math.floor(half.length / 2))], true)
  // Gone right after the whole body: the write is applied whole or not at all.
  const whole = Buffer.from(JSON.stringify({ title: 'Whole', start_date: '2027-06-03 18:00:00', end_date: '2027-06-03 19:00:00', categories: [cat.body.id], venue: { venue: 'Whole Hall' }, organizer: [{ organizer: 'Whole Org' }] }))
  await raw(b, head(whole.length), [whole], true)
  // A later write on each node, answered: the earlier requests were read (or dropped) before it.
  t.equal((await send(a, 'POST', '/tags', { name: 'after-a' })).status, 201)
  t.equal((await send(b, 'POST', '/tags', { name: 'after-b' })).status, 201)
  let changes: Json[] = []
  for (let i = 0; i < 50; i++) {
    changes = (await send(a, 'GET', `/changes?since=${encodeURIComponent(since)}&per_page=500`)).body.changes as Json[]
    if (changes.some((c) => (c.record as Json | undefined)?.title === 'Whole') || i === 49) break
    await new Promise((resolve) => setTimeout(resolve, 20))
  }
  const titles = changes.map((c) => String((c.record as Json | undefined)?.title ?? (c.record as Json | undefined)?.venue ?? (c.record as Json | undefined)?.organizer ?? (c.record as Json | undefined)?.name))
  t.notOk(titles.includes('Half') || titles.includes('Half Hall'), `nothing of the half-sent body was written (${titles.join(', ')})`)
  const wrote = changes.find((c) => (c.record as Json | undefined)?.title === 'Whole')?.record as Json | undefined
  if (wrote === undefined) {
    t.notOk(titles.includes('Whole Hall') || titles.includes('Whole Org'), 'the event was not written, nor its inline records')
  } else {
    t.same([(wrote.venue as Json[]).map((v) => v.venue), (wrote.organizer as Json[]).map((o) => o.organizer), (wrote.categories as Json[]).map((c) => c.id)], [['Whole Hall'], ['Whole Org'], [cat.body.id]], 'the event was written whole, with its inline records and links')
  }
  // Gone right after the body of a create with an Idempotency-Key, then retried at once with the same key, as a
  // mobile client does: answers are 409 (still in use) until one is 201 (created, or the first answer replayed); one event.
  const keyed = Buffer.from(JSON.stringify({ title: 'Keyed', start_date: '2027-06-04 18:00:00', end_date: '2027-06-04 19:00:00', venue: { venue: 'Keyed Hall' } }))
  await raw(a, head(keyed.length).replace('\r\n\r\n', '\r\nIdempotency-Key: gone-and-back\r\n\r\n'), [keyed], true)
  const retries: number[] = []
  for (let i = 0; i < 100; i++) {
    const retry = await send(i % 2 === 0 ? b : a, 'POST', '/events', JSON.parse(keyed.toString()), { 'idempotency-key': 'gone-and-back' })
    retries.push(retry.status)
    if (retry.status !== 409) break
    await new Promise((resolve) => setTimeout(resolve, 20))
  }
  t.equal(retries.at(-1), 201, `the retry is answered 201 (${retries.join(',')})`)
  t.ok(retries.slice(0, -1).every((status) => status === 409), 'only 409 before it')
  const keyedEvents = (await send(b, 'GET', '/events?search=Keyed&start_date=2027-01-01')).body.events as Json[]
  t.equal(keyedEvents.length, 1, 'one event, however the first request ended')
  const halls = (await send(a, 'GET', '/venues?search=Keyed%20Hall')).body.venues as Json[]
  t.equal(halls.length, 1, 'one inline venue')
})

t.test('writers on both nodes at once while a mirror follows /changes from both: nothing committed is skipped, the mirror ends with the server\'s state, the receiver gets every acknowledged create (CONTRACT §12, §13, §15)', async (t) => {
  const { a, b, send } = await twoNodes(t)
  const receiver = await startReceiver(t)
  const hook = await send(a, 'POST', '/webhooks', { url: receiver.url, events: ['event.created', 'venue.created'] })
  receiver.secret = String(hook.body.secret)
  const tag = await send(a, 'POST', '/tags', { name: 'shared' })
  const series = await send(b, 'POST', '/events', { title: 'Shared series', start_date: '2027-02-01 18:00:00', end_date: '2027-02-01 19:00:00', recurrence: { rule: 'FREQ=DAILY;COUNT=40' }, tags: [tag.body.id] })
  const created: string[] = []
  let writing = true
  const writer = async (node: Server, w: number) => {
    let mine: number | undefined
    for (let i = 0; i < 8; i++) {
      const step = (w + i) % 5
      if (step === 0 || mine === undefined) {
        const res = await send(node, 'POST', '/events', { title: `W${w} ${i}`, start_date: '2027-03-01 18:00:00', end_date: '2027-03-01 19:00:00', venue: { venue: `Hall ${w} ${i}` }, tags: [tag.body.id] })
        if (res.status === 201) { mine = Number(res.body.id); created.push(`event/${mine}`, `venue/${String((res.body.venue as Json[])[0]!.id)}`) }
        t.equal(res.status, 201, `writer ${w} create`)
      } else if (step === 1) {
        t.equal((await send(node, 'PATCH', `/events/${String(series.body.id)}/occurrences/202702${String(2 + ((w * 7 + i) % 26)).padStart(2, '0')}T180000Z`, { title: `Occ ${w} ${i}` })).status, 200, `writer ${w} occurrence`)
      } else if (step === 2) {
        t.equal((await send(node, 'DELETE', `/events/${mine}`)).status, 200, `writer ${w} trash`)
      } else if (step === 3) {
        t.equal((await send(node, 'PATCH', `/events/${mine}`, { status: 'publish', title: `W${w} ${i} back` })).status, 200, `writer ${w} restore`)
      } else {
        t.equal((await send(node, 'PATCH', `/tags/${String(tag.body.id)}`, { description: `by ${w} ${i}` })).status, 200, `writer ${w} term`)
      }
    }
  }
  const following = changesMirror(t, send, 5)
  const mirror = following.records
  const sync = (node: Server) => following.follow(node)
  const follower = (async () => {
    for (let i = 0; writing; i++) await sync(i % 2 === 0 ? a : b)
  })()
  await Promise.all([writer(a, 0), writer(b, 1), writer(a, 2), writer(b, 3)])
  writing = false
  await follower
  await sync(b)
  t.ok(following.pages() > 4, `the mirror followed while the writers wrote (${following.pages()} pages)`)
  const fresh = changesMirror(t, send, 500)
  await fresh.follow(a)
  const everything = fresh.records
  t.same([...mirror.keys()].sort(), [...everything.keys()].sort(), 'the mirror that followed holds what a fresh read of the log holds')
  for (const [k, record] of everything) t.same(linksAsIds(k, mirror.get(k)), linksAsIds(k, record), `${k}: as a fresh read has it`)
  await receiver.until((got) => created.every((k) => got.some((r) => `${r.json.data.resource.replace(/s$/, '')}/${r.json.data.id}` === k)), 15_000, () => `${receiver.received.length} deliveries for ${created.length} creates`).catch((e: Error) => t.fail(e.message))
  t.ok(receiver.received.every((r) => r.verified), 'every delivery verifies')
})

t.test('a client freezes a list with modified_before=now and walks its pages while others write: the links carry the instant (not `now`), so no record is shown twice or lost; also across a DST change (CONTRACT §3, §12)', async (t) => {
  let now = new Date('2026-10-25T00:30:00Z')
  const s = await setup(t, { config: { timezone: 'Europe/Zurich' }, clock: () => now })
  for (let i = 0; i < 4; i++) {
    await s.event(`Frozen ${i}`, { start_date: `2026-11-0${i + 2} 18:00:00`, end_date: `2026-11-0${i + 2} 19:00:00` })
    await s.venue({ venue: `Frozen hall ${i}` })
    await s.organizer({ organizer: `Frozen org ${i}` })
  }
  for (const [list, key] of [[EVENTS, 'events'], [`${PREFIX}/venues`, 'venues'], [`${PREFIX}/organizers`, 'organizers']] as const) {
    now = new Date('2026-10-25T00:59:00Z') // 02:59 CEST; an hour later the clock reads 02:59 again (CET)
    const first = await s.inject({ url: `${list}?modified_before=now&modified_after=yesterday&per_page=2` })
    t.equal(first.statusCode, 200)
    const rest = new URL(first.json<{ rest_url: string }>().rest_url)
    t.equal(rest.searchParams.get('modified_before'), '2026-10-25T02:59:00+02:00', `${key}: rest_url carries the instant \`now\` stood for`)
    t.equal(rest.searchParams.get('modified_after'), '2026-10-24T00:00:00+02:00', `${key}: and the instant of \`yesterday\``)
    const seen = (first.json<Record<string, Array<{ id: number }>>>()[key] ?? []).map((r) => r.id)
    // Others write between the pages: a new record, sorted first.
    now = new Date('2026-10-25T01:59:00Z')
    if (key === 'events') await s.event('Written between', { start_date: '2026-11-01 18:00:00', end_date: '2026-11-01 19:00:00' })
    else if (key === 'venues') await s.venue({ venue: 'Written between' })
    else await s.organizer({ organizer: 'Written between' })
    now = new Date('2026-10-25T02:30:00Z')
    let next = first.json<{ next_rest_url?: string }>().next_rest_url
    while (next !== undefined) {
      const page = await s.inject({ url: next.slice(next.indexOf(PREFIX)) })
      t.equal(page.statusCode, 200, next)
      seen.push(...(page.json<Record<string, Array<{ id: number }>>>()[key] ?? []).map((r) => r.id))
      next = page.json<{ next_rest_url?: string }>().next_rest_url
    }
    t.equal(seen.length, 4, `${key}: the four records of the frozen list, once each (${seen.join(',')})`)
    t.equal(new Set(seen).size, seen.length, `${key}: none twice`)
  }
})
