/**
 * The read of one occurrence with its series' stored document (repositories/event-documents.ts `readOccurrence`, and
 * on PostgreSQL `readOccurrenceWithVersion` through migration 0022's function `occurrence_document`) gives what the
 * statement it replaced gave, kept here as the oracle: the document of the event for the public URL's context, the
 * occurrence's dates as its row holds them and whether an override changes it; nothing for an occurrence the series
 * has not, an event without a document or a document of another context. On PostgreSQL the version read with it is
 * where the data stands, and an anonymous read of an occurrence over HTTP is that one statement.
 */
import t, { type Test } from 'tap'
import { sql } from 'kysely'
import { buildApp } from '../src/app.js'
import { defaultConfig } from '../src/config.js'
import { openDatabase, type LoggedStatement } from '../src/db/database.js'
import { dataVersion } from '../src/db/dialect.js'
import { createCompilers } from '../src/http/compilers.js'
import { occurrenceKey, type OccurrenceDocument } from '../src/repositories/event-documents.js'
import { API_URL, BASE_URL, NOW } from './helpers/build.js'
import { SPEC } from './helpers/contract.js'
import { engineTest, TEST_ENGINE } from './helpers/database.js'
import { EVENTS, setup } from './helpers/events.js'

/**
 * Both tests' data: a weekly series with a category, an all-day daily series, a single event and a draft series, two
 * of the weekly occurrences changed alone (one moved: its row's dates move too; one retitled: overridden), every
 * document stored.
 */
async function seriesWithOverrides(t: Test) {
  const s = await setup(t)
  const categories = [(await s.category('Jazz')).id]
  const series = await s.event('Weekly', { recurrence: { rule: 'FREQ=WEEKLY;COUNT=6' }, categories })
  const daily = await s.event('Daily', { all_day: true, start_date: '2026-07-01', end_date: '2026-07-01', recurrence: { rule: 'FREQ=DAILY;COUNT=3' } })
  const single = await s.event('Single')
  const draft = await s.event('Draft', { status: 'draft', recurrence: { rule: 'FREQ=DAILY;COUNT=2' } })
  const occurrencesOf = async (id: number): Promise<string[]> =>
    (await s.db.selectFrom('event_occurrences').select('occurrence').where('event_id', '=', id).orderBy('start_utc').execute()).map((r) => r.occurrence)
  const weekly = await occurrencesOf(series.id)
  for (const [occurrence, body] of [[weekly[1], { start_date: '2026-07-09 20:00:00', end_date: '2026-07-09 22:00:00' }], [weekly[4], { title: 'Special' }]] as const) {
    const res = await s.inject({ method: 'PATCH', url: `${EVENTS}/${series.id}/occurrences/${occurrence}`, headers: s.editor, payload: body })
    t.equal(res.statusCode, 200, `override of ${occurrence}`)
  }
  await s.app.fillEventDocuments()
  await s.app.eventDocuments.settled()
  return { s, series, daily, single, draft, occurrencesOf, weekly, documents: s.app.eventDocuments }
}

