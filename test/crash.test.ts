/**
 * Crash safety (CONTRACT §5, §11): the real server as a child process over a database file.
 * - SIGKILL in the middle of a stream of concurrent writes: after a restart on the same file, every write
 *   that got a 2xx is there with exactly the acknowledged values, a write in flight at the kill is there
 *   whole or not at all, and `PRAGMA integrity_check` is `ok`.
 * - SIGTERM with requests in flight: they finish with 2xx, the process exits 0 and the database is
 *   closed cleanly (checkpointed: no write-ahead log left behind).
 * Only 127.0.0.1; every loop and wait is bounded; child processes are killed in teardown.
 */
import t from 'tap'
import type { Test } from 'tap'
import assert from 'node:assert/strict'
import { existsSync, statSync } from 'node:fs'
import { request as httpRequest } from 'node:http'
import { join } from 'node:path'
import SQLite from 'better-sqlite3'
import { freePort, listenerClosed, readByServer } from './helpers/net.js'
import { API, REQUEST_TIMEOUT_MS, call, editorKey, startServer, type Server } from './helpers/server.js'
import { TEST_ENGINE, freshDatabaseUrl } from './helpers/database.js'
import { sql } from 'kysely'
import { openDatabase, type DatabaseHandle } from '../src/db/database.js'

/** Writes acknowledged before the kill, and how many run at once. */
const ACKED_BEFORE_KILL = 150
const WORKERS = 8

type Json = Record<string, unknown>

function isJson(value: unknown): value is Json {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}

type Kind = 'event' | 'venue' | 'category'
const PATHS: Record<Kind, string> = { event: 'events', venue: 'venues', category: 'categories' }

/**
 * What a record must look like after the restart: the whole record as acknowledged, except what other
 * acknowledged writes change on purpose (a term's `count`, the linked records shown inside an event,
 * whose own acknowledgements are checked apart): those become ids.
 */
function comparable(kind: Kind, record: Json): Json {
  const { json_ld: _jsonLd, count: _count, ...rest } = record
  if (kind !== 'event') return rest
  const ids = (value: unknown): unknown[] => (Array.isArray(value) ? value.map((r) => (isJson(r) ? r.id : r)) : [])
  return { ...rest, categories: ids(rest.categories), tags: ids(rest.tags), venue: ids(rest.venue), organizer: ids(rest.organizer) }
}

/** The acknowledged record with an in-flight update applied (it may have committed before the kill). */
const applied = (acked: Json, update: Json): Json => ({ ...acked, ...update, modified: '*', modified_utc: '*' })

const withoutModified = (record: Json): Json => ({ ...record, modified: '*', modified_utc: '*' })

interface Ledger {
  /** The last acknowledged state of each record, by `<kind>:<id>`. */
  acked: Map<string, Json>
  /** Updates sent but not answered when the server died, by `<kind>:<id>` (in comparable form). */
  inFlight: Map<string, Json>
  writes: number
  inFlightCreates: number
}

/**
 * One worker: its own categories, venues and events, created and updated in turn. Each worker writes
 * one request at a time, so its acknowledgements of a record come in commit order.
 */
