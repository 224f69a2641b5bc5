/**
 * `npm run demo`: loads the demo calendar (scripts/demo-data.ts) into the database at `DATABASE_URL`
 * (the same variables as the server), so that a newcomer sees a calendar, not an empty list. Every
 * record goes through the API's own write routes (in process, as an editor), exactly as a client would
 * create it; nothing is written with SQL. Refuses a database that already has events, venues,
 * organizers or terms, unless `--reset` is given: then it empties the database first (every record, key,
 * webhook and change, ids starting again at 1; a SQLite file is deleted and made anew), after a warning
 * line on stderr. Prints what it loaded.
 */
import { rmSync } from 'node:fs'
import { pathToFileURL } from 'node:url'
import type { FastifyInstance } from 'fastify'
import { sql } from 'kysely'
import { buildApp } from '../src/app.js'
import { ConfigError, loadConfig, type Config } from '../src/config.js'
import { isPostgresUrl, openDatabase, shownUrl } from '../src/db/database.js'
import { generateKey } from '../src/lib/api-keys.js'
import { addDays, addYears, formatUtc, parseFilterDate } from '../src/lib/dates.js'
import { DuplicateNameError, createUserWithKey } from '../src/repositories/users.js'
import { withTransaction } from '../src/db/unit-of-work.js'
import { CATEGORIES, EVENTS, ORGANIZERS, TAGS, VENUES, type DemoLanguage, type DemoRecurrence, type DemoTerm } from './demo-data.js'

const API = '/calendar/events/v1'
const EVENT_ZONE = 'Europe/Zurich'

class DemoError extends Error {}

interface Loader {
  /** Creates a record through the API and returns its id. */
  create(resource: string, body: Record<string, unknown>): Promise<number>
  update(resource: string, id: number, body: Record<string, unknown>): Promise<void>
}

function loader(app: FastifyInstance, authorization: string): Loader {
  const send = async (method: 'POST' | 'PATCH', url: string, body: Record<string, unknown>, expected: number) => {
    const res = await app.inject({ method, url, headers: { authorization, 'content-type': 'application/json' }, payload: JSON.stringify(body) })
    if (res.statusCode !== expected) throw new DemoError(`${method} ${url} answered ${res.statusCode}: ${res.body}`)
    return res.json<{ id: number }>()
  }
  return {
    async create(resource, body) {
      return (await send('POST', `${API}/${resource}`, body, 201)).id
    },
    async update(resource, id, body) {
      await send('PATCH', `${API}/${resource}/${id}`, body, 200)
    },
  }
}

/** The ids of created records by name, per resource. */
class Names {
  private readonly ids = new Map<string, number>()
  set(kind: string, name: string, id: number): void {
    this.ids.set(`${kind}\u0000${name}`, id)
  }
  get(kind: string, name: string): number {
    const id = this.ids.get(`${kind}\u0000${name}`)
    if (id === undefined) throw new DemoError(`demo data: no ${kind} named "${name}"`)
    return id
  }
  optional(kind: string, name: string | undefined): { translation_of?: number } {
    return name === undefined ? {} : { translation_of: this.get(kind, name) }
  }
}

export async function loadDemo(app: FastifyInstance, authorization: string, config: Config, now: Date): Promise<Record<DemoLanguage | 'total', number>> {
  const api = loader(app, authorization)
  const names = new Names()
  const today = parseFilterDate('today', config.timezone, now)?.localDay
  if (today === undefined) throw new DemoError('cannot tell today in the site time zone')

  // Categories and tags share one sequence of ids: the first tag comes second, so both have a low id.
  const [firstCategory, ...categories] = CATEGORIES
  const [firstTag, ...tags] = TAGS
  const terms: Array<readonly ['categories' | 'tags', DemoTerm | undefined]> = [
    ['categories', firstCategory], ['tags', firstTag],
    ...categories.map((term) => ['categories', term] as const), ...tags.map((term) => ['tags', term] as const),
  ]
  for (const [kind, term] of terms) {
    if (term !== undefined) {
      const id = await api.create(kind, {
        name: term.name,
        ...(term.description !== undefined ? { description: term.description } : {}),
        ...(term.parent !== undefined ? { parent: names.get(kind, term.parent) } : {}),
        ml_language: term.language,
        ...names.optional(kind, term.translationOf),
      })
      names.set(kind, term.name, id)
    }
  }
  for (const { translationOf, language, ...venue } of VENUES) {
    names.set('venues', venue.venue, await api.create('venues', { ...venue, ml_language: language, ...names.optional('venues', translationOf) }))
  }
  for (const { translationOf, language, ...organizer } of ORGANIZERS) {
    names.set('organizers', organizer.organizer, await api.create('organizers', { ...organizer, ml_language: language, ...names.optional('organizers', translationOf) }))
  }
  const counts: Record<DemoLanguage | 'total', number> = { en: 0, de: 0, 'ch-fr': 0, total: 0 }
  for (const event of EVENTS) {
    let first = event.recurrence?.lastFriday === true ? lastFriday(addDays(today, event.day), today) : addDays(today, event.day)
    // A yearly series from 29 February would repeat in leap years only: its cancelled year would cancel nothing.
    if (event.recurrence?.cancelledYear !== undefined && first.endsWith('-02-29')) first = addDays(first, 1)
    const last = addDays(first, event.days ?? 0)
    const id = await api.create('events', {
      title: event.title,
      description: event.description,
      ...(event.excerpt !== undefined ? { excerpt: event.excerpt } : {}),
      timezone: EVENT_ZONE,
      start_date: `${first} ${event.start}`,
      end_date: `${last} ${event.end}`,
      ...(event.allDay === true ? { all_day: true } : {}),
      ...(event.cost !== undefined ? { cost: event.cost } : {}),
      ...(event.website !== undefined ? { website: event.website } : {}),
      ...(event.featured === true ? { featured: true } : {}),
      categories: event.categories.map((name) => names.get('categories', name)),
      tags: event.tags.map((name) => names.get('tags', name)),
      venue: event.venues.map((name) => names.get('venues', name)),
      organizer: event.organizers.map((name) => names.get('organizers', name)),
      ml_language: event.language,
      ...names.optional('events', event.translationOf),
      ...(event.recurrence !== undefined ? { recurrence: recurrenceOf(event.recurrence, first, event.allDay === true ? undefined : event.start) } : {}),
    })
    names.set('events', event.title, id)
    if (event.password !== undefined) await api.update('events', id, { password: event.password })
    counts[event.language]++
    counts.total++
  }
  return counts
}