t.test('an occurrence and its series\' document read together are what the statement it replaced read', async (t) => {
  const { s, series, daily, single, draft, occurrencesOf, weekly, documents } = await seriesWithOverrides(t)

  // The oracle: the document for the context the app stored (the only one there), the occurrence's row and override.
  const expected = async (id: number, occurrence: string): Promise<OccurrenceDocument | undefined> => {
    const { rows } = await sql<{ event_id: number | string; grp: number | string; version: number | string; digest: string; body: Buffer; category_ids: string;
      tag_ids: string; category_at: number | string; tag_at: number | string; ld_from: number | string; ld_to: number | string; o_dates: string | null; o_override: number | null }>`
      select d.event_id, d.grp, d.version, d.digest, d.body, d.category_ids, d.tag_ids, d.category_at, d.tag_at, d.ld_from, d.ld_to,
        (select o.start_utc || '|' || o.end_utc from event_occurrences as o where o.event_id = d.event_id and o.occurrence = ${occurrence}) as o_dates,
        (select v.version from event_overrides as v where v.event_id = d.event_id and v.occurrence = ${occurrence}) as o_override
      from event_documents as d where d.event_id = ${id}`.execute(s.db)
    const row = rows[0]
    if (row === undefined) return undefined
    const ids = (text: string) => (text === '' ? [] : text.split(',').map(Number))
    const [startUtc, endUtc] = row.o_dates?.split('|') ?? []
    return {
      document: {
        id: Number(row.event_id), group: Number(row.grp), version: Number(row.version), digest: row.digest, body: row.body,
        categoryIds: ids(row.category_ids), tagIds: ids(row.tag_ids), categoryAt: Number(row.category_at), tagAt: Number(row.tag_at),
        ldFrom: Number(row.ld_from), ldTo: Number(row.ld_to),
      },
      occurrence: startUtc === undefined || endUtc === undefined ? undefined : { startUtc, endUtc, overridden: row.o_override !== null },
    }
  }

  const cases: Array<[string, number, string]> = [
    ...weekly.map((o): [string, number, string] => [`weekly ${o}`, series.id, o]),
    ...(await occurrencesOf(daily.id)).map((o): [string, number, string] => [`all-day ${o}`, daily.id, o]),
    ['the single event\'s own', single.id, (await occurrencesOf(single.id))[0] as string],
    ['an occurrence the series has not', series.id, '20200101T000000Z'],
    ['an all-day id of a timed series', series.id, '20260701'],
    ['a draft (no document)', draft.id, (await occurrencesOf(draft.id))[0] as string],
    ['an event that is not there', 999_999, weekly[0] as string],
  ]
  let overridden = 0
  let withoutDocument = 0
  for (const [name, id, occurrence] of cases) {
    const want = await expected(id, occurrence)
    if (want === undefined) withoutDocument += 1
    if (want?.occurrence?.overridden === true) overridden += 1
    t.strictSame(await documents.readOccurrence(id, API_URL, occurrence), want, `${name}: readOccurrence`)
    if (documents.readOccurrenceWithVersion === undefined) continue
    const both = await documents.readOccurrenceWithVersion(id, API_URL, occurrence)
    t.strictSame(both.read, want, `${name}: readOccurrenceWithVersion`)
    t.strictSame(both.version, await dataVersion(s.db), `${name}: where the data stands`)
  }
  t.equal(overridden, 2, 'both overrides read as such')
  t.equal(withoutDocument, 2, 'the draft and the missing event have no document')
  t.equal(await documents.readOccurrence(series.id, 'http://other.test/calendar/events/v1', weekly[0] as string), undefined, 'no document of another context')
  t.equal((await documents.readOccurrenceWithVersion?.(series.id, 'http://other.test/calendar/events/v1', weekly[0] as string))?.read, undefined,
    'no document of another context, with the version')
  t.equal(TEST_ENGINE === 'postgres', documents.readOccurrenceWithVersion !== undefined, 'the version read with it on PostgreSQL only')

  // A write moves the version the read gives with the document (and the document goes with the series' write).
  t.equal((await s.patch(series.id, { title: 'Weekly renamed' })).statusCode, 200, 'the series renamed')
  if (documents.readOccurrenceWithVersion !== undefined) {
    const after = await documents.readOccurrenceWithVersion(series.id, API_URL, weekly[0] as string)
    t.strictSame(after.version, await dataVersion(s.db), 'the version after a write')
    t.equal(after.read, undefined, 'the renamed series\' document dropped')
  }
})