async function worker(n: number, base: string, key: string, ledger: Ledger, stop: () => boolean, onAck: () => void): Promise<void> {
  const own: Record<Kind, number[]> = { event: [], venue: [], category: [] }
  const ack = (kind: Kind, record: unknown): void => {
    assert.ok(isJson(record) && typeof record.id === 'number', `${kind} record in a 2xx answer`)
    ledger.acked.set(`${kind}:${record.id}`, comparable(kind, record))
  }
  for (let i = 0; i < 400 && !stop(); i++) {
    const step = i % 6
    let method = 'POST'
    let path: string
    let body: Json
    let target: string | undefined
    const pick = (kind: Kind): number | undefined => own[kind][(i * 7 + n) % Math.max(1, own[kind].length)]
    const venue = pick('venue')
    const event = pick('event')
    const category = pick('category')
    if (step === 0 || category === undefined) {
      path = '/categories'
      body = { name: `Category ${n}-${i}`, description: `made by worker ${n} at step ${i}` }
    } else if (step === 1 || venue === undefined) {
      path = '/venues'
      body = { venue: `Hall ${n}-${i}`, city: 'Wien', address: `Street ${i}`, phone: `+43 ${n}${i}` }
    } else if (step === 2 || event === undefined) {
      path = '/events'
      body = {
        title: `Concert ${n}-${i}`, description: `Night ${i} of worker ${n}`, start_date: `2026-07-${String(1 + (i % 28)).padStart(2, '0')} 19:00:00`,
        end_date: `2026-07-${String(1 + (i % 28)).padStart(2, '0')} 22:30:00`, cost: `€${i}`, categories: [category],
        venue: [venue, { venue: `Inline hall ${n}-${i}`, city: 'Graz', zip: '8010' }],
      }
    } else if (step === 3) {
      method = 'PATCH'
      path = `/venues/${venue}`
      body = { city: `City ${n}-${i}`, phone: `+43 ${i}${n}`, venue: `Hall ${n}-${i} (renamed)` }
      target = `venue:${venue}`
    } else if (step === 4) {
      method = 'PUT'
      path = `/events/${event}`
      body = { title: `Concert ${n}-${i} (moved)`, description: `Updated at step ${i}`, categories: [category] }
      target = `event:${event}`
    } else {
      method = 'POST'
      path = `/categories/${category}`
      body = { description: `edited by worker ${n} at step ${i}` }
      target = `category:${category}`
    }
    if (target !== undefined) ledger.inFlight.set(target, body)
    else ledger.inFlightCreates += 1
    let res: { status: number; body: Json }
    try {
      res = await call(base, key, method, path, body)
    } catch (error) {
      // Only the kill may break a request; what it was writing stays in flight.
      if (stop()) return
      throw error
    }
    if (target !== undefined) ledger.inFlight.delete(target)
    else ledger.inFlightCreates -= 1
    assert.ok(res.status === 200 || res.status === 201, `${method} ${path}: ${res.status} ${JSON.stringify(res.body).slice(0, 300)}`)
    const kind: Kind = path.startsWith('/events') ? 'event' : path.startsWith('/venues') ? 'venue' : 'category'
    ack(kind, res.body)
    if (method === 'POST' && target === undefined) own[kind].push(Number(res.body.id))
    if (kind === 'event' && Array.isArray(res.body.venue)) {
      for (const v of res.body.venue) {
        if (!isJson(v)) continue
        const known = own.venue.includes(Number(v.id))
        // An inline venue is acknowledged with the event; an existing one is shown as stored right now.
        if (!known) {
          ack('venue', v)
          own.venue.push(Number(v.id))
        }
      }
    }
    ledger.writes += 1
    onAck()
  }
}

/** Reads every acknowledged record from the restarted server and compares it with its acknowledgement. */
async function checkAcknowledged(t: Test, base: string, key: string, ledger: Ledger): Promise<number> {
  let checked = 0
  for (const [ref, acked] of ledger.acked) {
    const [kind, id] = ref.split(':') as [Kind, string]
    const res = await call(base, key, 'GET', `/${PATHS[kind]}/${id}`)
    assert.equal(res.status, 200, `${ref} is there after the restart`)
    const stored = comparable(kind, res.body)
    const update = ledger.inFlight.get(ref)
    if (update === undefined) {
      assert.deepStrictEqual(stored, acked, `${ref} has exactly the acknowledged values`)
    } else {
      // An update in flight at the kill: all of it or none of it.
      const whole = isDeepEqual(withoutModified(stored), applied(acked, update))
      const none = isDeepEqual(stored, acked)
      assert.ok(whole || none, `${ref}: an update in flight at the kill is there whole or not at all\n${JSON.stringify({ stored, acked, update })}`)
    }
    checked += 1
  }
  t.pass(`${checked} acknowledged records are there with their acknowledged values`)
  return checked
}

function isDeepEqual(a: unknown, b: unknown): boolean {
  try {
    assert.deepStrictEqual(a, b)
    return true
  } catch {
    return false
  }
}

/**
 * The stored state after the servers are gone, engine by engine: SQLite's own checks of the file
 * (integrity_check, foreign_key_check), and on both engines every link pointing at a row that exists.
 */
async function integrity(url: string): Promise<{ integrity: string; foreignKeys: number; dangling: number }> {
  let sqliteCheck = { integrity: 'ok', foreignKeys: 0 }
  if (TEST_ENGINE === 'sqlite') {
    const db = new SQLite(url, { readonly: true, fileMustExist: true })
    try {
      const rows = db.pragma('integrity_check') as Array<{ integrity_check: string }>
      const fk = db.pragma('foreign_key_check') as unknown[]
      sqliteCheck = { integrity: rows.map((r) => r.integrity_check).join('; '), foreignKeys: fk.length }
    } finally {
      db.close()
    }
  }
  const handle = await openDatabase(url)
  try {
    let dangling = 0
    for (const [table, column, target] of [
      ['event_venues', 'venue_id', 'venues'], ['event_venues', 'event_id', 'events'], ['event_organizers', 'organizer_id', 'organizers'],
      ['event_organizers', 'event_id', 'events'], ['event_terms', 'term_id', 'terms'], ['event_terms', 'event_id', 'events'], ['api_keys', 'user_id', 'users'],
    ] as const) {
      const { rows } = await sql<{ n: number }>`select count(*) as n from ${sql.table(table)} l
        where not exists (select 1 from ${sql.table(target)} r where r.id = l.${sql.ref(column)})`.execute(handle.db)
      dangling += Number(rows[0]?.n ?? 0)
    }
    return { ...sqliteCheck, dangling }
  } finally {
    await handle.close()
  }
}

