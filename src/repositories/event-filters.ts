/**
 * The events a list shows: every filter of CONTRACT §4 as SQL, and the query plans that keep a list
 * fast at a million events (which events drive the query: the linked ones, those the search index
 * finds, or the listing index read in order; when a page is sorted and when it is read in order).
 * Totals and page ids are remembered by the read cache under the filter they answer.
 *
 * A list reads the events' occurrences (`event_occurrences` as `o`, migration 0017: one row per
 * occurrence, a single event's its own), in list order (start, event id, occurrence id): the dates and
 * the columns every list checks are the occurrence's, the rest (links, search, parent, `modified`) its
 * event's, looked up by `o.event_id`. Totals and pages count occurrences; a page is (event id, occurrence id)
 * pairs (`ListEntry`). `hideSubsequent` keeps the first matching occurrence of each event, `include` the
 * first occurrence of each event named (its whole is shown).
 */
import { CompiledQuery, sql, type Expression, type SqlBool } from 'kysely'
import type { Language } from '../contract.js'
import { distanceKm, foldCase, inIdList, isPostgres, joinedIds, listIds, searchedIds, versionOf, type SearchedIds } from '../db/dialect.js'
import type { Taxonomy } from '../db/schema.js'
import { boundQuery, byShape } from '../db/prepared.js'
import type { Db } from '../db/unit-of-work.js'
import { boundingBox, type Circle } from '../lib/geo.js'
import type { ListScope } from '../lib/rights.js'
import { scopeCondition } from './posts.js'
import { targetKey, type Footprint } from './footprints.js'
import { lookedGeneration, rememberedResult, settleLook, unsettledLook } from './read-cache.js'

/** The list filters once the handler resolved dates, slugs and defaults (all instants in UTC). */
export interface EventFilter {
  language: Language
  scope: ListScope
  include?: number[]
  startGte?: string
  endLte?: string
  startGt?: string
  startLt?: string
  endGt?: string
  endLt?: string
  search?: string
  categories?: number[]
  tags?: number[]
  venues?: number[]
  organizers?: number[]
  featured?: boolean
  postParent?: number
  /** `modified_after` / `modified_before`: exact UTC instants compared with `modified_utc`. */
  modifiedAfter?: string
  modifiedBefore?: string
  /** `geoloc`: events with (true) or without (false) a published venue that has coordinates. */
  hasGeo?: boolean
  /** Events with a published venue within `km` of the point. */
  near?: Circle
  /** `hide_subsequent_recurrences`: the first matching occurrence of each event only (CONTRACT §17). */
  hideSubsequent?: boolean
}

/** An item of a list page: the event and the occurrence it shows (a single event's own row's id). */
export interface ListEntry {
  id: number
  occurrence: string
}

/** Entries as the read cache keeps them: ids and occurrence ids in turn. */
type FlatEntries = Array<number | string>

function flat(entries: readonly ListEntry[]): FlatEntries {
  return entries.flatMap((e) => [e.id, e.occurrence])
}

function entriesOf(list: readonly (number | string)[]): ListEntry[] {
  const out: ListEntry[] = []
  for (let i = 0; i + 1 < list.length; i += 2) out.push({ id: list[i] as number, occurrence: list[i + 1] as string })
  return out
}

/** The occurrence a condition is on: the listed one (`o`), or an earlier one of its event (`p`). */
type Alias = 'o' | 'p'

type LinkFilter = readonly ['event_terms' | 'event_venues' | 'event_organizers', 'term_id' | 'venue_id' | 'organizer_id', number[]]

/** The link filters sent (venue, organizer, tags, categories), the most selective kinds first. */
function linkFilters(f: EventFilter): LinkFilter[] {
  const all: Array<readonly [LinkFilter[0], LinkFilter[1], number[] | undefined]> = [
    ['event_venues', 'venue_id', f.venues],
    ['event_organizers', 'organizer_id', f.organizers],
    ['event_terms', 'term_id', f.tags],
    ['event_terms', 'term_id', f.categories],
  ]
  return all.flatMap(([table, column, ids]) => (ids === undefined ? [] : [[table, column, ids] as const]))
}

/** The override column that changes the links of `table` on one occurrence, and the kind of its link rows (terms are the series' only). */
const OVERRIDDEN_LINKS = {
  event_venues: { column: 'venues', kind: 'venue' },
  event_organizers: { column: 'organizers', kind: 'organizer' },
  event_terms: undefined,
} as const

/**
 * The links of the occurrence `o` through `table`, a condition on their targets: the event's (`viaEvent`), or, for
 * an overridden occurrence whose override changes them, the override's (`event_override_links`, migration 0019;
 * CONTRACT §17: `venue`, `organizer` and `geoloc*` look at an occurrence's own venues). Only overridden occurrences
 * pay: `o.overridden` is read first, from the index the list reads.
 */
function ownLinks(table: 'event_venues' | 'event_organizers', condition: (id: Expression<unknown>) => Expression<SqlBool>, viaEvent: Expression<SqlBool>, alias: Alias = 'o'): Expression<SqlBool> {
  const { column, kind } = OVERRIDDEN_LINKS[table]
  const a = sql.raw(alias)
  const changed = sql<SqlBool>`exists (select 1 from event_overrides w where w.event_id = ${a}.event_id and w.occurrence = ${a}.occurrence and w.${sql.raw(column)} is not null)`
  const viaOverride = sql<SqlBool>`exists (select 1 from event_override_links k
    where k.event_id = ${a}.event_id and k.occurrence = ${a}.occurrence and k.kind = ${kind} and ${condition(sql.ref('k.target_id'))})`
  return sql<SqlBool>`(${viaEvent} and (${a}.overridden = 0 or not ${changed}) or ${a}.overridden = 1 and ${viaOverride})`
}

/** An occurrence linked to one of `ids` through `table` (its own venues and organizers when changed on it alone), checked per occurrence. */
function linkedCondition(db: Db, [table, column, ids]: LinkFilter, alias: Alias = 'o'): Expression<SqlBool> {
  const a = sql.raw(alias)
  if (ids.length === 0) return sql<SqlBool>`1 = 0`
  const viaEvent = sql<SqlBool>`exists (select 1 from ${sql.table(table)} l where l.event_id = ${a}.event_id and ${inIdList(db, sql.ref(`l.${column}`), ids)})`
  if (table === 'event_terms') return viaEvent
  return ownLinks(table, (id) => inIdList(db, id, ids), viaEvent, alias)
}

/**
 * The events a link filter drives a list from: those linked to one of `ids`, and those with an occurrence whose
 * own venues or organizers hold one (overrides are few: read whole). Each occurrence is then checked itself.
 */
function linkedEvents(db: Db, [table, column, ids]: LinkFilter): Expression<{ id: number }> {
  const distinct = new Set(ids).size > 1 ? sql`distinct ` : sql``
  const linked = sql<{ id: number }>`select ${distinct}l.event_id as id from ${sql.table(table)} l where ${inIdList(db, sql.ref(`l.${column}`), ids)}`
  const overridden = OVERRIDDEN_LINKS[table]
  if (overridden === undefined) return sql<{ id: number }>`(${linked})`
  return sql<{ id: number }>`(${linked} union select k.event_id as id from event_override_links k
    where k.kind = ${overridden.kind} and ${inIdList(db, sql.ref('k.target_id'), ids)})`
}

/**
 * Whether the event `id` is linked to one of the targets of `filter`: through its own links, or (venues,
 * organizers) through an occurrence's own (`event_override_links`). The events `linkedEvents` lists, asked of
 * one event (each a probe of a link table's key, which starts with the event id).
 */
function linkedTo(db: Db, [table, column, ids]: LinkFilter, id: Expression<unknown>): Expression<SqlBool> {
  const own = sql<SqlBool>`exists (select 1 from ${sql.table(table)} l where l.event_id = ${id} and ${inIdList(db, sql.ref(`l.${column}`), ids)})`
  const overridden = OVERRIDDEN_LINKS[table]
  if (overridden === undefined) return own
  return sql<SqlBool>`(${own} or exists (select 1 from event_override_links k
    where k.event_id = ${id} and k.kind = ${overridden.kind} and ${inIdList(db, sql.ref('k.target_id'), ids)}))`
}

/**
 * The occurrences a list reads (as `o`). `drive`: the events linked through the first link filter sent are read
 * first (from the link index) and their occurrences looked up by event id and checked: cheap when they are few, and
 * the only plan whose cost follows the links rather than the date window (a venue's events in a
 * year at 1,000,000 events: 0.4 ms against 66 ms when SQLite scanned the window and checked the
 * links per row, which it chose whatever the statistics said). The join is written as a CROSS JOIN,
 * which SQLite takes as the order to loop in and PostgreSQL plans like any inner join. Otherwise
 * every link filter is checked per event, for a scan of the listing index in list order.
 * `searchDrives`: without link filters, the events the search index finds drive the same way (see
 * `searchDrives`).
 */
