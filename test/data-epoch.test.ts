/**
 * The data epoch (migration 0007) moves exactly when a table the read cache reads is written: every
 * table of the schema is either moved by it (triggers on insert, update and delete, and on PostgreSQL
 * truncate) or listed here with why not, so that a new table must be classified. And what it is for:
 * while the webhook dispatcher records claims and attempts on the same database, repeated reads of
 * unchanged records keep hitting the cache; on PostgreSQL a write to another schema of the same
 * database leaves it alone, while a raw write to a resource table of this one drops it.
 */
import { sql, type Kysely } from 'kysely'
import t from 'tap'
import type { Database } from '../src/db/schema.js'
import { readCacheStats } from '../src/repositories/read-cache.js'
import { API, build } from './helpers/build.js'
import { TEST_ENGINE, openTestDatabase } from './helpers/database.js'
import { insertEvent } from './helpers/fixtures.js'
import { startReceiver } from './helpers/receiver.js'

/** Tables whose content cached records, lists and lookups read: every write moves the epoch. */
const TRIGGERED = ['events', 'venues', 'organizers', 'terms', 'event_terms', 'event_venues', 'event_organizers', 'images', 'event_occurrences', 'event_overrides', 'event_override_links']

/** Tables no cached read reads, and why: their writes leave the cache alone. */
const EXCLUDED: Record<string, string> = {
  data_epoch: 'the epoch itself',
  key_epoch: 'the key epoch (migration 0026): moved by writes of keys and users, read by authentication only',
  changes: 'the change log: its head is read beside the epoch, and names what changed precisely',
  change_log: 'retention bookkeeping (the highest pruned position), read by the change feed only, uncached',
  webhooks: 'subscriptions: the dispatcher writes their failure counts; read uncached by the webhook routes',
  webhook_deliveries: 'the outbox: claimed and finished by the dispatcher on every round; never cached',
  webhook_attempts: 'every delivery attempt; never cached',
  users: 'authentication keeps them beside the key epoch (migration 0026), which they move; a record names its author by id only',
  api_keys: 'authentication keeps them beside the key epoch (migration 0026), which they move',
  idempotency_keys: 'claims and remembered answers of creating POSTs (migration 0016), read uncached by the creates',
  kysely_migration: 'the migration history',
  kysely_migration_lock: 'the migration lock',
  sqlite_sequence: 'SQLite\'s own AUTOINCREMENT counters',
  // The search index (migration 0005): folded copies of events' texts, written only by event writes in
  // their transaction, which move the epoch; on SQLite an FTS5 table (no triggers) and its own tables.
  event_documents: 'stored answers of single reads, derived from the tables the epoch covers and deleted by their own triggers (migration 0009); no cache reads them',
  event_search: 'the search index, derived from events and written only beside them',
  event_search_data: 'FTS5\'s own table of the search index',
  event_search_idx: 'FTS5\'s own table of the search index',
  event_search_content: 'FTS5\'s own table of the search index',
  event_search_docsize: 'FTS5\'s own table of the search index',
  event_search_config: 'FTS5\'s own table of the search index',
  // Its index of adjacent pairs (migration 0012, SQLite): written only beside it.
  event_search_pairs: 'the search index\'s pairs of characters, written only beside it',
  event_search_pairs_data: 'FTS5\'s own table of the index of pairs',
  event_search_pairs_idx: 'FTS5\'s own table of the index of pairs',
  event_search_pairs_docsize: 'FTS5\'s own table of the index of pairs',
  event_search_pairs_config: 'FTS5\'s own table of the index of pairs',
}

async function tablesOf(db: Kysely<Database>): Promise<string[]> {
  const { rows } = TEST_ENGINE === 'postgres'
    ? await sql<{ name: string }>`select table_name as name from information_schema.tables
        where table_schema = current_schema() and table_type = 'BASE TABLE'`.execute(db)
    : await sql<{ name: string }>`select name from sqlite_master where type = 'table'`.execute(db)
  return rows.map((r) => r.name).sort()
}

