/**
 * Stateful, model-based checks (fast-check `fc.commands` + `fc.asyncModelRun`): random sequences of
 * creates, reads by id and by slug, partial updates (POST, PUT, PATCH), filtered lists, trash and force
 * delete over events, venues, organizers, categories and tags, each answer compared field by field with a
 * small in-memory model of CONTRACT §2–§7. Nothing written is lost, nothing unasked for changes, lists,
 * totals, term counts and `has_events` agree with the model, trashed records behave, slugs are unique per
 * resource and language and never change unless asked, ids only grow, ETags change on every write.
 *
 * Callers: an editor, an author, a contributor and anonymous; records in two languages, with translation
 * groups; bodies as JSON or as forms (all three array forms); conditional reads and writes (ETag, If-Match,
 * If-None-Match); a clock that moves one second per command, so `modified` and list orders are exact.
 * The model is a second, independent reading of the contract: it never calls the server's code.
 *
 * A second model (CONTRACT §17) runs sequences over recurring series: creates (DAILY/WEEKLY with COUNT, an
 * rdate, an exdate; UTC and Europe/Berlin), PATCH of the whole series, PATCH and DELETE of one occurrence and
 * splits, checked after each command by the occurrence lists, single occurrence reads, window totals of
 * `GET /events`, ETags and `/changes`; its expansion is src/lib/recurrence.ts `expandSeries`.
 *
 * STATEFUL_SEED, STATEFUL_RUNS and STATEFUL_MAX change the seed and size (STATEFUL_SERIES_RUNS and
 * STATEFUL_SERIES_MAX those of the series model); STATEFUL_SHRINK=1 shrinks a
 * failure (slow: every step builds an app); STATEFUL_OUTCOMES=1 (or 2) lists the answers the runs reached.
 */
import t, { type Test } from 'tap'
import fc from 'fast-check'
import assert from 'node:assert/strict'
import { buildApp } from '../src/app.js'
import { defaultConfig } from '../src/config.js'
import { openDatabase } from '../src/db/database.js'
import { createCompilers } from '../src/http/compilers.js'
import { generateKey } from '../src/lib/api-keys.js'
import { createUserWithKey } from '../src/repositories/users.js'
import { withTransaction } from '../src/db/unit-of-work.js'
import { API, API_URL, BASE_URL, NOW, build } from './helpers/build.js'
import { contractProblems, SPEC } from './helpers/contract.js'
import { freshDatabaseUrl } from './helpers/database.js'
import { propertyRuns, propertySeed } from './helpers/property.js'
import { checkRecurrence, expandSeries, type Occurrence } from '../src/lib/recurrence.js'

/** Fixed seed and size: about 30–60 s in the test command. */
const SEED = Number(process.env.STATEFUL_SEED ?? propertySeed(20260615))
const RUNS = Number(process.env.STATEFUL_RUNS ?? propertyRuns(40))
const MAX_COMMANDS = Number(process.env.STATEFUL_MAX ?? 400)

type Json = Record<string, unknown>
type Lang = 'en' | 'de'
type Status = 'publish' | 'draft' | 'pending' | 'private'
type PostStatus = Status | 'trash'
type Caller = 'editor' | 'author' | 'contributor' | 'anon'
type PostKind = 'event' | 'venue' | 'organizer'
type Taxonomy = 'category' | 'tag'
type Via = 'id' | 'slug'
type Method = 'PATCH' | 'PUT' | 'POST'
type IfMatch = 'none' | 'current' | 'stale'

const USER_ID = { editor: 1, author: 2, contributor: 3 } as const
const STATUSES: readonly Status[] = ['publish', 'draft', 'pending', 'private']
const COLLECTION = { event: 'events', venue: 'venues', organizer: 'organizers', category: 'categories', tag: 'tags' } as const

// ---------------------------------------------------------------------------------------------------
// The system under test: a fresh app over :memory: with a clock the commands move on, one second each.

const compilers = createCompilers()

interface Reply {
  status: number
  body: Json
  headers: Record<string, unknown>
}

interface Sut {
  /** Moves the clock on one second and returns it as records show it (site time zone UTC). */
  tick(): string
  call(caller: Caller, method: string, url: string, payload?: Json | string, headers?: Record<string, string>): Promise<Reply>
  close(): Promise<void>
}

let commandsRun = 0
let requestsSent = 0
/** Answers seen, by method, route kind and status: shows which paths the sequences reached. */
const outcomes = new Map<string, number>()

async function makeSut(t: Test): Promise<Sut> {
  const handle = await openDatabase(await freshDatabaseUrl(t))
  let clock = NOW.getTime()
  const app = await buildApp({ db: handle.db, config: defaultConfig({ publicUrl: BASE_URL }), now: () => new Date(clock), spec: SPEC, compilers })
  const keys: Record<string, string> = {}
  for (const role of ['editor', 'author', 'contributor'] as const) {
    const key = generateKey()
    const user = await withTransaction(handle.db, (trx) => createUserWithKey(trx, role, key, '2026-01-01 00:00:00'))
    assert.equal(user.id, USER_ID[role])
    keys[role] = key
  }
  return {
    tick() {
      clock += 1000
      return text(clock)
    },
    async call(caller, method, url, payload, headers = {}) {
      const auth: Record<string, string> = caller === 'anon' ? {} : { authorization: `Bearer ${keys[caller]}` }
      const res = await app.inject({ method: method as 'GET', url, headers: { ...auth, ...headers }, ...(payload !== undefined ? { payload } : {}) })
      requestsSent += 1
      const route = url.replace(/\?.*$/, '').replace(`${API}/`, '').replace(/\/by-slug\/.*$/, '/{slug}').replace(/\/\d+$/, '/{id}')
      // STATEFUL_OUTCOMES=2 also tells the 400s apart by their message.
      const detail = process.env.STATEFUL_OUTCOMES === '2' && res.statusCode === 400 ? ` ${res.body.slice(0, 120)}` : ''
      const outcome = `${method} ${route} ${res.statusCode}${detail}`
      outcomes.set(outcome, (outcomes.get(outcome) ?? 0) + 1)
      const problems = contractProblems(method, url, res)
      if (problems.length > 0) assert.fail(`${method} ${url} breaks the contract: ${problems.join('; ')} ${res.body.slice(0, 300)}`)
      assert.ok(res.statusCode < 500, `${method} ${url}: ${res.statusCode} ${res.body.slice(0, 300)}`)
      const body: unknown = res.body === '' ? {} : JSON.parse(res.body)
      return { status: res.statusCode, body: isJson(body) ? body : { value: body }, headers: res.headers }
    },
    async close() {
      await app.close()
      await handle.close()
    },
  }
}

// ---------------------------------------------------------------------------------------------------
// Small pure helpers of the model.

function isJson(value: unknown): value is Json {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}

const pad = (n: number, width = 2): string => String(n).padStart(width, '0')

/** `YYYY-MM-DD HH:MM:SS` of a UTC instant in ms. */
function text(ms: number): string {
  const d = new Date(ms)
  return `${d.getUTCFullYear()}-${pad(d.getUTCMonth() + 1)}-${pad(d.getUTCDate())} ${pad(d.getUTCHours())}:${pad(d.getUTCMinutes())}:${pad(d.getUTCSeconds())}`
}

function ms(value: string): number {
  return Date.parse(`${value.replace(' ', 'T')}Z`)
}

/** Day 0 is 2026-06-10, five days before the pinned clock (some events lie before the default window). */
function day(n: number): string {
  return text(Date.UTC(2026, 5, 10 + n)).slice(0, 10)
}

/** Offsets in minutes of the zones used, all summer dates (no DST change between June and October). */
const OFFSET: Record<string, number> = { UTC: 0, 'Europe/Berlin': 120, 'America/New_York': -240, 'Asia/Tokyo': 540 }
const ABBR: Record<string, string> = { UTC: 'UTC', 'Europe/Berlin': 'CEST', 'America/New_York': 'EDT', 'Asia/Tokyo': 'JST' }

const toUtc = (wall: string, tz: string): string => text(ms(wall) - (OFFSET[tz] ?? 0) * 60000)
const toWall = (utc: string, tz: string): string => text(ms(utc) + (OFFSET[tz] ?? 0) * 60000)

function details(value: string): Json {
  const [date = '', time = ''] = value.split(' ')
  const [year, month, dayOfMonth] = date.split('-').map(Number)
  const [hour, minutes, seconds] = time.split(':').map(Number)
  return { year, month, day: dayOfMonth, hour, minutes, seconds }
}

const COSTS: Record<string, Json> = {
  Free: { currency_symbol: null, currency_code: null, currency_position: null, values: [0] },
  $10: { currency_symbol: '$', currency_code: null, currency_position: 'prefix', values: [10] },
  '10 EUR': { currency_symbol: null, currency_code: 'EUR', currency_position: 'postfix', values: [10] },
  '€5 - €15': { currency_symbol: '€', currency_code: null, currency_position: 'prefix', values: [5, 15] },
  '12.50': { currency_symbol: null, currency_code: null, currency_position: null, values: [12.5] },
  '15': { currency_symbol: null, currency_code: null, currency_position: null, values: [15] },
  donation: { currency_symbol: null, currency_code: null, currency_position: null, values: [] },
}
const NO_COST = { currency_symbol: null, currency_code: null, currency_position: null, values: [] }

const FOLD: Record<string, string> = { ä: 'ae', ö: 'oe', ü: 'ue', Ä: 'ae', Ö: 'oe', Ü: 'ue', ß: 'ss', é: 'e', É: 'e' }

/** The contract's slug rule for the characters the generators use. */
function slugify(value: string): string {
  return value.replace(/[äöüÄÖÜßéÉ]/g, (c) => FOLD[c] ?? c).toLowerCase()
    .replace(/[^a-z0-9]+/g, '-').replace(/^-+|-+$/g, '')
}

function uniqueSlug(base: string, taken: ReadonlySet<string>): string {
  if (!taken.has(base)) return base
  for (let n = 2; ; n++) if (!taken.has(`${base}-${n}`)) return `${base}-${n}`
}

/** Term names are unique by this key: trimmed, inner spaces collapsed, lower case. */
const nameKey = (name: string): string => name.trim().replace(/\s+/g, ' ').toLowerCase()

const emptyToNull = (value: string | null | undefined): string | null | undefined => (value === '' ? null : value)

function isHttpUrl(value: string): boolean {
  return /^https?:\/\/[^\s/]+/i.test(value)
}

const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/

// ---------------------------------------------------------------------------------------------------
// The model.

interface Img {
  id: number
  url: string
}

interface MPost {
  id: number
  lang: Lang
  /** Translation group: the id of the record it was made a translation of (transitively), else its own. */
  group: number
  author: number
  status: PostStatus
  slug: string
  image: Img | null
  date: string
  modified: string
  etag: string | undefined
  retired?: string | undefined
  view?: string | undefined
}

const VENUE_TEXT = ['address', 'city', 'country', 'province', 'state', 'zip', 'phone', 'stateprovince'] as const
type VenueText = (typeof VENUE_TEXT)[number]

interface MVenue extends MPost {
  name: string
  description: string | null
  text: Record<VenueText, string | null>
  website: string | null
  show_map: boolean
  show_map_link: boolean
}

interface MOrganizer extends MPost {
  name: string
  description: string | null
  phone: string | null
  website: string | null
  email: string | null
}

const FLAGS = ['show_map', 'show_map_link', 'hide_from_listings', 'sticky', 'featured'] as const
type FlagName = (typeof FLAGS)[number]

interface MEvent extends MPost {
  title: string
  description: string | null
  excerpt: string | null
  password: string | null
  allDay: boolean
  tz: string
  start: string
  end: string
  cost: string | null
  website: string | null
  flags: Record<FlagName, boolean>
  categories: number[]
  tags: number[]
  venues: number[]
  organizers: number[]
}

interface MTerm {
  id: number
  taxonomy: Taxonomy
  lang: Lang
  group: number
  name: string
  slug: string
  description: string | null
  parent: number
  etag: string | undefined
  retired?: string | undefined
  view?: string | undefined
}

interface Gone {
  slug: string
  lang: Lang
  name: string
}

class Model {
  now = text(NOW.getTime())
  events = new Map<number, MEvent>()
  venues = new Map<number, MVenue>()
  organizers = new Map<number, MOrganizer>()
  terms = new Map<number, MTerm>()
  images = new Map<number, string>()
  /** Every id ever handed out per resource, live or deleted for good: the targets of commands. */
  ids: Record<PostKind | Taxonomy, number[]> = { event: [], venue: [], organizer: [], category: [], tag: [] }
  /** What deleted-for-good records were, so commands can still aim at them (404) by slug or name. */
  gone = new Map<string, Gone>()
  maxId = { event: 0, venue: 0, organizer: 0, term: 0, image: 0 }

  posts(kind: 'venue'): Map<number, MVenue>
  posts(kind: 'organizer'): Map<number, MOrganizer>
  posts(kind: 'venue' | 'organizer'): Map<number, MVenue | MOrganizer>
  posts(kind: PostKind): Map<number, MPost>
  posts(kind: PostKind): Map<number, MPost> {
    return kind === 'event' ? this.events : kind === 'venue' ? this.venues : this.organizers
  }
}

function termsOf(m: Model, taxonomy: Taxonomy): MTerm[] {
  return [...m.terms.values()].filter((term) => term.taxonomy === taxonomy)
}

/** The id `r` picks among every id the resource ever had (999999 when there is none yet). */
function pickId(m: Model, kind: PostKind | Taxonomy, r: number): number {
  const ids = m.ids[kind]
  return ids.length === 0 ? 999999 : ids[r % ids.length] ?? 999999
}

/**
 * Mostly an id of a live record in `lang` (links and terms of an event must be in its language), at
 * times any id the resource ever had (another language, trashed or deleted: a 400).
 */
function pickIn(m: Model, kind: PostKind | Taxonomy, r: number, lang: Lang): number | undefined {
  const live = m.ids[kind].filter((id) => {
    const record = kind === 'category' || kind === 'tag' ? m.terms.get(id) : m.posts(kind).get(id)
    return record !== undefined && record.lang === lang && !('status' in record && record.status === 'trash')
  })
  if (r % 8 === 0) return pickId(m, kind, r)
  return live.length === 0 ? undefined : live[r % live.length]
}

/** Mostly a live record in another language than `lang` (a source for `translation_of`), at times any id. */
function pickOther(m: Model, kind: PostKind | Taxonomy, r: number, lang: Lang): number {
  const others = recordsOf(m, kind).filter((x) => x.lang !== lang)
  return r % 8 === 0 || others.length === 0 ? pickId(m, kind, r) : others[r % others.length]?.id ?? 999999
}

/** Counts something the model saw happen (shown with STATEFUL_OUTCOMES). */
function note(what: string): void {
  outcomes.set(`model: ${what}`, (outcomes.get(`model: ${what}`) ?? 0) + 1)
}

/** Slug, language and name of a live or deleted record, for by-slug routes and body references. */
function about(m: Model, kind: PostKind | Taxonomy, id: number): Gone | undefined {
  if (kind === 'category' || kind === 'tag') {
    const term = m.terms.get(id)
    return term !== undefined ? { slug: term.slug, lang: term.lang, name: term.name } : m.gone.get(`${kind}:${id}`)
  }
  const post = m.posts(kind).get(id)
  if (post !== undefined) return { slug: post.slug, lang: post.lang, name: nameOf(post) }
  return m.gone.get(`${kind}:${id}`)
}

function nameOf(post: MPost): string {
  return 'title' in post ? String(post.title) : 'name' in post ? String(post.name) : ''
}

// Rights (CONTRACT §6), for the callers of the run: an editor (user 1), an author (user 2), a contributor
// (user 3) and anonymous.
const editsAll = (caller: Caller): boolean => caller === 'editor'
const canPublish = (caller: Caller): boolean => caller === 'editor' || caller === 'author'
function canEdit(caller: Caller, record: { author: number; status: string }): boolean {
  if (caller === 'editor') return true
  if (caller === 'anon' || record.author !== USER_ID[caller]) return false
  return caller === 'author' || record.status === 'draft' || record.status === 'pending'
}
/** Whether the caller may read an event by id (never in the trash): a filter on one it may not matches nothing. */
function canReadEvent(caller: Caller, record: { author: number; status: string }): boolean {
  return record.status !== 'trash' && (record.status === 'publish' || canEdit(caller, record))
}
/** Whether the caller may read a venue or organizer by id: a link or filter naming one it may not is a 400. */
function canReadLinked(caller: Caller, record: { author: number; status: string }): boolean {
  return record.status === 'trash' ? canEdit(caller, record) : record.status === 'publish' || canEdit(caller, record)
}
/** The status a write stores: as asked, but a contributor asking `publish` or `private` submits for review. */
function statusToStore(caller: Caller, requested: unknown, fallback?: PostStatus): PostStatus {
  if (typeof requested !== 'string') return fallback ?? (canPublish(caller) ? 'publish' : 'draft')
  if (!canPublish(caller) && (requested === 'publish' || requested === 'private')) return 'pending'
  return requested as Status
}
const canRead = (caller: Caller, record: { author: number; status: string }): boolean => record.status === 'publish' || canEdit(caller, record)
const callerId = (caller: Caller): number => (caller === 'anon' ? 0 : USER_ID[caller])

function takenSlugs(m: Model, kind: PostKind | Taxonomy, lang: Lang, self: number | undefined): Set<string> {
  const records: Array<{ id: number; lang: Lang; slug: string }> = kind === 'category' || kind === 'tag' ? termsOf(m, kind) : [...m.posts(kind).values()]
  return new Set(records.filter((r) => r.lang === lang && r.id !== self).map((r) => r.slug))
}

function recordsOf(m: Model, kind: PostKind | Taxonomy): Array<{ id: number; lang: Lang; group: number }> {
  return kind === 'category' || kind === 'tag' ? termsOf(m, kind) : [...m.posts(kind).values()]
}

/**
 * `translation_of` (CONTRACT §7): an existing record of the resource, whose group has no version in `lang` yet;
 * an event, venue or organizer the caller may read and not in the trash (§6: else like an unknown id).
 */
function translationProblem(m: Model, kind: PostKind | Taxonomy, source: unknown, lang: Lang, caller: Caller): boolean {
  if (source === undefined) return false
  const found = recordsOf(m, kind).find((r) => r.id === source)
  if (found === undefined) return true
  if (kind !== 'category' && kind !== 'tag') {
    const post = m.posts(kind).get(found.id)
    if (post === undefined || post.status === 'trash' || !canRead(caller, post)) return true
  }
  return version(recordsOf(m, kind), found.group, lang) !== undefined
}

function translationGroup(m: Model, kind: PostKind | Taxonomy, source: unknown, lang: Lang, caller: Caller): number | undefined {
  if (source === undefined || translationProblem(m, kind, source, lang, caller)) return undefined
  note(`${kind} made a translation`)
  return recordsOf(m, kind).find((r) => r.id === source)?.group
}

/** The slug of a new record: from the slug given or the name, else `<singular>-<id>`; made unique. */
function newSlug(m: Model, kind: PostKind | Taxonomy, lang: Lang, given: string | undefined, name: string, id: number): string {
  const wanted = slugify(given ?? '') || slugify(name)
  const base = wanted === '' ? `${kind}-${id}` : wanted
  const slug = uniqueSlug(base, takenSlugs(m, kind, lang, id))
  if (slug !== base) note('slug suffixed to stay unique')
  return slug
}

/** The slug after an update that sends `slug`: the same one stays, another is made unique. */
function changedSlug(m: Model, kind: PostKind | Taxonomy, current: { id: number; lang: Lang; slug: string }, given: string, name: string): string {
  const wanted = slugify(given) || slugify(name) || `${kind}-${current.id}`
  return wanted === current.slug ? wanted : uniqueSlug(wanted, takenSlugs(m, kind, current.lang, current.id))
}

// ---------------------------------------------------------------------------------------------------
// Records as the contract shows them (CONTRACT §2), rendered from the model.

/**
 * `translations`: language → id of every live version in the record's group that `viewer` could read
 * directly (terms: every one), itself included.
 */
function translations(m: Model, kind: PostKind | Taxonomy, r: { id: number; group: number }, viewer?: Caller): Json {
  const records: Array<{ id: number; lang: Lang; group: number; author?: number; status?: string }> = kind === 'category' || kind === 'tag' ? termsOf(m, kind) : [...m.posts(kind).values()]
  const readable = (x: { id: number; author?: number; status?: string }): boolean => {
    if (viewer === undefined || x.id === r.id || x.status === undefined) return true
    const owned = { author: x.author ?? 0, status: x.status }
    return kind === 'event' ? canReadEvent(viewer, owned) : canReadLinked(viewer, owned)
  }
  const out: Json = {}
  for (const member of records.filter((x) => x.group === r.group && readable(x)).sort((a, b) => a.id - b.id)) out[member.lang] = member.id
  return out
}

