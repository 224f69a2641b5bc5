/**
 * The occurrence rows of a series (CONTRACT §17, docs/recurrence.md, migration 0018): `event_occurrences`
 * made exactly the set a series' expansion gives, in the unit of work that writes the event. Single events'
 * rows are kept by the triggers on `events` (migrations 0017, 0018); a series' rows by these functions:
 *
 * - `writeOccurrences` (create and update of a series, a series made single again): rows missing from the
 *   set inserted, rows no longer in it deleted with their overrides (§17: an occurrence's changes live as
 *   long as its original start stays in the set), rows whose dates moved rewritten. An overridden
 *   occurrence's dates are its override's `start_utc`/`end_utc` where it has them. The copied listing
 *   columns come from the event's row as it stands in the same transaction.
 * - `extendOccurrences` (the horizon job, CONTRACT §17: "the horizon moves forward every day by itself, on
 *   every node"): for one unbounded series, the occurrences past its old horizon inserted with
 *   `on conflict do nothing` and `recurrence_through_utc` moved by compare-and-swap. How to call it: read
 *   the series behind the new horizon through `events_recurrence_through` (`recurrence_through_utc <
 *   horizon`), and for each, in a unit of work of its own: expand it with `seriesRowsOf` (lib/recurrence.ts
 *   under the hood) to the new horizon, then `extendOccurrences(trx, id, old through, new through,
 *   occurrences)`; false means another node moved it first (its inserts were no-ops, nothing to undo). It
 *   records no change (§17); the data epoch moves with the rows (migration 0007), which is what lists cache by.
 *
 * Every statement is bounded whatever the number of occurrences (at most 3,500): a set goes as one
 * parameter (a JSON array on SQLite, arrays on PostgreSQL), never one placeholder per value.
 */
import { sql, type Kysely, type RawBuilder } from 'kysely'
import { isPostgres } from '../db/dialect.js'
import { prepared } from '../db/prepared.js'
import type { Database } from '../db/schema.js'
import type { Tx } from '../db/unit-of-work.js'
import { checkRecurrence, expandSeries, formatOccurrenceId, type Occurrence, type RecurrenceRefusal } from '../lib/recurrence.js'

/** An occurrence as its row holds it: id and the instants of its original (unmoved) dates. */
export interface OccurrenceRow {
  id: string
  startUtc: string
  endUtc: string
}

/** The rows of a series as a write sets them: its occurrences, and `recurrence_through_utc` (unbounded: the horizon). */
export interface SeriesRows {
  occurrences: readonly OccurrenceRow[]
  throughUtc: string | null
}

/** The event's row as the expansion needs it (what `events` holds). */
export interface SeriesEventRow {
  recurrence: string | null
  timezone: string
  all_day: number | boolean
  start_date: string
  end_date: string
  start_utc: string
  end_utc: string
}

/**
 * The rows of an event's series expanded up to `horizonUtc` (pure: no database), or the refusal; for the
 * horizon job and for whoever holds an event's row rather than a request's body.
 */
export function seriesRowsOf(row: SeriesEventRow, horizonUtc: string): SeriesRows | { refused: RecurrenceRefusal } | null {
  if (row.recurrence === null) return null
  const allDay = row.all_day === true || row.all_day === 1
  const checked = checkRecurrence(JSON.parse(row.recurrence) as { rule: string | null; rdates: string[]; exdates: string[] }, allDay)
  if ('refused' in checked) return checked
  const expanded = expandSeries({ timezone: row.timezone, allDay, start: row.start_date, end: row.end_date, startUtc: row.start_utc, endUtc: row.end_utc }, checked, horizonUtc)
  if ('refused' in expanded) return expanded
  const unbounded = checked.parsed !== null && checked.parsed.count === undefined && checked.parsed.until === undefined
  return { occurrences: expanded.map(rowOf), throughUtc: unbounded ? horizonUtc : null }
}

/** An expanded occurrence as a row. */
export function rowOf(occurrence: Occurrence): OccurrenceRow {
  return { id: occurrence.id, startUtc: occurrence.startUtc, endUtc: occurrence.endUtc }
}

/** A single event's one row (what the insert trigger writes): its own start's id and its dates. */
export function singleRowOf(row: Pick<SeriesEventRow, 'all_day' | 'start_date' | 'start_utc' | 'end_utc'>): OccurrenceRow {
  const allDay = row.all_day === true || row.all_day === 1
  return { id: formatOccurrenceId(row.start_utc, row.start_date, allDay), startUtc: row.start_utc, endUtc: row.end_utc }
}

/** The rows wanted: id, dates as they stand, whether overridden. */
interface Wanted {
  id: string
  start: string
  end: string
  overridden: 0 | 1
}

const currentRows = prepared(1, (db, eventId: number) => db.selectFrom('event_occurrences')
  .select(['occurrence', 'start_utc', 'end_utc', 'overridden']).where('event_id', '=', eventId))

const currentOverrides = prepared(1, (db, eventId: number) => db.selectFrom('event_overrides')
  .select(['occurrence', 'start_utc', 'end_utc']).where('event_id', '=', eventId))

/** The values of a text list as one parameter: an array on PostgreSQL, JSON text on SQLite. */
function listValue(db: Kysely<Database>, values: readonly unknown[]): unknown {
  return isPostgres(db) ? values : JSON.stringify(values)
}

/** `column` is one of the texts of `list` (from `listValue`). */
function inTextList(db: Kysely<Database>, column: RawBuilder<unknown>, list: unknown): RawBuilder<boolean> {
  return isPostgres(db) ? sql<boolean>`${column} = any(${list}::text[])` : sql<boolean>`${column} in (select value from json_each(${list}))`
}

