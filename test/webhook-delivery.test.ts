/**
 * Webhook deliveries (CONTRACT §13) to a real HTTP receiver on loopback, every signature verified with
 * the `standardwebhooks` package's verifier: every kind of change arrives with its type and record; a
 * 500 is retried with the same `webhook-id`; a receiver that was down gets everything once it is back;
 * a slow receiver times out and is retried; give-ups in a row disable a subscription and PATCH resumes
 * it; attempts are listed newest first. The dispatcher's clock is the test's: retries come due when the
 * test moves it, and `runOnce` does one round (no sleeps).
 */
import t, { type Test } from 'tap'
import { API, build } from './helpers/build.js'
import { startReceiver, type Receiver } from './helpers/receiver.js'

type Json = Record<string, unknown>

async function setup(t: Test, options: { schedule?: number[]; disableAfter?: number; timeoutMs?: number } = {}) {
  let offset = 0
  const built = await build(t, {
    config: { webhooks: { retrySchedule: options.schedule ?? [1000, 1000, 1000], disableAfter: options.disableAfter ?? 10, allowPrivate: true } },
    webhooks: { now: () => new Date(Date.now() + offset), random: () => 0.5, timeoutMs: options.timeoutMs ?? 5000 },
  })
  const admin = await built.auth('administrator')
  const receiver = await startReceiver(t)
  const send = async (method: 'POST' | 'PATCH' | 'DELETE' | 'GET', path: string, body?: Json) => {
    const res = await built.inject({ method, url: `${API}${path}`, headers: admin, ...(body === undefined ? {} : { payload: body }) })
    t.ok(res.statusCode < 300, `${method} ${path} → ${res.statusCode}`, { body: res.body.slice(0, 300) })
    return res.json<Json & { id: number }>()
  }
  const subscribe = async (r: Receiver, events: string[] = ['*']) => {
    const created = await send('POST', '/webhooks', { url: r.url, events })
    r.secret = String(created.secret)
    return created
  }
  /** Moves the dispatcher's clock on. */
  const advance = (ms: number) => { offset += ms }
  const run = () => built.app.webhooks.runOnce()
  /** Rounds until nothing is due (a subscription has at most 4 attempts in flight); how many attempts. */
  const drain = async () => {
    let total = 0
    for (let n = await run(); n > 0; n = await run()) total += n
    return total
  }
  return { ...built, admin, receiver, send, subscribe, advance, run, drain }
}

t.test('every kind of change arrives, signed, with its type, cursor and record', async (t) => {
  const s = await setup(t)
  await s.subscribe(s.receiver)
  const category = await s.send('POST', '/categories', { name: 'Concerts' })
  const tag = await s.send('POST', '/tags', { name: 'Jazz' })
  const venue = await s.send('POST', '/venues', { venue: 'Volkshaus', city: 'Zürich' })
  const organizer = await s.send('POST', '/organizers', { organizer: 'Jazz Club' })
  const event = await s.send('POST', '/events', { title: 'Late Night Jazz', start_date: '2026-12-04 21:00', end_date: '2026-12-04 23:00', categories: [category.id], tags: [tag.id], venue: [venue.id], organizer: [organizer.id] })
  await s.send('PATCH', `/events/${event.id}`, { title: 'Later Night Jazz' })
  await s.send('PATCH', `/venues/${venue.id}`, { city: 'Zurich' })
  while (await s.run() > 0) { /* until nothing is due */ }
  await s.send('DELETE', `/events/${event.id}?force=true`)
  await s.send('DELETE', `/tags/${tag.id}`)
  while (await s.run() > 0) { /* until nothing is due */ }
  const got = s.receiver.received
  t.ok(got.every((r) => r.verified), 'every signature verifies with standardwebhooks')
  const types = got.map((r) => `${r.json.type} ${r.json.data.id}`)
  for (const expected of [`category.created ${category.id}`, `tag.created ${tag.id}`, `venue.created ${venue.id}`, `organizer.created ${organizer.id}`,
    `event.created ${event.id}`, `event.updated ${event.id}`, `venue.updated ${venue.id}`, `event.deleted ${event.id}`, `tag.deleted ${tag.id}`]) {
    t.ok(types.includes(expected), expected, { types })
  }
  const rows = await s.db.selectFrom('changes').select(['position', 'resource', 'record_id', 'action']).orderBy('position').execute()
  t.equal(new Set(got.map((r) => r.id)).size, rows.length, 'one delivery per change of the log, each with its own webhook-id')
  const created = got.find((r) => r.json.type === 'event.created')
  t.match(created?.json.data, { resource: 'events', id: event.id, ml_language: 'en' })
  t.type(created?.json.data.cursor, 'string')
  t.equal(created?.json.data.record?.title, 'Later Night Jazz', 'the record as it was when first sent (here: after the update)')
  const deleted = got.find((r) => r.json.type === 'event.deleted')
  t.equal(deleted?.json.data.record, undefined, 'a deletion has no record')
  t.match(created?.json.timestamp, /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$/)
  t.equal(await s.run(), 0, 'nothing is sent twice once delivered')
})