/** The version of a group in `lang`, if there is one. */
function version<T extends { lang: Lang; group: number }>(records: Iterable<T>, group: number, lang: Lang): T | undefined {
  for (const r of records) if (r.group === group && r.lang === lang) return r
  return undefined
}

function renderVenue(m: Model, v: MVenue, viewer: Caller): Json {
  return {
    id: v.id, author: v.author, status: v.status, date: v.date, date_utc: v.date, modified: v.modified, modified_utc: v.modified,
    rest_url: `${API_URL}/venues/${v.id}`, venue: v.name, description: v.description, slug: v.slug, image: v.image,
    ...v.text, website: v.website,
    show_map: v.show_map, show_map_link: v.show_map_link, geo_lat: null, geo_lng: null, ml_language: v.lang, translations: translations(m, 'venue', v, viewer),
  }
}

/** Key order of a venue record (the spread above puts `website` after the text fields; the contract puts it before `stateprovince`). */
const VENUE_KEYS = [
  'id', 'author', 'status', 'date', 'date_utc', 'modified', 'modified_utc', 'rest_url', 'venue', 'description', 'slug',
  'image', 'address', 'city', 'country', 'province', 'state', 'zip', 'phone', 'website', 'stateprovince', 'show_map',
  'show_map_link', 'geo_lat', 'geo_lng', 'ml_language', 'translations',
]

function renderOrganizer(m: Model, o: MOrganizer, viewer: Caller): Json {
  return {
    id: o.id, author: o.author, status: o.status, date: o.date, date_utc: o.date, modified: o.modified, modified_utc: o.modified,
    rest_url: `${API_URL}/organizers/${o.id}`, organizer: o.name, description: o.description, slug: o.slug, image: o.image,
    phone: o.phone, website: o.website, email: o.email, ml_language: o.lang, translations: translations(m, 'organizer', o, viewer),
  }
}

function termCount(m: Model, id: number): number {
  let n = 0
  for (const e of m.events.values()) if (e.status === 'publish' && (e.categories.includes(id) || e.tags.includes(id))) n++
  return n
}

function renderTerm(m: Model, term: MTerm): Json {
  const collection = `${API_URL}/${COLLECTION[term.taxonomy]}`
  const urls: Json = { self: `${collection}/${term.id}`, collection }
  if (term.parent !== 0) urls.up = `${collection}/${term.parent}`
  return {
    id: term.id, name: term.name, slug: term.slug, description: term.description,
    ...(term.taxonomy === 'category' ? { parent: term.parent } : {}),
    count: termCount(m, term.id), rest_url: `${collection}/${term.id}`, urls, ml_language: term.lang, translations: translations(m, term.taxonomy, term),
  }
}

const byNameKey = (m: Model) => (a: number, b: number): number => {
  const ka = nameKey(m.terms.get(a)?.name ?? '')
  const kb = nameKey(m.terms.get(b)?.name ?? '')
  return ka < kb ? -1 : ka > kb ? 1 : a - b
}

/** An event as `viewer` sees it: in lists (`list`) a protected event has no description or excerpt. */
function renderEvent(m: Model, e: MEvent, viewer: Caller, list: boolean): Json {
  const startUtc = toUtc(e.start, e.tz)
  const endUtc = toUtc(e.end, e.tz)
  const hidden = list && e.password !== null
  const linked = <T extends MPost>(ids: number[], map: Map<number, T>, render: (m: Model, r: T, viewer: Caller) => Json): Json[] =>
    ids.flatMap((id) => {
      const r = map.get(id)
      // A trashed venue or organizer is left out for every viewer (CONTRACT §5).
      return r !== undefined && r.status !== 'trash' && canRead(viewer, r) ? [render(m, r, viewer)] : []
    })
  const terms = (ids: number[]): Json[] => [...ids].sort(byNameKey(m)).flatMap((id) => {
    const term = m.terms.get(id)
    return term === undefined ? [] : [renderTerm(m, term)]
  })
  return {
    id: e.id, global_id: `calendar.test?id=${e.id}`, author: e.author, status: e.status,
    date: e.date, date_utc: e.date, modified: e.modified, modified_utc: e.modified, rest_url: `${API_URL}/events/${e.id}`,
    title: e.title, description: hidden ? null : e.description, excerpt: hidden ? null : e.excerpt, slug: e.slug, image: e.image,
    all_day: e.allDay,
    start_date: e.start, start_date_details: details(e.start), end_date: e.end, end_date_details: details(e.end),
    utc_start_date: startUtc, utc_start_date_details: details(startUtc), utc_end_date: endUtc, utc_end_date_details: details(endUtc),
    timezone: e.tz, timezone_abbr: ABBR[e.tz], cost: e.cost, cost_details: e.cost === null ? NO_COST : COSTS[e.cost] ?? { unknown: e.cost },
    website: e.website, ...e.flags,
    categories: terms(e.categories), tags: terms(e.tags),
    venue: linked(e.venues, m.venues, renderVenue), organizer: linked(e.organizers, m.organizers, renderOrganizer),
    ml_language: e.lang, translations: translations(m, 'event', e, viewer), recurrence: null, occurrence: null,
  }
}

const EVENT_KEYS = [
  'id', 'global_id', 'author', 'status', 'date', 'date_utc', 'modified', 'modified_utc', 'rest_url', 'title', 'description',
  'excerpt', 'slug', 'image', 'all_day', 'start_date', 'start_date_details', 'end_date', 'end_date_details', 'utc_start_date',
  'utc_start_date_details', 'utc_end_date', 'utc_end_date_details', 'timezone', 'timezone_abbr', 'cost', 'cost_details',
  'website', 'show_map', 'show_map_link', 'hide_from_listings', 'sticky', 'featured', 'categories', 'tags', 'venue', 'organizer',
  'ml_language', 'translations', 'recurrence', 'occurrence',
]

function renderPost(m: Model, kind: PostKind, post: MPost, viewer: Caller, list: boolean): Json {
  if (kind === 'event') return renderEvent(m, post as MEvent, viewer, list)
  return kind === 'venue' ? renderVenue(m, post as MVenue, viewer) : renderOrganizer(m, post as MOrganizer, viewer)
}

/** Compares a record with the model's, key order included; `json_ld` (single event reads) is checked apart. */
function sameRecord(actual: unknown, expected: Json, what: string, keys?: string[]): void {
  assert.ok(isJson(actual), `${what}: not an object`)
  const { json_ld: jsonLd, ...rest } = actual
  if (jsonLd !== undefined) assert.ok(isJson(jsonLd), `${what}: json_ld is not an object`)
  assert.deepStrictEqual(rest, expected, what)
  assert.deepStrictEqual(Object.keys(rest), keys ?? Object.keys(expected), `${what}: key order`)
}

function keysOf(kind: PostKind | Taxonomy): string[] | undefined {
  return kind === 'event' ? EVENT_KEYS : kind === 'venue' ? VENUE_KEYS : undefined
}

function expectError(res: Reply, status: number, codes: readonly string[], what: string): void {
  assert.equal(res.status, status, `${what}: status ${res.status} ${JSON.stringify(res.body).slice(0, 400)}`)
  assert.ok(codes.includes(String(res.body.code)), `${what}: code ${String(res.body.code)}, expected ${codes.join(' or ')}`)
  assert.ok(isJson(res.body.data) && res.body.data.status === status, `${what}: data.status`)
}

/** An error the model expects, or undefined when the request must succeed. */
interface Failure {
  status: number
  codes: string[]
}
const fail = (status: number, ...codes: string[]): Failure => ({ status, codes })
const INVALID = fail(400, 'rest_invalid_param')

function etagOf(res: Reply): string {
  const etag = res.headers.etag
  assert.equal(typeof etag, 'string', 'an ETag on every single-record answer')
  return String(etag)
}

interface Tagged {
  etag: string | undefined
  /** The ETag before a write whose answer carries none (a trash): the next one read must differ. */
  retired?: string | undefined
  /** An event's record as the model rendered it for the reader that learned `etag` (undefined: unknown). */
  view?: string | undefined
}

/**
 * A write's ETag differs from the one before; a read's is the one the last write gave, for venues and
 * organizers. An event's ETag also names what it shows (its venues, organizers and terms, CONTRACT §5)
 * and a term's its count, which other records' writes move: their reads only learn it.
 */
function learnEtag(record: Tagged, res: Reply, write: boolean, what: string, view?: string): void {
  const etag = etagOf(res)
  if (write) assert.notEqual(etag, record.etag, `${what}: a write changes the ETag`)
  else if (record.etag !== undefined && view !== undefined && view === record.view) assert.equal(etag, record.etag, `${what}: the same record shown, the same ETag`)
  if (record.retired !== undefined) assert.notEqual(etag, record.retired, `${what}: a write changed the ETag`)
  record.etag = etag
  record.retired = undefined
  record.view = view
}

/**
 * Whether an update left the record as it was (everything but `modified` and the ETag): then `modified`
 * stays too, and so does the ETag (CONTRACT §5: no change writes nothing).
 */
function unchanged<T extends Tagged & { modified?: string }>(next: T, current: T): boolean {
  const strip = (r: T): string => JSON.stringify({ ...r, modified: undefined, etag: undefined, retired: undefined })
  if (strip(next) !== strip(current)) return false
  if (current.modified !== undefined) next.modified = current.modified
  return true
}

/**
 * A post whose status or author changed is read by other callers now: the other versions of its group
 * (their `translations`) and, for a venue or organizer, the events that show it are updated too, so their
 * ETags move even where a caller's view of them stays the same.
 */
function readersChanged(m: Model, kind: PostKind, before: { status: string; author: number }, after: MPost): void {
  if (before.status === after.status && before.author === after.author) return
  const retire = (r: Tagged): void => {
    r.retired = r.etag ?? r.retired
    r.etag = undefined
    r.view = undefined
  }
  for (const member of m.posts(kind).values()) if (member.group === after.group && member.id !== after.id) retire(member)
  if (kind !== 'event') for (const e of m.events.values()) if (e[kind === 'venue' ? 'venues' : 'organizers'].includes(after.id)) retire(e)
}

/** After a write whose answer may carry no ETag: the old one is retired. */
function retireEtag(record: Tagged, res: Reply, what: string): void {
  if (typeof res.headers.etag === 'string') return learnEtag(record, res, true, what)
  record.retired = record.etag ?? record.retired
  record.etag = undefined
}

function ifMatchHeader(record: { etag: string | undefined } | undefined, kind: string, id: number, ifMatch: IfMatch): Record<string, string> {
  if (ifMatch === 'stale') return { 'if-match': `"${kind}-${id}-999999"` }
  if (ifMatch === 'current' && record?.etag !== undefined) return { 'if-match': record.etag }
  return {}
}

/**
 * The current ETag of an event or term as `caller` reads it, for a conditional write: what it shows may
 * have changed since the model last saw it (see `learnEtag`). Left as it was when the caller cannot read it.
 */
async function refreshEtag(s: Sut, caller: Caller, record: Tagged | undefined, url: string, ifMatch: IfMatch): Promise<void> {
  if (record === undefined || ifMatch !== 'current' || caller === 'anon') return
  const res = await s.call(caller, 'GET', url)
  if (res.status !== 200 || typeof res.headers.etag !== 'string') return
  record.etag = res.headers.etag
  record.view = undefined // learnt as this caller sees it, which the model does not render here
}

/** A new id is above every id the resource ever had. */
function freshId(m: Model, counter: keyof Model['maxId'], id: unknown, what: string): number {
  assert.ok(typeof id === 'number' && Number.isSafeInteger(id) && id > m.maxId[counter], `${what}: id ${String(id)} is not above ${m.maxId[counter]}`)
  m.maxId[counter] = id
  return id
}

// ---------------------------------------------------------------------------------------------------
// Generators of abstract requests; references (`r`) are resolved against the model when a command runs.

type Form = 'wall' | 'short' | 'isoZ' | 'isoOffset' | 'bad'
interface DateSpec {
  day: number
  h: number
  mi: number
  form: Form
}
type ImageSpec = { kind: 'url'; n: number } | { kind: 'ref'; r: number } | { kind: 'unknown' } | null
type TermEntry = { kind: 'id' | 'digits' | 'slug' | 'name' | 'upper'; r: number } | { kind: 'unknown' }
type LinkEntry = { kind: 'id'; r: number } | { kind: 'inline'; fields: Json } | { kind: 'unknown' }
type ParentSpec = { kind: 'zero' } | { kind: 'ref'; r: number } | { kind: 'unknown' }

interface EventSpec {
  title?: string
  description?: string | null
  excerpt?: string | null
  slug?: string
  status?: Status
  timezone?: string | null
  all_day?: boolean
  start?: DateSpec
  end?: DateSpec
  image?: ImageSpec
  cost?: string | number | null
  website?: string | null
  password?: string | null
  author?: number
  date?: number
  flags?: Partial<Record<FlagName, boolean>>
  categories?: TermEntry[]
  tags?: TermEntry[]
  venue?: LinkEntry[]
  organizer?: LinkEntry[]
  omit?: 'title' | 'start_date' | 'end_date'
  translation_of?: number
}

const weighted = <T>(...pairs: Array<[number, fc.Arbitrary<T>]>): fc.Arbitrary<T> =>
  fc.oneof(...pairs.map(([weight, arbitrary]) => ({ weight, arbitrary })))

/** Some of the keys of a record of arbitraries (at most `max`). */
function partial<T extends object>(arbs: { [K in keyof T]: fc.Arbitrary<T[K]> }, max: number, min = 0): fc.Arbitrary<Partial<T>> {
  const keys = Object.keys(arbs) as Array<keyof T>
  return fc.tuple(fc.record(arbs), fc.subarray(keys, { minLength: min, maxLength: max })).map(([full, chosen]) => {
    const out: Partial<T> = {}
    for (const key of chosen) out[key] = full[key]
    return out
  })
}

const TITLES = ['Jazz Night', 'jazz night', 'Rock & Roll', 'Über Fest', 'Straße Party', 'Café Talk', '  Spaced   Out ', '!!!', 'Event 2', 'Open Air 100%', 'A_b\\c', 'Hall']
const NAMES = ['Main Hall', 'main hall', 'Jazz Corner', 'Über Bühne', 'Café Wien', '???', 'Venue 1', 'Organizer 2', 'Hall']
const TERM_NAMES = ['Music', 'music', ' Music ', 'Art', 'Kunst & Kultur', 'Über', 'Sport', 'Café', 'Jazz', '***', 'Category 1']
const SLUGS = ['jazz', 'Jazz Night', 'hall', '---', 'café', 'event-2', 'venue-1', 'music', 'x']
const TEXTS = ['Jazz all night', 'Hall of fame', '', 'Über alles', 'Text with 100% and _ and \\', 'wien']
const PLACES = ['Wien', 'Main St 1', 'Berlin', '', 'AT', '1010', '+43 1 234', 'Tirol', 'Jazz Corner']
const NEEDLES = ['jazz', 'JAZZ', 'über', 'straße', '100%', '_', '\\', 'night', 'hall', 'x', 'café', 'wien', 'example', 'music', 'u']
const WEBSITE: fc.Arbitrary<string | null> = weighted<string | null>(
  [6, fc.constantFrom('https://example.org/a', 'http://hall.test/x?y=1')], [2, fc.constant(null)], [1, fc.constant('')],
  [1, fc.constantFrom('not a url', 'ftp://x.test/')])
const EMAILS: fc.Arbitrary<string | null> = weighted<string | null>([6, fc.constantFrom('info@example.org', 'a.b@hall.test')], [2, fc.constant(null)], [1, fc.constant('')], [1, fc.constantFrom('bad@', 'a b@c.de')])
/** `author` in a body: mostly the caller itself (1 stands for "me" when the caller is not the editor), another user, or none (99). */
const AUTHOR = weighted([4, fc.constant(1)], [3, fc.constant(2)], [1, fc.constant(3)], [1, fc.constant(99)])
const NULLABLE_TEXT = weighted<string | null>([5, fc.constantFrom(...TEXTS)], [1, fc.constant(null)])
const NULLABLE_PLACE = weighted<string | null>([5, fc.constantFrom(...PLACES)], [1, fc.constant(null)])
const STATUS = fc.constantFrom<Status>(...STATUSES)
/** A list's `status` filter: one status, or several (their union). */
const STATUS_FILTER: fc.Arbitrary<Status | Status[]> = fc.oneof({ weight: 3, arbitrary: STATUS }, { weight: 1, arbitrary: fc.array(STATUS, { minLength: 2, maxLength: 3 }) })

/** A `status` filter in the query: one value, or several as a comma list or as PHP's indexed form. */
function statusParams(status: Status | Status[]): string {
  if (!Array.isArray(status)) return `status=${status}`
  return status.length % 2 === 0 ? `status=${status.join(',')}` : status.map((s, i) => `status%5B${i}%5D=${s}`).join('&')
}
const IMAGE: fc.Arbitrary<ImageSpec> = weighted<ImageSpec>(
  [3, fc.record({ kind: fc.constant('url' as const), n: fc.nat(3) })], [3, fc.record({ kind: fc.constant('ref' as const), r: fc.nat() })],
  [2, fc.constant(null)], [1, fc.constant({ kind: 'unknown' as const })])
const DATE: fc.Arbitrary<DateSpec> = fc.record({
  day: fc.integer({ min: 0, max: 110 }), h: fc.integer({ min: 0, max: 23 }), mi: fc.constantFrom(0, 15, 30, 45),
  form: weighted<Form>([12, fc.constant('wall')], [2, fc.constant('short')], [2, fc.constant('isoZ')], [2, fc.constant('isoOffset')], [1, fc.constant('bad')]),
})
const TIMEZONE = weighted<string | null>([6, fc.constantFrom('UTC', 'Europe/Berlin', 'America/New_York', 'Asia/Tokyo')], [2, fc.constantFrom(null, '')], [1, fc.constant('Mars/Base')])
const COST = fc.constantFrom<string | number | null>(...Object.keys(COSTS), 15, null, '')
const TERM_ENTRY: fc.Arbitrary<TermEntry> = weighted<TermEntry>(
  [12, fc.record({ kind: fc.constantFrom('id' as const, 'digits' as const, 'slug' as const, 'name' as const, 'upper' as const), r: fc.nat() })],
  [1, fc.constant({ kind: 'unknown' as const })])
const TERM_LIST = fc.array(TERM_ENTRY, { maxLength: 3 })
const INLINE_VENUE = partial<Json>({ city: NULLABLE_PLACE, website: WEBSITE, status: STATUS, slug: fc.constantFrom(...SLUGS), show_map: fc.boolean() }, 2)
  .chain((rest) => fc.constantFrom(...NAMES).map((venue) => ({ venue, ...rest })))
const INLINE_ORGANIZER = partial<Json>({ email: EMAILS, phone: NULLABLE_PLACE, status: STATUS }, 2)
  .chain((rest) => fc.constantFrom(...NAMES).map((organizer) => ({ organizer, ...rest })))
const linkList = (inline: fc.Arbitrary<Json>): fc.Arbitrary<LinkEntry[]> => fc.array(weighted<LinkEntry>(
  [6, fc.record({ kind: fc.constant('id' as const), r: fc.nat() })], [3, fc.record({ kind: fc.constant('inline' as const), fields: inline })],
  [1, fc.constant({ kind: 'unknown' as const })]), { maxLength: 3 })
const FLAG_SPEC = partial<Record<FlagName, boolean>>({ show_map: fc.boolean(), show_map_link: fc.boolean(), hide_from_listings: weighted([1, fc.constant(true)], [4, fc.constant(false)]), sticky: fc.boolean(), featured: fc.boolean() }, 3)

const EVENT_FIELDS = {
  description: NULLABLE_TEXT,
  excerpt: NULLABLE_TEXT,
  slug: fc.constantFrom(...SLUGS),
  status: STATUS,
  timezone: TIMEZONE,
  all_day: fc.boolean(),
  image: IMAGE,
  cost: COST,
  website: WEBSITE,
  author: AUTHOR,
  date: fc.integer({ min: 0, max: 10 }),
  flags: FLAG_SPEC,
  categories: TERM_LIST,
  tags: TERM_LIST,
  venue: linkList(INLINE_VENUE),
  organizer: linkList(INLINE_ORGANIZER),
}

/** Now and then a reference (translation_of), else nothing. */
const SOMETIMES_NAT: fc.Arbitrary<number | undefined> = weighted<number | undefined>([6, fc.constant(undefined)], [1, fc.nat()])
/** Lists mostly in the default language. */
const LIST_LANG: fc.Arbitrary<Lang | undefined> = weighted<Lang | undefined>([3, fc.constant(undefined)], [1, fc.constant('de' as const)])
const authorFor = (caller: Caller, value: number): number => (value === 1 && caller !== 'editor' && caller !== 'anon' ? callerId(caller) : value)
/** CONTRACT §6: only editors and administrators set another `author` (a right, 403). */
const authorForbidden = (caller: Caller, body: Json): boolean =>
  typeof body.author === 'number' && body.author !== callerId(caller) && !editsAll(caller)

