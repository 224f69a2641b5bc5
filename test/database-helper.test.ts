/**
 * test/helpers/database.ts on PostgreSQL: a schema a finished test used is emptied and handed to the next test of
 * the same file. Emptied, it must be what a freshly migrated schema is: every table as after the migrations (no
 * rows but the change log's first), every sequence back at its start, and the data
 * and key epochs moved (what a write to their tables does), so that nothing of the previous test shows. On SQLite a
 * test's `:memory:` database starts as a copy of one migrated once per process: it must be one migrated now.
 */
import t, { type Test } from 'tap'
import { sql } from 'kysely'
import { openDatabase, openSqlite } from '../src/db/database.js'
import { build, API } from './helpers/build.js'
import { engineTest, freshDatabaseUrl, migratedSqliteImage } from './helpers/database.js'

type Db = Awaited<ReturnType<typeof openDatabase>>['db']

const schemaOf = (url: string): string => new URL(url).searchParams.get('schema') ?? ''

/** Every table's rows (but the migrations' own) and every sequence's state, of the schema `db` works in. */
async function state(db: Db, schema: string): Promise<{ tables: Record<string, unknown[]>; sequences: unknown[] }> {
  const names = await sql<{ name: string }>`select c.relname as name from pg_class c join pg_namespace n on n.oid = c.relnamespace
    where n.nspname = ${schema} and c.relkind in ('r', 'p') and c.relname not like 'kysely%' and c.relname not in ('data_epoch', 'key_epoch') order by 1`.execute(db)
  const tables: Record<string, unknown[]> = {}
  for (const { name } of names.rows) tables[name] = (await sql<Record<string, unknown>>`select * from ${sql.table(`${schema}.${name}`)}`.execute(db)).rows
  const sequences = (await sql`select sequencename, start_value, last_value from pg_sequences where schemaname = ${schema} order by 1`.execute(db)).rows
  return { tables, sequences }
}

async function epochs(db: Db, schema: string): Promise<number[]> {
  const data = await sql<{ n: string }>`select n from ${sql.table(`${schema}.data_epoch`)}`.execute(db)
  const key = await sql<{ n: string }>`select n from ${sql.table(`${schema}.key_epoch`)}`.execute(db)
  return [Number(data.rows[0]?.n), Number(key.rows[0]?.n)]
}

let usedSchema = ''
let epochsAtEnd: number[] = []

t.test('a test writes to most tables of its database', async (t) => {
  const s = await build(t, { config: { webhooks: { retrySchedule: [1000], disableAfter: 10, allowPrivate: true } } })
  if (s.engine === 'postgres') usedSchema = schemaOf(s.url)
  const admin = await s.auth('administrator')
  const editor = { ...(await s.auth('editor')), 'content-type': 'application/json' }
  const post = async (path: string, body: object, headers: Record<string, string> = editor) => {
    const res = await s.inject({ method: 'POST', url: `${API}${path}`, headers, payload: JSON.stringify(body) })
    t.equal(res.statusCode, 201, `POST ${path}`)
    return res.json<{ id: number }>().id
  }
  const category = await post('/categories', { name: 'Jazz' })
  const tag = await post('/tags', { name: 'Free' })
  const venue = await post('/venues', { venue: 'Hall' })
  const organizer = await post('/organizers', { organizer: 'Club' })
  for (let i = 0; i < 3; i++) {
    await post('/events', {
      title: `Event ${i}`, start_date: '2026-07-01 19:00:00', end_date: '2026-07-01 21:00:00', status: 'publish',
      categories: [category], tags: [tag], venue: [venue], organizer: [organizer], recurrence: { rule: 'FREQ=WEEKLY;COUNT=3' },
    })
  }
  await post('/webhooks', { url: 'http://127.0.0.1:9/hooks', events: ['event.*'] }, { ...admin, 'content-type': 'application/json' })
  t.equal((await s.inject({ url: `${API}/events/1` })).statusCode, 200, 'read once (documents written)')
})