t.test('a record that went to the trash before its delivery is sent without a record', async (t) => {
  const s = await setup(t)
  await s.subscribe(s.receiver, ['event.*', 'venue.*'])
  const event = await s.send('POST', '/events', { title: 'Gone soon', start_date: '2026-12-04 21:00', end_date: '2026-12-04 23:00' })
  await s.send('PATCH', `/events/${event.id}`, { title: 'Going' })
  await s.send('DELETE', `/events/${event.id}`)
  const venue = await s.send('POST', '/venues', { venue: 'Gone too' })
  await s.send('DELETE', `/venues/${venue.id}`)
  const kept = await s.send('POST', '/venues', { venue: 'Kept' })
  await s.drain()
  const got = (resource: string, id: number) => s.receiver.received.filter((r) => r.json.data.resource === resource && r.json.data.id === id)
    .map((r) => `${r.json.type} ${r.json.data.record?.status ?? 'no record'}`).sort()
  t.same(got('events', event.id), ['event.created no record', 'event.deleted no record', 'event.updated no record'], 'created and updated: in the trash by now')
  t.same(got('venues', venue.id), ['venue.created no record', 'venue.deleted no record'])
  t.same(got('venues', kept.id), ['venue.created publish'], 'a record still listed is sent')
})

t.test('a subscription gets only the types it asks for', async (t) => {
  const s = await setup(t)
  await s.subscribe(s.receiver, ['venue.*', 'event.deleted'])
  const venue = await s.send('POST', '/venues', { venue: 'Volkshaus' })
  await s.send('POST', '/tags', { name: 'Jazz' })
  const event = await s.send('POST', '/events', { title: 'Jam', start_date: '2026-12-04 21:00', end_date: '2026-12-04 23:00' })
  await s.send('DELETE', `/events/${event.id}?force=true`)
  while (await s.run() > 0) { /* drain */ }
  t.same(s.receiver.received.map((r) => `${r.json.type} ${r.json.data.id}`).sort(), [`event.deleted ${event.id}`, `venue.created ${venue.id}`])
})

t.test('a 500 then a 200: the retry has the same webhook-id and body; attempts are listed newest first', async (t) => {
  const s = await setup(t)
  const hook = await s.subscribe(s.receiver)
  s.receiver.answers.push({ status: 500, body: 'x'.repeat(100_000) })
  await s.send('POST', '/tags', { name: 'Jazz' })
  t.equal(await s.run(), 1)
  t.equal(await s.run(), 0, 'not due again before its delay')
  s.advance(1500)
  t.equal(await s.run(), 1, 'due after the first delay (1 s with jitter)')
  const [first, second] = s.receiver.received
  t.equal(first?.id, second?.id, 'the same webhook-id')
  t.equal(first?.body, second?.body, 'the same body')
  t.not(first?.timestamp === undefined, true)
  t.ok(first?.verified && second?.verified)
  const list = await s.send('GET', `/webhooks/${hook.id}/deliveries`) as unknown as { deliveries: Array<Json>; total: number }
  t.equal(list.total, 2)
  t.match(list.deliveries[0], { attempt: 2, outcome: 'delivered', response_status: 200, error: null, message_id: first?.id })
  t.match(list.deliveries[1], { attempt: 1, outcome: 'retrying', response_status: 500 })
  t.ok(String(list.deliveries[1]?.error).length < 300, 'the receiver answer is not echoed in full')
})