function eventsFrom(db: Db, f: EventFilter, drive: boolean, searchDrives: boolean, lookUp = false) {
  const links = linkFilters(f)
  const driver = drive ? links[0] : undefined
  if (driver === undefined) {
    const found = searchDrives && hasSearch(f) ? searchedIds(db, f.search) : undefined
    if (found?.indexed !== true) return db.selectFrom('event_occurrences as o').where(filterCondition(db, f, links, lookUp ? 'looked-up' : true))
    // No link filter, a needle the trigram index finds in few events: those drive, as linked ones do.
    // Its events and those whose overrides' own texts match drive; each occurrence is then checked itself (its
    // event's match, or its override's: `ownSearch`).
    const ids = sql<{ id: number }>`(select m.id as id from ${found.ids} as m union ${overridesSearched(db, f.search ?? '')})`
    return db.selectFrom(ids.as('found')).crossJoin(occurrencesOfEvent(db))
      .where(sql<SqlBool>`o.event_id = found.id`)
      .where(filterCondition(db, f, links, true))
  }
  // A link is unique per event and target (the link tables' keys): the events linked to one target are distinct already.
  const linked = sql<{ id: number }>`${linkedEvents(db, driver)}`
  // Venues and organizers drive with the events whose overrides link the target: each occurrence is checked itself
  // (its event's links, or its override's).
  const own = driver[0] === 'event_terms' ? sql<SqlBool>`1 = 1` : linkedCondition(db, driver)
  return db.selectFrom(linked.as('linked')).crossJoin(occurrencesOfEvent(db))
    .where(sql<SqlBool>`o.event_id = linked.id`)
    .where(filterCondition(db, f, links.slice(1), true))
    .where(own)
}

/**
 * The occurrences as the linked (or found) events look theirs up by event id, as `o`. SQLite: through the
 * index by event and start that holds what a list checks (migration 0017, as `events_by_id_listing` was for
 * events), named, since without statistics SQLite may take the table's key instead, which cannot bound
 * the start. A raw table reference typed as the table's name, which Kysely takes as the table it stands for.
 */
function occurrencesOfEvent(db: Db): 'event_occurrences as o' {
  if (isPostgres(db)) return 'event_occurrences as o'
  return sql`event_occurrences as o indexed by occurrences_by_event_start` as unknown as 'event_occurrences as o'
}

function hasSearch(f: EventFilter): f is EventFilter & { search: string } {
  return f.search !== undefined && f.search !== ''
}

/**
 * Every filter but the link filters not in `links` (those a driving join applies), and `search` unless
 * `searched` is false (the search index drives).
 */
function filterCondition(db: Db, f: EventFilter, links: readonly LinkFilter[], searched: boolean | 'looked-up'): Expression<SqlBool> {
  const c: Expression<SqlBool>[] = [
    sql<SqlBool>`o.language = ${f.language}`,
    sql<SqlBool>`o.hide_from_listings = 0`,
    scopeCondition('o', f.scope),
  ]
  if (f.include !== undefined) c.push(inIdList(db, sql.ref('o.event_id'), f.include))
  c.push(...dateConditions(f, 'o'))
  // One item per event: its first occurrence (`include` lists wholes), or its first that matches the dates.
  if (f.include !== undefined || f.hideSubsequent === true) {
    // The earlier occurrence must match as this one would: its dates, and what it may have changed on its own
    // (the driving link filter included: every occurrence of a driving event is not one that matches).
    const dates = f.include !== undefined ? [] : [...dateConditions(f, 'p'), ...ownConditions(db, f, linkFilters(f), true, 'p')]
    c.push(sql<SqlBool>`not exists (select 1 from event_occurrences p where p.event_id = o.event_id
      and (p.start_utc < o.start_utc or (p.start_utc = o.start_utc and p.occurrence < o.occurrence))${sql.join(dates.map((d) => sql` and ${d}`), sql``)})`)
  }
  if (f.featured !== undefined) c.push(sql<SqlBool>`o.featured = ${f.featured ? 1 : 0}`)
  // What only the event's row holds, looked up by its id (the primary key).
  const own: Expression<SqlBool>[] = []
  if (f.postParent !== undefined) own.push(sql<SqlBool>`events.post_parent = ${f.postParent}`)
  if (f.modifiedAfter !== undefined) own.push(sql<SqlBool>`events.modified_utc > ${f.modifiedAfter}`)
  if (f.modifiedBefore !== undefined) own.push(sql<SqlBool>`events.modified_utc < ${f.modifiedBefore}`)
  if (own.length > 0) c.push(sql<SqlBool>`exists (select 1 from events where events.id = o.event_id and ${sql.join(own, sql` and `)})`)
  c.push(...ownConditions(db, f, links, searched, 'o'))
  return sql<SqlBool>`${sql.join(c, sql` and `)}`
}

/**
 * The filters an occurrence changed on its own may answer otherwise than its event (CONTRACT §17): `search`, the
 * venue and organizer links, `geoloc*`, checked on the occurrence `alias` (`o`, or an earlier one `p` of the same
 * event, which `hide_subsequent_recurrences` must find matching). Categories and tags are the event's.
 */
function ownConditions(db: Db, f: EventFilter, links: readonly LinkFilter[], searched: boolean | 'looked-up', alias: Alias): Array<Expression<SqlBool>> {
  const c: Array<Expression<SqlBool>> = []
  const a = sql.raw(alias)
  // The search index holds the folded title, and the description unless the event is password-protected.
  if (searched !== false && hasSearch(f)) {
    const found = searchedIds(db, f.search)
    c.push(ownSearch(db, f.search, (searched === 'looked-up' ? found.looksUp ?? found.holds : found.holds)(sql.ref(`${alias}.event_id`)), alias))
  }
  for (const link of links) if (alias === 'o' || link[0] !== 'event_terms') c.push(linkedCondition(db, link, alias))
  if (f.hasGeo !== undefined) {
    const withCoordinates = (id: Expression<unknown>) => sql<SqlBool>`exists (select 1 from venues v where v.id = ${id}
      and v.status = 'publish' and v.geo_lat is not null and v.geo_lng is not null)`
    const located = ownLinks('event_venues', withCoordinates, sql<SqlBool>`exists (select 1 from event_venues l inner join venues v on v.id = l.venue_id
      where l.event_id = ${a}.event_id and v.status = 'publish' and v.geo_lat is not null and v.geo_lng is not null)`, alias)
    c.push(f.hasGeo ? located : sql<SqlBool>`not ${located}`)
  }
  if (f.near !== undefined) c.push(nearCondition(db, f.near, alias))
  return c
}

/** `%needle%` folded, for LIKE (backslash escapes: SQLite's clause below, PostgreSQL's default). */
function likePattern(needle: string): string {
  return `%${foldCase(needle).replace(/[\\%_]/g, (c) => `\\${c}`)}%`
}

/** `text` holds the folded needle (a LIKE with `likePattern`). */
function likeFolded(db: Db, text: Expression<unknown>, needle: string): Expression<SqlBool> {
  return isPostgres(db) ? sql<SqlBool>`${text} like ${likePattern(needle)}` : sql<SqlBool>`${text} like ${likePattern(needle)} escape '\\'`
}

/**
 * `search` on the occurrence `o` (CONTRACT §17: over its own title and description): `holds`, the event's match,
 * for an occurrence not changed alone; for an overridden one, each text the override changes (folded as the index
 * folds: migration 0019) and the event's others. Only overridden occurrences pay: `o.overridden` is read first.
 */
function ownSearch(db: Db, needle: string, holds: Expression<SqlBool>, alias: Alias = 'o'): Expression<SqlBool> {
  const a = sql.raw(alias)
  const eventText = (column: 'title' | 'description') => isPostgres(db)
    ? sql<SqlBool>`exists (select 1 from event_search s where s.event_id = ${a}.event_id and ${likeFolded(db, sql.ref(`s.${column}`), needle)})`
    : sql<SqlBool>`exists (select 1 from event_search_content s where s.id = ${a}.event_id and ${likeFolded(db, sql.ref(column === 'title' ? 's.c0' : 's.c1'), needle)})`
  const own = sql<SqlBool>`exists (select 1 from event_overrides w where w.event_id = ${a}.event_id and w.occurrence = ${a}.occurrence and (
    case when w.search_title is null then ${eventText('title')} else ${likeFolded(db, sql.ref('w.search_title'), needle)} end
    or case when w.search_description is null and w.description is null then ${eventText('description')} else ${likeFolded(db, sql.ref('w.search_description'), needle)} end))`
  return sql<SqlBool>`(${a}.overridden = 0 and ${holds} or ${a}.overridden = 1 and ${own})`
}

/** The events whose overrides' own texts hold the needle (overrides are few: read whole), for plans the search index drives. */
function overridesSearched(db: Db, needle: string): Expression<{ id: number }> {
  return sql<{ id: number }>`select w.event_id as id from event_overrides w
    where ${likeFolded(db, sql.ref('w.search_title'), needle)} or ${likeFolded(db, sql.ref('w.search_description'), needle)}`
}

/** Whether any occurrence is changed on its own (remembered until the data changes): the event-level search plans then step aside. */
async function hasOverrides(db: Db): Promise<boolean> {
  return (await rememberedResult(db, 'exist:event_overrides', async () =>
    ((await db.selectFrom('event_overrides').select('event_id').limit(1).executeTakeFirst()) === undefined ? 0 : 1))) === 1
}

/**
 * The date bounds on the occurrence `alias` (`o`, or another occurrence of the same event). Every occurrence
 * ends at or after its start (held by the database: migration 0017's CHECK): an end bound bounds the start
 * too, where the listing index can stop (a 30-day window counted 620 entries, not 11,293).
 */