const CALLER: fc.Arbitrary<Caller> = weighted<Caller>([12, fc.constant('editor')], [4, fc.constant('author')], [3, fc.constant('contributor')], [1, fc.constant('anon')])
const VIEWER: fc.Arbitrary<Caller> = fc.constantFrom<Caller>('editor', 'author', 'contributor', 'anon')
const LANG: fc.Arbitrary<Lang> = weighted<Lang>([4, fc.constant('en')], [1, fc.constant('de')])
const VIA: fc.Arbitrary<Via> = weighted<Via>([3, fc.constant('id')], [1, fc.constant('slug')])
const METHOD = fc.constantFrom<Method>('PATCH', 'PUT', 'POST')
const IF_MATCH = weighted<IfMatch>([6, fc.constant('none')], [2, fc.constant('current')], [1, fc.constant('stale')])

const EVENT_CREATE: fc.Arbitrary<EventSpec> = fc.record({
  title: fc.constantFrom(...TITLES),
  start: DATE,
  endDelta: weighted([1, fc.constant(-1)], [12, fc.integer({ min: 0, max: 3 })]),
  endTime: fc.record({ h: fc.integer({ min: 0, max: 23 }), mi: fc.constantFrom(0, 30) }),
  rest: partial<EventSpec>(EVENT_FIELDS, 6),
  omit: weighted<EventSpec['omit'] | undefined>([30, fc.constant(undefined)], [1, fc.constantFrom('title' as const, 'start_date' as const, 'end_date' as const)]),
  translationOf: SOMETIMES_NAT,
}).map(({ title, start, endDelta, endTime, rest, omit, translationOf }) => {
  const spec: EventSpec = { ...rest, title, start, end: { day: start.day + endDelta, h: endTime.h, mi: endTime.mi, form: 'wall' } }
  if (omit !== undefined) spec.omit = omit
  if (translationOf !== undefined) spec.translation_of = translationOf
  return spec
})

const EVENT_UPDATE: fc.Arbitrary<EventSpec> = partial<EventSpec>({
  ...EVENT_FIELDS,
  title: fc.constantFrom(...TITLES),
  start: DATE,
  end: DATE,
  password: weighted<string | null>([2, fc.constantFrom('secret', 'other')], [1, fc.constantFrom(null, '')]),
}, 4, 1)

// ---------------------------------------------------------------------------------------------------
// From abstract specs to request bodies.

function dateText(spec: DateSpec): string {
  const d = day(spec.day)
  const hm = `${pad(spec.h)}:${pad(spec.mi)}`
  switch (spec.form) {
    case 'wall': return `${d} ${hm}:00`
    case 'short': return `${d} ${hm}`
    case 'isoZ': return `${d}T${hm}:00Z`
    case 'isoOffset': return `${d}T${hm}:00+02:00`
    case 'bad': return `${d} 25:${pad(spec.mi)}:00`
  }
}

/** A body date as the model reads it: the wall time in `tz`, or undefined when it is not a date. */
function bodyWall(value: string, tz: string): string | undefined {
  let m = /^(\d{4}-\d{2}-\d{2}) (\d{2}):(\d{2})(?::(\d{2}))?$/.exec(value)
  if (m !== null) {
    if (Number(m[2]) > 23) return undefined
    return `${m[1]} ${m[2]}:${m[3]}:${m[4] ?? '00'}`
  }
  m = /^(\d{4}-\d{2}-\d{2})T(\d{2}):(\d{2}):(\d{2})(Z|\+02:00)$/.exec(value)
  if (m === null || Number(m[2]) > 23) return undefined
  const instant = `${m[1]} ${m[2]}:${m[3]}:${m[4]}`
  return toWall(m[5] === 'Z' ? instant : text(ms(instant) - 120 * 60000), tz)
}

function imageJson(m: Model, spec: ImageSpec): unknown {
  if (spec === null) return null
  if (spec.kind === 'url') return `https://img.test/${spec.n}.png`
  if (spec.kind === 'unknown') return 999999
  const ids = [...m.images.keys()]
  const id = ids[spec.r % Math.max(1, ids.length)]
  if (id === undefined) return `https://img.test/${spec.r % 4}.png`
  return spec.r % 2 === 0 ? id : String(id)
}

function termEntryJson(m: Model, taxonomy: Taxonomy, entry: TermEntry, lang: Lang): number | string | undefined {
  if (entry.kind === 'unknown') return 'no-such-term'
  const id = pickIn(m, taxonomy, entry.r, lang)
  if (id === undefined) return undefined
  const info = about(m, taxonomy, id)
  switch (entry.kind) {
    case 'id': return id
    case 'digits': return String(id)
    case 'slug': return info?.slug ?? 'no-such-term'
    case 'name': return info?.name ?? 'no-such-term'
    case 'upper': return (info?.name ?? 'no-such-term').toUpperCase()
  }
}

function linkEntryJson(m: Model, kind: 'venue' | 'organizer', entry: LinkEntry, lang: Lang): number | Json | undefined {
  if (entry.kind === 'unknown') return 999999
  if (entry.kind === 'inline') return entry.fields
  return pickIn(m, kind, entry.r, lang)
}

function eventJson(m: Model, spec: EventSpec, caller: Caller, lang: Lang): Json {
  const body: Json = {}
  if (spec.title !== undefined) body.title = spec.title
  if (spec.start !== undefined) body.start_date = dateText(spec.start)
  if (spec.end !== undefined) body.end_date = dateText(spec.end)
  if (spec.omit !== undefined) delete body[spec.omit]
  for (const key of ['description', 'excerpt', 'slug', 'status', 'timezone', 'all_day', 'cost', 'website', 'password'] as const) {
    if (spec[key] !== undefined) body[key] = spec[key]
  }
  if (spec.image !== undefined) body.image = imageJson(m, spec.image)
  if (spec.author !== undefined) body.author = authorFor(caller, spec.author)
  if (spec.date !== undefined) body.date = `${day(spec.date)} 09:00:00`
  if (spec.translation_of !== undefined) body.translation_of = pickOther(m, 'event', spec.translation_of, lang)
  Object.assign(body, spec.flags ?? {})
  // Entries that would name a record of another language or none are left out, unless picked to (a 400).
  const defined = <T>(values: Array<T | undefined>): T[] => values.filter((v): v is T => v !== undefined)
  if (spec.categories !== undefined) body.categories = defined(spec.categories.map((e) => termEntryJson(m, 'category', e, lang)))
  if (spec.tags !== undefined) body.tags = defined(spec.tags.map((e) => termEntryJson(m, 'tag', e, lang)))
  if (spec.venue !== undefined) body.venue = defined(spec.venue.map((e) => linkEntryJson(m, 'venue', e, lang)))
  if (spec.organizer !== undefined) body.organizer = defined(spec.organizer.map((e) => linkEntryJson(m, 'organizer', e, lang)))
  return body
}

// ---------------------------------------------------------------------------------------------------
// The model's reading of write bodies.

const str = (value: unknown): string | undefined => (typeof value === 'string' ? value : undefined)
const has = (body: Json, key: string): boolean => body[key] !== undefined

/** Checks of a body that need no record (CONTRACT §1: they come before 404/410/403/412). */
function imageProblem(m: Model, value: unknown): boolean {
  if (value === undefined || value === null) return false
  if (typeof value === 'number') return !m.images.has(value)
  if (typeof value === 'string' && /^\d+$/.test(value)) return !m.images.has(Number(value))
  return typeof value !== 'string' || !isHttpUrl(value)
}

/** CONTRACT §5: an absolute http(s) URL, an e-mail address, else 400 (`""` included; `null` clears). */
const websiteProblem = (value: unknown): boolean => typeof value === 'string' && !isHttpUrl(value)
const emailProblem = (value: unknown): boolean => typeof value === 'string' && !EMAIL.test(value)
const authorProblem = (value: unknown): boolean => value !== undefined && !Object.values(USER_ID).some((id) => id === value)

function linkedFieldProblem(kind: 'venue' | 'organizer', body: Json): boolean {
  if (websiteProblem(body.website)) return true
  return kind === 'organizer' && emailProblem(body.email)
}

function eventFieldProblem(m: Model, body: Json): boolean {
  if (websiteProblem(body.website) || imageProblem(m, body.image) || authorProblem(body.author)) return true
  const tz = body.timezone
  if (typeof tz === 'string' && tz !== '' && !(tz in OFFSET)) return true
  for (const field of ['start_date', 'end_date'] as const) {
    const value = str(body[field])
    if (value !== undefined && bodyWall(value, 'UTC') === undefined) return true
  }
  for (const field of ['venue', 'organizer'] as const) {
    const entries = body[field]
    if (Array.isArray(entries) && entries.some((e) => isJson(e) && linkedFieldProblem(field, e))) return true
  }
  return false
}

/** Term ids for `categories`/`tags` entries of an event in `lang`; undefined when one is unknown. */
function resolveTerms(m: Model, taxonomy: Taxonomy, entries: unknown[], lang: Lang): number[] | undefined {
  const ids: number[] = []
  const terms = termsOf(m, taxonomy).filter((term) => term.lang === lang).sort((a, b) => a.id - b.id)
  for (const entry of entries) {
    const value = String(entry).trim()
    const found = typeof entry === 'number' || /^\d+$/.test(value)
      ? terms.find((term) => term.id === Number(value))
      : terms.find((term) => term.slug === value.toLowerCase() || nameKey(term.name) === value.toLowerCase().replace(/\s+/g, ' '))
    if (found === undefined) return undefined
    if (!ids.includes(found.id)) ids.push(found.id)
  }
  return ids
}

/** Venue or organizer entries of an event: existing ids must be live (not trashed) and in the event's language. */
type LinkPlan = Array<number | Json>
function resolveLinks(m: Model, caller: Caller, kind: 'venue' | 'organizer', entries: unknown[], lang: Lang): LinkPlan | undefined {
  const plan: LinkPlan = []
  for (const entry of entries) {
    if (isJson(entry)) {
      plan.push(entry)
      continue
    }
    const post = m.posts(kind).get(Number(entry))
    if (post === undefined || post.status === 'trash' || post.lang !== lang || !canReadLinked(caller, post)) return undefined
    if (!plan.includes(post.id)) plan.push(post.id)
  }
  return plan
}

interface EventPlan {
  event: MEvent
  venues: LinkPlan | undefined
  organizers: LinkPlan | undefined
}

/**
 * The event a create (no `current`) or update body makes, or the error it gets once the record is known
 * (unknown terms or links, end before start): the record-independent checks ran before.
 */
function planEvent(m: Model, caller: Caller, lang: Lang, body: Json, current: MEvent | undefined): EventPlan | Failure {
  const e: MEvent = current !== undefined
    ? { ...current, flags: { ...current.flags }, modified: m.now }
    : {
      id: 0, group: 0, lang, author: callerId(caller), status: 'publish', slug: '', image: null, date: m.now, modified: m.now, etag: undefined,
      title: '', description: null, excerpt: null, password: null, allDay: false, tz: 'UTC', start: '', end: '', cost: null, website: null,
      flags: { show_map: false, show_map_link: false, hide_from_listings: false, sticky: false, featured: false },
      categories: [], tags: [], venues: [], organizers: [],
    }
  if (typeof body.title === 'string') e.title = body.title
  if (has(body, 'description')) e.description = emptyToNull(body.description as string | null) ?? null
  if (has(body, 'excerpt')) e.excerpt = emptyToNull(body.excerpt as string | null) ?? null
  if (has(body, 'password')) e.password = emptyToNull(body.password as string | null) ?? null
  if (has(body, 'cost')) e.cost = body.cost === null || body.cost === '' ? null : String(body.cost)
  if (has(body, 'website')) e.website = emptyToNull(body.website as string | null) ?? null
  if (typeof body.author === 'number') e.author = body.author
  if (typeof body.status === 'string' || current === undefined) e.status = statusToStore(caller, body.status)
  if (typeof body.date === 'string') e.date = body.date
  for (const flag of FLAGS) if (typeof body[flag] === 'boolean') e.flags[flag] = body[flag] as boolean
  const touched = ['timezone', 'all_day', 'start_date', 'end_date'].some((k) => has(body, k))
  if (current === undefined || touched) {
    if (has(body, 'timezone')) e.tz = typeof body.timezone === 'string' && body.timezone !== '' ? body.timezone : 'UTC'
    if (typeof body.all_day === 'boolean') e.allDay = body.all_day
    if (typeof body.start_date === 'string') e.start = bodyWall(body.start_date, e.tz) ?? ''
    if (typeof body.end_date === 'string') e.end = bodyWall(body.end_date, e.tz) ?? ''
    if (e.allDay) {
      e.start = `${e.start.slice(0, 10)} 00:00:00`
      e.end = `${e.end.slice(0, 10)} 23:59:59`
    }
    if (toUtc(e.end, e.tz) < toUtc(e.start, e.tz)) return INVALID
  }
  for (const [taxonomy, field] of [['category', 'categories'], ['tag', 'tags']] as const) {
    const entries = body[field]
    if (!Array.isArray(entries)) continue
    const ids = resolveTerms(m, taxonomy, entries, e.lang)
    if (ids === undefined) return INVALID
    e[field] = ids
  }
  const venues = Array.isArray(body.venue) ? resolveLinks(m, caller, 'venue', body.venue, e.lang) : undefined
  const organizers = Array.isArray(body.organizer) ? resolveLinks(m, caller, 'organizer', body.organizer, e.lang) : undefined
  if ((Array.isArray(body.venue) && venues === undefined) || (Array.isArray(body.organizer) && organizers === undefined)) return INVALID
  return { event: e, venues, organizers }
}

/** Learns the image of a write from its answer: a URL is a new image record with a new id. */
function settleImage(m: Model, value: unknown, actual: unknown, keep: Img | null, what: string): Img | null {
  if (value === undefined) return keep
  if (value === null) return null
  if (typeof value === 'number' || /^\d+$/.test(String(value))) {
    const id = Number(value)
    return { id, url: m.images.get(id) ?? '' }
  }
  assert.ok(isJson(actual) && actual.url === value, `${what}: image url`)
  // The URL the record already has changes nothing: no new image record (CONTRACT §5).
  if (keep !== null && keep.url === value) return keep
  const id = freshId(m, 'image', actual.id, `${what}: image`)
  m.images.set(id, String(value))
  return { id, url: String(value) }
}

/** A venue or organizer made from a create body (top-level or inline); its id is known from the answer. */
function newLinked(m: Model, kind: 'venue' | 'organizer', caller: Caller, lang: Lang, body: Json, id: number, status: PostStatus, image: Img | null): MVenue | MOrganizer {
  const name = String(kind === 'venue' ? body.venue : body.organizer)
  const base: MPost = {
    id, group: translationGroup(m, kind, body.translation_of, lang, caller) ?? id, lang, author: typeof body.author === 'number' ? body.author : callerId(caller), status,
    slug: newSlug(m, kind, lang, str(body.slug), name, id), image,
    date: typeof body.date === 'string' ? body.date : m.now, modified: m.now, etag: undefined,
  }
  return applyLinked(kind, { ...base, name, description: null, text: { address: null, city: null, country: null, province: null, state: null, zip: null, phone: null, stateprovince: null }, website: null, show_map: true, show_map_link: true, phone: null, email: null }, body)
}

const flagValue = (value: unknown): boolean => value === true || value === 'true' || value === '1' || value === 'yes'

function applyLinked<T extends MVenue | MOrganizer>(kind: 'venue' | 'organizer', record: T, body: Json): T {
  const out = { ...record, ...(kind === 'venue' ? { text: { ...(record as MVenue).text } } : {}) } as T
  const name = body[kind]
  if (typeof name === 'string') out.name = name
  if (has(body, 'description')) out.description = emptyToNull(body.description as string | null) ?? null
  if (has(body, 'website')) out.website = emptyToNull(body.website as string | null) ?? null
  if (typeof body.author === 'number') out.author = body.author
  if (typeof body.date === 'string') out.date = body.date
  if (kind === 'venue') {
    const venue = out as MVenue
    for (const field of VENUE_TEXT) if (has(body, field)) venue.text[field] = emptyToNull(body[field] as string | null) ?? null
    if (has(body, 'show_map')) venue.show_map = flagValue(body.show_map)
    if (has(body, 'show_map_link')) venue.show_map_link = flagValue(body.show_map_link)
  } else {
    const organizer = out as MOrganizer
    if (has(body, 'phone')) organizer.phone = emptyToNull(body.phone as string | null) ?? null
    if (has(body, 'email')) organizer.email = emptyToNull(body.email as string | null) ?? null
  }
  return out
}

/**
 * Settles the inline venues or organizers of an event write from its answer: each new record of the
 * answer (in the order sent) is an inline entry, made in the event's language by the caller.
 */
function settleLinks(m: Model, kind: 'venue' | 'organizer', caller: Caller, lang: Lang, plan: LinkPlan, actual: unknown, what: string): number[] {
  const shown = Array.isArray(actual) ? actual.filter(isJson) : []
  const fresh = shown.filter((r) => typeof r.id === 'number' && !m.posts(kind).has(r.id))
  const inline = plan.filter(isJson)
  assert.equal(fresh.length, inline.length, `${what}: one new ${kind} per inline entry`)
  const ids: number[] = []
  let next = 0
  for (const entry of plan) {
    if (typeof entry === 'number') {
      ids.push(entry)
      continue
    }
    const id = freshId(m, kind, fresh[next++]?.id, `${what}: inline ${kind}`)
    // CONTRACT §5: records created inline take their own `status`, or the caller's default (publish here).
    const status = statusToStore(caller, entry.status)
    note(`inline ${kind} created`)
    const record = newLinked(m, kind, caller, lang, entry, id, status, null)
    m.posts(kind).set(id, record as MVenue & MOrganizer)
    m.ids[kind].push(id)
    ids.push(id)
  }
  return ids
}

// ---------------------------------------------------------------------------------------------------
// Lists.

function pageParams(page: number, perPage: number): string {
  return `page=${page}&per_page=${perPage}`
}

/** Compares a list answer with the model's records (already filtered and ordered). */
function checkList(res: Reply, resource: PostKind | Taxonomy, expected: Json[], page: number, perPage: number, what: string): void {
  const total = expected.length
  const totalPages = Math.ceil(total / perPage)
  if (page > Math.max(1, totalPages)) {
    expectError(res, 404, [`${resource}-archive-page-not-found`], what)
    return
  }
  assert.equal(res.status, 200, `${what}: ${JSON.stringify(res.body).slice(0, 300)}`)
  assert.equal(res.body.total, total, `${what}: total`)
  assert.equal(res.body.total_pages, totalPages, `${what}: total_pages`)
  assert.equal(res.headers['x-total'], String(total), `${what}: X-Total`)
  assert.equal(res.headers['x-total-pages'], String(totalPages), `${what}: X-Total-Pages`)
  const items = res.body[COLLECTION[resource]]
  assert.ok(Array.isArray(items), `${what}: items`)
  const slice = expected.slice((page - 1) * perPage, page * perPage)
  assert.deepStrictEqual(items.map((r: Json) => r.id), slice.map((r) => r.id), `${what}: ids in order`)
  slice.forEach((record, i) => sameRecord(items[i], record, `${what}: item ${i}`, keysOf(resource)))
}

/** Which non-trash records a caller's list shows (CONTRACT §6); undefined when `status` is refused. */
function listable(caller: Caller, asked: Status | Status[] | undefined): ((r: { author: number; status: string }) => boolean) | undefined {
  // Several statuses are their union, each allowed as alone (CONTRACT §4, §6).
  const statuses = asked === undefined ? undefined : [asked].flat()
  if (caller === 'anon' && statuses !== undefined && statuses.some((s) => s !== 'publish')) return undefined
  return (r) => {
    if (r.status === 'trash') return false
    if (statuses !== undefined && !statuses.some((s) => s === r.status)) return false
    if (caller === 'editor') return true
    if (caller === 'anon') return r.status === 'publish'
    return r.status === 'publish' || r.author === callerId(caller)
  }
}

const contains = (haystack: string | null, needle: string): boolean => haystack !== null && haystack.toLowerCase().includes(needle.toLowerCase())

/** A point of a date filter: a site-time wall time, or ISO 8601 at +02:00. */
interface Instant {
  day: number
  h: number
  iso: boolean
}
type Relative = 'starts_before' | 'starts_after' | 'ends_before' | 'ends_after'
/** The date filters of an event list (CONTRACT §4). */
type Window =
  | { kind: 'default' }
  | { kind: 'days'; start?: number; end?: number }
  | { kind: 'bounds'; strict: boolean; start?: Instant; end?: Instant }
  | { kind: 'relative'; name: Relative; at: Instant; strict: boolean; also?: Relative }
  | { kind: 'include'; ids: number[]; start?: number }