t.test('a receiver that is down gets everything when it comes back', async (t) => {
  const s = await setup(t, { schedule: [1000, 1000, 1000, 1000, 1000] })
  await s.subscribe(s.receiver)
  await s.receiver.down()
  const ids: number[] = []
  for (let i = 0; i < 5; i++) ids.push((await s.send('POST', '/tags', { name: `Tag ${i}` })).id)
  t.equal(await s.drain(), 5, 'five attempts, all refused (at most four at once to one receiver)')
  s.advance(1500)
  t.equal(await s.drain(), 5, 'retried, still down')
  await s.receiver.open()
  s.advance(1500)
  t.equal(await s.drain(), 5)
  t.same(s.receiver.received.map((r) => r.json.data.id).sort((a, b) => a - b), ids)
  t.ok(s.receiver.received.every((r) => r.verified))
})

t.test('a slow receiver times out and is retried', async (t) => {
  const s = await setup(t, { timeoutMs: 200 })
  const hook = await s.subscribe(s.receiver)
  s.receiver.answers.push({ status: 200, delayMs: 1000 })
  await s.send('POST', '/tags', { name: 'Jazz' })
  await s.run()
  const list = await s.send('GET', `/webhooks/${hook.id}/deliveries`) as unknown as { deliveries: Array<Json> }
  t.match(list.deliveries[0], { outcome: 'retrying', response_status: null, error: 'no answer within the timeout' })
  s.advance(1500)
  await s.run()
  await s.receiver.waitFor(2)
  const again = await s.send('GET', `/webhooks/${hook.id}/deliveries`) as unknown as { deliveries: Array<Json> }
  t.match(again.deliveries[0], { attempt: 2, outcome: 'delivered' })
})

t.test('attempts in flight when their subscription is deleted leave no attempt row behind', async (t) => {
  const s = await setup(t)
  const hook = await s.subscribe(s.receiver)
  // One will fail and one arrive, both answered only after the subscription is gone.
  s.receiver.answers.push({ status: 500, delayMs: 400 }, { status: 200, delayMs: 400 })
  await s.send('POST', '/tags', { name: 'A' })
  await s.send('POST', '/tags', { name: 'B' })
  const round = s.run()
  await s.receiver.waitForArrivals(2)
  await s.send('DELETE', `/webhooks/${hook.id}`)
  t.equal(await round, 2, 'both were attempted')
  const left = await s.db.selectFrom('webhook_attempts').select('id').where('webhook_id', '=', hook.id).execute()
  t.same(left, [], 'no attempt row of the deleted subscription')
  t.same(await s.db.selectFrom('webhook_deliveries').select('id').where('webhook_id', '=', hook.id).execute(), [], 'nor any delivery')
})