const rowsDeleted = prepared(2, (db, eventId: number, list: unknown) => sql`delete from event_occurrences
  where event_id = ${eventId} and ${inTextList(db, sql.ref('occurrence'), list)}`)

const overridesDeleted = prepared(2, (db, eventId: number, list: unknown) => sql`delete from event_overrides
  where event_id = ${eventId} and ${inTextList(db, sql.ref('occurrence'), list)}`)

const allOverridesDeleted = prepared(1, (db, eventId: number) => db.deleteFrom('event_overrides').where('event_id', '=', eventId))

/**
 * Inserts the rows of `ids`, `starts`, `ends`, `flags` (lists of equal length, each one parameter) for the
 * event, the copied columns from its row; `ignore`: `on conflict do nothing` (the horizon job).
 */
function rowsInserted(ignore: boolean) {
  return prepared(5, (db, eventId: number, ids: unknown, starts: unknown, ends: unknown, flags: unknown) => {
    const columns = sql`(event_id, occurrence, start_utc, end_utc, overridden, language, hide_from_listings, status, featured, author)`
    const tail = ignore ? sql` on conflict (event_id, occurrence) do nothing` : sql``
    if (isPostgres(db)) {
      return sql`insert into event_occurrences ${columns}
        select e.id, u.o, u.s, u.e, u.f, e.language, e.hide_from_listings, e.status, e.featured, e.author
        from events e cross join unnest(${ids}::text[], ${starts}::text[], ${ends}::text[], ${flags}::int[]) as u(o, s, e, f)
        where e.id = ${eventId}${tail}`
    }
    // SQLite: the four lists as JSON texts, joined by position.
    return sql`insert into event_occurrences ${columns}
      select e.id, o.value, s.value, x.value, f.value, e.language, e.hide_from_listings, e.status, e.featured, e.author
      from events e, json_each(${ids}) o
        join json_each(${starts}) s on s.key = o.key
        join json_each(${ends}) x on x.key = o.key
        join json_each(${flags}) f on f.key = o.key
      where e.id = ${eventId}${tail}`
  })
}
const insertRows = rowsInserted(false)
const insertRowsIgnoring = rowsInserted(true)

async function insert(trx: Tx, eventId: number, rows: readonly Wanted[], ignore: boolean): Promise<void> {
  if (rows.length === 0) return
  await (ignore ? insertRowsIgnoring : insertRows)(trx, eventId,
    listValue(trx, rows.map((r) => r.id)), listValue(trx, rows.map((r) => r.start)),
    listValue(trx, rows.map((r) => r.end)), listValue(trx, rows.map((r) => r.overridden)))
}

/**
 * Makes the event's occurrence rows exactly `occurrences` (its series' set), or, with `single`, the one row
 * a single event has (`occurrences` holds it) and no overrides. Rows gone and their overrides are deleted,
 * rows new inserted, rows whose dates or override flag changed rewritten (deleted and inserted: at most
 * four statements whatever the set). Call it after the event's row is written in the same transaction.
 */
export async function writeOccurrences(trx: Tx, eventId: number, occurrences: readonly OccurrenceRow[], single = false): Promise<void> {
  const wantedIds = new Set(occurrences.map((o) => o.id))
  const overrides = single ? [] : (await currentOverrides(trx, eventId)).rows
  if (single) await allOverridesDeleted(trx, eventId)
  else {
    const gone = overrides.filter((o) => !wantedIds.has(o.occurrence)).map((o) => o.occurrence)
    if (gone.length > 0) await overridesDeleted(trx, eventId, listValue(trx, gone))
  }
  const overrideOf = new Map(overrides.map((o) => [o.occurrence, o]))
  const wanted: Wanted[] = occurrences.map((o) => {
    const override = overrideOf.get(o.id)
    return { id: o.id, start: override?.start_utc ?? o.startUtc, end: override?.end_utc ?? o.endUtc, overridden: override === undefined ? 0 : 1 }
  })
  const current = new Map((await currentRows(trx, eventId)).rows.map((r) => [r.occurrence, r]))
  const stale = [...current.keys()].filter((id) => !wantedIds.has(id))
  const toInsert: Wanted[] = []
  for (const w of wanted) {
    const row = current.get(w.id)
    if (row === undefined) toInsert.push(w)
    else if (row.start_utc !== w.start || row.end_utc !== w.end || Number(row.overridden) !== w.overridden) {
      stale.push(w.id)
      toInsert.push(w)
    }
  }
  if (stale.length > 0) await rowsDeleted(trx, eventId, listValue(trx, stale))
  await insert(trx, eventId, toInsert, false)
}

const throughMoved = prepared(3, (db, eventId: number, from: string, to: string) => db.updateTable('events')
  .set({ recurrence_through_utc: to }).where('id', '=', eventId).where('recurrence_through_utc', '=', from))

/**
 * The horizon job's step for one unbounded series (see the head of this file): inserts `occurrences` (the
 * series' set expanded to `toUtc`; those already there are left as they are, overridden or not) and moves
 * `recurrence_through_utc` from `fromUtc` to `toUtc` if it still is `fromUtc`. False when it was not (another
 * node moved it, or the series was rewritten): the caller's transaction may commit anyway, every insert
 * having been of a row that was or will be there.
 */
export async function extendOccurrences(trx: Tx, eventId: number, fromUtc: string, toUtc: string, occurrences: readonly OccurrenceRow[]): Promise<boolean> {
  const moved = await throughMoved(trx, eventId, fromUtc, toUtc)
  if (Number(moved.numAffectedRows) !== 1) return false
  const added = occurrences.filter((o) => o.startUtc >= fromUtc)
  await insert(trx, eventId, added.map((o) => ({ id: o.id, start: o.startUtc, end: o.endUtc, overridden: 0 })), true)
  return true
}
