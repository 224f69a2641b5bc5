/**
 * /webhooks (CONTRACT §13): administrators only (anonymous 401, others 403); create answers 201 with
 * the secret, shown once (`whsec_` + base64 of 32 bytes) and never again, in no other answer nor in the
 * log; URLs are absolute http(s) and, unless allowed, never loopback, private, link-local or
 * unspecified; read, PATCH, DELETE, lists and pages; JSON and form bodies.
 */
import t, { type Test } from 'tap'
import { API, API_URL, build } from './helpers/build.js'
import { expectError } from './helpers/errors.js'

type Json = Record<string, unknown>

async function setup(t: Test, options: { allowPrivate?: boolean; lines?: string[] } = {}) {
  const built = await build(t, {
    config: { webhooks: { retrySchedule: [1000], disableAfter: 10, allowPrivate: options.allowPrivate ?? true }, ...(options.lines !== undefined ? { logLevel: 'trace' } : {}) },
    ...(options.lines !== undefined ? { logStream: { write: (line: string) => { options.lines?.push(line) } } } : {}),
  })
  const admin = await built.auth('administrator')
  return { ...built, admin }
}

const BODY = { url: 'https://partner.example.com/hooks', events: ['event.*', 'venue.updated'], description: 'Partner' }

t.test('administrators only: anonymous 401, editors and others 403, on every operation', async (t) => {
  const s = await setup(t)
  const created = (await s.inject({ method: 'POST', url: `${API}/webhooks`, headers: s.admin, payload: BODY })).json<{ id: number }>()
  const editor = await s.auth('editor')
  const author = await s.auth('author')
  const calls: Array<[string, string, Json | undefined]> = [
    ['GET', '/webhooks', undefined], ['POST', '/webhooks', BODY], ['GET', `/webhooks/${created.id}`, undefined],
    ['PATCH', `/webhooks/${created.id}`, { active: false }], ['DELETE', `/webhooks/${created.id}`, undefined],
    ['GET', `/webhooks/${created.id}/deliveries`, undefined],
  ]
  for (const [method, path, payload] of calls) {
    const request = { method: method as 'GET', url: `${API}${path}`, ...(payload !== undefined ? { payload } : {}) }
    expectError(t, await s.inject(request), 401, 'rest_forbidden')
    expectError(t, await s.inject({ ...request, headers: editor }), 403, 'rest_forbidden')
    expectError(t, await s.inject({ ...request, headers: author }), 403, 'rest_forbidden')
  }
})

t.test('create: 201, Location, the secret once; read, list, PATCH and DELETE never show it', async (t) => {
  const lines: string[] = []
  const s = await setup(t, { lines })
  const res = await s.inject({ method: 'POST', url: `${API}/webhooks`, headers: s.admin, payload: BODY })
  t.equal(res.statusCode, 201)
  const created = res.json<Json & { id: number; secret: string }>()
  t.equal(res.headers.location, `${API_URL}/webhooks/${created.id}`)
  t.match(created.secret, /^whsec_[A-Za-z0-9+/]{43}=$/)
  t.equal(Buffer.from(created.secret.slice(6), 'base64').length, 32, '32 random bytes')
  t.match(created, { url: BODY.url, events: BODY.events, description: 'Partner', active: true, failures: 0, disabled_utc: null, disabled_reason: null, secret_hint: created.secret.slice(-4) })
  const answers = [
    await s.inject({ url: `${API}/webhooks/${created.id}`, headers: s.admin }),
    await s.inject({ url: `${API}/webhooks`, headers: s.admin }),
    await s.inject({ method: 'PATCH', url: `${API}/webhooks/${created.id}`, headers: s.admin, payload: { description: null, events: ['*'] } }),
    await s.inject({ url: `${API}/webhooks/${created.id}/deliveries`, headers: s.admin }),
    await s.inject({ method: 'DELETE', url: `${API}/webhooks/${created.id}`, headers: s.admin }),
  ]
  for (const answer of answers) {
    t.equal(answer.statusCode, 200)
    t.notOk(answer.body.includes(created.secret.slice(6, 30)), 'no part of the secret in any other answer')
    t.notOk(answer.body.includes('"secret"'), 'no secret field')
  }
  t.match(answers[2]?.json(), { description: null, events: ['*'] })
  t.match(answers[4]?.json(), { id: created.id, events: ['*'] }, 'DELETE answers the record as it was')
  t.ok(lines.length > 0, 'the log was captured')
  t.notOk(lines.join('\n').includes(created.secret.slice(6, 30)), 'the secret is never logged')
  expectError(t, await s.inject({ url: `${API}/webhooks/${created.id}`, headers: s.admin }), 404, 'rest-webhook-not-found')
})