/** `select count(*)` and `select id` on the stored data, whatever the engine. */
async function stored<T>(url: string, read: (db: DatabaseHandle['db']) => Promise<T>): Promise<T> {
  const handle = await openDatabase(url)
  try {
    return await read(handle.db)
  } finally {
    await handle.close()
  }
}

/** `promise`, or a rejection after `ms` (the timer never outlives the wait). */
async function within<T>(promise: Promise<T>, ms: number, message: () => string): Promise<T> {
  let timer: NodeJS.Timeout | undefined
  try {
    return await Promise.race([promise, new Promise<never>((_resolve, reject) => { timer = setTimeout(() => reject(new Error(message())), ms) })])
  } finally {
    clearTimeout(timer)
  }
}

async function stop(server: Server, signal: NodeJS.Signals): Promise<{ code: number | null; signal: NodeJS.Signals | null }> {
  server.child.kill(signal)
  return within(server.exited, 20_000, () => `server did not exit within 20 s of ${signal}: ${server.stderr()}`)
}

t.test('SIGKILL mid-stream: every acknowledged write survives a restart, and the file is intact', async (t) => {
  const file = await freshDatabaseUrl(t, join(t.testdir(), 'calendar.db'))
  const key = await editorKey(file)
  const port = await freePort()
  const first = await startServer(t, file, port)
  const ledger: Ledger = { acked: new Map(), inFlight: new Map(), writes: 0, inFlightCreates: 0 }
  let killed = false
  let inFlightAtKill = 0
  const kill = () => {
    if (killed) return
    killed = true
    inFlightAtKill = ledger.inFlight.size + ledger.inFlightCreates
    first.child.kill('SIGKILL')
  }
  await Promise.all(Array.from({ length: WORKERS }, (_v, n) => worker(n, first.base, key, ledger, () => killed, () => {
    if (ledger.writes >= ACKED_BEFORE_KILL) kill()
  })))
  const exit = await first.exited
  t.equal(exit.signal, 'SIGKILL', 'the first server died of SIGKILL')
  t.ok(ledger.writes >= ACKED_BEFORE_KILL, `${ledger.writes} writes acknowledged before the kill`)
  t.ok(inFlightAtKill > 0, `${inFlightAtKill} writes in flight at the kill`)
  t.comment(`crash: ${ledger.writes} writes acknowledged, ${inFlightAtKill} in flight at SIGKILL, ${ledger.acked.size} records to find`)

  const second = await startServer(t, file, await freePort())
  const checked = await checkAcknowledged(t, second.base, key, ledger)
  t.equal(checked, ledger.acked.size)
  // The restarted server takes writes again.
  const after = await call(second.base, key, 'POST', '/venues', { venue: 'After the crash' })
  t.equal(after.status, 201, 'the restarted server writes')
  const exit2 = await stop(second, 'SIGTERM')
  t.equal(exit2.code, 0, 'the restarted server stops cleanly')
  const check = await integrity(file)
  t.equal(check.integrity, 'ok', 'SQLite\'s integrity_check is ok')
  t.equal(check.foreignKeys, 0, 'SQLite\'s foreign_key_check finds nothing')
  t.equal(check.dangling, 0, 'every link names rows that exist')
  // A create in flight at the kill is all or nothing: no inline venue without its event.
  const orphans = await stored(file, async (db) => Number((await db.selectFrom('venues as v').select((eb) => eb.fn.countAll<number>().as('n'))
    .where('v.name', 'like', 'Inline hall%')
    .where(({ not, exists, selectFrom }) => not(exists(selectFrom('event_venues as l').select('l.venue_id').whereRef('l.venue_id', '=', 'v.id'))))
    .executeTakeFirstOrThrow()).n))
  t.equal(orphans, 0, 'no inline venue without its event')
})

/**
 * Starts a write whose body arrives in two parts, so that it is surely in flight (headers read, body
 * still coming) when the signal is sent; `finish` sends the rest and resolves with the answer.
 */
