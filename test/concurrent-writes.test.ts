/**
 * Writes at once on several connections of two nodes (issue 49: on PostgreSQL creates of events run beside each
 * other, the log lock held only for the change log's append and the commit; postgres-dialect.ts), while a reader
 * polls `GET /changes` throughout:
 * - creates of events from several writers on both nodes, a third of them with one title (their slugs collide:
 *   each must end with its own, `same-title`, `same-title-2`, …), all linked to one category (its count moves in
 *   every create);
 * - PATCHes of one event with `If-Match` from several writers (compare-and-swap: no two succeed on one tag; every
 *   success is one entry of the log);
 * - the reader, an editor, follows `next_cursor` with a small `per_page` until the writers are done and once more
 *   after: the positions it is given only grow (every entry once, in order), it is given every event created, once,
 *   as `created`, and for every record the last position it saw is the one a walk of the whole log gives at the end
 *   (nothing missed behind its cursor).
 * The same on SQLite (one node), where writes run one at a time.
 *
 * Then, PostgreSQL only, the window itself, made to happen: a concurrent unit of work held between its append to
 * the log and its commit while another, on another node, runs to its end: the other may not commit an entry past the
 * held one's (a reader between them would skip it for ever), and the epoch moves once per write of a table the
 * caches read, not for a write of none.
 *
 * PATCHes and deletes of events (concurrent on PostgreSQL too): status, term and slug PATCHes, If-Match PATCHes, a
 * trash and a delete racing creates and each other on two nodes (every PATCH that took one version and one entry,
 * the terms' counts, unique slugs, both nodes' answers and the log exact); PostgreSQL only, a PATCH held before its
 * log lock while another event's PATCH is answered and one of its own event waits for it (412), and a translation's
 * create held while a status PATCH of its source waits for it (then reports the new version changed).
 */
import t, { type Test } from 'tap'
import { CompiledQuery, sql } from 'kysely'
import pg from 'pg'
import type { InjectOptions } from 'fastify'
import { buildApp } from '../src/app.js'
import { defaultConfig } from '../src/config.js'
import { openDatabase } from '../src/db/database.js'
import { createCompilers } from '../src/http/compilers.js'
import { positionOf } from '../src/handlers/changes.js'
import { dataVersion } from '../src/db/dialect.js'
import { LOG_LOCK_THEN_VERSION, logTailText } from '../src/db/postgres-dialect.js'
import { recordChange, withTransaction, writtenBetween } from '../src/db/unit-of-work.js'
import { freshDatabaseUrl, engineTest, openTestDatabase, TEST_ENGINE, TEST_POSTGRES_URL } from './helpers/database.js'
import { API, BASE_URL, NOW, build, decoded, type Injected } from './helpers/build.js'
import { contractProblems, SPEC } from './helpers/contract.js'

const WRITERS = 6
const CREATES_EACH = 8
const PATCHERS = 4
const PATCHES_EACH = 6
const SAME_TITLE = 'Same title'

interface Change { cursor: string; id: number; resource: string; action: string }
interface ChangeList { changes: Change[]; next_cursor: string; has_more: boolean }

type Send = (node: number, method: 'GET' | 'POST' | 'PATCH' | 'DELETE', path: string, body?: Record<string, unknown>, headers?: Record<string, string>) => Promise<Injected>

/**
 * Two nodes on one database, an editor's requests sent to node `n % 2`, every answer of the second checked against
 * the contract (the first's are by build). PostgreSQL: the second node its own handle (pool) and app on the same
 * schema. SQLite: the one app (two handles in one process would wait for each other's file lock in the busy
 * handler, which blocks the event loop; test/nodes runs SQLite's nodes as processes).
 */
