/**
 * Safe retries of creating POSTs (CONTRACT §18): `Idempotency-Key` on every create. A retry with the same
 * key, method, path and body is the first answer again (status, body bytes, Location, ETag) with
 * `Idempotent-Replayed: true` and creates nothing (no record, no change-log entry, no webhook delivery);
 * another request under the key is 422; a key held by a request in progress is 409 (two at once: one
 * creates); keys are the caller's; expired keys are pruned and reusable; a malformed key is 400 with
 * nothing written; a failed request is not remembered; two apps on one database share the keys.
 * Both engines (TEST_DATABASE=postgres).
 */
import t, { type Test } from 'tap'
import { join } from 'node:path'
import type { Kysely } from 'kysely'
import { buildApp } from '../src/app.js'
import { openDatabase } from '../src/db/database.js'
import type { Database } from '../src/db/schema.js'
import { withTransaction } from '../src/db/unit-of-work.js'
import { CLAIM_LEASE_MS } from '../src/handlers/idempotency.js'
import { createCompilers } from '../src/http/compilers.js'
import { claimKey } from '../src/repositories/idempotency-keys.js'
import { insertWebhook } from '../src/repositories/webhooks.js'
import { pruneExpiredIdempotencyKeys } from '../src/retention.js'
import { defaultConfig } from '../src/config.js'
import { generateKey } from '../src/lib/api-keys.js'
import { createUserWithKey } from '../src/repositories/users.js'
import { TEST_ENGINE, freshDatabaseUrl } from './helpers/database.js'
import { API, NOW, build, decoded, type Built, type Injected } from './helpers/build.js'
import { SPEC, contractProblems } from './helpers/contract.js'
import { expectError } from './helpers/errors.js'

const HOUR = 60 * 60 * 1000

/** What one create sends, per collection. */
const CREATES: Record<string, Record<string, unknown>> = {
  events: { title: 'Retried night', start_date: '2026-07-01 19:00', end_date: '2026-07-01 22:00' },
  venues: { venue: 'Retried hall' },
  organizers: { organizer: 'Retried crew' },
  categories: { name: 'Retried' },
  tags: { name: 'retried' },
  webhooks: { url: 'https://partner.example.com/hooks', events: ['*'] },
}

const TABLES = { events: 'events', venues: 'venues', organizers: 'organizers', categories: 'terms', tags: 'terms', webhooks: 'webhooks' } as const

async function count(db: Kysely<Database>, table: keyof Database): Promise<number> {
  const row = await db.selectFrom(table).select((eb) => eb.fn.countAll<number | string>().as('n')).executeTakeFirstOrThrow()
  return Number(row.n)
}

async function setup(t: Test, options: { clock?: () => Date; file?: string } = {}) {
  const s = await build(t, {
    config: { webhooks: { retrySchedule: [1000], disableAfter: 10, allowPrivate: true } },
    ...(options.clock !== undefined ? { clock: options.clock } : {}),
    ...(options.file !== undefined ? { file: options.file } : {}),
  })
  const admin = await s.auth('administrator')
  const editor = await s.auth('editor')
  return { ...s, admin, editor }
}

type Setup = Awaited<ReturnType<typeof setup>>

function post(s: Built, collection: string, headers: Record<string, string>, key: string | undefined, payload: unknown, query = ''): Promise<Injected> {
  return s.inject({
    method: 'POST', url: `${API}/${collection}${query}`,
    headers: { ...headers, ...(key !== undefined ? { 'idempotency-key': key } : {}) },
    payload: typeof payload === 'string' ? payload : JSON.stringify(payload),
  })
}

/** Headers of the given callers for each collection: webhooks are administrators', the rest an editor's. */
const callerOf = (s: Setup, collection: string) => ({ ...(collection === 'webhooks' ? s.admin : s.editor), 'content-type': 'application/json' })