const instantText = (at: Instant): string => (at.iso ? `${day(at.day)}T${pad(at.h)}:30:00+02:00` : `${day(at.day)} ${pad(at.h)}:30:00`)
const instantUtc = (at: Instant): string => (at.iso ? text(ms(`${day(at.day)} ${pad(at.h)}:30:00`) - 120 * 60000) : `${day(at.day)} ${pad(at.h)}:30:00`)
/** A filter value as compared: exact with `strict_dates`, else widened to its whole day (site time zone UTC). */
const bound = (at: Instant, strict: boolean, startOfDay: boolean): string =>
  strict ? instantUtc(at) : `${instantUtc(at).slice(0, 10)} ${startOfDay ? '00:00:00' : '23:59:59'}`

/** The query parameters of a window and the test an event's UTC start and end must pass. */
function windowOf(m: Model, w: Window): { params: string[]; keep: (start: string, end: string, id: number) => boolean } {
  const enc = (value: string): string => encodeURIComponent(value)
  switch (w.kind) {
    case 'default':
      return { params: [], keep: (start, end) => start >= '2026-06-15 00:00:00' && end <= '2028-06-15 23:59:59' }
    case 'days': {
      const from = w.start === undefined ? '2026-06-15 00:00:00' : `${day(w.start)} 00:00:00`
      const to = w.end === undefined ? '2028-06-15 23:59:59' : `${day(w.end)} 23:59:59`
      const params = [...(w.start !== undefined ? [`start_date=${day(w.start)}`] : []), ...(w.end !== undefined ? [`end_date=${day(w.end)}`] : [])]
      return { params, keep: (start, end) => start >= from && end <= to }
    }
    case 'bounds': {
      const from = w.start === undefined ? '2026-06-15 00:00:00' : bound(w.start, w.strict, true)
      const to = w.end === undefined ? '2028-06-15 23:59:59' : bound(w.end, w.strict, false)
      const params = [
        ...(w.start !== undefined ? [`start_date=${enc(instantText(w.start))}`] : []),
        ...(w.end !== undefined ? [`end_date=${enc(instantText(w.end))}`] : []),
        ...(w.strict ? ['strict_dates=true'] : []),
      ]
      return { params, keep: (start, end) => start >= from && end <= to }
    }
    case 'relative': {
      // Any starts_*/ends_* drops both defaults; `also` sends a second one at the same instant.
      const names = w.also === undefined || w.also === w.name ? [w.name] : [w.name, w.also]
      const x = bound(w.at, w.strict, false)
      const tests: Record<Relative, (start: string, end: string) => boolean> = {
        starts_before: (start) => start < x, starts_after: (start) => start > x, ends_before: (_s, end) => end < x, ends_after: (_s, end) => end > x,
      }
      const params = [...names.map((n) => `${n}=${enc(instantText(w.at))}`), ...(w.strict ? ['strict_dates=1'] : [])]
      return { params, keep: (start, end) => names.every((n) => tests[n](start, end)) }
    }
    case 'include': {
      // `include` ignores every date filter, the defaults and any sent.
      const ids = w.ids.map((r) => pickId(m, 'event', r))
      const params = [`include=${ids.join(',')}`, ...(w.start !== undefined ? [`start_date=${day(w.start)}`] : [])]
      return { params, keep: (_start, _end, id) => ids.includes(id) }
    }
  }
}

interface EventListSpec {
  viewer: Caller
  lang: Lang | undefined
  page: number
  perPage: number
  search?: string
  status?: Status | Status[]
  window: Window
  categories?: TermEntry[]
  tags?: TermEntry[]
  venue?: number[]
  organizer?: number[]
  featured?: boolean
}

function termFilterJson(m: Model, taxonomy: Taxonomy, entry: TermEntry): string {
  if (entry.kind === 'unknown') return 'no-such-term'
  const id = pickId(m, taxonomy, entry.r)
  return entry.kind === 'slug' ? about(m, taxonomy, id)?.slug ?? 'no-such-term' : String(id)
}

/** Ids named by `categories`/`tags` filter entries: ids of that taxonomy in any language, slugs in the list's. */
function filterTerms(m: Model, taxonomy: Taxonomy, entries: string[], lang: Lang): number[] | undefined {
  const ids: number[] = []
  for (const value of entries) {
    // An id or a slug, of a term in the list's language (CONTRACT §7: no event of the list links another's).
    const found = /^\d+$/.test(value)
      ? termsOf(m, taxonomy).find((term) => term.id === Number(value) && term.lang === lang)
      : termsOf(m, taxonomy).find((term) => term.lang === lang && term.slug === value)
    if (found === undefined) return undefined
    ids.push(found.id)
  }
  return ids
}

class ListEvents implements fc.AsyncCommand<Model, Sut> {
  readonly q: EventListSpec
  constructor(q: EventListSpec) {
    this.q = q
  }
  check = (): boolean => true
  async run(m: Model, s: Sut): Promise<void> {
    m.now = s.tick()
    const q = this.q
    const lang = q.lang ?? 'en'
    const params = [pageParams(q.page, q.perPage)]
    if (q.lang !== undefined) params.push(`ml_language=${q.lang}`)
    if (q.search !== undefined) params.push(`search=${encodeURIComponent(q.search)}`)
    if (q.status !== undefined) params.push(statusParams(q.status))
    if (q.featured !== undefined) params.push(`featured=${q.featured}`)
    const categories = q.categories?.map((e) => termFilterJson(m, 'category', e))
    const tags = q.tags?.map((e) => termFilterJson(m, 'tag', e))
    const venues = q.venue?.map((r) => pickId(m, 'venue', r))
    const organizers = q.organizer?.map((r) => pickId(m, 'organizer', r))
    if (categories !== undefined && categories.length > 0) params.push(`categories=${categories.map(encodeURIComponent).join(',')}`)
    if (tags !== undefined && tags.length > 0) tags.forEach((v) => params.push(`tags[]=${encodeURIComponent(v)}`))
    if (venues !== undefined && venues.length > 0) params.push(`venue=${venues.join(',')}`)
    if (organizers !== undefined && organizers.length > 0) organizers.forEach((v) => params.push(`organizer=${v}`))
    const window = windowOf(m, q.window)
    params.push(...window.params)
    const res = await s.call(q.viewer, 'GET', `${API}/events?${params.join('&')}`)
    const what = `GET events ${params.join('&')} as ${q.viewer}`
    const show = listable(q.viewer, q.status)
    const categoryIds = categories !== undefined && categories.length > 0 ? filterTerms(m, 'category', categories, lang) : []
    const tagIds = tags !== undefined && tags.length > 0 ? filterTerms(m, 'tag', tags, lang) : []
    const unknownLinked = (kind: 'venue' | 'organizer', ids: number[] | undefined) => (ids ?? []).some((id) => {
      const post = m.posts(kind).get(id)
      return post === undefined || post.lang !== lang || !canReadLinked(q.viewer, post)
    })
    if (show === undefined || categoryIds === undefined || tagIds === undefined || unknownLinked('venue', venues) || unknownLinked('organizer', organizers)) {
      expectError(res, 400, ['rest_invalid_param'], what)
      return
    }
    const expected = [...m.events.values()].filter((e) => {
      if (e.lang !== lang || e.flags.hide_from_listings || !show(e)) return false
      const startUtc = toUtc(e.start, e.tz)
      const endUtc = toUtc(e.end, e.tz)
      if (!window.keep(startUtc, endUtc, e.id)) return false
      if (q.search !== undefined && q.search !== '' && !contains(e.title, q.search) && !(e.password === null && contains(e.description, q.search))) return false
      if (categoryIds.length > 0 && !e.categories.some((id) => categoryIds.includes(id))) return false
      if (tagIds.length > 0 && !e.tags.some((id) => tagIds.includes(id))) return false
      // A trashed venue or organizer matches no event (CONTRACT §5).
      const live = (kind: 'venue' | 'organizer', id: number) => m.posts(kind).get(id)?.status !== 'trash'
      if (venues !== undefined && venues.length > 0 && !e.venues.some((id) => venues.includes(id) && live('venue', id))) return false
      if (organizers !== undefined && organizers.length > 0 && !e.organizers.some((id) => organizers.includes(id) && live('organizer', id))) return false
      if (q.featured !== undefined && e.flags.featured !== q.featured) return false
      return true
    }).sort((a, b) => {
      const sa = toUtc(a.start, a.tz)
      const sb = toUtc(b.start, b.tz)
      return sa < sb ? -1 : sa > sb ? 1 : a.id - b.id
    })
    checkList(res, 'event', expected.map((e) => renderEvent(m, e, q.viewer, true)), q.page, q.perPage, what)
  }
  toString = (): string => `ListEvents(${JSON.stringify(this.q)})`
}

interface LinkedListSpec {
  viewer: Caller
  lang: Lang | undefined
  page: number
  perPage: number
  search?: string
  status?: Status | Status[]
  has_events?: boolean
  only_with_upcoming?: boolean
  event?: number
}

/** Events that count for `has_events` and `only_with_upcoming`: published or private, and readable by the viewer (CONTRACT §6). */
const countedEvent = (viewer: Caller, e: MEvent): boolean => (e.status === 'publish' || e.status === 'private') && canReadEvent(viewer, e)

class ListLinked implements fc.AsyncCommand<Model, Sut> {
  readonly kind: 'venue' | 'organizer'
  readonly q: LinkedListSpec
  constructor(kind: 'venue' | 'organizer', q: LinkedListSpec) {
    this.kind = kind
    this.q = q
  }
  check = (): boolean => true
  async run(m: Model, s: Sut): Promise<void> {
    m.now = s.tick()
    const { kind, q } = this
    const lang = q.lang ?? 'en'
    const params = [pageParams(q.page, q.perPage)]
    if (q.lang !== undefined) params.push(`ml_language=${q.lang}`)
    if (q.search !== undefined) params.push(`search=${encodeURIComponent(q.search)}`)
    if (q.status !== undefined) params.push(statusParams(q.status))
    if (q.has_events !== undefined) params.push(`has_events=${q.has_events ? '1' : 'false'}`)
    if (q.only_with_upcoming !== undefined) params.push(`only_with_upcoming=${q.only_with_upcoming}`)
    const event = q.event === undefined ? undefined : pickId(m, 'event', q.event)
    if (event !== undefined) params.push(`event=${event}`)
    const res = await s.call(q.viewer, 'GET', `${API}/${COLLECTION[kind]}?${params.join('&')}`)
    const what = `GET ${COLLECTION[kind]} ${params.join('&')} as ${q.viewer}`
    const show = listable(q.viewer, q.status)
    if (show === undefined || (event !== undefined && !m.events.has(event))) {
      expectError(res, 400, ['rest_invalid_param'], what)
      return
    }
    const linkField = kind === 'venue' ? 'venues' : 'organizers'
    const linkedEvents = (id: number) => [...m.events.values()].filter((e) => e[linkField].includes(id) && countedEvent(q.viewer, e))
    const columns = (r: MVenue | MOrganizer): Array<string | null> => kind === 'venue'
      ? [r.name, r.description, ...VENUE_TEXT.map((f) => (r as MVenue).text[f]), r.website]
      : [r.name, r.description, (r as MOrganizer).phone, (r as MOrganizer).email, r.website]
    const expected = [...m.posts(kind).values()].filter((r) => {
      if (r.lang !== lang || !show(r)) return false
      if (q.search !== undefined && q.search !== '' && !columns(r).some((c) => contains(c, q.search ?? ''))) return false
      const filtered = event === undefined ? undefined : m.events.get(event)
      if (filtered !== undefined && (!canReadEvent(q.viewer, filtered) || !filtered[linkField].includes(r.id))) return false
      if (q.has_events !== undefined && (linkedEvents(r.id).length > 0) !== q.has_events) return false
      if (q.only_with_upcoming === true && !linkedEvents(r.id).some((e) => toUtc(e.start, e.tz) >= m.now)) return false
      return true
    }).sort((a, b) => (a.date < b.date ? 1 : a.date > b.date ? -1 : a.id - b.id))
    const render = (r: MVenue | MOrganizer): Json => (kind === 'venue' ? renderVenue(m, r as MVenue, q.viewer) : renderOrganizer(m, r as MOrganizer, q.viewer))
    checkList(res, kind, expected.map(render), q.page, q.perPage, what)
  }
  toString = (): string => `ListLinked(${this.kind}, ${JSON.stringify(this.q)})`
}

interface TermListSpec {
  lang: Lang | undefined
  page: number
  perPage: number
  search?: string
  hideEmpty?: boolean
  post?: number
  orderby?: 'id' | 'name' | 'slug' | 'count'
  order?: 'asc' | 'desc'
  parent?: ParentSpec
  include?: number[]
  exclude?: number[]
}

class ListTerms implements fc.AsyncCommand<Model, Sut> {
  readonly taxonomy: Taxonomy
  readonly q: TermListSpec
  constructor(taxonomy: Taxonomy, q: TermListSpec) {
    this.taxonomy = taxonomy
    this.q = q
  }
  check = (): boolean => true
  async run(m: Model, s: Sut): Promise<void> {
    m.now = s.tick()
    const { taxonomy, q } = this
    const lang = q.lang ?? 'en'
    const params = [pageParams(q.page, q.perPage)]
    if (q.lang !== undefined) params.push(`ml_language=${q.lang}`)
    if (q.search !== undefined) params.push(`search=${encodeURIComponent(q.search)}`)
    if (q.hideEmpty !== undefined) params.push(`hide_empty=${q.hideEmpty}`)
    if (q.orderby !== undefined) params.push(`orderby=${q.orderby}`)
    if (q.order !== undefined) params.push(`order=${q.order}`)
    const post = q.post === undefined ? undefined : pickId(m, 'event', q.post)
    if (post !== undefined) params.push(`post=${post}`)
    const parent = taxonomy === 'category' && q.parent !== undefined
      ? q.parent.kind === 'zero' ? 0 : q.parent.kind === 'unknown' ? 999999 : pickId(m, 'category', q.parent.r)
      : undefined
    if (parent !== undefined) params.push(`parent=${parent}`)
    const include = q.include?.map((r) => pickId(m, taxonomy, r))
    const exclude = q.exclude?.map((r) => pickId(m, taxonomy, r))
    if (include !== undefined && include.length > 0) params.push(`include=${include.join(',')}`)
    if (exclude !== undefined && exclude.length > 0) params.push(`exclude=${exclude.join(',')}`)
    const res = await s.call('anon', 'GET', `${API}/${COLLECTION[taxonomy]}?${params.join('&')}`)
    const what = `GET ${COLLECTION[taxonomy]} ${params.join('&')}`
    const parentOk = parent === undefined || parent === 0 || termsOf(m, 'category').some((c) => c.id === parent && c.lang === lang)
    if ((post !== undefined && !m.events.has(post)) || !parentOk) {
      expectError(res, 400, ['rest_invalid_param'], what)
      return
    }
    const counts = new Map(termsOf(m, taxonomy).map((term) => [term.id, termCount(m, term.id)]))
    // An event the caller (anonymous here) cannot read matches nothing.
    const postEvent = post === undefined ? undefined : m.events.get(post)
    const postTerms = postEvent === undefined ? undefined : canReadEvent('anon', postEvent) ? [...postEvent.categories, ...postEvent.tags] : []
    const key = (term: MTerm): string | number => {
      switch (q.orderby ?? 'name') {
        case 'id': return term.id
        case 'slug': return term.slug
        case 'count': return counts.get(term.id) ?? 0
        case 'name': return nameKey(term.name)
      }
    }
    const direction = q.order === 'desc' ? -1 : 1
    const expected = termsOf(m, taxonomy).filter((term) => {
      if (term.lang !== lang) return false
      if (q.search !== undefined && q.search !== '' && !contains(term.name, q.search) && !contains(term.slug, q.search)) return false
      if ((q.hideEmpty ?? true) && (counts.get(term.id) ?? 0) === 0) return false
      if (postTerms !== undefined && !postTerms.includes(term.id)) return false
      if (parent !== undefined && term.parent !== parent) return false
      if (include !== undefined && include.length > 0 && !include.includes(term.id)) return false
      if (exclude !== undefined && exclude.includes(term.id)) return false
      return true
    }).sort((a, b) => {
      const ka = key(a)
      const kb = key(b)
      return ka < kb ? -direction : ka > kb ? direction : a.id - b.id
    })
    checkList(res, taxonomy, expected.map((term) => renderTerm(m, term)), q.page, q.perPage, what)
  }
  toString = (): string => `ListTerms(${this.taxonomy}, ${JSON.stringify(this.q)})`
}

// ---------------------------------------------------------------------------------------------------
// Reads.

/** The path of a record by id or slug, and the record the server must resolve it to (CONTRACT §7). */
function target(m: Model, kind: PostKind, r: number, via: Via, langParam: boolean): { url: string; query: string[]; found: MPost | undefined; id: number } {
  const id = pickId(m, kind, r)
  const info = about(m, kind, id)
  const collection = COLLECTION[kind]
  if (via === 'slug' && info !== undefined) {
    const lang = info.lang
    const query = lang !== 'en' || langParam ? [`ml_language=${lang}`] : []
    const found = [...m.posts(kind).values()].find((p) => p.lang === lang && p.slug === info.slug)
    return { url: `${API}/${collection}/by-slug/${encodeURIComponent(info.slug)}`, query, found, id }
  }
  // By id, `ml_language` names the version wanted: the record's own language, or the other one of its group.
  const wanted: Lang = r % 3 === 0 ? (info?.lang === 'de' ? 'en' : 'de') : info?.lang ?? 'en'
  const query = langParam ? [`ml_language=${wanted}`] : []
  const record = m.posts(kind).get(id)
  const found = record === undefined || !langParam || record.lang === wanted ? record : version(m.posts(kind).values(), record.group, wanted)
  return { url: `${API}/${collection}/${id}`, query, found, id }
}

/**
 * A write body as JSON (style 0) or, when it can be written as a form (no null, no objects, no empty
 * array), as `application/x-www-form-urlencoded` with arrays as `a=1&a=2` (1), `a[]=1&a[]=2` (2) or
 * `a=1,2` (3): CONTRACT §1, same fields and rules.
 */
function encode(body: Json, style: number): { payload: Json | string; headers: Record<string, string>; label: string; effective: Json } {
  const json = { payload: body, headers: {}, label: 'json', effective: body }
  if (style === 0) return json
  if (style === 4) return phpForm(body)
  const params = new URLSearchParams()
  // A form cannot say null: an empty value of a nullable field means null; `a=` is an empty array.
  const effective: Json = {}
  for (const [key, value] of Object.entries(body)) {
    if (isJson(value)) return json
    effective[key] = value === '' ? null : value
    if (Array.isArray(value)) {
      if (value.some((v) => v === null || typeof v === 'object')) return json
      const items = value.map(String)
      if (items.length === 0) params.append(style === 2 ? `${key}[]` : key, '')
      else if (style === 1) items.forEach((v) => params.append(key, v))
      else if (style === 2) items.forEach((v) => params.append(`${key}[]`, v))
      else params.append(key, items.join(','))
    } else params.append(key, value === null ? '' : String(value))
  }
  note(`form body${'cost' in body ? ' with cost' : ''}`)
  return { payload: params.toString(), headers: { 'content-type': 'application/x-www-form-urlencoded' }, label: `form ${params.toString()}`, effective }
}

/**
 * A write body as PHP's `http_build_query` writes it (style 4, CONTRACT §1): lists as `a[0]=…`, objects as
 * `venue[city]=…`, lists of objects as `organizer[0][organizer]=…`, booleans as 1/0. An empty list is sent as
 * `a=` (PHP leaves it out); an empty value stands for null, at any depth.
 */
function phpForm(body: Json): { payload: string; headers: Record<string, string>; label: string; effective: Json } {
  const params = new URLSearchParams()
  const walk = (name: string, value: unknown): void => {
    if (Array.isArray(value)) {
      if (value.length === 0) params.append(name, '')
      value.forEach((v, i) => walk(`${name}[${i}]`, v))
    } else if (isJson(value)) {
      for (const [k, v] of Object.entries(value)) walk(`${name}[${k}]`, v)
    } else params.append(name, value === null ? '' : typeof value === 'boolean' ? (value ? '1' : '0') : String(value))
  }
  const read = (value: unknown): unknown => (value === '' ? null : Array.isArray(value) ? value.map(read) : isJson(value) ? Object.fromEntries(Object.entries(value).map(([k, v]) => [k, read(v)])) : value)
  for (const [key, value] of Object.entries(body)) walk(key, value)
  note('PHP form body')
  return { payload: params.toString(), headers: { 'content-type': 'application/x-www-form-urlencoded' }, label: `form ${params.toString()}`, effective: read(body) as Json }
}