t.test('the next test\'s database holds nothing of it: no events listed, the first one created is number 1', async (t) => {
  const s = await build(t)
  if (s.engine === 'postgres') t.equal(schemaOf(s.url), usedSchema, 'the schema is used again')
  const list = await s.inject({ url: `${API}/events?start_date=2026-01-01&end_date=2026-12-31` })
  t.equal(list.statusCode, 200)
  t.same(list.json<{ events: unknown[] }>().events, [], 'no events')
  t.equal(list.headers['x-total'], '0')
  const editor = { ...(await s.auth('editor')), 'content-type': 'application/json' }
  const res = await s.inject({ method: 'POST', url: `${API}/events`, headers: editor,
    payload: JSON.stringify({ title: 'First', start_date: '2026-07-01 19:00:00', end_date: '2026-07-01 21:00:00', status: 'publish' }) })
  t.equal(res.statusCode, 201)
  t.equal(res.json<{ id: number }>().id, 1, 'event 1')
  if (s.engine === 'postgres') epochsAtEnd = await epochs(s.db, usedSchema)
})

engineTest('postgres', t, 'a schema used again is as a freshly migrated one, its epochs moved', async (t: Test) => {
  const reused = await freshDatabaseUrl(t)
  t.equal(schemaOf(reused), usedSchema, 'the schema is used again')
  // Another one made now (none is left to use again) and migrated: the state to compare with.
  const fresh = await freshDatabaseUrl(t)
  t.not(schemaOf(fresh), usedSchema)
  const a = await openDatabase(reused)
  const b = await openDatabase(fresh)
  t.teardown(async () => {
    await a.close()
    await b.close()
  })
  const emptied = await state(a.db, usedSchema)
  const made = await state(b.db, schemaOf(fresh))
  t.ok(Object.keys(made.tables).length > 10, 'the tables compared')
  t.strictSame(emptied.tables, made.tables, 'every table as after the migrations')
  t.ok(made.sequences.length > 5, 'the sequences compared')
  t.strictSame(emptied.sequences, made.sequences, 'every sequence back at its start')
  const [data, key] = await epochs(a.db, usedSchema)
  t.ok(data !== undefined && data !== epochsAtEnd[0], `the data epoch moved (${String(epochsAtEnd[0])} → ${String(data)})`)
  t.ok(key !== undefined && key !== epochsAtEnd[1], `the key epoch moved (${String(epochsAtEnd[1])} → ${String(key)})`)
})

engineTest('sqlite', t, 'a :memory: database opened from the migrated image is one freshly migrated, not migrated again, and a copy of its own', async (t: Test) => {
  const image = await migratedSqliteImage()
  const statements: string[] = []
  const copy = await openSqlite(':memory:', (s) => statements.push(s.sql), undefined, { image })
  const other = await openSqlite(':memory:', undefined, undefined, { image })
  const migrated = await openSqlite(':memory:')
  t.teardown(async () => {
    await copy.close()
    await other.close()
    await migrated.close()
  })
  t.notOk(statements.some((s) => /^\s*(create|alter|drop) /i.test(s)), 'no migration ran')
  const contents = (sqlite: typeof copy.sqlite) => {
    const objects = sqlite.prepare('select type, name, tbl_name, sql from sqlite_master order by type, name').all() as Array<{ type: string; name: string }>
    const rows = Object.fromEntries(objects.filter((o) => o.type === 'table' && !o.name.startsWith('sqlite_'))
      // The migrations' log: when each ran aside.
      .map((o) => [o.name, (sqlite.prepare(`select * from "${o.name}"`).all() as Array<Record<string, unknown>>).map(({ timestamp: _, ...row }) => row)]))
    return { objects, rows, foreignKeys: sqlite.pragma('foreign_keys', { simple: true }), userVersion: sqlite.pragma('user_version', { simple: true }) }
  }
  const expected = contents(migrated.sqlite)
  t.ok(expected.objects.length > 30, 'the schema compared')
  t.strictSame(contents(copy.sqlite), expected, 'the same schema, rows and settings as a database migrated now')
  copy.sqlite.prepare('update data_epoch set n = n + 100').run()
  t.strictSame(contents(other.sqlite), expected, 'a write to one copy is not seen in another')
})