t.test('a series\' document\'s body kept (SQLite) for reads of its occurrences serves only the document it was read with', async (t) => {
  const s = await setup(t)
  const series = await s.event('Weekly', { recurrence: { rule: 'FREQ=WEEKLY;COUNT=6' } })
  const other = await s.event('Daily', { recurrence: { rule: 'FREQ=DAILY;COUNT=3' } })
  const occurrencesOf = async (id: number): Promise<string[]> =>
    (await s.db.selectFrom('event_occurrences').select('occurrence').where('event_id', '=', id).orderBy('start_utc').execute()).map((r) => r.occurrence)
  const weekly = await occurrencesOf(series.id)
  const daily = await occurrencesOf(other.id)
  await s.app.fillEventDocuments()
  await s.app.eventDocuments.settled()
  const documents = s.app.eventDocuments
  const sqlite = TEST_ENGINE === 'sqlite'
  const kept = () => documents.stats().keptBodies
  // The oracle: the row as it is now, body and all.
  const row = async (id: number) => s.db.selectFrom('event_documents').select(['version', 'digest', 'body']).where('event_id', '=', id).executeTakeFirstOrThrow()
  const check = async (what: string, occurrence: string, keptRead: boolean) => {
    const before = kept()
    const read = await documents.readOccurrence(series.id, API_URL, occurrence)
    const now = await row(series.id)
    t.ok(read !== undefined && read.document.body.equals(now.body) && read.document.version === Number(now.version) && read.document.digest === now.digest,
      `${what}: the document as its row holds it now`)
    t.equal(read?.occurrence?.overridden, false, `${what}: the occurrence`)
    t.equal(kept(), before + (sqlite && keptRead ? 1 : 0), `${what}: ${sqlite && keptRead ? 'its kept body' : 'its body read'}`)
  }
  await check('the first read', weekly[0] as string, false)
  await check('the next read', weekly[1] as string, true)
  await check('another series\' between', weekly[2] as string, true)
  t.ok(await documents.readOccurrence(other.id, API_URL, daily[0] as string), 'another series read')
  await check('after another series\' read', weekly[3] as string, true)
  // The document's row rewritten in place (as another node's store would), each time one of what names the bytes kept the same.
  const rewrite = async (fields: { version?: number; digest?: string; body?: Buffer }) =>
    s.db.updateTable('event_documents').set(fields).where('event_id', '=', series.id).execute()
  const first = await row(series.id)
  const flipped = Buffer.from(first.body)
  flipped[flipped.indexOf('Weekly')] = 0x77
  await rewrite({ digest: `${first.digest.slice(0, -1)}x`, body: flipped })
  await check('other bytes of the same length under the same version, another digest', weekly[0] as string, false)
  await check('read again', weekly[1] as string, true)
  await rewrite({ version: Number(first.version) + 1, body: first.body })
  await check('the first bytes again under another version, the same digest', weekly[2] as string, false)
  await rewrite({ body: Buffer.concat([first.body.subarray(0, first.body.length - 1), Buffer.from(' }')]) })
  await check('longer bytes under the same version and digest', weekly[3] as string, false)
  // A write of the series drops its document: nothing read, kept bytes or not; stored again, the new one.
  t.equal((await s.patch(series.id, { title: 'Weekly renamed' })).statusCode, 200, 'the series renamed')
  t.equal(await documents.readOccurrence(series.id, API_URL, weekly[4] as string), undefined, 'no document after the write')
  await s.app.fillEventDocuments()
  await s.app.eventDocuments.settled()
  await check('stored again', weekly[4] as string, false)
  t.match((await documents.readOccurrence(series.id, API_URL, weekly[5] as string))?.document.body.toString(), /Weekly renamed/, 'the new title')
  t.equal(await documents.readOccurrence(series.id, 'http://other.test/calendar/events/v1', weekly[0] as string), undefined, 'no document of another context')
})

engineTest('postgres', t, 'PostgreSQL: an anonymous read of an occurrence is one statement, the function\'s; migration 0022 down and up again', async (t) => {
  const s = await setup(t)
  const series = await s.event('Weekly', { recurrence: { rule: 'FREQ=WEEKLY;COUNT=4' } })
  const [occurrence] = (await s.db.selectFrom('event_occurrences').select('occurrence').where('event_id', '=', series.id).orderBy('start_utc').execute()).map((r) => r.occurrence)
  await s.app.fillEventDocuments()
  await s.app.eventDocuments.settled()
  const statements: LoggedStatement[] = []
  const logged = await openDatabase(s.url, { log: (statement) => statements.push(statement) })
  t.teardown(() => logged.close())
  const app = await buildApp({ db: logged.db, config: defaultConfig({ publicUrl: BASE_URL }), now: () => NOW, spec: SPEC, compilers: createCompilers() })
  t.teardown(() => app.close())
  const path = `${EVENTS}/${series.id}/occurrences/${occurrence}`
  const reference = await s.inject({ url: path })
  t.equal(reference.statusCode, 200)
  for (let i = 0; i < 3; i++) {
    statements.length = 0
    const res = await app.inject({ url: path })
    t.equal(res.statusCode, 200, `read ${i + 1}`)
    t.equal(res.body, reference.body, 'the same body')
    t.equal(res.headers.etag, reference.headers.etag, 'the same ETag')
    t.strictSame(statements.map((st) => /from occurrence_document\(\$1, \$2, \$3\)$/.test(st.sql)), [true], `read ${i + 1}: one statement, the function's`)
  }
  const exists = async () => (await sql<{ f: string | null }>`select to_regprocedure('occurrence_document(text, bigint, text)')::text as f`.execute(s.db)).rows[0]?.f !== null
  t.ok(await exists(), 'the function is there')
  const migration = await import('../src/db/migrations/0022-occurrence-document-read.js')
  await migration.down(s.db)
  t.notOk(await exists(), 'down drops it')
  await migration.up(s.db)
  await migration.up(s.db)
  t.ok(await exists(), 'up makes it again (twice: replaced)')
})

