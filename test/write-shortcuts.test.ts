/**
 * What a write no longer asks the database each time (issue 49), and why it is never wrong: two apps on one
 * database (one SQLite file; one PostgreSQL schema with TEST_DATABASE=postgres), as two processes or nodes.
 * - Keys verified once are kept in memory beside the key epoch (migration 0026, repositories/users.ts `keyCallers`):
 *   a key revoked, or a role changed, by the other app or by raw SQL on another connection is refused by this one
 *   from its next request on.
 * - The webhook outbox's statement is skipped when no subscription is active, as a write's transaction found at
 *   its first look (db/webhook-outbox.ts `subscribed`): a subscription another app made just before is never
 *   missed, nor one made by a unit of work of the same shared transaction before the write (SQLite).
 */
import { sql } from 'kysely'
import t, { type Test } from 'tap'
import { buildApp } from '../src/app.js'
import { defaultConfig } from '../src/config.js'
import { openDatabase } from '../src/db/database.js'
import { withTransaction, type Tx } from '../src/db/unit-of-work.js'
import { createCompilers } from '../src/http/compilers.js'
import { TAG } from '../src/repositories/terms.js'
import { insertTerm } from '../src/repositories/term-writes.js'
import { createUserWithKey, keyCallers, revokeKeys } from '../src/repositories/users.js'
import { generateKey } from '../src/lib/api-keys.js'
import { insertWebhook } from '../src/repositories/webhooks.js'
import { API, BASE_URL, NOW, build } from './helpers/build.js'
import { SPEC, contractProblems } from './helpers/contract.js'

async function twoApps(t: Test) {
  const a = await build(t, { file: `${t.testdir()}/calendar.db`, config: { authFailureLimit: 0 } })
  const other = await openDatabase(a.url)
  const appB = await buildApp({ db: other.db, config: defaultConfig({ publicUrl: BASE_URL, authFailureLimit: 0 }), now: () => NOW, spec: SPEC, compilers: createCompilers() })
  t.teardown(async () => {
    await appB.close()
    await other.close()
  })
  const post = async (app: typeof appB, headers: Record<string, string>, name: string): Promise<number> => {
    const url = `${API}/tags`
    const res = await app.inject({ method: 'POST', url, headers, payload: { name } })
    t.same(contractProblems('POST', url, res), [], `POST /tags ${name} keeps the contract`)
    return res.statusCode
  }
  return { a, other, appB, post }
}

t.test('a key revoked or a role changed by another app or connection is refused at once', async (t) => {
  const { a, other, appB, post } = await twoApps(t)
  const editor = await a.auth('editor', 'ci')
  // Verified, then kept: each app answers several writes with it.
  for (let i = 0; i < 3; i++) {
    t.equal(await post(a.app, editor, `A ${i}`), 201, `A accepts the key (${i})`)
    t.equal(await post(appB, editor, `B ${i}`), 201, `B accepts the key (${i})`)
  }
  t.equal(await withTransaction(other.db, (trx) => revokeKeys(trx, 'ci', '2026-06-15 12:00:00')), 1, 'B revokes the key')
  t.equal(await post(a.app, editor, 'A after'), 401, 'A refuses the key B revoked at its next request')
  t.equal(await post(appB, editor, 'B after'), 401, 'B refuses it too')

  const second = await a.auth('editor', 'second')
  t.equal(await post(a.app, second, 'second 1'), 201)
  t.equal(await post(a.app, second, 'second 2'), 201)
  // Raw SQL on a third connection: a role taken away, then the key revoked.
  const third = await openDatabase(a.url)
  t.teardown(() => third.close())
  await sql`update users set role = 'subscriber' where name = 'second'`.execute(third.db)
  t.equal(await post(a.app, second, 'second 3'), 403, 'A refuses a role changed by raw SQL elsewhere at its next request')
  await sql`update users set role = 'editor' where name = 'second'`.execute(third.db)
  t.equal(await post(a.app, second, 'second 4'), 201, 'and takes it back as given back')
  await sql`update api_keys set revoked_at = '2026-06-15 12:00:00' where user_id = (select id from users where name = 'second')`.execute(third.db)
  t.equal(await post(a.app, second, 'second 5'), 401, 'A refuses a key revoked by raw SQL elsewhere at its next request')
})

