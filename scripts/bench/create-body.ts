/**
 * The body of the benchmark's `event-create` (scenarios.ts) for the in-process write tools (create-ab.ts,
 * create-statements.ts, shared-commit.ts): a category, two tags, a venue and an organizer, in English, taken in turn
 * from what the benchmark's database holds.
 */
import type SQLite from 'better-sqlite3'

export type CreateBody = (n: number) => Record<string, unknown>

export function createBodies(sqlite: SQLite.Database, title: string): CreateBody {
  const idsOf = (statement: string): number[] => (sqlite.prepare(statement).all() as Array<{ id: number }>).map((r) => r.id)
  const categories = idsOf(`select id from terms where taxonomy = 'category' and language = 'en' order by id`)
  const tags = idsOf(`select id from terms where taxonomy = 'tag' and language = 'en' order by id`)
  const venues = idsOf(`select id from venues where language = 'en' and status = 'publish' order by id`)
  const organizers = idsOf(`select id from organizers where language = 'en' and status = 'publish' order by id`)
  const pick = (list: number[], n: number): number => list[n % list.length] as number
  return (n: number) => ({
    title: `${title} ${n}`, description: 'An evening of music and conversation with local artists.',
    start_date: `2027-0${1 + (n % 8)}-1${n % 10} 19:00:00`, end_date: `2027-0${1 + (n % 8)}-1${n % 10} 21:00:00`,
    timezone: 'UTC', status: 'publish', cost: '€ 12',
    categories: [pick(categories, n)], tags: [pick(tags, n), pick(tags, n + 7)], venue: [pick(venues, n)], organizer: [pick(organizers, n)],
  })
}