function dateConditions(f: EventFilter, alias: 'o' | 'p'): Array<Expression<SqlBool>> {
  const c: Array<Expression<SqlBool>> = []
  const start = sql.ref(`${alias}.start_utc`)
  const end = sql.ref(`${alias}.end_utc`)
  if (f.startGte !== undefined) c.push(sql<SqlBool>`${start} >= ${f.startGte}`)
  if (f.startGt !== undefined) c.push(sql<SqlBool>`${start} > ${f.startGt}`)
  if (f.startLt !== undefined) c.push(sql<SqlBool>`${start} < ${f.startLt}`)
  if (f.endLte !== undefined) c.push(sql<SqlBool>`${end} <= ${f.endLte} and ${start} <= ${f.endLte}`)
  if (f.endGt !== undefined) c.push(sql<SqlBool>`${end} > ${f.endGt}`)
  if (f.endLt !== undefined) c.push(sql<SqlBool>`${end} < ${f.endLt} and ${start} < ${f.endLt}`)
  return c
}

/** Events with a published venue within `km` of the point: its bounding box on the coordinates index first, then the exact distance. */
function nearCondition(db: Db, near: Circle, alias: Alias = 'o'): Expression<SqlBool> {
  const a = sql.raw(alias)
  const box = boundingBox(near)
  const lng = box.lng
  let lngRange: Expression<SqlBool>
  if (lng === undefined) lngRange = sql<SqlBool>`1 = 1`
  else if (lng.west > lng.east) lngRange = sql<SqlBool>`(v.geo_lng >= ${lng.west} or v.geo_lng <= ${lng.east})`
  else lngRange = sql<SqlBool>`v.geo_lng between ${lng.west} and ${lng.east}`
  const within = sql<SqlBool>`v.status = 'publish'
      and v.geo_lat between ${box.minLat} and ${box.maxLat} and ${lngRange}
      and ${distanceKm(db, sql.ref('v.geo_lat'), sql.ref('v.geo_lng'), near.lat, near.lng)} <= ${near.km}`
  return ownLinks('event_venues', (id) => sql<SqlBool>`exists (select 1 from venues v where v.id = ${id} and ${within})`,
    sql<SqlBool>`exists (select 1 from event_venues l inner join venues v on v.id = l.venue_id where l.event_id = ${a}.event_id and ${within})`, alias)
}

const listKey = (f: EventFilter) => `events:${JSON.stringify(f)}`

/** How many events match: with link filters, counted from the linked events (see `eventsFrom`). */
export async function countEvents(db: Db, f: EventFilter): Promise<number> {
  const linked = await linkedIds(db, f)
  if (linked !== undefined) return linked.total
  const searched = await searchedInWindow(db, f)
  if (searched !== undefined) return searched.count
  if (!hasSearch(f) && !windowsPastBound.has(listKey(f)) && (await readAcrossChange(db, listKey(f)))) {
    const matches = await windowMatches(db, f)
    return typeof matches === 'number' ? matches : matches.length
  }
  return rememberedResult(db, `count:${listKey(f)}`, async () => {
    const drives = await searchDrives(db, f)
    if (!drives && hasSearch(f) && linkFilters(f).length === 0 && !isPostgres(db) && !(await hasOverrides(db))) {
      const found = searchedIds(db, f.search)
      if (found.indexed) return countByWindowMembership(db, f, found.ids)
    }
    const shaped = windowStatement(f, 'count')
    if (shaped !== undefined) return Number((await windowRows(db, shaped, []))[0]?.n)
    return Number((await eventCountQuery(db, f, drives).executeTakeFirstOrThrow()).n)
  })
}

/**
 * The filters of a window statement (`windowStatement`) that are values only, in the order they are bound: present
 * or not is the shape, what each holds a value.
 */
const WINDOW_VALUES = ['startGte', 'endLte', 'startGt', 'startLt', 'endGt', 'endLt', 'postParent', 'modifiedAfter', 'modifiedBefore'] as const

/** What a window statement is: a count, a page (`offset`, `limit` bound after the filter's values), the matches by event (`limit`). */
type WindowKind = 'count' | 'page' | 'matches'

/** A window statement's rows (`count`: `n`; `page`: `id`, `occurrence`; `matches`: `ids`). */
type WindowRow = { n?: number | string; id?: number; occurrence?: string; ids?: string | null }

/**
 * The statements of a list without link filters, search, `include` or `geoloc` filters (a date window with any of
 * status, `featured`, `post_parent`, `modified_*`, `hide_subsequent_recurrences`), whose text follows only from which
 * of those are present, the scope's kind and number of statuses, and `featured`'s value (`shape`): each shape is built
 * and compiled once per engine (db/prepared.ts) and later reads bind the filter's values to its text. Building and
 * compiling a window's page cost Kysely 35–45 µs of JavaScript, its count 30–40, at each read not answered from the
 * read cache (issue 49: every request of random traffic different). Run as the built query ran (`db.executeQuery`). The text is the one `eventCountQuery`,
 * `eventIdsQuery` and `windowMatchesQuery` build (test/window-statements.test.ts compares them shape by shape).
 * Undefined for any other list (built as before).
 */
export function windowStatement(f: EventFilter, kind: WindowKind): ((db: Db, extra: readonly number[]) => CompiledQuery<WindowRow>) | undefined {
  if (f.include !== undefined || f.search !== undefined || f.hasGeo !== undefined || f.near !== undefined || linkFilters(f).length > 0) return undefined
  const scope = f.scope
  if (scope.kind === 'refused') return undefined
  const present = WINDOW_VALUES.filter((name) => f[name] !== undefined)
  const shape = [kind, scope.kind, scope.statuses.length, f.featured === undefined ? '' : f.featured ? 'f1' : 'f0', f.hideSubsequent === true ? 'h' : '', ...present].join(' ')
  const values: unknown[] = [f.language, ...scope.statuses, ...(scope.kind === 'published-or-own' ? [scope.owner] : []), ...present.map((name) => f[name])]
  const statement = windowStatements(shape)
  return (db, extra) => statement(db, ...values, ...extra)
}

/** The rows of a window statement (`windowStatement`) with `extra` values bound after the filter's. */
async function windowRows(db: Db, statement: (db: Db, extra: readonly number[]) => CompiledQuery<WindowRow>, extra: readonly number[]): Promise<WindowRow[]> {
  return (await db.executeQuery(statement(db, extra))).rows
}

/** The prepared statement of a window statement's shape (see `windowStatement`), made from the shape alone: at most 256 kept. */
const windowStatements = byShape(256, (shape: string) => {
  const [kind, scopeKind, statuses, featured, hide, ...present] = shape.split(' ') as [WindowKind, string, string, string, string, ...Array<(typeof WINDOW_VALUES)[number]>]
  const count = (scopeKind === 'published-or-own' ? 2 : 1) + Number(statuses) + present.length + (kind === 'page' ? 2 : kind === 'matches' ? 1 : 0)
  return boundQuery<unknown[], WindowRow>(count, (db, ...values) => {
    let at = 0
    const next = () => values[at++]
    const language = next() as Language
    const statusList = Array.from({ length: Number(statuses) }, () => next() as string)
    const scope: ListScope = scopeKind === 'published-or-own' ? { kind: 'published-or-own', statuses: statusList, owner: next() as number } : { kind: 'all', statuses: statusList }
    const f: EventFilter = { language, scope }
    const filter = f as unknown as Record<string, unknown>
    for (const name of present) filter[name] = next()
    if (featured !== '') f.featured = featured === 'f1'
    if (hide === 'h') f.hideSubsequent = true
    if (kind === 'count') return eventCountQuery(db, f, false)
    if (kind === 'matches') return windowMatchesQuery(db, f, next() as number)
    const offset = next() as number
    return eventIdsQuery(db, f, offset, next() as number, 0, false, false)
  })
})

/**
 * A list without link filters or search (a date window, the default one, with any other filter) keeps its matches
 * across writes when they are WINDOW_KEPT_UP_TO at most (issue 49: a 30-day window at 20,000 events with a fifth
 * of them series, some 1,500 occurrences, counted in about 1 ms, was counted again after any write to any event):
 * each match's event id, sorted (an event as often as it has occurrences matching), read by one statement as the
 * count was; the total is their number. Past the bound, the total alone (counted, and dropped by any change).
 */
export const windowPlanBounds = { keptUpTo: 20000 }

/**
 * The lists without link filters or search read by this process, by key, with the read cache's generation at their
 * first read (8,192 at most, then forgotten together). A list's first read counts its matches (`count(*)`, about
 * 0.19 ms of CPU for a 30-day window of some 2,100 occurrences), and so do its reads while no change was taken in
 * (the count is remembered); reading them by event costs 0.5–0.6 ms (the statement 0.30, the ids' parse and sort),
 * which pays only for a list read again after a change: most windows of random traffic are read once. A plan's
 * choice, not a result: either way the total is exact.
 */
const windowsRead = new Map<string, number>()

/** Whether the list `key` was read before a change this read's generation took in since (noting a first read). */
async function readAcrossChange(db: Db, key: string): Promise<boolean> {
  const generation = await lookedGeneration(db)
  if (generation === undefined) return false
  const first = windowsRead.get(key)
  if (first === undefined) {
    if (windowsRead.size >= 8192) windowsRead.clear()
    windowsRead.set(key, generation)
    return false
  }
  return first !== generation
}

