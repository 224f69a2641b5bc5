/**
 * Several nodes on one database (CONTRACT §15): two server processes, A and B, on one database of the
 * engine under test (one SQLite file; one PostgreSQL schema with TEST_DATABASE=postgres), both with
 * their read cache on. A write acknowledged by one is read at once on the other, hundreds of times:
 * records by id and by slug, what embeds them (an event shows its venue, organizer and terms), list
 * pages and totals, term counts, ETags (the reader's ETag is the one the writer answered, and
 * If-None-Match with the tag from before the write is a 200 with the new state, never a 304), and the
 * api-key command's changes (a key it makes works on both, a key it revokes is refused by both at the
 * next request). Each check reads on the reader before the write as well, so that the value the write
 * makes stale sits in the reader's cache: the metrics (CALENDAR_METRICS) show that both caches served
 * hits all along, so the test proves the caches exact, not absent.
 *
 * Then A is killed (SIGKILL) while both write and read: B keeps answering reads and writes without an
 * error, and what A acknowledged before it died is there on B.
 *
 * And nodes that start at once on a new database migrate it once (CONTRACT §15).
 *
 * Every answer is checked against the contract. Bounded: ROUNDS rounds of a fixed sequence of writes,
 * no timing (the kill comes after a count of A's acknowledged writes), every request with a timeout,
 * on 127.0.0.1 only.
 */
import t, { type Test } from 'tap'
import { spawn } from 'node:child_process'
import { join } from 'node:path'
import { openDatabase } from '../src/db/database.js'
import { migrationsApplied } from '../src/db/migrate.js'
import { contractProblems } from './helpers/contract.js'
import { freshDatabaseUrl } from './helpers/database.js'
import { freePort } from './helpers/net.js'
import { REQUEST_TIMEOUT_MS, apiKeyCommand, editorKey, startServer, type Server } from './helpers/server.js'
import { TYPESCRIPT } from './helpers/typescript.js'

const ROOT = new URL('..', import.meta.url).pathname
const ROUNDS = Number(process.env.NODES_ROUNDS ?? 60)

type Json = Record<string, unknown>
interface Answer { status: number; body: Json; etag: string | null; total: string | null }

/** A date-time some days from now (the lists' default window starts today). */
function day(offset: number, hour: number): string {
  const d = new Date(Date.now() + offset * 86_400_000)
  return `${d.toISOString().slice(0, 10)} ${String(hour).padStart(2, '0')}:00:00`
}

/** The value of a sample line `name{labels} value` in Prometheus text (0 when absent). */
function sample(text: string, name: string, label: string): number {
  const line = text.split('\n').find((l) => l.startsWith(`${name}{`) && l.includes(label))
  return line === undefined ? 0 : Number(line.slice(line.lastIndexOf(' ') + 1))
}

