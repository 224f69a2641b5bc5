/**
 * Builders for the /events tests: the records the server must return (event, venue, organizer, category,
 * tag), a setup with an editor and small request helpers, and a recorder of the SQL statements the app
 * runs (for the "fast by design" checks).
 */
import type { Test } from 'tap'
import type SQLite from 'better-sqlite3'
import type { Schema } from '../../src/contract.js'
import { API, API_URL, build, type BuildOptions, type Injected } from './build.js'

export type Event = Schema<'Event'>
export type Venue = Schema<'Venue'>
export type Organizer = Schema<'Organizer'>
export type Category = Schema<'Category'>
export type Tag = Schema<'Tag'>
export type Headers = Record<string, string>
export type Body = Record<string, unknown>

export const EVENTS = `${API}/events`
export const EVENTS_URL = `${API_URL}/events`
/** The pinned clock as the records show it (site time zone UTC). */
export const NOW_TEXT = '2026-06-15 12:00:00'

export interface Details {
  year: number
  month: number
  day: number
  hour: number
  minutes: number
  seconds: number
}

/** `*_details` of a `YYYY-MM-DD HH:MM:SS` string. */
export function details(s: string): Details {
  const m = /^(\d{4})-(\d{2})-(\d{2}) (\d{2}):(\d{2}):(\d{2})$/.exec(s)
  if (m === null) throw new Error(`not a record date: ${s}`)
  return { year: Number(m[1]), month: Number(m[2]), day: Number(m[3]), hour: Number(m[4]), minutes: Number(m[5]), seconds: Number(m[6]) }
}

export const NO_COST: Event['cost_details'] = { currency_symbol: null, currency_code: null, currency_position: null, values: [] }

/**
 * The record the server must return for an event; every field overridable. Defaults: published, by user 1,
 * English, created at the pinned clock, `Event <id>` on 2026-07-01 18:00–21:00 UTC. The `*_details` follow
 * the dates; `utc_*` default to the wall dates when the zone is UTC and must be given otherwise.
 */
export function eventRecord(id: number, fields: Partial<Event> = {}): Event {
  const timezone = fields.timezone ?? 'UTC'
  const start = fields.start_date ?? '2026-07-01 18:00:00'
  const end = fields.end_date ?? '2026-07-01 21:00:00'
  if (timezone !== 'UTC' && (fields.utc_start_date === undefined || fields.utc_end_date === undefined)) {
    throw new Error('eventRecord: give utc_start_date and utc_end_date for a zone other than UTC')
  }
  const utcStart = fields.utc_start_date ?? start
  const utcEnd = fields.utc_end_date ?? end
  const language = fields.ml_language ?? 'en'
  const record: Event = {
    id,
    global_id: `calendar.test?id=${id}`,
    author: 1,
    status: 'publish',
    date: NOW_TEXT,
    date_utc: NOW_TEXT,
    modified: NOW_TEXT,
    modified_utc: NOW_TEXT,
    rest_url: `${EVENTS_URL}/${id}`,
    title: `Event ${id}`,
    description: null,
    excerpt: null,
    slug: `event-${id}`,
    image: null,
    all_day: false,
    start_date: start,
    start_date_details: details(start),
    end_date: end,
    end_date_details: details(end),
    utc_start_date: utcStart,
    utc_start_date_details: details(utcStart),
    utc_end_date: utcEnd,
    utc_end_date_details: details(utcEnd),
    timezone,
    timezone_abbr: 'UTC',
    cost: null,
    cost_details: NO_COST,
    website: null,
    show_map: false,
    show_map_link: false,
    hide_from_listings: false,
    sticky: false,
    featured: false,
    categories: [],
    tags: [],
    venue: [],
    organizer: [],
    ml_language: language,
    translations: { [language]: id },
    recurrence: null,
    occurrence: null,
  }
  return { ...record, ...fields, start_date: start, end_date: end, utc_start_date: utcStart, utc_end_date: utcEnd }
}

/** The record of a venue as created by user 1 at the pinned clock, name only unless overridden. */
export function venueRecord(id: number, name: string, fields: Partial<Venue> = {}): Venue {
  const language = fields.ml_language ?? 'en'
  return {
    id, author: 1, status: 'publish', date: NOW_TEXT, date_utc: NOW_TEXT, modified: NOW_TEXT, modified_utc: NOW_TEXT,
    rest_url: `${API_URL}/venues/${id}`, venue: name, description: null, slug: name.toLowerCase().replace(/[^a-z0-9]+/g, '-'),
    image: null, address: null, city: null, country: null, province: null, state: null, zip: null, phone: null,
    website: null, stateprovince: null, show_map: true, show_map_link: true, geo_lat: null, geo_lng: null,
    ml_language: language, translations: { [language]: id }, ...fields,
  }
}

/** The record of an organizer as created by user 1 at the pinned clock, name only unless overridden. */
export function organizerRecord(id: number, name: string, fields: Partial<Organizer> = {}): Organizer {
  const language = fields.ml_language ?? 'en'
  return {
    id, author: 1, status: 'publish', date: NOW_TEXT, date_utc: NOW_TEXT, modified: NOW_TEXT, modified_utc: NOW_TEXT,
    rest_url: `${API_URL}/organizers/${id}`, organizer: name, description: null, slug: name.toLowerCase().replace(/[^a-z0-9]+/g, '-'),
    image: null, phone: null, website: null, email: null, ml_language: language, translations: { [language]: id }, ...fields,
  }
}

