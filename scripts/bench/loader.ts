/**
 * Bulk loader for the benchmark: a file database of N events with venues, organizers, categories,
 * tags, images and authors in two languages (en 90 %, de 10 %).
 *
 * The schema comes from the app itself (`openDatabase` runs the migrations once); the rows then go in
 * through raw better-sqlite3 prepared statements in big transactions, with the secondary indexes
 * dropped during the load and recreated from their stored SQL afterwards (same names, same columns).
 *
 * Deterministic: a fixed-seed PRNG decides everything. The only input from the clock is the start of
 * the default list window (today 00:00 UTC): about 40 % of the events start inside
 * [today, today + 2 years], the rest in a fixed past range (2016–2024), so the default `GET /events`
 * sees the same share of the data whatever the day of the run.
 *
 * CLI: node --import tsx scripts/bench/loader.ts --events 100000 --out /tmp/bench.db
 */
import { existsSync, mkdirSync, rmSync, statSync } from 'node:fs'
import { dirname, resolve } from 'node:path'
import { pathToFileURL } from 'node:url'
import SQLite from 'better-sqlite3'
import { openDatabase } from '../../src/db/database.js'
import { eventSearchTexts, searchPairs } from '../../src/db/dialect.js'
import { slugify } from '../../src/lib/slug.js'

export interface LoadOptions {
  file: string
  events: number
  seed?: number
  /** The clock for the default-window share only; defaults to the real now. */
  now?: Date
  log?: (message: string) => void
}

export interface LoadResult {
  file: string
  events: number
  eventsByLanguage: Record<string, number>
  venues: number
  organizers: number
  categories: number
  tags: number
  images: number
  authors: number
  eventTerms: number
  eventVenues: number
  eventOrganizers: number
  /** The default list window the 40 % share was placed in (UTC, `YYYY-MM-DD HH:MM:SS`). */
  windowStart: string
  windowEnd: string
  eventsInWindow: number
  seconds: number
  bytes: number
}

/** Words that titles are made of; the benchmark's search scenario looks for some of them. */
export const SEARCH_WORDS = ['jazz', 'market', 'yoga', 'lecture', 'festival'] as const

const CATEGORIES_PER_LANGUAGE = 50
const TAGS_PER_LANGUAGE = 200
const IMAGES = 100
const AUTHORS = 10
const DE_SHARE = 0.1
const WINDOW_SHARE = 0.4
const BATCH = 20_000

const DAY_MS = 86_400_000
/** The fixed range the events outside the default window start in. */
const PAST_START_MS = Date.UTC(2016, 0, 1)
const PAST_END_MS = Date.UTC(2025, 0, 1)

/** mulberry32: small, fast, good enough for test data, and the same on every machine. */
export function prng(seed: number): () => number {
  let a = seed >>> 0
  return () => {
    a = (a + 0x6d2b79f5) >>> 0
    let t = a
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}

/** `YYYY-MM-DD HH:MM:SS` of an epoch millisecond count (UTC). */
export function sqlDate(ms: number): string {
  const iso = new Date(ms).toISOString()
  return `${iso.slice(0, 10)} ${iso.slice(11, 19)}`
}

/** Today 00:00 UTC of `now`. */
export function dayStartMs(now: Date): number {
  return Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate())
}

/** The app's default window end: the same day two years ahead, 23:59:59 (site time zone UTC). */
export function windowEndMs(now: Date): number {
  return Date.UTC(now.getUTCFullYear() + 2, now.getUTCMonth(), now.getUTCDate(), 23, 59, 59)
}

type Lang = 'en' | 'de'

