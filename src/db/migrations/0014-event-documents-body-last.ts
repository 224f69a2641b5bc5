/**
 * The event documents' body stored after their small columns. A body is 4–6 kB, more than a 4 kB SQLite
 * page holds, so it spills onto an overflow page; columns stored after it were reached by walking that
 * page (SQLite finds a column by walking the record up to it). Every read of a document reads them all:
 * ten documents (a page of a list) read in 41.7 µs instead of 47.5 (better-sqlite3 on a copy of the
 * benchmark's 20,000 documents, the same rows in both orders, alternately, 4 rounds of 20,000 reads), one
 * in 5.8 µs instead of 6.6. PostgreSQL keeps the same order (a body that long is compressed or kept aside
 * there, and its order matters little).
 *
 * The documents are a cache of what reads assemble (0009): the table is made anew and empty rather than
 * copied (which at a million events would write some 4 GB within the start), and a node's background fill
 * stores them again as it does on a new database, single reads assembling meanwhile. The triggers that
 * delete documents name the table, not a version of it, and stay as they are.
 */
import { sql, type Kysely } from 'kysely'
import { createDocumentsTable } from './0009-event-documents.js'

async function remake(db: Kysely<any>, bodyLast: boolean): Promise<void> {
  await sql`drop table event_documents`.execute(db)
  await createDocumentsTable(db, bodyLast)
}

export async function up(db: Kysely<any>): Promise<void> {
  await remake(db, true)
}

export async function down(db: Kysely<any>): Promise<void> {
  await remake(db, false)
}