async function twoNodes(t: Test): Promise<{ a: Awaited<ReturnType<typeof build>>; b: (request: InjectOptions & { url: string }) => Promise<Injected>; send: Send; problems: string[] }> {
  const a = await build(t)
  const handle = TEST_ENGINE === 'postgres' ? await openDatabase(a.url) : undefined
  const b = handle === undefined ? a.app : await buildApp({ db: handle.db, config: defaultConfig({ publicUrl: BASE_URL }), now: () => NOW, spec: SPEC, compilers: createCompilers() })
  t.teardown(async () => {
    if (handle === undefined) return
    await b.close()
    await handle.close()
  })
  const problems: string[] = []
  async function injectB(request: InjectOptions & { url: string }): Promise<Injected> {
    const res = decoded(await b.inject(request))
    problems.push(...contractProblems(request.method ?? 'GET', request.url, res))
    return res as Injected
  }
  const nodes = [a.inject, injectB]
  const editor = await a.auth('editor')
  const send: Send = (node, method, path, body, headers = {}) =>
    (nodes[node % 2] as typeof a.inject)({ method, url: `${API}${path}`, headers: { ...editor, ...headers }, ...(body === undefined ? {} : { payload: body }) })
  return { a, b: injectB, send, problems }
}

/** The whole log read from its start: each record's last position. */
async function wholeLog(send: Send): Promise<Map<string, number>> {
  const whole = new Map<string, number>()
  let since: string | undefined
  for (;;) {
    const page = (await send(0, 'GET', `/changes?per_page=500${since === undefined ? '' : `&since=${since}`}`)).json<ChangeList>()
    for (const change of page.changes) whole.set(`${change.resource}:${change.id}`, positionOf(change.cursor) ?? -1)
    since = page.next_cursor
    if (!page.has_more) return whole
  }
}

/** A reader of /changes, `perPage` at a time from where it stopped, through the nodes in turn: what it saw and each entry's position. */
function changeReader(send: Send, problems: string[], perPage: number): { seen: Change[]; positions: number[]; poll: () => Promise<void> } {
  const seen: Change[] = []
  const positions: number[] = []
  let cursor: string | undefined
  async function poll(): Promise<void> {
    for (;;) {
      const res = await send(positions.length, 'GET', `/changes?per_page=${perPage}${cursor === undefined ? '' : `&since=${cursor}`}`)
      if (res.statusCode !== 200) {
        problems.push(`GET /changes → ${res.statusCode}`)
        return
      }
      const page = res.json<ChangeList>()
      for (const change of page.changes) {
        seen.push(change)
        positions.push(positionOf(change.cursor) ?? -1)
      }
      cursor = page.next_cursor
      if (!page.has_more) return
    }
  }
  return { seen, positions, poll }
}