t.test('lists: oldest first, pages, links; a page past the last is 404', async (t) => {
  const s = await setup(t)
  const empty = await s.inject({ url: `${API}/webhooks`, headers: s.admin })
  t.same(empty.json(), { webhooks: [], rest_url: `${API_URL}/webhooks?page=1&per_page=10`, total: 0, total_pages: 0 })
  for (let i = 0; i < 3; i++) await s.inject({ method: 'POST', url: `${API}/webhooks`, headers: s.admin, payload: { url: `https://h${i}.example.com/`, events: ['*'] } })
  const page = await s.inject({ url: `${API}/webhooks?per_page=2&page=2`, headers: s.admin })
  t.equal(page.headers['x-total'], '3')
  t.equal(page.headers['x-total-pages'], '2')
  t.match(page.json(), { webhooks: [{ url: 'https://h2.example.com/' }], total: 3, total_pages: 2, previous_rest_url: `${API_URL}/webhooks?page=1&per_page=2` })
  expectError(t, await s.inject({ url: `${API}/webhooks?page=3&per_page=2`, headers: s.admin }), 404, 'webhook-archive-page-not-found')
  expectError(t, await s.inject({ url: `${API}/webhooks/99/deliveries`, headers: s.admin }), 404, 'rest-webhook-not-found')
  expectError(t, await s.inject({ url: `${API}/webhooks/1/deliveries?page=2`, headers: s.admin }), 404, 'delivery-archive-page-not-found')
  expectError(t, await s.inject({ method: 'PATCH', url: `${API}/webhooks/99`, headers: s.admin, payload: {} }), 404, 'rest-webhook-not-found')
  expectError(t, await s.inject({ method: 'DELETE', url: `${API}/webhooks/99`, headers: s.admin }), 404, 'rest-webhook-not-found')
})

t.test('bodies: unknown types and fields, missing fields, bad URLs are 400 naming them; forms work', async (t) => {
  const s = await setup(t)
  const post = (payload: Json) => s.inject({ method: 'POST', url: `${API}/webhooks`, headers: s.admin, payload })
  expectError(t, await post({ url: BODY.url, events: ['event.moved'] }), 400, 'rest_invalid_param', ['events'])
  expectError(t, await post({ url: BODY.url, events: [] }), 400, 'rest_invalid_param', ['events'])
  expectError(t, await post({ url: BODY.url }), 400, 'rest_missing_callback_param')
  expectError(t, await post({ ...BODY, secret: 'mine' }), 400, 'rest_invalid_param', ['secret'])
  expectError(t, await post({ url: 'ftp://partner.example.com/', events: ['*'] }), 400, 'rest_invalid_param', ['url'])
  expectError(t, await post({ url: 'not a url', events: ['*'] }), 400, 'rest_invalid_param', ['url'])
  const form = await s.inject({
    method: 'POST', url: `${API}/webhooks`, headers: { ...s.admin, 'content-type': 'application/x-www-form-urlencoded' },
    payload: 'url=https%3A%2F%2Fpartner.example.com%2Fform&events=tag.*,venue.created&active=0',
  })
  t.equal(form.statusCode, 201)
  t.match(form.json(), { url: 'https://partner.example.com/form', events: ['tag.*', 'venue.created'], active: false })
})