const VOCAB: Record<Lang, { adjectives: string[]; subjects: string[]; kinds: string[]; words: string[] }> = {
  en: {
    adjectives: ['Late Night', 'Open Air', 'Summer', 'Winter', 'Family', 'Community', 'Classical', 'Modern', 'Acoustic', 'Grand',
      'Little', 'Midweek', 'Sunday', 'Spring', 'Autumn', 'Downtown', 'Riverside', 'Candlelight', 'Morning', 'Annual'],
    subjects: ['Jazz', 'Rock', 'Folk', 'Poetry', 'Film', 'Photography', 'Pottery', 'Yoga', 'Chess', 'Science', 'History', 'Wine',
      'Coffee', 'Book', 'Street Food', 'Design', 'Dance', 'Opera', 'Theatre', 'Comedy'],
    kinds: ['Concert', 'Festival', 'Workshop', 'Reading', 'Market', 'Screening', 'Lecture', 'Tour', 'Meetup', 'Exhibition', 'Night',
      'Session', 'Fair', 'Gala', 'Class'],
    words: ['join', 'us', 'for', 'an', 'evening', 'of', 'music', 'and', 'conversation', 'with', 'local', 'artists', 'guests', 'friends',
      'tickets', 'available', 'at', 'the', 'door', 'doors', 'open', 'one', 'hour', 'before', 'drinks', 'snacks', 'served', 'bring',
      'your', 'family', 'everyone', 'welcome', 'free', 'entry', 'children', 'under', 'twelve', 'limited', 'seats', 'please', 'register',
      'in', 'advance', 'accessible', 'venue', 'near', 'station', 'program', 'includes', 'talks', 'performances', 'a', 'short', 'break',
      'followed', 'by', 'questions', 'from', 'audience', 'season'],
  },
  de: {
    adjectives: ['Später', 'Offener', 'Sommer', 'Winter', 'Familien', 'Gemeinde', 'Klassischer', 'Moderner', 'Akustischer', 'Großer',
      'Kleiner', 'Mittwoch', 'Sonntags', 'Frühlings', 'Herbst', 'Innenstadt', 'Ufer', 'Kerzenschein', 'Morgen', 'Jährlicher'],
    subjects: ['Jazz', 'Rock', 'Volksmusik', 'Lyrik', 'Film', 'Fotografie', 'Töpfer', 'Yoga', 'Schach', 'Wissenschafts', 'Geschichts',
      'Wein', 'Kaffee', 'Bücher', 'Streetfood', 'Design', 'Tanz', 'Opern', 'Theater', 'Kabarett'],
    kinds: ['Konzert', 'Festival', 'Workshop', 'Lesung', 'Markt', 'Vorführung', 'Vortrag', 'Führung', 'Treffen', 'Ausstellung', 'Nacht',
      'Runde', 'Messe', 'Gala', 'Kurs'],
    words: ['kommen', 'sie', 'zu', 'einem', 'abend', 'mit', 'musik', 'und', 'gesprächen', 'lokalen', 'künstlern', 'gästen', 'freunden',
      'karten', 'an', 'der', 'abendkasse', 'einlass', 'eine', 'stunde', 'vorher', 'getränke', 'snacks', 'für', 'die', 'ganze', 'familie',
      'alle', 'willkommen', 'eintritt', 'frei', 'kinder', 'unter', 'zwölf', 'jahren', 'begrenzte', 'plätze', 'bitte', 'anmelden',
      'barrierefrei', 'nähe', 'bahnhof', 'programm', 'vorträge', 'auftritte', 'kurze', 'pause', 'danach', 'fragen', 'aus', 'dem',
      'publikum', 'saison', 'über', 'straße'],
  },
}

const CATEGORY_NAMES: Record<Lang, string[]> = {
  en: ['Concerts', 'Theatre', 'Exhibitions', 'Workshops', 'Lectures', 'Markets', 'Festivals', 'Film', 'Sports', 'Kids',
    'Family', 'Dance', 'Opera', 'Comedy', 'Literature', 'Food', 'Wine Tastings', 'Tours', 'Nature', 'Science',
    'Technology', 'Business', 'Networking', 'Charity', 'Religion', 'Politics', 'Health', 'Yoga', 'Fitness', 'Running',
    'Cycling', 'Hiking', 'Photography', 'Crafts', 'Fashion', 'Design', 'Architecture', 'History', 'Languages', 'Games',
    'Chess', 'Seniors', 'Students', 'Volunteering', 'Gardening', 'Animals', 'Nightlife', 'Classical Music', 'Jazz', 'Folk'],
  de: ['Konzerte', 'Theater', 'Ausstellungen', 'Workshops', 'Vorträge', 'Märkte', 'Feste', 'Kino', 'Sport', 'Kinder',
    'Familie', 'Tanz', 'Oper', 'Kabarett', 'Literatur', 'Essen', 'Weinproben', 'Führungen', 'Natur', 'Wissenschaft',
    'Technik', 'Wirtschaft', 'Netzwerken', 'Wohltätigkeit', 'Religion', 'Politik', 'Gesundheit', 'Yoga', 'Fitness', 'Laufen',
    'Radfahren', 'Wandern', 'Fotografie', 'Handwerk', 'Mode', 'Gestaltung', 'Architektur', 'Geschichte', 'Sprachen', 'Spiele',
    'Schach', 'Senioren', 'Studierende', 'Ehrenamt', 'Gärtnern', 'Tiere', 'Nachtleben', 'Klassik', 'Jazzmusik', 'Volksmusik'],
}

