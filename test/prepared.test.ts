/**
 * Prepared statements (src/db/prepared.ts): a statement built once per engine answers every call as the
 * query builder would with that call's values (checked against the builder itself, on the test engine);
 * a build that computes with its values, or leaves one out, is refused at once; a family by shape keeps
 * one statement per key, and no more than it may. On SQLite, a unit of work's prepared statements run on the
 * connection at once (not through the query builder's executor), answered and logged as the builder would.
 */
import t from 'tap'
import { join } from 'node:path'
import { sql } from 'kysely'
import { idListValue, inIdValue } from '../src/db/dialect.js'
import { byShape, prepared } from '../src/db/prepared.js'
import { openSqlite, type LoggedStatement } from '../src/db/database.js'
import { withTransaction } from '../src/db/unit-of-work.js'
import { engineTest, openTestDatabase } from './helpers/database.js'
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

engineTest('sqlite', t, 'SQLite: in a unit of work, a prepared statement runs on the connection at once, answered and logged as through the builder', async (t) => {
  const logged: LoggedStatement[] = []
  const handle = await openSqlite(join(t.testdir(), 'calendar.db'), (statement) => logged.push(statement))
  t.teardown(() => handle.close())
  const add = prepared(1, (db, name: string) => db.insertInto('users').values({ name, role: 'editor', created_at: '' }))
  const named = prepared(1, (db, name: string) => db.selectFrom('users').select(['id', 'name']).where('name', '=', name))
  const users = (): number => handle.sqlite.prepare('select count(*) from users').pluck().get() as number
  const before = users()
  const answers = await withTransaction(handle.db, async (trx) => {
    // What goes through the query builder's executor, counted.
    let viaBuilder = 0
    const executeQuery = trx.executeQuery.bind(trx)
    trx.executeQuery = ((query: Parameters<typeof executeQuery>[0]) => {
      viaBuilder += 1
      return executeQuery(query)
    }) as typeof trx.executeQuery
    const adding = add(trx, 'direct')
    // Not yet awaited: run already, on the transaction's connection, not through the builder.
    const ranAtOnce = users() === before + 1 && viaBuilder === 0
    const added = await adding
    const built = await trx.insertInto('users').values({ name: 'built', role: 'editor', created_at: '' }).executeTakeFirstOrThrow()
    const found = await named(trx, 'direct')
    const refused = await add(trx, null as unknown as string).then(() => 'resolved', (error: unknown) => (error as { code?: string }).code)
    return { ranAtOnce: ranAtOnce && viaBuilder === 0, added, built, found, refused }
  })
  t.ok(answers.ranAtOnce, 'the statements ran on the connection, none through the builder\'s executor')
  t.equal(typeof answers.added.insertId, 'bigint', 'its insert id a bigint, as the driver gives it')
  t.equal(answers.added.numAffectedRows, 1n)
  t.equal(answers.built.insertId, (answers.added.insertId ?? 0n) + 1n, 'the builder\'s next insert follows it')
  t.same(answers.found.rows, [{ id: Number(answers.added.insertId), name: 'direct' }], 'rows as the builder reads them')
  t.equal(answers.refused, 'SQLITE_CONSTRAINT_NOTNULL', 'a refused statement rejects its promise')
  t.equal(users(), before + 2, 'committed with the unit of work')
  const texts = logged.map((entry) => entry.sql)
  t.ok(texts.filter((text) => text.startsWith('insert into "users"')).length >= 3, 'each statement told to the log, the refused one too')
  t.ok(logged.some((entry) => entry.sql.startsWith('select "id", "name" from "users"') && entry.parameters[0] === 'direct'), 'with its values')
  // A unit of work's own statements too (its savepoint, its looks at the data version, the savepoint's release):
  // the second of two units that share a transaction, counted from its start to its end.
  let second = 0
  await Promise.all([
    withTransaction(handle.db, async (trx) => add(trx, 'first')),
    withTransaction(handle.db, async (trx) => {
      const executeQuery = trx.executeQuery.bind(trx)
      trx.executeQuery = ((query: Parameters<typeof executeQuery>[0]) => {
        second += 1
        return executeQuery(query)
      }) as typeof trx.executeQuery
      return add(trx, 'second')
    }),
  ])
  t.equal(second, 0, 'none of the second unit\'s statements, nor its last look and release, through the builder\'s executor')
  t.equal(users(), before + 4)
  // Outside a unit of work, it waits for the connection as the builder does.
  const outside = named(handle.db, 'built')
  t.same((await outside).rows.map((r) => r.name), ['built'])
})