t.test('loopback, private, link-local and unspecified addresses are refused unless allowed', async (t) => {
  const s = await setup(t, { allowPrivate: false })
  for (const url of ['http://127.0.0.1:8080/', 'http://10.1.2.3/', 'http://192.168.1.1/', 'http://172.16.0.1/', 'http://169.254.169.254/latest',
    'http://0.0.0.0/', 'http://[::1]/', 'http://[fe80::1]/', 'http://[fd00::1]/', 'http://[::ffff:127.0.0.1]/', 'http://localhost:3000/',
    'http://[::7f00:1]:4150/', 'http://[::127.0.0.1]/', 'http://[::a00:1]/', 'http://[::c0a8:101]/', 'http://[::ffff:0:a00:1]/',
    'http://[64:ff9b::7f00:1]/', 'http://[64:ff9b:1::808:808]/', 'http://[2002:c0a8:101::1]/', 'http://[2001:0:4136:e378:8000:63bf:f5ff:fffe]/']) {
    const res = await s.inject({ method: 'POST', url: `${API}/webhooks`, headers: s.admin, payload: { url, events: ['*'] } })
    const body = expectError(t, res, 400, 'rest_invalid_param', ['url'])
    t.match(body.message, /url/, url)
  }
  // A host that does not resolve (RFC 2606 reserves .invalid) is refused too, saying so rather than naming addresses.
  const unresolved = expectError(t, await s.inject({ method: 'POST', url: `${API}/webhooks`, headers: s.admin, payload: { url: 'https://no-such-host.invalid/hook', events: ['*'] } }), 400, 'rest_invalid_param', ['url'])
  t.match(unresolved.data, { params: { url: /could not be looked up/ } })
  t.notMatch(JSON.stringify(unresolved), /loopback/)
  const ok = await s.inject({ method: 'POST', url: `${API}/webhooks`, headers: s.admin, payload: { url: 'https://93.184.215.14/hook', events: ['*'] } })
  t.equal(ok.statusCode, 201, 'a public address is accepted')
  const id = ok.json<{ id: number }>().id
  expectError(t, await s.inject({ method: 'PATCH', url: `${API}/webhooks/${id}`, headers: s.admin, payload: { url: 'http://127.0.0.1/' } }), 400, 'rest_invalid_param', ['url'])
  const german = await s.inject({ method: 'POST', url: `${API}/webhooks?ml_language=de`, headers: s.admin, payload: { url: 'http://10.0.0.1/', events: ['*'] } })
  t.match(german.json<{ message: string }>().message, /Ungültige/, 'in the language asked for')
})

t.test('an IPv6 address that carries an IPv4 address is judged by it, at subscription and at delivery', async (t) => {
  const { isPublicAddress } = await import('../src/lib/addresses.js')
  const { refusedLiteral } = await import('../src/webhooks/address-guard.js')
  const carriers = (v4: string, hex: string) => [`::${v4}`, `::${hex}`, `::ffff:${v4}`, `::ffff:0:${hex}`, `64:ff9b::${hex}`, `2002:${hex}::1`]
  for (const [v4, hex] of [['127.0.0.1', '7f00:1'], ['10.0.0.1', 'a00:1'], ['192.168.1.1', 'c0a8:101'], ['169.254.169.254', 'a9fe:a9fe'], ['100.64.0.1', '6440:1']] as const) {
    for (const address of carriers(v4, hex)) {
      t.equal(isPublicAddress(address), false, `${address} carries ${v4}`)
      t.equal(refusedLiteral(new URL(`http://[${address}]:4150/`), false), true, `a delivery to [${address}] is refused`)
      t.equal(refusedLiteral(new URL(`http://[${address}]:4150/`), true), false, 'unless private addresses are allowed')
    }
  }
  for (const address of carriers('93.184.215.14', '5db8:d70e')) t.equal(isPublicAddress(address), true, `${address} carries a public address`)
  t.equal(isPublicAddress('2001:0:5db8:d70e:8000:63bf:f5ff:fffe'), false, 'Teredo: its client 10.0.0.1 is private')
  t.equal(isPublicAddress('2001:0:a00:1:8000:63bf:a247:28f1'), false, 'Teredo: its server 10.0.0.1 is private')
  t.equal(isPublicAddress('2001:0:5db8:d70e:8000:63bf:a247:28f1'), true, 'Teredo: server and client public')
  t.equal(isPublicAddress('64:ff9b:1::5db8:d70e'), false, 'a network-specific NAT64 prefix')
  for (const address of ['::', '::1', '2606:4700::1111', 'fe80::1', 'fd00::1', '2001:db8::1']) {
    t.equal(isPublicAddress(address), address === '2606:4700::1111', address)
  }
})

