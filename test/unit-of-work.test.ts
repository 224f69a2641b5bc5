/**
 * The unit of work (src/db/unit-of-work.ts): on SQLite a write transaction takes the write lock when it
 * begins, a unit of work that lost to another connection runs again (whole, a bounded number of times),
 * and its listeners learn what it changed and whether it committed. On SQLite, units of work that wait for the
 * write lock together share one transaction and its commit, a savepoint each (issue 49).
 */
import t, { type Test } from 'tap'
import { spawn } from 'node:child_process'
import { once } from 'node:events'
import { readdirSync, readlinkSync } from 'node:fs'
import { join } from 'node:path'
import { CompiledQuery, sql } from 'kysely'
import pg from 'pg'
import { openDatabase, openSqlite } from '../src/db/database.js'
import { dataVersion, deferredWrite, journalInMemory, readAhead, versionInWrite } from '../src/db/dialect.js'
import { engineTest, openTestDatabase } from './helpers/database.js'
import { onWritten, recordChange, SHARED_UNITS, withOwnTransaction, withTransaction, writtenBetween, type Change, type Tx } from '../src/db/unit-of-work.js'

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

/** The two ways a unit of work runs: shared (SQLite's) and in a transaction of its own (PostgreSQL's). */
const WAYS = [['shared', withTransaction], ['in a transaction of its own', withOwnTransaction]] as const

for (const [way, run] of WAYS) {
  t.test(`a unit of work that lost to another connection runs again, whole; other errors are not retried: ${way}`, async (t) => {
    const handle = await openDatabase(':memory:')
    t.teardown(() => handle.close())
    let runs = 0
    const id = await run(handle.db, async (trx) => {
      runs += 1
      const row = await trx.insertInto('users').values({ name: `user-${runs}`, role: 'editor', created_at: '' }).returning('id').executeTakeFirstOrThrow()
      if (runs === 1) throw busy()
      return row.id
    })
    t.equal(runs, 2, 'run twice')
    t.same((await handle.db.selectFrom('users').select('name').execute()).map((r) => r.name), ['user-2'], 'the first run was rolled back')
    t.equal(typeof id, 'number')

    let always = 0
    await t.rejects(run(handle.db, async () => {
      always += 1
      throw busy()
    }), { code: 'SQLITE_BUSY_SNAPSHOT' }, 'a conflict that lasts is thrown at last')
    t.equal(always, 3, 'after three runs')

    let once = 0
    await t.rejects(run(handle.db, async () => {
      once += 1
      throw new Error('a refusal')
    }), { message: 'a refusal' })
    t.equal(once, 1, 'any other error ends it at once')
  })
}

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

for (const [way, run] of WAYS) {
  t.test(`listeners learn what a unit of work changed, and whether it committed: ${way}`, async (t) => {
    const handle = await openDatabase(':memory:')
    t.teardown(() => handle.close())
    const heard: Array<{ changes: readonly Change[]; committed: boolean }> = []
    onWritten(handle.db, (changes, committed) => heard.push({ changes, committed }))
    await run(handle.db, async (trx) => {
      recordChange(trx, { resource: 'venue', id: 1, action: 'create' })
      recordChange(trx, { resource: 'event', id: 2, action: 'update' })
    })
    await t.rejects(run(handle.db, async (trx) => {
      recordChange(trx, { resource: 'tag', id: 3, action: 'delete', language: 'en' })
      throw new Error('refused')
    }))
    t.same(heard, [
      { changes: [{ resource: 'venue', id: 1, action: 'create' }, { resource: 'event', id: 2, action: 'update' }], committed: true },
      { changes: [{ resource: 'tag', id: 3, action: 'delete', language: 'en' }], committed: false },
    ])
    t.throws(() => recordChange(handle.db as never, { resource: 'tag', id: 4, action: 'create' }), /outside a unit of work/, 'a write outside a unit of work is refused')
  })
}

