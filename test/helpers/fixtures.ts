/**
 * Small builders for records the tests need but whose routes are not the subject of the test.
 */
import { sql, type Insertable, type Kysely } from 'kysely'
import { inIdList } from '../../src/db/dialect.js'
import type { Database, EventsTable } from '../../src/db/schema.js'

type NewEvent = Insertable<EventsTable>

let sequence = 0

/** Inserts an event straight into storage (published, English, in June 2026 unless overridden). */
export async function insertEvent(db: Kysely<Database>, overrides: Partial<NewEvent> = {}, links: { terms?: number[] } = {}): Promise<number> {
  sequence += 1
  const { id } = await db.insertInto('events').values({
    language: 'en',
    translation_group: null,
    author: null,
    status: 'publish',
    password: null,
    title: `Event ${sequence}`,
    description: null,
    excerpt: null,
    slug: `event-fixture-${sequence}`,
    image_id: null,
    date: '2026-06-01 10:00:00',
    date_utc: '2026-06-01 10:00:00',
    modified: '2026-06-01 10:00:00',
    modified_utc: '2026-06-01 10:00:00',
    all_day: 0,
    start_date: '2026-07-01 18:00:00',
    end_date: '2026-07-01 21:00:00',
    start_utc: '2026-07-01 18:00:00',
    end_utc: '2026-07-01 21:00:00',
    timezone: 'UTC',
    cost: null,
    website: null,
    show_map: 0,
    show_map_link: 0,
    hide_from_listings: 0,
    sticky: 0,
    featured: 0,
    post_parent: null,
    ...overrides,
  }).returning('id').executeTakeFirstOrThrow()
  for (const term of links.terms ?? []) {
    await db.insertInto('event_terms').values({ event_id: id, term_id: term }).execute()
  }
  // Term counts are kept by event writes; an event put straight into storage recounts them the same way.
  await refreshTermCounts(db, links.terms ?? [])
  return id
}

/**
 * Recounts the published events of these terms (their `count`) from the links, for events put straight
 * into storage (the API's writes move the counts themselves).
 */
async function refreshTermCounts(db: Kysely<Database>, termIds: readonly number[]): Promise<void> {
  const ids = [...new Set(termIds)]
  if (ids.length === 0) return
  await db.updateTable('terms')
    .set((eb) => ({
      event_count: eb.selectFrom('event_terms')
        .innerJoin('events', 'events.id', 'event_terms.event_id')
        .select((inner) => inner.fn.countAll<number>().as('n'))
        .whereRef('event_terms.term_id', '=', 'terms.id')
        .where('events.status', '=', 'publish'),
    }))
    .where(inIdList(db, sql.ref('id'), ids))
    .execute()
}