t.test('a retry with the same key, path and body is the first answer again and creates nothing, on every create', async (t) => {
  const s = await setup(t)
  // A subscription to every change: a create would owe it a delivery.
  await withTransaction(s.db, (trx) => insertWebhook(trx, { url: 'https://listener.example.com/', events: ['*'], description: null, active: true, secret: 'whsec_c2VjcmV0', nowUtc: '2026-06-15 12:00:00' }))
  for (const [collection, body] of Object.entries(CREATES)) {
    const headers = callerOf(s, collection)
    const table = TABLES[collection as keyof typeof TABLES]
    const before = { records: await count(s.db, table), changes: await count(s.db, 'changes'), deliveries: await count(s.db, 'webhook_deliveries') }
    const first = await post(s, collection, headers, `key-${collection}`, body)
    t.equal(first.statusCode, 201, `${collection}: created`)
    t.equal(first.headers['idempotent-replayed'], undefined, `${collection}: the first answer is not a replay`)
    const after = { records: await count(s.db, table), changes: await count(s.db, 'changes'), deliveries: await count(s.db, 'webhook_deliveries') }
    t.equal(after.records, before.records + 1, `${collection}: one record`)
    for (let retry = 0; retry < 2; retry++) {
      const again = await post(s, collection, headers, `key-${collection}`, body)
      t.equal(again.statusCode, 201, `${collection}: the first status`)
      t.equal(again.headers['idempotent-replayed'], 'true', `${collection}: Idempotent-Replayed`)
      t.equal(again.body, first.body, `${collection}: the first body, byte for byte`)
      t.equal(again.headers.location, first.headers.location, `${collection}: the first Location`)
      t.equal(again.headers.etag, first.headers.etag, `${collection}: the first ETag`)
      t.match(again.headers['content-type'], /^application\/json/)
    }
    t.strictSame({ records: await count(s.db, table), changes: await count(s.db, 'changes'), deliveries: await count(s.db, 'webhook_deliveries') }, after,
      `${collection}: the retries created no record, change-log entry or delivery`)
  }
  // The replay is the first answer even after the record changed.
  const first = await post(s, 'venues', callerOf(s, 'venues'), 'key-venues', CREATES.venues)
  const id = first.json<{ id: number }>().id
  await s.inject({ method: 'PATCH', url: `${API}/venues/${id}`, headers: s.editor, payload: { venue: 'Renamed hall' } })
  const replayed = await post(s, 'venues', callerOf(s, 'venues'), 'key-venues', CREATES.venues)
  t.equal(replayed.json<{ venue: string }>().venue, 'Retried hall', 'the answer as it was given')
})

t.test('the same key with another body, path or query is 422 rest_idempotency_key_mismatch, and writes nothing', async (t) => {
  const s = await setup(t)
  const headers = callerOf(s, 'events')
  t.equal((await post(s, 'events', headers, 'k1', CREATES.events)).statusCode, 201)
  const events = await count(s.db, 'events')
  const changes = await count(s.db, 'changes')
  expectError(t, await post(s, 'events', headers, 'k1', { ...CREATES.events, title: 'Another night' }), 422, 'rest_idempotency_key_mismatch')
  expectError(t, await post(s, 'events', headers, 'k1', `${JSON.stringify(CREATES.events)} `), 422, 'rest_idempotency_key_mismatch')
  expectError(t, await post(s, 'events', headers, 'k1', CREATES.events, '?ml_language=de'), 422, 'rest_idempotency_key_mismatch')
  expectError(t, await post(s, 'venues', callerOf(s, 'venues'), 'k1', CREATES.venues), 422, 'rest_idempotency_key_mismatch')
  const res = await post(s, 'events', headers, 'k1', { ...CREATES.events, title: 'Noch eine' }, '?ml_language=de')
  expectError(t, res, 422, 'rest_idempotency_key_mismatch')
  t.match(res.json<{ message: string }>().message, /Idempotency-Key wurde bereits/, 'in the request language')
  t.equal(await count(s.db, 'events'), events)
  t.equal(await count(s.db, 'venues'), 0)
  t.equal(await count(s.db, 'changes'), changes)
})