t.test('SQLite: a key verified is answered from memory, at once, until a key or a user is written anywhere', async (t) => {
  const a = await build(t, { file: `${t.testdir()}/calendar.db` })
  const other = await openDatabase(a.url)
  t.teardown(() => other.close())
  const key = generateKey()
  await withTransaction(a.db, (trx) => createUserWithKey(trx, 'editor', key, '2026-01-01 00:00:00', 'kept'))
  const callerOf = keyCallers(a.db)
  const first = callerOf(key)
  t.ok(first instanceof Promise, 'looked up the first time')
  t.match(await first, { name: 'kept', role: 'editor' })
  const again = callerOf(key)
  if (a.engine === 'sqlite') t.match(again, { name: 'kept', role: 'editor' }, 'then answered at once')
  else t.ok(again instanceof Promise, 'PostgreSQL: looked up every time')
  t.match(await again, { name: 'kept', role: 'editor' })
  await withTransaction(other.db, (trx) => createUserWithKey(trx, 'author', generateKey(), '2026-01-01 00:00:00', 'someone else'))
  const afterWrite = callerOf(key)
  t.ok(afterWrite instanceof Promise, 'looked up again after another handle wrote a key')
  t.match(await afterWrite, { name: 'kept', role: 'editor' })
})

t.test('a write owes deliveries to a subscription made just before, by another app or in its own transaction', async (t) => {
  const { a, other } = await twoApps(t)
  const editor = await a.auth('editor')
  const tag = async (name: string): Promise<number> => {
    const res = await a.inject({ method: 'POST', url: `${API}/tags`, headers: editor, payload: { name } })
    t.equal(res.statusCode, 201, `POST /tags ${name}`)
    return Number(res.json().id)
  }
  const deliveries = async (id: number): Promise<number> => Number((await a.db.selectFrom('webhook_deliveries')
    .select((eb) => eb.fn.countAll<number>().as('n')).where('resource', '=', 'tags').where('record_id', '=', id).executeTakeFirstOrThrow()).n)
  const subscription = (trx: Tx, url: string) => insertWebhook(trx, {
    url, events: ['*'], description: null, active: true, secret: 'whsec_c2VjcmV0c2VjcmV0c2VjcmV0c2VjcmV0c2VjcmV0', nowUtc: '2026-06-15 12:00:00',
  })

  const before = await tag('Before')
  t.equal(await deliveries(before), 0, 'no subscription: no delivery')
  await withTransaction(other.db, (trx) => subscription(trx, 'https://example.org/one'))
  const after = await tag('After')
  t.equal(await deliveries(after), 1, 'the subscription the other app made just before is owed the next write')

  // SQLite: units of work queued together share a transaction, one after the other (PostgreSQL runs each in its own,
  // beside the others, so that none of the three comes before another there). Every subscription inactive, then a new
  // one made by a unit of work queued between two writes.
  if (a.engine !== 'sqlite') return
  await sql`update webhooks set active = 0`.execute(a.db)
  const tagUnit = (name: string) => (trx: Tx) => insertTerm(trx, TAG, { language: 'en', name, description: null, slug: '', parent: 0, translationGroup: null })
  const [first, , second] = await Promise.all([
    withTransaction(a.db, tagUnit('First')),
    withTransaction(a.db, (trx) => subscription(trx, 'https://example.org/two')),
    withTransaction(a.db, tagUnit('Second')),
  ])
  t.equal(await deliveries(first), 0, 'a write before any subscription owes none')
  t.equal(await deliveries(second), 1, 'a write after a subscription made in the same transaction owes it its delivery')
})