t.test('retention prunes deliveries finished before the cutoff, with their attempts; pending ones stay', async (t) => {
  const s = await setup(t)
  const { pruneExpiredChanges } = await import('../src/retention.js')
  const hook = (await s.inject({ method: 'POST', url: `${API}/webhooks`, headers: s.admin, payload: { url: 'https://partner.example.com/', events: ['*'] } })).json<{ id: number }>()
  await s.inject({ method: 'POST', url: `${API}/tags`, headers: s.admin, payload: { name: 'A' } })
  await s.inject({ method: 'POST', url: `${API}/tags`, headers: s.admin, payload: { name: 'B' } })
  const [first] = await s.db.selectFrom('webhook_deliveries').select('id').orderBy('id').execute()
  await s.db.updateTable('webhook_deliveries').set({ status: 'delivered', finished_utc: '2026-01-01 00:00:00' }).where('id', '=', first!.id).execute()
  await s.db.insertInto('webhook_attempts').values({ delivery_id: first!.id, webhook_id: hook.id, attempt: 1, attempted_utc: '2026-01-01 00:00:00', outcome: 'delivered', response_status: 200, error: null, duration_ms: 5 }).execute()
  await pruneExpiredChanges(s.db, new Date('2026-06-15T12:00:00Z'), 30)
  const left = await s.db.selectFrom('webhook_deliveries').select(['id', 'status']).execute()
  t.same(left.map((d) => d.status), ['pending'], 'the finished delivery went, the pending one stays')
  t.equal((await s.db.selectFrom('webhook_attempts').selectAll().execute()).length, 0, 'with its attempts')
})

t.test('DELETE takes the subscription\'s deliveries in every state with their attempts, and no other subscription\'s', async (t) => {
  const s = await setup(t)
  const subscribe = async () => (await s.inject({ method: 'POST', url: `${API}/webhooks`, headers: s.admin, payload: { url: 'https://partner.example.com/', events: ['*'] } })).json<{ id: number }>().id
  const [gone, kept] = [await subscribe(), await subscribe()]
  for (const name of ['A', 'B', 'C', 'D']) await s.inject({ method: 'POST', url: `${API}/tags`, headers: s.admin, payload: { name } })
  // Each subscription's four deliveries as the dispatcher leaves them: delivered, given up, pending after a
  // failed attempt, pending and never tried.
  const states = [['delivered', 'delivered'], ['failed', 'failed'], ['pending', 'retrying'], ['pending', undefined]] as const
  for (const hook of [gone, kept]) {
    const deliveries = await s.db.selectFrom('webhook_deliveries').select('id').where('webhook_id', '=', hook).orderBy('position').execute()
    t.equal(deliveries.length, 4, 'four deliveries owed')
    for (const [i, [status, outcome]] of states.entries()) {
      const id = deliveries[i]!.id
      await s.db.updateTable('webhook_deliveries').set({ status, attempts: outcome === undefined ? 0 : 1, ...(status !== 'pending' ? { finished_utc: '2026-06-15 12:00:00' } : {}) }).where('id', '=', id).execute()
      if (outcome !== undefined) {
        await s.db.insertInto('webhook_attempts').values({ delivery_id: id, webhook_id: hook, attempt: 1, attempted_utc: '2026-06-15 12:00:00', outcome, response_status: outcome === 'delivered' ? 200 : 500, error: null, duration_ms: 5 }).execute()
      }
    }
  }
  t.equal((await s.inject({ method: 'DELETE', url: `${API}/webhooks/${gone}`, headers: s.admin })).statusCode, 200)
  const left = await s.db.selectFrom('webhook_deliveries').select(['webhook_id', 'status']).orderBy('position').execute()
  t.same(left, states.map(([status]) => ({ webhook_id: kept, status })), 'the other subscription\'s four stay as they were; none of the deleted one\'s')
  const attempts = await s.db.selectFrom('webhook_attempts').select('webhook_id').execute()
  t.same(attempts.map((a) => a.webhook_id), [kept, kept, kept], 'and only the other\'s attempts')
})

t.test('PATCH that changes nothing (an empty body, the same values) leaves the subscription and its modified_utc; a change moves it', async (t) => {
  let now = new Date('2026-06-15T12:00:00Z')
  const s = await build(t, { clock: () => now, config: { webhooks: { retrySchedule: [1000], disableAfter: 10, allowPrivate: true } } })
  const admin = await s.auth('administrator')
  const created = (await s.inject({ method: 'POST', url: `${API}/webhooks`, headers: admin, payload: BODY })).json<Json & { id: number }>()
  t.equal(created.modified_utc, '2026-06-15 12:00:00')
  const patch = async (payload: Json) => {
    now = new Date(now.getTime() + 60_000)
    const res = await s.inject({ method: 'PATCH', url: `${API}/webhooks/${created.id}`, headers: admin, payload })
    t.equal(res.statusCode, 200)
    return res.json<Json>()
  }
  const { secret: _secret, ...record } = created
  for (const same of [{}, { url: BODY.url }, { events: BODY.events, description: 'Partner' }, { active: true }]) {
    t.strictSame(await patch(same), record, `${JSON.stringify(same)}: unchanged`)
  }
  t.match(await patch({ description: 'Other' }), { description: 'Other', modified_utc: '2026-06-15 12:05:00' }, 'a change moves modified_utc')
  t.match(await patch({ active: false }), { active: false, modified_utc: '2026-06-15 12:06:00' })
  t.match(await patch({ active: false }), { active: false, modified_utc: '2026-06-15 12:06:00' }, 'inactive again: unchanged')
})

