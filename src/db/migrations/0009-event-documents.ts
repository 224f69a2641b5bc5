/**
 * Event documents: the answer to an anonymous single read of an event (`GET /events/{id}`, JSON, JSON-LD
 * included) kept as the bytes sent, for published events without a password, as an anonymous caller is
 * shown them (linked venues and organizers it may not read left out). A read that finds one sends it: one
 * indexed statement, and the current records of its terms put in. One that does not assembles the record
 * and offers it to be stored (repositories/event-documents.ts, which also says when a document may be
 * stored at all).
 *
 * The terms an event shows are not in its document: a term's record changes with every event linked to
 * it or unlinked (its `count`), and a document per event showing it would go with each such write. The
 * document keeps the ids of its categories and tags and where their records go in the bytes; a read puts
 * their current records there (the read cache keeps them), and the ETag is made from the document's
 * digest and theirs (http/etag.ts `eventEtag`), as every read of an event makes it.
 *
 * Columns: `event_id`; `grp`, the event's translation group (`coalesce(translation_group, id)`), whose
 * every member shows the group's languages; `context`, a digest of what else the bytes depend on (the
 * public URL, the record format), so a node configured otherwise passes them by; `version`, the event's
 * stored version; `digest`, of the record without its terms; `body`, the JSON with the categories and tags
 * arrays empty; `category_ids` and `tag_ids` (comma-separated, in the order shown); `category_at` and
 * `tag_at`, the byte offsets inside those two empty arrays; `ld_from` and `ld_to`, the bytes a list leaves
 * out (`,"json_ld":{…}`: lists show the record without it).
 *
 * Never stale: triggers on both engines delete, in the writing statement's own transaction, every document
 * a write changes, whoever writes (the API, another node, raw SQL):
 * - events: the row's own document; and when a row comes or goes or changes language or group, the
 *   documents of its group, old and new (their `translations`);
 * - event_terms, event_venues, event_organizers: the linked event's document;
 * - venues, organizers: the documents of the events linked to the row (its name, its address); and when a
 *   row comes or goes or changes language or group, of the events linked to any member of its group, old
 *   and new (the linked record's `translations`);
 * - images: every document (the API only adds images; an image changed or removed by hand is rare);
 * - TRUNCATE of any of them (PostgreSQL): every document.
 * Terms need none: their records are read when the document is.
 * SQLite: row-level triggers. PostgreSQL: row-level triggers through one function per table (`set
 * search_path from current`, as the data epoch's), and statement-level ones for TRUNCATE.
 */
import { PostgresAdapter, sql, type CreateTableBuilder, type Kysely, type RawBuilder } from 'kysely'

/** The linked tables: the record's table, the link table and its column. */
const LINKED = [
  { table: 'venues', links: 'event_venues', column: 'venue_id' },
  { table: 'organizers', links: 'event_organizers', column: 'organizer_id' },
] as const

const LINK_TABLES = ['event_terms', 'event_venues', 'event_organizers'] as const

/** Every table whose write may change a document. */
export const DOCUMENT_SOURCES = ['events', ...LINK_TABLES, ...LINKED.map((l) => l.table), 'images'] as const

type Row = 'old' | 'new'

const group = (row: Row) => sql`coalesce(${sql.raw(row)}.translation_group, ${sql.raw(row)}.id)`
/** Whether an update moved the row to another language or group (the group's `translations` change). */
const regrouped = sql`(old.language is not new.language or old.translation_group is not new.translation_group)`
const regroupedPg = sql`(old.language is distinct from new.language or old.translation_group is distinct from new.translation_group)`

/** Deletes the documents of the events linked to the row. */
function linkedTo(l: (typeof LINKED)[number], row: Row): RawBuilder<unknown> {
  return sql`delete from event_documents where event_id in (select event_id from ${sql.table(l.links)} where ${sql.ref(l.column)} = ${sql.raw(row)}.id)`
}

/** Deletes the documents of the events linked to any member of the row's translation group. */
function linkedToGroup(l: (typeof LINKED)[number], row: Row): RawBuilder<unknown> {
  return sql`delete from event_documents where event_id in (select k.event_id from ${sql.table(l.links)} k
    where k.${sql.raw(l.column)} in (select m.id from ${sql.table(l.table)} m where m.translation_group = ${group(row)} or m.id = ${group(row)}))`
}