engineTest('postgres', t, 'PostgreSQL: several occurrences read with the data version (occurrence_documents_read) are what readOccurrenceWithVersion reads of each; migration 0027 down and up', async (t) => {
  const { s, series, daily, single, draft, occurrencesOf, weekly, documents } = await seriesWithOverrides(t)
  const days = await occurrencesOf(daily.id)
  const [drafted] = await occurrencesOf(draft.id)
  const many = documents.readOccurrencesWithVersion
  const one = documents.readOccurrenceWithVersion
  if (many === undefined || one === undefined) return t.fail('both on PostgreSQL')
  const check = async (name: string, asked: Array<[number, string]>, apiUrl = API_URL) => {
    const got = await many(asked, apiUrl)
    t.strictSame(got.version, await dataVersion(s.db), `${name}: where the data stands`)
    let found = 0
    for (const [id, occurrence] of asked) {
      const expected = (await one(id, apiUrl, occurrence)).read
      if (expected !== undefined) found++
      t.strictSame(got.reads?.get(occurrenceKey(id, occurrence)), expected, `${name}: ${id}/${occurrence} as readOccurrenceWithVersion reads it`)
    }
    t.equal(got.reads?.size, found, `${name}: nothing else read`)
    return got
  }
  const all = await check('of two series, overridden, moved, unknown, no document', [
    ...weekly.map((o): [number, string] => [series.id, o]), ...days.map((o): [number, string] => [daily.id, o]),
    [series.id, '20990101T000000Z'], [single.id, weekly[0] as string], [draft.id, drafted as string], [999_999, days[0] as string],
  ])
  t.equal(all.reads?.get(occurrenceKey(series.id, weekly[4] as string))?.occurrence?.overridden, true, 'the retitled one overridden')
  t.equal(all.reads?.get(occurrenceKey(series.id, weekly[2] as string))?.occurrence?.overridden, false, 'another not')
  t.equal(all.reads?.get(occurrenceKey(series.id, '20990101T000000Z'))?.occurrence, undefined, 'an occurrence the series has not: its document, no row')
  t.equal(all.reads?.has(occurrenceKey(draft.id, drafted as string)), false, 'a draft: no document')
  await check('one', [[daily.id, days[1] as string]])
  const none = await check('none found', [[draft.id, drafted as string], [999_999, days[0] as string]])
  t.equal(none.reads?.size, 0, 'none found: the version alone')
  await check('another context', [[series.id, weekly[0] as string]], 'http://other.test/calendar/events/v1')
  t.equal((await s.patch(series.id, { title: 'Weekly renamed' })).statusCode, 200, 'renamed')
  const after = await check('after a write', [[series.id, weekly[0] as string], [daily.id, days[0] as string]])
  t.equal(after.reads?.has(occurrenceKey(series.id, weekly[0] as string)), false, 'the renamed series\' document dropped')
  t.equal(after.reads?.has(occurrenceKey(daily.id, days[0] as string)), true, 'the other\'s kept')
  const exists = async () => (await sql<{ f: string | null }>`select to_regprocedure('occurrence_documents_read(bigint[], text[], text)')::text as f`.execute(s.db)).rows[0]?.f !== null
  t.equal(await exists(), true, 'the function is there')
  const migration = await import('../src/db/migrations/0027-occurrence-documents-read.js')
  await migration.down(s.db)
  t.equal(await exists(), false, 'down drops it')
  await migration.up(s.db)
  await migration.up(s.db)
  t.equal(await exists(), true, 'up makes it again (twice: replaced)')
})