/**
 * The lists found to have more matches than `windowPlanBounds.keptUpTo` (a plan's choice, not a result: any plan
 * counts exactly): counted alone from then on, as before, not read up to the bound first each time. 4,096 at most.
 */
const windowsPastBound = new Set<string>()

/** The events of a list's matches, sorted (`windowMatches`), or its total alone past `windowPlanBounds.keptUpTo`. */
type WindowMatches = Int32Array | number

/**
 * The matches of `f` (no link filter, no search) as `WindowMatches`, remembered, and kept across changes of events
 * exactly: a changed event may matter only if the list holds it or one of its occurrences starts within the window's
 * start bounds (`windowMayMatter`, from its footprint); those are rechecked (`stillWindowed`).
 */
async function windowMatches(db: Db, f: EventFilter): Promise<WindowMatches> {
  return rememberedResult<WindowMatches>(db, `all:${listKey(f)}:window`, async () => {
    const upTo = windowPlanBounds.keptUpTo
    const shaped = windowStatement(f, 'matches')
    const row = shaped !== undefined ? (await windowRows(db, shaped, [upTo + 1]))[0] : await windowMatchesQuery(db, f, upTo + 1).executeTakeFirst()
    const ids = joinedIds(row?.ids)
    if (ids.length > upTo || ids.some((id) => id > 0x7fffffff)) {
      if (windowsPastBound.size >= 4096) windowsPastBound.clear()
      windowsPastBound.add(listKey(f))
      const counted = windowStatement(f, 'count')
      if (counted !== undefined) return Number((await windowRows(db, counted, []))[0]?.n)
      return Number((await eventCountQuery(db, f, false).executeTakeFirstOrThrow()).n)
    }
    return Int32Array.from(ids).sort()
  }, async (matches, changed) => (typeof matches === 'number' ? false : stillWindowed(db, f, matches, changed)),
  windowRelevance(f))
}

/** The statement `windowMatches` runs: the event ids of the first `limit` matches, comma-separated, in one row (`ids`). */
export function windowMatchesQuery(db: Db, f: EventFilter, limit: number) {
  const listed = eventsFrom(db, f, true, false).select('o.event_id as id').limit(limit)
  const joined = isPostgres(db) ? sql<string | null>`string_agg(w.id::text, ',')` : sql<string | null>`group_concat(w.id)`
  return db.selectFrom(listed.as('w')).select(joined.as('ids'))
}

/** How many times `id` is in `sorted`. */
function timesIn(sorted: Int32Array, id: number): number {
  let lo = 0
  let hi = sorted.length
  while (lo < hi) {
    const mid = (lo + hi) >>> 1
    if ((sorted[mid] as number) < id) lo = mid + 1
    else hi = mid
  }
  let n = 0
  while (lo + n < sorted.length && sorted[lo + n] === id) n++
  return n
}

/**
 * Whether the changed event `id` (as `footprint` shows it now) may matter to the remembered `matches` of `f` (see
 * read-cache.ts `Relevant`): they hold it, or one of its occurrences starts within the window's start bounds (an end
 * bound bounds the start too: an occurrence ends at or after its start). Any other matches neither now nor before.
 * The bounds taken from `f` once (the cache asks once per changed event per remembered list).
 */
function windowRelevance(f: EventFilter): (matches: WindowMatches, id: number, footprint: Footprint) => boolean {
  let bounds: { from: string[]; to: string[] } | undefined
  return (matches, id, footprint) => {
    if (typeof matches === 'number' || timesIn(matches, id) > 0) return true
    if (footprint.first === undefined || footprint.last === undefined) return false
    bounds ??= {
      from: [f.startGte, f.startGt].filter((b) => b !== undefined),
      to: [f.endLte, f.startLt, f.endLt].filter((b) => b !== undefined),
    }
    const { first, last } = footprint
    return bounds.from.every((b) => last >= b) && bounds.to.every((b) => first <= b)
  }
}

/**
 * Whether `matches`, every match of `f` by event, still are after the events `changed` changed (and nothing else
 * the list depends on): each matches now exactly as many times as it is held (one statement, `changedMatchesQuery`).
 */
async function stillWindowed(db: Db, f: EventFilter, matches: Int32Array, changed: readonly number[]): Promise<boolean> {
  const ids = [...new Set(changed)]
  let before = 0
  for (const id of ids) before += timesIn(matches, id)
  // One past their matches before is enough to tell that one of them matches more often.
  const matching = await changedMatchesQuery(db, f, ids, before + 1).execute()
  if (matching.length !== before) return false
  const now = new Map<number, number>()
  for (const m of matching) now.set(Number(m.id), (now.get(Number(m.id)) ?? 0) + 1)
  for (const [id, n] of now) if (timesIn(matches, id) !== n) return false
  return true
}

/**
 * SQLite, a needle the search index serves found in more events than SORT_LINKED_UP_TO (in any language,
 * at any date), without link filters: the index's matches counted by one statement, each kept when its byte
 * in the window's membership is set: one byte per event id, 1 for the events the other filters match (their
 * ids read from the listing index), remembered per filter until events change, so every needle of a window
 * (a site's default window for most searches) costs a statement over its matches. The plan it replaces
 * checked the needle per event of the window (a LIKE on its texts for two characters, a lookup in the
 * materialized match list for more): a common pair ('er') over the benchmark's 10,000-event window took
 * 7.7 ms that way.
 */
async function countByWindowMembership(db: Db, f: EventFilter & { search: string }, ids: Expression<{ id: number }>): Promise<number> {
  const window = { ...f, search: undefined }
  const member = await rememberedResult(db, `ids:events:window:${JSON.stringify(window)}`, async () =>
    membershipOf(await listIds(db, eventsFrom(db, window, true, false).select('o.event_id as id')), true))
  // Ids past what such a list holds (a database filled by hand), or an event with several occurrences in the
  // window (a series: one byte per event cannot count them): the statement that checks each occurrence counts.
  if (member === undefined) return Number((await eventCountQuery(db, f, false).executeTakeFirstOrThrow()).n)
  const { rows } = await sql<{ n: number }>`select count(*) as n from ${ids} as found where substr(${member}, found.id + 1, 1) = x'01'`.execute(db)
  return Number(rows[0]?.n ?? 0)
}

/**
 * The search plan of a database whose event ids are at most `eventIdsUpTo` (`searchedInWindow`); beyond it the
 * plans of larger databases serve (`countByWindowMembership`, `searchLooksUp`). Tests lower it to reach those
 * plans with a few thousand events.
 *
 * `lookedUpCountedUpTo`: the index's matches counted at most for a needle that may be looked up
 * (`searchMatches`). Past it, lookups are chosen while a page reads fewer than 3,000 events of the window
 * (LOOKUPS_PER_MATCH × 200,000), some 75 ms of lookups, about what listing that many matches costs; past
 * both, either plan is slow and the choice changes little. Tests lower it too.
 */
export const searchPlanBounds = { eventIdsUpTo: 100_000, lookedUpCountedUpTo: 200_000 }

/** A searched list's matches in a window: how many, and a page of them in list order. */
interface SearchedInWindow {
  count: number
  page: (offset: number, limit: number) => ListEntry[]
}

/**
 * A needle an index lists (`searchedIds(…).indexed`: SQLite's trigrams or pairs, PostgreSQL's three characters
 * or more, which pg_trgm can serve, or two, its pairs: migration 0021), no link filter, a database whose event ids are
 * `eventIdsUpTo` at most (so that a window, and the index's matches, are that many at most): the window's ids
 * in list order, remembered per window (one statement over the listing index, shared by every needle searched
 * in it), and per needle and window which of them the needle is in, one bit per place in that order, from the
 * index's matches read at once (one statement whose cost follows the matches, as counting them does). The
 * total and every page then come from the bits: a needle asked for the first time costs that one statement
 * instead of three (the matches counted, counted again against the window's membership, then the page's own
 * statement: 6–10 ms for a common pair or trigram at 20,000 events), and its other pages none. On PostgreSQL
 * each of those statements may read every event's texts (a common needle, or trigram indexes whose pending
 * list is long), so one instead of three matters more there (docs/performance.md). Undefined when it does
 * not apply.
 */