/**
 * Creates the documents table and its group index. `bodyLast`: the body after the small columns (migration
 * 0014), so that reading them does not walk the body's overflow pages; 0009 made it with the body sixth.
 * The table as it is now (`bodyLast`) also gets, on SQLite, its index by context (migration 0015), which
 * a table made anew would otherwise lack.
 */
export async function createDocumentsTable(db: Kysely<any>, bodyLast: boolean): Promise<void> {
  const postgres = db.getExecutor().adapter instanceof PostgresAdapter
  const body = (t: CreateTableBuilder<string, string>): CreateTableBuilder<string, string> => t.addColumn('body', postgres ? 'bytea' : 'blob', (c) => c.notNull())
  let table: CreateTableBuilder<string, string> = db.schema.createTable('event_documents')
    .addColumn('event_id', postgres ? 'bigint' : 'integer', (c) => c.primaryKey())
    .addColumn('grp', postgres ? 'bigint' : 'integer', (c) => c.notNull())
    .addColumn('context', 'text', (c) => c.notNull())
    .addColumn('version', 'integer', (c) => c.notNull())
    .addColumn('digest', 'text', (c) => c.notNull())
  if (!bodyLast) table = body(table)
  table = table
    .addColumn('category_ids', 'text', (c) => c.notNull())
    .addColumn('tag_ids', 'text', (c) => c.notNull())
    .addColumn('category_at', 'integer', (c) => c.notNull())
    .addColumn('tag_at', 'integer', (c) => c.notNull())
    .addColumn('ld_from', 'integer', (c) => c.notNull())
    .addColumn('ld_to', 'integer', (c) => c.notNull())
  if (bodyLast) table = body(table)
  await table.execute()
  await db.schema.createIndex('event_documents_group').on('event_documents').column('grp').execute()
  if (bodyLast) await createDocumentsContextIndex(db)
}

/** SQLite: the documents' index by context (migration 0015), unless there is one; nothing on PostgreSQL. */
export async function createDocumentsContextIndex(db: Kysely<any>): Promise<void> {
  if (db.getExecutor().adapter instanceof PostgresAdapter) return
  await db.schema.createIndex('event_documents_context').ifNotExists().on('event_documents').column('context').execute()
}

export async function up(db: Kysely<any>): Promise<void> {
  await createDocumentsTable(db, false)
  if (db.getExecutor().adapter instanceof PostgresAdapter) await upPostgres(db)
  else await upSqlite(db)
}

async function trigger(db: Kysely<any>, name: string, when: string, table: string, body: RawBuilder<unknown>[], condition?: RawBuilder<unknown>): Promise<void> {
  const statements = sql.join(body.map((s) => sql`${s};`), sql` `)
  await sql`create trigger ${sql.id(name)} after ${sql.raw(when)} on ${sql.table(table)}
    ${condition === undefined ? sql`` : sql`when ${condition}`}
    begin ${statements} end`.execute(db)
}

async function upSqlite(db: Kysely<any>): Promise<void> {
  const own = (row: Row) => sql`delete from event_documents where event_id = ${sql.raw(row)}.id`
  const ofGroup = (row: Row) => sql`delete from event_documents where grp = ${group(row)}`
  await trigger(db, 'events_documents_insert', 'insert', 'events', [ofGroup('new')])
  await trigger(db, 'events_documents_update', 'update', 'events', [own('old')])
  await trigger(db, 'events_documents_regroup', 'update', 'events', [ofGroup('old'), ofGroup('new')], regrouped)
  await trigger(db, 'events_documents_delete', 'delete', 'events', [own('old'), ofGroup('old')])
  for (const table of LINK_TABLES) {
    const event = (row: Row) => sql`delete from event_documents where event_id = ${sql.raw(row)}.event_id`
    await trigger(db, `${table}_documents_insert`, 'insert', table, [event('new')])
    await trigger(db, `${table}_documents_update`, 'update', table, [event('old'), event('new')])
    await trigger(db, `${table}_documents_delete`, 'delete', table, [event('old')])
  }
  for (const l of LINKED) {
    await trigger(db, `${l.table}_documents_insert`, 'insert', l.table, [linkedToGroup(l, 'new')])
    await trigger(db, `${l.table}_documents_update`, 'update', l.table, [linkedTo(l, 'old')])
    await trigger(db, `${l.table}_documents_regroup`, 'update', l.table, [linkedToGroup(l, 'old'), linkedToGroup(l, 'new')], regrouped)
    await trigger(db, `${l.table}_documents_delete`, 'delete', l.table, [linkedTo(l, 'old'), linkedToGroup(l, 'old')])
  }
  for (const action of ['update', 'delete']) {
    await trigger(db, `images_documents_${action}`, action, 'images', [sql`delete from event_documents`])
  }
}