t.test('give-ups in a row disable the subscription; PATCH active resumes it and what was pending goes out', async (t) => {
  const s = await setup(t, { schedule: [1000], disableAfter: 2 })
  const hook = await s.subscribe(s.receiver)
  s.receiver.fallback = { status: 503 }
  await s.send('POST', '/tags', { name: 'A' })
  await s.send('POST', '/tags', { name: 'B' })
  await s.run()
  s.advance(1500)
  await s.run()
  const disabled = await s.send('GET', `/webhooks/${hook.id}`)
  t.match(disabled, { active: false, failures: 2, disabled_reason: '2 deliveries in a row were given up.' })
  t.type(disabled.disabled_utc, 'string')
  const attempts = await s.send('GET', `/webhooks/${hook.id}/deliveries`) as unknown as { deliveries: Array<Json> }
  t.same(attempts.deliveries.map((d) => d.outcome), ['failed', 'failed', 'retrying', 'retrying'])
  // Changes while disabled are not queued for it.
  await s.send('POST', '/tags', { name: 'C' })
  t.equal(await s.run(), 0)
  s.receiver.fallback = { status: 204 }
  const resumed = await s.send('PATCH', `/webhooks/${hook.id}`, { active: true })
  t.match(resumed, { active: true, failures: 0, disabled_utc: null, disabled_reason: null })
  await s.send('POST', '/tags', { name: 'D' })
  t.equal(await s.run(), 1, 'a change after resuming is delivered')
  t.equal(s.receiver.received.at(-1)?.json.type, 'tag.created')
})

t.test('two dispatchers on one database (two nodes) never attempt the same delivery', async (t) => {
  const s = await setup(t)
  await s.subscribe(s.receiver)
  for (let i = 0; i < 12; i++) await s.send('POST', '/tags', { name: `Tag ${i}` })
  const { createDispatcher } = await import('../src/webhooks/dispatcher.js')
  const other = createDispatcher({ db: s.db, site: { apiUrl: `${API}`, geoloc: false, timeZone: 'UTC' }, json: (await import('../src/http/serialized.js')).recordSerializers((await import('./helpers/contract.js')).SPEC.document), retrySchedule: [1000], disableAfter: 10, allowPrivate: true })
  t.teardown(() => other.stop())
  let sent = 0
  for (let round = 0; round < 10 && sent < 12; round++) {
    const [a, b] = await Promise.all([s.run(), other.runOnce()])
    sent += a + b
  }
  t.equal(sent, 12, 'twelve attempts in all')
  const ids = s.receiver.received.map((r) => r.id)
  t.equal(new Set(ids).size, 12, 'each delivery attempted once')
  t.equal(ids.length, 12)
})

t.test('a saturated node claims a few deliveries per round; once it is not, as many as its limits allow', async (t) => {
  const s = await setup(t)
  await s.subscribe(s.receiver)
  for (let i = 0; i < 10; i++) await s.send('POST', '/tags', { name: `Tag ${i}` })
  const { createDispatcher } = await import('../src/webhooks/dispatcher.js')
  let saturated = true
  const node = createDispatcher({
    db: s.db, site: { apiUrl: `${API}`, geoloc: false, timeZone: 'UTC' }, json: (await import('../src/http/serialized.js')).recordSerializers((await import('./helpers/contract.js')).SPEC.document),
    retrySchedule: [1000], disableAfter: 10, allowPrivate: true, saturated: () => saturated, busyConcurrency: 3,
  })
  t.teardown(() => node.stop())
  t.equal(await node.runOnce(), 3, 'saturated: three')
  t.equal(await node.runOnce(), 3, 'still saturated: three more')
  saturated = false
  t.equal(await node.runOnce(), 4, 'not saturated: the other four at once')
  t.equal(new Set(s.receiver.received.map((r) => r.id)).size, 10, 'each change delivered once')
})

t.test('the event loop load: utilization and requests over the last window of at least 100 ms; saturated only by requests', async (t) => {
  const { eventLoopLoad, saturatedByRequests } = await import('../src/webhooks/loop-load.js')
  let now = 0
  let requests = 0
  const load = eventLoopLoad(() => requests, () => now)
  t.same(load(), { utilization: 0, requests: 0 }, 'nothing measured yet')
  const spin = () => {
    const until = performance.now() + 30
    while (performance.now() < until) { /* the loop is busy */ }
  }
  spin()
  now = 100
  const alone = load()
  t.ok(alone.utilization > 0.9 && alone.utilization <= 1, `a loop that only ran code (${alone.utilization.toFixed(2)})`)
  t.notOk(saturatedByRequests(alone), 'kept busy without requests (the dispatcher itself): not saturated')
  requests = 40
  spin()
  now = 150
  t.same(load(), alone, 'within the window, the last one')
  now = 200
  const answering = load()
  t.equal(answering.requests, 40)
  t.ok(saturatedByRequests(answering), 'busy while requests come in: saturated')
  t.notOk(saturatedByRequests({ utilization: 0.3, requests: 40 }), 'requests with time to spare: not saturated')
})