t.test('a key held by a request in progress is 409 rest_idempotency_key_in_use; a claim whose request died runs out', async (t) => {
  let now = NOW
  const s = await setup(t, { clock: () => now })
  const headers = callerOf(s, 'events')
  const userId = Number((await s.db.selectFrom('users').select('id').where('role', '=', 'editor').executeTakeFirstOrThrow()).id)
  // Another node claimed the key for this very request and has not answered (or died).
  const { createHash } = await import('node:crypto')
  const bodyDigest = createHash('sha256').update(JSON.stringify(CREATES.events)).digest('hex')
  const fingerprint = createHash('sha256').update(`POST ${API}/events\n${bodyDigest}`).digest('hex')
  await withTransaction(s.db, (trx) => claimKey(trx, {
    userId, key: 'held', fingerprint, token: 'other-node', leaseUntil: new Date(NOW.getTime() + CLAIM_LEASE_MS).toISOString(), createdUtc: NOW.toISOString(),
  }))
  const inUse = await post(s, 'events', headers, 'held', CREATES.events)
  expectError(t, inUse, 409, 'rest_idempotency_key_in_use')
  expectError(t, await post(s, 'events', headers, 'held', { ...CREATES.events, title: 'Other' }), 422, 'rest_idempotency_key_mismatch')
  now = new Date(NOW.getTime() + CLAIM_LEASE_MS - 1000)
  expectError(t, await post(s, 'events', headers, 'held', CREATES.events), 409, 'rest_idempotency_key_in_use', undefined)
  t.equal(await count(s.db, 'events'), 0, 'nothing created while the key is held')
  // The lease ran out: its holder died. The retry takes the key over and creates once.
  now = new Date(NOW.getTime() + CLAIM_LEASE_MS + 1000)
  const created = await post(s, 'events', headers, 'held', CREATES.events)
  t.equal(created.statusCode, 201)
  t.equal(created.headers['idempotent-replayed'], undefined)
  const again = await post(s, 'events', headers, 'held', CREATES.events)
  t.equal(again.headers['idempotent-replayed'], 'true')
  t.equal(again.body, created.body)
  t.equal(await count(s.db, 'events'), 1)
  // The holder that died cannot store an answer any more: its claim's token is gone.
  const { rememberAnswer } = await import('../src/repositories/idempotency-keys.js')
  t.equal(await withTransaction(s.db, (trx) => rememberAnswer(trx, userId, 'held', 'other-node', { status: 201, location: 'x', etag: null, body: '{}' })), false)
})

t.test('two requests at once with one key: exactly one creates, the other is 409 or its replay', async (t) => {
  const s = await setup(t)
  for (const collection of ['events', 'venues', 'categories']) {
    const headers = callerOf(s, collection)
    const table = TABLES[collection as keyof typeof TABLES]
    const before = await count(s.db, table)
    const answers = await Promise.all([0, 1, 2, 3].map(() => post(s, collection, headers, `race-${collection}`, CREATES[collection])))
    const created = answers.filter((a) => a.statusCode === 201 && a.headers['idempotent-replayed'] === undefined)
    t.equal(created.length, 1, `${collection}: one created`)
    for (const a of answers) {
      if (a === created[0]) continue
      if (a.statusCode === 409) expectError(t, a, 409, 'rest_idempotency_key_in_use')
      else {
        t.equal(a.statusCode, 201)
        t.equal(a.headers['idempotent-replayed'], 'true')
        t.equal(a.body, created[0]?.body)
      }
    }
    t.equal(await count(s.db, table), before + 1, `${collection}: one record`)
  }
})

t.test('keys are the caller\'s: another caller with the same key creates its own record', async (t) => {
  const s = await setup(t)
  const other = await s.auth('editor')
  const a = await post(s, 'events', callerOf(s, 'events'), 'shared', CREATES.events)
  const b = await post(s, 'events', { ...other, 'content-type': 'application/json' }, 'shared', CREATES.events)
  t.equal(a.statusCode, 201)
  t.equal(b.statusCode, 201)
  t.equal(b.headers['idempotent-replayed'], undefined)
  t.not(a.json<{ id: number }>().id, b.json<{ id: number }>().id)
  t.equal(await count(s.db, 'events'), 2)
})