/** Sends a write; `body` is what the server must read from it (the same fields, nulls for a form's empty values). */
async function send(s: Sut, caller: Caller, method: string, url: string, raw: Json, style: number, headers: Record<string, string> = {}): Promise<{ res: Reply; what: string; body: Json }> {
  const encoded = encode(raw, style)
  const res = await s.call(caller, method, url, encoded.payload, { ...headers, ...encoded.headers })
  const sent = encoded.label === 'json' ? JSON.stringify(raw) : encoded.label
  return { res, what: `${method} ${url} ${sent} ${Object.keys(headers).length > 0 ? JSON.stringify(headers) : ''} as ${caller}`, body: encoded.effective }
}

const withQuery = (url: string, query: string[]): string => (query.length === 0 ? url : `${url}?${query.join('&')}`)

class ReadPost implements fc.AsyncCommand<Model, Sut> {
  readonly kind: PostKind
  readonly viewer: Caller
  readonly r: number
  readonly via: Via
  readonly langParam: boolean
  readonly password: 'none' | 'right' | 'wrong'
  constructor(kind: PostKind, viewer: Caller, r: number, via: Via, langParam: boolean, password: 'none' | 'right' | 'wrong') {
    this.kind = kind
    this.viewer = viewer
    this.r = r
    this.via = via
    this.langParam = langParam
    this.password = password
  }
  check = (): boolean => true
  async run(m: Model, s: Sut): Promise<void> {
    m.now = s.tick()
    const { kind, viewer } = this
    const { url, query, found } = target(m, kind, this.r, this.via, this.langParam)
    if (kind === 'event' && this.via === 'id' && this.password !== 'none') query.push(`password=${this.password === 'right' ? 'secret' : 'nope'}`)
    // Now and then a conditional read with the ETag the model knows: 304 when the record is readable. An
    // event's ETag names the event as its reader sees it (CONTRACT §5), embedded records and all: 304 only
    // when the model renders it for this reader exactly as for the reader that learned the ETag.
    const view = found !== undefined ? JSON.stringify(renderPost(m, kind, found, viewer, false)) : undefined
    const conditional = this.r % 5 === 0 && found?.etag !== undefined && found.view !== undefined ? { 'if-none-match': found.etag } : undefined
    const unmoved = found?.view === view
    const res = await s.call(viewer, 'GET', withQuery(url, query), undefined, conditional)
    const what = `GET ${withQuery(url, query)} as ${viewer}`
    if (found === undefined) return expectError(res, 404, [`rest-${kind}-not-found`], what)
    if (kind === 'event') {
      const e = found as MEvent
      if (e.status === 'trash') return expectError(res, 410, ['event-no-longer-available'], what)
      if (!canRead(viewer, e)) return expectError(res, 403, ['event-not-accessible'], what)
      const unlocked = canEdit(viewer, e) || (this.via === 'id' && this.password === 'right' && e.password === 'secret')
      if (e.password !== null && !unlocked) return expectError(res, 403, ['event-password-protected'], what)
    } else {
      const visible = found.status === 'trash' ? canEdit(viewer, found) || editsAll(viewer) : canRead(viewer, found)
      if (!visible) return expectError(res, 403, [`${kind}-not-accessible`], what)
    }
    if (conditional !== undefined && unmoved) {
      assert.equal(res.status, 304, `${what} (If-None-Match ${conditional['if-none-match']}): ${res.status}`)
      assert.equal(res.headers.etag, conditional['if-none-match'], `${what}: 304 names the ETag`)
      return
    }
    assert.equal(res.status, 200, `${what}: ${JSON.stringify(res.body).slice(0, 300)}`)
    if (kind === 'event') assert.ok(isJson(res.body.json_ld), `${what}: json_ld on a single read`)
    sameRecord(res.body, renderPost(m, kind, found, viewer, false), what, keysOf(kind))
    if (conditional !== undefined && kind === 'event') assert.notEqual(res.headers.etag, conditional['if-none-match'], `${what}: what it shows moved, so did the ETag`)
    learnEtag(found, res, false, what, view)
  }
  toString = (): string => `ReadPost(${this.kind}, ${this.viewer}, r=${this.r}, ${this.via}, lang=${this.langParam}, password=${this.password})`
}

class ReadTerm implements fc.AsyncCommand<Model, Sut> {
  readonly taxonomy: Taxonomy
  readonly r: number
  readonly langParam: boolean
  constructor(taxonomy: Taxonomy, r: number, langParam: boolean) {
    this.taxonomy = taxonomy
    this.r = r
    this.langParam = langParam
  }
  check = (): boolean => true
  async run(m: Model, s: Sut): Promise<void> {
    m.now = s.tick()
    const id = pickId(m, this.taxonomy, this.r)
    const own = m.terms.get(id)
    const wanted: Lang = this.r % 3 === 0 ? (own?.lang === 'de' ? 'en' : 'de') : own?.lang ?? 'en'
    const term = own === undefined || !this.langParam || own.lang === wanted ? own : version(termsOf(m, this.taxonomy), own.group, wanted)
    const url = `${API}/${COLLECTION[this.taxonomy]}/${id}${this.langParam ? `?ml_language=${wanted}` : ''}`
    const res = await s.call('anon', 'GET', url)
    if (term === undefined) return expectError(res, 404, [`rest-${this.taxonomy}-not-found`], `GET ${url}`)
    assert.equal(res.status, 200, `GET ${url}`)
    sameRecord(res.body, renderTerm(m, term), `GET ${url}`)
    learnEtag(term, res, false, `GET ${url}`)
  }
  toString = (): string => `ReadTerm(${this.taxonomy}, r=${this.r}, lang=${this.langParam})`
}

// ---------------------------------------------------------------------------------------------------
// Writes of events.

class CreateEvent implements fc.AsyncCommand<Model, Sut> {
  readonly caller: Caller
  readonly lang: Lang
  readonly spec: EventSpec
  readonly form: number
  constructor(caller: Caller, lang: Lang, spec: EventSpec, form = 0) {
    this.caller = caller
    this.lang = lang
    this.spec = spec
    this.form = form
  }
  check = (): boolean => true
  async run(m: Model, s: Sut): Promise<void> {
    m.now = s.tick()
    const raw = eventJson(m, this.spec, this.caller, this.lang)
    const url = `${API}/events${this.lang === 'de' ? '?ml_language=de' : ''}`
    // Sent with an Idempotency-Key of its own (the clock moves a second per command): a refused create gives
    // the key back, and a created one is retried below (CONTRACT §18).
    const key = { 'idempotency-key': `create-event ${m.now}` }
    const { res, what, body } = await send(s, this.caller, 'POST', url, raw, this.form, key)
    if (this.caller === 'anon') return expectError(res, 401, ['rest_forbidden'], what)
    if (this.spec.omit !== undefined) return expectError(res, 400, ['rest_missing_callback_param'], what)
    if (eventFieldProblem(m, body) || translationProblem(m, 'event', body.translation_of, this.lang, this.caller)) return expectError(res, 400, ['rest_invalid_param'], what)
    const plan = planEvent(m, this.caller, this.lang, body, undefined)
    if ('codes' in plan) return expectError(res, plan.status, plan.codes, what)
    if (authorForbidden(this.caller, body)) return expectError(res, 403, ['rest_forbidden'], what)
    assert.equal(res.status, 201, `${what}: ${JSON.stringify(res.body).slice(0, 400)}`)
    const e = plan.event
    e.id = freshId(m, 'event', res.body.id, what)
    e.group = translationGroup(m, 'event', body.translation_of, e.lang, this.caller) ?? e.id
    assert.equal(res.headers.location, `${API_URL}/events/${e.id}`, `${what}: Location`)
    e.slug = newSlug(m, 'event', e.lang, str(body.slug), e.title, e.id)
    e.image = settleImage(m, body.image, res.body.image, null, what)
    m.events.set(e.id, e)
    m.ids.event.push(e.id)
    if (plan.venues !== undefined) e.venues = settleLinks(m, 'venue', this.caller, e.lang, plan.venues, res.body.venue, what)
    if (plan.organizers !== undefined) e.organizers = settleLinks(m, 'organizer', this.caller, e.lang, plan.organizers, res.body.organizer, what)
    sameRecord(res.body, renderEvent(m, e, this.caller, false), what, EVENT_KEYS)
    learnEtag(e, res, true, what, JSON.stringify(renderPost(m, 'event', e, this.caller, false)))
    // The retry a client makes when it did not hear the answer: the same answer again, nothing created.
    const retry = await send(s, this.caller, 'POST', url, raw, this.form, key)
    assert.equal(retry.res.status, 201, `${retry.what}: retried`)
    assert.equal(retry.res.headers['idempotent-replayed'], 'true', `${retry.what}: Idempotent-Replayed`)
    assert.deepEqual(retry.res.body, res.body, `${retry.what}: the first body`)
    assert.equal(retry.res.headers.location, res.headers.location, `${retry.what}: the first Location`)
    assert.equal(retry.res.headers.etag, res.headers.etag, `${retry.what}: the first ETag`)
  }
  toString = (): string => `CreateEvent(${this.caller}, ${this.lang}, ${JSON.stringify(this.spec)}, form=${this.form})`
}

class UpdateEvent implements fc.AsyncCommand<Model, Sut> {
  readonly caller: Caller
  readonly r: number
  readonly via: Via
  readonly method: Method
  readonly spec: EventSpec
  readonly ifMatch: IfMatch
  readonly form: number
  constructor(caller: Caller, r: number, via: Via, method: Method, spec: EventSpec, ifMatch: IfMatch, form = 0) {
    this.caller = caller
    this.r = r
    this.via = via
    this.method = method
    this.spec = spec
    this.ifMatch = ifMatch
    this.form = form
  }
  check = (): boolean => true
  async run(m: Model, s: Sut): Promise<void> {
    m.now = s.tick()
    const { url, query, found, id } = target(m, 'event', this.r, this.via, this.r % 4 === 1)
    const spec = { ...this.spec }
    if (this.via === 'slug') delete spec.password
    const raw = eventJson(m, spec, this.caller, found?.lang ?? 'en')
    // A trashed event cannot be read (410), so no client can hold its current ETag: none is sent then.
    // The ETag is the one of the version written: `ml_language` may name another one of the group than `id`.
    const ifMatch = found?.status === 'trash' && this.ifMatch === 'current' ? 'none' : this.ifMatch
    await refreshEtag(s, this.caller, found, `${API}/events/${found?.id ?? id}`, ifMatch)
    const headers = ifMatchHeader(found, 'event', id, ifMatch)
    const { res, what, body } = await send(s, this.caller, this.method, withQuery(url, query), raw, this.form, headers)
    if (this.caller === 'anon') return expectError(res, 401, ['rest_forbidden'], what)
    if (eventFieldProblem(m, body)) return expectError(res, 400, ['rest_invalid_param'], what)
    if (found === undefined) return expectError(res, 404, ['rest-event-not-found'], what)
    const current = found as MEvent
    if (current.status === 'trash' && !has(body, 'status')) return expectError(res, 410, ['event-is-in-trash'], what)
    if (!canEdit(this.caller, current) && !(current.status === 'trash' && editsAll(this.caller))) return expectError(res, 403, ['rest_forbidden'], what)
    if (authorForbidden(this.caller, body)) return expectError(res, 403, ['rest_forbidden'], what)
    if (current.status === 'trash') note('event restored from the trash')
    if (headers['if-match'] !== undefined && this.ifMatch === 'stale') return expectError(res, 412, ['rest-precondition-failed'], what)
    const plan = planEvent(m, this.caller, current.lang, body, current)
    if ('codes' in plan) return expectError(res, plan.status, plan.codes, what)
    assert.equal(res.status, 200, `${what}: ${JSON.stringify(res.body).slice(0, 400)}`)
    const e = plan.event
    if (typeof body.slug === 'string') e.slug = changedSlug(m, 'event', current, body.slug, e.title)
    e.image = settleImage(m, body.image, res.body.image, current.image, what)
    m.events.set(e.id, e)
    if (plan.venues !== undefined) e.venues = settleLinks(m, 'venue', this.caller, e.lang, plan.venues, res.body.venue, what)
    if (plan.organizers !== undefined) e.organizers = settleLinks(m, 'organizer', this.caller, e.lang, plan.organizers, res.body.organizer, what)
    const same = unchanged(e, current)
    sameRecord(res.body, renderEvent(m, e, this.caller, false), what, EVENT_KEYS)
    learnEtag(e, res, !same, what, JSON.stringify(renderPost(m, 'event', e, this.caller, false)))
    readersChanged(m, 'event', current, e)
  }
  toString = (): string => `UpdateEvent(${this.caller}, r=${this.r}, ${this.via}, ${this.method}, ${JSON.stringify(this.spec)}, ${this.ifMatch}, form=${this.form})`
}

// ---------------------------------------------------------------------------------------------------
// Writes of venues and organizers.

type LinkedSpec = Json & { image?: ImageSpec; author?: number; date?: number; translation_of?: number }

function linkedJson(m: Model, kind: 'venue' | 'organizer', spec: LinkedSpec, caller: Caller, lang: Lang): Json {
  const { image, author, date, translation_of: translationOf, ...rest } = spec
  const body: Json = { ...rest }
  if (translationOf !== undefined) body.translation_of = pickOther(m, kind, translationOf, lang)
  if (image !== undefined) body.image = imageJson(m, image)
  if (author !== undefined) body.author = authorFor(caller, author)
  if (date !== undefined) body.date = `${day(date)} 08:00:00`
  return body
}

const VENUE_FIELDS = {
  description: NULLABLE_TEXT,
  address: NULLABLE_PLACE,
  city: NULLABLE_PLACE,
  country: NULLABLE_PLACE,
  province: NULLABLE_PLACE,
  state: NULLABLE_PLACE,
  zip: NULLABLE_PLACE,
  phone: NULLABLE_PLACE,
  stateprovince: NULLABLE_PLACE,
  website: WEBSITE,
  status: STATUS,
  show_map: fc.constantFrom<boolean | string>(true, false, 'yes', 'no', '1', '0', 'true', 'false'),
  show_map_link: fc.boolean(),
  image: IMAGE,
  slug: fc.constantFrom(...SLUGS),
  author: AUTHOR,
  date: fc.integer({ min: 0, max: 10 }),
}
const ORGANIZER_FIELDS = {
  description: NULLABLE_TEXT,
  phone: NULLABLE_PLACE,
  website: WEBSITE,
  email: EMAILS,
  status: STATUS,
  image: IMAGE,
  slug: fc.constantFrom(...SLUGS),
  author: AUTHOR,
  date: fc.integer({ min: 0, max: 10 }),
}

const linkedCreate = (kind: 'venue' | 'organizer'): fc.Arbitrary<LinkedSpec> =>
  fc.tuple(fc.constantFrom(...NAMES), partial<Json>(kind === 'venue' ? VENUE_FIELDS : ORGANIZER_FIELDS, 5), SOMETIMES_NAT)
    .map(([name, rest, translationOf]) => ({ [kind]: name, ...rest, ...(translationOf !== undefined ? { translation_of: translationOf } : {}) }) as LinkedSpec)
const linkedUpdate = (kind: 'venue' | 'organizer'): fc.Arbitrary<LinkedSpec> =>
  partial<Json>({ ...(kind === 'venue' ? VENUE_FIELDS : ORGANIZER_FIELDS), [kind]: fc.constantFrom(...NAMES) }, 4, 1) as fc.Arbitrary<LinkedSpec>

function linkedProblem(m: Model, kind: 'venue' | 'organizer', body: Json): boolean {
  return linkedFieldProblem(kind, body) || imageProblem(m, body.image) || authorProblem(body.author)
}

class CreateLinked implements fc.AsyncCommand<Model, Sut> {
  readonly kind: 'venue' | 'organizer'
  readonly caller: Caller
  readonly lang: Lang
  readonly spec: LinkedSpec
  readonly form: number
  constructor(kind: 'venue' | 'organizer', caller: Caller, lang: Lang, spec: LinkedSpec, form = 0) {
    this.kind = kind
    this.caller = caller
    this.lang = lang
    this.spec = spec
    this.form = form
  }
  check = (): boolean => true
  async run(m: Model, s: Sut): Promise<void> {
    m.now = s.tick()
    const { kind, caller } = this
    const raw = linkedJson(m, kind, this.spec, caller, this.lang)
    const url = `${API}/${COLLECTION[kind]}${this.lang === 'de' ? '?ml_language=de' : ''}`
    const { res, what, body } = await send(s, caller, 'POST', url, raw, this.form)
    if (caller === 'anon') return expectError(res, 401, ['rest_forbidden'], what)
    if (linkedProblem(m, kind, body) || translationProblem(m, kind, body.translation_of, this.lang, caller)) return expectError(res, 400, ['rest_invalid_param'], what)
    if (authorForbidden(caller, body)) return expectError(res, 403, ['rest_forbidden'], what)
    assert.equal(res.status, 201, `${what}: ${JSON.stringify(res.body).slice(0, 400)}`)
    const id = freshId(m, kind, res.body.id, what)
    assert.equal(res.headers.location, `${API_URL}/${COLLECTION[kind]}/${id}`, `${what}: Location`)
    const image = settleImage(m, body.image, res.body.image, null, what)
    const record = newLinked(m, kind, caller, this.lang, body, id, statusToStore(caller, body.status), image)
    m.posts(kind).set(id, record as MVenue & MOrganizer)
    m.ids[kind].push(id)
    sameRecord(res.body, renderPost(m, kind, record, caller, false), what, keysOf(kind))
    learnEtag(record, res, true, what, JSON.stringify(renderPost(m, kind, record, caller, false)))
  }
  toString = (): string => `CreateLinked(${this.kind}, ${this.caller}, ${this.lang}, ${JSON.stringify(this.spec)}, form=${this.form})`
}

class UpdateLinked implements fc.AsyncCommand<Model, Sut> {
  readonly kind: 'venue' | 'organizer'
  readonly caller: Caller
  readonly r: number
  readonly via: Via
  readonly method: Method
  readonly spec: LinkedSpec
  readonly ifMatch: IfMatch
  readonly form: number
  constructor(kind: 'venue' | 'organizer', caller: Caller, r: number, via: Via, method: Method, spec: LinkedSpec, ifMatch: IfMatch, form = 0) {
    this.kind = kind
    this.caller = caller
    this.r = r
    this.via = via
    this.method = method
    this.spec = spec
    this.ifMatch = ifMatch
    this.form = form
  }
  check = (): boolean => true
  async run(m: Model, s: Sut): Promise<void> {
    m.now = s.tick()
    const { kind, caller } = this
    const { url, query, found, id } = target(m, kind, this.r, this.via, this.r % 4 === 1)
    const raw = linkedJson(m, kind, this.spec, caller, found?.lang ?? 'en')
    // What a venue or organizer shows moves with others' writes too (its translations): read it first,
    // the version written (`ml_language` may name another one of the group than `id`).
    await refreshEtag(s, caller, found, `${API}/${COLLECTION[kind]}/${found?.id ?? id}`, this.ifMatch)
    const headers = ifMatchHeader(found, kind, id, this.ifMatch)
    const { res, what, body } = await send(s, caller, this.method, withQuery(url, query), raw, this.form, headers)
    if (caller === 'anon') return expectError(res, 401, ['rest_forbidden'], what)
    if (linkedProblem(m, kind, body)) return expectError(res, 400, ['rest_invalid_param'], what)
    if (found === undefined) return expectError(res, 404, [`rest-${kind}-not-found`], what)
    if (found.status === 'trash' && !has(body, 'status')) return expectError(res, 410, [`${kind}-is-in-trash`], what)
    if (!canEdit(caller, found) && !(found.status === 'trash' && editsAll(caller))) return expectError(res, 403, ['rest_forbidden'], what)
    if (authorForbidden(caller, body)) return expectError(res, 403, ['rest_forbidden'], what)
    if (headers['if-match'] !== undefined && this.ifMatch === 'stale') return expectError(res, 412, ['rest-precondition-failed'], what)
    if (found.status === 'trash') note(`${kind} restored from the trash`)
    assert.equal(res.status, 200, `${what}: ${JSON.stringify(res.body).slice(0, 400)}`)
    const current = found as MVenue | MOrganizer
    const record = applyLinked(kind, { ...current, modified: m.now }, body)
    if (typeof body.status === 'string') record.status = statusToStore(caller, body.status)
    if (typeof body.slug === 'string') record.slug = changedSlug(m, kind, current, body.slug, record.name)
    record.image = settleImage(m, body.image, res.body.image, current.image, what)
    const same = unchanged<MVenue | MOrganizer>(record, current)
    m.posts(kind).set(record.id, record as MVenue & MOrganizer)
    sameRecord(res.body, renderPost(m, kind, record, caller, false), what, keysOf(kind))
    learnEtag(record, res, !same, what, JSON.stringify(renderPost(m, kind, record, caller, false)))
    readersChanged(m, kind, current, record)
  }
  toString = (): string => `UpdateLinked(${this.kind}, ${this.caller}, r=${this.r}, ${this.via}, ${this.method}, ${JSON.stringify(this.spec)}, ${this.ifMatch}, form=${this.form})`
}