const TAG_PARTS: Record<Lang, { first: string[]; second: string[] }> = {
  en: {
    first: ['Outdoor', 'Indoor', 'Free', 'Paid', 'Weekly', 'Monthly', 'Beginner', 'Advanced', 'Evening', 'Weekend',
      'Accessible', 'Family', 'Local', 'Student', 'Vegan', 'Live', 'Online', 'Hybrid', 'Seasonal', 'Historic'],
    second: ['Music', 'Art', 'Talk', 'Food', 'Walk', 'Course', 'Show', 'Party', 'Meeting', 'Sale'],
  },
  de: {
    first: ['Draußen', 'Drinnen', 'Kostenlos', 'Bezahlt', 'Wöchentlich', 'Monatlich', 'Anfänger', 'Fortgeschritten', 'Abend',
      'Wochenende', 'Barrierefrei', 'Familie', 'Lokal', 'Studenten', 'Vegan', 'Live', 'Online', 'Hybrid', 'Saison', 'Historisch'],
    second: ['Musik', 'Kunst', 'Gespräch', 'Essen', 'Spaziergang', 'Kurs', 'Show', 'Party', 'Treffen', 'Verkauf'],
  },
}

const CITIES: ReadonlyArray<{ city: string; country: string; lat: number; lng: number; zip: string; province: string }> = [
  { city: 'Zürich', country: 'Switzerland', lat: 47.3769, lng: 8.5417, zip: '80', province: 'ZH' },
  { city: 'Berlin', country: 'Germany', lat: 52.52, lng: 13.405, zip: '10', province: 'BE' },
  { city: 'Wien', country: 'Austria', lat: 48.2082, lng: 16.3738, zip: '10', province: 'W' },
  { city: 'München', country: 'Germany', lat: 48.1351, lng: 11.582, zip: '80', province: 'BY' },
  { city: 'Hamburg', country: 'Germany', lat: 53.5511, lng: 9.9937, zip: '20', province: 'HH' },
  { city: 'London', country: 'United Kingdom', lat: 51.5074, lng: -0.1278, zip: 'EC', province: 'LND' },
  { city: 'New York', country: 'United States', lat: 40.7128, lng: -74.006, zip: '100', province: 'NY' },
  { city: 'Toronto', country: 'Canada', lat: 43.6532, lng: -79.3832, zip: 'M5', province: 'ON' },
  { city: 'Dublin', country: 'Ireland', lat: 53.3498, lng: -6.2603, zip: 'D0', province: 'D' },
  { city: 'Basel', country: 'Switzerland', lat: 47.5596, lng: 7.5886, zip: '40', province: 'BS' },
  { city: 'Köln', country: 'Germany', lat: 50.9375, lng: 6.9603, zip: '50', province: 'NW' },
  { city: 'Graz', country: 'Austria', lat: 47.0707, lng: 15.4395, zip: '80', province: 'ST' },
  { city: 'Chicago', country: 'United States', lat: 41.8781, lng: -87.6298, zip: '606', province: 'IL' },
  { city: 'Melbourne', country: 'Australia', lat: -37.8136, lng: 144.9631, zip: '30', province: 'VIC' },
  { city: 'Edinburgh', country: 'United Kingdom', lat: 55.9533, lng: -3.1883, zip: 'EH', province: 'SCT' },
  { city: 'Bern', country: 'Switzerland', lat: 46.948, lng: 7.4474, zip: '30', province: 'BE' },
]