t.test('creates, compare-and-swap PATCHes and slug collisions at once on two nodes: a reader of /changes sees every entry once, in order', async (t) => {
  const { a, send, problems } = await twoNodes(t)

  const category = (await send(0, 'POST', '/categories', { name: 'Music' })).json<{ id: number }>()
  const target = (await send(1, 'POST', '/events', { title: 'Target', start_date: '2026-07-01 20:00:00', end_date: '2026-07-01 22:00:00', status: 'publish' })).json<{ id: number }>()

  let writing = true
  const { seen, positions, poll } = changeReader(send, problems, 7)
  const reader = (async () => {
    while (writing) {
      await poll()
      // The writers' turn (on SQLite a unit of work waits for a turn of the event loop to join a shared commit).
      await new Promise((resolve) => setImmediate(resolve))
    }
    await poll()
  })()

  const created: Array<{ id: number; slug: string; title: string }> = []
  const createFailures: string[] = []
  const creates = Array.from({ length: WRITERS }, async (_, w) => {
    for (let i = 0; i < CREATES_EACH; i++) {
      const title = i % 3 === 0 ? SAME_TITLE : `Event ${w}-${i}`
      const res = await send(w + i, 'POST', '/events', {
        title, start_date: '2026-07-02 20:00:00', end_date: '2026-07-02 22:00:00', status: 'publish', categories: [category.id],
      })
      if (res.statusCode !== 201) createFailures.push(`${res.statusCode} ${res.body.slice(0, 200)}`)
      else created.push({ ...res.json<{ id: number; slug: string }>(), title })
    }
  })
  const patched: Array<{ ifMatch: string; etag: string }> = []
  let refused = 0
  const patchFailures: string[] = []
  const patches = Array.from({ length: PATCHERS }, async (_, w) => {
    for (let i = 0; i < PATCHES_EACH; i++) {
      const current = await send(w + i, 'GET', `/events/${target.id}`)
      const ifMatch = current.headers.etag as string
      const res = await send(w + i + 1, 'PATCH', `/events/${target.id}`, { excerpt: `patch ${w}-${i}` }, { 'if-match': ifMatch })
      if (res.statusCode === 200) patched.push({ ifMatch, etag: res.headers.etag as string })
      else if (res.statusCode === 412) refused += 1
      else patchFailures.push(`${res.statusCode} ${res.body.slice(0, 200)}`)
    }
  })
  await Promise.all([...creates, ...patches])
  writing = false
  await reader

  t.same(problems, [], 'every answer as the contract says')
  t.same(createFailures, [], 'every create answered 201')
  t.same(patchFailures, [], 'every PATCH answered 200 or 412')
  t.equal(created.length, WRITERS * CREATES_EACH)
  // Slugs: each its own; those of one title the first free ones in turn.
  const slugs = created.map((c) => c.slug)
  t.equal(new Set(slugs).size, slugs.length, 'no two events share a slug')
  const same = created.filter((c) => c.title === SAME_TITLE).map((c) => c.slug).sort()
  t.same(same, Array.from({ length: same.length }, (_, i) => (i === 0 ? 'same-title' : `same-title-${i + 1}`)).sort(), 'one title: same-title, same-title-2, …')
  // Compare-and-swap: one success per tag at most, and every success is one entry of the log.
  t.ok(patched.length >= 1, `${patched.length} PATCHes took, ${refused} refused`)
  t.equal(new Set(patched.map((p) => p.ifMatch)).size, patched.length, 'no two PATCHes took with one If-Match')
  t.equal(new Set(patched.map((p) => p.etag)).size, patched.length, 'every PATCH that took answered its own ETag')
  const logged = await a.db.selectFrom('changes').select('position').where('resource', '=', 'events').where('record_id', '=', target.id)
    .where('action', '=', 'updated').execute()
  t.equal(logged.length, patched.length, 'one entry of the log per PATCH that took')
  // The category's count: every create counted once.
  const counted = (await send(0, 'GET', `/categories/${category.id}`)).json<{ count: number }>()
  t.equal(counted.count, WRITERS * CREATES_EACH + 0, 'the category counts every create')

  // The reader: positions only grow; every event created seen once, as created; nothing missed behind its cursor.
  const growing = positions.every((p, i) => p > 0 && (i === 0 || p > (positions[i - 1] as number)))
  t.ok(growing, 'the positions the reader was given only grow')
  const eventsSeen = new Map<number, string[]>()
  for (const change of seen) if (change.resource === 'events') eventsSeen.set(change.id, [...(eventsSeen.get(change.id) ?? []), change.action])
  const missed = created.filter((c) => eventsSeen.get(c.id)?.join() !== 'created')
  t.same(missed.map((c) => ({ id: c.id, seen: eventsSeen.get(c.id) })), [], 'every event created seen once, as created')
  const last = new Map<string, number>()
  seen.forEach((change, i) => last.set(`${change.resource}:${change.id}`, positions[i] as number))
  const whole = await wholeLog(send)
  t.same([...last.entries()].sort(), [...whole.entries()].sort(), 'for every record, the last position the reader saw is the log\'s')
})

