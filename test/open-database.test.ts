/**
 * Opening a database (src/db/database.ts), on the engine under test: a new one is migrated; one whose
 * history names exactly the migrations of this build is opened with one statement (no migrator, no
 * lock, no look at the catalog); a history naming a migration this build does not know is refused as
 * before (a newer database), and one missing a migration has it applied.
 */
import t, { type Test } from 'tap'
import { sql, type Kysely } from 'kysely'
import type { Database } from '../src/db/schema.js'
import { join } from 'node:path'
import { DEFAULT_SQLITE_CACHE_MB, DEFAULT_SQLITE_MMAP_MB, WAL_AUTOCHECKPOINT_PAGES, openDatabase, type LoggedStatement } from '../src/db/database.js'
import { migrationsApplied, migrationsCurrent } from '../src/db/migrate.js'
import SQLite from 'better-sqlite3'
import { TEST_ENGINE, freshDatabaseUrl } from './helpers/database.js'

async function freshUrl(t: Test): Promise<string> {
  return freshDatabaseUrl(t, join(t.testdir(), 'calendar.db'))
}

t.test('a new database is migrated; opened again, one statement reads its history and nothing else runs', async (t) => {
  const url = await freshUrl(t)
  const first = await openDatabase(url)
  t.ok(await migrationsApplied(first.db), 'migrated on first open')
  t.ok(await migrationsCurrent(first.db))
  await first.close()

  const statements: LoggedStatement[] = []
  const again = await openDatabase(url, { log: (s) => statements.push(s) })
  t.teardown(() => again.close())
  t.same(statements.map((s) => s.sql), ['select name from kysely_migration'], 'the history read, no migrator')
  t.ok(await migrationsApplied(again.db))
})

t.test('PostgreSQL: every connection of the pool runs without JIT (a list over many occurrences compiled for 0.6 s)', async (t) => {
  if (TEST_ENGINE === 'sqlite') {
    t.pass('SQLite: no JIT')
    return
  }
  const handle = await openDatabase(await freshUrl(t))
  t.teardown(() => handle.close())
  // Several connections at once (each new one set on connect), and one of them again.
  const settings = await Promise.all(Array.from({ length: 3 }, () => sql<{ jit: string }>`select current_setting('jit') as jit from pg_sleep(0.05)`.execute(handle.db)))
  t.same(settings.map((r) => r.rows[0]?.jit), ['off', 'off', 'off'])
  t.equal((await sql<{ jit: string }>`select current_setting('jit') as jit`.execute(handle.db)).rows[0]?.jit, 'off')
})

t.test('a history naming a migration this build does not know is refused, as a newer database is', async (t) => {
  const url = await freshUrl(t)
  const first = await openDatabase(url)
  await sql`insert into kysely_migration (name, timestamp) values ('9999-from-a-newer-build', '2026-11-26T00:00:00.000Z')`.execute(first.db)
  t.notOk(await migrationsCurrent(first.db))
  await t.rejects(openDatabase(url), /corrupted migrations: previously executed migration 9999-from-a-newer-build is missing/)
  // The history as this build left it (a PostgreSQL schema is used again by the next test).
  await sql`delete from kysely_migration where name = '9999-from-a-newer-build'`.execute(first.db)
  await first.close()
})

/** The columns of the event documents' table, in the order stored. */
async function documentColumns(db: Kysely<Database>): Promise<string[]> {
  const { rows } = TEST_ENGINE === 'postgres'
    ? await sql<{ name: string }>`select column_name as name from information_schema.columns
        where table_schema = current_schema() and table_name = 'event_documents' order by ordinal_position`.execute(db)
    : await sql<{ name: string }>`select name from pragma_table_info('event_documents') order by cid`.execute(db)
  return rows.map((r) => r.name)
}