/** A SQLite file whose statements are counted: `commits()` says how many commits were asked for. */
async function counted(t: Test) {
  let commits = 0
  const handle = await openSqlite(join(t.testdir(), 'calendar.db'), (statement) => {
    if (statement.sql === 'commit') commits += 1
  })
  t.teardown(() => handle.close())
  return { handle, commits: () => commits }
}

/** A unit of work that logs the delete of tag `id` (so that the change log's head moves) and adds a user. */
const deleting = (id: number, trace: string[]) => async (trx: Parameters<Parameters<typeof withTransaction>[1]>[0]) => {
  trace.push(`ran ${id}`)
  recordChange(trx, { resource: 'tag', id, action: 'delete', language: 'en' })
  await trx.insertInto('users').values({ name: `user-${id}`, role: 'editor', created_at: '' }).execute()
  return id
}

t.test('SQLite: units of work that queue together share one commit, and each is answered after it', async (t) => {
  const { handle, commits } = await counted(t)
  const heard: boolean[] = []
  onWritten(handle.db, (_, committed) => heard.push(committed))
  const from = await dataVersion(handle.db)
  const trace: string[] = []
  const before = commits()
  const answers = await Promise.all([1, 2, 3, 4, 5].map((id) => withTransaction(handle.db, deleting(id, trace)).then((answer) => {
    trace.push(`answered ${answer}`)
    return answer
  })))
  t.same(answers, [1, 2, 3, 4, 5])
  t.equal(commits() - before, 1, 'one commit for the five')
  t.same(trace, ['ran 1', 'ran 2', 'ran 3', 'ran 4', 'ran 5', 'answered 1', 'answered 2', 'answered 3', 'answered 4', 'answered 5'],
    'none answered before the last ran (and the commit)')
  t.same(heard, [true, true, true, true, true], 'each told it committed')
  const to = await dataVersion(handle.db)
  t.ok(from !== undefined && to !== undefined)
  t.same(writtenBetween(handle.db, from!, to!, 100)?.map((c) => c.id), [1, 2, 3, 4, 5], 'the journal holds each unit, one after the other')
  t.same((await handle.db.selectFrom('changes').select('record_id').orderBy('position').execute()).map((r) => r.record_id), [1, 2, 3, 4, 5],
    'the change log in their order')
})

// The unit that throws is the first of the shared transaction (which opens no savepoint for it) or a later one
// (in its savepoint): either way it rolls back alone and the others commit together.
for (const failing of [0, 1, 2]) {
  const where = failing === 0 ? 'the first unit of work of a shared transaction (no savepoint)' : `unit of work ${failing + 1} of a shared transaction (in its savepoint)`
  t.test(`SQLite: ${where} that throws rolls back alone`, async (t) => {
    const { handle, commits } = await counted(t)
    const heard: Array<{ ids: number[]; committed: boolean }> = []
    onWritten(handle.db, (changes, committed) => heard.push({ ids: changes.map((c) => c.id), committed }))
    const trace: string[] = []
    const before = commits()
    const ids = [1, 2, 3]
    const results = await Promise.allSettled(ids.map((id, i) => withTransaction(handle.db, i !== failing ? deleting(id, trace) : async (trx) => {
      await deleting(id, trace)(trx)
      throw new Error('refused')
    })))
    t.same(results.map((r) => r.status), ids.map((_id, i) => (i === failing ? 'rejected' : 'fulfilled')))
    t.match(results[failing], { reason: { message: 'refused' } })
    t.equal(commits() - before, 1, 'the others in one commit')
    const kept = ids.filter((_id, i) => i !== failing)
    t.same((await handle.db.selectFrom('users').select('name').orderBy('id').execute()).map((r) => r.name), kept.map((id) => `user-${id}`), 'its row rolled back, the others kept')
    t.same((await handle.db.selectFrom('changes').select('record_id').orderBy('position').execute()).map((r) => r.record_id), kept, 'and its change log entry')
    t.same(heard, ids.map((id, i) => ({ ids: [id], committed: i !== failing })))
  })
}