t.test('two nodes on one database: every read after a write on the other node sees it; one killed, the other serves on', async (t) => {
  const file = await freshDatabaseUrl(t, join(t.testdir(), 'calendar.db'))
  const key = await editorKey(file)
  // The revoked key is sent on purpose: no throttling of failed authentication here.
  const env = { CALENDAR_METRICS: 'true', CALENDAR_AUTH_FAILURE_LIMIT: '0' }
  const A = await startServer(t, file, await freePort(), env)
  const B = await startServer(t, file, await freePort(), env)
  const editor = { authorization: `Bearer ${key}` }
  const problems: string[] = []
  const stale: string[] = []
  let checks = 0

  async function send(node: Server, method: string, path: string, headers: Record<string, string> = {}, body?: Json): Promise<Answer> {
    const res = await fetch(`${node.base}${path}`, {
      method,
      headers: { ...headers, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
    })
    const text = await res.text()
    problems.push(...contractProblems(method, `${node.base}${path}`, { statusCode: res.status, headers: Object.fromEntries(res.headers), body: text }))
    const parsed: unknown = text === '' ? {} : JSON.parse(text)
    return {
      status: res.status,
      body: typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed) ? parsed as Json : {},
      etag: res.headers.get('etag'),
      total: res.headers.get('x-total'),
    }
  }
  const name = (node: Server) => (node === A ? 'A' : 'B')
  /** A write that must succeed. */
  async function write(node: Server, method: string, path: string, body?: Json, expected = method === 'POST' && !/\/\d+$/.test(path) ? 201 : 200): Promise<Answer> {
    const answer = await send(node, method, path, editor, body)
    if (answer.status !== expected) throw new Error(`${method} ${path} on ${name(node)}: ${answer.status} ${JSON.stringify(answer.body).slice(0, 300)}`)
    return answer
  }
  /** A read on `node` that must show what `holds` asks (after a write on the other node). */
  async function expectRead(node: Server, path: string, what: string, holds: (a: Answer) => boolean, headers: Record<string, string> = {}): Promise<Answer> {
    const answer = await send(node, 'GET', path, headers)
    checks += 1
    if (!holds(answer)) stale.push(`${what}: GET ${path} on ${name(node)} → ${answer.status} ${answer.etag ?? ''} ${answer.total ?? ''} ${JSON.stringify(answer.body).slice(0, 300)}`)
    return answer
  }
  /** Reads `paths` on `node` twice: the answers are then in its cache (the second read is a hit). */
  async function warm(node: Server, paths: readonly string[], headers: Record<string, string> = {}): Promise<void> {
    for (let i = 0; i < 2; i++) for (const path of paths) await send(node, 'GET', path, headers)
  }
  const field = (a: Answer, key: string) => a.body[key]
  const list = (a: Answer, key: string) => (Array.isArray(a.body[key]) ? a.body[key] as Json[] : [])

  // The linked records every event of the run uses: two of each, so that a round can move an event.
  const categories = [(await write(A, 'POST', '/categories', { name: 'Concerts' })).body.id, (await write(B, 'POST', '/categories', { name: 'Theatre' })).body.id] as number[]
  const tags = [(await write(A, 'POST', '/tags', { name: 'outdoor' })).body.id, (await write(B, 'POST', '/tags', { name: 'free' })).body.id] as number[]
  const venues = [(await write(A, 'POST', '/venues', { venue: 'Volkshaus', city: 'Wien' })).body.id, (await write(B, 'POST', '/venues', { venue: 'Stadthalle', city: 'Graz' })).body.id] as number[]
  const organizers = [(await write(A, 'POST', '/organizers', { organizer: 'Jazz Club' })).body.id, (await write(B, 'POST', '/organizers', { organizer: 'Theatre Guild' })).body.id] as number[]
  const metricsBefore = await Promise.all([A, B].map(async (node) => (await fetch(`${node.base.replace(/\/calendar.*$/, '')}/metrics`, { signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS) })).text()))

  const published: number[] = []
  const count = [0, 0]
  for (let round = 0; round < ROUNDS; round++) {
    const [W, R] = round % 2 === 0 ? [A, B] : [B, A]
    const c = round % 2
    const listPaths = ['/events?per_page=1', `/events?categories=${categories[c]}&per_page=50`, `/events?venue=${venues[c]}&per_page=1`,
      `/events?organizer=${organizers[c]}&per_page=1`, `/events?tags=${tags[c]}&per_page=1`, `/categories/${categories[c]}`, `/tags/${tags[c]}`,
      '/categories?hide_empty=true', '/tags?hide_empty=true&orderby=count&order=desc', `/venues/${venues[c]}`, '/venues?per_page=50', '/organizers?per_page=50']
    await warm(R, listPaths)

    // 1. A new event on W: on R at once, by id, by slug, in every list it belongs to, in its terms' counts.
    const title = `Round ${round} gig`
    const created = await write(W, 'POST', '/events', {
      title, status: 'publish', start_date: day(1 + (round % 30), 19), end_date: day(1 + (round % 30), 22),
      categories: [categories[c]], tags: [tags[c]], venue: [venues[c]], organizer: [organizers[c]],
    })
    const id = created.body.id as number
    const slug = created.body.slug as string
    published.push(id)
    count[c] = (count[c] ?? 0) + 1
    const total = published.length
    await expectRead(R, `/events/${id}`, 'a new event by id', (a) => a.status === 200 && field(a, 'title') === title, editor)
    await expectRead(R, `/events/by-slug/${slug}`, 'a new event by slug', (a) => a.status === 200 && field(a, 'id') === id)
    await expectRead(R, '/events?per_page=1', 'the event list total', (a) => a.total === String(total) && field(a, 'total') === total)
    await expectRead(R, `/events?categories=${categories[c]}&per_page=50`, 'the category filter', (a) => list(a, 'events').some((e) => e.id === id) && field(a, 'total') === count[c])
    await expectRead(R, `/events?venue=${venues[c]}&per_page=1`, 'the venue filter', (a) => field(a, 'total') === count[c])
    await expectRead(R, `/events?organizer=${organizers[c]}&per_page=1`, 'the organizer filter', (a) => field(a, 'total') === count[c])
    await expectRead(R, `/events?tags=${tags[c]}&per_page=1`, 'the tag filter', (a) => field(a, 'total') === count[c])
    await expectRead(R, `/categories/${categories[c]}`, 'the category count', (a) => field(a, 'count') === count[c])
    await expectRead(R, `/tags/${tags[c]}`, 'the tag count', (a) => field(a, 'count') === count[c])
    await expectRead(R, '/categories?hide_empty=true', 'the non-empty categories', (a) => list(a, 'categories').length === (count[1] === 0 ? 1 : 2))
    await expectRead(R, '/tags?hide_empty=true&orderby=count&order=desc', 'tags by count', (a) => list(a, 'tags')[0]?.count === Math.max(count[0] ?? 0, count[1] ?? 0))

    // 2. An update on W after R cached the event: R gives the ETag W answered; the old one is a 200.
    await warm(R, [`/events/${id}`, `/events/by-slug/${slug}`], editor)
    const before = await send(R, 'GET', `/events/${id}`, editor)
    const renamed = `${title} (moved)`
    const newSlug = `${slug}-moved`
    const updated = await write(W, 'PATCH', `/events/${id}`, { title: renamed, slug: newSlug }, 200)
    await expectRead(R, `/events/${id}`, 'an updated event with the old ETag', (a) => a.status === 200 && field(a, 'title') === renamed
      && a.etag === updated.etag && a.etag !== before.etag, { ...editor, 'if-none-match': before.etag ?? '' })
    await expectRead(R, `/events/${id}`, 'the new ETag revalidates', (a) => a.status === 304, { ...editor, 'if-none-match': updated.etag ?? '' })
    await expectRead(R, `/events/by-slug/${newSlug}`, 'the new slug', (a) => a.status === 200 && field(a, 'id') === id)
    await expectRead(R, `/events/by-slug/${slug}`, 'the old slug', (a) => a.status === 404)

    // 3. A venue, an organizer and a term renamed on W: R shows the new names, in the records that embed them too.
    if (round % 3 === 0) {
      const venue = `Hall ${round}`
      const organizer = `Crew ${round}`
      const category = `Genre ${round}`
      const tag = `label-${round}`
      await warm(R, [`/events/${id}`, `/venues/${venues[c]}`, `/organizers/${organizers[c]}`, `/categories/${categories[c]}`, `/tags/${tags[c]}`], editor)
      const venueBefore = await send(R, 'GET', `/venues/${venues[c]}`, editor)
      const categoryBefore = await send(R, 'GET', `/categories/${categories[c]}`, editor)
      const v = await write(W, 'PATCH', `/venues/${venues[c]}`, { venue })
      await write(W, 'PATCH', `/organizers/${organizers[c]}`, { organizer })
      const g = await write(W, 'PATCH', `/categories/${categories[c]}`, { name: category })
      await write(W, 'PATCH', `/tags/${tags[c]}`, { name: tag })
      await expectRead(R, `/venues/${venues[c]}`, 'a renamed venue with its old ETag', (a) => a.status === 200 && field(a, 'venue') === venue && a.etag === v.etag, { ...editor, 'if-none-match': venueBefore.etag ?? '' })
      await expectRead(R, `/categories/${categories[c]}`, 'a renamed category with its old ETag', (a) => a.status === 200 && field(a, 'name') === category && a.etag === g.etag, { ...editor, 'if-none-match': categoryBefore.etag ?? '' })
      await expectRead(R, `/organizers/${organizers[c]}`, 'a renamed organizer', (a) => field(a, 'organizer') === organizer)
      await expectRead(R, `/events/${id}`, 'an event showing what was renamed', (a) => list(a, 'venue')[0]?.venue === venue && list(a, 'organizer')[0]?.organizer === organizer
        && list(a, 'categories')[0]?.name === category && list(a, 'tags')[0]?.name === tag, editor)
      await expectRead(R, '/venues?per_page=50', 'the venue list', (a) => list(a, 'venues').some((x) => x.venue === venue))
      await expectRead(R, '/organizers?per_page=50', 'the organizer list', (a) => list(a, 'organizers').some((x) => x.organizer === organizer))
    }

    // 4. Every fourth round the event before goes to the trash on W: gone from R's lists and counts.
    if (round % 4 === 3) {
      const trashed = published.splice(published.length - 2, 1)[0] as number
      const tc = (round - 1) % 2
      await warm(R, [`/events/${trashed}`, '/events?per_page=1', `/categories/${categories[tc]}`])
      await write(W, 'DELETE', `/events/${trashed}`)
      count[tc] = (count[tc] ?? 0) - 1
      await expectRead(R, `/events/${trashed}`, 'a trashed event', (a) => a.status === 410)
      await expectRead(R, `/events/${trashed}`, 'a trashed event, as the editor', (a) => a.status === 410, editor)
      await expectRead(R, '/events?per_page=1', 'the total after a trash', (a) => field(a, 'total') === published.length)
      await expectRead(R, `/categories/${categories[tc]}`, 'the count after a trash', (a) => field(a, 'count') === count[tc])
      await expectRead(R, `/tags/${tags[tc]}`, 'the tag count after a trash', (a) => field(a, 'count') === count[tc])
    }
  }

  // The api-key command while both run: a key it makes works on both, a key it revokes is refused by both.
  const made = await apiKeyCommand(file, ['create', '--role', 'editor', '--name', 'temporary'])
  t.equal(made.code, 0, `api-key create: ${made.stderr}`)
  const temporary = { authorization: `Bearer ${made.stdout.trim()}` }
  const draft = (await write(A, 'POST', '/events', { title: 'A draft', status: 'draft', start_date: day(5, 10), end_date: day(5, 11) })).body.id as number
  await warm(A, [`/events/${draft}`], temporary)
  await warm(B, [`/events/${draft}`], temporary)
  t.same([(await send(A, 'GET', `/events/${draft}`, temporary)).status, (await send(B, 'GET', `/events/${draft}`, temporary)).status,
    (await send(A, 'POST', '/tags', temporary, { name: 'by the new key on A' })).status, (await send(B, 'POST', '/tags', temporary, { name: 'by the new key on B' })).status],
  [200, 200, 201, 201], 'a key the command made works on both nodes at once (a draft shown, a write taken)')
  const revoked = await apiKeyCommand(file, ['revoke', 'temporary'])
  t.equal(revoked.code, 0, `api-key revoke: ${revoked.stderr}`)
  const anonymous = (await send(B, 'GET', `/events/${draft}`)).status
  t.not(anonymous, 200, 'a draft is not shown anonymously')
  // A revoked key is no key: a read gets what an anonymous one gets, a write is a 401.
  t.same([(await send(A, 'POST', '/tags', temporary, { name: 'refused' })).status, (await send(B, 'GET', `/events/${draft}`, temporary)).status,
    (await send(B, 'POST', '/tags', temporary, { name: 'refused' })).status, (await send(A, 'GET', `/events/${draft}`, temporary)).status],
  [401, anonymous, 401, anonymous], 'a key the command revoked is refused by both nodes at the next request')

  const metricsAfter = await Promise.all([A, B].map(async (node) => (await fetch(`${node.base.replace(/\/calendar.*$/, '')}/metrics`, { signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS) })).text()))
  for (const [i, node] of ['A', 'B'].entries()) {
    const before = metricsBefore[i] ?? ''
    const after = metricsAfter[i] ?? ''
    const hits = (kind: string) => sample(after, 'calendar_read_cache_hits_total', `kind="${kind}"`) - sample(before, 'calendar_read_cache_hits_total', `kind="${kind}"`)
    t.ok(hits('records') >= ROUNDS, `${node}'s read cache served records all along (${hits('records')} hits)`)
    t.ok(hits('results') >= ROUNDS, `${node}'s read cache served list results all along (${hits('results')} hits)`)
  }
  t.ok(checks >= 10 * ROUNDS, `${checks} reads right after a write on the other node`)
  t.same(stale.slice(0, 5), [], `every read after a write on the other node saw it (${stale.length} of ${checks} did not)`)

  // A is killed while both write and read: B answers every request, and keeps what A acknowledged.
  const acknowledgedByA: number[] = []
  const failuresOnB: string[] = []
  let killed = false
  const onA = (async () => {
    // Bounded: A is killed after 20 acknowledged writes, or after 60 tries whatever it acknowledged.
    for (let i = 0; !killed; i++) {
      try {
        const res = await send(A, 'POST', '/events', editor, { title: `On A ${i}`, status: 'publish', start_date: day(2, 10), end_date: day(2, 11), categories: [categories[0]] })
        if (res.status === 201) acknowledgedByA.push(res.body.id as number)
        await send(A, 'GET', `/events?categories=${categories[0]}&per_page=5`)
      } catch {
        // A's answers end when it dies.
      }
      if ((acknowledgedByA.length === 20 || i === 60) && !killed) {
        killed = true
        A.child.kill('SIGKILL')
      }
    }
  })()
  const onB = (async () => {
    // Until A is killed, then 30 rounds more.
    for (let i = 0, afterKill = 0; afterKill < 30; i++) {
      if (killed) afterKill += 1
      const steps: Array<[string, string, Json | undefined, number]> = [
        ['POST', '/events', { title: `On B ${i}`, status: 'publish', start_date: day(3, 10), end_date: day(3, 11), categories: [categories[1]] }, 201],
        ['GET', `/events?categories=${categories[1]}&per_page=5`, undefined, 200],
        ['GET', `/categories/${categories[0]}`, undefined, 200],
        ['GET', '/events?per_page=1', undefined, 200],
      ]
      for (const [method, path, body, expected] of steps) {
        try {
          const res = await send(B, method, path, method === 'GET' ? {} : editor, body)
          if (res.status !== expected) failuresOnB.push(`${method} ${path}: ${res.status} ${JSON.stringify(res.body).slice(0, 200)}`)
        } catch (error) {
          failuresOnB.push(`${method} ${path}: ${String(error)}`)
        }
      }
    }
  })()
  await Promise.all([onA, onB])
  t.same((await A.exited).signal, 'SIGKILL', 'A was killed')
  t.same(failuresOnB, [], 'B answered every read and write while A died and after')
  const seen = await send(B, 'GET', `/events?categories=${categories[0]}&per_page=50&page=1`, editor)
  const ids = new Set(list(seen, 'events').map((e) => e.id))
  for (let page = 2; page <= Number(seen.body.total_pages ?? 1); page++) {
    for (const e of list(await send(B, 'GET', `/events?categories=${categories[0]}&per_page=50&page=${page}`, editor), 'events')) ids.add(e.id)
  }
  t.same(acknowledgedByA.filter((id) => !ids.has(id)), [], `every event A acknowledged before it died is there on B (${acknowledgedByA.length})`)
  const after = await send(B, 'POST', '/events', editor, { title: 'After the kill', status: 'publish', start_date: day(4, 10), end_date: day(4, 11) })
  t.equal(after.status, 201, 'B still writes')
  t.equal((await send(B, 'GET', `/events/${String(after.body.id)}`)).status, 200, 'and reads what it wrote')

  t.same(problems.slice(0, 5), [], 'every answer keeps the contract')
  t.notMatch(B.stderr(), /Error|SQLITE_BUSY/, 'no error logged by B')
})