async function searchedInWindow(db: Db, f: EventFilter): Promise<SearchedInWindow | undefined> {
  if (!hasSearch(f) || linkFilters(f).length > 0) return undefined
  const overridden = await hasOverrides(db)
  // `hide_subsequent_recurrences` keeps an event's first occurrence that matches: with occurrences changed alone,
  // not always the window's first (an override's own texts may match where its event's do not): the statements serve.
  if (overridden && f.hideSubsequent === true && f.include === undefined) return undefined
  const found = searchedIds(db, f.search)
  if (!found.indexed) return undefined
  const top = await rememberedResult(db, 'count:events:top-id', async () =>
    Number((await db.selectFrom('events').select((eb) => eb.fn.max('id').as('top')).executeTakeFirst())?.top ?? 0))
  if (top > searchPlanBounds.eventIdsUpTo) return undefined
  const window: EventFilter = { ...f, search: undefined }
  // The window's occurrences in list order: event ids, and their occurrence ids at the same places.
  // One statement reads both (each remembered on its own; one forgotten alone is read again with the other).
  let read: Promise<Array<{ id: number; occurrence: string }>> | undefined
  const inOrder = () => (read ??= inListOrder(eventsFrom(db, window, true, false).select(['o.event_id as id', 'o.occurrence'])).execute())
  const order = await rememberedResult(db, `ids:${listKey(window)}:in-order`, async () => Int32Array.from((await inOrder()).map((r) => r.id)))
  const occurrences = await rememberedResult(db, `ids:${listKey(window)}:in-order:occurrences`, async () => (await inOrder()).map((r) => r.occurrence))
  if (occurrences.length !== order.length) return undefined
  // Each event's places in the window, remembered with it (the same for every needle): a needle's bits are set from
  // the events it is in, where a pass over every place of the window looked each place's event up in the matches
  // (48,411 places at 20,000 events with a fifth of them series, against 6,728 without; docs/performance.md
  // "Issue 45: random reads with recurring events").
  const byEvent = await rememberedResult(db, `ids:${listKey(window)}:in-order:by-event`, async () => placesByEvent(order))
  // Word 0: how many bits are set; then the bits, one per place of `order`.
  const bits = await rememberedResult(db, `ids:${listKey(f)}:in-order`, async () => {
    const matched = await matchedIds(db, db.selectFrom(sql<{ id: number }>`${found.ids}`.as('found')).select('found.id'))
    const words = new Uint32Array(1 + Math.ceil(order.length / 32))
    let count = 0
    // Ids past the window's largest have no place in it (nor has an id listed twice a second one).
    const top = (byEvent[0] as number) - 2
    for (const id of matched) {
      if (!(id >= 0 && id <= top)) continue
      for (let at = byEvent[id] as number, end = byEvent[id + 1] as number; at < end; at++) {
        const place = byEvent[at] as number
        const word = 1 + (place >>> 5)
        const bit = 1 << (place & 31)
        if (((words[word] as number) & bit) !== 0) continue
        words[word] = (words[word] as number) | bit
        count++
      }
    }
    if (overridden) {
      // An occurrence changed alone matches by its own texts (`ownSearch`), whatever its event's match: the overrides'
      // texts (few) read once, and at the places of the window's overridden occurrences (found once per window) each
      // matched in memory and its bit corrected.
      const texts = await overriddenTexts(db)
      const needle = ownNeedle(db, f.search)
      // Its places name the overrides by their rank in the texts they were found with, so they are remembered per texts
      // read (`serial`). Requests that miss the texts at once (PostgreSQL: each awaits its own statement) each read
      // their own, and only the last kept is asked for afterwards: places remembered under the window alone were then
      // those of another read, and found again for every new needle (every one of the window's 48,411 places looked up: most of what a
      // search with series cost more than without on PostgreSQL; docs/performance.md "pg-search-series").
      const remembered = await rememberedResult(db, `ids:${listKey(window)}:in-order:overridden:${texts.serial}`, async () => overriddenPlaces(texts, order, occurrences))
      const { places } = remembered.texts === texts ? remembered : overriddenPlaces(texts, order, occurrences)
      for (let i = 0; i + 1 < places.length; i += 2) {
        const place = places[i] as number
        const hit = holdsOwn(texts, places[i + 1] as number, needle)
        const word = 1 + (place >>> 5)
        const bit = 1 << (place & 31)
        const set = ((words[word] as number) & bit) !== 0
        if (hit && !set) {
          words[word] = (words[word] as number) | bit
          count++
        } else if (!hit && set) {
          words[word] = (words[word] as number) & ~bit
          count--
        }
      }
    }
    words[0] = count
    return words
  })
  // The bits are for this order (both are dropped at any change of events; checked all the same).
  if (bits.length !== 1 + Math.ceil(order.length / 32)) return undefined
  return {
    count: bits[0] as number,
    page: (offset, limit) => placesSet(bits, order, offset, limit).map((place) => ({ id: order[place] as number, occurrence: occurrences[place] as string })),
  }
}

/**
 * The ids `query` lists (`listIds`). On PostgreSQL, for a request reading on a look taken on trust and not settled yet
 * (read-cache.ts `unsettledLook`: an anonymous list page), the data version is read in the same statement and settles
 * it: a needle new to this process cost that statement and, when every event of its page was remembered, a look of its
 * own after it (`lookHolds`): two round trips where one does.
 */
async function matchedIds(db: Db, query: Parameters<typeof listIds>[1]): Promise<number[]> {
  const look = isPostgres(db) && !db.isTransaction ? unsettledLook() : undefined
  if (look === undefined) return listIds(db, query)
  const { sql: text, parameters } = query.compile()
  // One statement, one snapshot: `data_version()` (migration 0023) is stable, so it reads in the statement's.
  const { rows } = await db.executeQuery<{ h: number | string; e: number | string; ids: string | null }>(CompiledQuery.raw(
    `select v.h, v.e, (select string_agg(q.id::text, ',') from (${text}) as q) as ids from data_version() as v`, [...parameters]))
  const row = rows[0]
  settleLook(look, row === undefined ? undefined : versionOf(row))
  return joinedIds(row?.ids)
}

/**
 * Whether each overridden occurrence holds `needle` by its own texts (`ownSearch`: the override's folded texts, its
 * event's for those it keeps), keyed `event id, occurrence id`: one statement whose rows are the overrides (the
 * statement `overriddenMatches` replaced; kept for the differential test, test/override-search.test.ts).
 */
export function overriddenMatchesQuery(db: Db, needle: string) {
  // A CROSS JOIN: the overrides drive (SQLite takes it as the order to loop in; else it read the listing index whole).
  return db.selectFrom('event_overrides as v').crossJoin('event_occurrences as o')
    .whereRef('o.event_id', '=', 'v.event_id').whereRef('o.occurrence', '=', 'v.occurrence').where('o.overridden', '=', 1)
    .select(['o.event_id as id', 'o.occurrence', sql<number>`case when ${ownSearch(db, needle, sql<SqlBool>`1 = 0`)} then 1 else 0 end`.as('hit')])
}

/**
 * The texts `ownSearch` looks into for each overridden occurrence (an override whose occurrence is marked
 * overridden), folded: its title (the override's, else its event's in the search index) and its description (the
 * override's folded one; its event's when the override keeps the series' description; null when neither is
 * searched: a protected event's). One statement over the overrides (few), each occurrence looked up by its key and
 * its event's texts by id (also for the query-plan tests).
 */
export function overriddenTextsQuery(db: Db) {
  const index = isPostgres(db)
    ? { table: sql.raw('event_search'), id: sql.raw('s.event_id'), title: sql.raw('s.title'), description: sql.raw('s.description') }
    : { table: sql.raw('event_search_content'), id: sql.raw('s.id'), title: sql.raw('s.c0'), description: sql.raw('s.c1') }
  // A CROSS JOIN: the overrides drive (SQLite takes it as the order to loop in).
  return sql<{ id: number; occurrence: string; title: string | null; description: string | null }>`select o.event_id as id, o.occurrence,
    case when v.search_title is null then ${index.title} else v.search_title end as title,
    case when v.search_description is null and v.description is null then ${index.description} else v.search_description end as description
    from event_overrides v cross join event_occurrences o left join ${index.table} s on ${index.id} = o.event_id
    where o.event_id = v.event_id and o.occurrence = v.occurrence and o.overridden = 1`
}

/**
 * SQLite's LIKE folds ASCII letters (its default): a text or needle as LIKE compares it. Folded texts hold no
 * upper-case letter, so this changes nothing there; it keeps the match in memory exactly LIKE's all the same.
 */
function asLikeCompares(db: Db, text: string): string {
  return isPostgres(db) ? text : text.replace(/[A-Z]+/g, (letters) => letters.toLowerCase())
}

/**
 * The overridden occurrences' texts (`overriddenTextsQuery`) as LIKE compares them (`asLikeCompares`), remembered
 * until events change (a few hundred overrides: the read cache sizes the entry as small).
 */
interface OverriddenTexts {
  /** Per override: event id, occurrence id, title, description in turn. */
  rows: Array<number | string | null>
  /** Per text (each override's title, then its description), PAIR_WORDS words: the bits of its pairs (`pairBit`). */
  pairs: Uint32Array
  /** Which read of the texts this is (one number per read in this process): what places found in them are remembered by. */
  serial: number
}

/** The texts' reads so far (`OverriddenTexts.serial`). */
let textsRead = 0

/** Bits of a text's pairs of adjacent UTF-16 code units, hashed (`pairBit`): 2,048 (a text of the benchmark's 400 characters sets about 15 % of them). */
const PAIR_WORDS = 64

/** The bit of the pair of code units `a`, `b` among a text's PAIR_WORDS × 32 (multiplicative hashing: the product's top 11 bits). */
function pairBit(a: number, b: number): number {
  return Math.imul((a << 16) ^ b, 0x9e3779b1) >>> 21
}

