/**
 * The occurrences lists read (migration 0017) stay exactly in step with the events: after random sequences
 * of event writes (creates and translations, edits of dates, time zone, all-day, listing flag, featured,
 * status and author, edits that change none of those, trash, restore, deletes for good, and raw SQL
 * writes: inserts, a language changed, dates moved, a user deleted), every event has exactly one
 * occurrence, its own: id from its start (`YYYYMMDDTHHMMSSZ` in UTC, all-day `YYYYMMDD` of its day), its
 * dates and the columns every list checks as the event holds them, and no occurrence is left without its
 * event. Also: the migration fills the rows of the events already there, and the database refuses an
 * occurrence that ends before it starts.
 */
import { sql, type Kysely } from 'kysely'
import t from 'tap'
import { migrateToLatest } from '../src/db/migrate.js'
import * as recurringEvents from '../src/db/migrations/0018-recurring-events.js'
import * as occurrenceFilters from '../src/db/migrations/0019-occurrence-filters.js'
import type { Database } from '../src/db/schema.js'
import { formatOccurrenceId } from '../src/lib/recurrence.js'
import { build, type Built } from './helpers/build.js'
import { insertEvent } from './helpers/fixtures.js'
import { propertyRuns, propertySeed, seededRandom } from './helpers/property.js'

const EVENTS = '/calendar/events/v1/events'

/** Every way an event and its occurrences differ, as text (none when in step). */
async function outOfStep(db: Kysely<Database>): Promise<string[]> {
  const events = await db.selectFrom('events')
    .select(['id', 'start_utc', 'end_utc', 'start_date', 'all_day', 'language', 'hide_from_listings', 'status', 'featured', 'author']).execute()
  const rows = await db.selectFrom('event_occurrences').selectAll().execute()
  const byEvent = new Map<number, typeof rows>()
  for (const row of rows) byEvent.set(Number(row.event_id), [...(byEvent.get(Number(row.event_id)) ?? []), row])
  const problems: string[] = []
  for (const e of events) {
    const own = byEvent.get(Number(e.id)) ?? []
    byEvent.delete(Number(e.id))
    const expected = {
      event_id: Number(e.id), occurrence: formatOccurrenceId(e.start_utc, e.start_date, Number(e.all_day) === 1),
      start_utc: e.start_utc, end_utc: e.end_utc, language: e.language, hide_from_listings: Number(e.hide_from_listings),
      status: e.status, featured: Number(e.featured), author: e.author === null ? null : Number(e.author),
    }
    const found = own.map((r) => ({
      event_id: Number(r.event_id), occurrence: r.occurrence, start_utc: r.start_utc, end_utc: r.end_utc, language: r.language,
      hide_from_listings: Number(r.hide_from_listings), status: r.status, featured: Number(r.featured), author: r.author === null ? null : Number(r.author),
    }))
    if (JSON.stringify(found) !== JSON.stringify([expected])) problems.push(`event ${e.id}: expected ${JSON.stringify([expected])}, found ${JSON.stringify(found)}`)
  }
  for (const [id] of byEvent) problems.push(`occurrences of event ${id}, which does not exist`)
  return problems
}

/** A wall time `days` days and `minutes` minutes after 2026-03-20 00:00 (across the DST change of 29 March). */
function wall(days: number, minutes: number): string {
  const d = new Date(Date.UTC(2026, 2, 20) + days * 86_400_000 + minutes * 60_000)
  return d.toISOString().slice(0, 16).replace('T', ' ')
}