/** The names of the event documents' indexes but its primary key's, in name order. */
async function documentIndexes(db: Kysely<Database>): Promise<string[]> {
  const { rows } = TEST_ENGINE === 'postgres'
    ? await sql<{ name: string }>`select indexname as name from pg_indexes
        where schemaname = current_schema() and tablename = 'event_documents' and indexname <> 'event_documents_pkey' order by indexname`.execute(db)
    : await sql<{ name: string }>`select name from pragma_index_list('event_documents') where origin = 'c' order by name`.execute(db)
  return rows.map((r) => r.name)
}

t.test('a history missing a migration has it applied on open', async (t) => {
  const url = await freshUrl(t)
  const first = await openDatabase(url)
  // 0014 (the documents' body stored last) undone with its record: as a database made before it.
  const applied = (await sql<{ name: string }>`select name from kysely_migration order by name`.execute(first.db)).rows.map((r) => r.name)
  const last = '0014-event-documents-body-last'
  t.ok(applied.includes(last))
  t.equal(applied.at(-1), '0027-occurrence-documents-read')
  t.equal((await documentColumns(first.db)).at(-1), 'body', 'a new database stores the body last')
  t.strictSame(await documentIndexes(first.db), ['event_documents_context', 'event_documents_group'].filter((i) => TEST_ENGINE === 'sqlite' || i !== 'event_documents_context'))
  const { down } = await import('../src/db/migrations/0014-event-documents-body-last.js')
  await down(first.db)
  await sql`delete from kysely_migration where name = ${last}`.execute(first.db)
  t.notOk(await migrationsCurrent(first.db))
  const before = await documentColumns(first.db)
  t.equal(before.indexOf('body'), 5, 'before 0014 the body is the sixth column')
  await first.close()

  const statements: LoggedStatement[] = []
  const again = await openDatabase(url, { log: (s) => statements.push(s) })
  t.teardown(() => again.close())
  t.ok(await migrationsApplied(again.db), 'the missing migration applied')
  t.ok(statements.length > 1, `the migrator ran (${statements.length} statements on ${TEST_ENGINE})`)
  const after = await documentColumns(again.db)
  t.strictSame(after, [...before.filter((c) => c !== 'body'), 'body'], 'the same columns, the body last')
  // 0014 makes the table anew: with the index by context that 0015 made (SQLite), which the fill names.
  t.strictSame(await documentIndexes(again.db), ['event_documents_context', 'event_documents_group'].filter((i) => TEST_ENGINE === 'sqlite' || i !== 'event_documents_context'),
    'the indexes 0014 and 0015 left')
})

/** The names of the events' indexes but its primary key's, in name order. */
async function eventIndexes(db: Kysely<Database>): Promise<string[]> {
  const { rows } = TEST_ENGINE === 'postgres'
    ? await sql<{ name: string }>`select indexname as name from pg_indexes
        where schemaname = current_schema() and tablename = 'events' and indexname <> 'events_pkey' order by indexname`.execute(db)
    : await sql<{ name: string }>`select name from pragma_index_list('events') where origin = 'c' order by name`.execute(db)
  return rows.map((r) => r.name)
}

t.test('a database made before 0020 has the events indexes no statement reads dropped on open, and `down` makes them again', async (t) => {
  const url = await freshUrl(t)
  const first = await openDatabase(url)
  // PostgreSQL's planner drives a narrow `modified_*` window from `events_modified`: it keeps it.
  const unused = ['events_end', 'events_featured', ...(TEST_ENGINE === 'sqlite' ? ['events_modified'] : [])]
  const kept = await eventIndexes(first.db)
  t.same(kept.filter((i) => unused.includes(i)), [], 'a new database has none of them')
  t.ok(['events_start', 'events_parent', 'events_author', 'events_slug', 'events_translation'].every((i) => kept.includes(i)), `the others kept: ${kept.join(', ')}`)
  const name = '0020-events-unused-indexes'
  const { down } = await import('../src/db/migrations/0020-events-unused-indexes.js')
  await down(first.db)
  await sql`delete from kysely_migration where name = ${name}`.execute(first.db)
  t.strictSame(await eventIndexes(first.db), [...kept, ...unused].sort(), 'as before 0020')
  await first.close()
  const again = await openDatabase(url)
  t.teardown(() => again.close())
  t.ok(await migrationsApplied(again.db))
  t.strictSame(await eventIndexes(again.db), kept)
})