t.test('SQLite: a conflict lost inside a shared transaction runs that unit again, in its savepoint', async (t) => {
  const { handle } = await counted(t)
  const trace: string[] = []
  let runs = 0
  const answers = await Promise.all([
    withTransaction(handle.db, deleting(1, trace)),
    withTransaction(handle.db, async (trx) => {
      runs += 1
      await deleting(2, trace)(trx)
      if (runs === 1) throw busy()
      return 2
    }),
  ])
  t.same(answers, [1, 2])
  t.equal(runs, 2)
  t.same((await handle.db.selectFrom('users').select('name').orderBy('id').execute()).map((r) => r.name), ['user-1', 'user-2'], 'its first run rolled back, once')
})

t.test('SQLite: a shared commit that fails fails every unit of work in it', async (t) => {
  const { handle, commits } = await counted(t)
  await sql`create table parent (id integer primary key)`.execute(handle.db)
  await sql`create table child (id integer primary key, parent integer references parent (id) deferrable initially deferred)`.execute(handle.db)
  const heard: boolean[] = []
  onWritten(handle.db, (_, committed) => heard.push(committed))
  const trace: string[] = []
  const before = commits()
  const results = await Promise.allSettled([
    withTransaction(handle.db, deleting(1, trace)),
    // Checked at the commit only: the savepoint is released, the commit refused.
    withTransaction(handle.db, async (trx) => { await sql`insert into child (id, parent) values (1, 99)`.execute(trx) }),
    withTransaction(handle.db, deleting(3, trace)),
  ])
  t.same(results.map((r) => r.status), ['rejected', 'rejected', 'rejected'])
  t.match(results[0], { reason: { code: 'SQLITE_CONSTRAINT_FOREIGNKEY' } }, 'with the commit\'s error')
  t.equal(commits() - before, 1, 'one commit tried')
  t.same(heard, [false, false, false], 'each told it did not commit')
  t.same(await handle.db.selectFrom('users').select('name').execute(), [], 'nothing committed')
  t.same(await handle.db.selectFrom('changes').select('record_id').execute(), [])
  t.same(await withTransaction(handle.db, deleting(4, trace)), 4, 'the next unit of work commits')
})

t.test(`SQLite: a shared transaction runs at most ${SHARED_UNITS} units of work`, async (t) => {
  const { handle, commits } = await counted(t)
  const trace: string[] = []
  const before = commits()
  const n = SHARED_UNITS * 2 + 1
  await Promise.all(Array.from({ length: n }, (_, i) => withTransaction(handle.db, deleting(i + 1, trace))))
  t.equal(commits() - before, 3, `${n} units in three commits`)
  t.equal((await handle.db.selectFrom('users').select('id').execute()).length, n)
})