/** The writes that move the epoch, by table, as the schema's triggers say. */
async function epochTriggers(db: Kysely<Database>): Promise<Map<string, Set<string>>> {
  const found = new Map<string, Set<string>>()
  const add = (table: string, action: string) => {
    let set = found.get(table)
    if (set === undefined) found.set(table, set = new Set())
    set.add(action)
  }
  if (TEST_ENGINE === 'postgres') {
    // pg_trigger.tgtype bits: 1 row-level, 2 before, 4 insert, 8 delete, 16 update, 32 truncate.
    const { rows } = await sql<{ table: string; type: number }>`select c.relname as table, t.tgtype::int as type from pg_trigger t
      join pg_class c on c.oid = t.tgrelid join pg_namespace n on n.oid = c.relnamespace
      join pg_proc p on p.oid = t.tgfoid
      where n.nspname = current_schema() and p.proname = 'data_epoch_moves' and not t.tgisinternal`.execute(db)
    for (const { table, type } of rows) {
      if ((type & 3) !== 0) continue // only statement-level AFTER triggers count
      for (const [bit, action] of [[4, 'insert'], [8, 'delete'], [16, 'update'], [32, 'truncate']] as const) if ((type & bit) !== 0) add(table, action)
    }
  } else {
    const { rows } = await sql<{ table: string; sql: string }>`select tbl_name as "table", sql from sqlite_master where type = 'trigger'`.execute(db)
    for (const row of rows) {
      const action = /\bafter\s+(insert|update|delete)\s+on\b/i.exec(row.sql)?.[1]
      if (action !== undefined && /update\s+data_epoch\s+set\s+n\s*=\s*n\s*\+\s*1/i.test(row.sql)) add(row.table, action.toLowerCase())
    }
  }
  return found
}

const epoch = async (db: Kysely<Database>) => Number((await db.selectFrom('data_epoch').select('n').executeTakeFirstOrThrow()).n)

t.test('every table is either moved by the epoch or excluded with a reason', async (t) => {
  const handle = await openTestDatabase(t)
  t.teardown(() => handle.close())
  const tables = await tablesOf(handle.db)
  const triggers = await epochTriggers(handle.db)
  const actions = TEST_ENGINE === 'postgres' ? ['delete', 'insert', 'truncate', 'update'] : ['delete', 'insert', 'update']
  for (const table of tables) {
    const moved = [...triggers.get(table) ?? []].sort()
    if (TRIGGERED.includes(table)) t.same(moved, actions, `${table}: every write moves the epoch`)
    else if (table in EXCLUDED) t.same(moved, [], `${table}: not moved (${EXCLUDED[table]})`)
    else t.fail(`${table} is neither moved by the data epoch nor excluded with a reason: classify it here and in a migration`)
  }
  for (const table of TRIGGERED) t.ok(tables.includes(table), `${table} exists`)
  for (const table of triggers.keys()) t.ok(TRIGGERED.includes(table), `${table} moves the epoch and is listed so`)
})

t.test('the epoch moves with raw writes to the tables it covers, not with others', async (t) => {
  const handle = await openTestDatabase(t)
  t.teardown(() => handle.close())
  const db = handle.db
  let last = await epoch(db)
  const moved = async () => {
    const now = await epoch(db)
    const result = now !== last
    last = now
    return result
  }
  const id = await insertEvent(db, { slug: 'raw' })
  t.ok(await moved(), 'an insert into events')
  await db.updateTable('events').set({ title: 'Raw, again' }).where('id', '=', id).execute()
  t.ok(await moved(), 'an update of events')
  await db.insertInto('images').values({ url: 'https://example.org/a.jpg', created_at: '2026-01-01 00:00:00' }).execute()
  t.ok(await moved(), 'an insert into images')
  await db.insertInto('users').values({ name: 'someone', role: 'editor', created_at: '2026-01-01 00:00:00' }).execute()
  t.notOk(await moved(), 'an insert into users')
  await db.insertInto('changes').values({ resource: 'events', record_id: id, language: 'en', action: 'updated', changed_utc: '2026-01-01 00:00:00', status: 'publish', author: null }).execute()
  t.notOk(await moved(), 'an entry of the change log')
  await db.deleteFrom('events').where('id', '=', id).execute()
  t.ok(await moved(), 'a delete from events')
})