t.test('after random sequences of event writes, every event has exactly its own occurrence', async (t) => {
  const runs = propertyRuns(4)
  const seed = propertySeed(4517)
  t.comment(`seed ${seed}, ${runs} runs`)
  const done = new Map<string, number>()
  const count = (what: string, status: number, ok: readonly number[]) => {
    if (ok.includes(status)) done.set(what, (done.get(what) ?? 0) + 1)
  }
  for (let run = 0; run < runs; run++) {
    const random = seededRandom(seed + run)
    const int = (n: number) => Math.floor(random() * n)
    const pick = <T>(list: readonly T[]): T => list[int(list.length)] as T
    const s: Built = await build(t)
    const editor = await s.auth('editor')
    await s.auth('author', `author-${run}`)
    const users = (await s.db.selectFrom('users').select('id').execute()).map((u) => Number(u.id))
    const ids: number[] = []
    const live = () => ids.filter((id) => id > 0)
    const dates = () => {
      const days = int(30)
      const start = int(24 * 4) * 15
      return { start_date: wall(days, start), end_date: wall(days + int(3), start + int(8) * 15) }
    }
    const flags = () => ({
      ...(random() < 0.5 ? { featured: random() < 0.5 } : {}),
      ...(random() < 0.5 ? { hide_from_listings: random() < 0.3 } : {}),
      ...(random() < 0.3 ? { status: pick(['publish', 'draft', 'pending', 'private']) } : {}),
      ...(random() < 0.3 ? { author: pick(users) } : {}),
    })
    for (let step = 0; step < 30; step++) {
      const kind = ids.length === 0 ? 0 : int(11)
      const target = live().length > 0 ? pick(live()) : undefined
      if (kind <= 2 || target === undefined) {
        const translationOf = kind === 1 && target !== undefined ? { translation_of: target, ml_language: pick(['de', 'fr', 'es']) } : {}
        const res = await s.inject({
          method: 'POST', url: EVENTS, headers: editor,
          payload: { title: `Event ${run}.${step}`, timezone: pick(['Europe/Berlin', 'UTC', 'America/New_York']), all_day: random() < 0.2, ...dates(), ...flags(), ...translationOf },
        })
        count(kind === 1 && target !== undefined ? 'translation' : 'create', res.statusCode, [201])
        if (res.statusCode === 201) ids.push(Number(res.json<{ id: number }>().id))
      } else if (kind === 3) {
        const res = await s.inject({ method: 'PATCH', url: `${EVENTS}/${target}`, headers: editor, payload: dates() })
        count('dates', res.statusCode, [200])
      } else if (kind === 4) {
        const res = await s.inject({ method: 'PATCH', url: `${EVENTS}/${target}`, headers: editor, payload: { all_day: random() < 0.5, timezone: pick(['Europe/Berlin', 'Asia/Tokyo']) } })
        count('all-day and zone', res.statusCode, [200])
      } else if (kind === 5) {
        const res = await s.inject({ method: 'PATCH', url: `${EVENTS}/${target}`, headers: editor, payload: { featured: random() < 0.5, ...flags() } })
        count('listing columns', res.statusCode, [200])
      } else if (kind === 6) {
        const res = await s.inject({ method: 'PATCH', url: `${EVENTS}/${target}`, headers: editor, payload: { title: `Renamed ${step}` } })
        count('title', res.statusCode, [200])
      } else if (kind === 7) {
        const force = random() < 0.4
        const res = await s.inject({ method: 'DELETE', url: `${EVENTS}/${target}${force ? '?force=true' : ''}`, headers: editor })
        count(force ? 'delete' : 'trash', res.statusCode, [200])
        if (force && res.statusCode === 200) ids[ids.indexOf(target)] = -target
      } else if (kind === 8) {
        const res = await s.inject({ method: 'PATCH', url: `${EVENTS}/${target}`, headers: editor, payload: { status: 'publish' } })
        count('restore', res.statusCode, [200])
      } else if (kind === 9) {
        ids.push(await insertEvent(s.db, { start_utc: '2026-04-01 10:00:00', end_utc: '2026-04-01 12:00:00', all_day: int(2) as 0 | 1, featured: int(2) as 0 | 1 }))
        count('raw insert', 200, [200])
      } else {
        const raw = int(3)
        if (raw === 0) await sql`update events set language = ${pick(['at', 'ch-de', 'en'])} where id = ${target}`.execute(s.db)
        if (raw === 1) await sql`update events set start_utc = '2026-05-01 08:00:00', end_utc = '2026-05-01 09:30:00', start_date = '2026-05-01 10:00:00' where id = ${target}`.execute(s.db)
        if (raw === 2) await sql`update events set status = 'private', hide_from_listings = 1 - hide_from_listings where id = ${target}`.execute(s.db)
        count('raw update', 200, [200])
      }
      const problems = await outOfStep(s.db)
      if (problems.length > 0) {
        t.same(problems, [], `run ${run}, step ${step} (write ${kind}): every event has exactly its occurrence`)
        return
      }
    }
    // A user deleted: the events it wrote lose their author (foreign key), and so do their occurrences.
    const authored = await s.db.selectFrom('events').select('author').where('author', 'is not', null).executeTakeFirst()
    if (authored?.author != null) {
      await sql`delete from api_keys where user_id = ${authored.author}`.execute(s.db)
      await sql`delete from users where id = ${authored.author}`.execute(s.db)
      count('user deleted', 200, [200])
    }
    t.same(await outOfStep(s.db), [], `run ${run}: every event has exactly its occurrence, the last write included`)
    const { n } = await s.db.selectFrom('event_occurrences').select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow()
    t.ok(Number(n) > 0, `run ${run}: ${n} occurrences`)
  }
  t.comment(JSON.stringify(Object.fromEntries(done)))
  for (const what of ['create', 'translation', 'dates', 'all-day and zone', 'listing columns', 'title', 'trash', 'delete', 'restore', 'raw insert', 'raw update']) {
    t.ok((done.get(what) ?? 0) > 0, `the sequences made ${what} writes that succeeded (${done.get(what) ?? 0})`)
  }
})

t.test('the migration fills the occurrences of the events already there', async (t) => {
  const s = await build(t)
  const first = await insertEvent(s.db, { start_utc: '2026-07-01 16:00:00', end_utc: '2026-07-01 19:00:00' })
  const allDay = await insertEvent(s.db, { all_day: 1, start_date: '2026-07-02 00:00:00', start_utc: '2026-07-01 22:00:00', end_utc: '2026-07-02 21:59:59' })
  // Back to the schema before it, with the events kept, then forward again: the rows come from the events.
  await occurrenceFilters.down(s.db)
  await sql`delete from kysely_migration where name = '0019-occurrence-filters'`.execute(s.db)
  await recurringEvents.down(s.db)
  await sql`delete from kysely_migration where name = '0018-recurring-events'`.execute(s.db)
  await sql`delete from event_occurrences`.execute(s.db)
  await sql`delete from kysely_migration where name = '0017-event-occurrences'`.execute(s.db)
  await sql`drop table event_occurrences`.execute(s.db)
  await sql`create index events_listing_cover on events (language, hide_from_listings, start_utc, id, status, end_utc)`.execute(s.db)
  await migrateToLatest(s.db)
  const rows = await s.db.selectFrom('event_occurrences').select(['event_id', 'occurrence', 'start_utc']).orderBy('event_id').execute()
  t.same(rows.map((r) => ({ ...r, event_id: Number(r.event_id) })), [
    { event_id: first, occurrence: '20260701T160000Z', start_utc: '2026-07-01 16:00:00' },
    { event_id: allDay, occurrence: '20260702', start_utc: '2026-07-01 22:00:00' },
  ], 'one row per event, its id from its start')
  t.same(await outOfStep(s.db), [], 'in step with the events')
  await t.rejects(sql`update event_occurrences set end_utc = '2026-07-01 15:00:00' where event_id = ${first}`.execute(s.db),
    'an occurrence that ends before it starts is refused')
})
