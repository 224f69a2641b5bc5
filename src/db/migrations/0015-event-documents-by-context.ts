/**
 * SQLite: an index of the event documents by context, which holds each document's context and event id
 * (the table's rowid) and nothing else. A node's fill (repositories/event-documents.ts `missing`) looks,
 * at every start, for the events that have no document of its context, 5,000 ids a statement: through
 * the table each look read a document's row, which fills a page of its own (a body is 4–6 kB), so a
 * pass over a database whose documents are all stored read every document's page (some 4 GB at
 * 1,000,000 events). Through this index it reads some 30 bytes an event. The fill names the index (the
 * planner prefers the table's primary key): 0014, which makes the table anew, makes it too
 * (`createDocumentsContextIndex`), and this migration makes it where 0014 ran before it existed.
 * Making it reads every document's row once: at 1,000,000 documents 0.9–1.2 s of the first start after
 * the upgrade, 4.8 s with nothing in the page cache (the table made anew and empty instead, as 0014 did,
 * would have left reads assembling for the minutes of the fill). PostgreSQL gets no such index: its look
 * reads each event's document through the primary key, and its rows keep the body aside (TOAST).
 */
import { PostgresAdapter, type Kysely } from 'kysely'
import { createDocumentsContextIndex } from './0009-event-documents.js'

export async function up(db: Kysely<any>): Promise<void> {
  await createDocumentsContextIndex(db)
}

export async function down(db: Kysely<any>): Promise<void> {
  if (db.getExecutor().adapter instanceof PostgresAdapter) return
  await db.schema.dropIndex('event_documents_context').ifExists().execute()
}