engineTest('postgres', t, 'PostgreSQL: a concurrent unit of work held between its append and its commit: no entry commits past it', async (t) => {
  const url = await freshDatabaseUrl(t)
  const one = await openDatabase(url)
  const two = await openDatabase(url)
  const blocker = await openDatabase(url)
  t.teardown(async () => {
    await one.close()
    await two.close()
    await blocker.close()
  })
  const state = { language: 'en', status: 'publish', author: null }
  const positions = async () => (await one.db.selectFrom('changes').select('position').orderBy('position').execute()).map((r) => Number(r.position))
  const start = await dataVersion(one.db)

  // Held by the server: a concurrent unit's log lock, looks, append and commit are one text (postgres-dialect.ts
  // `logTailText`), so the first unit is held inside its append (its entry inserted, its position taken, the log lock
  // held) by a trigger that waits for an advisory lock this test holds, until the test lets it go.
  const HOLD = 4_242_042
  await sql`create function hold_append() returns trigger language plpgsql as $$ begin perform pg_advisory_xact_lock_shared(${sql.lit(HOLD)}::bigint); return null; end $$`.execute(blocker.db)
  await sql`create trigger hold_append after insert on changes for each row execute function hold_append()`.execute(blocker.db)
  t.teardown(async () => {
    await sql`drop trigger if exists hold_append on changes`.execute(blocker.db)
    await sql`drop function if exists hold_append()`.execute(blocker.db)
  })
  // The hold: a session's advisory lock on a connection of its own (the advisory locks are the database's, not a schema's).
  const holder = new pg.Client({ connectionString: TEST_POSTGRES_URL })
  await holder.connect()
  t.teardown(() => holder.end())
  await holder.query('select pg_advisory_lock($1::bigint)', [HOLD])
  const release = async () => {
    await holder.query('select pg_advisory_unlock($1::bigint)', [HOLD])
  }
  const first = withTransaction(one.db, async (trx) => {
    recordChange(trx, { resource: 'event', id: 1001, action: 'create' }, state)
  }, { concurrent: true })
  // Until the first waits at the hold (its append's trigger).
  const holding = async () => (await sql<{ n: number }>`select count(*)::int as n from pg_locks where locktype = 'advisory' and objid = ${HOLD} and not granted`.execute(blocker.db)).rows[0]?.n === 1
  while (!(await holding())) await new Promise((resolve) => setImmediate(resolve))
  let otherPid = 0
  let otherDone = false
  const second = withTransaction(two.db, async (trx) => {
    otherPid = (await sql<{ pid: number }>`select pg_backend_pid() as pid`.execute(trx)).rows[0]?.pid ?? 0
    recordChange(trx, { resource: 'event', id: 1002, action: 'create' }, state)
  }, { concurrent: true }).finally(() => {
    otherDone = true
  })
  // Until the second has committed, or waits for a lock (the first's).
  const waits = async () => otherPid !== 0
    && (await sql<{ n: number }>`select count(*)::int as n from pg_stat_activity where pid = ${otherPid} and wait_event_type = 'Lock'`.execute(one.db)).rows[0]?.n === 1
  while (!otherDone && !(await waits())) await new Promise((resolve) => setImmediate(resolve))
  const early = await positions()
  await release()
  await Promise.all([first, second])
  const late = await positions()
  t.equal(late.length, 2, 'both appended')
  const highest = Math.max(0, ...early)
  t.same(late.filter((p) => p <= highest), early, 'what a reader saw meanwhile has nothing appear behind it later')
  const end = await dataVersion(one.db)
  t.equal(end?.epoch, start?.epoch, 'no table the caches read written: the epoch stays')
  // The journal chains the two units of this process's handles: each its own, from the version it found.
  t.equal(end?.head, (start?.head ?? 0) + 2)

  // A write of a table the caches read (images) moves the epoch once, at its end, whatever its statements.
  await withTransaction(one.db, async (trx) => {
    for (let i = 0; i < 3; i++) await trx.insertInto('images').values({ url: `https://example.org/${i}.png`, created_at: '2026-01-01 00:00:00' }).execute()
  }, { concurrent: true })
  const after = await dataVersion(one.db)
  t.equal(after?.epoch, (end?.epoch ?? 0) + 1, 'an API write of a cached table: the epoch moved once')
  t.same(writtenBetween(one.db, end as NonNullable<typeof end>, after as NonNullable<typeof after>, 10), [], 'the journal: this unit of work alone moved the data between its two looks')
  // Raw SQL outside the API still moves it at once.
  await sql`update images set url = url`.execute(one.db)
  t.equal((await dataVersion(one.db))?.epoch, (after?.epoch ?? 0) + 1, 'raw SQL moved it')
})