// SQLite keeps a savepoint's journal (the original of each page it changes) in memory up to 64 KiB, then in a temporary
// file (nameless or unlinked as it is opened: a deleted file among the process's descriptors while open), unless the
// transaction began with `temp_store = MEMORY` (`journalInMemory`), which the shared transactions of small units of
// work ask for.
t.test('SQLite: small units of work share transactions of their own, whose savepoints journal in memory', { skip: process.platform !== 'linux' && 'reads /proc/self/fd' }, async (t) => {
  const { handle, commits } = await counted(t)
  await sql`create table big (id integer primary key, text text not null)`.execute(handle.db)
  // About 60 pages of rows, which a savepoint that rewrites them all journals (240 kB).
  await withTransaction(handle.db, async (trx) => {
    for (let i = 0; i < 100; i++) await sql`insert into big (id, text) values (${i}, ${'x'.repeat(2000)})`.execute(trx)
  })
  const deletedFiles = (): number => readdirSync('/proc/self/fd').filter((fd) => {
    try {
      return readlinkSync(`/proc/self/fd/${fd}`).endsWith(' (deleted)')
    } catch {
      return false
    }
  }).length
  const outside = deletedFiles()
  const tempFiles = (): number => deletedFiles() - outside
  const seen: Record<string, number> = {}
  const rewriting = (name: string) => async (trx: Tx) => {
    await sql`update big set text = ${name.repeat(2000)}`.execute(trx)
    seen[name] = tempFiles()
    return name
  }
  const trace: string[] = []
  const before = commits()
  const answers = await Promise.all([
    withTransaction(handle.db, deleting(1, trace), { small: true }),
    withTransaction(handle.db, rewriting('a'), { small: true }),
    withTransaction(handle.db, deleting(3, trace)),
    withTransaction(handle.db, rewriting('b')),
    withTransaction(handle.db, deleting(5, trace), { small: true }),
  ])
  t.same(answers, [1, 'a', 3, 'b', 5])
  t.equal(commits() - before, 3, 'small units and others never share a transaction: [1, a], [3, b], [5], in the order they came')
  t.same(trace, ['ran 1', 'ran 3', 'ran 5'])
  t.equal(seen.a, 0, 'a small unit\'s savepoint journals in memory')
  t.ok((seen.b ?? 0) >= 1, `another unit's savepoint journals in a temporary file past 64 KiB (${seen.b} seen)`)
  t.equal(handle.sqlite.pragma('temp_store', { simple: true }), 0, 'the connection\'s default again once they are done')
  t.same((await handle.db.selectFrom('users').select('name').orderBy('id').execute()).map((r) => r.name), ['user-1', 'user-3', 'user-5'])
  t.equal((await sql<{ text: string }>`select text from big where id = 0`.execute(handle.db)).rows[0]?.text, 'b'.repeat(2000))
  // The switch itself: the setting of the transaction begun next, the default restored.
  journalInMemory(handle.db, true)
  t.equal(handle.sqlite.pragma('temp_store', { simple: true }), 2)
  journalInMemory(handle.db, false)
  t.equal(handle.sqlite.pragma('temp_store', { simple: true }), 0)
})

t.test('SQLite: while a shared transaction waits for its commit, a read takes the version committed before it', async (t) => {
  const { handle } = await counted(t)
  const trace: string[] = []
  const from = await dataVersion(handle.db)
  let during: Promise<unknown> | undefined
  await withTransaction(handle.db, async (trx) => {
    await deleting(1, trace)(trx)
    // Runs in the turn the shared transaction gives the event loop before it commits.
    setImmediate(() => { during = dataVersion(handle.db) })
  })
  t.ok(during !== undefined, 'read before the commit')
  t.same(await during, from, 'the version committed before the transaction, not what it wrote')
  t.not((await dataVersion(handle.db))?.head, from?.head, 'the commit moved it')
})

t.test('SQLite: inside a write transaction, a read takes the version of the last commit, though nothing read it since', async (t) => {
  const { handle } = await counted(t)
  const trace: string[] = []
  await withTransaction(handle.db, deleting(1, trace))
  let began: unknown
  let during: Promise<unknown> | undefined
  await withTransaction(handle.db, async (trx) => {
    began = await versionInWrite(trx)
    await deleting(2, trace)(trx)
    setImmediate(() => { during = dataVersion(handle.db) })
  })
  t.same(await during, began, 'the first unit of work\'s commit, as the second began')
})