function overriddenTexts(db: Db): Promise<OverriddenTexts> {
  return rememberedResult(db, 'ids:events:overridden:texts', async () => {
    const rows = (await overriddenTextsQuery(db).execute(db)).rows
      .flatMap((r) => [Number(r.id), r.occurrence, r.title === null ? null : asLikeCompares(db, r.title), r.description === null ? null : asLikeCompares(db, r.description)])
    const pairs = new Uint32Array((rows.length >>> 1) * PAIR_WORDS)
    for (let i = 0; i + 3 < rows.length; i += 4) {
      for (const j of [0, 1]) {
        const text = rows[i + 2 + j] as string | null
        const at = ((i >>> 1) + j) * PAIR_WORDS
        if (text !== null) for (let c = 0; c + 1 < text.length; c++) {
          const bit = pairBit(text.charCodeAt(c), text.charCodeAt(c + 1))
          pairs[at + (bit >>> 5)] = (pairs[at + (bit >>> 5)] as number) | (1 << (bit & 31))
        }
      }
    }
    return { rows, pairs, serial: ++textsRead }
  })
}

/** A needle as the overrides' texts are matched against it (`holdsOwn`): folded as LIKE compares it, and its pairs' bits. */
interface OwnNeedle {
  folded: string
  bits: number[]
}

function ownNeedle(db: Db, needle: string): OwnNeedle {
  const folded = asLikeCompares(db, foldCase(needle))
  const bits: number[] = []
  for (let c = 0; c + 1 < folded.length; c++) bits.push(pairBit(folded.charCodeAt(c), folded.charCodeAt(c + 1)))
  return { folded, bits }
}

/**
 * Whether the overridden occurrence of rank `k` in `texts` holds the needle as `ownSearch`'s LIKE (`likePattern`)
 * finds it: a substring of its folded title or description, on SQLite ASCII letters folded alike. A text lacking
 * one of the needle's pairs cannot hold it, and is not read (a needle absent from a text is looked for through the
 * whole of it: 0.09–0.2 ms for the benchmark's 297 overrides a needle, most of a new needle's time with overrides).
 * Where a statement per needle read the overrides and their events' texts again (`overriddenMatchesQuery`: 2–4 ms
 * on a loaded machine, a third of a random search's CPU with series; docs/performance.md "Issue 45: random reads
 * with recurring events").
 */
function holdsOwn(texts: OverriddenTexts, k: number, needle: OwnNeedle): boolean {
  for (const j of [0, 1]) {
    const text = texts.rows[4 * k + 2 + j] as string | null
    if (text === null) continue
    if (mayHold(texts.pairs, (2 * k + j) * PAIR_WORDS, needle.bits) && text.includes(needle.folded)) return true
  }
  return false
}

/** Whether the text whose pairs' bits start at `at` in `pairs` has every bit of `bits`. */
function mayHold(pairs: Uint32Array, at: number, bits: readonly number[]): boolean {
  for (const bit of bits) if (((pairs[at + (bit >>> 5)] as number) & (1 << (bit & 31))) === 0) return false
  return true
}

/** `overriddenMatchesQuery`'s answer by event id, then occurrence id, from the texts in memory (also for the differential test). */
export async function overriddenMatches(db: Db, needle: string): Promise<Map<number, Map<string, boolean>>> {
  const texts = await overriddenTexts(db)
  const own = ownNeedle(db, needle)
  const byEvent = new Map<number, Map<string, boolean>>()
  for (let i = 0; i + 3 < texts.rows.length; i += 4) {
    const id = texts.rows[i] as number
    let hits = byEvent.get(id)
    if (hits === undefined) byEvent.set(id, (hits = new Map()))
    hits.set(texts.rows[i + 1] as string, holdsOwn(texts, i >>> 2, own))
  }
  return byEvent
}

/** How many times this process found the overridden occurrences' places in a window (for the tests: that they are found once). */
let placesFound = 0
export function overriddenPlacesFound(): number {
  return placesFound
}

/** The places of the window (`order`, `occurrences`) of the overridden occurrences of `texts`, each with its rank there, in turn. */
function overriddenPlaces(texts: OverriddenTexts, order: Int32Array, occurrences: readonly string[]): { texts: OverriddenTexts; places: Int32Array } {
  placesFound++
  const rank = new Map<number, Map<string, number>>()
  for (let i = 0; i + 3 < texts.rows.length; i += 4) {
    const id = texts.rows[i] as number
    let own = rank.get(id)
    if (own === undefined) rank.set(id, (own = new Map()))
    own.set(texts.rows[i + 1] as string, i >>> 2)
  }
  const places: number[] = []
  for (let place = 0; place < order.length; place++) {
    const k = rank.get(order[place] as number)?.get(occurrences[place] as string)
    if (k !== undefined) places.push(place, k)
  }
  return { texts, places: Int32Array.from(places) }
}

/**
 * Each event's places in `order`, one array: at `id` and `id + 1`, for an id from 0 to the largest, where its places
 * start and end (so at 0, where the places start: the largest id + 2), in order.
 */
function placesByEvent(order: Int32Array): Int32Array {
  let top = 0
  for (const id of order) if (id > top) top = id
  const head = top + 2
  const index = new Int32Array(head + order.length)
  // How many places each id has (at id + 1), summed from `head` on: where each id's places start.
  // (An id below 0, which no event has, is left out: no needle finds it.)
  for (const id of order) if (id >= 0) index[id + 1] = (index[id + 1] as number) + 1
  index[0] = head
  for (let id = 1; id < head; id++) index[id] = (index[id] as number) + (index[id - 1] as number)
  const next = index.slice(0, head)
  for (let place = 0; place < order.length; place++) {
    const id = order[place] as number
    if (id < 0) continue
    index[next[id] as number] = place
    next[id] = (next[id] as number) + 1
  }
  return index
}

/** The places of `order` whose bits are set in `bits` (word 0 a count, then the bits), the `offset`th set one first, `limit` at most. */
function placesSet(bits: Uint32Array, order: Int32Array, offset: number, limit: number): number[] {
  const ids: number[] = []
  let skip = offset
  for (let word = 1; word < bits.length && ids.length < limit; word++) {
    let w = bits[word] as number
    if (w === 0) continue
    const set = bitCount(w)
    if (skip >= set) {
      skip -= set
      continue
    }
    while (w !== 0 && ids.length < limit) {
      const low = w & -w
      if (skip > 0) skip--
      else ids.push(((word - 1) << 5) + 31 - Math.clz32(low))
      w = (w ^ low) >>> 0
    }
  }
  return ids
}

/** How many bits of a 32-bit word are set. */
function bitCount(word: number): number {
  let w = word - ((word >>> 1) & 0x55555555)
  w = (w & 0x33333333) + ((w >>> 2) & 0x33333333)
  return Math.imul((w + (w >>> 4)) & 0x0f0f0f0f, 0x01010101) >>> 24
}

/** Ids below this have a byte in a window's membership (8 MB at most). */
const MEMBERSHIP_UP_TO = 2 ** 23

/**
 * One byte per id up to the largest of `ids`, 1 at each of them; undefined when one is MEMBERSHIP_UP_TO or
 * more, or with `once`, when an id comes more than once (an event with several occurrences).
 */
function membershipOf(ids: readonly number[], once = false): Buffer | undefined {
  let top = 0
  for (const id of ids) if (id > top) top = id
  if (top >= MEMBERSHIP_UP_TO) return undefined
  const bytes = Buffer.alloc(top + 1)
  for (const id of ids) {
    if (once && bytes[id] === 1) return undefined
    bytes[id] = 1
  }
  return bytes
}

/**
 * Up to `allUpTo` matches of a filter with links, every id is read in list order at once (see `linkedIds`);
 * past it, the first `allUpTo` and the total. Tests lower it.
 */
export const linkedPlanBounds = { allUpTo: 1000 }

/**
 * The matches of a filter with links in list order (all of them, or the first ones: `held`), and how many there
 * are. A page's entries are made from the remembered list when asked (`page`): a list of 1,000 entries made whole
 * for every request (twice: the count and the page) was 40 kB of garbage a random filtered list with series.
 */
interface LinkedIds {
  held: number
  total: number
  page: (offset: number, limit: number) => ListEntry[]
}

/**
 * With link filters, the matches of `f` in list order and their total, remembered like totals and pages: every
 * id when they are `linkedPlanBounds.allUpTo` at most, else the first that many. Picking a page from the
 * linked events reads and sorts them all anyway: one statement gives the total (a window count over the
 * same rows) and the pages, where a count and a statement per page read them again. A category of some 20,000
 * events at 1,000,000 (about 7,000 in the default window): 31 ms, where the count alone read them again in 28.
 * Past `allUpTo` and up to SORT_LINKED_UP_TO matches, each event's number of matches is kept too (one statement
 * more), so that the list can be rechecked like a whole one (`stillFirstLinked`): at 20,000 events with a fifth of
 * them series, nearly every category's list (1,000–1,840 occurrences) is past 1,000, and read again after any
 * write to any event it cost 2–4 ms. Undefined without link filters.
 */
