/**
 * The occurrences of events (CONTRACT §17, docs/recurrence.md "Storage design"): one row per occurrence,
 * the rows every list reads (repositories/event-filters.ts). Today every event is single, so every event
 * has exactly one, its own dates and id (its UTC start in basic form, `YYYYMMDDTHHMMSSZ`; an all-day
 * event's local day, `YYYYMMDD`), with the columns every list checks copied from the event: language,
 * listing flag, status, featured, author.
 *
 * Kept in step by triggers on `events`, in the statement that writes the event (both engines): an insert
 * adds its row, an update of its dates or of a copied column updates its rows, a delete takes them with
 * it (foreign key, `on delete cascade`). So every writer keeps them exact (the API's units of work, the
 * loaders, another node, raw SQL), and a write that changes none of those columns (a new title) touches
 * no row. A series' own rows (the next step) will be written by its writes instead.
 *
 * Every occurrence ends at or after its start (a CHECK on both engines: a new table can have one on
 * SQLite too, which migration 0010 could not add to `events`), so an end bound bounds the listing index
 * too. Indexes: the primary key `(event_id, occurrence)`; `occurrences_listing_cover`, what
 * `events_listing_cover` (migration 0002) was for events, in the list's order (start, event, occurrence);
 * `occurrences_by_event_start`, the occurrences of one event by start with what a list checks, for the
 * plans that look the linked or searched events up by id (what `events_by_id_listing`, migration 0011,
 * was on SQLite for them). The rows are filled from `events` in batches of ids before the indexes are made (one
 * sort each, instead of a million inserts into each). SQLite: a table without rowid, clustered by its key.
 */
import { PostgresAdapter, sql, type Kysely, type RawBuilder } from 'kysely'

/** Events copied per statement while filling. */
const BATCH = 50_000

/** The columns a row copies from its event, as the event's row names them. */
const COPIED = ['start_utc', 'end_utc', 'language', 'hide_from_listings', 'status', 'featured', 'author'] as const

/** The occurrence id of a single event, from the event's row `row` (`new`, or the table's name). */
function occurrenceId(row: string): RawBuilder<string> {
  const r = sql.raw(row)
  return sql<string>`case when ${r}.all_day = 1 then replace(substr(${r}.start_date, 1, 10), '-', '')
    else replace(replace(replace(${r}.start_utc, '-', ''), ':', ''), ' ', 'T') || 'Z' end`
}

/** The columns whose change on an event changes its row. */
const WATCHED = ['start_utc', 'end_utc', 'start_date', 'all_day', 'language', 'hide_from_listings', 'status', 'featured', 'author'] as const