const VENUE_WORDS = ['Hall', 'Theatre', 'Club', 'Gallery', 'Library', 'Park', 'Arena', 'Cellar', 'Loft', 'Studio', 'Church', 'Garden']
const VENUE_PREFIX = ['The', 'Old', 'New', 'Grand', 'Little', 'Upper', 'Lower', 'Central', 'East', 'West']
const STREETS = ['Main Street', 'Station Road', 'Bahnhofstrasse', 'Hauptstraße', 'Market Square', 'River Lane', 'Kirchgasse', 'High Street']
const ORG_FIRST = ['Miller', 'Harbor', 'Lindenhof', 'Northside', 'Blue Note', 'Kulturverein', 'Friends of Music', 'City Arts', 'Sternwarte',
  'Greenfield', 'Weber', 'Oak Tree', 'Riverside', 'Schmidt', 'Lakeside', 'Brightside']
const ORG_SECOND = ['Events', 'Collective', 'Society', 'Association', 'Productions', 'Foundation', 'Club', 'Initiative']

/** Removes the file and its WAL/SHM companions, if present. */
export function removeDatabaseFiles(file: string): void {
  for (const suffix of ['', '-wal', '-shm', '-journal']) {
    const path = `${file}${suffix}`
    if (existsSync(path)) rmSync(path)
  }
}