async function upPostgres(db: Kysely<any>): Promise<void> {
  const fn = async (name: string, body: RawBuilder<unknown>) => sql`create function ${sql.id(name)}() returns trigger language plpgsql
    set search_path from current as $$ begin ${body} return null; end $$`.execute(db)
  const rowTrigger = async (table: string, name: string) => sql`create trigger ${sql.id(`${table}_documents`)}
    after insert or update or delete on ${sql.table(table)} for each row execute function ${sql.id(name)}()`.execute(db)
  const own = (row: Row) => sql`delete from event_documents where event_id = ${sql.raw(row)}.id;`
  const ofGroup = (row: Row) => sql`delete from event_documents where grp = ${group(row)};`
  await fn('events_documents_drop', sql`
    if tg_op = 'INSERT' then ${ofGroup('new')}
    elsif tg_op = 'UPDATE' then ${own('old')} if ${regroupedPg} then ${ofGroup('old')} ${ofGroup('new')} end if;
    else ${own('old')} ${ofGroup('old')} end if;`)
  await rowTrigger('events', 'events_documents_drop')
  for (const table of LINK_TABLES) {
    const event = (row: Row) => sql`delete from event_documents where event_id = ${sql.raw(row)}.event_id;`
    await fn(`${table}_documents_drop`, sql`
      if tg_op <> 'INSERT' then ${event('old')} end if;
      if tg_op <> 'DELETE' then ${event('new')} end if;`)
    await rowTrigger(table, `${table}_documents_drop`)
  }
  for (const l of LINKED) {
    await fn(`${l.table}_documents_drop`, sql`
      if tg_op = 'INSERT' then ${linkedToGroup(l, 'new')};
      elsif tg_op = 'UPDATE' then ${linkedTo(l, 'old')}; if ${regroupedPg} then ${linkedToGroup(l, 'old')}; ${linkedToGroup(l, 'new')}; end if;
      else ${linkedTo(l, 'old')}; ${linkedToGroup(l, 'old')}; end if;`)
    await rowTrigger(l.table, `${l.table}_documents_drop`)
  }
  await fn('event_documents_drop_all', sql`delete from event_documents;`)
  await sql`create trigger images_documents after update or delete on images for each statement execute function event_documents_drop_all()`.execute(db)
  for (const table of DOCUMENT_SOURCES) {
    await sql`create trigger ${sql.id(`${table}_documents_truncate`)} after truncate on ${sql.table(table)}
      for each statement execute function event_documents_drop_all()`.execute(db)
  }
}

export async function down(db: Kysely<any>): Promise<void> {
  const postgres = db.getExecutor().adapter instanceof PostgresAdapter
  if (postgres) {
    await sql`drop table event_documents`.execute(db)
    for (const table of DOCUMENT_SOURCES) {
      await sql`drop trigger if exists ${sql.id(`${table}_documents`)} on ${sql.table(table)}`.execute(db)
      await sql`drop trigger ${sql.id(`${table}_documents_truncate`)} on ${sql.table(table)}`.execute(db)
      if (table !== 'images') await sql`drop function ${sql.id(`${table}_documents_drop`)}()`.execute(db)
    }
    await sql`drop function event_documents_drop_all()`.execute(db)
    return
  }
  const { rows } = await sql<{ name: string }>`select name from sqlite_master where type = 'trigger' and name like '%documents%'`.execute(db)
  for (const { name } of rows) await sql`drop trigger ${sql.id(name)}`.execute(db)
  await db.schema.dropTable('event_documents').execute()
}