/**
 * A process that opens (and so migrates) the database at `url` when told to: it loads the code first,
 * says `ready`, and opens on the first line it reads, so that several open at the same moment.
 */
function opener(t: Test, url: string): { ready: Promise<void>; go(): void; done: Promise<{ code: number | null; output: string }> } {
  const code = `const { openDatabase } = await import('./src/db/database.ts')
process.stdout.write('ready\\n')
process.stdin.once('data', async () => {
  const handle = await openDatabase(process.env.DATABASE_URL)
  await handle.close()
  process.stdout.write('opened\\n')
  process.exit(0)
})`
  const env: Record<string, string | undefined> = { ...process.env, DATABASE_URL: url, NODE_OPTIONS: '' }
  delete env.NODE_V8_COVERAGE
  const child = spawn(process.execPath, [...TYPESCRIPT, '--input-type=module', '-e', code], { cwd: ROOT, env, stdio: ['pipe', 'pipe', 'pipe'] })
  t.teardown(() => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL')
  })
  let output = ''
  const ready = new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`not ready within 30 s: ${output}`)), 30_000)
    child.stdout.on('data', (chunk: Buffer) => {
      output += chunk.toString()
      if (output.includes('ready')) {
        clearTimeout(timer)
        resolve()
      }
    })
  })
  child.stderr.on('data', (chunk: Buffer) => { output += chunk.toString() })
  const done = new Promise<{ code: number | null; output: string }>((resolve) => {
    const timer = setTimeout(() => child.kill('SIGKILL'), 60_000)
    child.once('exit', (exit) => {
      clearTimeout(timer)
      resolve({ code: exit, output })
    })
  })
  return { ready, go: () => child.stdin.write('go\n'), done }
}

t.test('nodes starting at once on a new database migrate it once', async (t) => {
  const file = await freshDatabaseUrl(t, join(t.testdir(), 'calendar.db'))
  // Four processes open one new database at the same moment: each migrates on open, as a node on start.
  const openers = Array.from({ length: 4 }, () => opener(t, file))
  await Promise.all(openers.map((o) => o.ready))
  for (const o of openers) o.go()
  const ended = await Promise.all(openers.map((o) => o.done))
  t.same(ended.filter((e) => e.code !== 0 || !e.output.includes('opened')), [], 'every process opened the database')
  const handle = await openDatabase(file)
  t.teardown(() => handle.close())
  const applied = await handle.db.selectFrom('kysely_migration' as never).select('name' as never).execute() as Array<{ name: string }>
  const names = applied.map((r) => r.name)
  t.same(names, [...new Set(names)].sort(), 'every migration applied once, in order')
  t.ok(await migrationsApplied(handle.db), `all ${names.length} migrations applied`)
})