/** The last Friday of the month of `day`, or of the next month when that one is before `today`. */
function lastFriday(day: string, today: string): string {
  const [year, month] = day.split('-').map(Number) as [number, number]
  for (const m of [month, month + 1]) {
    // Day 0 of the next month is the last day of this one; back to its Friday (weekday 5).
    const end = new Date(Date.UTC(year, m, 0))
    end.setUTCDate(end.getUTCDate() - ((end.getUTCDay() + 2) % 7))
    const friday = end.toISOString().slice(0, 10)
    if (friday >= today) return friday
  }
  throw new DemoError(`no last Friday after ${today}`)
}

/** A demo series as the API takes it: the rule, and the cancelled year's occurrence as an exdate. */
function recurrenceOf(recurrence: DemoRecurrence, first: string, start: string | undefined): { rule: string; rdates: string[]; exdates: string[] } {
  const exdates = recurrence.cancelledYear === undefined ? [] : [addYears(first, recurrence.cancelledYear)]
  return { rule: recurrence.rule, rdates: [], exdates: exdates.map((d) => (start === undefined ? d : `${d} ${start}:00`)) }
}

const USAGE = 'usage: npm run demo [-- --reset]   (--reset empties the database at DATABASE_URL first)'

/** The tables a migration seeds with one row of bookkeeping: emptied by hand, not truncated. */
const SEEDED = ['change_log', 'data_epoch', 'key_epoch']

/**
 * Empties the database at `url`: a SQLite file (with its write-ahead log) is deleted, to be made anew by
 * the next open; a PostgreSQL schema keeps its tables, emptied, with ids starting again at 1, and its
 * data epoch moved so that any server still running on it drops what it keeps (the key epoch moves with the keys' truncation).
 */
async function emptyDatabase(url: string): Promise<void> {
  if (url === ':memory:') return
  if (!isPostgresUrl(url)) {
    for (const file of [url, `${url}-wal`, `${url}-shm`, `${url}-journal`]) rmSync(file, { force: true })
    return
  }
  const database = await openDatabase(url)
  try {
    await database.db.transaction().execute(async (trx) => {
      const { rows } = await sql<{ name: string }>`select tablename as name from pg_tables where schemaname = current_schema()
        and tablename not like 'kysely_migration%'`.execute(trx)
      const tables = rows.map((r) => r.name).filter((name) => !SEEDED.includes(name))
      if (tables.length > 0) await sql`truncate ${sql.join(tables.map((name) => sql.table(name)))} restart identity cascade`.execute(trx)
      await sql`update change_log set pruned_through = 0`.execute(trx)
      await sql`update data_epoch set n = n + 1`.execute(trx)
    })
  } finally {
    await database.close()
  }
}

async function main(args: string[]): Promise<void> {
  if (args.some((arg) => arg !== '--reset')) throw new DemoError(USAGE)
  const config = loadConfig()
  if (args.includes('--reset')) {
    process.stderr.write(`WARNING: --reset deletes everything in ${shownUrl(config.databaseUrl)} (events, venues, organizers, terms, ` +
      'API keys, webhooks, the change log) before loading the demo. Stop the servers on it first.\n')
    await emptyDatabase(config.databaseUrl)
  }
  const database = await openDatabase(config.databaseUrl)
  try {
    for (const table of ['events', 'venues', 'organizers', 'terms'] as const) {
      const row = await database.db.selectFrom(table).select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow()
      if (Number(row.n) > 0) throw new DemoError(`${config.databaseUrl} already has ${table}: the demo loads into an empty database only ` +
        '(`npm run demo -- --reset` empties it first)')
    }
    const now = new Date()
    const key = generateKey()
    let name = 'demo'
    for (let n = 2; ; n++) {
      try {
        await withTransaction(database.db, (trx) => createUserWithKey(trx, 'editor', key, formatUtc(now), name))
        break
      } catch (error) {
        if (!(error instanceof DuplicateNameError)) throw error
        name = `demo-${n}`
      }
    }
    const app = await buildApp({ db: database.db, config: { ...config, logLevel: 'silent' } })
    try {
      const counts = await loadDemo(app, `Bearer ${key}`, config, now)
      process.stdout.write(`Loaded the demo calendar into ${config.databaseUrl}: ${counts.total} events (${counts.en} English, ` +
        `${counts.de} German, ${counts['ch-fr']} Swiss French), ${VENUES.length} venues, ${ORGANIZERS.length} organizers, ` +
        `${CATEGORIES.length} categories and ${TAGS.length} tags, authored by the editor "${name}".\n`)
    } finally {
      await app.close()
    }
  } finally {
    await database.close()
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) main(process.argv.slice(2)).catch((error: unknown) => {
  const known = error instanceof DemoError || error instanceof ConfigError
  process.stderr.write(`${known ? error.message : error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`)
  process.exit(known ? 2 : 1)
})