t.test('metrics: attempts by outcome and the backlog', async (t) => {
  let offset = 0
  const built = await build(t, {
    config: { metrics: true, webhooks: { retrySchedule: [1000], disableAfter: 10, allowPrivate: true } },
    webhooks: { now: () => new Date(Date.now() + offset), random: () => 0.5 },
  })
  const admin = await built.auth('administrator')
  const receiver = await startReceiver(t)
  receiver.answers.push({ status: 500 })
  const created = await built.inject({ method: 'POST', url: `${API}/webhooks`, headers: admin, payload: { url: receiver.url, events: ['*'] } })
  receiver.secret = created.json<{ secret: string }>().secret
  await built.inject({ method: 'POST', url: `${API}/tags`, headers: admin, payload: { name: 'Jazz' } })
  await built.inject({ method: 'POST', url: `${API}/tags`, headers: admin, payload: { name: 'Blues' } })
  const before = (await built.app.inject({ url: '/metrics' })).body
  t.match(before, /^calendar_webhook_backlog 2$/m, 'two pending')
  await built.app.webhooks.runOnce()
  offset += 1500
  await built.app.webhooks.runOnce()
  const after = (await built.app.inject({ url: '/metrics' })).body
  t.match(after, /^calendar_webhook_backlog 0$/m)
  t.match(after, /^calendar_webhook_attempts_total\{outcome="delivered"\} 2$/m)
  t.match(after, /^calendar_webhook_attempts_total\{outcome="retrying"\} 1$/m)
})

t.test('redirects are not followed: a 302 is a failure, retried later', async (t) => {
  const s = await setup(t)
  const hook = await s.subscribe(s.receiver)
  s.receiver.answers.push({ status: 302, body: 'moved' })
  await s.send('POST', '/tags', { name: 'Jazz' })
  await s.run()
  t.equal(s.receiver.received.length, 1, 'one request, not followed')
  const list = await s.send('GET', `/webhooks/${hook.id}/deliveries`) as unknown as { deliveries: Array<Json> }
  t.match(list.deliveries[0], { outcome: 'retrying', response_status: 302, error: /^HTTP 302 \(redirects are not followed\)/ })
})

t.test('at delivery time too, loopback addresses are refused unless allowed (by address and by name)', async (t) => {
  const built = await build(t, { config: { webhooks: { retrySchedule: [1000], disableAfter: 10, allowPrivate: false } } })
  const admin = await built.auth('administrator')
  const receiver = await startReceiver(t)
  // Subscriptions whose URL became loopback after they were checked (written straight in the table).
  const { withTransaction } = await import('../src/db/unit-of-work.js')
  const { insertWebhook } = await import('../src/repositories/webhooks.js')
  const port = new URL(receiver.url).port
  for (const url of [receiver.url, `http://localhost:${port}/hook`]) {
    await withTransaction(built.db, (trx) => insertWebhook(trx, { url, events: ['*'], description: null, active: true, secret: `whsec_${Buffer.alloc(32, 1).toString('base64')}`, nowUtc: '2026-06-15 12:00:00' }))
  }
  await built.inject({ method: 'POST', url: `${API}/tags`, headers: admin, payload: { name: 'Jazz' } })
  t.equal(await built.app.webhooks.runOnce(), 2)
  t.equal(receiver.received.length, 0, 'nothing reached the receiver')
  for (const id of [1, 2]) {
    const list = await built.inject({ url: `${API}/webhooks/${id}/deliveries`, headers: admin })
    t.match(list.json<{ deliveries: Json[] }>().deliveries[0], { outcome: 'retrying', response_status: null, error: /not public/ }, `subscription ${id}`)
  }
})
