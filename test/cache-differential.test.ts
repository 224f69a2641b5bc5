/**
 * The read cache and the stored event documents as a differential oracle (CONTRACT §15: "a read on any
 * node after a write acknowledged by any node returns the written state"): two server processes on one
 * SQLite file, C with the read cache and the documents (the default) and D with neither
 * (`CALENDAR_CACHE_ENTRIES=0`, `CALENDAR_EVENT_DOCUMENTS=false`): every read of D assembles. Seeded random writes go through either
 * server, and through the api-key command (keys are not cached: a key created or revoked counts on both
 * from the next request). After every write, random reads by several callers (anonymous, editor, authors,
 * a contributor, a revoked key) go to both: records by id and by slug (plain, conditional, in another
 * language), lists with filters and pages, term lists, `GET /changes` from fixed cursors. Every answer of
 * C must equal D's: status, body, and the headers ETag, X-Total, X-Total-Pages, Link.
 *
 * Then the race: D renames a category or a venue (or moves a term, changes a venue's status) while a burst
 * of concurrent GETs hits C (events embedding it, term and event lists, /changes); once the write is
 * acknowledged and nothing else is written, C must answer exactly what D answers, several times over.
 * And the other order: D writes while C is idle, then a burst of concurrent GETs hits C, each answer
 * compared with D's (a read begun after the acknowledgement must see the write, §15).
 *
 * Bounded: CACHE_DIFF_WRITES writes (default 150), a few reads per write, CACHE_DIFF_RACES races
 * (default 12); CACHE_DIFF_SEED changes the seed; CACHE_DIFF_LOG=1 prints the refused writes. On
 * 127.0.0.1 only; every request has a timeout.
 */
import t from 'tap'
import assert from 'node:assert/strict'
import { join } from 'node:path'
import { openDatabase } from '../src/db/database.js'
import { generateKey, type Role } from '../src/lib/api-keys.js'
import { createUserWithKey } from '../src/repositories/users.js'
import { withTransaction } from '../src/db/unit-of-work.js'
import { freePort } from './helpers/net.js'
import { REQUEST_TIMEOUT_MS, apiKeyCommand, startServer } from './helpers/server.js'
import { freshDatabaseUrl } from './helpers/database.js'
import { propertyRuns, propertySeed } from './helpers/property.js'

const SEED = Number(process.env.CACHE_DIFF_SEED ?? propertySeed(424242))
const WRITES = Number(process.env.CACHE_DIFF_WRITES ?? propertyRuns(150))
const RACES = Number(process.env.CACHE_DIFF_RACES ?? propertyRuns(12))
const READS_PER_WRITE = Number(process.env.CACHE_DIFF_READS ?? 10)
const BURST = 30

type Json = Record<string, unknown>
type Res = 'events' | 'venues' | 'organizers' | 'categories' | 'tags'
type Who = 'anon' | 'editor' | 'author' | 'contributor' | 'author2' | 'revoked'
const RESOURCES: readonly Res[] = ['events', 'venues', 'organizers', 'categories', 'tags']
const STATUSES = ['publish', 'publish', 'publish', 'draft', 'pending', 'private'] as const

/** A small seeded generator (mulberry32): the same writes and reads on every run. */
function random(seed: number) {
  let a = seed >>> 0
  const next = () => {
    a = (a + 0x6d2b79f5) >>> 0
    let x = a
    x = Math.imul(x ^ (x >>> 15), x | 1)
    x ^= x + Math.imul(x ^ (x >>> 7), x | 61)
    return ((x ^ (x >>> 14)) >>> 0) / 4294967296
  }
  const int = (n: number) => Math.floor(next() * n)
  const pick = <T>(items: readonly T[]): T | undefined => (items.length === 0 ? undefined : items[int(items.length)])
  const chance = (p: number) => next() < p
  const some = <T>(items: readonly T[], max: number): T[] => [...new Set(Array.from({ length: int(max + 1) }, () => pick(items)).filter((x): x is T => x !== undefined))]
  return { next, int, pick, chance, some }
}