async function linkedIds(db: Db, f: EventFilter): Promise<LinkedIds | undefined> {
  if (linkFilters(f).length === 0) return undefined
  const upTo = linkedPlanBounds.allUpTo
  const found = await rememberedResult(db, `all:${listKey(f)}`, async (): Promise<FlatEntries> => {
    const rows = await allLinkedIdsQuery(db, f, upTo + 1).execute()
    let total = rows.length === 0 ? 0 : Number(rows[0]?.total)
    const counts = rows.length > upTo && total <= SORT_LINKED_UP_TO
      ? (await linkedCountsQuery(db, f).execute()).flatMap((r) => [Number(r.id), Number(r.n)]) : []
    // The total of the numbers kept (a write between the two statements: the recheck compares those numbers, and
    // finds an entry it moved, as that write's events are rechecked when it is taken in).
    if (counts.length > 0) {
      total = 0
      for (let i = 1; i < counts.length; i += 2) total += counts[i] as number
    }
    // Entries (id, occurrence in turn), each event's number of matches (id, number in turn; past `allUpTo` only),
    // how many numbers those are, then the total: one array (what the read cache sizes).
    return [...flat(rows.slice(0, upTo)), ...counts, counts.length, total]
  }, async (found, changed) => {
    const parts = linkedParts(found)
    const entries = entriesOf(found.slice(0, 2 * parts.held))
    if (parts.held === parts.total) return stillAllLinked(db, f, entries, changed)
    // Only a list kept with each event's number of matches can be rechecked past its first ids.
    if (parts.counts === 0) return false
    const counts = new Map<number, number>()
    for (let i = 2 * parts.held; i + 1 < 2 * parts.held + parts.counts; i += 2) counts.set(found[i] as number, found[i + 1] as number)
    return stillFirstLinked(db, f, entries, counts, changed)
  }, linkedRelevance(f))
  const { held, total } = linkedParts(found)
  return { held, total, page: (offset, limit) => entriesOf(found.slice(2 * Math.min(offset, held), 2 * Math.min(offset + limit, held))) }
}

/** The events a remembered list of links holds (entries, and the events of its numbers of matches), per list. */
const heldEvents = new WeakMap<FlatEntries, ReadonlySet<number>>()

/**
 * Whether the changed event `id` (as `footprint` shows it now) may matter to `found`, the remembered list of links
 * of `f` (see read-cache.ts `Relevant`): it is linked to one of the targets of the filter's first link filter (no
 * other event can match now: `changedMatchesQuery` asks the same), or the list holds it (among every match, or the
 * events of its numbers of matches). A list of the first ids without those numbers cannot tell: every event may.
 * The driving targets' keys made from `f` once (the cache asks once per changed event per remembered list).
 */
function linkedRelevance(f: EventFilter): (found: FlatEntries, id: number, footprint: Footprint) => boolean {
  let driving: readonly string[] | undefined
  return (found, id, footprint) => {
    if (driving === undefined) {
      const driver = linkFilters(f)[0]
      driving = driver === undefined ? [] : driver[2].map((target) => targetKey(driver[0], target))
    }
    for (const key of driving) if (footprint.targets.has(key)) return true
    const parts = linkedParts(found)
    if (parts.held < parts.total && parts.counts === 0) return true
    let held = heldEvents.get(found)
    if (held === undefined) {
      const ids = new Set<number>()
      for (let i = 0; i < 2 * parts.held; i += 2) ids.add(found[i] as number)
      for (let i = 2 * parts.held; i + 1 < 2 * parts.held + parts.counts; i += 2) ids.add(found[i] as number)
      heldEvents.set(found, (held = ids))
    }
    return held.has(id)
  }
}

/** Where `linkedIds`' remembered array holds what: entries held, numbers of the counts, the total. */
function linkedParts(found: FlatEntries): { held: number; counts: number; total: number } {
  const counts = found.at(-2) as number
  return { held: (found.length - 2 - counts) >>> 1, counts, total: found.at(-1) as number }
}

/** Each event's number of matches of `f` (with link filters), for the recheck of a list past its first ids (also for the query-plan tests). */
export function linkedCountsQuery(db: Db, f: EventFilter) {
  return eventsFrom(db, f, true, false).select(['o.event_id as id', sql<number | string>`count(*)`.as('n')]).groupBy('o.event_id')
}

/**
 * Whether `entries`, the first matches of `f` in list order (fewer than all), and the total still are after the
 * events `changed` changed (and nothing else the list depends on): each changed event matches as many times as
 * it did (`counts`, every event's number of matches when the list was read: so the total is the same), the last
 * entry is not one of theirs, their matches now that come before it are exactly their entries, and each of those is
 * still in its place between its neighbours (as `stillAllLinked` checks). Then the first matches are the same set,
 * in the same order.
 */
async function stillFirstLinked(db: Db, f: EventFilter, entries: readonly ListEntry[], counts: ReadonlyMap<number, number>, changed: readonly number[]): Promise<boolean> {
  const last = entries.at(-1)
  const changedSet = new Set(changed)
  if (last === undefined || changedSet.has(last.id)) return false
  let before = 0
  for (const id of changedSet) before += counts.get(id) ?? 0
  // One past their matches before is enough to tell that one of them matches more often.
  const matching = await changedMatchesQuery(db, f, [...changedSet], before + 1).execute()
  if (matching.length !== before) return false
  const now = new Map<number, number>()
  for (const m of matching) now.set(m.id, (now.get(m.id) ?? 0) + 1)
  for (const [id, n] of now) if (counts.get(id) !== n) return false
  const at: number[] = []
  entries.forEach((e, i) => {
    if (changedSet.has(e.id)) at.push(i)
  })
  if (matching.length === 0 && at.length === 0) return true
  const starts = await startsOf(db, [last.id, ...neighboursOf(entries, at).map((e) => e.id)])
  const lastStart = starts.get(entryKey(last))
  if (lastStart === undefined) return false
  // Their matches now that come before the last entry, against their entries.
  const ahead = matching.filter((m) => m.start_utc < lastStart || (m.start_utc === lastStart && (m.id < last.id || (m.id === last.id && m.occurrence < last.occurrence))))
  const listed = new Set(at.map((i) => entryKey(entries[i] as ListEntry)))
  if (ahead.length !== listed.size || ahead.some((m) => !listed.has(entryKey({ id: m.id, occurrence: m.occurrence })))) return false
  return inPlace(entries, at, starts)
}

const entryKey = (e: ListEntry) => `${e.id} ${e.occurrence}`

/** The entries next to those at `at` (and those), each once. */
function neighboursOf(entries: readonly ListEntry[], at: readonly number[]): ListEntry[] {
  const around = new Set<number>()
  for (const i of at) for (let j = Math.max(0, i - 1); j <= Math.min(entries.length - 1, i + 1); j++) around.add(j)
  return [...around].map((j) => entries[j] as ListEntry)
}

/** The start of every occurrence of the events `ids` as it stands now, by `entryKey`. */
async function startsOf(db: Db, ids: readonly number[]): Promise<Map<string, string>> {
  const rows = await db.selectFrom('event_occurrences').select(['event_id', 'occurrence', 'start_utc'])
    .where(inIdList(db, sql.ref('event_id'), [...new Set(ids)])).execute()
  return new Map(rows.map((r) => [`${r.event_id} ${r.occurrence}`, r.start_utc]))
}

/** Whether each entry at `at` still comes after the one before it and before the one after it by (start, id, occurrence), starts as `starts` says now. */
function inPlace(entries: readonly ListEntry[], at: readonly number[], starts: ReadonlyMap<string, string>): boolean {
  // `start_utc` is a fixed-width UTC text (YYYY-MM-DD HH:MM:SS): compared as text, it sorts as the list's statement does.
  const before = (a: ListEntry, b: ListEntry): boolean => {
    const startA = starts.get(entryKey(a))
    const startB = starts.get(entryKey(b))
    if (startA === undefined || startB === undefined) return false
    return startA < startB || (startA === startB && (a.id < b.id || (a.id === b.id && a.occurrence < b.occurrence)))
  }
  for (const i of at) {
    const entry = entries[i] as ListEntry
    if (i > 0 && !before(entries[i - 1] as ListEntry, entry)) return false
    if (i < entries.length - 1 && !before(entry, entries[i + 1] as ListEntry)) return false
  }
  return true
}

/**
 * Whether `entries`, every match of `f` in list order, still are after the events `changed` changed (and
 * nothing else the list depends on): the occurrences of each changed event that match now are exactly its
 * entries in the list, and each of those is still in its place, after the one before it and before the one
 * after it by (start, id, occurrence) as they stand now. The other pairs of neighbours did not change, so the
 * whole list is still in order.
 */
async function stillAllLinked(db: Db, f: EventFilter, entries: readonly ListEntry[], changed: readonly number[]): Promise<boolean> {
  const changedSet = new Set(changed)
  const at: number[] = []
  entries.forEach((e, i) => {
    if (changedSet.has(e.id)) at.push(i)
  })
  // More than the list holds cannot match: one past it is enough to tell.
  const matching = (await changedMatchesQuery(db, f, changed, entries.length + 1).execute()).map(entryKey)
  const listed = new Set(at.map((i) => entryKey(entries[i] as ListEntry)))
  if (matching.length !== listed.size || matching.some((k) => !listed.has(k))) return false
  if (at.length === 0) return true
  return inPlace(entries, at, await startsOf(db, neighboursOf(entries, at).map((e) => e.id)))
}

/**
 * Which of the events `ids` match `f` now (`limit` at most), each looked up by id and checked: the ids drive
 * (a CROSS JOIN, as in `eventsFrom`; else SQLite read the date window, 0.9 ms instead of 0.04), every
 * filter checked per event (also for the query-plan tests). Only the ids linked through the filter's first
 * link filter (`linkedTo`: one probe of a link table's key each) have their occurrences looked up: no other
 * can match. Under writes to random events (the benchmark's 90/10 mix: some 200 events changed between two
 * reads of a list), nearly every changed event is linked to none of the list's targets, and an occurrence
 * lookup per changed event (a series' dozens of rows, each checked) cost about what reading the list again did.
 */