t.test('a database made before 0015 gets the documents\' index by context on open (SQLite; PostgreSQL has none)', async (t) => {
  const url = await freshUrl(t)
  const first = await openDatabase(url)
  const name = '0015-event-documents-by-context'
  const { down } = await import('../src/db/migrations/0015-event-documents-by-context.js')
  await down(first.db)
  await sql`delete from kysely_migration where name = ${name}`.execute(first.db)
  t.strictSame(await documentIndexes(first.db), ['event_documents_group'], 'as before 0015')
  await first.close()
  const again = await openDatabase(url)
  t.teardown(() => again.close())
  t.ok(await migrationsApplied(again.db))
  t.strictSame(await documentIndexes(again.db), TEST_ENGINE === 'sqlite' ? ['event_documents_context', 'event_documents_group'] : ['event_documents_group'])
})

t.test('every event ends at or after its start, whoever writes (migration 0010), and a database holding one that does not is not migrated', async (t) => {
  const url = await freshUrl(t)
  const first = await openDatabase(url)
  const { insertEvent } = await import('./helpers/fixtures.js')
  const id = await insertEvent(first.db, { start_utc: '2026-07-01 18:00:00', end_utc: '2026-07-01 18:00:00' })
  t.ok(id > 0, 'an event that ends as it starts is stored')
  await t.rejects(insertEvent(first.db, { start_utc: '2026-07-01 18:00:00', end_utc: '2026-07-01 17:59:59' }), 'an insert that ends before it starts is refused')
  await t.rejects(first.db.updateTable('events').set({ end_utc: '2026-06-30 00:00:00' }).where('id', '=', id).execute(), 'an update of the end to before the start is refused')
  await t.rejects(first.db.updateTable('events').set({ start_utc: '2026-07-02 00:00:00' }).where('id', '=', id).execute(), 'an update of the start to after the end is refused')
  await first.db.updateTable('events').set({ start_utc: '2026-07-01 12:00:00', end_utc: '2026-07-01 13:00:00' }).where('id', '=', id).execute()
  t.same(await first.db.selectFrom('events').select(['start_utc', 'end_utc']).where('id', '=', id).executeTakeFirst(),
    { start_utc: '2026-07-01 12:00:00', end_utc: '2026-07-01 13:00:00' }, 'both moved together is an ordinary update')

  // A database made before 0010 (and so before the occurrences of 0017, which hold the same rule) that holds an
  // inverted event (raw SQL): the migration names it and stops (0019 undone first). 0018's `down` leaves the occurrences without
  // the triggers 0017's `down` drops: their table goes by hand (0010 stops the migration before 0017 again).
  const { down: beforeFilters } = await import('../src/db/migrations/0019-occurrence-filters.js')
  await beforeFilters(first.db)
  await sql`delete from kysely_migration where name = '0019-occurrence-filters'`.execute(first.db)
  const { down: beforeSeries } = await import('../src/db/migrations/0018-recurring-events.js')
  await beforeSeries(first.db)
  await sql`delete from kysely_migration where name = '0018-recurring-events'`.execute(first.db)
  await sql`drop table event_occurrences`.execute(first.db)
  await sql`delete from kysely_migration where name = '0017-event-occurrences'`.execute(first.db)
  const { down } = await import('../src/db/migrations/0010-events-end-not-before-start.js')
  await down(first.db)
  await sql`delete from kysely_migration where name = '0010-events-end-not-before-start'`.execute(first.db)
  await first.db.updateTable('events').set({ end_utc: '2026-07-01 11:00:00' }).where('id', '=', id).execute()
  await first.close()
  await t.rejects(openDatabase(url), new RegExp(`migration 0010: events ${id} end before they start`))
  const repaired = await openDatabase(url).catch(() => undefined)
  t.equal(repaired, undefined, 'still refused until the event is corrected')
})