t.test('webhook deliveries recorded on the same database leave the read cache alone', async (t) => {
  const offset = { ms: 0 }
  const built = await build(t, {
    config: { webhooks: { retrySchedule: [1000, 1000, 1000, 1000], disableAfter: 50, allowPrivate: true } },
    // Four attempts at once per subscription, so that the deliveries take several rounds.
    webhooks: { now: () => new Date(Date.now() + offset.ms), random: () => 0.5, timeoutMs: 5000, perReceiver: 4 },
  })
  const admin = await built.auth('administrator')
  const receiver = await startReceiver(t)
  const send = async (method: 'POST' | 'GET', path: string, body?: Record<string, unknown>) => {
    const res = await built.inject({ method, url: `${API}${path}`, headers: admin, ...(body === undefined ? {} : { payload: body }) })
    t.ok(res.statusCode < 300, `${method} ${path} → ${res.statusCode}`)
    return res.json<{ id: number; secret?: string; title?: string; total?: number }>()
  }
  receiver.secret = String((await send('POST', '/webhooks', { url: receiver.url, events: ['*'] })).secret)
  const venue = await send('POST', '/venues', { venue: 'Volkshaus' })
  const event = await send('POST', '/events', { title: 'Jam', start_date: '2026-12-04 21:00', end_date: '2026-12-04 23:00', venue: [venue.id] })
  const tags: number[] = []
  for (let i = 0; i < 6; i++) tags.push((await send('POST', '/tags', { name: `Tag ${i}` })).id)
  // A write's answer is read inside its unit of work and so is not remembered: the deliveries' bodies would
  // load these records at their first attempt, misses that are no drop. Read once, they are remembered.
  for (const path of [`/venues/${venue.id}`, ...tags.map((id) => `/tags/${id}`)]) await send('GET', path)
  // Every attempt fails at first, so that rounds keep claiming and recording while the reads go on.
  receiver.answers.push(...Array.from({ length: 8 }, () => ({ status: 500 })))
  const read = async () => {
    t.equal((await send('GET', `/events/${event.id}`)).title, 'Jam')
    t.equal((await send('GET', '/events')).total, 1)
  }
  await read()
  await read()
  const stats = () => {
    const s = readCacheStats(built.db)
    if (s === undefined) throw new Error('the app binds a read cache')
    return { hits: s.hits.records + s.hits.results, misses: s.misses.records + s.misses.results }
  }
  let before = stats()
  let rounds = 0
  for (;;) {
    let attempts = await built.app.webhooks.runOnce()
    if (attempts === 0) {
      offset.ms += 1500
      attempts = await built.app.webhooks.runOnce()
    }
    if (attempts === 0) break
    rounds += 1
    await read()
    const after = stats()
    t.ok(after.hits > before.hits, `round ${rounds}: the reads hit the cache`)
    t.equal(after.misses, before.misses, `round ${rounds}: nothing was dropped by the dispatcher's writes`)
    before = after
  }
  t.ok(rounds >= 3, `deliveries flowed over several rounds (${rounds})`)
  const attempts = Number((await built.db.selectFrom('webhook_attempts').select((eb) => eb.fn.countAll().as('n')).executeTakeFirstOrThrow()).n)
  t.ok(attempts > 8, `attempts were recorded (${attempts})`)
  t.ok(receiver.received.length >= attempts, 'and received')

  // A raw write to a table the cache reads, outside the log, still drops it.
  await built.db.updateTable('events').set({ title: 'Jam, moved' }).where('id', '=', event.id).execute()
  t.equal((await send('GET', `/events/${event.id}`)).title, 'Jam, moved', 'the raw write is seen')
  t.ok(stats().misses > before.misses, 'read anew')
})

t.test('a write to another database (PostgreSQL: another schema of the same database) leaves the cache alone', async (t) => {
  // The read cache alone: an anonymous read by id would otherwise come from the event's stored document.
  const built = await build(t, { config: { eventDocuments: false } })
  const elsewhere = await openTestDatabase(t)
  t.teardown(() => elsewhere.close())
  const id = await insertEvent(built.db, { slug: 'here', title: 'Here' })
  const title = async () => {
    const res = await built.inject({ url: `${API}/events/${id}` })
    t.equal(res.statusCode, 200)
    return res.json<{ title: string }>().title
  }
  const misses = () => {
    const s = readCacheStats(built.db)
    return (s?.misses.records ?? 0) + (s?.misses.results ?? 0)
  }
  t.equal(await title(), 'Here')
  t.equal(await title(), 'Here')
  const warm = misses()
  const otherId = await insertEvent(elsewhere.db, { slug: 'there', title: 'There' })
  await elsewhere.db.updateTable('events').set({ title: 'There, again' }).where('id', '=', otherId).execute()
  t.equal(await title(), 'Here')
  t.equal(misses(), warm, 'writes to the events of another database or schema dropped nothing')
  await built.db.updateTable('events').set({ title: 'Here, again' }).where('id', '=', id).execute()
  t.equal(await title(), 'Here, again', 'a raw write to this schema\'s events is seen')
  t.ok(misses() > warm, 'it dropped the cache')
})
