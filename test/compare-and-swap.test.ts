/**
 * Updates and deletes racing each other (handlers/compare-and-swap.ts): a write without `If-Match` (or with
 * `*`) applies to the record as it is when a concurrent write of it came between its read and its write,
 * instead of answering 412; a write whose `If-Match` names a tag still fails when that tag is no longer the
 * record's (CONTRACT §5). On both engines, with one app and with two apps on one database.
 */
import t from 'tap'
import type { FastifyRequest } from 'fastify'
import { sql } from 'kysely'
import { join } from 'node:path'
import { buildApp } from '../src/app.js'
import { defaultConfig } from '../src/config.js'
import { withTransaction, type Db, type Tx } from '../src/db/unit-of-work.js'
import { lost, writeRead } from '../src/handlers/compare-and-swap.js'
import { ApiError } from '../src/http/errors.js'
import { createCompilers } from '../src/http/compilers.js'
import { API, BASE_URL, NOW } from './helpers/build.js'
import { SPEC } from './helpers/contract.js'
import { setup, type Setup } from './helpers/events.js'

const request = (ifMatch?: string): FastifyRequest => ({ headers: ifMatch === undefined ? {} : { 'if-match': ifMatch } }) as unknown as FastifyRequest

/** The event's version, read directly. */
async function versionOf(db: Db, id: number): Promise<number> {
  const row = await db.selectFrom('events').select('version').where('id', '=', id).executeTakeFirstOrThrow()
  return Number(row.version)
}

t.test('a write that lost the race reads again inside its unit of work, unless its If-Match names a tag', async (t) => {
  const s = await setup(t)
  const event = await s.event('Raced')
  /** One attempt: reads the version, lets `between` write first when given, then swaps it for the next. */
  const attempt = (readers: Db[], between?: () => Promise<void>) => async (reader: Db, write: <W>(work: (trx: Tx) => Promise<W>) => Promise<W>) => {
    readers.push(reader)
    const read = await versionOf(reader, event.id)
    if (readers.length === 1 && between !== undefined) await between()
    await write(async (trx) => {
      const { numUpdatedRows } = await trx.updateTable('events').set({ version: read + 1 })
        .where('id', '=', event.id).where('version', '=', read).executeTakeFirst()
      if (numUpdatedRows !== 1n) lost()
    })
    return read + 1
  }
  const concurrent = () => withTransaction(s.db, async (trx) => {
    await sql`update events set version = version + 1 where id = ${event.id}`.execute(trx)
  })

  const start = await versionOf(s.db, event.id)
  const alone: Db[] = []
  t.equal(await writeRead(s.db, request(), attempt(alone)), start + 1, 'nothing between: one attempt')
  t.equal(alone.length, 1)

  for (const ifMatch of [undefined, '*']) {
    const readers: Db[] = []
    const before = await versionOf(s.db, event.id)
    const result = await writeRead(s.db, request(ifMatch), attempt(readers, concurrent))
    t.equal(readers.length, 2, `If-Match ${String(ifMatch)}: a second attempt`)
    t.equal(readers[0], s.db, 'the first read before the unit of work')
    t.not(readers[1], s.db, 'the second inside it')
    t.equal(result, before + 2, 'applied to the version the other write left')
    t.equal(await versionOf(s.db, event.id), before + 2)
  }

  const readers: Db[] = []
  const before = await versionOf(s.db, event.id)
  const refused = await writeRead(s.db, request('"event-1-1-x"'), attempt(readers, concurrent)).then(() => undefined, (error: unknown) => error)
  t.ok(refused instanceof ApiError && refused.status === 412 && refused.code === 'rest-precondition-failed', 'a tag named: 412')
  t.equal(readers.length, 1, 'and no second attempt')
  t.equal(await versionOf(s.db, event.id), before + 1, 'only the other write happened')
})

/** `n` PATCHes of `path` sent together, alternately to each app; the statuses. */
async function together(apps: Array<Setup['app']>, n: number, path: string, body: (i: number) => object, headers: Record<string, string>): Promise<number[]> {
  const answers = await Promise.all(Array.from({ length: n }, (_, i) =>
    (apps[i % apps.length] as Setup['app']).inject({ method: 'PATCH', url: `${API}${path}`, headers, payload: body(i) })))
  return answers.map((res) => res.statusCode)
}

for (const nodes of [1, 2]) {
  t.test(`${nodes} app(s) on one database: concurrent unconditional writes of one record all apply; conditional ones on one tag, one does`, async (t) => {
    const s = await setup(t, { file: join(t.testdir(), 'calendar.db') })
    const apps = [s.app]
    if (nodes === 2) {
      const other = await buildApp({ db: s.db, config: defaultConfig({ publicUrl: BASE_URL }), now: () => NOW, spec: SPEC, compilers: createCompilers() })
      t.teardown(() => other.close())
      apps.push(other)
    }
    const event = await s.event('Busy')
    const venue = await s.venue({ venue: 'Busy hall' })
    const category = await s.category('Busy')
    const n = 12
    const statuses = {
      event: await together(apps, n, `/events/${event.id}`, (i) => ({ title: `Busy ${i}` }), s.editor),
      venue: await together(apps, n, `/venues/${venue.id}`, (i) => ({ phone: `+41 ${i}` }), s.editor),
      category: await together(apps, n, `/categories/${category.id}`, (i) => ({ description: `busy ${i}` }), s.editor),
    }
    t.strictSame(statuses, { event: Array(n).fill(200), venue: Array(n).fill(200), category: Array(n).fill(200) }, 'every write applied')
    const changes = await s.db.selectFrom('changes').select((eb) => eb.fn.countAll<number>().as('n'))
      .where('resource', '=', 'events').where('record_id', '=', event.id).executeTakeFirstOrThrow()
    t.equal(Number(changes.n), 1 + n, 'the create and each of the writes in the change log')

    // Each sends the tag it read first: the first to write wins, the others find another version.
    const read = await s.get(event.id, '', s.editor)
    const tag = read.headers.etag as string
    const conditional = await together(apps, n, `/events/${event.id}`, (i) => ({ title: `Tagged ${i}` }), { ...s.editor, 'if-match': tag })
    t.equal(conditional.filter((status) => status === 200).length, 1, 'one conditional write applied')
    t.equal(conditional.filter((status) => status === 412).length, n - 1, 'the others 412')

    // Trashing together: one trashes it, the others find it in the trash (410), none 412.
    const removed = await Promise.all(Array.from({ length: 6 }, (_, i) =>
      (apps[i % apps.length] as Setup['app']).inject({ method: 'DELETE', url: `${API}/events/${event.id}`, headers: s.editor })))
    const codes = removed.map((res) => res.statusCode).sort()
    t.strictSame(codes, [200, 410, 410, 410, 410, 410])
  })
}