t.test('keys live CALENDAR_IDEMPOTENCY_HOURS: then they are pruned, and a key past it is a new key', async (t) => {
  let now = NOW
  const s = await setup(t, { clock: () => now })
  const headers = callerOf(s, 'events')
  t.equal((await post(s, 'events', headers, 'daily', CREATES.events)).statusCode, 201)
  now = new Date(NOW.getTime() + 23 * HOUR)
  t.equal((await post(s, 'events', headers, 'daily', CREATES.events)).headers['idempotent-replayed'], 'true', 'replayed within the hours')
  t.equal(await pruneExpiredIdempotencyKeys(s.db, now, s.config.idempotencyHours), 0, 'nothing to prune yet')
  // Past the hours, not pruned yet: a new key.
  now = new Date(NOW.getTime() + 24 * HOUR + 1000)
  const renewed = await post(s, 'events', headers, 'daily', CREATES.events)
  t.equal(renewed.statusCode, 201)
  t.equal(renewed.headers['idempotent-replayed'], undefined, 'a key past its lifetime is a new key')
  t.equal(await count(s.db, 'events'), 2)
  t.equal((await post(s, 'events', headers, 'other', CREATES.events)).statusCode, 201)
  t.equal(await count(s.db, 'idempotency_keys'), 2)
  // Pruned in batches by the retention job.
  now = new Date(NOW.getTime() + 72 * HOUR)
  t.equal(await pruneExpiredIdempotencyKeys(s.db, now, s.config.idempotencyHours), 2)
  t.equal(await count(s.db, 'idempotency_keys'), 0)
  t.equal((await post(s, 'events', headers, 'daily', { ...CREATES.events, title: 'A new use' })).statusCode, 201, 'a pruned key is free again')
})

t.test('a malformed key is 400 rest_invalid_param naming the header, and nothing is written', async (t) => {
  const s = await setup(t)
  const headers = callerOf(s, 'events')
  for (const key of ['', 'x'.repeat(256), 'schlüssel', 'tab\there', 'del\u007f']) {
    const res = await post(s, 'events', headers, key, CREATES.events)
    expectError(t, res, 400, 'rest_invalid_param', ['Idempotency-Key'])
  }
  // Checked before the body: a body the schema or the contract refuses is refused for the key first.
  expectError(t, await post(s, 'events', headers, '', { title: 'No dates' }), 400, 'rest_invalid_param', ['Idempotency-Key'])
  expectError(t, await post(s, 'events', headers, '', { ...CREATES.events, venue: [99_999] }), 400, 'rest_invalid_param', ['Idempotency-Key'])
  // Routes that do not take the header ignore it.
  const id = (await post(s, 'events', headers, undefined, CREATES.events)).json<{ id: number }>().id
  t.equal((await s.inject({ method: 'PATCH', url: `${API}/events/${id}`, headers: { ...headers, 'idempotency-key': '' }, payload: { title: 'Patched' } })).statusCode, 200)
  t.equal((await post(s, 'events', headers, 'x'.repeat(255), CREATES.events)).statusCode, 201, '255 characters are a key')
  t.equal((await post(s, 'events', headers, ' !"#$%&\'()*+,-./09:;<=>?@AZ[\\]^_`az{|}~', CREATES.events)).statusCode, 201, 'every printable character')
  t.equal(await count(s.db, 'events'), 3)
  t.equal(await count(s.db, 'idempotency_keys'), 2)
})

t.test('a failed request is not remembered: the key is given back', async (t) => {
  const s = await setup(t)
  const headers = callerOf(s, 'events')
  // Refused by the contract's schema (before the key is claimed)…
  expectError(t, await post(s, 'events', headers, 'retry-me', { title: 'No dates' }), 400, 'rest_missing_callback_param')
  // …and by a check inside the unit of work (after the claim): an unknown venue.
  expectError(t, await post(s, 'events', headers, 'retry-me', { ...CREATES.events, venue: [99_999] }), 400, 'rest_invalid_param')
  t.equal(await count(s.db, 'idempotency_keys'), 0, 'no key kept')
  const created = await post(s, 'events', headers, 'retry-me', CREATES.events)
  t.equal(created.statusCode, 201, 'the fixed request creates under the same key')
  t.equal(created.headers['idempotent-replayed'], undefined)
  // A contributor may not create categories (403): not remembered either.
  const contributor = { ...(await s.auth('contributor')), 'content-type': 'application/json' }
  expectError(t, await post(s, 'categories', contributor, 'cat', CREATES.categories), 403, 'rest_forbidden')
  t.equal(await count(s.db, 'idempotency_keys'), 1)
})

