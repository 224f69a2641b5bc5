/**
 * The moving horizon of unbounded series (CONTRACT §17, docs/recurrence.md): the series whose occurrence rows
 * end before a new horizon, read a batch at a time through `events_recurrence_through` (migration 0018), and
 * one series' rows extended to it. The job that runs these is `src/horizon.ts`.
 *
 * One series' move is one unit of work, and safe to run on several nodes at once, or again after a crash:
 * - the horizon moves by compare-and-swap: `recurrence_through_utc` from the value read to the new one, only
 *   while everything the occurrences are made of (the recurrence, the dates, the zone, all-day) is what the
 *   expansion used. A series changed meanwhile by a write (which rewrites its rows and horizon itself) or moved
 *   by another node is left as it is: nothing is inserted.
 * - the new occurrences (those starting in [old horizon, new horizon)) are inserted with
 *   `on conflict (event_id, occurrence) do nothing`: a row another node, or an earlier try, inserted stays.
 * - no change-log entry (§17: the horizon moves by itself); the data epoch moves with the rows (migration 0007's
 *   triggers), so remembered lists are dropped; the event's own version and ETag do not change.
 */
import { sql } from 'kysely'
import { isPostgres } from '../db/dialect.js'
import { prepared } from '../db/prepared.js'
import type { Db, Tx } from '../db/unit-of-work.js'
import { checkRecurrence, occurrencesInWindow, type Occurrence } from '../lib/recurrence.js'

/** What a move of one series reads of its event's row. */
export interface SeriesBehind {
  id: number
  recurrence: string
  through: string
  timezone: string
  all_day: number
  start_date: string
  end_date: string
  start_utc: string
  end_utc: string
}

/**
 * Up to `limit` unbounded series whose rows end before `horizon`, in order of (horizon reached, id), after the
 * series `after` (keyset: a series left behind by a lost swap is not read again in the same run).
 */
export async function seriesBehind(db: Db, horizon: string, after: { through: string; id: number } | undefined, limit: number): Promise<SeriesBehind[]> {
  let query = db.selectFrom('events')
    .select(['id', 'recurrence', 'recurrence_through_utc as through', 'timezone', 'all_day', 'start_date', 'end_date', 'start_utc', 'end_utc'])
    .where('recurrence_through_utc', 'is not', null)
    .where('recurrence_through_utc', '<', horizon)
  if (after !== undefined) {
    query = query.where((eb) => eb.or([
      eb('recurrence_through_utc', '>', after.through),
      eb.and([eb('recurrence_through_utc', '=', after.through), eb('id', '>', after.id)]),
    ]))
  }
  const rows = await query.orderBy('recurrence_through_utc').orderBy('id').limit(limit).execute()
  return rows.flatMap((r) => (r.recurrence === null || r.through === null ? [] : [{ ...r, id: Number(r.id), all_day: Number(r.all_day), recurrence: r.recurrence, through: r.through }]))
}

/** The occurrences a series gains when its horizon moves from where its rows end to `horizon`. */
export function occurrencesToAdd(series: SeriesBehind, horizon: string): Occurrence[] {
  const stored = JSON.parse(series.recurrence) as { rule: string | null; rdates?: string[]; exdates?: string[] }
  const allDay = series.all_day === 1
  const checked = checkRecurrence({ rule: stored.rule, rdates: stored.rdates ?? [], exdates: stored.exdates ?? [] }, allDay)
  // A stored series was checked when written; one that no longer parses gains nothing (and is left as it is).
  if ('refused' in checked || checked.parsed?.count !== undefined || checked.parsed?.until !== undefined) return []
  return occurrencesInWindow({
    timezone: series.timezone, allDay,
    start: series.start_date, end: series.end_date, startUtc: series.start_utc, endUtc: series.end_utc,
  }, checked, series.through, horizon)
}

/** The horizon moved by compare-and-swap, only while the series is as it was read and expanded. */
const swapped = prepared(10, (db, id: number, through: string, horizon: string, recurrence: string, timezone: string, allDay: number,
  startDate: string, endDate: string, startUtc: string, endUtc: string) => db.updateTable('events')
  .set({ recurrence_through_utc: horizon })
  .where('id', '=', id).where('recurrence_through_utc', '=', through).where('recurrence', '=', recurrence)
  .where('timezone', '=', timezone).where('all_day', '=', allDay as 0 | 1)
  .where('start_date', '=', startDate).where('end_date', '=', endDate).where('start_utc', '=', startUtc).where('end_utc', '=', endUtc))

const INSERTED = sql`(event_id, occurrence, start_utc, end_utc, language, hide_from_listings, status, featured, author)`

/**
 * The occurrences inserted, the listing columns from the event's row as it stands in this unit of work; rows
 * already there are left as they are. PostgreSQL: their ids, starts and ends each one array parameter.
 */
const insertedPostgres = prepared(4, (_db, id: number, ids: unknown, starts: unknown, ends: unknown) => sql`insert into event_occurrences ${INSERTED}
  select e.id, u.o, u.s, u.e, e.language, e.hide_from_listings, e.status, e.featured, e.author
  from events e cross join unnest(${ids}::text[], ${starts}::text[], ${ends}::text[]) as u(o, s, e)
  where e.id = ${id} on conflict (event_id, occurrence) do nothing`)

/** SQLite: one JSON text of `[id, start, end]` rows, each row's values read from its own small array (linear). */
const insertedSqlite = prepared(2, (_db, id: number, rows: string) => sql`insert into event_occurrences ${INSERTED}
  select e.id, r.value ->> 0, r.value ->> 1, r.value ->> 2, e.language, e.hide_from_listings, e.status, e.featured, e.author
  from events e, json_each(${rows}) r
  where e.id = ${id} on conflict (event_id, occurrence) do nothing`)

/**
 * Moves one series' horizon to `horizon` with `occurrences` (from {@link occurrencesToAdd}), in the unit of
 * work `trx`: false when the swap was lost (the series changed or moved meanwhile), and then nothing was written.
 * Two statements whatever the number of occurrences.
 */
export async function extendSeries(trx: Tx, series: SeriesBehind, horizon: string, occurrences: readonly Occurrence[]): Promise<boolean> {
  const swap = await swapped(trx, series.id, series.through, horizon, series.recurrence, series.timezone, series.all_day,
    series.start_date, series.end_date, series.start_utc, series.end_utc)
  if (Number(swap.numAffectedRows) !== 1) return false
  if (occurrences.length === 0) return true
  if (isPostgres(trx)) await insertedPostgres(trx, series.id, occurrences.map((o) => o.id), occurrences.map((o) => o.startUtc), occurrences.map((o) => o.endUtc))
  else await insertedSqlite(trx, series.id, JSON.stringify(occurrences.map((o) => [o.id, o.startUtc, o.endUtc])))
  return true
}

/** How many occurrence rows a series has (tests and the benchmark). */
export async function occurrenceCount(db: Db, eventId: number): Promise<number> {
  const row = await db.selectFrom('event_occurrences').select(sql<number>`count(*)`.as('n')).where('event_id', '=', eventId).executeTakeFirstOrThrow()
  return Number(row.n)
}