export async function up(db: Kysely<any>): Promise<void> {
  const postgres = db.getExecutor().adapter instanceof PostgresAdapter
  let table = db.schema.createTable('event_occurrences')
    .addColumn('event_id', 'integer', (c) => c.notNull().references('events.id').onDelete('cascade'))
    .addColumn('occurrence', 'text', (c) => c.notNull())
    .addColumn('start_utc', 'text', (c) => c.notNull())
    .addColumn('end_utc', 'text', (c) => c.notNull())
    .addColumn('language', 'text', (c) => c.notNull())
    .addColumn('hide_from_listings', 'integer', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('featured', 'integer', (c) => c.notNull())
    .addColumn('author', 'integer')
    .addPrimaryKeyConstraint('event_occurrences_pk', ['event_id', 'occurrence'])
    .addCheckConstraint('event_occurrences_end_not_before_start', sql`end_utc >= start_utc`)
  if (!postgres) table = table.modifyEnd(sql`without rowid`)
  await table.execute()

  const columns = sql.join(['event_id', 'occurrence', ...COPIED].map((c) => sql.id(c)))
  const copied = sql.join(COPIED.map((c) => sql`events.${sql.id(c)}`))
  const top = Number((await db.selectFrom('events').select((eb) => eb.fn.max('id').as('top')).executeTakeFirst())?.top ?? 0)
  for (let from = 0; from < top; from += BATCH) {
    await sql`insert into event_occurrences (${columns})
      select events.id, ${occurrenceId('events')}, ${copied} from events where events.id > ${from} and events.id <= ${from + BATCH}
      order by events.id`.execute(db)
  }

  await db.schema.createIndex('occurrences_listing_cover').on('event_occurrences')
    .columns(['language', 'hide_from_listings', 'start_utc', 'event_id', 'occurrence', 'status', 'end_utc']).execute()
  await db.schema.createIndex('occurrences_by_event_start').on('event_occurrences')
    .columns(['event_id', 'start_utc', 'occurrence', 'language', 'hide_from_listings', 'status', 'end_utc', 'featured', 'author']).execute()
  // The events' own listing index served only lists: the occurrences' serves them now. (`events_by_id_listing`
  // stays: the fill of event documents reads the events' ids and statuses from it.)
  await db.schema.dropIndex('events_listing_cover').execute()

  const values = sql.join([sql`new.id`, occurrenceId('new'), ...COPIED.map((c) => sql`new.${sql.id(c)}`)])
  const set = sql.join([sql`occurrence = ${occurrenceId('new')}`, ...COPIED.map((c) => sql`${sql.id(c)} = new.${sql.id(c)}`)])
  const changed = sql.join(WATCHED.map((c) => postgres
    ? sql`old.${sql.id(c)} is distinct from new.${sql.id(c)}`
    : sql`old.${sql.id(c)} is not new.${sql.id(c)}`), sql` or `)
  const watched = sql.join(WATCHED.map((c) => sql.id(c)))
  if (postgres) {
    await sql`create function event_occurrences_follow() returns trigger language plpgsql set search_path from current as $$
      begin
        if tg_op = 'INSERT' then
          insert into event_occurrences (${columns}) values (${values});
        else
          update event_occurrences set ${set} where event_id = new.id;
        end if;
        return null;
      end $$`.execute(db)
    await sql`create trigger events_occurrences_insert after insert on events
      for each row execute function event_occurrences_follow()`.execute(db)
    await sql`create trigger events_occurrences_update after update of ${watched} on events
      for each row when (${changed}) execute function event_occurrences_follow()`.execute(db)
    // The data epoch (migration 0007): lists read these rows.
    await sql`create trigger event_occurrences_data_epoch after insert or update or delete or truncate on event_occurrences
      for each statement execute function data_epoch_moves()`.execute(db)
    return
  }
  await sql`create trigger events_occurrences_insert after insert on events
    begin insert into event_occurrences (${columns}) values (${values}); end`.execute(db)
  await sql`create trigger events_occurrences_update after update of ${watched} on events when ${changed}
    begin update event_occurrences set ${set} where event_id = new.id; end`.execute(db)
  for (const action of ['insert', 'update', 'delete']) {
    await sql`create trigger ${sql.id(`event_occurrences_data_epoch_${action}`)} after ${sql.raw(action)} on event_occurrences
      begin update data_epoch set n = n + 1 where id = 1; end`.execute(db)
  }
}

export async function down(db: Kysely<any>): Promise<void> {
  const postgres = db.getExecutor().adapter instanceof PostgresAdapter
  await db.schema.createIndex('events_listing_cover').on('events')
    .columns(['language', 'hide_from_listings', 'start_utc', 'id', 'status', 'end_utc']).execute()
  if (postgres) {
    await sql`drop trigger events_occurrences_insert on events`.execute(db)
    await sql`drop trigger events_occurrences_update on events`.execute(db)
    await db.schema.dropTable('event_occurrences').execute()
    await sql`drop function event_occurrences_follow()`.execute(db)
    return
  }
  await sql`drop trigger events_occurrences_insert`.execute(db)
  await sql`drop trigger events_occurrences_update`.execute(db)
  await db.schema.dropTable('event_occurrences').execute()
}
