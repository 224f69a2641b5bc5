/**
 * Every list filter is index-bound on the engine under test (issue 14, item 5; search is left out, its
 * index is its own). A few thousand events with their terms, venues, organizers and change-log entries
 * are loaded straight into the tables; the app then answers each list filter, and every statement it
 * runs on a big table (captured through `openDatabase`'s `log` option, with its parameters) is
 * EXPLAINed:
 *
 * - SQLite: EXPLAIN QUERY PLAN after ANALYZE (the planner's own choice, with statistics): no `SCAN` of a
 *   big table (a read of the whole table, or a walk of a whole index with nothing bound), only
 *   `SEARCH … USING INDEX` or the primary key.
 * - PostgreSQL: EXPLAIN after ANALYZE with `enable_seqscan`, `enable_hashjoin` and `enable_mergejoin`
 *   off, which asks whether indexes CAN serve the statement (at a few thousand rows the planner may
 *   rightly prefer to read a table whole, or hash one side of a join; a whole read it still chooses
 *   with those off is one no index can avoid): no `Seq Scan` of a big table, and no index scan of one
 *   without an index condition (a walk of the whole index, the planner's way round a forbidden
 *   sequential scan).
 *
 * The read cache is off (every request runs its statements). Answers are checked against the contract.
 */
import t from 'tap'
import { CompiledQuery, sql } from 'kysely'
import { buildApp } from '../src/app.js'
import { defaultConfig } from '../src/config.js'
import { openDatabase, type LoggedStatement } from '../src/db/database.js'
import { generateKey } from '../src/lib/api-keys.js'
import { createUserWithKey } from '../src/repositories/users.js'
import { withTransaction } from '../src/db/unit-of-work.js'
import { createCompilers } from '../src/http/compilers.js'
import { cursorOf } from '../src/handlers/changes.js'
import { changedMatchesQuery, overriddenTextsQuery, type EventFilter } from '../src/repositories/event-filters.js'
import { contractProblems, SPEC } from './helpers/contract.js'
import { freshDatabaseUrl } from './helpers/database.js'
import { seededRandom } from './helpers/property.js'
import { API, NOW, decoded } from './helpers/build.js'

const EVENTS = Number(process.env.PLANS_EVENTS ?? 5000)
const VENUES = 1500
const ORGANIZERS = 1000
const TERMS = 600
const BIG = ['events', 'event_occurrences', 'venues', 'organizers', 'terms', 'event_terms', 'event_venues', 'event_organizers', 'changes']

/** A node of PostgreSQL's JSON plan, as far as read here. */
interface PlanNode {
  'Node Type': string
  'Relation Name'?: string
  'Index Name'?: string
  'Index Cond'?: string
  'Scan Direction'?: string
  Plans?: PlanNode[]
}

/**
 * A PostgreSQL plan as lines, one per node: `Seq Scan on events`, `Index Scan using events_pkey on events`;
 * an index scan without an index condition (a walk of the whole index, which is what the planner does
 * instead of a sequential scan once those are off) ends in `(no condition)`.
 */
function lines(node: PlanNode): string[] {
  const relation = node['Relation Name']
  const direction = node['Scan Direction'] === 'Backward' ? ' Backward' : ''
  const line = node['Index Name'] === undefined || relation === undefined
    ? `${node['Node Type']}${relation === undefined ? '' : ` on ${relation}`}`
    : `${node['Node Type']}${direction} using ${node['Index Name']} on ${relation} ${node['Index Cond'] === undefined ? '(no condition)' : `[${node['Index Cond']}]`}`
  return [line, ...(node.Plans ?? []).flatMap(lines)]
}

const utc = (ms: number) => new Date(ms).toISOString().slice(0, 19).replace('T', ' ')
const DAY = 86_400_000

