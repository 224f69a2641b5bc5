/**
 * The read of one event by id with where the data stands (repositories/event-documents.ts `readWithVersion`, on
 * PostgreSQL through migration 0023's function `event_document`) gives what the statement it replaced gave, kept here
 * as the oracle: the same row (the change log's head and the data epoch, the document's columns for the context, or
 * nulls), for documents of several kinds and for events that have none (a draft, a protected event, a trashed one, an
 * id that is not there), before and after a write. `read` (both engines) stays what its own statement reads. On
 * PostgreSQL an anonymous read by id over HTTP is that one statement.
 */
import t from 'tap'
import { CompiledQuery, sql } from 'kysely'
import { buildApp } from '../src/app.js'
import { defaultConfig } from '../src/config.js'
import { openDatabase, type LoggedStatement } from '../src/db/database.js'
import { VERSION_QUERY, dataVersion } from '../src/db/dialect.js'
import { createCompilers } from '../src/http/compilers.js'
import { API_URL, BASE_URL, NOW } from './helpers/build.js'
import { SPEC } from './helpers/contract.js'
import { engineTest, TEST_ENGINE } from './helpers/database.js'
import { EVENTS, setup } from './helpers/events.js'

const COLUMNS = 'event_id, grp, version, digest, category_ids, tag_ids, category_at, tag_at, ld_from, ld_to, body'

t.test('an event\'s document read with the data version is what the statement it replaced read', async (t) => {
  const s = await setup(t)
  const postgres = TEST_ENGINE === 'postgres'
  const categories = [(await s.category('Jazz')).id]
  const tags = [(await s.tag('Outdoor')).id]
  const timed = await s.event('Timed', { categories, tags })
  const allDay = await s.event('All day', { all_day: true, start_date: '2026-07-01', end_date: '2026-07-02' })
  const series = await s.event('Weekly', { recurrence: { rule: 'FREQ=WEEKLY;COUNT=4' }, categories })
  const de = await s.create({ title: 'Timed auf Deutsch', start_date: '2026-07-01 18:00:00', end_date: '2026-07-01 21:00:00', status: 'publish',
    translation_of: timed.id, ml_language: 'de' })
  const draft = await s.event('Draft', { status: 'draft' })
  const locked = await s.event('Protected')
  t.equal((await s.patch(locked.id, { password: 'open sesame' })).statusCode, 200, 'password set')
  const trashed = await s.event('Trashed')
  t.equal((await s.remove(trashed.id)).statusCode, 200, 'trashed')
  await s.app.fillEventDocuments()
  await s.app.eventDocuments.settled()
  const documents = s.app.eventDocuments
  const contexts = (await sql<{ context: string }>`select distinct context from event_documents`.execute(s.db)).rows.map((r) => r.context)
  t.equal(contexts.length, 1, 'one context stored')
  const context = contexts[0] as string

  // The oracle: the statement readWithVersion sent before 0023 (PostgreSQL), and read's own (both engines).
  const p = (n: number) => (postgres ? `$${n}` : '?')
  const oldText = `select v.h, v.e, d.${COLUMNS.split(', ').join(', d.')} from (${VERSION_QUERY}) as v `
    + `left join event_documents as d on d.event_id = ${p(1)} and d.context = ${p(2)}`
  const rowOf = async (text: string, id: number, ctx = context) => (await s.db.executeQuery<Record<string, unknown>>(CompiledQuery.raw(text, [id, ctx]))).rows

  const ids = (text: string) => (text === '' ? [] : text.split(',').map(Number))
  const check = async (name: string, id: number) => {
    const old = await rowOf(oldText, id)
    t.equal(old.length, 1, `${name}: the old statement's one row`)
    const row = old[0] as Record<string, unknown>
    const want = row.event_id === null ? undefined : {
      found: true,
      document: {
        id: Number(row.event_id), group: Number(row.grp), version: Number(row.version), digest: row.digest as string, body: row.body as Buffer,
        categoryIds: ids(row.category_ids as string), tagIds: ids(row.tag_ids as string), categoryAt: Number(row.category_at), tagAt: Number(row.tag_at),
        ldFrom: Number(row.ld_from), ldTo: Number(row.ld_to),
      },
    }
    const version = { head: Number(row.h), epoch: Number(row.e) }
    t.strictSame(version, await dataVersion(s.db), `${name}: the old statement's version is where the data stands`)
    const read = await documents.read(id, API_URL)
    t.strictSame(read, want ?? { found: false, version }, `${name}: read`)
    if (!postgres) return want
    t.strictSame(await rowOf(`select h, e, ${COLUMNS} from event_document($1, $2)`, id), old, `${name}: the function's row`)
    const both = await documents.readWithVersion?.(id, API_URL)
    t.strictSame(both, { version, read: want ?? { found: false, version } }, `${name}: readWithVersion`)
    return want
  }

  let found = 0
  for (const [name, id] of [['timed', timed.id], ['all-day', allDay.id], ['series', series.id], ['translation', de.id]] as const) {
    if ((await check(name, id)) !== undefined) found += 1
  }
  t.equal(found, 4, 'the four published events have documents')
  for (const [name, id] of [['draft', draft.id], ['protected', locked.id], ['trashed', trashed.id], ['missing id', 999_999]] as const) {
    t.equal(await check(name, id), undefined, `${name}: no document`)
  }
  t.equal(postgres, documents.readWithVersion !== undefined, 'the version read with it on PostgreSQL only')
  const other = 'http://other.test/calendar/events/v1'
  if (postgres) {
    const both = await documents.readWithVersion?.(timed.id, other)
    t.equal(both?.read?.found, false, 'no document of another context')
    t.strictSame(await rowOf(`select h, e, ${COLUMNS} from event_document($1, $2)`, timed.id, 'another'), await rowOf(oldText, timed.id, 'another'),
      'another context: the function\'s row is the old statement\'s')
  }

  // A write moves the version (and drops the written event's document); the others' stay as they were.
  t.equal((await s.patch(timed.id, { title: 'Timed renamed' })).statusCode, 200, 'renamed')
  t.equal(await check('timed after its write', timed.id), undefined, 'the renamed event\'s document dropped')
  t.ok(await check('all-day after a write', allDay.id), 'another event\'s document kept')
})