// ---------------------------------------------------------------------------------------------------
// Deletes of events, venues and organizers: the trash, then 410, force for good (CONTRACT §5).

class DeletePost implements fc.AsyncCommand<Model, Sut> {
  readonly kind: PostKind
  readonly caller: Caller
  readonly r: number
  readonly via: Via
  readonly force: boolean
  readonly ifMatch: IfMatch
  constructor(kind: PostKind, caller: Caller, r: number, via: Via, force: boolean, ifMatch: IfMatch) {
    this.kind = kind
    this.caller = caller
    this.r = r
    this.via = via
    this.force = force
    this.ifMatch = ifMatch
  }
  check = (): boolean => true
  async run(m: Model, s: Sut): Promise<void> {
    m.now = s.tick()
    const { kind, caller } = this
    const { url, query, found, id } = target(m, kind, this.r, this.via, this.r % 4 === 1)
    if (this.force) query.push('force=true')
    // An event's ETag names what it shows, which other writes move: the current one is read first. A
    // trashed event cannot be read (410), so no client can hold its current ETag: none is sent then.
    const ifMatch = kind === 'event' && found?.status === 'trash' && this.ifMatch === 'current' ? 'none' : this.ifMatch
    if (found !== undefined) await refreshEtag(s, caller, found, `${API}/${COLLECTION[kind]}/${found.id}`, ifMatch)
    const headers = ifMatchHeader(found, kind, id, ifMatch)
    const full = withQuery(url, query)
    const res = await s.call(caller, 'DELETE', full, undefined, headers)
    const what = `DELETE ${full} ${JSON.stringify(headers)} as ${caller}`
    if (caller === 'anon') return expectError(res, 401, ['rest_forbidden'], what)
    if (found === undefined) return expectError(res, 404, [`rest-${kind}-not-found`], what)
    if (found.status === 'trash' && !this.force) return expectError(res, 410, [`${kind}-is-in-trash`], what)
    if (!canEdit(caller, found) && !editsAll(caller)) return expectError(res, 403, ['rest_forbidden'], what)
    if (headers['if-match'] !== undefined && ifMatch === 'stale') return expectError(res, 412, ['rest-precondition-failed'], what)
    assert.equal(res.status, 200, `${what}: ${JSON.stringify(res.body).slice(0, 400)}`)
    if (this.force) {
      assert.equal(res.body.deleted, true, `${what}: deleted`)
      sameRecord(res.body.previous, renderPost(m, kind, found, caller, false), `${what}: previous`, keysOf(kind))
      m.posts(kind).delete(found.id)
      m.gone.set(`${kind}:${found.id}`, { slug: found.slug, lang: found.lang, name: nameOf(found) })
      // A venue or organizer deleted for good is unlinked from its events; nothing else changes.
      if (kind !== 'event') {
        const field = kind === 'venue' ? 'venues' : 'organizers'
        for (const e of m.events.values()) {
          if (e[field].includes(found.id)) note(`${kind} deleted for good, unlinked`)
          e[field] = e[field].filter((v) => v !== found.id)
        }
      }
      return
    }
    const before = { ...found }
    found.status = 'trash'
    found.modified = m.now
    readersChanged(m, kind, before, found)
    sameRecord(res.body, renderPost(m, kind, found, caller, false), what, keysOf(kind))
    retireEtag(found, res, what)
  }
  toString = (): string => `DeletePost(${this.kind}, ${this.caller}, r=${this.r}, ${this.via}, force=${this.force}, ${this.ifMatch})`
}

// ---------------------------------------------------------------------------------------------------
// Categories and tags.

interface TermSpec {
  translation_of?: number
  name?: string
  description?: string | null
  slug?: string
  parent?: ParentSpec
}

const PARENT: fc.Arbitrary<ParentSpec> = weighted<ParentSpec>([2, fc.constant({ kind: 'zero' as const })], [4, fc.record({ kind: fc.constant('ref' as const), r: fc.nat() })], [1, fc.constant({ kind: 'unknown' as const })])
const termFields = (taxonomy: Taxonomy) => ({
  description: NULLABLE_TEXT,
  slug: fc.constantFrom(...SLUGS),
  ...(taxonomy === 'category' ? { parent: PARENT } : {}),
})

function termJson(m: Model, taxonomy: Taxonomy, spec: TermSpec, lang: Lang): Json {
  const body: Json = {}
  if (spec.name !== undefined) body.name = spec.name
  if (spec.description !== undefined) body.description = spec.description
  if (spec.slug !== undefined) body.slug = spec.slug
  if (spec.translation_of !== undefined) body.translation_of = pickOther(m, taxonomy, spec.translation_of, lang)
  if (spec.parent !== undefined) body.parent = spec.parent.kind === 'zero' ? 0 : spec.parent.kind === 'unknown' ? 999999 : pickId(m, 'category', spec.parent.r)
  return body
}

/** Whether `parent` is a fit parent for `self` (undefined for a new term) in `lang`: exists, same language, no cycle. */
function parentOk(m: Model, parent: number, lang: Lang, self: number | undefined): boolean {
  if (parent === 0) return true
  const found = m.terms.get(parent)
  if (found === undefined || found.taxonomy !== 'category' || found.lang !== lang) return false
  for (let at: MTerm | undefined = found; at !== undefined; at = at.parent === 0 ? undefined : m.terms.get(at.parent)) {
    if (at.id === self) return false
  }
  return true
}

function nameTaken(m: Model, taxonomy: Taxonomy, lang: Lang, parent: number, name: string, self: number | undefined): boolean {
  return termsOf(m, taxonomy).some((term) => term.id !== self && term.lang === lang && term.parent === parent && nameKey(term.name) === nameKey(name))
}

class CreateTerm implements fc.AsyncCommand<Model, Sut> {
  readonly taxonomy: Taxonomy
  readonly caller: Caller
  readonly lang: Lang
  readonly spec: TermSpec
  readonly form: number
  constructor(taxonomy: Taxonomy, caller: Caller, lang: Lang, spec: TermSpec, form = 0) {
    this.taxonomy = taxonomy
    this.caller = caller
    this.lang = lang
    this.spec = spec
    this.form = form
  }
  check = (): boolean => true
  async run(m: Model, s: Sut): Promise<void> {
    m.now = s.tick()
    const { taxonomy, caller } = this
    const raw = termJson(m, taxonomy, this.spec, this.lang)
    const url = `${API}/${COLLECTION[taxonomy]}${this.lang === 'de' ? '?ml_language=de' : ''}`
    const { res, what, body } = await send(s, caller, 'POST', url, raw, this.form)
    if (caller === 'anon') return expectError(res, 401, ['rest_forbidden'], what)
    if (caller !== 'editor') return expectError(res, 403, ['rest_forbidden'], what)
    const name = String(body.name)
    const parent = typeof body.parent === 'number' ? body.parent : 0
    if (!parentOk(m, parent, this.lang, undefined)) return expectError(res, 400, ['rest_invalid_param'], what)
    if (nameTaken(m, taxonomy, this.lang, parent, name, undefined)) return expectError(res, 400, ['term_exists'], what)
    if (translationProblem(m, taxonomy, body.translation_of, this.lang, caller)) return expectError(res, 400, ['rest_invalid_param'], what)
    assert.equal(res.status, 201, `${what}: ${JSON.stringify(res.body).slice(0, 400)}`)
    const id = freshId(m, 'term', res.body.id, what)
    const term: MTerm = {
      id, group: translationGroup(m, taxonomy, body.translation_of, this.lang, caller) ?? id, taxonomy, lang: this.lang, name, slug: newSlug(m, taxonomy, this.lang, str(body.slug), name, id),
      description: emptyToNull(body.description as string | null | undefined) ?? null, parent, etag: undefined,
    }
    m.terms.set(id, term)
    m.ids[taxonomy].push(id)
    sameRecord(res.body, renderTerm(m, term), what)
    learnEtag(term, res, true, what)
  }
  toString = (): string => `CreateTerm(${this.taxonomy}, ${this.caller}, ${this.lang}, ${JSON.stringify(this.spec)}, form=${this.form})`
}

class UpdateTerm implements fc.AsyncCommand<Model, Sut> {
  readonly taxonomy: Taxonomy
  readonly caller: Caller
  readonly r: number
  readonly method: Method
  readonly spec: TermSpec
  readonly ifMatch: IfMatch
  readonly form: number
  constructor(taxonomy: Taxonomy, caller: Caller, r: number, method: Method, spec: TermSpec, ifMatch: IfMatch, form = 0) {
    this.taxonomy = taxonomy
    this.caller = caller
    this.r = r
    this.method = method
    this.spec = spec
    this.ifMatch = ifMatch
    this.form = form
  }
  check = (): boolean => true
  async run(m: Model, s: Sut): Promise<void> {
    m.now = s.tick()
    const { taxonomy, caller } = this
    const id = pickId(m, taxonomy, this.r)
    const current = m.terms.get(id)
    const raw = termJson(m, taxonomy, this.spec, current?.lang ?? 'en')
    await refreshEtag(s, caller, current, `${API}/${COLLECTION[taxonomy]}/${id}`, this.ifMatch)
    const headers = ifMatchHeader(current, taxonomy, id, this.ifMatch)
    const url = `${API}/${COLLECTION[taxonomy]}/${id}`
    const { res, what, body } = await send(s, caller, this.method, url, raw, this.form, headers)
    if (caller === 'anon') return expectError(res, 401, ['rest_forbidden'], what)
    if (caller !== 'editor') return expectError(res, 403, ['rest_forbidden'], what)
    if (current === undefined) return expectError(res, 404, [`rest-${taxonomy}-not-found`], what)
    if (headers['if-match'] !== undefined && this.ifMatch === 'stale') return expectError(res, 412, ['rest-precondition-failed'], what)
    const parent = typeof body.parent === 'number' ? body.parent : current.parent
    const name = typeof body.name === 'string' ? body.name : current.name
    if (parent !== current.parent && !parentOk(m, parent, current.lang, current.id)) return expectError(res, 400, ['rest_invalid_param'], what)
    if ((nameKey(name) !== nameKey(current.name) || parent !== current.parent) && nameTaken(m, taxonomy, current.lang, parent, name, current.id)) {
      return expectError(res, 400, ['term_exists'], what)
    }
    assert.equal(res.status, 200, `${what}: ${JSON.stringify(res.body).slice(0, 400)}`)
    const term: MTerm = { ...current, name, parent }
    if (typeof body.slug === 'string') term.slug = changedSlug(m, taxonomy, current, body.slug, name)
    if (has(body, 'description')) term.description = emptyToNull(body.description as string | null) ?? null
    const same = unchanged(term, current)
    m.terms.set(id, term)
    sameRecord(res.body, renderTerm(m, term), what)
    learnEtag(term, res, !same, what)
  }
  toString = (): string => `UpdateTerm(${this.taxonomy}, ${this.caller}, r=${this.r}, ${this.method}, ${JSON.stringify(this.spec)}, ${this.ifMatch}, form=${this.form})`
}

class DeleteTerm implements fc.AsyncCommand<Model, Sut> {
  readonly taxonomy: Taxonomy
  readonly caller: Caller
  readonly r: number
  readonly ifMatch: IfMatch
  constructor(taxonomy: Taxonomy, caller: Caller, r: number, ifMatch: IfMatch) {
    this.taxonomy = taxonomy
    this.caller = caller
    this.r = r
    this.ifMatch = ifMatch
  }
  check = (): boolean => true
  async run(m: Model, s: Sut): Promise<void> {
    m.now = s.tick()
    const { taxonomy, caller } = this
    const id = pickId(m, taxonomy, this.r)
    const current = m.terms.get(id)
    await refreshEtag(s, caller, current, `${API}/${COLLECTION[taxonomy]}/${id}`, this.ifMatch)
    const headers = ifMatchHeader(current, taxonomy, id, this.ifMatch)
    const url = `${API}/${COLLECTION[taxonomy]}/${id}`
    const res = await s.call(caller, 'DELETE', url, undefined, headers)
    const what = `DELETE ${url} ${JSON.stringify(headers)} as ${caller}`
    if (caller === 'anon') return expectError(res, 401, ['rest_forbidden'], what)
    if (caller !== 'editor') return expectError(res, 403, ['rest_forbidden'], what)
    if (current === undefined) return expectError(res, 404, [`rest-${taxonomy}-not-found`], what)
    if (headers['if-match'] !== undefined && this.ifMatch === 'stale') return expectError(res, 412, ['rest-precondition-failed'], what)
    const children = termsOf(m, taxonomy).filter((term) => term.parent === id).sort((x, y) => x.id - y.id)
    assert.equal(res.status, 200, `${what}: ${JSON.stringify(res.body).slice(0, 400)}`)
    sameRecord(res.body, renderTerm(m, current), what)
    m.terms.delete(id)
    m.gone.set(`${taxonomy}:${id}`, { slug: current.slug, lang: current.lang, name: current.name })
    if (children.length > 0) note('category delete moved children up')
    for (const child of children) {
      // A clashing name is made unique: the first free `<name> 2`, `<name> 3`… under the new parent.
      const taken = (name: string) => termsOf(m, taxonomy).some((sibling) =>
        sibling.id !== child.id && sibling.lang === child.lang && sibling.parent === current.parent && nameKey(sibling.name) === nameKey(name))
      let name = child.name
      for (let n = 2; taken(name); n++) name = `${child.name} ${n}`
      if (name !== child.name) note('category delete renamed a clashing child')
      child.name = name
      child.parent = current.parent
      child.retired = child.etag ?? child.retired
      child.etag = undefined
    }
    for (const e of m.events.values()) {
      e.categories = e.categories.filter((c) => c !== id)
      e.tags = e.tags.filter((c) => c !== id)
    }
  }
  toString = (): string => `DeleteTerm(${this.taxonomy}, ${this.caller}, r=${this.r}, ${this.ifMatch})`
}

// ---------------------------------------------------------------------------------------------------
// The whole state at once: every list in both languages (all pages) and every record by id.

async function listAll(s: Sut, path: string, key: string, query: string): Promise<Json[]> {
  const out: Json[] = []
  for (let page = 1; page <= 20; page++) {
    const res = await s.call('editor', 'GET', `${API}/${path}?${query}&page=${page}&per_page=50`)
    assert.equal(res.status, 200, `list all ${path} ${query}`)
    const items = res.body[key]
    assert.ok(Array.isArray(items))
    out.push(...items.filter(isJson))
    if (page >= Number(res.body.total_pages)) break
  }
  return out
}

async function checkAll(m: Model, s: Sut): Promise<void> {
  for (const lang of ['en', 'de'] as const) {
    const events = await listAll(s, 'events', 'events', `ml_language=${lang}&starts_after=2000-01-01`)
    const expectedEvents = [...m.events.values()].filter((e) => e.lang === lang && e.status !== 'trash' && !e.flags.hide_from_listings)
      .sort((a, b) => (toUtc(a.start, a.tz) < toUtc(b.start, b.tz) ? -1 : toUtc(a.start, a.tz) > toUtc(b.start, b.tz) ? 1 : a.id - b.id))
    assert.deepStrictEqual(events.map((e) => e.id), expectedEvents.map((e) => e.id), `all events (${lang})`)
    expectedEvents.forEach((e, i) => sameRecord(events[i], renderEvent(m, e, 'editor', true), `all events (${lang}) #${e.id}`, EVENT_KEYS))
    for (const kind of ['venue', 'organizer'] as const) {
      const records = await listAll(s, COLLECTION[kind], COLLECTION[kind], `ml_language=${lang}`)
      const expected = [...m.posts(kind).values()].filter((r) => r.lang === lang && r.status !== 'trash')
        .sort((a, b) => (a.date < b.date ? 1 : a.date > b.date ? -1 : a.id - b.id))
      assert.deepStrictEqual(records.map((r) => r.id), expected.map((r) => r.id), `all ${kind}s (${lang})`)
      expected.forEach((r, i) => sameRecord(records[i], renderPost(m, kind, r, 'editor', true), `all ${kind}s (${lang}) #${r.id}`, keysOf(kind)))
    }
    for (const taxonomy of ['category', 'tag'] as const) {
      const records = await listAll(s, COLLECTION[taxonomy], COLLECTION[taxonomy], `ml_language=${lang}&hide_empty=false&orderby=id`)
      const expected = termsOf(m, taxonomy).filter((term) => term.lang === lang).sort((a, b) => a.id - b.id)
      assert.deepStrictEqual(records.map((r) => r.id), expected.map((r) => r.id), `all ${taxonomy} (${lang})`)
      expected.forEach((term, i) => sameRecord(records[i], renderTerm(m, term), `all ${taxonomy} (${lang}) #${term.id}`))
    }
  }
  // Slugs are unique per resource and language (the lists above showed them as the model has them).
  for (const kind of ['event', 'venue', 'organizer', 'category', 'tag'] as const) {
    const records: Array<{ lang: Lang; slug: string }> = kind === 'category' || kind === 'tag' ? termsOf(m, kind) : [...m.posts(kind).values()]
    const seen = new Set(records.map((r) => `${r.lang}:${r.slug}`))
    assert.equal(seen.size, records.length, `${kind} slugs are unique per language`)
  }
  // Every record by id, trashed and hidden ones included, as the editor sees it.
  for (const kind of ['event', 'venue', 'organizer'] as const) {
    for (const id of m.ids[kind]) {
      const res = await s.call('editor', 'GET', `${API}/${COLLECTION[kind]}/${id}`)
      const found = m.posts(kind).get(id)
      if (found === undefined) expectError(res, 404, [`rest-${kind}-not-found`], `GET ${kind} ${id}`)
      else if (kind === 'event' && found.status === 'trash') expectError(res, 410, ['event-no-longer-available'], `GET event ${id}`)
      else {
        assert.equal(res.status, 200, `GET ${kind} ${id}`)
        sameRecord(res.body, renderPost(m, kind, found, 'editor', false), `GET ${kind} ${id}`, keysOf(kind))
        const view = JSON.stringify(renderPost(m, kind, found, 'editor', false))
        learnEtag(found, res, false, `GET ${API}/${COLLECTION[kind]}/${id}`, view)
      }
    }
  }
}

class CheckAll implements fc.AsyncCommand<Model, Sut> {
  check = (): boolean => true
  async run(m: Model, s: Sut): Promise<void> {
    m.now = s.tick()
    await checkAll(m, s)
  }
  toString = (): string => 'CheckAll'
}

// ---------------------------------------------------------------------------------------------------
// The command mix.

const PAGE = fc.integer({ min: 1, max: 4 })
const PER_PAGE = fc.constantFrom(1, 2, 3, 5, 10, 50)
const NEEDLE = fc.constantFrom(...NEEDLES)
const DAY = fc.integer({ min: 0, max: 110 })

const INSTANT: fc.Arbitrary<Instant> = fc.record({ day: fc.integer({ min: -5, max: 115 }), h: fc.integer({ min: 0, max: 23 }), iso: fc.boolean() })
const RELATIVE = fc.constantFrom<Relative>('starts_before', 'starts_after', 'ends_before', 'ends_after')

const eventListArb: fc.Arbitrary<EventListSpec> = fc.record({
  viewer: VIEWER,
  lang: LIST_LANG,
  page: PAGE,
  perPage: PER_PAGE,
  rest: partial({
    search: NEEDLE,
    status: STATUS_FILTER,
    categories: fc.array(TERM_ENTRY, { minLength: 1, maxLength: 2 }),
    tags: fc.array(TERM_ENTRY, { minLength: 1, maxLength: 2 }),
    venue: fc.array(fc.nat(), { minLength: 1, maxLength: 2 }),
    organizer: fc.array(fc.nat(), { minLength: 1, maxLength: 2 }),
    featured: fc.boolean(),
  }, 2),
  window: weighted<EventListSpec['window']>(
    [3, fc.constant({ kind: 'default' as const })],
    [2, fc.record({ kind: fc.constant('days' as const), start: DAY, end: DAY }, { requiredKeys: ['kind'] })],
    [1, fc.record({ kind: fc.constant('bounds' as const), strict: fc.boolean(), start: INSTANT, end: INSTANT }, { requiredKeys: ['kind', 'strict'] })],
    [2, fc.record({ kind: fc.constant('relative' as const), name: RELATIVE, at: INSTANT, strict: fc.boolean(), also: RELATIVE }, { requiredKeys: ['kind', 'name', 'at', 'strict'] })],
    [1, fc.record({ kind: fc.constant('include' as const), ids: fc.array(fc.nat(), { minLength: 1, maxLength: 4 }), start: DAY }, { requiredKeys: ['kind', 'ids'] })]),
}).map(({ rest, ...q }) => ({ ...q, ...rest }))