engineTest('postgres', t, 'PostgreSQL: a unit of work begins, takes the write lock and reads its first look in one round trip, and reads its last look and commits in another', async (t) => {
  // Every round trip inside the lock is one every writer of the cluster waits for (docs/performance.md, pg-writes).
  const handle = await openTestDatabase(t)
  t.teardown(() => handle.close())
  await withTransaction(handle.db, (trx) => trx.insertInto('users').values({ name: 'warm', role: 'editor', created_at: '' }).execute())
  const sent: string[] = []
  type Query = (this: unknown, ...args: unknown[]) => unknown
  const proto = pg.Client.prototype as unknown as { query: Query }
  const original = proto.query
  proto.query = function (this: unknown, ...args: unknown[]) {
    const first = args[0]
    sent.push(typeof first === 'string' ? first : (first as { text?: string }).text ?? '?')
    return original.apply(this, args)
  }
  t.teardown(() => {
    proto.query = original
  })
  await withTransaction(handle.db, (trx) => trx.insertInto('users').values({ name: 'x', role: 'editor', created_at: '' }).execute())
  proto.query = original
  t.equal(sent.length, 3, `three round trips: ${JSON.stringify(sent)}`)
  t.match(sent[0], /^start transaction isolation level read committed; set local calendar.api = 'on'; select pg_advisory_xact_lock\(hashtext\('calendar-writes:.*\); select pg_advisory_xact_lock\(hashtext\('calendar-log:.*\); select .* from data_epoch .* for update$/)
  t.match(sent[1], /^insert into "users"/)
  t.match(sent[2], /^update data_epoch set n = n \+ 1 .*; select .* from data_epoch .* for update; commit$/)
  // One that runs beside others (issue 49): the writes lock shared at its begin, the log lock only with its first look, at its end.
  sent.length = 0
  proto.query = function (this: unknown, ...args: unknown[]) {
    const first = args[0]
    sent.push(typeof first === 'string' ? first : (first as { text?: string }).text ?? '?')
    return original.apply(this, args)
  }
  await withTransaction(handle.db, (trx) => trx.insertInto('users').values({ name: 'w', role: 'editor', created_at: '' }).execute(), { concurrent: true })
  proto.query = original
  // Its begin with its first statement (its values written into the text); its tail in one: the log lock and first
  // look, (no change logged here) the epoch's move, the last look and the commit.
  t.equal(sent.length, 2, `two round trips: ${JSON.stringify(sent)}`)
  t.match(sent[0], /^start transaction isolation level read committed; set local calendar.api = 'on'; select pg_advisory_xact_lock_shared\(hashtext\('calendar-writes:.*\); insert into "users" .* values \('w', 'editor', ''\)$/)
  t.match(sent[1], /^\/\* the log's tail \*\/ select pg_advisory_xact_lock\(hashtext\('calendar-log:.*\); select .* from data_epoch .* for update; update data_epoch set n = n \+ 1 .*; select .* from data_epoch .* for update; commit$/)
  t.equal((await handle.db.selectFrom('users').select('name').where('name', '=', 'x').execute()).length, 1, 'committed')
  // A unit of work that throws is rolled back, and the connection serves the next one.
  await t.rejects(withTransaction(handle.db, async (trx) => {
    await trx.insertInto('users').values({ name: 'y', role: 'editor', created_at: '' }).execute()
    throw new Error('no')
  }), /no/)
  t.equal((await handle.db.selectFrom('users').select('name').where('name', '=', 'y').execute()).length, 0, 'rolled back')
  await withTransaction(handle.db, (trx) => trx.insertInto('users').values({ name: 'z', role: 'editor', created_at: '' }).execute())
  t.equal((await handle.db.selectFrom('users').select('name').where('name', '=', 'z').execute()).length, 1, 'the next one commits')
})

engineTest('postgres', t, 'PostgreSQL: writes whose answers are not read go with the next statement, reads sent ahead answer once nothing else ran, a failed one fails the unit', async (t) => {
  // Issue 49: a create's checks, writes and tail in a few round trips (postgres-dialect.ts `DEFERRED`, `READ_AHEAD`).
  const handle = await openTestDatabase(t)
  t.teardown(() => handle.close())
  await withTransaction(handle.db, (trx) => trx.insertInto('users').values({ name: 'warm', role: 'editor', created_at: '' }).execute())
  const sent: string[] = []
  type Query = (this: unknown, ...args: unknown[]) => unknown
  const proto = pg.Client.prototype as unknown as { query: Query }
  const original = proto.query
  const spy = function (this: unknown, ...args: unknown[]) {
    const first = args[0]
    sent.push(typeof first === 'string' ? first : (first as { text?: string }).text ?? '?')
    return original.apply(this, args)
  }
  t.teardown(() => {
    proto.query = original
  })
  const insert = (name: string) => CompiledQuery.raw('insert into users (name, role, created_at) values ($1, $2, $3)', [name, 'editor', ''])
  const count = (name: string) => CompiledQuery.raw('select count(*)::int as n from users where name = $1', [name])
  const counted = async (trx: Tx, name: string) => ((await trx.executeQuery<{ n: number }>(count(name))).rows[0]?.n)
  for (const concurrent of [true, false]) {
    sent.length = 0
    proto.query = spy
    const seen = await withTransaction(handle.db, async (trx) => {
      await deferredWrite(trx, insert(`a-${concurrent}`))
      await readAhead(trx, [count(`a-${concurrent}`), count(`b-${concurrent}`), count('it\'s "a" \\ {b}')])
      const a = await counted(trx, `a-${concurrent}`)
      const quoted = await counted(trx, 'it\'s "a" \\ {b}')
      await deferredWrite(trx, insert(`b-${concurrent}`))
      // Read ahead as 0, but a write ran since: read again, with the write.
      const b = await counted(trx, `b-${concurrent}`)
      return [a, quoted, b]
    }, { concurrent })
    proto.query = original
    t.same(seen, [1, 0, 1], 'the deferred write ran before the reads; the read ahead dropped once another statement ran')
    // Concurrent: the begin, the write and the reads; the second write and its read; the tail. Exclusive: its begin
    // with its first look; the same two; its last look and commit.
    t.equal(sent.length, concurrent ? 3 : 4, `round trips: ${JSON.stringify(sent)}`)
    const reads = sent[concurrent ? 0 : 1] ?? ''
    t.match(reads, /\/\* deferred \*\/ insert into users .*; select count\(\*\)::int as n from users where name = 'a-.*'; select .* where name = 'b-.*'; select .* where name = +E?'it''s "a" .*'$/, 'the write, then the reads, in one text')
    t.match(sent[concurrent ? 1 : 2], /^\/\* deferred \*\/ insert into users .*'b-.*; select count/, 'the second write with the read after it')
  }
  t.equal(Number((await handle.db.selectFrom('users').select((eb) => eb.fn.countAll().as('n')).where('name', 'like', 'b-%').executeTakeFirst())?.n), 2, 'committed')
  // A deferred write that fails fails its unit (at the statement it went with, or the tail), and nothing of it commits;
  // a concurrent unit that throws before sending anything (its begin never sent) leaves the connection as it was.
  const taken = await handle.db.selectFrom('users').select('id').where('name', '=', 'warm').executeTakeFirstOrThrow()
  for (const concurrent of [true, false]) {
    await t.rejects(withTransaction(handle.db, async (trx) => {
      await deferredWrite(trx, insert(`c-${concurrent}`))
      await deferredWrite(trx, CompiledQuery.raw('insert into users (id, name, role, created_at) values ($1, $2, $3, $4)', [taken.id, 'again', 'editor', '']))
    }, { concurrent }), { code: '23505' })
    await t.rejects(withTransaction(handle.db, async () => {
      throw new Error('nothing sent')
    }, { concurrent }), /nothing sent/)
  }
  t.equal((await handle.db.selectFrom('users').select('name').where('name', 'like', 'c-%').execute()).length, 0, 'rolled back')
  await withTransaction(handle.db, (trx) => trx.insertInto('users').values({ name: 'after', role: 'editor', created_at: '' }).execute(), { concurrent: true })
  t.equal((await handle.db.selectFrom('users').select('name').where('name', '=', 'after').execute()).length, 1, 'the next one commits')
})
