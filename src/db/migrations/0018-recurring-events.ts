/**
 * Recurring events (CONTRACT §17, docs/recurrence.md): the series on the event's row, the changes of one
 * occurrence, and the occurrences' rows written by the series' writes.
 *
 * - `events.recurrence`: `null` for a single event, else the series as the API shows it, JSON text
 *   `{"rule":…,"rdates":[…],"exdates":[…]}` (the rule as sent, parts upper-cased). `events.recurrence_through_utc`:
 *   for a series whose rule has neither COUNT nor UNTIL, the horizon its occurrence rows reach (UTC text); null
 *   otherwise. The horizon job reads the series behind the moving horizon through `events_recurrence_through`.
 * - `event_overrides`: the changes of one occurrence, keyed by (event, occurrence id = original start). A column
 *   `null` is "not changed"; `venues`/`organizers` hold a JSON array of ids when the links are changed.
 *   `version` grows with every change of the row (the occurrence's ETag).
 * - `event_occurrences.overridden`: 1 when the occurrence has an override (lists check the event's own columns
 *   for the others).
 * - The triggers of migration 0017 keep single events only: the insert trigger adds a row for an event without
 *   `recurrence`, the date trigger follows a single event's dates; the columns every list checks (language,
 *   listing flag, status, featured, author) still go to every row of the event, series included. A series'
 *   rows are written by its writes (repositories/occurrence-writes.ts), in the same unit of work.
 * - The data epoch (migration 0007) moves with `event_overrides` too: lists and cached records read it.
 */
import { PostgresAdapter, sql, type Kysely, type RawBuilder } from 'kysely'

/** The columns a row copies from its event, as the event's row names them. */
const COPIED = ['language', 'hide_from_listings', 'status', 'featured', 'author'] as const
/** A single event's date columns: a change of one moves its row. */
const DATES = ['start_utc', 'end_utc', 'start_date', 'all_day'] as const

/** The occurrence id of a single event, from the event's row `row` (`new`, or the table's name). */
function occurrenceId(row: string): RawBuilder<string> {
  const r = sql.raw(row)
  return sql<string>`case when ${r}.all_day = 1 then replace(substr(${r}.start_date, 1, 10), '-', '')
    else replace(replace(replace(${r}.start_utc, '-', ''), ':', ''), ' ', 'T') || 'Z' end`
}

