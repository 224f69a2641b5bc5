/**
 * SQLite's WAL copied back by a thread of its own (db/checkpointer.ts): with the writing connection's own
 * checkpoints off, what it writes is copied back all the same, while it goes on writing and reading;
 * the WAL is then started over by the next write instead of growing; a thread that cannot open its file
 * says so and stops. SQLite files of their own, whatever engine the leg tests.
 */
import t from 'tap'
import { join } from 'node:path'
import { statSync, writeFileSync } from 'node:fs'
import SQLite from 'better-sqlite3'
import { startCheckpointer, type CheckpointResult } from '../src/db/checkpointer.js'

function open(file: string): SQLite.Database {
  const db = new SQLite(file)
  db.pragma('journal_mode = WAL')
  db.pragma('synchronous = NORMAL')
  // The connection copies nothing back by itself: only the thread does.
  db.pragma('wal_autocheckpoint = 0')
  return db
}

t.test('the thread copies the WAL back while the connection writes; the next write starts the WAL over', async (t) => {
  const file = join(t.testdir(), 'calendar.db')
  const db = open(file)
  t.teardown(() => db.close())
  db.exec('create table rows (id integer primary key, text text not null)')
  const insert = db.prepare('insert into rows (text) values (?)')
  const write = db.transaction((n: number) => {
    for (let i = 0; i < n; i++) insert.run(`row ${i} ${'x'.repeat(200)}`)
  })
  write(2000)
  const walBefore = statSync(`${file}-wal`).size
  t.ok(walBefore > 100_000, `the WAL holds the writes (${walBefore} bytes)`)

  const results: CheckpointResult[] = []
  let copied: (result: CheckpointResult) => void = () => undefined
  const errors: Error[] = []
  const checkpointer = startCheckpointer(file, {
    intervalMs: 5,
    onCheckpoint: (result) => {
      results.push(result)
      copied(result)
    },
    onError: (error) => errors.push(error),
  })
  t.teardown(() => checkpointer.stop())
  const first = await new Promise<CheckpointResult>((resolve) => {
    copied = resolve
  })
  t.ok(first.checkpointed > 0 && first.checkpointed === first.log, `every frame copied back (${first.checkpointed} of ${first.log})`)
  t.equal(first.busy, 0)

  // The connection reads and writes meanwhile; its next write starts the WAL over (nothing left to copy).
  t.equal((db.prepare('select count(*) as n from rows').get() as { n: number }).n, 2000)
  write(10)
  const [after] = db.pragma('wal_checkpoint(PASSIVE)') as CheckpointResult[]
  t.ok(after !== undefined && after.log <= 10, `the WAL started over: ${after?.log} frames after the next write`)
  t.equal(statSync(`${file}-wal`).size, walBefore, 'and did not grow')

  // More writes, copied back again by the thread.
  const copiedBefore = results.length
  write(2000)
  const second = await new Promise<CheckpointResult>((resolve) => {
    copied = (result) => {
      if (result.checkpointed > 100) resolve(result)
    }
  })
  t.ok(results.length > copiedBefore, `copied again (${second.checkpointed} frames)`)
  await checkpointer.stop()
  await checkpointer.stop()
  t.same(errors, [])
  // What the thread copied is in the database file itself: a new connection reading it without the WAL finds it.
  db.pragma('wal_checkpoint(TRUNCATE)')
  const reader = new SQLite(file, { readonly: true })
  t.teardown(() => reader.close())
  t.equal((reader.prepare('select count(*) as n from rows').get() as { n: number }).n, 4010)
})

t.test('a thread that cannot open its file says so and stops', async (t) => {
  const failed = await new Promise<Error>((resolve) => {
    const checkpointer = startCheckpointer(join(t.testdir(), 'missing.db'), { intervalMs: 5, onError: resolve })
    t.teardown(() => checkpointer.stop())
  })
  t.match(failed.message, /unable to open|does not exist|SQLITE_CANTOPEN/i)
})

t.test('a checkpoint that fails is told, and stopping the thread still ends it', async (t) => {
  const file = join(t.testdir(), 'not-a-database.db')
  writeFileSync(file, 'this is not an SQLite database, '.repeat(200))
  let told: (error: Error) => void = () => undefined
  const checkpointer = startCheckpointer(file, { intervalMs: 5, onError: (error) => told(error) })
  const failed = await new Promise<Error>((resolve) => {
    told = resolve
  })
  t.match(failed.message, /^checkpoint: .*not a database/)
  // Stopping a thread that stopped checkpointing still ends it (this test would not end otherwise).
  await checkpointer.stop()
})