/** What is compared of an answer. */
interface Answer { status: number; body: string; etag: string | null; total: string | null; pages: string | null; link: string | null }

async function send(base: string, method: string, path: string, headers: Record<string, string>, body?: Json): Promise<Answer> {
  const res = await fetch(`${base}${path}`, {
    method,
    headers: { ...headers, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
  })
  return {
    status: res.status,
    body: await res.text(),
    etag: res.headers.get('etag'),
    total: res.headers.get('x-total'),
    pages: res.headers.get('x-total-pages'),
    link: res.headers.get('link'),
  }
}

/** Where two texts part: the first difference, with some context on each side. */
function where(c: string, d: string): string {
  let i = 0
  while (i < c.length && i < d.length && c[i] === d[i]) i++
  const from = Math.max(0, i - 250)
  return `at ${i}: C …${c.slice(from, i + 150)}… | D …${d.slice(from, i + 150)}…`
}

async function seedKeys(file: string): Promise<Record<'editor' | 'author' | 'contributor', string>> {
  const handle = await openDatabase(file)
  try {
    const out: Partial<Record<'editor' | 'author' | 'contributor', string>> = {}
    for (const role of ['editor', 'author', 'contributor'] as const satisfies readonly Role[]) {
      const key = generateKey()
      await withTransaction(handle.db, (trx) => createUserWithKey(trx, role, key, '2026-01-01 00:00:00', `seed-${role}`))
      out[role] = key
    }
    return out as Record<'editor' | 'author' | 'contributor', string>
  } finally {
    await handle.close()
  }
}

/** A date-time some days from now, as the body takes it (the lists' default window starts today). */
function day(offset: number, hour: number): string {
  const d = new Date(Date.now() + offset * 86_400_000)
  return `${d.toISOString().slice(0, 10)} ${String(hour).padStart(2, '0')}:00:00`
}

t.test('a server with the read cache answers every read exactly as one without it', async (t) => {
  const started = Date.now()
  const file = await freshDatabaseUrl(t, join(t.testdir(), 'calendar.db'))
  const keys = await seedKeys(file)
  // Revoked and unknown keys are sent on purpose, many times: no throttling of failed authentication here.
  const C = await startServer(t, file, await freePort(), { CALENDAR_CACHE_ENTRIES: '2500', CALENDAR_AUTH_FAILURE_LIMIT: '0' })
  const D = await startServer(t, file, await freePort(), { CALENDAR_CACHE_ENTRIES: '0', CALENDAR_EVENT_DOCUMENTS: 'false', CALENDAR_AUTH_FAILURE_LIMIT: '0' })
  const rnd = random(SEED)
  const headers: Record<Who, Record<string, string>> = {
    anon: {},
    editor: { authorization: `Bearer ${keys.editor}` },
    author: { authorization: `Bearer ${keys.author}` },
    contributor: { authorization: `Bearer ${keys.contributor}` },
    author2: {},
    revoked: {},
  }
  const ids: Record<Res, number[]> = { events: [], venues: [], organizers: [], categories: [], tags: [] }
  const language = new Map<string, string>()
  const inLanguage = (r: Res, lang: string) => ids[r].filter((id) => language.get(`${r}:${id}`) === lang)
  const slugs: Record<Res, string[]> = { events: [], venues: [], organizers: [], categories: [], tags: [] }
  const counts = { writes: 0, accepted: 0, reads: 0, compared: 0, keys: 0, races: 0, burst: 0 }
  const differences: string[] = []
  const outcomes = new Map<string, number>()
  let cursors: string[] = []

  /** Sends the same read to C and D at once and compares what matters. */
  async function both(path: string, who: Who, extra: Record<string, string> = {}): Promise<Answer> {
    const [c, d] = await Promise.all([send(C.base, 'GET', path, { ...headers[who], ...extra }), send(D.base, 'GET', path, { ...headers[who], ...extra })])
    counts.reads += 1
    counts.compared += 1
    if (c.status >= 500 || d.status >= 500) differences.push(`GET ${path} as ${who}: ${c.status}/${d.status} ${d.body.slice(0, 200)}`)
    if (JSON.stringify(c) !== JSON.stringify(d)) {
      const fields = (Object.keys(c) as Array<keyof Answer>).filter((k) => c[k] !== d[k])
      differences.push(`GET ${path} as ${who} after ${counts.writes} writes: ${fields.map((f) => `${f}: ${where(String(c[f]), String(d[f]))}`).join(' ; ')}`)
    }
    return d
  }

  function learn(res: Res, body: string): void {
    let parsed: unknown
    try {
      parsed = JSON.parse(body)
    } catch {
      return
    }
    const visit = (r: Res, record: unknown) => {
      if (typeof record !== 'object' || record === null) return
      const { id, slug, ml_language: lang } = record as { id?: unknown; slug?: unknown; ml_language?: unknown }
      if (typeof id === 'number' && !ids[r].includes(id)) ids[r].push(id)
      if (typeof id === 'number' && typeof lang === 'string') language.set(`${r}:${id}`, lang)
      if (typeof slug === 'string' && !slugs[r].includes(slug)) slugs[r].push(slug)
    }
    const record = (parsed as { previous?: unknown }).previous ?? parsed
    visit(res, record)
    if (res === 'events' && typeof record === 'object' && record !== null) {
      const e = record as { venue?: unknown[]; organizer?: unknown[]; categories?: unknown[]; tags?: unknown[] }
      for (const v of e.venue ?? []) visit('venues', v)
      for (const o of e.organizer ?? []) visit('organizers', o)
      for (const c of e.categories ?? []) visit('categories', c)
      for (const g of e.tags ?? []) visit('tags', g)
    }
  }

  // -------------------------------------------------------------------------------------------------
  // Writes

  const writers: Who[] = ['editor', 'editor', 'editor', 'editor', 'editor', 'author', 'author', 'contributor']
  let n = 0
  const name = (prefix: string) => `${prefix} ${++n}`

  async function write(): Promise<void> {
    const who = rnd.pick(headers.author2.authorization === undefined ? writers : [...writers, 'author2' as Who]) ?? 'editor'
    const server = rnd.chance(0.5) ? C : D
    const res = rnd.pick(['events', 'events', 'events', 'venues', 'organizers', 'categories', 'tags'] as const) ?? 'events'
    const id = rnd.pick(ids[res])
    const kind = rnd.int(10)
    let method = 'POST'
    let path = `/${res}`
    let body: Json | undefined
    const links = (lang: string): Json => ({
      ...(rnd.chance(0.5) ? { categories: rnd.some(inLanguage('categories', lang), 2) } : {}),
      ...(rnd.chance(0.4) ? { tags: rnd.some(inLanguage('tags', lang), 2) } : {}),
      ...(rnd.chance(0.5) ? { venue: rnd.some(inLanguage('venues', lang), 1) } : {}),
      ...(rnd.chance(0.3) ? { organizer: rnd.some(inLanguage('organizers', lang), 2) } : {}),
    })
    if (kind < 4 || id === undefined) {
      // Create.
      const lang = rnd.chance(0.2) ? 'de' : 'en'
      const translate = lang === 'de' && rnd.chance(0.6) ? rnd.pick(ids[res]) : undefined
      body = { ml_language: lang, ...(translate === undefined ? {} : { translation_of: translate }) }
      if (res === 'categories' || res === 'tags') {
        body.name = name(res === 'categories' ? 'Genre' : 'Label')
        if (res === 'categories' && rnd.chance(0.4) && inLanguage('categories', lang).length > 0) body.parent = rnd.pick(inLanguage('categories', lang))
      } else {
        if (rnd.chance(0.8)) body.status = rnd.pick(STATUSES)
        if (res === 'events') {
          const start = rnd.int(40)
          Object.assign(body, { title: name('Gig'), start_date: day(start, 18), end_date: day(start, 21), ...links(lang) })
          if (rnd.chance(0.1)) body.featured = true
          if (rnd.chance(0.1)) body.venue = [{ venue: name('Inline hall'), city: 'Wien' }]
        } else {
          body[res === 'venues' ? 'venue' : 'organizer'] = name(res === 'venues' ? 'Hall' : 'Crew')
          if (res === 'venues') body.city = rnd.pick(['Wien', 'Graz', 'Linz'])
        }
      }
    } else if (kind < 8) {
      // Update: rename, status, links, slug, parent.
      method = rnd.pick(['PATCH', 'PATCH', 'PUT', 'POST']) ?? 'PATCH'
      path = `/${res}/${id}`
      body = {}
      const field = res === 'events' ? 'title' : res === 'venues' ? 'venue' : res === 'organizers' ? 'organizer' : 'name'
      if (rnd.chance(0.5)) body[field] = name('Renamed')
      if (res === 'categories' && rnd.chance(0.3)) body.parent = rnd.chance(0.3) ? 0 : rnd.pick(inLanguage('categories', language.get(`categories:${id}`) ?? 'en')) ?? 0
      if (rnd.chance(0.1)) body.slug = name('slug').replace(' ', '-')
      if (res === 'events' || res === 'venues' || res === 'organizers') {
        if (rnd.chance(0.3)) body.status = rnd.pick(STATUSES)
        if (res === 'events') Object.assign(body, links(language.get(`events:${id}`) ?? 'en'))
        if (res === 'events' && rnd.chance(0.1)) body.hide_from_listings = rnd.chance(0.5)
      }
    } else {
      // Trash (events, venues, organizers), delete for good, or restore.
      method = 'DELETE'
      path = `/${res}/${id}`
      if (res !== 'categories' && res !== 'tags') {
        const what = rnd.int(3)
        if (what === 1) path += '?force=true'
        if (what === 2) {
          method = 'PATCH'
          body = { status: rnd.pick(STATUSES) }
        }
      }
    }
    const answer = await send(server.base, method, path, headers[who], body)
    counts.writes += 1
    const outcome = `${method} ${res} ${answer.status}`
    outcomes.set(outcome, (outcomes.get(outcome) ?? 0) + 1)
    assert.ok(answer.status < 500, `${method} ${path} as ${who}: ${answer.status} ${answer.body.slice(0, 300)}`)
    if (process.env.CACHE_DIFF_LOG === '1' && answer.status >= 400) console.log(method, path, who, JSON.stringify(body), answer.status, answer.body.slice(0, 200))
    if (answer.status < 300) {
      counts.accepted += 1
      learn(res, answer.body)
    }
  }

  // -------------------------------------------------------------------------------------------------
  // Reads

  const readers: Who[] = ['anon', 'anon', 'editor', 'author', 'contributor', 'author2', 'revoked']
  function readPath(): string {
    const res = rnd.pick(RESOURCES) ?? 'events'
    const lang = rnd.chance(0.2) ? rnd.pick(['de', 'en', 'es']) : undefined
    const q = (params: Array<string | false | undefined>) => {
      const kept = params.filter((p): p is string => typeof p === 'string' && p !== '')
      return kept.length === 0 ? '' : `?${kept.join('&')}`
    }
    const ml = lang === undefined ? undefined : `ml_language=${lang}`
    switch (rnd.int(6)) {
      case 0:
      case 1:
        return `/${res}/${rnd.chance(0.95) ? rnd.pick(ids[res]) ?? 1 : 9999}${q([ml])}`
      case 2:
        return `/${res}/by-slug/${encodeURIComponent(rnd.pick(slugs[res]) ?? 'none')}${q([ml])}`
      case 3: {
        const common = [ml, rnd.chance(0.6) && `per_page=${1 + rnd.int(4)}`, rnd.chance(0.4) && `page=${1 + rnd.int(3)}`]
        if (res === 'events') {
          return `/events${q([...common,
            rnd.chance(0.3) && ids.categories.length > 0 && `categories=${rnd.some(ids.categories, 2).join(',')}`,
            rnd.chance(0.2) && ids.tags.length > 0 && `tags=${rnd.some(ids.tags, 1).join(',')}`,
            rnd.chance(0.2) && ids.venues.length > 0 && `venue=${rnd.pick(ids.venues)}`,
            rnd.chance(0.15) && `search=${rnd.pick(['gig', 'renamed', '1'])}`,
            rnd.chance(0.15) && `status=${rnd.pick(['publish', 'draft', 'pending', 'private'])}`,
            rnd.chance(0.1) && 'featured=true'])}`
        }
        if (res === 'categories' || res === 'tags') {
          return `/${res}${q([...common, rnd.chance(0.3) && `orderby=${rnd.pick(['count', 'name', 'id', 'slug'])}`, rnd.chance(0.3) && 'hide_empty=true',
            rnd.chance(0.2) && ids.events.length > 0 && `post=${rnd.pick(ids.events)}`, rnd.chance(0.2) && 'order=desc'])}`
        }
        return `/${res}${q([...common, rnd.chance(0.2) && `search=${rnd.pick(['hall', 'crew', 'wien', 'renamed'])}`,
          rnd.chance(0.2) && ids.events.length > 0 && `event=${rnd.pick(ids.events)}`,
          rnd.chance(0.15) && `status=${rnd.pick(['publish', 'draft'])}`])}`
      }
      default: {
        const since = rnd.pick(cursors)
        return `/changes${q([since !== undefined && `since=${since}`, rnd.chance(0.5) && `per_page=${1 + rnd.int(20)}`,
          rnd.chance(0.3) && `resource=${rnd.some(RESOURCES, 2).join(',') || 'events'}`, ml])}`
      }
    }
  }

  async function read(): Promise<void> {
    const who = rnd.pick(readers) ?? 'anon'
    const path = readPath()
    const d = await both(path, who)
    // A conditional read with the tag D gave: both 304 (or both the same full answer).
    if (d.etag !== null && rnd.chance(0.2)) await both(path, who, { 'if-none-match': d.etag })
  }

  /** The same reads again, as an exhaustive sweep: every record by id, every list's first page. */
  async function sweep(whos: readonly Who[]): Promise<void> {
    for (const who of whos) {
      for (const res of RESOURCES) {
        for (const id of ids[res]) await both(`/${res}/${id}`, who)
        await both(`/${res}?per_page=50`, who)
      }
      await both('/changes', who)
    }
  }

  // -------------------------------------------------------------------------------------------------
  // The run: keys through the command, writes, reads after each.

  const start = await send(D.base, 'GET', '/changes?since=now', {})
  cursors.push(String((JSON.parse(start.body) as { next_cursor: string }).next_cursor))
  for (let w = 0; w < WRITES; w++) {
    if (w === 10) {
      // A key made by the command while both servers run: it counts on both at once.
      const made = await apiKeyCommand(file, ['create', '--role', 'author', '--name', 'late-author'])
      t.equal(made.code, 0, `api-key create: ${made.stderr}`)
      headers.author2 = { authorization: `Bearer ${made.stdout.trim()}` }
      counts.keys += 1
      const [c, d] = await Promise.all([
        send(C.base, 'POST', '/venues', headers.author2, { venue: 'Made by the new key' }),
        send(D.base, 'POST', '/tags', headers.author2, { name: 'Refused for an author' }),
      ])
      t.same([c.status, d.status], [201, 403], 'the new key is known to both servers at once')
      if (c.status === 201) learn('venues', c.body)
    }
    if (w === Math.floor(WRITES / 2)) {
      const made = await apiKeyCommand(file, ['create', '--role', 'editor', '--name', 'short-lived'])
      t.equal(made.code, 0)
      const key = `Bearer ${made.stdout.trim()}`
      counts.keys += 1
      const made2 = await send(C.base, 'POST', '/categories', { authorization: key }, { name: 'By the short-lived key' })
      t.equal(made2.status, 201, `the new editor key works on C: ${made2.body.slice(0, 300)}`)
      headers.revoked = { authorization: key }
      await both('/changes', 'revoked')
      const revoked = await apiKeyCommand(file, ['revoke', 'short-lived'])
      t.equal(revoked.code, 0, `api-key revoke: ${revoked.stderr}`)
      counts.keys += 1
      const [c, d] = await Promise.all([
        send(C.base, 'POST', '/tags', headers.revoked, { name: 'After the revoke' }),
        send(D.base, 'POST', '/tags', headers.revoked, { name: 'After the revoke' }),
      ])
      t.same([c.status, d.status], [401, 401], 'a revoked key is refused by both servers from the next request')
      await both('/changes', 'revoked')
      cursors.push(String((JSON.parse((await send(D.base, 'GET', '/changes?since=now', {})).body) as { next_cursor: string }).next_cursor))
    }
    await write()
    for (let r = 0; r < READS_PER_WRITE; r++) await read()
    if (w % 50 === 49) cursors = [...cursors, String((JSON.parse((await send(D.base, 'GET', '/changes?since=now', {})).body) as { next_cursor: string }).next_cursor)]
  }
  await sweep(['anon', 'editor', 'author', 'contributor'])
  const randomPhase = differences.length
  t.same(differences.slice(0, 5), [], `random writes and reads: C and D answered alike (${counts.compared} reads compared, ${randomPhase} differ)`)

  // -------------------------------------------------------------------------------------------------
  // The race: D writes while a burst of reads hits C; afterwards C answers what D answers.

  const raceDifferences: string[] = []
  const ackDifferences: string[] = []
  for (let race = 0; race < RACES; race++) {
    const before = differences.length
    // A category and a venue linked to events, as the editor reads them.
    const events = JSON.parse((await send(D.base, 'GET', '/events?per_page=50', headers.editor)).body) as { events: Array<{ id: number; venue: Array<{ id: number; status: string }>; categories: Array<{ id: number }> }> }
    const withCategory = events.events.filter((e) => e.categories.length > 0)
    const withVenue = events.events.map((e) => ({ ...e, venue: e.venue.filter((v) => v.status !== 'trash') })).filter((e) => e.venue.length > 0)
    // Else any that still exists (the random phase deleted some it created; trashed venues refuse a rename).
    const live = async (path: string, key: 'categories' | 'venues') =>
      ((JSON.parse((await send(D.base, 'GET', path, headers.editor)).body) as Record<string, Array<{ id: number }> | undefined>)[key] ?? []).map((r) => r.id)
    const category = rnd.pick(rnd.pick(withCategory)?.categories ?? [])?.id ?? rnd.pick(await live('/categories?hide_empty=false&per_page=50', 'categories'))
    const venue = rnd.pick(rnd.pick(withVenue)?.venue ?? [])?.id ?? rnd.pick(await live('/venues?per_page=50', 'venues'))
    if (category === undefined || venue === undefined) continue
    const embedding = events.events.filter((e) => e.categories.some((c) => c.id === category) || e.venue.some((v) => v.id === venue)).map((e) => e.id)
    const burstPaths = [
      `/categories/${category}`, '/categories', '/categories?orderby=count&order=desc', `/venues/${venue}`, '/venues', '/events', `/events?categories=${category}`,
      `/events?venue=${venue}`, '/changes', `/changes?since=${cursors[0]}&per_page=7`, ...embedding.map((id) => `/events/${id}`),
    ]
    // Warm C's cache first, so that the burst has something to serve stale.
    for (const path of burstPaths) await send(C.base, 'GET', path, headers.editor)
    const burst: Array<Promise<unknown>> = []
    const who = (i: number): Who => (['anon', 'editor', 'author', 'contributor'] as const)[i % 4] ?? 'anon'
    for (let i = 0; i < BURST / 2; i++) burst.push(send(C.base, 'GET', burstPaths[i % burstPaths.length] ?? '/events', headers[who(i)]))
    const kind = race % 4
    const writeBody: Json = kind === 0 ? { name: name('Renamed category') } : kind === 1 ? { venue: name('Renamed venue'), city: rnd.pick(['Wien', 'Graz']) }
      : kind === 2 ? { parent: 0, name: name('Moved category') } : { status: rnd.pick(['draft', 'publish']) }
    const writePath = kind === 0 || kind === 2 ? `/categories/${category}` : `/venues/${venue}`
    const acknowledged = send(D.base, 'PATCH', writePath, headers.editor, writeBody)
    for (let i = BURST / 2; i < BURST; i++) burst.push(send(C.base, 'GET', burstPaths[i % burstPaths.length] ?? '/events', headers[who(i)]))
    const [written] = await Promise.all([acknowledged, ...burst])
    counts.burst += BURST
    counts.races += 1
    t.ok(written.status < 300, `race ${race}: PATCH ${writePath} on D → ${written.status}`)
    // Nothing is written any more: C must answer what D answers, every time it is asked.
    for (let again = 0; again < 3; again++) {
      for (const path of burstPaths) {
        for (const w of ['anon', 'editor', 'author', 'contributor'] as const) await both(path, w)
      }
    }
    if (differences.length > before) raceDifferences.push(`race ${race} (PATCH ${writePath} ${JSON.stringify(writeBody)}): ${differences.slice(before, before + 3).join(' ;; ')}`)

    // After the acknowledgement (§15): C saw no request since D's write; a burst of concurrent reads then
    // hits C, and every answer must be the written state, the one D gives.
    const afterBody: Json = race % 2 === 0 ? { name: name('Renamed again') } : { venue: name('Renamed venue again') }
    const afterPath = race % 2 === 0 ? `/categories/${category}` : `/venues/${venue}`
    const ack = await send(D.base, 'PATCH', afterPath, headers.editor, afterBody)
    t.ok(ack.status < 300, `race ${race}: PATCH ${afterPath} on D → ${ack.status}`)
    const asked = Array.from({ length: BURST }, (_, i) => [burstPaths[(i * 7) % burstPaths.length] ?? '/events', who(i)] as const)
    const fromC = await Promise.all(asked.map(([path, w]) => send(C.base, 'GET', path, headers[w])))
    counts.burst += BURST
    for (const [i, [path, w]] of asked.entries()) {
      const c = fromC[i]
      const d = await send(D.base, 'GET', path, headers[w])
      counts.compared += 1
      if (c !== undefined && JSON.stringify(c) !== JSON.stringify(d)) {
        const fields = (Object.keys(c) as Array<keyof Answer>).filter((k) => c[k] !== d[k])
        ackDifferences.push(`race ${race}, PATCH ${afterPath} ${JSON.stringify(afterBody)} acknowledged by D, then GET ${path} as ${w} on C, concurrently with ${BURST - 1} others: ${fields.map((f) => `${f}: ${where(String(c[f]), String(d[f]))}`).join(' ; ')}`)
      }
    }
  }
  const beforeSweep = differences.length
  await sweep(['anon', 'editor'])
  t.same(differences.slice(beforeSweep), [], 'a last sweep of every record and list: C and D answered alike')
  t.same(raceDifferences, [], 'after each race, with nothing more written, C answered exactly what D answered')
  t.same(ackDifferences.slice(0, 5), [], `reads sent to C after D acknowledged a write, concurrently, answer the written state (${ackDifferences.length} differ)`)
  t.comment(`writes by outcome: ${JSON.stringify(Object.fromEntries([...outcomes].sort()))}`)
  t.comment(`cache-differential: ${JSON.stringify(counts)} in ${((Date.now() - started) / 1000).toFixed(1)} s (seed ${SEED})`)
  t.notMatch(C.stderr() + D.stderr(), /Error|SQLITE_BUSY/, 'no error logged by either server')
})