t.test('a subscription carries a strong ETag (CONTRACT §5): If-None-Match is 304, a stale If-Match is 412 and writes nothing', async (t) => {
  let now = new Date('2026-06-15T12:00:00Z')
  const s = await build(t, { clock: () => now, config: { webhooks: { retrySchedule: [1000], disableAfter: 10, allowPrivate: true } } })
  const admin = await s.auth('administrator')
  const created = (await s.inject({ method: 'POST', url: `${API}/webhooks`, headers: admin, payload: BODY })).json<Json & { id: number }>()
  const url = `${API}/webhooks/${created.id}`
  const read = async () => {
    const res = await s.inject({ url, headers: admin })
    t.equal(res.statusCode, 200)
    t.match(res.headers.etag, /^"webhook-\d+-[A-Za-z0-9_-]{16}"$/, 'a strong tag')
    return { etag: String(res.headers.etag), body: res.json<Json>() }
  }
  const first = await read()
  t.equal((await read()).etag, first.etag, 'the same record, the same tag')
  for (const held of [first.etag, `"other", ${first.etag}`, `W/${first.etag}`, '*']) {
    const res = await s.inject({ url, headers: { ...admin, 'if-none-match': held } })
    t.equal(res.statusCode, 304, `If-None-Match: ${held}`)
    t.equal(res.body, '')
  }
  t.equal((await s.inject({ url, headers: { ...admin, 'if-none-match': '"other"' } })).statusCode, 200)

  // A PATCH that changes nothing keeps the tag; a change moves it, and its answer carries the new one.
  now = new Date(now.getTime() + 60_000)
  const same = await s.inject({ method: 'PATCH', url, headers: { ...admin, 'if-match': first.etag }, payload: { active: true } })
  t.equal(same.statusCode, 200)
  t.equal(same.headers.etag, first.etag, 'nothing changed: the same tag')
  const changed = await s.inject({ method: 'PATCH', url, headers: { ...admin, 'if-match': first.etag }, payload: { description: 'Other' } })
  t.equal(changed.statusCode, 200)
  const second = await read()
  t.not(second.etag, first.etag, 'a change moves the tag')
  t.equal(changed.headers.etag, second.etag, 'the PATCH answers with the tag a read gives')
  t.equal((await s.inject({ url, headers: { ...admin, 'if-none-match': first.etag } })).statusCode, 200, 'the old tag is no longer current')

  // Stale If-Match: 412 on PATCH and DELETE, nothing written.
  now = new Date(now.getTime() + 60_000)
  expectError(t, await s.inject({ method: 'PATCH', url, headers: { ...admin, 'if-match': first.etag }, payload: { description: 'Lost' } }), 412, 'rest-precondition-failed')
  expectError(t, await s.inject({ method: 'PATCH', url, headers: { ...admin, 'if-match': `W/${second.etag}` }, payload: { description: 'Lost' } }), 412, 'rest-precondition-failed')
  expectError(t, await s.inject({ method: 'DELETE', url, headers: { ...admin, 'if-match': first.etag } }), 412, 'rest-precondition-failed')
  t.strictSame(await read(), second, 'nothing written by the stale writes')

  // A list holding the current tag, and `*`, hold; DELETE answers the record as it was, with its tag.
  const listed = await s.inject({ method: 'PATCH', url, headers: { ...admin, 'if-match': `"other", ${second.etag}` }, payload: { active: false } })
  t.equal(listed.statusCode, 200)
  const third = await read()
  const deleted = await s.inject({ method: 'DELETE', url, headers: { ...admin, 'if-match': '*' } })
  t.equal(deleted.statusCode, 200)
  t.equal(deleted.headers.etag, third.etag)
  expectError(t, await s.inject({ method: 'DELETE', url, headers: { ...admin, 'if-match': '*' } }), 404, 'rest-webhook-not-found')
  expectError(t, await s.inject({ method: 'PATCH', url, headers: { ...admin, 'if-match': third.etag }, payload: { active: true } }), 404, 'rest-webhook-not-found')
})