export async function buildDatabase(options: LoadOptions): Promise<LoadResult> {
  const started = performance.now()
  const log = options.log ?? (() => undefined)
  const n = options.events
  if (!Number.isSafeInteger(n) || n < 1) throw new Error(`events must be a positive integer, got ${n}`)
  const file = resolve(options.file)
  const rnd = prng(options.seed ?? 20_260_101)
  const int = (max: number): number => Math.floor(rnd() * max)
  const pick = <T>(list: readonly T[]): T => list[int(list.length)] as T
  const now = options.now ?? new Date()
  const windowStart = dayStartMs(now)
  const windowEnd = windowEndMs(now)
  if (windowStart <= PAST_END_MS) throw new Error('the clock is before 2025: the fixed past range would overlap the window')

  mkdirSync(dirname(file), { recursive: true })
  removeDatabaseFiles(file)
  // The app's migrations create the schema (and set WAL); nothing else goes through Kysely.
  const handle = await openDatabase(file)
  await handle.close()

  const db = new SQLite(file)
  try {
    db.pragma('journal_mode = OFF')
    db.pragma('synchronous = OFF')
    db.pragma('foreign_keys = OFF')
    db.pragma('cache_size = -262144')
    db.pragma('temp_store = MEMORY')

    // Secondary indexes are rebuilt after the load (faster than maintaining them row by row).
    const indexes = db.prepare(`select name, sql from sqlite_master where type = 'index' and sql is not null order by name`)
      .all() as Array<{ name: string; sql: string }>
    for (const index of indexes) db.exec(`drop index "${index.name}"`)

    const stamp = sqlDate(PAST_START_MS - 30 * DAY_MS)

    // Users: authors of the data (the benchmark's editor key is added later, through the app's code).
    const insertUser = db.prepare('insert into users (id, name, role, created_at) values (?, ?, ?, ?)')
    db.transaction(() => {
      for (let i = 1; i <= AUTHORS; i++) insertUser.run(i, `author-${i}`, 'author', stamp)
    })()

    const insertImage = db.prepare('insert into images (id, url, created_at) values (?, ?, ?)')
    db.transaction(() => {
      for (let i = 1; i <= IMAGES; i++) insertImage.run(i, `https://images.example.org/events/${i}.jpg`, stamp)
    })()

    // Terms: per language 50 categories and 200 tags; the de ones are translations of the en ones.
    const insertTerm = db.prepare(`insert into terms (id, taxonomy, language, translation_group, name, name_key, slug, description, parent, version)
      values (?, ?, ?, ?, ?, ?, ?, ?, ?, 1)`)
    const termIds: Record<Lang, { categories: number[]; tags: number[] }> = { en: { categories: [], tags: [] }, de: { categories: [], tags: [] } }
    let termId = 0
    db.transaction(() => {
      const firstOf: Record<'category' | 'tag', number[]> = { category: [], tag: [] }
      for (const language of ['en', 'de'] as const) {
        for (let i = 0; i < CATEGORIES_PER_LANGUAGE; i++) {
          const name = CATEGORY_NAMES[language][i] as string
          const id = ++termId
          const group = language === 'en' ? id : (firstOf.category[i] as number)
          if (language === 'en') firstOf.category.push(id)
          // A few sub-categories, to have parents in the data.
          const parent = i >= 45 ? (termIds[language].categories[0] as number) : 0
          insertTerm.run(id, 'category', language, group, name, name.toLowerCase(), slugify(name), i % 3 === 0 ? `${name}: events and more` : null, parent)
          termIds[language].categories.push(id)
        }
        const parts = TAG_PARTS[language]
        for (let i = 0; i < TAGS_PER_LANGUAGE; i++) {
          const name = `${parts.first[i % parts.first.length]} ${parts.second[Math.floor(i / parts.first.length) % parts.second.length]}`
          const id = ++termId
          const group = language === 'en' ? id : (firstOf.tag[i] as number)
          if (language === 'en') firstOf.tag.push(id)
          insertTerm.run(id, 'tag', language, group, name, name.toLowerCase(), slugify(name), null, 0)
          termIds[language].tags.push(id)
        }
      }
    })()

    // Venues (N/100) and organizers (N/200), 90/10 en/de like the events they are linked to.
    const split = (total: number): Record<Lang, number> => {
      const de = Math.max(1, Math.round(total * DE_SHARE))
      return { en: Math.max(1, total - de), de }
    }
    const venueCount = split(Math.max(2, Math.round(n / 100)))
    const organizerCount = split(Math.max(2, Math.round(n / 200)))
    const venueIds: Record<Lang, number[]> = { en: [], de: [] }
    const organizerIds: Record<Lang, number[]> = { en: [], de: [] }
    const venueNames = new Map<number, string>()

    const insertVenue = db.prepare(`insert into venues (id, language, translation_group, author, status, name, description, slug, image_id,
      date, date_utc, modified, modified_utc, address, city, country, province, state, zip, phone, website, stateprovince,
      show_map, show_map_link, geo_lat, geo_lng, version)
      values (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 1)`)
    let venueId = 0
    db.transaction(() => {
      for (const language of ['en', 'de'] as const) {
        for (let i = 0; i < venueCount[language]; i++) {
          const id = ++venueId
          const c = pick(CITIES)
          const name = `${pick(VENUE_PREFIX)} ${pick(VENUE_WORDS)} ${c.city} ${id}`
          const created = PAST_START_MS - int(365) * DAY_MS
          const modified = created + int(400) * DAY_MS
          const status = rnd() < 0.02 ? 'draft' : 'publish'
          insertVenue.run(id, language, id, 1 + int(AUTHORS), status, name,
            rnd() < 0.7 ? `${name} in ${c.city}: ${pick(VOCAB[language].words)} ${pick(VOCAB[language].words)} ${pick(VOCAB[language].words)}.` : null,
            `${slugify(name)}`, rnd() < 0.3 ? 1 + int(IMAGES) : null,
            sqlDate(created), sqlDate(created), sqlDate(modified), sqlDate(modified),
            `${1 + int(200)} ${pick(STREETS)}`, c.city, c.country, c.province, c.province, `${c.zip}${100 + int(900)}`,
            `+41 44 ${100 + int(900)} ${10 + int(90)} ${10 + int(90)}`, rnd() < 0.6 ? `https://venue-${id}.example.org` : null, c.province,
            1, 1, c.lat + (rnd() - 0.5) * 0.1, c.lng + (rnd() - 0.5) * 0.1)
          venueIds[language].push(id)
          venueNames.set(id, name)
        }
      }
    })()

    const insertOrganizer = db.prepare(`insert into organizers (id, language, translation_group, author, status, name, description, slug, image_id,
      date, date_utc, modified, modified_utc, phone, website, email, version)
      values (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 1)`)
    let organizerId = 0
    db.transaction(() => {
      for (const language of ['en', 'de'] as const) {
        for (let i = 0; i < organizerCount[language]; i++) {
          const id = ++organizerId
          const name = `${pick(ORG_FIRST)} ${pick(ORG_SECOND)} ${id}`
          const slug = slugify(name)
          const created = PAST_START_MS - int(365) * DAY_MS
          const modified = created + int(400) * DAY_MS
          insertOrganizer.run(id, language, id, 1 + int(AUTHORS), rnd() < 0.02 ? 'draft' : 'publish', name,
            rnd() < 0.5 ? `${name} organises events.` : null, slug, rnd() < 0.2 ? 1 + int(IMAGES) : null,
            sqlDate(created), sqlDate(created), sqlDate(modified), sqlDate(modified),
            rnd() < 0.7 ? `+49 30 ${1000 + int(9000)} ${100 + int(900)}` : null,
            rnd() < 0.6 ? `https://${slug}.example.org` : null, rnd() < 0.8 ? `info@${slug}.example.org` : null)
          organizerIds[language].push(id)
        }
      }
    })()

    // Events and their links, in id order, BATCH per transaction (each event's occurrence row is written by the
    // events' insert trigger, migration 0017, as for every writer).
    const insertEvent = db.prepare(`insert into events (id, language, translation_group, author, status, password, title, description,
      excerpt, slug, image_id, date, date_utc, modified, modified_utc, all_day, start_date, end_date, start_utc, end_utc, timezone,
      cost, website, show_map, show_map_link, hide_from_listings, sticky, featured, post_parent, version)
      values (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, null, 1)`)
    // The search index (migration 0005): what the app's event writes keep, folded the same way.
    const insertSearch = db.prepare('insert into event_search (rowid, title, description) values (?, ?, ?)')
    // Its index of pairs (migration 0012), as the app writes it beside it.
    const insertPairs = db.prepare('insert into event_search_pairs (rowid, pairs) values (?, ?)')
    const insertEventTerm = db.prepare('insert into event_terms (event_id, term_id) values (?, ?)')
    const insertEventVenue = db.prepare('insert into event_venues (event_id, venue_id, position) values (?, ?, 0)')
    const insertEventOrganizer = db.prepare('insert into event_organizers (event_id, organizer_id, position) values (?, ?, ?)')
    const COSTS = ['Free', '€ 10', '€ 15–25', 'CHF 25', '$ 12.50', '10 EUR', '£ 8', 'kostenlos', 'Donation', '5,50 €']
    const eventsByLanguage: Record<string, number> = { en: 0, de: 0 }
    let eventTerms = 0
    let eventOrganizers = 0
    let eventsInWindow = 0

    const writeBatch = db.transaction((from: number, to: number) => {
      for (let id = from; id <= to; id++) {
        const language: Lang = rnd() < DE_SHARE ? 'de' : 'en'
        eventsByLanguage[language] = (eventsByLanguage[language] ?? 0) + 1
        const v = VOCAB[language]
        const title = `${pick(v.adjectives)} ${pick(v.subjects)} ${pick(v.kinds)}`
        const venue = pick(venueIds[language])
        const words: string[] = []
        const wordCount = 30 + int(50)
        for (let w = 0; w < wordCount; w++) words.push(pick(v.words))
        const description = `${title} — ${venueNames.get(venue) ?? ''}. ${words.join(' ')}.`
        const excerpt = rnd() < 0.7 ? `${description.slice(0, 120)}…` : null
        const allDay = rnd() < 0.05
        const inWindow = rnd() < WINDOW_SHARE
        let start = inWindow
          ? windowStart + Math.floor(rnd() * (windowEnd - windowStart - DAY_MS))
          : PAST_START_MS + Math.floor(rnd() * (PAST_END_MS - PAST_START_MS - DAY_MS))
        start -= start % (15 * 60_000)
        let end = start + (1 + int(16)) * 15 * 60_000
        if (allDay) {
          start -= start % DAY_MS
          end = start + DAY_MS - 1000
        }
        if (inWindow) eventsInWindow++
        const published = Math.min(start, windowStart) - (1 + int(120)) * DAY_MS
        const modified = published + int(30) * DAY_MS
        const s = rnd()
        const status = s < 0.95 ? 'publish' : s < 0.97 ? 'draft' : s < 0.98 ? 'pending' : s < 0.99 ? 'private' : 'trash'
        const password = status === 'publish' && rnd() < 0.005 ? 'secret' : null
        const startText = sqlDate(start)
        const endText = sqlDate(end)
        insertEvent.run(id, language, id, 1 + int(AUTHORS), status, password, title, description, excerpt,
          `${slugify(title)}-${id}`, rnd() < 0.3 ? 1 + int(IMAGES) : null,
          sqlDate(published), sqlDate(published), sqlDate(modified), sqlDate(modified),
          allDay ? 1 : 0, startText, endText, startText, endText, 'UTC',
          rnd() < 0.8 ? pick(COSTS) : null, rnd() < 0.5 ? `https://events.example.org/${id}` : null,
          rnd() < 0.5 ? 1 : 0, rnd() < 0.5 ? 1 : 0, rnd() < 0.01 ? 1 : 0, rnd() < 0.01 ? 1 : 0, rnd() < 0.05 ? 1 : 0)
        const searched = eventSearchTexts({ title, description, password })
        insertSearch.run(id, searched.title, searched.description)
        insertPairs.run(id, searchPairs(searched))
        // 1–3 terms: one category, then up to two distinct tags.
        const terms = termIds[language]
        insertEventTerm.run(id, pick(terms.categories))
        eventTerms++
        const tagCount = int(3)
        const firstTag = pick(terms.tags)
        if (tagCount >= 1) { insertEventTerm.run(id, firstTag); eventTerms++ }
        if (tagCount === 2) {
          const secondTag = pick(terms.tags)
          if (secondTag !== firstTag) { insertEventTerm.run(id, secondTag); eventTerms++ }
        }
        insertEventVenue.run(id, venue)
        const firstOrganizer = pick(organizerIds[language])
        insertEventOrganizer.run(id, firstOrganizer, 0)
        eventOrganizers++
        if (rnd() < 0.3) {
          const second = pick(organizerIds[language])
          if (second !== firstOrganizer) { insertEventOrganizer.run(id, second, 1); eventOrganizers++ }
        }
      }
    })
    for (let from = 1; from <= n; from += BATCH) {
      const to = Math.min(n, from + BATCH - 1)
      writeBatch(from, to)
      if (to % 200_000 === 0 || to === n) log(`loader: ${to}/${n} events`)
    }

    log(`loader: rebuilding ${indexes.length} indexes`)
    for (const index of indexes) db.exec(index.sql)
    // Term counts are kept by the app's event writes; a bulk load sets them once, the same way.
    db.exec(`update terms set event_count = (select count(*) from event_terms et join events e on e.id = et.event_id
      where et.term_id = terms.id and e.status = 'publish')`)
    // The search index merged whole (a batch is a segment): writes merge only a little each (migration 0013).
    db.exec(`insert into event_search (event_search) values ('optimize')`)
    db.exec(`insert into event_search_pairs (event_search_pairs) values ('optimize')`)
    const violations = db.prepare('pragma foreign_key_check').all()
    if (violations.length > 0) throw new Error(`loader: ${violations.length} foreign key violations, first ${JSON.stringify(violations[0])}`)
    db.pragma('journal_mode = WAL')
    db.pragma('wal_checkpoint(TRUNCATE)')

    const result: LoadResult = {
      file,
      events: n,
      eventsByLanguage,
      venues: venueId,
      organizers: organizerId,
      categories: CATEGORIES_PER_LANGUAGE * 2,
      tags: TAGS_PER_LANGUAGE * 2,
      images: IMAGES,
      authors: AUTHORS,
      eventTerms,
      eventVenues: n,
      eventOrganizers,
      windowStart: sqlDate(windowStart),
      windowEnd: sqlDate(windowEnd),
      eventsInWindow,
      seconds: 0,
      bytes: 0,
    }
    db.close()
    result.seconds = (performance.now() - started) / 1000
    result.bytes = statSync(file).size
    return result
  } catch (error) {
    if (db.open) db.close()
    throw error
  }
}

function argValue(args: string[], name: string): string | undefined {
  const index = args.indexOf(`--${name}`)
  return index === -1 ? undefined : args[index + 1]
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(resolve(process.argv[1])).href) {
  const args = process.argv.slice(2)
  const events = Number(argValue(args, 'events') ?? '100000')
  const out = argValue(args, 'out')
  if (out === undefined || !Number.isSafeInteger(events) || events < 1) {
    process.stderr.write('usage: node --import tsx scripts/bench/loader.ts --events N --out FILE\n')
    process.exit(2)
  }
  buildDatabase({ file: out, events, log: (m) => process.stderr.write(`${m}\n`) })
    .then((result) => process.stdout.write(`${JSON.stringify(result, null, 2)}\n`))
    .catch((error: unknown) => {
      process.stderr.write(`${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`)
      process.exit(1)
    })
}