engineTest('postgres', t, 'PostgreSQL: an anonymous read by id is one statement, a function\'s; migration 0023 down and up again', async (t) => {
  const s = await setup(t)
  const event = await s.event('Read')
  const other = await s.event('Other')
  await s.app.fillEventDocuments()
  await s.app.eventDocuments.settled()
  const statements: LoggedStatement[] = []
  const logged = await openDatabase(s.url, { log: (statement) => statements.push(statement) })
  t.teardown(() => logged.close())
  const app = await buildApp({ db: logged.db, config: defaultConfig({ publicUrl: BASE_URL }), now: () => NOW, spec: SPEC, compilers: createCompilers() })
  t.teardown(() => app.close())
  // The first read of each event is the document's function; read again, the answer is the read cache's and the one
  // statement is the look at the data version, the other function.
  const expected = [['first', 'event_document'], ['again', 'data_version'], ['a third time', 'data_version']] as const
  for (const target of [event, other]) {
    const path = `${EVENTS}/${target.id}`
    const reference = await s.inject({ url: path })
    t.equal(reference.statusCode, 200)
    for (const [when, called] of expected) {
      statements.length = 0
      const res = await app.inject({ url: path })
      t.equal(res.statusCode, 200, `${target.title} read ${when}`)
      t.equal(res.body, reference.body, 'the same body')
      t.equal(res.headers.etag, reference.headers.etag, 'the same ETag')
      const call = called === 'event_document' ? /^select h, e, event_id, .* from event_document\(\$1, \$2\)$/ : /^select h, e from data_version\(\)$/
      t.strictSame(statements.map((st) => call.test(st.sql)), [true], `${target.title} read ${when}: one statement, ${called}'s`)
    }
  }
  const exists = async (f: string) => (await sql<{ f: string | null }>`select to_regprocedure(${f})::text as f`.execute(s.db)).rows[0]?.f !== null
  const both = async () => [await exists('event_document(bigint, text)'), await exists('data_version()')]
  t.strictSame(await both(), [true, true], 'the functions are there')
  const migration = await import('../src/db/migrations/0023-event-document-read.js')
  await migration.down(s.db)
  t.strictSame(await both(), [false, false], 'down drops them')
  await migration.up(s.db)
  await migration.up(s.db)
  t.strictSame(await both(), [true, true], 'up makes them again (twice: replaced)')
})

engineTest('postgres', t, 'PostgreSQL: several events\' documents read with the data version (event_documents_read) are what readWithVersion reads of each; migration 0025 down and up', async (t) => {
  const s = await setup(t)
  const categories = [(await s.category('Jazz')).id]
  const timed = await s.event('Timed', { categories })
  const allDay = await s.event('All day', { all_day: true, start_date: '2026-07-01', end_date: '2026-07-02' })
  const series = await s.event('Weekly', { recurrence: { rule: 'FREQ=WEEKLY;COUNT=4' }, categories })
  const draft = await s.event('Draft', { status: 'draft' })
  await s.app.fillEventDocuments()
  await s.app.eventDocuments.settled()
  const documents = s.app.eventDocuments
  const many = documents.readManyWithVersion
  const one = documents.readWithVersion
  if (many === undefined || one === undefined) return t.fail('both on PostgreSQL')
  const check = async (name: string, ids: number[], apiUrl = API_URL) => {
    const got = await many(ids, apiUrl)
    const version = await dataVersion(s.db)
    t.strictSame(got.version, version, `${name}: where the data stands`)
    t.strictSame([...(got.reads?.keys() ?? [])].sort((a, b) => a - b), [...ids].sort((a, b) => a - b), `${name}: a read for each id`)
    for (const id of ids) t.strictSame(got.reads?.get(id), (await one(id, apiUrl)).read, `${name}: event ${id} as readWithVersion reads it`)
    return got
  }
  await check('documents and none', [timed.id, draft.id, allDay.id, series.id, 999_999])
  await check('one', [allDay.id])
  const none = await check('none found', [draft.id, 999_999])
  t.ok([...(none.reads?.values() ?? [])].every((r) => r.found === false), 'none found: the version beside each')
  const other = await check('another context', [timed.id, allDay.id], 'http://other.test/calendar/events/v1')
  t.ok([...(other.reads?.values() ?? [])].every((r) => r.found === false), 'no document of another context')
  t.equal((await s.patch(timed.id, { title: 'Timed renamed' })).statusCode, 200, 'renamed')
  const after = await check('after a write', [timed.id, allDay.id])
  t.equal(after.reads?.get(timed.id)?.found, false, 'the renamed event\'s document dropped')
  t.equal(after.reads?.get(allDay.id)?.found, true, 'the other\'s kept')
  const exists = async () => (await sql<{ f: string | null }>`select to_regprocedure('event_documents_read(bigint[], text)')::text as f`.execute(s.db)).rows[0]?.f !== null
  t.equal(await exists(), true, 'the function is there')
  const migration = await import('../src/db/migrations/0025-event-documents-read.js')
  await migration.down(s.db)
  t.equal(await exists(), false, 'down drops it')
  await migration.up(s.db)
  await migration.up(s.db)
  t.equal(await exists(), true, 'up makes it again (twice: replaced)')
})