function slowWrite(port: number, key: string, path: string, body: Json): Promise<{ port: number; finish: () => Promise<{ status: number; body: string }> }> {
  const text = JSON.stringify(body)
  const cut = Math.floor(text.length / 2)
  return new Promise((resolve, reject) => {
    const req = httpRequest({
      host: '127.0.0.1', port, method: 'POST', path: `${API}${path}`, timeout: REQUEST_TIMEOUT_MS,
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) },
    })
    const answer = new Promise<{ status: number; body: string }>((done, fail) => {
      req.once('response', (res) => {
        let data = ''
        res.on('data', (chunk: Buffer) => { data += chunk.toString() })
        res.once('end', () => done({ status: res.statusCode ?? 0, body: data }))
        res.once('error', fail)
      })
      req.once('error', fail)
      req.once('timeout', () => req.destroy(new Error('timed out')))
    })
    // Keep the rejection handled until `finish` is awaited.
    answer.catch(() => undefined)
    req.once('error', reject)
    req.write(text.slice(0, cut), () => resolve({
      port: req.socket?.localPort ?? 0,
      finish: () => {
        req.end(text.slice(cut))
        return answer
      },
    }))
    req.flushHeaders()
  })
}

t.test('SIGTERM with requests in flight: they finish with 2xx, the process exits 0, the database is closed cleanly', async (t) => {
  const file = await freshDatabaseUrl(t, join(t.testdir(), 'calendar.db'))
  const key = await editorKey(file)
  const port = await freePort()
  const server = await startServer(t, file, port)
  // Some data first, so that the writes in flight have work to do.
  const category = await call(server.base, key, 'POST', '/categories', { name: 'Drain' })
  t.equal(category.status, 201)
  const slow = await Promise.all(Array.from({ length: 12 }, (_v, i) => slowWrite(port, key, i % 2 === 0 ? '/events' : '/venues', i % 2 === 0
    ? { title: `Draining ${i}`, start_date: '2026-07-01 19:00:00', end_date: '2026-07-01 21:00:00', categories: [category.body.id], venue: [{ venue: `Drain hall ${i}` }] }
    : { venue: `Drain venue ${i}`, city: 'Linz' })))
  // Every one of them has its headers and half its body read by the server when the signal comes.
  await readByServer(port, slow.map((s) => s.port))
  server.child.kill('SIGTERM')
  // Once it has stopped listening (requests that reach it before then, in the second it still takes
  // connections already on their way, are answered), a request is late.
  await listenerClosed(port, 20_000)
  // A request that comes after the signal is not taken: refused, or 503 on a connection still open.
  const late = await call(server.base, key, 'POST', '/venues', { venue: 'Too late' }).then((r) => r.status, () => 'refused')
  t.ok(late === 'refused' || late === 503, `a request after SIGTERM is not taken (${late})`)
  const answers = await Promise.all(slow.map((s) => s.finish()))
  const statuses = answers.map((a) => a.status)
  t.same(statuses, statuses.map(() => 201), 'every request in flight at SIGTERM finished with 201')
  const ids = answers.map((a) => {
    const parsed: unknown = JSON.parse(a.body)
    return isJson(parsed) ? Number(parsed.id) : 0
  })
  const exit = await within(server.exited, 20_000, () => `server did not exit within 20 s of SIGTERM: ${server.stderr()}`)
  t.equal(exit.code, 0, `the process exits 0 (${server.stderr().slice(0, 300)})`)
  if (TEST_ENGINE === 'sqlite') {
    // SQLite's own sign of a clean close; PostgreSQL's server outlives ours.
    const wal = `${file}-wal`
    t.ok(!existsSync(wal) || statSync(wal).size === 0, 'the write-ahead log was checkpointed and closed')
  }
  const check = await integrity(file)
  t.equal(check.integrity, 'ok', 'SQLite\'s integrity_check is ok')
  t.equal(check.dangling, 0, 'every link names rows that exist')
  await stored(file, async (db) => {
    const count = async (table: 'events' | 'venues') => Number((await db.selectFrom(table).select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow()).n)
    t.equal(await count('events'), 6, 'the six events written while draining are stored')
    t.equal(await count('venues'), 12, 'the six venues and six inline venues written while draining are stored')
    for (const [i, id] of ids.entries()) {
      const table = i % 2 === 0 ? 'events' : 'venues'
      t.ok((await db.selectFrom(table).select('id').where('id', '=', id).executeTakeFirst()) !== undefined, `${table} ${id} (acknowledged while draining) is stored`)
    }
  })
})