t.test('SQLite: a file is opened in WAL mode, waits for a writer, and checkpoints every WAL_AUTOCHECKPOINT_PAGES pages', async (t) => {
  if (TEST_ENGINE !== 'sqlite') {
    t.pass('PostgreSQL: nothing of SQLite to set')
    return
  }
  const handle = await openDatabase(await freshUrl(t))
  t.teardown(() => handle.close())
  const sqlite = handle.sqlite
  if (sqlite === undefined) throw new Error('no SQLite handle')
  t.equal(sqlite.pragma('journal_mode', { simple: true }), 'wal')
  t.equal(sqlite.pragma('busy_timeout', { simple: true }), 5000)
  t.equal(sqlite.pragma('wal_autocheckpoint', { simple: true }), WAL_AUTOCHECKPOINT_PAGES)
  t.equal(WAL_AUTOCHECKPOINT_PAGES, 10_000)
})

t.test('SQLite: its page cache is DEFAULT_SQLITE_CACHE_MB and the file is read through a map of DEFAULT_SQLITE_MMAP_MB, each as told (docs/operations.md#memory)', async (t) => {
  if (TEST_ENGINE !== 'sqlite') {
    t.pass('PostgreSQL: nothing of SQLite to set')
    return
  }
  const url = await freshUrl(t)
  const handle = await openDatabase(url)
  const sqlite = handle.sqlite
  if (sqlite === undefined) throw new Error('no SQLite handle')
  t.equal(DEFAULT_SQLITE_CACHE_MB, 16)
  t.equal(DEFAULT_SQLITE_MMAP_MB, 0, 'no map unless told: a fault through a map would end the process (CONTRACT §18)')
  // Negative: KiB.
  t.equal(sqlite.pragma('cache_size', { simple: true }), -16 * 1024)
  t.equal(sqlite.pragma('mmap_size', { simple: true }), 0, 'no map')
  await handle.close()
  const told = await openDatabase(url, { sqliteCacheMb: 4, sqliteMmapMb: 2047 })
  t.teardown(() => told.close())
  t.equal(told.sqlite?.pragma('cache_size', { simple: true }), -4 * 1024)
  t.equal(told.sqlite?.pragma('mmap_size', { simple: true }), 2047 * 1024 * 1024, 'the most SQLite\'s build maps')
  const memory = await openDatabase(':memory:', { sqliteCacheMb: 1 })
  t.teardown(() => memory.close())
  t.equal(memory.sqlite?.pragma('cache_size', { simple: true }), -1024, 'in memory too')
})

t.test('SQLite: a new file another process is making (its write lock held in rollback mode) is opened once that process lets go', async (t) => {
  if (TEST_ENGINE !== 'sqlite') {
    t.pass('PostgreSQL: nothing of SQLite to switch')
    return
  }
  const file = join(t.testdir(), 'made-at-once.db')
  const other = new SQLite(file)
  t.teardown(() => other.close())
  other.exec('begin immediate; create table made_by_the_other (x integer)')
  // What a node starting beside it meets: SQLite answers at once, without waiting out the busy timeout.
  const probe = new SQLite(file)
  probe.pragma('busy_timeout = 5000')
  t.throws(() => probe.pragma('journal_mode = WAL'), { code: 'SQLITE_BUSY' }, 'the switch to WAL is refused at once while the other holds the lock')
  probe.close()

  const opening = openDatabase(file)
  // The first attempt has been refused by now; the other process commits before the next one.
  setImmediate(() => other.exec('commit'))
  const handle = await opening
  t.teardown(() => handle.close())
  t.equal(handle.sqlite?.pragma('journal_mode', { simple: true }), 'wal')
  t.ok(await migrationsApplied(handle.db), 'migrated')
  t.same((await sql<{ name: string }>`select name from sqlite_master where name = 'made_by_the_other'`.execute(handle.db)).rows, [{ name: 'made_by_the_other' }], "the other's table is there")
})