engineTest('postgres', t, 'PostgreSQL: a concurrent unit of work\'s log lock, looks, append and commit are one round trip', async (t) => {
  const handle = await openTestDatabase(t)
  t.teardown(() => handle.close())
  const { db } = handle
  const start = await dataVersion(db)
  const sent: string[] = []
  type Query = (this: unknown, ...args: unknown[]) => unknown
  const proto = pg.Client.prototype as unknown as { query: Query }
  const original = proto.query
  proto.query = function (this: unknown, ...args: unknown[]) {
    const first = args[0]
    sent.push(typeof first === 'string' ? first : (first as { text?: string } | undefined)?.text ?? '')
    return original.apply(this, args)
  }
  t.teardown(() => {
    proto.query = original
  })
  // A language with a quote: the log's values are written into the text as literals.
  const change = { resource: 'event', id: 4242, action: 'create' } as const
  await withTransaction(db, async (trx) => {
    recordChange(trx, change, { language: "e'n\\", status: 'publish', author: 7 })
  }, { concurrent: true })
  proto.query = original
  const tail = sent.filter((text) => text.includes('calendar-log:'))
  t.equal(tail.length, 1, 'the log lock sent once')
  t.match(tail[0], /insert into changes/, 'the append in the same text')
  t.match(tail[0], /; commit$/, 'the commit last in it')
  t.equal(sent.at(-1), tail[0], 'nothing sent in the unit after it')
  const rows = await db.selectFrom('changes').select(['record_id', 'language', 'status', 'author']).execute()
  t.same(rows.map((r) => ({ ...r, record_id: Number(r.record_id), author: Number(r.author) })), [{ record_id: 4242, language: "e'n\\", status: 'publish', author: 7 }], 'the entry committed, its values as given')
  const end = await dataVersion(db)
  t.equal(end?.head, (start?.head ?? 0) + 1, 'the log\'s head moved by the entry')
  t.same(writtenBetween(db, start as NonNullable<typeof start>, end as NonNullable<typeof end>, 10), [change], 'the journal: the unit\'s first and last looks, read from the one text')

  // Only text, numbers and nulls are written as literals; anything else is sent as before (three round trips).
  const eleven = Array.from({ length: 11 }, (_, i) => i + 1)
  t.equal(logTailText([CompiledQuery.raw(`select ${eleven.map((i) => `$${i}`).join(', ')}`, [...eleven.slice(0, 9), "o'k", null])])
    ?.includes("select '1', '2', '3', '4', '5', '6', '7', '8', '9', 'o''k', null"), true, '$10 and $11 are not $1 followed by a digit')
  t.equal(logTailText([CompiledQuery.raw('select $1', [{ a: 1 }])]), undefined, 'an object: not written as a literal')
})

const TARGETS = 6
const RACERS = 4
const RACES_EACH = 5