const linkedListArb: fc.Arbitrary<LinkedListSpec> = fc.record({
  viewer: VIEWER,
  lang: LIST_LANG,
  page: PAGE,
  perPage: PER_PAGE,
  rest: partial({ search: NEEDLE, status: STATUS_FILTER, has_events: fc.boolean(), only_with_upcoming: fc.boolean(), event: fc.nat() }, 2),
}).map(({ rest, ...q }) => ({ ...q, ...rest }))

const termListArb = (taxonomy: Taxonomy): fc.Arbitrary<TermListSpec> => fc.record({
  lang: LIST_LANG,
  page: PAGE,
  perPage: PER_PAGE,
  rest: partial<Omit<TermListSpec, 'lang' | 'page' | 'perPage'>>({
    search: NEEDLE,
    hideEmpty: weighted([3, fc.constant(false)], [1, fc.constant(true)]),
    post: fc.nat(),
    orderby: fc.constantFrom('id' as const, 'name' as const, 'slug' as const, 'count' as const),
    order: fc.constantFrom('asc' as const, 'desc' as const),
    include: fc.array(fc.nat(), { minLength: 1, maxLength: 3 }),
    exclude: fc.array(fc.nat(), { minLength: 1, maxLength: 2 }),
    ...(taxonomy === 'category' ? { parent: PARENT } : {}),
  }, 3),
}).map(({ rest, ...q }) => ({ hideEmpty: false, ...q, ...rest }))

const termCreateArb = (taxonomy: Taxonomy): fc.Arbitrary<TermSpec> =>
  fc.tuple(fc.constantFrom(...TERM_NAMES), partial<TermSpec>(termFields(taxonomy), 2), SOMETIMES_NAT)
    .map(([name, rest, translationOf]) => ({ name, ...rest, ...(translationOf !== undefined ? { translation_of: translationOf } : {}) }))
const termUpdateArb = (taxonomy: Taxonomy): fc.Arbitrary<TermSpec> =>
  partial<TermSpec>({ ...termFields(taxonomy), name: fc.constantFrom(...TERM_NAMES) }, 3, 1)

type Cmd = fc.AsyncCommand<Model, Sut>
const cmd = <A extends unknown[]>(weight: number, arbs: { [K in keyof A]: fc.Arbitrary<A[K]> }, make: (...args: A) => Cmd): fc.WeightedArbitrary<Cmd> =>
  ({ weight, arbitrary: fc.tuple(...(arbs as fc.Arbitrary<unknown>[])).map((args) => make(...(args as A))) })

/** JSON mostly; now and then a form body in one of the three array forms. */
const FORM = weighted([3, fc.constant(0)], [1, fc.integer({ min: 1, max: 3 })], [1, fc.constant(4)])
const PASSWORD = fc.constantFrom<'none' | 'right' | 'wrong'>('none', 'none', 'right', 'wrong')

const COMMANDS: fc.Arbitrary<Cmd> = fc.oneof(
  cmd(8, [CALLER, LANG, EVENT_CREATE, FORM], (c, l, spec, form) => new CreateEvent(c, l, spec, form)),
  cmd(8, [CALLER, fc.nat(), VIA, METHOD, EVENT_UPDATE, IF_MATCH, FORM], (c, r, via, method, spec, im, form) => new UpdateEvent(c, r, via, method, spec, im, form)),
  cmd(3, [CALLER, fc.nat(), VIA, fc.boolean(), IF_MATCH], (c, r, via, force, im) => new DeletePost('event', c, r, via, force, im)),
  cmd(4, [VIEWER, fc.nat(), VIA, fc.boolean(), PASSWORD], (v, r, via, lp, pw) => new ReadPost('event', v, r, via, lp, pw)),
  cmd(6, [eventListArb], (q) => new ListEvents(q)),
  ...(['venue', 'organizer'] as const).flatMap((kind) => [
    cmd(4, [CALLER, LANG, linkedCreate(kind), FORM], (c, l, spec, form) => new CreateLinked(kind, c, l, spec, form)),
    cmd(4, [CALLER, fc.nat(), VIA, METHOD, linkedUpdate(kind), IF_MATCH, FORM], (c, r, via, method, spec, im, form) => new UpdateLinked(kind, c, r, via, method, spec, im, form)),
    cmd(2, [CALLER, fc.nat(), VIA, fc.boolean(), IF_MATCH], (c, r, via, force, im) => new DeletePost(kind, c, r, via, force, im)),
    cmd(2, [VIEWER, fc.nat(), VIA, fc.boolean()], (v, r, via, lp) => new ReadPost(kind, v, r, via, lp, 'none')),
    cmd(3, [linkedListArb], (q) => new ListLinked(kind, q)),
  ]),
  ...(['category', 'tag'] as const).flatMap((taxonomy) => [
    cmd(4, [CALLER, LANG, termCreateArb(taxonomy), FORM], (c, l, spec, form) => new CreateTerm(taxonomy, c, l, spec, form)),
    cmd(2, [CALLER, fc.nat(), METHOD, termUpdateArb(taxonomy), IF_MATCH, FORM], (c, r, method, spec, im, form) => new UpdateTerm(taxonomy, c, r, method, spec, im, form)),
    cmd(1, [CALLER, fc.nat(), IF_MATCH], (c, r, im) => new DeleteTerm(taxonomy, c, r, im)),
    cmd(1, [fc.nat(), fc.boolean()], (r, lp) => new ReadTerm(taxonomy, r, lp)),
    cmd(3, [termListArb(taxonomy)], (q) => new ListTerms(taxonomy, q)),
  ]),
  { weight: 2, arbitrary: fc.constant(new CheckAll()) },
)

// ---------------------------------------------------------------------------------------------------

t.test('model-based sequences over the five resources agree with the model', async (t) => {
  const started = Date.now()
  let runs = 0
  const result = await fc.check(fc.asyncProperty(fc.commands([COMMANDS], { maxCommands: MAX_COMMANDS, size: 'max' }), async (commands) => {
    runs += 1
    const sut = await makeSut(t)
    try {
      const counted = [...commands].map((c) => ({
        check: (m: Model) => c.check(m),
        run: async (m: Model, s: Sut) => {
          commandsRun += 1
          try {
            await c.run(m, s)
          } catch (error) {
            if (error instanceof Error) error.message = `${c.toString()}\n${error.message}`
            throw error
          }
        },
        toString: () => c.toString(),
      }))
      const model = new Model()
      await fc.asyncModelRun(() => ({ model, real: sut }), counted)
      // The state after the last command, whole.
      model.now = sut.tick()
      await checkAll(model, sut)
    } finally {
      await sut.close()
    }
  }), { seed: SEED, numRuns: RUNS, endOnFailure: process.env.STATEFUL_SHRINK === undefined })
  const seconds = ((Date.now() - started) / 1000).toFixed(1)
  t.comment(`stateful: ${commandsRun} commands (${requestsSent} requests) in ${runs} runs, ${seconds} s, seed ${SEED}`)
  if (process.env.STATEFUL_OUTCOMES !== undefined) t.comment([...outcomes].sort().map(([k, n]) => `${k}: ${n}`).join('\n'))
  if (result.failed) {
    const error = result.errorInstance
    t.fail(`${error instanceof Error ? error.message : String(error)}\n${fc.defaultReportMessage(result) ?? 'a sequence failed'}`)
  }
  else t.pass(`${commandsRun} commands agree with the model`)
})

// ---------------------------------------------------------------------------------------------------
// Recurring events (CONTRACT §17): a second, smaller model of series, their occurrences' own changes,
// cancels and splits. The expansion itself is src/lib/recurrence.ts `expandSeries` (its own oracle is
// test/recurrence-oracle.test.ts); here the point is the API's state machine: which occurrences a series
// has after each write, which changes of one occurrence stay, what lists count, ETags and the change log.
// Dates stay in June–September 2026, so Europe/Berlin is UTC+2 throughout (OFFSET).

const SERIES_RUNS = Number(process.env.STATEFUL_SERIES_RUNS ?? propertyRuns(10))
const SERIES_MAX = Number(process.env.STATEFUL_SERIES_MAX ?? 40)
const SERIES_HORIZON = '2031-06-15 12:00:00'
const SERIES_TITLES = ['Series A', 'Series B', 'Series C']
const OCCURRENCE_TITLES = ['Special', 'Moved one']

interface MOverride {
  title?: string
  start?: string
  end?: string
}

interface MSeries {
  id: number
  title: string
  tz: string
  start: string
  end: string
  rule: string | null
  rdates: string[]
  exdates: string[]
  overrides: Map<string, MOverride>
}

class SeriesModel {
  series = new Map<number, MSeries>()
  /** The change log's cursor after the last command. */
  cursor = ''
}

const addMinutes = (wall: string, minutes: number): string => text(ms(wall) + minutes * 60000)
const occUrl = (id: number, occurrence?: string): string => `${API}/events/${id}/occurrences${occurrence === undefined ? '' : `/${occurrence}`}`

function expandModel(s: Pick<MSeries, 'tz' | 'start' | 'end' | 'rule' | 'rdates' | 'exdates'>): Occurrence[] | null {
  const checked = checkRecurrence({ rule: s.rule, rdates: s.rdates, exdates: s.exdates }, false)
  if ('refused' in checked) return null
  const expanded = expandSeries({ timezone: s.tz, allDay: false, start: s.start, end: s.end, startUtc: toUtc(s.start, s.tz), endUtc: toUtc(s.end, s.tz) }, checked, SERIES_HORIZON)
  return 'refused' in expanded ? null : expanded
}

function occurrencesOf(s: MSeries): Occurrence[] {
  const expanded = expandModel(s)
  assert.ok(expanded !== null, `series ${s.id}: the model keeps only series it can expand`)
  return expanded
}

/** An occurrence as the API must show it: its own changes applied. */
function occurrenceView(s: MSeries, o: Occurrence): Json {
  const own = s.overrides.get(o.id)
  const start = own?.start ?? o.start
  const end = own?.end ?? o.end
  return {
    id: s.id, title: own?.title ?? s.title, start_date: start, end_date: end, utc_start_date: toUtc(start, s.tz), utc_end_date: toUtc(end, s.tz),
    recurrence: { rule: s.rule, rdates: s.rdates, exdates: s.exdates },
    occurrence: { id: o.id, original_start_date: o.start, original_utc_start_date: o.startUtc, overridden: own !== undefined, rest_url: `${API_URL}/events/${s.id}/occurrences/${o.id}` },
  }
}

function pickOf<T>(items: readonly T[], r: number): T | undefined {
  return items.length === 0 ? undefined : items[r % items.length]
}

function pickSeries(m: SeriesModel, r: number): MSeries | undefined {
  return pickOf([...m.series.values()], r)
}

/** The change log after the last command lists exactly these entries (as `id action`, in any order). */
async function expectChanges(m: SeriesModel, s: Sut, expected: string[], what: string): Promise<void> {
  const res = await s.call('editor', 'GET', `${API}/changes?since=${encodeURIComponent(m.cursor)}&resource=events`)
  assert.equal(res.status, 200, `${what}: /changes`)
  const changes = (res.body.changes as Json[]).map((c) => `${String(c.id)} ${String(c.action)}`)
  assert.deepEqual(changes.sort(), [...expected].sort(), `${what}: the change log`)
  assert.equal(res.body.has_more, false)
  m.cursor = String(res.body.next_cursor)
}

async function seriesEtag(s: Sut, id: number): Promise<string> {
  const res = await s.call('editor', 'GET', `${API}/events/${id}`)
  assert.equal(res.status, 200, `GET series ${id}`)
  return etagOf(res)
}

async function occurrenceEtag(s: Sut, id: number, occurrence: string): Promise<string> {
  const res = await s.call('editor', 'GET', occUrl(id, occurrence))
  assert.equal(res.status, 200, `GET occurrence ${id}/${occurrence}`)
  return etagOf(res)
}

/** The whole series as the API shows it (`occurrence: null`) agrees with the model. */
function sameSeries(body: Json, e: MSeries, what: string): void {
  assert.deepEqual(
    { id: body.id, title: body.title, start_date: body.start_date, end_date: body.end_date, recurrence: body.recurrence, occurrence: body.occurrence },
    { id: e.id, title: e.title, start_date: e.start, end_date: e.end, recurrence: { rule: e.rule, rdates: e.rdates, exdates: e.exdates }, occurrence: null },
    `${what}: the series`,
  )
}

/** Every check of one series: its occurrences (ids, dates, own changes, total) and one occurrence read alone. */
async function checkSeries(m: SeriesModel, s: Sut, e: MSeries, r: number): Promise<void> {
  const expected = occurrencesOf(e)
  const res = await s.call('anon', 'GET', `${occUrl(e.id)}?per_page=50`)
  assert.equal(res.status, 200, `occurrences of ${e.id}`)
  const shown = (res.body.occurrences as Json[]).map((o) => ({ ...pickKeys(o, ['id', 'title', 'start_date', 'end_date', 'utc_start_date', 'utc_end_date', 'recurrence', 'occurrence']) }))
  // Ordered as lists are (CONTRACT §17): by the occurrence's UTC start as it stands (moved or not), then occurrence id.
  const views = expected.map((o) => occurrenceView(e, o)).sort((a, b) => byText(String(a.utc_start_date), String(b.utc_start_date)) || byText(String((a.occurrence as Json).id), String((b.occurrence as Json).id)))
  assert.deepEqual(shown, views, `occurrences of ${e.id}`)
  assert.equal(res.body.total, expected.length, `occurrences of ${e.id}: total`)
  const one = pickOf(expected, r)
  if (one === undefined) return
  const read = await s.call('anon', 'GET', occUrl(e.id, one.id))
  assert.equal(read.status, 200, `occurrence ${e.id}/${one.id}`)
  assert.deepEqual(pickKeys(read.body, ['id', 'title', 'start_date', 'end_date', 'utc_start_date', 'utc_end_date', 'recurrence', 'occurrence']), occurrenceView(e, one), `occurrence ${e.id}/${one.id}`)
  etagOf(read)
}

const byText = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0)

function pickKeys(record: Json, keys: string[]): Json {
  return Object.fromEntries(keys.map((k) => [k, record[k]]))
}

interface SeriesSpec {
  title: number
  tz: 'UTC' | 'Europe/Berlin'
  day: number
  h: number
  minutes: number
  rule: 'daily' | 'weekly' | 'none'
  count: number
  rdate: number | null
  exdate: number | null
}

class CreateSeries implements fc.AsyncCommand<SeriesModel, Sut> {
  readonly spec: SeriesSpec
  constructor(spec: SeriesSpec) {
    this.spec = spec
  }
  check = (): boolean => true
  async run(m: SeriesModel, s: Sut): Promise<void> {
    s.tick()
    const p = this.spec
    const start = `${day(p.day)} ${pad(p.h)}:00:00`
    const end = addMinutes(start, p.minutes)
    const step = p.rule === 'daily' ? 1 : 7
    const rule = p.rule === 'none' ? null : `FREQ=${p.rule === 'daily' ? 'DAILY' : 'WEEKLY'};COUNT=${p.count}`
    // Without a rule, an rdate makes the series (a lone DTSTART cancelled by its exdate would be refused).
    const rdates = p.rdate !== null || rule === null ? [`${day(p.day + (p.rdate ?? 3))} ${pad(p.h)}:30:00`] : []
    const exdates = p.exdate !== null ? [`${day(p.day + step * p.exdate)} ${pad(p.h)}:00:00`] : []
    const e: MSeries = { id: 0, title: SERIES_TITLES[p.title % SERIES_TITLES.length] as string, tz: p.tz, start, end, rule, rdates, exdates, overrides: new Map() }
    const res = await s.call('editor', 'POST', `${API}/events`, { title: e.title, timezone: e.tz, start_date: start, end_date: end, recurrence: { rule, rdates, exdates } })
    if (expandModel(e) === null) {
      expectError(res, 400, ['rest_invalid_param'], 'a series the model cannot expand')
      await expectChanges(m, s, [], 'refused create')
      return
    }
    assert.equal(res.status, 201, `create series: ${JSON.stringify(res.body).slice(0, 300)}`)
    e.id = Number(res.body.id)
    assert.ok(!m.series.has(e.id))
    sameSeries(res.body, e, 'create')
    m.series.set(e.id, e)
    await expectChanges(m, s, [`${e.id} created`], 'create')
  }
  toString = (): string => `CreateSeries(${JSON.stringify(this.spec)})`
}

interface WholeSpec {
  r: number
  title: number | null
  /** Moves start and end by whole days and minutes (null: the dates stay). */
  move: { days: number; minutes: number } | null
}

class PatchSeries implements fc.AsyncCommand<SeriesModel, Sut> {
  readonly spec: WholeSpec
  constructor(spec: WholeSpec) {
    this.spec = spec
  }
  check = (m: SeriesModel): boolean => m.series.size > 0
  async run(m: SeriesModel, s: Sut): Promise<void> {
    s.tick()
    const e = pickSeries(m, this.spec.r) as MSeries
    const body: Json = {}
    const next: MSeries = { ...e, overrides: new Map(e.overrides) }
    if (this.spec.title !== null) next.title = body.title = SERIES_TITLES[this.spec.title % SERIES_TITLES.length] as string
    if (this.spec.move !== null) {
      const shift = this.spec.move.days * 1440 + this.spec.move.minutes
      next.start = body.start_date = addMinutes(e.start, shift)
      next.end = body.end_date = addMinutes(e.end, shift)
    }
    const what = `PATCH series ${e.id} ${JSON.stringify(body)}`
    const before = await seriesEtag(s, e.id)
    const res = await s.call('editor', 'PATCH', `${API}/events/${e.id}`, body)
    const expanded = expandModel(next)
    if (expanded === null) {
      expectError(res, 400, ['rest_invalid_param'], `${what}: the model cannot expand it`)
      assert.equal(await seriesEtag(s, e.id), before, `${what}: refused, nothing written`)
      await expectChanges(m, s, [], what)
      return
    }
    assert.equal(res.status, 200, `${what}: ${JSON.stringify(res.body).slice(0, 300)}`)
    // Changes of one occurrence stay while its original start stays in the set (CONTRACT §17).
    const ids = new Set(expanded.map((o) => o.id))
    for (const id of [...next.overrides.keys()]) if (!ids.has(id)) next.overrides.delete(id)
    sameSeries(res.body, next, what)
    const changed = next.title !== e.title || next.start !== e.start
    m.series.set(e.id, next)
    if (changed) assert.notEqual(etagOf(res), before, `${what}: the ETag changes`)
    else assert.equal(etagOf(res), before, `${what}: nothing changed, the same ETag`)
    await expectChanges(m, s, changed ? [`${e.id} updated`] : [], what)
  }
  toString = (): string => `PatchSeries(${JSON.stringify(this.spec)})`
}

interface OccurrenceSpec {
  r: number
  k: number
  title: number | null | undefined
  /** Moves this occurrence alone by minutes from its original start (null: back to the series' dates). */
  move: number | null | undefined
}

class PatchOccurrence implements fc.AsyncCommand<SeriesModel, Sut> {
  readonly spec: OccurrenceSpec
  constructor(spec: OccurrenceSpec) {
    this.spec = spec
  }
  check = (m: SeriesModel): boolean => m.series.size > 0
  async run(m: SeriesModel, s: Sut): Promise<void> {
    s.tick()
    const e = pickSeries(m, this.spec.r) as MSeries
    const o = pickOf(occurrencesOf(e), this.spec.k) as Occurrence
    const own: MOverride = { ...e.overrides.get(o.id) }
    const body: Json = {}
    if (this.spec.title === null) {
      body.title = null
      delete own.title
    } else if (this.spec.title !== undefined) own.title = body.title = OCCURRENCE_TITLES[this.spec.title % OCCURRENCE_TITLES.length] as string
    if (this.spec.move === null) {
      body.start_date = body.end_date = null
      delete own.start
      delete own.end
    } else if (this.spec.move !== undefined) {
      own.start = body.start_date = addMinutes(o.start, this.spec.move)
      own.end = body.end_date = addMinutes(o.end, this.spec.move)
    }
    if (Object.keys(body).length === 0) {
      body.title = null
      delete own.title
    }
    const what = `PATCH occurrence ${e.id}/${o.id} ${JSON.stringify(body)}`
    const [seriesBefore, occurrenceBefore] = [await seriesEtag(s, e.id), await occurrenceEtag(s, e.id, o.id)]
    const res = await s.call('editor', 'PATCH', occUrl(e.id, o.id), body)
    assert.equal(res.status, 200, `${what}: ${JSON.stringify(res.body).slice(0, 300)}`)
    const previous = JSON.stringify(e.overrides.get(o.id) ?? {})
    if (Object.keys(own).length === 0) e.overrides.delete(o.id)
    else e.overrides.set(o.id, own)
    const changed = JSON.stringify(e.overrides.get(o.id) ?? {}) !== previous
    assert.deepEqual(pickKeys(res.body, ['id', 'title', 'start_date', 'end_date', 'utc_start_date', 'utc_end_date', 'recurrence', 'occurrence']), occurrenceView(e, o), what)
    await etagsMoved(s, e.id, o.id, seriesBefore, occurrenceBefore, changed, what)
    assert.equal(etagOf(res), await occurrenceEtag(s, e.id, o.id), `${what}: the answer's ETag is the occurrence's`)
    await expectChanges(m, s, changed ? [`${e.id} updated`] : [], what)
  }
  toString = (): string => `PatchOccurrence(${JSON.stringify(this.spec)})`
}

