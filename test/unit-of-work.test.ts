/**
 * The unit of work (src/db/unit-of-work.ts): on SQLite a write transaction takes the write lock when it
 * begins, a unit of work that lost to another connection runs again (whole, a bounded number of times),
 * and its listeners learn what it changed and whether it committed.
 */
import t from 'tap'
import { spawn } from 'node:child_process'
import { once } from 'node:events'
import { join } from 'node:path'
import { openDatabase, openSqlite } from '../src/db/database.js'
import { onWritten, recordChange, withTransaction, type Change } from '../src/db/unit-of-work.js'

/** A conflict lost at once (WAL: the snapshot moved), not a lock waited for: worth running again. */
const busy = (): Error => Object.assign(new Error('database is locked'), { code: 'SQLITE_BUSY_SNAPSHOT' })

t.test('a write transaction holds the write lock from its first statement', async (t) => {
  const file = join(t.testdir(), 'calendar.db')
  const own = await openSqlite(file)
  const other = await openSqlite(file)
  t.teardown(async () => {
    await own.close()
    await other.close()
  })
  other.sqlite.pragma('busy_timeout = 0')
  await withTransaction(own.db, async (trx) => {
    // Only a read so far: a deferred transaction would hold no lock yet.
    await trx.selectFrom('users').select('id').execute()
    t.throws(() => other.sqlite.prepare("insert into users (name, role, created_at) values ('x', 'editor', '')").run(), { code: 'SQLITE_BUSY' },
      'another connection cannot write meanwhile')
  })
  t.equal(other.sqlite.prepare("insert into users (name, role, created_at) values ('y', 'editor', '')").run().changes, 1, 'it can once the unit of work ends')
})

t.test('a unit of work that lost to another connection runs again, whole; other errors are not retried', async (t) => {
  const handle = await openDatabase(':memory:')
  t.teardown(() => handle.close())
  let runs = 0
  const id = await withTransaction(handle.db, async (trx) => {
    runs += 1
    const row = await trx.insertInto('users').values({ name: `user-${runs}`, role: 'editor', created_at: '' }).returning('id').executeTakeFirstOrThrow()
    if (runs === 1) throw busy()
    return row.id
  })
  t.equal(runs, 2, 'run twice')
  t.same((await handle.db.selectFrom('users').select('name').execute()).map((r) => r.name), ['user-2'], 'the first run was rolled back')
  t.equal(typeof id, 'number')

  let always = 0
  await t.rejects(withTransaction(handle.db, async () => {
    always += 1
    throw busy()
  }), { code: 'SQLITE_BUSY_SNAPSHOT' }, 'a conflict that lasts is thrown at last')
  t.equal(always, 3, 'after three runs')

  let once = 0
  await t.rejects(withTransaction(handle.db, async () => {
    once += 1
    throw new Error('a refusal')
  }), { message: 'a refusal' })
  t.equal(once, 1, 'any other error ends it at once')
})

t.test('a lock held elsewhere past the busy timeout is waited for once, not once per run (CONTRACT §18)', async (t) => {
  const file = join(t.testdir(), 'calendar.db')
  const timeoutMs = 1000
  const own = await openSqlite(file, undefined, timeoutMs)
  t.teardown(() => own.close())
  // Another process holds the write lock until it is ended (this one's SQLite calls block while they wait).
  const holder = spawn(process.execPath, ['--input-type=module', '-e', `
    import SQLite from 'better-sqlite3'
    const db = new SQLite(${JSON.stringify(file)})
    db.exec('begin immediate')
    process.stdout.write('locked\\n')
    // The connection stays referenced, so that no collection closes it (and lets the lock go) while the test waits.
    setInterval(() => db.open, 1000)
  `], { stdio: ['ignore', 'pipe', 'inherit'] })
  t.teardown(() => holder.kill())
  await once(holder.stdout, 'data')
  let runs = 0
  const began = performance.now()
  await t.rejects(withTransaction(own.db, async () => {
    runs += 1
  }), { code: 'SQLITE_BUSY' }, 'the wait run out is the answer')
  const took = performance.now() - began
  t.equal(runs, 0, 'the work never ran')
  // One wait of the busy timeout; three runs waited three times as long.
  t.ok(took >= timeoutMs * 0.9 && took < timeoutMs * 2, `waited once (${Math.round(took)} ms for a timeout of ${timeoutMs} ms)`)
})

t.test('listeners learn what a unit of work changed, and whether it committed', async (t) => {
  const handle = await openDatabase(':memory:')
  t.teardown(() => handle.close())
  const heard: Array<{ changes: readonly Change[]; committed: boolean }> = []
  onWritten(handle.db, (changes, committed) => heard.push({ changes, committed }))
  await withTransaction(handle.db, async (trx) => {
    recordChange(trx, { resource: 'venue', id: 1, action: 'create' })
    recordChange(trx, { resource: 'event', id: 2, action: 'update' })
  })
  await t.rejects(withTransaction(handle.db, async (trx) => {
    recordChange(trx, { resource: 'tag', id: 3, action: 'delete', language: 'en' })
    throw new Error('refused')
  }))
  t.same(heard, [
    { changes: [{ resource: 'venue', id: 1, action: 'create' }, { resource: 'event', id: 2, action: 'update' }], committed: true },
    { changes: [{ resource: 'tag', id: 3, action: 'delete', language: 'en' }], committed: false },
  ])
  t.throws(() => recordChange(handle.db as never, { resource: 'tag', id: 4, action: 'create' }), /outside a unit of work/, 'a write outside a unit of work is refused')
})