t.test('PATCHes and deletes racing creates and each other on two nodes: counts, versions, slugs, caches and the log exact', async (t) => {
  const { a, send, problems } = await twoNodes(t)
  const dates = { start_date: '2026-07-03 20:00:00', end_date: '2026-07-03 22:00:00' }

  const category = (await send(0, 'POST', '/categories', { name: 'Theatre' })).json<{ id: number }>()
  const tag = (await send(1, 'POST', '/tags', { name: 'Late' })).json<{ id: number }>()
  const targets: number[] = []
  for (let i = 0; i < TARGETS; i++) {
    targets.push((await send(i, 'POST', '/events', { title: `Target ${i}`, ...dates, status: 'publish', categories: [category.id] })).json<{ id: number }>().id)
  }
  const [toggled, tagged, guarded, slugOne, slugTwo, doomed] = targets as [number, number, number, number, number, number]

  let writing = true
  const { seen, positions, poll } = changeReader(send, problems, 9)
  // The reader, and a reader of every target on both nodes (their read caches and stored documents filled meanwhile).
  const reader = (async () => {
    let n = 0
    while (writing) {
      await poll()
      for (const id of targets) await send(n++, 'GET', `/events/${id}`)
      await new Promise((resolve) => setImmediate(resolve))
    }
    await poll()
  })()

  const failures: string[] = []
  const answered = (what: string, res: Injected, allowed: number[]) => {
    if (!allowed.includes(res.statusCode)) failures.push(`${what} → ${res.statusCode} ${res.body.slice(0, 200)}`)
    return res.statusCode
  }
  const created: number[] = []
  // Creates in the category, a third titled as the slugs the PATCHes ask for.
  const creates = Array.from({ length: RACERS }, async (_, w) => {
    for (let i = 0; i < RACES_EACH; i++) {
      const res = await send(w + i, 'POST', '/events', { title: i % 3 === 0 ? 'Moved' : `Racer ${w}-${i}`, ...dates, status: 'publish', categories: [category.id] })
      if (answered('create', res, [201]) === 201) created.push(res.json<{ id: number }>().id)
    }
  })
  // Unconditional PATCHes of one event, each its own excerpt and the status turned: every one takes (a row lock, not a 412).
  let toggles = 0
  const toggling = Array.from({ length: RACERS }, async (_, w) => {
    for (let i = 0; i < RACES_EACH; i++) {
      const res = await send(w + i + 1, 'PATCH', `/events/${toggled}`, { excerpt: `toggle ${w}-${i}`, status: (w + i) % 2 === 0 ? 'draft' : 'publish' })
      if (answered('toggle', res, [200]) === 200) toggles += 1
    }
  })
  // Unconditional PATCHes of another, its terms each time another list (the counts move by what each replaced).
  let tags = 0
  const tagging = Array.from({ length: RACERS }, async (_, w) => {
    for (let i = 0; i < RACES_EACH; i++) {
      const terms = (w + i) % 2 === 0 ? { categories: [], tags: [tag.id] } : { categories: [category.id], tags: [] }
      const res = await send(w + i, 'PATCH', `/events/${tagged}`, { excerpt: `tag ${w}-${i}`, ...terms })
      if (answered('terms', res, [200]) === 200) tags += 1
    }
  })
  // If-Match PATCHes of a third: one success per tag.
  const guardedTook: Array<{ ifMatch: string; etag: string }> = []
  const guarding = Array.from({ length: RACERS }, async (_, w) => {
    for (let i = 0; i < RACES_EACH; i++) {
      const ifMatch = (await send(w + i, 'GET', `/events/${guarded}`)).headers.etag as string
      const res = await send(w + i + 1, 'PATCH', `/events/${guarded}`, { excerpt: `guarded ${w}-${i}` }, { 'if-match': ifMatch })
      if (answered('If-Match', res, [200, 412]) === 200) guardedTook.push({ ifMatch, etag: res.headers.etag as string })
    }
  })
  // Two events given the slug the creates' title makes, back and forth.
  const moving = [slugOne, slugTwo].map(async (id, w) => {
    for (let i = 0; i < RACES_EACH; i++) {
      answered('slug', await send(w + i, 'PATCH', `/events/${id}`, { slug: i % 2 === 0 ? 'moved' : `kept-${id}` }), [200])
    }
  })
  // One event trashed and then deleted for good while PATCHes of it race from the other node.
  const ending = (async () => {
    const patches = Array.from({ length: RACERS }, async (_, w) => {
      for (let i = 0; i < RACES_EACH; i++) answered('PATCH of the doomed', await send(w, 'PATCH', `/events/${doomed}`, { excerpt: `doomed ${w}-${i}` }), [200, 404, 410])
    })
    await new Promise((resolve) => setImmediate(resolve))
    answered('trash', await send(0, 'DELETE', `/events/${doomed}`), [200])
    answered('delete', await send(1, 'DELETE', `/events/${doomed}?force=true`), [200])
    await Promise.all(patches)
  })()
  await Promise.all([...creates, ...toggling, ...tagging, ...guarding, ...moving, ending])
  writing = false
  await reader

  t.same(problems, [], 'every answer as the contract says')
  t.same(failures, [], 'every write answered as it may')
  t.equal(created.length, RACERS * RACES_EACH)
  const version = async (id: number) => (await a.db.selectFrom('events').select('version').where('id', '=', id).executeTakeFirst())?.version
  // Every PATCH that took moved the version once (none lost to another), and has its entry of the log.
  t.equal(await version(toggled), 1 + toggles, `${toggles} status PATCHes of one event, each its own version`)
  t.equal(await version(tagged), 1 + tags, `${tags} term PATCHes of one event, each its own version`)
  const logged = async (id: number) => (await a.db.selectFrom('changes').select('position').where('resource', '=', 'events').where('record_id', '=', id)
    .where('action', '=', 'updated').execute()).length
  t.equal(await logged(toggled), toggles, 'one entry of the log per status PATCH')
  t.equal(new Set(guardedTook.map((p) => p.ifMatch)).size, guardedTook.length, 'no two PATCHes took with one If-Match')
  t.equal(await version(guarded), 1 + guardedTook.length, 'every If-Match PATCH that took moved the version once')
  // The counts: what the published events linked to each term are, whatever order the writes committed in.
  for (const term of [category.id, tag.id]) {
    const linked = await a.db.selectFrom('event_terms').innerJoin('events', 'events.id', 'event_terms.event_id').select('events.id')
      .where('event_terms.term_id', '=', term).where('events.status', '=', 'publish').execute()
    const counted = (await send(term, 'GET', `/${term === tag.id ? 'tags' : 'categories'}/${term}`)).json<{ count: number }>()
    t.equal(counted.count, linked.length, `term ${term} counts its published events (${linked.length})`)
  }
  // Slugs: no two events share one; the doomed is gone.
  const slugs = (await a.db.selectFrom('events').select('slug').execute()).map((r) => r.slug)
  t.equal(new Set(slugs).size, slugs.length, 'no two events share a slug')
  t.equal(await version(doomed), undefined, 'the doomed event is deleted')

  // Both nodes answer every target as it is (their caches and stored documents followed every write), with one tag.
  for (const id of targets) {
    const one = await send(0, 'GET', `/events/${id}`)
    const two = await send(1, 'GET', `/events/${id}`)
    if (id === doomed) {
      t.same([one.statusCode, two.statusCode], [404, 404], 'the deleted event: 404 on both nodes')
      continue
    }
    const row = await a.db.selectFrom('events').select(['excerpt', 'slug', 'status']).where('id', '=', id).executeTakeFirstOrThrow()
    const shown = [one, two].map((res) => res.json<{ excerpt: string; slug: string; status: string }>())
    t.same(shown.map((e) => [e.excerpt, e.slug, e.status]), [[row.excerpt, row.slug, row.status], [row.excerpt, row.slug, row.status]], `event ${id} on both nodes as stored`)
    t.equal(one.headers.etag, two.headers.etag, `event ${id}: one ETag on both nodes`)
  }

  // The reader: positions only grow; for every record the last position it saw is the log's; the doomed ends deleted.
  t.ok(positions.every((p, i) => p > 0 && (i === 0 || p > (positions[i - 1] as number))), 'the positions the reader was given only grow')
  const last = new Map<string, { position: number; action: string }>()
  seen.forEach((change, i) => last.set(`${change.resource}:${change.id}`, { position: positions[i] as number, action: change.action }))
  const whole = await wholeLog(send)
  // A walk from the start is not told of a record created and deleted since (nothing to forget): the doomed left out.
  const kept = [...last.entries()].filter(([key]) => key !== `events:${doomed}`)
  t.same(kept.map(([key, { position }]) => [key, position]).sort(), [...whole.entries()].sort(),
    'for every record, the last position the reader saw is the log\'s (nothing missed behind its cursor)')
  t.equal(last.get(`events:${doomed}`)?.action, 'deleted', 'the reader saw the doomed event deleted last')
})