t.test('every list filter is served by an index on the engine under test', async (t) => {
  let captured: LoggedStatement[] | undefined
  const handle = await openDatabase(await freshDatabaseUrl(t), { log: (statement) => captured?.push(statement) })
  const { db } = handle
  const postgres = handle.engine === 'postgres'
  const next = seededRandom(14)
  const int = (n: number) => Math.floor(next() * n)

  // Users: an editor and authors (events carry authors, so the author scope has something to bind).
  const keys: Record<string, string> = {}
  for (const role of ['editor', 'author'] as const) {
    keys[role] = generateKey()
    await withTransaction(db, (trx) => createUserWithKey(trx, role, keys[role] ?? '', '2026-01-01 00:00:00', `plans-${role}`))
  }
  const authors = (await db.selectFrom('users').select('id').execute()).map((u) => u.id)

  // The data: en 90 %, de 10 %; statuses mostly published; events over ten years, eight of them past
  // (a calendar keeps its history), so that the default window holds a fifth of them.
  const now = NOW.getTime()
  const language = () => (next() < 0.9 ? 'en' : 'de')
  const status = () => ['publish', 'publish', 'publish', 'publish', 'publish', 'publish', 'draft', 'pending', 'private', 'trash'][int(10)] ?? 'publish'
  const insert = async (table: 'terms' | 'venues' | 'organizers' | 'events' | 'event_terms' | 'event_venues' | 'event_organizers' | 'changes', rows: Array<Record<string, unknown>>) => {
    for (let i = 0; i < rows.length; i += 500) await db.insertInto(table).values(rows.slice(i, i + 500) as never).execute()
  }
  const stamp = (i: number) => {
    const at = utc(now - 400 * DAY + i * 60_000)
    return { date: at, date_utc: at, modified: at, modified_utc: at }
  }
  const terms = Array.from({ length: TERMS }, (_, i) => {
    const taxonomy = i % 3 === 0 ? 'category' : 'tag'
    return { taxonomy, language: i % 10 === 0 ? 'de' : 'en', name: `Term ${i}`, name_key: `term ${i}`, slug: `term-${i}`, parent: taxonomy === 'category' && i > 30 && i % 2 === 0 ? 4 : 0, event_count: int(50) }
  })
  await insert('terms', terms)
  const posts = (kind: string, n: number) => Array.from({ length: n }, (_, i) => ({
    language: i % 10 === 0 ? 'de' : 'en', author: authors[i % authors.length] ?? null, status: status(), name: `${kind} ${i}`, slug: `${kind}-${i}`, ...stamp(i),
  }))
  await insert('venues', posts('venue', VENUES).map((v, i) => ({ ...v, city: ['Wien', 'Graz', 'Linz'][i % 3], geo_lat: 47 + next(), geo_lng: 15 + next() })))
  await insert('organizers', posts('organizer', ORGANIZERS))
  const events = Array.from({ length: EVENTS }, (_, i) => {
    const start = now - 8 * 365 * DAY + int(10 * 365) * DAY + int(24) * 3_600_000
    const end = start + (1 + int(5)) * 3_600_000
    return {
      language: language(), author: authors[i % authors.length] ?? null, status: status(), title: `Event ${i}`, slug: `event-${i}`, ...stamp(i),
      start_date: utc(start), end_date: utc(end), start_utc: utc(start), end_utc: utc(end), timezone: 'UTC',
      all_day: 0, show_map: 0, show_map_link: 0, hide_from_listings: i % 50 === 0 ? 1 : 0, sticky: 0, featured: i % 20 === 0 ? 1 : 0,
      post_parent: i % 100 === 1 ? i : null,
    }
  })
  await insert('events', events)
  await insert('event_terms', Array.from({ length: EVENTS }, (_, i) => [{ event_id: i + 1, term_id: 1 + ((i * 7) % TERMS) }, { event_id: i + 1, term_id: 1 + ((i * 13 + 5) % TERMS) }])
    .flat().filter((r, i, all) => i % 2 === 0 || all[i - 1]?.term_id !== r.term_id))
  await insert('event_venues', Array.from({ length: EVENTS }, (_, i) => ({ event_id: i + 1, venue_id: 1 + (i % VENUES), position: 0 })))
  await insert('event_organizers', Array.from({ length: EVENTS }, (_, i) => ({ event_id: i + 1, organizer_id: 1 + (i % ORGANIZERS), position: 0 })))
  const changes = [
    ...events.map((e, i) => ({ resource: 'events', record_id: i + 1, language: e.language, action: 'created', changed_utc: e.modified_utc, status: e.status, author: e.author })),
    ...Array.from({ length: VENUES }, (_, i) => ({ resource: 'venues', record_id: i + 1, language: 'en', action: 'created', changed_utc: utc(now - DAY + i * 1000), status: 'publish', author: null })),
    ...Array.from({ length: TERMS }, (_, i) => ({ resource: i % 3 === 0 ? 'categories' : 'tags', record_id: i + 1, language: 'en', action: 'created', changed_utc: utc(now - DAY + i * 1000), status: null, author: null })),
  ]
  await insert('changes', changes)
  await sql`analyze`.execute(db)

  const app = await buildApp({ db, config: defaultConfig({ publicUrl: 'http://calendar.test', cacheEntries: 0 }), now: () => NOW, spec: SPEC, compilers: createCompilers() })
  t.teardown(async () => {
    await app.close()
    await handle.close()
  })

  /** The plan lines of a statement. */
  async function explain(statement: LoggedStatement): Promise<string[]> {
    if (!postgres) {
      const { rows } = await db.executeQuery(CompiledQuery.raw(`explain query plan ${statement.sql}`, [...statement.parameters]))
      return (rows as Array<{ detail: string }>).map((r) => r.detail)
    }
    return db.connection().execute(async (connection) => {
      // Neither sequential scans nor hash or merge joins (which read one side whole): what is left is
      // what indexes can bind, and a whole-table read left in the plan is one no index can avoid.
      for (const setting of ['enable_seqscan', 'enable_hashjoin', 'enable_mergejoin']) await sql`set ${sql.raw(setting)} = off`.execute(connection)
      try {
        const { rows } = await connection.executeQuery(CompiledQuery.raw(`explain (format json) ${statement.sql}`, [...statement.parameters]))
        const [root] = (rows[0] as { 'QUERY PLAN': Array<{ Plan: PlanNode }> })['QUERY PLAN']
        return root === undefined ? [] : lines(root.Plan)
      } finally {
        await sql`reset all`.execute(connection)
      }
    })
  }
  const big = BIG.join('|')
  /**
   * The lines of a plan that read a big table whole. SQLite names a table by its alias (`SCAN l`), so any
   * SCAN is one, but of a table-valued function (`json_each`, the list of ids given) or of a subquery's
   * own rows (`CO-ROUTINE linked` … `SCAN linked`).
   */
  const fullScans = (plan: readonly string[]): string[] => {
    if (postgres) return plan.filter((line) => new RegExp(`^(Seq Scan on (${big})|Index (Only )?Scan( Backward)? using \\w+ on (${big}) \\(no condition\\))`).test(line))
    const subqueries = new Set(plan.flatMap((line) => /^(?:CO-ROUTINE|MATERIALIZE) (\w+)/.exec(line.trim())?.[1] ?? []))
    return plan.filter((line) => {
      const scanned = /^SCAN (\w+)/.exec(line.trim())?.[1]
      return scanned !== undefined && scanned !== 'json_each' && !subqueries.has(scanned)
    })
  }

  // The detector itself: a filter on a column no index holds is a full scan, and is caught.
  const p = postgres ? '$1' : '?'
  for (const [text, parameters, what] of [
    [`select id from events where title = ${p}`, ['x'], 'a filter on a column no index holds'],
    [`select l.event_id from event_venues l where l.position = ${p}`, [0], 'the same under an alias'],
    ['select id from events order by id', [], 'a walk of a whole index'],
  ] as const) {
    t.ok(fullScans(await explain({ sql: text, parameters })).length > 0, `the detector finds ${what}`)
  }

  const editor = { authorization: `Bearer ${keys.editor ?? ''}` }
  const author = { authorization: `Bearer ${keys.author ?? ''}` }
  // A cursor most of the way through the log (the entries after it: a few hundred of thousands).
  const middle = cursorOf(EVENTS)
  // A published venue and organizer in English that events link to (an id another reader cannot see is a 400).
  const venue = (await db.selectFrom('venues').select('id').where('language', '=', 'en').where('status', '=', 'publish').orderBy('id').executeTakeFirstOrThrow()).id
  const organizer = (await db.selectFrom('organizers').select('id').where('language', '=', 'en').where('status', '=', 'publish').orderBy('id').executeTakeFirstOrThrow()).id
  const window = 'start_date=2026-07-01&end_date=2026-07-31'
  const requests: Array<[string, Record<string, string>]> = [
    ['/events', {}],
    [`/events?categories=4`, {}],
    [`/events?tags=5,8`, {}],
    [`/events?venue=${venue}`, {}],
    [`/events?organizer=${organizer}`, {}],
    [`/events?${window}`, {}],
    ['/events?starts_after=2026-07-01&starts_before=2026-08-01', {}],
    ['/events?ends_after=2026-07-01&ends_before=2026-08-01', {}],
    [`/events?${window}&categories=4&venue=${venue}`, {}],
    ['/events?featured=true', {}],
    ['/events?featured=true&start_date=2025-01-01', {}],
    ['/events?status=draft', editor],
    ['/events?status=private', editor],
    ['/events?status=draft', author],
    ['/events', author],
    ['/events?modified_after=2026-01-01&modified_before=2026-01-05', editor],
    ['/events?post_parent=2', {}],
    ['/events?ml_language=de', {}],
    ['/events/by-slug/event-123', {}],
    ['/events/12', {}],
    ['/venues', {}],
    ['/venues?event=12', {}],
    ['/venues?has_events=true', {}],
    ['/venues?only_with_upcoming=true', {}],
    ['/venues?status=draft', editor],
    ['/venues?modified_after=2025-07-01&modified_before=2025-07-02', editor],
    ['/venues', author],
    ['/venues/by-slug/venue-12', {}],
    ['/organizers', {}],
    ['/organizers', author],
    ['/organizers?event=12', {}],
    ['/organizers?has_events=true', {}],
    ['/organizers?only_with_upcoming=true', {}],
    ['/organizers?status=draft', editor],
    ['/organizers?modified_after=2025-07-01&modified_before=2025-07-02', editor],
    ['/organizers/by-slug/organizer-12', {}],
    ['/categories', {}],
    ['/categories?hide_empty=true', {}],
    ['/categories?orderby=count&order=desc', {}],
    ['/categories?parent=4', {}],
    ['/categories?post=12', {}],
    ['/categories?slug=term-3', {}],
    ['/tags', {}],
    ['/tags?hide_empty=true&orderby=count', {}],
    ['/tags?event=12', {}],
    ['/tags?slug=term-4', {}],
    ['/changes', editor],
    [`/changes?since=${middle}`, editor],
    [`/changes?since=${middle}&resource=events`, editor],
    [`/changes?since=${middle}&resource=venues,tags`, {}],
    ['/changes?since=now', {}],
  ]
  const found: string[] = []
  let explained = 0
  let windowCounts = 0
  const linkedLookups: LoggedStatement[] = []
  for (const [path, headers] of requests) {
    captured = []
    const res = decoded(await app.inject({ url: `${API}${path}`, headers }))
    const statements = captured
    captured = undefined
    t.same(contractProblems('GET', `${API}${path}`, res), [], `GET ${path} keeps the contract`)
    t.ok(res.statusCode === 200, `GET ${path}: ${res.statusCode} ${res.body.slice(0, 200)}`)
    const onBig = statements.filter((s) => /^\s*(select|with)\b/i.test(s.sql) && new RegExp(`\\b(from|join) "?(${big})"?\\b`, 'i').test(s.sql))
    t.ok(onBig.length > 0, `GET ${path} reads the tables (${onBig.length} statements)`)
    for (const statement of onBig) {
      const plan = await explain(statement)
      explained += 1
      if (process.env.PLANS_PRINT === '1') t.comment(`${path}\n${statement.sql}\n  ${plan.join('\n  ')}`)
      const scans = fullScans(plan)
      // A date window's count reads the listing index between the window's bounds, the end bound included
      // (an occurrence ends at or after its start: migration 0017), not from its start to the last event of all.
      if (path === `/events?${window}` && /count\(|group_concat\(|string_agg\(/i.test(statement.sql)) {
        t.ok(plan.some((line) => /start_utc\s*>=?/.test(line) && /start_utc\s*<=?/.test(line)),
          `GET ${path}: the count is bound on both sides of start_utc\n  ${plan.join('\n  ')}`)
        windowCounts += 1
      }
      if (path === '/events?categories=4' && /^select "o"\."event_id" as "id", "o"\."occurrence", count\(\*\) over \(\) as "total" from \(select (distinct )?l\.event_id/i.test(statement.sql)) linkedLookups.push(statement)
      if (scans.length > 0) found.push(`GET ${path}: ${scans.join(' | ')} in ${statement.sql} ${JSON.stringify(statement.parameters)}\n  ${plan.join('\n  ')}`)
    }
  }
  // Occurrences changed alone (CONTRACT §17) keep the search plan of the window (`searchedInWindow`): a searched list
  // runs what it ran without them, and one statement over the overrides (their texts, each occurrence looked up by its
  // key; with the read cache on, remembered until events change); no statement checks the needle per occurrence of the
  // window. Venue and hide_subsequent lists stay index-bound.
  const statementsOf = async (path: string): Promise<LoggedStatement[]> => {
    captured = []
    const res = decoded(await app.inject({ url: `${API}${path}` }))
    const statements = captured
    captured = undefined
    t.same(contractProblems('GET', `${API}${path}`, res), [], `GET ${path} keeps the contract`)
    t.equal(res.statusCode, 200, `GET ${path}`)
    return statements
  }
  const otherVenue = (await db.selectFrom('venues').select('id').where('language', '=', 'en').where('status', '=', 'publish').where('id', '>', venue).orderBy('id').executeTakeFirstOrThrow()).id
  const searched = `/events?search=${encodeURIComponent('event 12')}`
  const without = new Set((await statementsOf(searched)).map((s) => s.sql))
  const created = decoded(await app.inject({ method: 'POST', url: `${API}/events`, headers: { ...editor, 'content-type': 'application/json' },
    payload: JSON.stringify({ title: 'Weekly Jam', start_date: '2026-07-02 20:00:00', end_date: '2026-07-02 22:00:00', venue: venue, recurrence: { rule: 'FREQ=WEEKLY;COUNT=20' } }) }))
  t.equal(created.statusCode, 201, created.body.slice(0, 200))
  const series = created.json<{ id: number }>().id
  const occurrence = (await db.selectFrom('event_occurrences').select('occurrence').where('event_id', '=', series).orderBy('start_utc').offset(3).limit(1).executeTakeFirstOrThrow()).occurrence
  const changed = await app.inject({ method: 'PATCH', url: `${API}/events/${series}/occurrences/${occurrence}`, headers: { ...editor, 'content-type': 'application/json' },
    payload: JSON.stringify({ title: 'Event 12 Special', venue: otherVenue }) })
  t.equal(changed.statusCode, 200, changed.body.slice(0, 200))
  const withOverrides = await statementsOf(searched)
  // The list's own statements (over the occurrences as `o`; the records of a page differ, the changed occurrence among them).
  const listing = (sql: string) => /from "event_occurrences" as "o"|event_occurrences as o indexed by|"event_overrides" as "v"/.test(sql)
  const overridesSql = overriddenTextsQuery(db).compile(db).sql
  const added = [...new Set(withOverrides.map((s) => s.sql).filter((s) => (listing(s) || s === overridesSql) && !without.has(s)))]
  t.same(added, [overridesSql], 'with an override, a searched list runs the statements it ran without, and one over the overrides')
  t.same([...without].filter((s) => listing(s) && !withOverrides.some((w) => w.sql === s)), [], 'and every list statement it ran without')
  const overrides = withOverrides.find((s) => s.sql === overridesSql)
  if (overrides !== undefined) {
    const plan = await explain(overrides)
    explained += 1
    t.same(fullScans(plan).filter((line) => !/^SCAN v\b/.test(line.trim())), [], `the overrides' statement reads only the overrides whole\n  ${plan.join('\n  ')}`)
    if (!postgres) t.ok(plan.some((line) => /^SEARCH o USING .*\(event_id=\? AND occurrence=\?\)/.test(line.trim())), `each override's occurrence looked up by its key\n  ${plan.join('\n  ')}`)
  }
  const special = decoded(await app.inject({ url: `${API}/events?search=special&start_date=2026-07-01&end_date=2026-12-31` }))
  t.equal(special.headers['x-total'], '1', 'the changed occurrence is found by its own title, and it alone')
  for (const path of [`/events?venue=${otherVenue}`, '/events?hide_subsequent_recurrences=true', '/events']) {
    for (const statement of (await statementsOf(path)).filter((s) => /^\s*(select|with)\b/i.test(s.sql) && new RegExp(`\\b(from|join) "?(${big})"?\\b`, 'i').test(s.sql))) {
      const plan = await explain(statement)
      explained += 1
      const scans = fullScans(plan)
      if (scans.length > 0) found.push(`GET ${path} (overrides present): ${scans.join(' | ')} in ${statement.sql} ${JSON.stringify(statement.parameters)}\n  ${plan.join('\n  ')}`)
    }
  }

  // The recheck of a list kept across event edits (read-cache.ts `Recheck`): the changed events looked up by id.
  const anonymousWindow: EventFilter = { language: 'en', scope: { kind: 'all', statuses: ['publish'] }, startGte: '2026-06-15 00:00:00', endLte: '2028-06-15 23:59:59' }
  for (const filter of [{ ...anonymousWindow, categories: [4, 7] }, { ...anonymousWindow, venues: [venue], featured: true }]) {
    const compiled = changedMatchesQuery(db, filter, [3, 30, 300]).compile()
    const plan = await explain({ sql: compiled.sql, parameters: compiled.parameters })
    explained += 1
    const scans = fullScans(plan)
    if (scans.length > 0) found.push(`recheck ${JSON.stringify(filter)}: ${scans.join(' | ')}\n  ${plan.join('\n  ')}`)
    if (!postgres) t.ok(plan.some((line) => /^SEARCH o USING COVERING INDEX occurrences_by_event_start \(event_id=\?/.test(line.trim())), `the recheck looks the events' occurrences up by event id\n  ${plan.join('\n  ')}`)
    // Only the changed events linked to the list's first link filter have their occurrences looked up: each changed
    // event's links probed by its id (a second probe of the link table, besides the filter's own per occurrence).
    if (!postgres) t.ok(plan.filter((line) => /^SEARCH l (EXISTS )?USING COVERING INDEX (sqlite_autoindex_event_(terms|venues)_1 \(event_id=\?|event_terms_term \(term_id=\? AND event_id=\?|event_venues_target \(venue_id=\? AND event_id=\?)/.test(line.trim())).length >= 2,
      `the recheck asks each changed event's links by its id first\n  ${plan.join('\n  ')}`)
  }
  t.same(found, [], `no statement of a list filter reads a big table whole (${explained} statements explained)`)
  t.equal(windowCounts, 1, 'the date window\'s count was explained')
  // SQLite: the linked events' occurrences are looked up by event id through the index that holds what a list
  // checks (migration 0017, as 0011's did for events), not through the table's rows, also without the statistics of ANALYZE (which a
  // database in use has not: without them the planner takes the rowid, and reads each whole row).
  t.ok(linkedLookups.length > 0, `the linked events' lookups were captured (${linkedLookups.length})`)
  if (!postgres) {
    // A database of the same schema that was never analyzed (without statistics, a plan does not depend on the data).
    const bare = await openDatabase(':memory:')
    t.teardown(() => bare.close())
    for (const statement of linkedLookups) {
      const { rows } = await bare.db.executeQuery(CompiledQuery.raw(`explain query plan ${statement.sql}`, [...statement.parameters]))
      const plan = (rows as Array<{ detail: string }>).map((r) => r.detail)
      t.ok(plan.some((line) => /^SEARCH o USING COVERING INDEX occurrences_by_event_start \(event_id=\?/.test(line.trim())),
        `the linked events' occurrences are checked in the index by event id, without statistics\n  ${plan.join('\n  ')}`)
    }
  }
})
