/**
 * A create's answer is made from what the write wrote (repositories/event-records.ts `writtenEventRecord`), not read
 * back whole (issue 49): for many random creates (categories and tags named by id, slug or name, with names whose
 * bytewise order differs from the code units'; existing and inline venues and organizers, repeated ones; images by
 * URL and by id; recurrence; languages and `translation_of`; drafts and other authors; every flag), the answer of
 * `POST /events` (its body, `Location` and `ETag`) is the record a read of the event gives right after it (its body
 * without `json_ld`, its `ETag`), read by the same caller; and the change log's entries the create appended (their
 * language, status and author, given by the write instead of looked up) are the records' as they are.
 */
import t from 'tap'
import { sql } from 'kysely'
import { API } from './helpers/build.js'
import { EVENTS, eventBody, setup, type Body, type Event, type Headers } from './helpers/events.js'
import { propertyRuns, propertySeed, seededRandom } from './helpers/property.js'

const RUNS = propertyRuns(60)
const SEED = propertySeed(4901)

t.test('a create answers the record a read back gives, and logs the states the records have', async (t) => {
  t.comment(`seed ${SEED}, ${RUNS} creates`)
  const random = seededRandom(SEED)
  const pick = <T>(list: readonly T[]): T => list[Math.floor(random() * list.length)] as T
  const some = <T>(list: readonly T[], most: number): T[] => Array.from({ length: Math.floor(random() * (most + 1)) }, () => pick(list))
  const s = await setup(t)
  const author = await s.auth('author')
  const callers: Array<{ headers: Headers; editor: boolean }> = [{ headers: s.editor, editor: true }, { headers: author, editor: false }]

  // Terms in both languages, named so that UTF-8 byte order and UTF-16 order disagree (U+FF21 sorts after U+1F600
  // in UTF-16 code units, before it in bytes), with equal keys of different case (ordered by id then).
  const names = ['Jazz', 'jazz club', 'Ａrt', '😀 Fun', 'Zebra', 'éclair', 'Eclair', 'Ω Omega', 'a']
  const terms: Record<'en' | 'de', { categories: Array<number | string>; tags: Array<number | string> }> = { en: { categories: [], tags: [] }, de: { categories: [], tags: [] } }
  for (const language of ['en', 'de'] as const) {
    for (const [i, name] of names.entries()) {
      const suffix = language === 'de' ? ' de' : ''
      const category = await s.category(`${name}${suffix} c${i}`, `?ml_language=${language}`)
      const tag = await s.tag(`${name}${suffix} t${i}`, `?ml_language=${language}`)
      // By id, by slug and by name (in another case and spacing).
      terms[language].categories.push(category.id, category.slug)
      terms[language].tags.push(tag.id, ` ${tag.name.toUpperCase()} `)
    }
  }
  const venues: Record<'en' | 'de', number[]> = { en: [], de: [] }
  const organizers: Record<'en' | 'de', number[]> = { en: [], de: [] }
  for (const language of ['en', 'de'] as const) {
    for (let i = 0; i < 3; i++) {
      const venue = await s.inject({ method: 'POST', url: `${API}/venues?ml_language=${language}`, headers: s.editor, payload: { venue: `Hall ${language} ${i}`, city: 'Town' } })
      venues[language].push(venue.json<{ id: number }>().id)
      const organizer = await s.inject({ method: 'POST', url: `${API}/organizers?ml_language=${language}`, headers: s.editor, payload: { organizer: `Club ${language} ${i}` } })
      organizers[language].push(organizer.json<{ id: number }>().id)
    }
  }
  const images: number[] = []
  // Events made, and whether their group has a version in the other language yet (two languages: one translation each).
  const made: Array<{ id: number; language: 'en' | 'de'; translated: boolean }> = []

  for (let run = 0; run < RUNS; run++) {
    const caller = pick(callers)
    const language = pick(['en', 'en', 'de'] as const)
    const day = 1 + Math.floor(random() * 27)
    const allDay = random() < 0.2
    const body: Body = eventBody({
      title: pick(['Concert', 'Ｆestival 😀', 'Night Market', '']).concat(` ${run}`),
      timezone: pick(['UTC', 'Europe/Berlin', 'America/New_York']),
      start_date: allDay ? `2026-08-${String(day).padStart(2, '0')}` : `2026-08-${String(day).padStart(2, '0')} 18:00:00`,
      end_date: allDay ? `2026-08-${String(day).padStart(2, '0')}` : `2026-08-${String(day).padStart(2, '0')} 21:30:00`,
      all_day: allDay,
      status: pick(['publish', 'publish', 'draft', 'pending']),
    })
    if (random() < 0.5) body.description = pick(['<p>An evening</p>', 'Plain text', ''])
    if (random() < 0.3) body.excerpt = 'Short'
    if (random() < 0.4) body.cost = pick(['€ 12', '$10 – $20', 'Free', '0'])
    if (random() < 0.3) body.website = 'https://example.org/event'
    if (random() < 0.3) body.slug = pick(['the-night', 'concert', 'festival-2026'])
    for (const flag of ['show_map', 'show_map_link', 'hide_from_listings', 'sticky', 'featured']) if (random() < 0.3) body[flag] = random() < 0.5
    if (random() < 0.7) body.categories = some(terms[language].categories, 4)
    if (random() < 0.7) body.tags = some(terms[language].tags, 4)
    if (random() < 0.6) {
      body.venue = Array.from({ length: 1 + Math.floor(random() * 3) }, (_, i) =>
        random() < 0.25 ? { venue: `Inline hall ${run} ${i}`, city: 'Town', status: pick(['publish', 'draft']) } : pick(venues[language]))
    }
    if (random() < 0.6) {
      body.organizer = Array.from({ length: 1 + Math.floor(random() * 3) }, (_, i) =>
        random() < 0.25 ? { organizer: `Inline club ${run} ${i}`, email: 'club@example.org' } : pick(organizers[language]))
    }
    if (random() < 0.3) body.image = images.length > 0 && random() < 0.5 ? pick(images) : `https://img.example/${run}.png`
    if (!allDay && random() < 0.25) body.recurrence = { rule: pick(['FREQ=WEEKLY;COUNT=4', 'FREQ=DAILY;COUNT=3', 'FREQ=MONTHLY']) }
    if (caller.editor && random() < 0.2) body.author = 1
    if (random() < 0.15) body.date = '2026-06-01 08:00:00'
    // A translation of an event made before, in another language than its own.
    const source = random() < 0.25 ? made.find((m) => m.language !== language && !m.translated) : undefined
    if (source !== undefined) body.translation_of = source.id

    const url = `${EVENTS}?ml_language=${language}`
    const before = Number((await sql<{ n: number | null }>`select max(position) as n from changes`.execute(s.db)).rows[0]?.n ?? 0)
    const res = await s.inject({ method: 'POST', url, headers: caller.headers, payload: body })
    if (res.statusCode !== 201) {
      // A body the contract refuses (an author naming a term of another language, a taken translation…) writes nothing.
      t.ok(res.statusCode === 400 || res.statusCode === 403, `run ${run}: ${res.statusCode} ${res.body.slice(0, 200)}`)
      continue
    }
    const answer = res.json<Event>()
    if (source !== undefined) source.translated = true
    made.push({ id: answer.id, language, translated: source !== undefined })
    if (answer.image !== null && !images.includes(answer.image.id)) images.push(answer.image.id)
    const read = await s.inject({ url: `${EVENTS}/${answer.id}`, headers: caller.headers })
    t.equal(read.statusCode, 200, `run ${run}: read back`)
    const { json_ld: _, ...readBack } = read.json<Event & { json_ld?: unknown }>()
    t.strictSame(answer, readBack, `run ${run}: the answer is the record read back`)
    t.equal(res.headers.etag, read.headers.etag, `run ${run}: the same ETag`)
    t.equal(res.headers.location, answer.rest_url, `run ${run}: Location`)

    // The log's entries of this create: each record's language, status and author as they are now.
    const entries = await sql<{ resource: string; record_id: number; language: string; status: string | null; author: number | null }>`
      select resource, record_id, language, status, author from changes where position > ${before} order by position`.execute(s.db)
    const logged = entries.rows.filter((e) => e.resource === 'events' && Number(e.record_id) === answer.id)
    t.equal(logged.length >= 1, true, `run ${run}: the create is logged`)
    for (const entry of entries.rows) {
      const table = entry.resource === 'categories' || entry.resource === 'tags' ? 'terms' : entry.resource
      const state = table === 'terms'
        ? await sql<{ language: string; status: null; author: null }>`select language, null as status, null as author from terms where id = ${Number(entry.record_id)}`.execute(s.db)
        : await sql<{ language: string; status: string; author: number | null }>`select language, status, author from ${sql.table(table)} where id = ${Number(entry.record_id)}`.execute(s.db)
      const row = state.rows[0]
      t.strictSame(
        { language: entry.language, status: entry.status, author: entry.author === null ? null : Number(entry.author) },
        { language: row?.language, status: row?.status ?? null, author: row?.author === null || row?.author === undefined ? null : Number(row.author) },
        `run ${run}: ${entry.resource} ${entry.record_id} logged as it is`)
    }
  }
  t.ok(made.length >= RUNS / 2, `most creates were made (${made.length} of ${RUNS})`)
})