/** PostgreSQL: the first unit of work to send its log lock and first look (its work done, its rows locked) waits until `release`. */
function holdAtLogLock(t: Test): { reached: Promise<number>; release: () => void } {
  type Query = (this: unknown, ...args: unknown[]) => unknown
  const proto = pg.Client.prototype as unknown as { query: Query }
  const original = proto.query
  let hold = true
  let reach!: (pid: number) => void
  const reached = new Promise<number>((resolve) => { reach = resolve })
  let release!: () => void
  const released = new Promise<void>((resolve) => { release = resolve })
  proto.query = function (this: unknown, ...args: unknown[]) {
    if (hold && typeof args[0] === 'string' && args[0].includes(LOG_LOCK_THEN_VERSION)) {
      hold = false
      reach((this as { processID: number }).processID)
      return released.then(() => original.apply(this, args))
    }
    return original.apply(this, args)
  }
  t.teardown(() => {
    proto.query = original
  })
  return { reached, release }
}

engineTest('postgres', t, 'PostgreSQL: a PATCH held before its commit: others\' PATCHes run beside it, one of its event waits for it (412)', async (t) => {
  const { a, b, problems } = await twoNodes(t)
  const editor = await a.auth('editor')
  const dates = { start_date: '2026-07-04 20:00:00', end_date: '2026-07-04 22:00:00', status: 'publish' }
  const one = (await a.inject({ method: 'POST', url: `${API}/events`, headers: editor, payload: { title: 'One', ...dates } })).json<{ id: number }>().id
  const two = (await a.inject({ method: 'POST', url: `${API}/events`, headers: editor, payload: { title: 'Two', ...dates } })).json<{ id: number }>().id
  const tag = (await a.inject({ method: 'GET', url: `${API}/events/${one}`, headers: editor })).headers.etag as string

  const { reached, release } = holdAtLogLock(t)
  const first = a.inject({ method: 'PATCH', url: `${API}/events/${one}`, headers: { ...editor, 'if-match': tag }, payload: { excerpt: 'first' } })
  const heldPid = await reached
  // Another event's PATCH on the other node: answered while the first is held (beside it, not behind it).
  const other = await b({ method: 'PATCH', url: `${API}/events/${two}`, headers: editor, payload: { excerpt: 'beside' } })
  t.equal(other.statusCode, 200, 'a PATCH of another event answered while the first waits for its commit')
  // The same event with the same tag: it waits for the held one's row, then finds the version moved on.
  let done = false
  const second = b({ method: 'PATCH', url: `${API}/events/${one}`, headers: { ...editor, 'if-match': tag }, payload: { excerpt: 'second' } })
    .finally(() => { done = true })
  const blocked = async () => (await sql<{ n: number }>`select count(*)::int as n from pg_stat_activity where ${heldPid} = any(pg_blocking_pids(pid))`.execute(a.db)).rows[0]?.n === 1
  while (!done && !(await blocked())) await new Promise((resolve) => setImmediate(resolve))
  t.notOk(done, 'the second PATCH of the event waits for the first')
  release()
  const [firstRes, secondRes] = await Promise.all([first, second])
  t.same([firstRes.statusCode, secondRes.statusCode], [200, 412], 'the first took, the second (its tag stale once the first committed) refused')
  t.equal((await b({ method: 'GET', url: `${API}/events/${one}`, headers: editor })).json<{ excerpt: string }>().excerpt, 'first')
  t.same(problems, [], 'the second node\'s answers as the contract says')
})

