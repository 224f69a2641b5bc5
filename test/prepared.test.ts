/**
 * Prepared statements (src/db/prepared.ts): a statement built once per engine answers every call as the
 * query builder would with that call's values (checked against the builder itself, on the test engine);
 * a build that computes with its values, or leaves one out, is refused at once; a family by shape keeps
 * one statement per key, and no more than it may.
 */
import t from 'tap'
import { sql } from 'kysely'
import { idListValue, inIdValue } from '../src/db/dialect.js'
import { byShape, prepared } from '../src/db/prepared.js'
import { withTransaction } from '../src/db/unit-of-work.js'
import { openTestDatabase } from './helpers/database.js'
import { propertyRuns, propertySeed, seededRandom } from './helpers/property.js'

t.test('a prepared statement answers as the query builder does, with each call its own values', async (t) => {
  const handle = await openTestDatabase(t)
  t.teardown(() => handle.close())
  const { db } = handle
  const roles = ['editor', 'administrator', 'author'] as const
  await withTransaction(db, async (trx) => {
    for (let i = 0; i < 40; i++) {
      await trx.insertInto('users').values({ name: `user ${i} '"%_`, role: roles[i % 3] as string, created_at: `2026-01-${String(1 + (i % 28)).padStart(2, '0')} 00:00:00` }).execute()
    }
  })
  let builds = 0
  // A literal the build writes itself ('2026-01-05…') beside values placed twice and once.
  const usersOf = prepared(3, (db, role: string, from: number, to: number) => {
    builds += 1
    return db.selectFrom('users').select(['id', 'name', 'role'])
      .where('role', '=', role).where('id', '>=', from).where('id', '<=', to).where('created_at', '>=', '2026-01-05 00:00:00')
      .where((eb) => eb.or([eb('id', '=', from), eb('id', '>=', from)]))
      .orderBy('id')
  })
  const direct = (role: string, from: number, to: number) => db.selectFrom('users').select(['id', 'name', 'role'])
    .where('role', '=', role).where('id', '>=', from).where('id', '<=', to).where('created_at', '>=', '2026-01-05 00:00:00')
    .orderBy('id').execute()
  const random = seededRandom(propertySeed(20261127))
  const runs = propertyRuns(200)
  let compared = 0
  for (let run = 0; run < runs; run++) {
    const role = roles[Math.floor(random() * 3)] as string
    const from = Math.floor(random() * 45)
    const to = from + Math.floor(random() * 20)
    const got = await usersOf(db, role, from, to)
    const want = await direct(role, from, to)
    if (JSON.stringify(got.rows) !== JSON.stringify(want)) {
      t.same(got.rows, want, `role ${role}, ids ${from}–${to}`)
      break
    }
    compared += want.length
  }
  t.ok(compared > 0, `the runs compared rows (${compared})`)
  t.equal(builds, 1, 'built once for the engine, whatever the number of calls')

  // In a transaction as well as on the database, with the same one build.
  const inTransaction = await withTransaction(db, (trx) => usersOf(trx, 'editor', 0, 100))
  t.same(inTransaction.rows, await direct('editor', 0, 100), 'in a transaction')
  t.equal(builds, 1, 'a transaction uses the build of its database')

  // A list of ids as its one parameter, and a raw statement.
  const named = prepared(1, (db, list: number[] | string) => sql<{ id: number; name: string }>`select id, name from users where ${inIdValue(db, sql.ref('id'), list)} order by id`)
  const list = idListValue(db, [3, 1, 4, 1, 5])
  t.not(list, undefined)
  t.same((await named(db, list as number[] | string)).rows.map((r) => Number(r.id)), [1, 3, 4, 5], 'the ids the list holds')
  t.same((await named(db, idListValue(db, [39, 2]) as number[] | string)).rows.map((r) => Number(r.id)), [2, 39], 'another list, the same statement')
  t.equal(idListValue(db, [Number.NaN, 1.5]), undefined, 'no safe integer: no list')

  // A write: what it changed, as the builder reports it.
  const rename = prepared(2, (db, name: string, id: number) => db.updateTable('users').set({ name }).where('id', '=', id))
  const renamed = await withTransaction(db, (trx) => rename(trx, 'renamed', 7))
  t.equal(Number(renamed.numAffectedRows), 1, 'one row updated')
  t.equal((await db.selectFrom('users').select('name').where('id', '=', 7).executeTakeFirstOrThrow()).name, 'renamed')
  t.equal(Number((await withTransaction(db, (trx) => rename(trx, 'nobody', 9999))).numAffectedRows), 0, 'no row: none updated')
})

t.test('a build that computes with a value, or leaves one out, is refused', async (t) => {
  const handle = await openTestDatabase(t)
  t.teardown(() => handle.close())
  const { db } = handle
  const computed = prepared(1, (db, name: string) => db.selectFrom('users').select('id').where('name', '=', `user ${name}`))
  await t.rejects(computed(db, 'x'), /was used in its building/, 'a value made into text')
  const dropped = prepared(2, (db, name: string, _unused: number) => db.selectFrom('users').select('id').where('name', '=', name))
  await t.rejects(dropped(db, 'x', 1), /placed 1 of its 2 values/, 'a value not placed')
})

t.test('a family by shape keeps one statement per key, and at most as many as it may', async (t) => {
  const made: string[] = []
  const family = byShape(2, (key) => {
    made.push(key)
    return { key }
  })
  const a = family('a')
  t.equal(family('a'), a, 'asked again: the same')
  family('b')
  t.same(made, ['a', 'b'])
  family('c')
  t.same(made, ['a', 'b', 'c'], 'a third key is made')
  t.not(family('a'), a, 'past the bound, the earlier ones are made again')
  t.same(made, ['a', 'b', 'c', 'a'])
})