t.test('a request that failed with the database (503) and could not give its key back: a retry with the key creates at once, not 409', async (t) => {
  // The database fails for the create (after the key was claimed) and for the key's release, then comes back.
  let failing = false
  const fault = TEST_ENGINE === 'postgres' ? { code: '08006', message: 'connection failure' } : { code: 'SQLITE_IOERR', message: 'disk I/O error' }
  const handle = await openDatabase(await freshDatabaseUrl(t), {
    log: ({ sql }) => {
      if (failing && /(^|;\s*)(\/\*[^*]*\*\/\s*)?(insert into "?events"?[\s(]|delete from "?idempotency_keys"?\b)/.test(sql)) throw Object.assign(new Error(fault.message), { code: fault.code })
    },
  })
  const app = await buildApp({ db: handle.db, config: defaultConfig({ publicUrl: 'http://calendar.test' }), spec: SPEC, now: () => NOW })
  t.teardown(async () => {
    await app.close()
    await handle.close()
  })
  const key = generateKey()
  await withTransaction(handle.db, (trx) => createUserWithKey(trx, 'editor', key, '2026-01-01 00:00:00'))
  const headers = { authorization: `Bearer ${key}`, 'content-type': 'application/json', 'idempotency-key': 'outage' }
  const create = async () => {
    const res = await app.inject({ method: 'POST', url: `${API}/events`, headers, payload: CREATES.events })
    t.same(contractProblems('POST', `${API}/events`, res), [])
    return res
  }
  failing = true
  const failed = await create()
  expectError(t, failed, 503, 'rest_database_unavailable')
  t.equal(await count(handle.db, 'idempotency_keys'), 1, 'the claim could not be given back')
  failing = false
  const retried = await create()
  t.equal(retried.statusCode, 201, 'the retry after the outage creates (the failed request is not in progress)')
  t.equal(retried.headers['idempotent-replayed'], undefined)
  const again = await create()
  t.equal(again.headers['idempotent-replayed'], 'true', 'and the key now holds its answer')
  t.equal(again.body, retried.body)
  t.equal(await count(handle.db, 'events'), 1, 'one event')
})

t.test('two apps on one database share the keys', async (t) => {
  const s = await setup(t, { file: join(t.testdir(), 'calendar.db') })
  const handle = await openDatabase(s.url)
  const other = await buildApp({ db: handle.db, config: s.config, now: () => NOW, spec: SPEC, compilers: createCompilers() })
  t.teardown(async () => {
    await other.close()
    await handle.close()
  })
  const injectOther = async (key: string, payload: unknown): Promise<Injected> => {
    const url = `${API}/events`
    const res = decoded(await other.inject({ method: 'POST', url, headers: { ...callerOf(s, 'events'), 'idempotency-key': key }, payload: JSON.stringify(payload) }))
    t.strictSame(contractProblems('POST', url, res), [], 'the other app keeps to the contract')
    return res as Injected
  }
  const first = await post(s, 'events', callerOf(s, 'events'), 'nodes', CREATES.events)
  t.equal(first.statusCode, 201)
  const replayed = await injectOther('nodes', CREATES.events)
  t.equal(replayed.statusCode, 201)
  t.equal(replayed.headers['idempotent-replayed'], 'true', 'the other app replays the first app\'s answer')
  t.equal(replayed.body, first.body)
  t.equal(replayed.headers.location, first.headers.location)
  t.equal(replayed.headers.etag, first.headers.etag)
  expectError(t, await injectOther('nodes', { ...CREATES.events, title: 'Other' }), 422, 'rest_idempotency_key_mismatch')
  t.equal(await count(s.db, 'events'), 1)
})

t.test('browsers may send the key and read Idempotent-Replayed (CORS)', async (t) => {
  const s = await setup(t)
  const preflight = await s.inject({ method: 'OPTIONS', url: `${API}/events`, headers: { origin: 'http://elsewhere.test', 'access-control-request-method': 'POST', 'access-control-request-headers': 'idempotency-key' } })
  t.equal(preflight.statusCode, 204)
  t.ok(String(preflight.headers['access-control-allow-headers']).split(',').map((h) => h.trim().toLowerCase()).includes('idempotency-key'))
  const created = await post(s, 'events', callerOf(s, 'events'), 'cors', CREATES.events)
  t.ok(String(created.headers['access-control-expose-headers']).split(',').map((h) => h.trim()).includes('Idempotent-Replayed'))
})
