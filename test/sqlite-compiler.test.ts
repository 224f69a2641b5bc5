/**
 * The SQLite dialect's compiler (db/sqlite-dialect.ts) binds every value as `+?` (unary plus), never as a
 * bare `?`: SQLite re-prepares a statement whose plan could depend on a bound value (a LIMIT, an
 * equality in a join) each time that value is bound again, that is at every execution. The statements
 * keep their meaning: every kind of value goes in and comes back as it was, and limits, offsets, lists
 * and joins select what the same statement with the values written in selects. SQLite files of their own,
 * whatever engine the leg tests.
 */
import t from 'tap'
import { join } from 'node:path'
import SQLite from 'better-sqlite3'
import { Kysely, sql } from 'kysely'
import { WriteLockingSqliteDialect } from '../src/db/sqlite-dialect.js'

interface Tables {
  things: { id: number; label: string | null; amount: number | null; big: number | bigint | null; data: Buffer | null; parent: number | null }
}

function open(file: string): { raw: SQLite.Database; db: Kysely<Tables> } {
  const raw = new SQLite(file)
  raw.exec(`create table things (id integer primary key, label text, amount real, big integer, data blob, parent integer);
    create index things_label on things (label)`)
  return { raw, db: new Kysely<Tables>({ dialect: new WriteLockingSqliteDialect({ database: raw }) }) }
}

/** Whether every placeholder of `text` is a wrapped one. */
function onlyWrapped(text: string): boolean {
  return text.replaceAll('+?', '').includes('?') === false
}

t.test('every bound value of a compiled statement is wrapped, in where, join, in-list, limit, offset, insert and update', async (t) => {
  const { raw, db } = open(join(t.testdir(), 'compiler.db'))
  t.teardown(() => db.destroy())
  const statements = [
    db.selectFrom('things as a').innerJoin('things as b', 'b.id', 'a.parent').select('a.id').where('b.label', '=', 'x').where('a.id', 'in', [1, 2, 3]).limit(5).offset(10).compile(),
    db.insertInto('things').values([{ id: 1, label: 'a', amount: 1.5 }, { id: 2, label: 'b', amount: null }]).compile(),
    db.updateTable('things').set({ label: 'c' }).where('id', '=', 7).compile(),
    db.deleteFrom('things').where('label', 'like', 'a%').compile(),
    sql`select ${1} as one, ${'two'} as two`.compile(db),
  ]
  for (const statement of statements) {
    t.ok(statement.parameters.length > 0, `it binds values: ${statement.sql}`)
    t.ok(onlyWrapped(statement.sql), `no bare placeholder: ${statement.sql}`)
    t.equal(statement.sql.split('+?').length - 1, statement.parameters.length, 'one wrapped placeholder per value')
  }
  t.equal(raw.prepare('select 1').pluck().get(), 1)
})

t.test('values of every kind go in and come back unchanged', async (t) => {
  const { raw, db } = open(join(t.testdir(), 'values.db'))
  t.teardown(() => db.destroy())
  const rows = [
    { id: 1, label: 'plain', amount: 1.25, big: 9_007_199_254_740_991, data: Buffer.from([0, 1, 2, 255]), parent: null },
    { id: 2, label: '', amount: 0, big: -1, data: Buffer.alloc(0), parent: 1 },
    { id: 3, label: "it's ünïcödé 🎉 +? , null)", amount: -3.5e-7, big: 0, data: null, parent: 1 },
    { id: 4, label: null, amount: null, big: null, data: null, parent: 2 },
  ]
  await db.insertInto('things').values(rows).execute()
  const back = raw.prepare('select * from things order by id').all() as typeof rows
  t.same(back.map((r) => ({ ...r, data: r.data === null ? null : Buffer.from(r.data) })), rows, 'the rows as written')
  t.same(raw.prepare('select typeof(label) as l, typeof(amount) as a, typeof(big) as b, typeof(data) as d from things where id = 1').get(),
    { l: 'text', a: 'real', b: 'integer', d: 'blob' }, 'stored with their types')
  for (const row of rows) {
    const found = await db.selectFrom('things').select('id').where('label', 'is', row.label).where('amount', 'is', row.amount).where('data', 'is', row.data).execute()
    t.same(found.map((r) => r.id), [row.id], `found by its own values (${row.id})`)
  }
  await db.updateTable('things').set({ label: 'changed', big: 42 }).where('id', '=', 3).execute()
  t.same(raw.prepare('select label, big from things where id = 3').get(), { label: 'changed', big: 42 })
})

t.test('limits, offsets, lists and joins select what the statement with the values written in selects', async (t) => {
  const { raw, db } = open(join(t.testdir(), 'select.db'))
  t.teardown(() => db.destroy())
  const insert = raw.prepare('insert into things (id, label, amount, parent) values (?, ?, ?, ?)')
  for (let id = 1; id <= 200; id++) insert.run(id, `label ${id % 17}`, id / 4, id > 10 ? id % 10 + 1 : null)
  const literal = (text: string) => (raw.prepare(text).all() as Array<{ id: number }>).map((r) => r.id)
  for (const [limit, offset] of [[0, 0], [1, 0], [7, 3], [50, 190], [10, 500], [-1, 5]] as const) {
    const built = (await db.selectFrom('things').select('id').where('amount', '>=', 2).orderBy('id').limit(limit).offset(offset).execute()).map((r) => r.id)
    t.same(built, literal(`select id from things where amount >= 2 order by id limit ${limit} offset ${offset}`), `limit ${limit} offset ${offset}`)
  }
  const joined = (await db.selectFrom('things as a').innerJoin('things as b', 'b.id', 'a.parent').select('a.id')
    .where('b.label', '=', 'label 3').where('a.label', 'in', ['label 1', 'label 5', 'label 9']).orderBy('a.id').execute()).map((r) => r.id)
  t.same(joined, literal(`select a.id from things a join things b on b.id = a.parent where b.label = 'label 3' and a.label in ('label 1', 'label 5', 'label 9') order by a.id`), 'a join with an equality and an in-list')
  t.ok(joined.length > 0, 'the join selects rows')
  const liked = (await db.selectFrom('things').select('id').where('label', 'like', 'label 1%').orderBy('id').execute()).map((r) => r.id)
  t.same(liked, literal(`select id from things where label like 'label 1%' order by id`), 'a bound LIKE pattern')
})