export function changedMatchesQuery(db: Db, f: EventFilter, ids: readonly number[], limit = 1) {
  const list = ids.filter((id) => Number.isSafeInteger(id))
  const driver = linkFilters(f)[0]
  const changed = isPostgres(db)
    ? sql<{ id: number }>`(select c.id from unnest(${list}::bigint[]) as c(id)${driver === undefined ? sql`` : sql` where ${linkedTo(db, driver, sql.ref('c.id'))}`})`
    : sql<{ id: number }>`(select json_each.value as id from json_each(${JSON.stringify(list)})${driver === undefined ? sql`` : sql` where ${linkedTo(db, driver, sql.ref('json_each.value'))}`})`
  return db.selectFrom(changed.as('changed')).crossJoin(occurrencesOfEvent(db))
    .where(sql<SqlBool>`o.event_id = changed.id`)
    .where(filterCondition(db, f, linkFilters(f), true))
    .select(['o.event_id as id', 'o.occurrence', 'o.start_utc']).limit(limit)
}

/** The statement `linkedIds` runs (also for the query-plan tests). */
export function allLinkedIdsQuery(db: Db, f: EventFilter, limit: number) {
  return inListOrder(eventsFrom(db, f, true, false).select(['o.event_id as id', 'o.occurrence', sql<number | string>`count(*) over ()`.as('total')])).limit(limit)
}

/** The statement `countEvents` runs (also for the query-plan tests). */
export function eventCountQuery(db: Db, f: EventFilter, searchDrives: boolean) {
  return eventsFrom(db, f, true, searchDrives).select((eb) => eb.fn.countAll<number>().as('n'))
}

/**
 * Whether the events the search index finds (in any language, at any date) should drive the list query:
 * when they are a few thousand at most, looking each up costs less than reading the listing index over
 * the date window (at 1,000,000 events: a rare word in 1 ms instead of some 50 ms; a common one, found
 * in 50,000 events, 100 ms and more). Their number is remembered per needle.
 */
async function searchDrives(db: Db, f: EventFilter): Promise<boolean> {
  if (linkFilters(f).length > 0) return false
  const candidates = await searchMatches(db, f)
  return candidates !== undefined && candidates <= SORT_LINKED_UP_TO
}

/**
 * How many events the search index lists for `f.search` (in any language, at any date), counted up to what
 * the plans that ask need to tell apart (`matchesCountedUpTo`), remembered per needle; undefined when no
 * index serves it.
 */
async function searchMatches(db: Db, f: EventFilter): Promise<number | undefined> {
  if (!hasSearch(f)) return undefined
  const found = searchedIds(db, f.search)
  if (!found.indexed) return undefined
  const upTo = matchesCountedUpTo(found)
  return rememberedResult(db, `count:events:search:${JSON.stringify(f.search)}`, async () =>
    Number((await db.selectFrom(sql<{ id: number }>`(select id from ${found.ids} as m limit ${upTo})`.as('found'))
      .select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow()).n))
}

/**
 * Matches counted at most (`searchMatches`): one past SORT_LINKED_UP_TO tells whether they drive a list;
 * a needle that may be looked up (`searchLooksUp`) is counted further (`searchPlanBounds`). Past
 * that, the plans are chosen as for that many. Counting is a statement over every match: a common pair
 * took 6 ms at 1,000,000 events, to learn only that it was more than 5,000.
 */
function matchesCountedUpTo(found: SearchedIds): number {
  return found.looksUp === undefined ? SORT_LINKED_UP_TO + 1 : searchPlanBounds.lookedUpCountedUpTo
}

/** Up to this many matches, a page with link filters is picked from the linked events and sorted (and the search index's finds drive). */
const SORT_LINKED_UP_TO = 5000

/**
 * The entries of a page (event and occurrence), in list order. With link filters, the plan follows the
 * total (already counted): a few thousand matches at most are read from the links and sorted; more are
 * found by reading the listing index in order and checking the links per event, which stops once the page
 * is full.
 */
export async function eventEntries(db: Db, f: EventFilter, offset: number, limit: number, total: number): Promise<readonly ListEntry[]> {
  const linked = await linkedIds(db, f)
  if (linked !== undefined && (linked.held === linked.total || offset + limit <= linked.held)) return linked.page(offset, limit)
  const searched = await searchedInWindow(db, f)
  if (searched !== undefined) return searched.page(offset, limit)
  const found = await rememberedResult(db, `ids:${listKey(f)}:${offset}:${limit}`, async (): Promise<FlatEntries> => {
    const drives = await searchDrives(db, f)
    const lookUp = !drives && total > 0 && await searchLooksUp(db, f, offset + limit, total)
    const shaped = windowStatement(f, 'page')
    if (shaped !== undefined) return flat((await windowRows(db, shaped, [offset, limit])) as ListEntry[])
    return flat(await eventIdsQuery(db, f, offset, limit, total, drives, lookUp).execute())
  })
  return entriesOf(found)
}

/** The event ids of a page's entries (`eventEntries`), in list order (an event as often as it has occurrences there). */
export async function eventIds(db: Db, f: EventFilter, offset: number, limit: number, total: number): Promise<readonly number[]> {
  return (await eventEntries(db, f, offset, limit, total)).map((e) => e.id)
}

/** Events of the window read per match of the index it lists, at most, for a page to look each up (see `searchLooksUp`). */
const LOOKUPS_PER_MATCH = 0.015

/**
 * Whether a page of a searched list, the index's matches too many to drive it (`searchDrives`), should look
 * each event of the window up in the index (`looksUp`) rather than probe the index's list of matches, which
 * the statement makes first (its cost follows the matches: 200 ms for a common needle at 1,000,000 events,
 * where the page looked up 0.4 ms). Read in list order, the page reads about `upTo` × window ÷ total events;
 * a lookup costs up to about 70 times a match listed (25 µs for a needle of many trigrams, against about
 * 0.3 µs), so lookups are chosen while they stay under LOOKUPS_PER_MATCH (1 in 67) per match. A needle rare in the window or a deep page lists.
 */
async function searchLooksUp(db: Db, f: EventFilter, upTo: number, total: number): Promise<boolean> {
  if (!hasSearch(f) || linkFilters(f).length > 0 || searchedIds(db, f.search).looksUp === undefined) return false
  const matches = await searchMatches(db, f)
  const window = await countEvents(db, { ...f, search: undefined })
  return matches !== undefined && (upTo * window) / total < matches * LOOKUPS_PER_MATCH
}

/** The statement `eventIds` runs (also for the query-plan tests). */
export function eventIdsQuery(db: Db, f: EventFilter, offset: number, limit: number, total: number, searchDrives: boolean, lookUp = false) {
  return inListOrder(eventsFrom(db, f, total <= SORT_LINKED_UP_TO, searchDrives, lookUp).select(['o.event_id as id', 'o.occurrence']))
    .limit(limit).offset(offset)
}

/** A statement over the occurrences (`o`), in list order: start, then event id, then occurrence id (CONTRACT §3, §17). */
function inListOrder<Q extends { orderBy: (ref: 'o.start_utc' | 'o.event_id' | 'o.occurrence', direction: 'asc') => Q }>(query: Q): Q {
  return query.orderBy('o.start_utc', 'asc').orderBy('o.event_id', 'asc').orderBy('o.occurrence', 'asc')
}

/** The id of the term a `categories`/`tags` filter entry names (an id or a slug, of a term in `language`), or undefined. */
export async function filterTermId(db: Db, taxonomy: Taxonomy, entry: number | string, language: Language): Promise<number | undefined> {
  const text = String(entry)
  const isId = typeof entry === 'number' || /^\d+$/.test(text)
  const id = Number(text)
  if (isId && !Number.isSafeInteger(id)) return undefined
  const key = isId ? `terms:${taxonomy}:${language}:id:${id}` : `terms:${taxonomy}:${language}:slug:${text}`
  return rememberedResult(db, `lookup:${key}`, async () => (await db.selectFrom('terms').select('id').where('taxonomy', '=', taxonomy)
    .where(isId ? sql<SqlBool>`id = ${id} and language = ${language}` : sql<SqlBool>`language = ${language} and slug = ${text}`)
    .executeTakeFirst())?.id)
}

/** The first of `ids` that names no record of `table` (the venue, organizer and parent filters), or undefined. */
export async function firstUnknownId(db: Db, table: 'venues' | 'organizers' | 'events', ids: number[]): Promise<number | undefined> {
  const firstMissing = async () => {
    const found = await db.selectFrom(table).select('id').where(inIdList(db, sql.ref('id'), ids)).execute()
    const known = new Set(found.map((r) => r.id))
    return ids.find((id) => !known.has(id))
  }
  // Only "all known" is remembered (an undefined result is not): a miss is asked again, and is a 400.
  const allKnown = await rememberedResult(db, `exist:${table}:${JSON.stringify(ids)}`, async () => ((await firstMissing()) === undefined ? ids.length : undefined))
  return allKnown !== undefined ? undefined : firstMissing()
}