engineTest('postgres', t, 'PostgreSQL: a translation\'s create held before its commit: a status PATCH of its source waits, then reports the new version changed', async (t) => {
  const { a, b, problems } = await twoNodes(t)
  const editor = await a.auth('editor')
  const dates = { start_date: '2026-07-05 20:00:00', end_date: '2026-07-05 22:00:00', status: 'publish' }
  const source = (await a.inject({ method: 'POST', url: `${API}/events`, headers: editor, payload: { title: 'Source', ...dates } })).json<{ id: number }>().id

  const { reached, release } = holdAtLogLock(t)
  const create = a.inject({ method: 'POST', url: `${API}/events?ml_language=de`, headers: editor, payload: { title: 'Quelle', ...dates, translation_of: source } })
  const heldPid = await reached
  let done = false
  const patch = b({ method: 'PATCH', url: `${API}/events/${source}`, headers: editor, payload: { status: 'draft' } })
    .finally(() => { done = true })
  const blocked = async () => (await sql<{ n: number }>`select count(*)::int as n from pg_stat_activity where ${heldPid} = any(pg_blocking_pids(pid))`.execute(a.db)).rows[0]?.n === 1
  while (!done && !(await blocked())) await new Promise((resolve) => setImmediate(resolve))
  t.notOk(done, 'the PATCH of the source waits for the create that joins its group')
  release()
  const [created, patched] = await Promise.all([create, patch])
  t.same([created.statusCode, patched.statusCode], [201, 200])
  const translation = created.json<{ id: number }>().id
  // The PATCH saw the new version: it moved it on and logged it, after its create (who may read the source changed).
  const row = await a.db.selectFrom('events').select('version').where('id', '=', translation).executeTakeFirstOrThrow()
  t.equal(row.version, 2, 'the translation\'s version moved on by the source\'s status change')
  const actions = (await a.db.selectFrom('changes').select(['action', 'position']).where('resource', '=', 'events').where('record_id', '=', translation)
    .orderBy('position').execute()).map((r) => r.action)
  t.same(actions.slice(-1), ['updated'], 'its last entry of the log: updated, after its create')
  t.same(problems, [], 'the second node\'s answers as the contract says')
})