export function categoryRecord(id: number, name: string, count: number, fields: Partial<Category> = {}): Category {
  const url = `${API_URL}/categories`
  const language = fields.ml_language ?? 'en'
  return {
    id, name, slug: name.toLowerCase(), description: null, parent: 0, count, rest_url: `${url}/${id}`,
    urls: { self: `${url}/${id}`, collection: url }, ml_language: language, translations: { [language]: id }, ...fields,
  }
}

export function tagRecord(id: number, name: string, count: number, fields: Partial<Tag> = {}): Tag {
  const url = `${API_URL}/tags`
  const language = fields.ml_language ?? 'en'
  return {
    id, name, slug: name.toLowerCase(), description: null, count, rest_url: `${url}/${id}`,
    urls: { self: `${url}/${id}`, collection: url }, ml_language: language, translations: { [language]: id }, ...fields,
  }
}

export const eventsOf = (res: Injected): Event[] => res.json<{ events: Event[] }>().events
export const idsOf = (res: Injected): number[] => eventsOf(res).map((e) => e.id)
export const restUrlOf = (res: Injected): string => res.json<{ rest_url: string }>().rest_url

/** The default event body: a title and 2026-07-01 18:00–21:00 in the event's (site's) zone. */
export function eventBody(fields: Body = {}): Body {
  return { title: 'Event', start_date: '2026-07-01 18:00:00', end_date: '2026-07-01 21:00:00', ...fields }
}

/**
 * A fresh app with an editor (user 1) and helpers that talk to /events. `create` asserts the 201 and
 * returns the record; the others return the raw response.
 */
export async function setup(t: Test, options: BuildOptions = {}) {
  const built = await build(t, options)
  const editor = await built.auth('editor')
  const { inject } = built

  async function create(body: Body, headers: Headers = editor, query = ''): Promise<Event> {
    const res = await inject({ method: 'POST', url: `${EVENTS}${query}`, headers, payload: body })
    t.equal(res.statusCode, 201, `created ${String(body.title)}`)
    if (res.statusCode !== 201) t.comment(res.body)
    return res.json<Event>()
  }
  /** Creates an event titled `title` on 2026-07-01 18:00–21:00 unless `fields` say otherwise. */
  async function event(title: string, fields: Body = {}, headers: Headers = editor): Promise<Event> {
    return create(eventBody({ title, ...fields }), headers)
  }
  function list(query = '', headers: Headers = {}): Promise<Injected> {
    return inject({ url: `${EVENTS}${query}`, headers })
  }
  function get(id: number | string, query = '', headers: Headers = {}): Promise<Injected> {
    return inject({ url: `${EVENTS}/${id}${query}`, headers })
  }
  function patch(id: number | string, body: Body, headers: Headers = editor, query = ''): Promise<Injected> {
    return inject({ method: 'PATCH', url: `${EVENTS}/${id}${query}`, headers, payload: body })
  }
  function remove(id: number | string, query = '', headers: Headers = editor): Promise<Injected> {
    return inject({ method: 'DELETE', url: `${EVENTS}/${id}${query}`, headers })
  }
  async function category(name: string, query = ''): Promise<Category> {
    const res = await inject({ method: 'POST', url: `${API}/categories${query}`, headers: editor, payload: { name } })
    t.equal(res.statusCode, 201, `category ${name}`)
    return res.json<Category>()
  }
  async function tag(name: string, query = ''): Promise<Tag> {
    const res = await inject({ method: 'POST', url: `${API}/tags${query}`, headers: editor, payload: { name } })
    t.equal(res.statusCode, 201, `tag ${name}`)
    return res.json<Tag>()
  }
  async function venue(body: Body): Promise<Venue> {
    const res = await inject({ method: 'POST', url: `${API}/venues`, headers: editor, payload: body })
    t.equal(res.statusCode, 201, `venue ${String(body.venue)}`)
    return res.json<Venue>()
  }
  async function organizer(body: Body): Promise<Organizer> {
    const res = await inject({ method: 'POST', url: `${API}/organizers`, headers: editor, payload: body })
    t.equal(res.statusCode, 201, `organizer ${String(body.organizer)}`)
    return res.json<Organizer>()
  }
  return { ...built, editor, create, event, list, get, patch, remove, category, tag, venue, organizer }
}

export type Setup = Awaited<ReturnType<typeof setup>>

export interface Statement {
  sql: string
  params: unknown[]
}

/**
 * Records every statement the app executes while `during` runs, with its parameters. It wraps
 * `prepare` on the raw handle, so install it right after `build()`: the app caches prepared statements,
 * and one prepared before would run unseen. `explain` gives SQLite's query plan of a recorded statement.
 */
export function recordStatements(sqlite: SQLite.Database) {
  let current: Statement[] | undefined
  const prepare = sqlite.prepare.bind(sqlite)
  const wrapped = (source: string): SQLite.Statement => {
    const statement = prepare(source)
    const methods = statement as unknown as Record<'all' | 'get' | 'run' | 'iterate', (...args: unknown[]) => unknown>
    for (const name of ['all', 'get', 'run', 'iterate'] as const) {
      const original = methods[name].bind(statement)
      methods[name] = (...args: unknown[]) => {
        current?.push({ sql: source, params: args.flat() })
        return original(...args)
      }
    }
    return statement
  }
  sqlite.prepare = wrapped as typeof sqlite.prepare
  return {
    async during(run: () => Promise<unknown>): Promise<Statement[]> {
      const seen: Statement[] = []
      current = seen
      try {
        await run()
      } finally {
        current = undefined
      }
      return seen
    },
    /** The `detail` column of EXPLAIN QUERY PLAN for a recorded statement. */
    explain(statement: Statement): string[] {
      const rows = prepare(`EXPLAIN QUERY PLAN ${statement.sql}`).all(...statement.params) as Array<{ detail: string }>
      return rows.map((r) => r.detail)
    },
  }
}