async function etagsMoved(s: Sut, id: number, occurrence: string | null, seriesBefore: string, occurrenceBefore: string | null, changed: boolean, what: string): Promise<void> {
  const seriesAfter = await seriesEtag(s, id)
  if (changed) assert.notEqual(seriesAfter, seriesBefore, `${what}: the series' ETag changes`)
  else assert.equal(seriesAfter, seriesBefore, `${what}: nothing changed, the series' ETag stays`)
  if (occurrence === null || occurrenceBefore === null) return
  const occurrenceAfter = await occurrenceEtag(s, id, occurrence)
  if (changed) assert.notEqual(occurrenceAfter, occurrenceBefore, `${what}: the occurrence's ETag changes`)
  else assert.equal(occurrenceAfter, occurrenceBefore, `${what}: nothing changed, the occurrence's ETag stays`)
}

class CancelOccurrence implements fc.AsyncCommand<SeriesModel, Sut> {
  readonly r: number
  readonly k: number
  constructor(r: number, k: number) {
    this.r = r
    this.k = k
  }
  check = (m: SeriesModel): boolean => m.series.size > 0
  async run(m: SeriesModel, s: Sut): Promise<void> {
    s.tick()
    const e = pickSeries(m, this.r) as MSeries
    const all = occurrencesOf(e)
    const o = pickOf(all, this.k) as Occurrence
    const what = `DELETE occurrence ${e.id}/${o.id}`
    const [seriesBefore, occurrenceBefore] = [await seriesEtag(s, e.id), await occurrenceEtag(s, e.id, o.id)]
    const res = await s.call('editor', 'DELETE', occUrl(e.id, o.id))
    const next: MSeries = { ...e, exdates: [...e.exdates, o.start], overrides: new Map(e.overrides) }
    next.overrides.delete(o.id)
    if (expandModel(next) === null) {
      expectError(res, 400, ['rest_invalid_param'], `${what}: the last occurrence`)
      await etagsMoved(s, e.id, o.id, seriesBefore, occurrenceBefore, false, what)
      await expectChanges(m, s, [], what)
      return
    }
    assert.equal(res.status, 200, `${what}: ${JSON.stringify(res.body).slice(0, 300)}`)
    // Its original start joins `exdates`; the order the server keeps them in is its own.
    const exdates = ((res.body.recurrence as Json).exdates as string[])
    assert.deepEqual([...exdates].sort(), [...next.exdates].sort(), `${what}: exdates`)
    next.exdates = exdates
    sameSeries(res.body, next, what)
    m.series.set(e.id, next)
    await etagsMoved(s, e.id, null, seriesBefore, null, true, what)
    const gone = await s.call('editor', 'GET', occUrl(e.id, o.id))
    expectError(gone, 404, ['rest-event-occurrence-not-found'], `${what}: read again`)
    await expectChanges(m, s, [`${e.id} updated`], what)
  }
  toString = (): string => `CancelOccurrence(${this.r}, ${this.k})`
}

class SplitSeries implements fc.AsyncCommand<SeriesModel, Sut> {
  readonly r: number
  readonly k: number
  readonly title: number | null
  constructor(r: number, k: number, title: number | null) {
    this.r = r
    this.k = k
    this.title = title
  }
  check = (m: SeriesModel): boolean => m.series.size > 0
  async run(m: SeriesModel, s: Sut): Promise<void> {
    s.tick()
    const e = pickSeries(m, this.r) as MSeries
    const all = occurrencesOf(e)
    // Anywhere, an occurrence only an rdate makes included (the series then keeps its set: CONTRACT §17, docs/recurrence.md).
    const at = this.k % all.length
    const o = all[at] as Occurrence
    const body: Json = this.title === null ? {} : { title: SERIES_TITLES[this.title % SERIES_TITLES.length] }
    const what = `split ${e.id} at ${o.id} ${JSON.stringify(body)}`
    const before = await seriesEtag(s, e.id)
    const res = await s.call('editor', 'POST', `${occUrl(e.id, o.id)}/split`, body)
    if (at === 0) {
      expectError(res, 400, ['rest_invalid_param'], `${what}: at the first occurrence`)
      assert.equal(await seriesEtag(s, e.id), before, `${what}: refused, nothing written`)
      await expectChanges(m, s, [], what)
      return
    }
    assert.equal(res.status, 201, `${what}: ${JSON.stringify(res.body).slice(0, 300)}`)
    const id = Number(res.body.id)
    assert.ok(!m.series.has(id), `${what}: a new id`)
    assert.ok(String(res.headers.location).endsWith(`/events/${id}`), `${what}: Location`)
    // The new event starts with that occurrence, its duration the series'; the rules the server wrote on both
    // sides must split the occurrences there: the earlier ones stay, the later ones (and their own changes) move.
    const fresh: MSeries = {
      id, title: typeof body.title === 'string' ? body.title : e.title, tz: e.tz, start: o.start, end: addMinutes(o.start, (ms(e.end) - ms(e.start)) / 60000),
      ...learnRecurrence(res.body), overrides: new Map([...e.overrides].filter(([k]) => all.findIndex((x) => x.id === k) >= at)),
    }
    sameSeries(res.body, fresh, `${what}: the new event`)
    const read = await s.call('editor', 'GET', `${API}/events/${e.id}`)
    const old: MSeries = { ...e, ...learnRecurrence(read.body), overrides: new Map([...e.overrides].filter(([k]) => all.findIndex((x) => x.id === k) < at)) }
    sameSeries(read.body, old, `${what}: the series`)
    assert.notEqual(etagOf(read), before, `${what}: the series' ETag changes`)
    assert.deepEqual(occurrencesOf(old).map((x) => x.id), all.slice(0, at).map((x) => x.id), `${what}: the series keeps the earlier occurrences`)
    assert.deepEqual(occurrencesOf(fresh).map((x) => x.id), all.slice(at).map((x) => x.id), `${what}: the new event has the later ones`)
    m.series.set(e.id, old)
    m.series.set(id, fresh)
    await expectChanges(m, s, [`${e.id} updated`, `${id} created`], what)
  }
  toString = (): string => `SplitSeries(${this.r}, ${this.k}, ${this.title})`
}

function learnRecurrence(body: Json): Pick<MSeries, 'rule' | 'rdates' | 'exdates'> {
  const r = body.recurrence as { rule: string | null; rdates: string[]; exdates: string[] }
  return { rule: r.rule, rdates: r.rdates, exdates: r.exdates }
}

class CheckSeries implements fc.AsyncCommand<SeriesModel, Sut> {
  readonly r: number
  readonly window: { from: number; days: number }
  constructor(r: number, window: { from: number; days: number }) {
    this.r = r
    this.window = window
  }
  check = (): boolean => true
  async run(m: SeriesModel, s: Sut): Promise<void> {
    await checkSeriesAll(m, s, this.r, this.window)
  }
  toString = (): string => `CheckSeries(${this.r}, ${JSON.stringify(this.window)})`
}

/** Every series checked; `GET /events` in a window counts the occurrences (their own dates) inside it. */
async function checkSeriesAll(m: SeriesModel, s: Sut, r: number, window: { from: number; days: number }): Promise<void> {
  for (const e of m.series.values()) await checkSeries(m, s, e, r)
  const from = `${day(window.from)} 00:00:00`
  const to = `${day(window.from + window.days)} 23:59:59`
  let expected = 0
  for (const e of m.series.values()) {
    for (const o of occurrencesOf(e)) {
      const v = occurrenceView(e, o)
      if (String(v.utc_start_date) >= from && String(v.utc_end_date) <= to) expected++
    }
  }
  const res = await s.call('anon', 'GET', `${API}/events?start_date=${encodeURIComponent(from)}&end_date=${encodeURIComponent(to)}&per_page=1`)
  assert.equal(res.status, 200)
  assert.equal(res.body.total, expected, `GET /events from ${from} to ${to}: total counts occurrences`)
}

const SERIES_COMMANDS = fc.oneof(
  { weight: 3, arbitrary: fc.record<SeriesSpec>({
    title: fc.nat(), tz: fc.constantFrom('UTC', 'Europe/Berlin'), day: fc.integer({ min: 0, max: 30 }), h: fc.integer({ min: 6, max: 20 }),
    minutes: fc.constantFrom(30, 90, 120), rule: weighted([3, fc.constant('daily' as const)], [3, fc.constant('weekly' as const)], [1, fc.constant('none' as const)]),
    count: fc.integer({ min: 2, max: 6 }), rdate: weighted<number | null>([1, fc.integer({ min: 1, max: 40 })], [2, fc.constant(null)]),
    exdate: weighted<number | null>([1, fc.integer({ min: 0, max: 6 })], [2, fc.constant(null)]),
  }).map((spec) => new CreateSeries(spec)) },
  { weight: 2, arbitrary: fc.record<WholeSpec>({
    r: fc.nat(), title: weighted<number | null>([1, fc.nat()], [1, fc.constant(null)]),
    move: weighted<WholeSpec['move']>([2, fc.record({ days: fc.integer({ min: -3, max: 7 }), minutes: fc.constantFrom(0, 0, 60, -30) })], [1, fc.constant(null)]),
  }).map((spec) => new PatchSeries(spec)) },
  { weight: 4, arbitrary: fc.record<OccurrenceSpec>({
    r: fc.nat(), k: fc.nat(), title: fc.constantFrom<number | null | undefined>(0, 1, null, undefined),
    move: fc.constantFrom<number | null | undefined>(60, -30, 180, null, undefined),
  }).map((spec) => new PatchOccurrence(spec)) },
  { weight: 2, arbitrary: fc.tuple(fc.nat(), fc.nat()).map(([r, k]) => new CancelOccurrence(r, k)) },
  { weight: 2, arbitrary: fc.tuple(fc.nat(), fc.nat(), weighted<number | null>([1, fc.nat()], [1, fc.constant(null)])).map(([r, k, title]) => new SplitSeries(r, k, title)) },
  { weight: 2, arbitrary: fc.tuple(fc.nat(), fc.record({ from: fc.integer({ min: -2, max: 60 }), days: fc.integer({ min: 0, max: 30 }) })).map(([r, w]) => new CheckSeries(r, w)) },
)

t.test('model-based sequences over recurring series: occurrences, their own changes, cancels and splits', async (t) => {
  const started = Date.now()
  let runs = 0
  let commands = 0
  const result = await fc.check(fc.asyncProperty(fc.commands([SERIES_COMMANDS], { maxCommands: SERIES_MAX, size: 'max' }), async (cmds) => {
    runs += 1
    const sut = await makeSut(t)
    try {
      const model = new SeriesModel()
      const now = await sut.call('editor', 'GET', `${API}/changes?since=now`)
      model.cursor = String(now.body.next_cursor)
      const counted = [...cmds].map((c) => ({
        check: (m: SeriesModel) => c.check(m),
        run: async (m: SeriesModel, s: Sut) => {
          commands += 1
          try {
            await c.run(m, s)
          } catch (error) {
            if (error instanceof Error) error.message = `${c.toString()}\n${error.message}`
            throw error
          }
        },
        toString: () => c.toString(),
      }))
      await fc.asyncModelRun(() => ({ model, real: sut }), counted)
      await checkSeriesAll(model, sut, 0, { from: -2, days: 120 })
    } finally {
      await sut.close()
    }
  }), { seed: SEED, numRuns: SERIES_RUNS, endOnFailure: process.env.STATEFUL_SHRINK === undefined })
  const seconds = ((Date.now() - started) / 1000).toFixed(1)
  t.comment(`stateful series: ${commands} commands in ${runs} runs, ${seconds} s, seed ${SEED}`)
  if (process.env.STATEFUL_OUTCOMES !== undefined) t.comment([...outcomes].sort().map(([k, n]) => `${k}: ${n}`).join('\n'))
  if (result.failed) {
    const error = result.errorInstance
    t.fail(`${error instanceof Error ? error.message : String(error)}\n${fc.defaultReportMessage(result) ?? 'a sequence failed'}`)
  }
  else t.pass(`${commands} commands over series agree with the model`)
})

// ---------------------------------------------------------------------------------------------------
// Regressions of the bugs the sequences found, one test each.

t.test('regression: venues and organizers created inline take their own status, else the caller\'s default', async (t) => {
  const { inject, auth } = await build(t)
  const editor = await auth('editor')
  const contributor = await auth('contributor')
  const event = { title: 'Inline', start_date: '2026-07-01 18:00:00', end_date: '2026-07-01 20:00:00' }
  // The event is a draft; its inline venues are not: one asks pending, one asks nothing (an editor publishes).
  const created = await inject({
    method: 'POST', url: `${API}/events`, headers: editor,
    payload: { ...event, status: 'draft', venue: [{ venue: 'Asked pending', status: 'pending' }, { venue: 'Asked nothing' }] },
  })
  t.equal(created.statusCode, 201)
  const body = created.json<{ id: number; status: string; venue: Array<{ venue: string; status: string }> }>()
  t.equal(body.status, 'draft')
  t.same(body.venue.map((v) => [v.venue, v.status]), [['Asked pending', 'pending'], ['Asked nothing', 'publish']])
  // An update that leaves the event's status alone creates its inline organizer as the caller's default, not draft.
  const updated = await inject({ method: 'PATCH', url: `${API}/events/${body.id}`, headers: editor, payload: { organizer: [{ organizer: 'Added later' }] } })
  t.equal(updated.statusCode, 200)
  t.same(updated.json<{ organizer: Array<{ status: string }> }>().organizer.map((o) => o.status), ['publish'])
  // A contributor's inline records: draft by default, pending when asking publish.
  const submitted = await inject({
    method: 'POST', url: `${API}/events`, headers: contributor,
    payload: { ...event, status: 'pending', venue: [{ venue: 'Contributed' }, { venue: 'Wants publish', status: 'publish' }] },
  })
  t.equal(submitted.statusCode, 201)
  t.same(submitted.json<{ venue: Array<{ status: string }> }>().venue.map((v) => v.status), ['draft', 'pending'])
})

t.test('regression: an event update checks its fields (400) before the record (404/410), rights (403) and If-Match (412)', async (t) => {
  const { inject, auth } = await build(t)
  const editor = await auth('editor')
  const author = await auth('author')
  const create = async (title: string): Promise<number> => {
    const res = await inject({ method: 'POST', url: `${API}/events`, headers: editor, payload: { title, start_date: '2026-07-01 18:00:00', end_date: '2026-07-01 20:00:00' } })
    return res.json<{ id: number }>().id
  }
  const live = await create('Live')
  const trashed = await create('Trashed')
  t.equal((await inject({ method: 'DELETE', url: `${API}/events/${trashed}`, headers: editor })).statusCode, 200)
  const cases: Array<[string, string, Record<string, unknown>, Record<string, string>, string]> = [
    ['unknown event', `${API}/events/999`, { website: 'ftp://example.org/' }, editor, 'website'],
    ['unknown event by slug', `${API}/events/by-slug/nothing-here`, { timezone: 'Mars/Base' }, editor, 'timezone'],
    ['trashed event', `${API}/events/${trashed}`, { timezone: 'Mars/Base' }, editor, 'timezone'],
    ['someone else\'s event', `${API}/events/${live}`, { start_date: '2026-07-01 25:00:00' }, author, 'start_date'],
    ['stale If-Match', `${API}/events/${live}`, { image: 999999 }, { ...editor, 'if-match': '"event-1-999"' }, 'image'],
    ['unknown author', `${API}/events/999`, { author: 999 }, editor, 'author'],
    ['bad inline venue', `${API}/events/999`, { venue: [{ venue: 'X', website: 'ftp://example.org/' }] }, editor, 'website'],
  ]
  for (const [name, url, payload, headers, field] of cases) {
    const res = await inject({ method: 'PATCH', url, headers, payload })
    t.equal(res.statusCode, 400, `${name}: 400`)
    const error = res.json<{ code: string; data: { params?: Record<string, string> } }>()
    t.equal(error.code, 'rest_invalid_param', name)
    t.ok(JSON.stringify(error.data.params ?? {}).includes(field), `${name}: names ${field}`)
  }
  t.equal((await inject({ url: `${API}/events/${live}`, headers: editor })).json<{ title: string }>().title, 'Live', 'nothing was written')
})

t.test('regression: a form body keeps `cost` as written ("12.50" stays "12.50")', async (t) => {
  const { inject, auth } = await build(t)
  const editor = await auth('editor')
  const form = { ...editor, 'content-type': 'application/x-www-form-urlencoded' }
  const created = await inject({ method: 'POST', url: `${API}/events`, headers: form, payload: 'title=Priced&start_date=2026-07-01+18%3A00&end_date=2026-07-01+20%3A00&cost=12.50' })
  t.equal(created.statusCode, 201)
  const event = created.json<{ id: number; cost: string; cost_details: { values: number[] } }>()
  t.equal(event.cost, '12.50')
  t.same(event.cost_details.values, [12.5])
  const updated = await inject({ method: 'PATCH', url: `${API}/events/${event.id}`, headers: form, payload: 'cost=0.50' })
  t.equal(updated.json<{ cost: string }>().cost, '0.50')
  const json = await inject({ method: 'PATCH', url: `${API}/events/${event.id}`, headers: editor, payload: { cost: '7.00' } })
  t.equal(json.json<{ cost: string }>().cost, '7.00', 'the same in JSON')
})

t.test('regression: naming another author is a right (403), checked after the fields (400) and before If-Match (412)', async (t) => {
  const { inject, auth } = await build(t)
  const editor = await auth('editor')
  const author = await auth('author')
  const event = { title: 'Mine', start_date: '2026-07-01 18:00:00', end_date: '2026-07-01 20:00:00' }
  const status = async (method: 'POST' | 'PATCH', url: string, headers: Record<string, string>, payload: Record<string, unknown>) =>
    (await inject({ method, url, headers, payload })).statusCode
  // Creates: every field error is a 400, even when the caller may not name another author.
  t.equal(await status('POST', `${API}/events`, author, { ...event, author: 99 }), 400, 'event: an unknown author is a 400')
  t.equal(await status('POST', `${API}/events`, author, { ...event, author: 1, categories: ['no-such-term'] }), 400, 'event: an unknown category is a 400')
  t.equal(await status('POST', `${API}/venues`, author, { venue: 'Hall', author: 1, translation_of: 999 }), 400, 'venue: an unknown translation_of is a 400')
  t.equal(await status('POST', `${API}/venues`, author, { venue: 'Hall', author: 99 }), 400, 'venue: an unknown author is a 400')
  t.equal(await status('POST', `${API}/events`, editor, { ...event, author: 99 }), 400, 'an editor naming an unknown author: 400')
  t.equal(await status('POST', `${API}/events`, author, { ...event, author: 1 }), 403, 'a valid body naming another author: 403')
  t.equal((await inject({ url: `${API}/events?per_page=50`, headers: editor })).json<{ total: number }>().total, 0, 'nothing was created')
  // Updates: the right comes with the other rights on the record, before a stale If-Match.
  const own = await inject({ method: 'POST', url: `${API}/events`, headers: author, payload: event })
  const venue = await inject({ method: 'POST', url: `${API}/venues`, headers: author, payload: { venue: 'Own hall' } })
  const stale = { 'if-match': '"stale-1-999"' }
  t.equal(await status('PATCH', `${API}/events/${own.json<{ id: number }>().id}`, { ...author, ...stale }, { author: 1 }), 403, 'event update: 403 before 412')
  t.equal(await status('PATCH', `${API}/venues/${venue.json<{ id: number }>().id}`, { ...author, ...stale }, { author: 1 }), 403, 'venue update: 403 before 412')
  t.equal(await status('PATCH', `${API}/venues/${venue.json<{ id: number }>().id}`, { ...author, ...stale }, { city: 'Wien' }), 412, 'without it, the stale If-Match is a 412')
})