export async function up(db: Kysely<any>): Promise<void> {
  const postgres = db.getExecutor().adapter instanceof PostgresAdapter
  await db.schema.alterTable('events').addColumn('recurrence', 'text').execute()
  await db.schema.alterTable('events').addColumn('recurrence_through_utc', 'text').execute()
  await db.schema.createIndex('events_recurrence_through').on('events').columns(['recurrence_through_utc', 'id'])
    .where(sql.ref('recurrence_through_utc'), 'is not', null).execute()
  await db.schema.alterTable('event_occurrences').addColumn('overridden', 'integer', (c) => c.notNull().defaultTo(0)).execute()

  await db.schema.createTable('event_overrides')
    .addColumn('event_id', 'integer', (c) => c.notNull().references('events.id').onDelete('cascade'))
    .addColumn('occurrence', 'text', (c) => c.notNull())
    .addColumn('title', 'text')
    .addColumn('description', 'text')
    .addColumn('excerpt', 'text')
    .addColumn('start_date', 'text')
    .addColumn('end_date', 'text')
    .addColumn('start_utc', 'text')
    .addColumn('end_utc', 'text')
    .addColumn('cost', 'text')
    .addColumn('website', 'text')
    .addColumn('venues', 'text')
    .addColumn('organizers', 'text')
    .addColumn('version', 'integer', (c) => c.notNull().defaultTo(1))
    .addPrimaryKeyConstraint('event_overrides_pk', ['event_id', 'occurrence'])
    .execute()

  const columns = sql.join(['event_id', 'occurrence', 'start_utc', 'end_utc', ...COPIED].map((c) => sql.id(c)))
  const values = sql.join([sql`new.id`, occurrenceId('new'), sql`new.start_utc`, sql`new.end_utc`, ...COPIED.map((c) => sql`new.${sql.id(c)}`)])
  const dates = sql.join([sql`occurrence = ${occurrenceId('new')}`, sql`start_utc = new.start_utc`, sql`end_utc = new.end_utc`])
  const copied = sql.join(COPIED.map((c) => sql`${sql.id(c)} = new.${sql.id(c)}`))
  const differ = (names: readonly string[]) => sql.join(names.map((c) => postgres
    ? sql`old.${sql.id(c)} is distinct from new.${sql.id(c)}`
    : sql`old.${sql.id(c)} is not new.${sql.id(c)}`), sql` or `)
  const single = sql`new.recurrence is null and old.recurrence is null`
  if (postgres) {
    await sql`drop trigger events_occurrences_insert on events`.execute(db)
    await sql`drop trigger events_occurrences_update on events`.execute(db)
    await sql`drop function event_occurrences_follow()`.execute(db)
    await sql`create function event_occurrences_insert() returns trigger language plpgsql set search_path from current as $$
      begin insert into event_occurrences (${columns}) values (${values}); return null; end $$`.execute(db)
    await sql`create function event_occurrences_dates() returns trigger language plpgsql set search_path from current as $$
      begin update event_occurrences set ${dates} where event_id = new.id; return null; end $$`.execute(db)
    await sql`create function event_occurrences_copied() returns trigger language plpgsql set search_path from current as $$
      begin update event_occurrences set ${copied} where event_id = new.id; return null; end $$`.execute(db)
    await sql`create trigger events_occurrences_insert after insert on events
      for each row when (new.recurrence is null) execute function event_occurrences_insert()`.execute(db)
    await sql`create trigger events_occurrences_dates after update of ${sql.join(DATES.map((c) => sql.id(c)))} on events
      for each row when (${single} and (${differ(DATES)})) execute function event_occurrences_dates()`.execute(db)
    await sql`create trigger events_occurrences_copied after update of ${sql.join(COPIED.map((c) => sql.id(c)))} on events
      for each row when (${differ(COPIED)}) execute function event_occurrences_copied()`.execute(db)
    await sql`create trigger event_overrides_data_epoch after insert or update or delete or truncate on event_overrides
      for each statement execute function data_epoch_moves()`.execute(db)
    return
  }
  await sql`drop trigger events_occurrences_insert`.execute(db)
  await sql`drop trigger events_occurrences_update`.execute(db)
  await sql`create trigger events_occurrences_insert after insert on events when new.recurrence is null
    begin insert into event_occurrences (${columns}) values (${values}); end`.execute(db)
  await sql`create trigger events_occurrences_dates after update of ${sql.join(DATES.map((c) => sql.id(c)))} on events
    when ${single} and (${differ(DATES)})
    begin update event_occurrences set ${dates} where event_id = new.id; end`.execute(db)
  await sql`create trigger events_occurrences_copied after update of ${sql.join(COPIED.map((c) => sql.id(c)))} on events
    when ${differ(COPIED)}
    begin update event_occurrences set ${copied} where event_id = new.id; end`.execute(db)
  for (const action of ['insert', 'update', 'delete']) {
    await sql`create trigger ${sql.id(`event_overrides_data_epoch_${action}`)} after ${sql.raw(action)} on event_overrides
      begin update data_epoch set n = n + 1 where id = 1; end`.execute(db)
  }
}

/** Undoes what `up` made, leaving the occurrences without triggers on `events` (what 0017 made is 0017's to undo). */
export async function down(db: Kysely<any>): Promise<void> {
  const postgres = db.getExecutor().adapter instanceof PostgresAdapter
  for (const trigger of ['events_occurrences_insert', 'events_occurrences_dates', 'events_occurrences_copied']) {
    await sql`drop trigger ${sql.id(trigger)}${postgres ? sql` on events` : sql``}`.execute(db)
  }
  if (postgres) {
    for (const fn of ['event_occurrences_insert', 'event_occurrences_dates', 'event_occurrences_copied']) await sql`drop function ${sql.id(fn)}()`.execute(db)
  }
  await db.schema.dropTable('event_overrides').execute()
  await db.schema.alterTable('event_occurrences').dropColumn('overridden').execute()
  await db.schema.dropIndex('events_recurrence_through').execute()
  await db.schema.alterTable('events').dropColumn('recurrence_through_utc').execute()
  await db.schema.alterTable('events').dropColumn('recurrence').execute()
}
