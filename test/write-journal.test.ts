/**
 * The unit of work's journal (src/db/unit-of-work.ts `writtenBetween`), on the engine under test: between two
 * versions, what this process's units of work changed, in order, when they alone moved the data; undefined
 * when anything else did (raw SQL, another handle on the database), past the limit asked, or once the journal
 * no longer reaches back (it keeps the last 4,096 units of work, 50,000 changes in all, and of one unit of work
 * at most 1,000).
 */
import t from 'tap'
import { sql, type Kysely } from 'kysely'
import { join } from 'node:path'
import { dataVersion, type DataVersion } from '../src/db/dialect.js'
import { recordChange, withTransaction, writtenBetween } from '../src/db/unit-of-work.js'
import { setup } from './helpers/events.js'
import { writeFromAnotherHandle } from './helpers/database.js'
import type { Database } from '../src/db/schema.js'

let costs = 0
/** A unit of work that sets the cost of event `id` (a new one each time) and reports `reports` changes of it. */
function costWrite(db: Kysely<Database>, id: number, reports: number): Promise<void> {
  return withTransaction(db, async (trx) => {
    await trx.updateTable('events').set({ cost: String(++costs) }).where('id', '=', id).execute()
    for (let i = 0; i < reports; i++) recordChange(trx, { resource: 'event', id, action: 'update' })
  })
}

t.test('the changes of this process\'s units of work between two versions, and nothing when another writer came between', async (t) => {
  const s = await setup(t, { file: join(t.testdir(), 'calendar.db') })
  const a = await s.event('A', { status: 'publish' })
  const b = await s.event('B', { status: 'publish' })
  const now = async (): Promise<DataVersion> => (await dataVersion(s.db)) as DataVersion
  const write = (id: number, reports = 1) => costWrite(s.db, id, reports)

  const start = await now()
  t.strictSame(writtenBetween(s.db, start, start, 10), [], 'no write: nothing')
  t.equal((await s.patch(a.id, { title: 'A1' })).statusCode, 200)
  await write(b.id)
  const after = await now()
  t.strictSame(writtenBetween(s.db, start, after, 10)?.map((c) => [c.resource, c.id]), [['event', a.id], ['event', b.id]], 'a PATCH and a unit of work, in order')
  t.equal(writtenBetween(s.db, start, after, 1), undefined, 'past the limit asked: undefined')
  t.equal(writtenBetween(s.db, after, start, 10), undefined, 'backwards: undefined')

  const beforeRaw = await now()
  await write(a.id)
  await sql`update events set excerpt = 'raw' where id = ${b.id}`.execute(s.db)
  await write(a.id)
  t.equal(writtenBetween(s.db, beforeRaw, await now(), 10), undefined, 'a raw write between two units of work: undefined')

  const beforeOther = await now()
  await writeFromAnotherHandle(s.url, b.id)
  t.equal(writtenBetween(s.db, beforeOther, await now(), 10), undefined, 'a unit of work of another handle (another process): undefined')

  const beforeMany = await now()
  await write(a.id, 1001)
  t.equal(writtenBetween(s.db, beforeMany, await now(), 1_000_000), undefined, 'one unit of work with more than 1,000 changes is not kept')
  const beforeAtBound = await now()
  await write(a.id, 1000)
  t.equal(writtenBetween(s.db, beforeAtBound, await now(), 1_000_000)?.length, 1000, 'with 1,000 it is')
})

t.test('the journal keeps the last 4,096 units of work and 50,000 changes', async (t) => {
  const s = await setup(t)
  const a = await s.event('A', { status: 'publish' })
  const now = async (): Promise<DataVersion> => (await dataVersion(s.db)) as DataVersion
  const write = (reports: number) => costWrite(s.db, a.id, reports)
  const first = await now()
  await write(1)
  const second = await now()
  for (let i = 0; i < 4095; i++) await write(1)
  const end = await now()
  t.equal(writtenBetween(s.db, first, end, 1_000_000)?.length, 4096, '4,096 units of work: all kept')
  await write(1)
  t.equal(writtenBetween(s.db, first, await now(), 1_000_000), undefined, 'one more: the oldest is gone')
  t.equal(writtenBetween(s.db, second, await now(), 1_000_000)?.length, 4096)

  // Units of work of 1,000 changes each: 50 of them fill the journal's 50,000; the 51st pushes out the oldest
  // ones (the small ones first, then the first large one).
  const large = await now()
  for (let i = 0; i < 50; i++) await write(1000)
  const afterLarge = await now()
  t.equal(writtenBetween(s.db, large, afterLarge, 1_000_000)?.length, 50_000, '50 units of 1,000 changes: all kept')
  await write(1000)
  t.equal(writtenBetween(s.db, large, await now(), 1_000_000), undefined, 'past 50,000 changes: the oldest are gone')
})

t.test('units of work started together: each finds the version the one before it left, so the journal chains them all', async (t) => {
  // On PostgreSQL they queue for the schema's write lock, each reading its first look at the data version in the
  // round trip that takes the lock and its last in the one that commits (db/postgres-dialect.ts): a look read
  // before the lock was granted (a snapshot older than the writes before it) would break the chain.
  const s = await setup(t)
  const events = [await s.event('A', { status: 'publish' }), await s.event('B', { status: 'publish' })]
  const now = async (): Promise<DataVersion> => (await dataVersion(s.db)) as DataVersion
  const start = await now()
  await Promise.all(Array.from({ length: 8 }, (_, i) => costWrite(s.db, (events[i % 2] as { id: number }).id, 1)))
  const end = await now()
  t.equal(end.head - start.head, 8, 'eight entries appended to the change log')
  const changes = writtenBetween(s.db, start, end, 100)
  t.equal(changes?.length, 8, 'the journal chains the eight units of work, from the version before them to the one after')
  t.strictSame(changes?.map((c) => c.id).sort(), [...Array(4).fill(events[0]?.id), ...Array(4).fill(events[1]?.id)].sort())
  t.equal(writtenBetween(s.db, start, await now(), 100)?.length, 8)
})
