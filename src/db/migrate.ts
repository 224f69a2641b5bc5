/**
 * Migrations are listed here rather than found on disk, so they load the same under tsx, tap and a build.
 */
import { Migrator, sql, type Kysely, type Migration } from 'kysely'
import { isDatabaseUnavailable } from './faults.js'
import * as initial from './migrations/0001-initial.js'
import * as coveringListingIndex from './migrations/0002-covering-listing-index.js'
import * as changeLog from './migrations/0003-change-log.js'
import * as webhooks from './migrations/0004-webhooks.js'
import * as searchIndex from './migrations/0005-search-index.js'
import * as indexesAndDataVersion from './migrations/0006-indexes-and-data-version.js'
import * as dataEpoch from './migrations/0007-data-epoch.js'
import * as webhookIntakeIndex from './migrations/0008-webhook-intake-index.js'
import * as eventDocuments from './migrations/0009-event-documents.js'
import * as endNotBeforeStart from './migrations/0010-events-end-not-before-start.js'
import * as eventsByIdListingIndex from './migrations/0011-events-by-id-listing-index.js'
import * as searchPairs from './migrations/0012-search-pairs.js'
import * as searchMergesInWrites from './migrations/0013-search-merges-in-writes.js'
import * as documentsBodyLast from './migrations/0014-event-documents-body-last.js'
import * as documentsByContext from './migrations/0015-event-documents-by-context.js'
import * as idempotencyKeys from './migrations/0016-idempotency-keys.js'
import * as eventOccurrences from './migrations/0017-event-occurrences.js'
import * as recurringEvents from './migrations/0018-recurring-events.js'
import * as occurrenceFilters from './migrations/0019-occurrence-filters.js'
import * as eventsUnusedIndexes from './migrations/0020-events-unused-indexes.js'
import * as searchPairsPostgres from './migrations/0021-search-pairs-postgres.js'
import * as occurrenceDocumentRead from './migrations/0022-occurrence-document-read.js'
import * as eventDocumentRead from './migrations/0023-event-document-read.js'
import * as concurrentApiWrites from './migrations/0024-concurrent-api-writes.js'
import * as eventDocumentsRead from './migrations/0025-event-documents-read.js'
import * as keyEpoch from './migrations/0026-key-epoch.js'
import * as occurrenceDocumentsRead from './migrations/0027-occurrence-documents-read.js'

const migrations: Record<string, Migration> = {
  '0001-initial': initial,
  '0002-covering-listing-index': coveringListingIndex,
  '0003-change-log': changeLog,
  '0004-webhooks': webhooks,
  '0005-search-index': searchIndex,
  '0006-indexes-and-data-version': indexesAndDataVersion,
  '0007-data-epoch': dataEpoch,
  '0008-webhook-intake-index': webhookIntakeIndex,
  '0009-event-documents': eventDocuments,
  '0010-events-end-not-before-start': endNotBeforeStart,
  '0011-events-by-id-listing-index': eventsByIdListingIndex,
  '0012-search-pairs': searchPairs,
  '0013-search-merges-in-writes': searchMergesInWrites,
  '0014-event-documents-body-last': documentsBodyLast,
  '0015-event-documents-by-context': documentsByContext,
  '0016-idempotency-keys': idempotencyKeys,
  '0017-event-occurrences': eventOccurrences,
  '0018-recurring-events': recurringEvents,
  '0019-occurrence-filters': occurrenceFilters,
  '0020-events-unused-indexes': eventsUnusedIndexes,
  '0021-search-pairs-postgres': searchPairsPostgres,
  '0022-occurrence-document-read': occurrenceDocumentRead,
  '0023-event-document-read': eventDocumentRead,
  '0024-concurrent-api-writes': concurrentApiWrites,
  '0025-event-documents-read': eventDocumentsRead,
  '0026-key-epoch': keyEpoch,
  '0027-occurrence-documents-read': occurrenceDocumentsRead,
}

/**
 * Runs every migration not yet applied. `schema` (PostgreSQL): where the migration history lives, which
 * Kysely must be told, or it takes a history table of another schema of the same database for its own.
 * `ownTransaction: false`: the caller runs it inside a transaction of its own (Kysely then opens none).
 */
export async function migrateToLatest<DB>(db: Kysely<DB>, schema?: string, options: { ownTransaction?: boolean } = {}): Promise<void> {
  const migrator = new Migrator({
    db, provider: { getMigrations: async () => migrations },
    // A migration missing from the history runs even when later ones ran (a database made while
    // branches added 0004–0006 in another order; a migration's own test that applies it again). Each
    // migration stands on its own: none depends on one numbered after it.
    allowUnorderedMigrations: true,
    ...(schema !== undefined ? { migrationTableSchema: schema } : {}),
    ...(options.ownTransaction === false ? { disableTransactions: true } : {}),
  })
  for (let attempt = 1; ; attempt++) {
    const { error } = await migrator.migrateToLatest()
    if (error === undefined) return
    // Inside the caller's transaction a failed statement ends it: the caller tries again, whole.
    if (attempt < 5 && options.ownTransaction !== false && migrationMayBeRetried(error)) continue
    throw error instanceof Error ? error : new Error(String(error))
  }
}

/**
 * Whether a migration run failed only because another schema changed meanwhile, so that it may run again:
 * Kysely looks for its history tables by listing every table of the database, and on PostgreSQL that
 * listing fails when another schema drops a table (42P01, undefined_table) or is dropped itself (3F000,
 * invalid_schema_name) while it runs. Nothing was migrated then (the migrations run in a transaction,
 * under the migration lock).
 */
export function migrationMayBeRetried(error: unknown): boolean {
  return typeof error === 'object' && error !== null && 'code' in error && (error.code === '42P01' || error.code === '3F000')
}

/**
 * Whether every migration this build knows is applied (readiness): false when one is missing from the
 * history, and when the history cannot be read (no table, no connection).
 */
export async function migrationsApplied<DB>(db: Kysely<DB>): Promise<boolean> {
  let rows: Array<{ name: string }>
  try {
    rows = (await sql<{ name: string }>`select name from kysely_migration`.execute(db)).rows
  } catch (error) {
    // The history could not be read because the database cannot serve: that is the database's check
    // failing, not this one (CONTRACT §18: readiness names only what failed). What was last found holds.
    if (isDatabaseUnavailable(error)) return knownApplied.get(db) ?? false
    throw error
  }
  const applied = new Set(rows.map((r) => r.name))
  const all = Object.keys(migrations).every((name) => applied.has(name))
  knownApplied.set(db, all)
  return all
}

/** Per database, whether the migrations were applied when last looked at (the open migrated it: true). */
const knownApplied = new WeakMap<object, boolean>()

/** Whether the migrations were applied when last looked at (undefined if never). */
export function migrationsKnown(db: object): boolean | undefined {
  return knownApplied.get(db)
}

/** Notes that `db` was just migrated, or found migrated, by the open. */
export function markMigrated(db: object): void {
  knownApplied.set(db, true)
}

/**
 * Whether the history holds exactly the migrations this build knows (none missing, none unknown): then
 * opening needs no migrator, no lock and no look at the catalog (one statement instead of a dozen, about
 * 250 ms on PostgreSQL). Migrations commit whole, so a history that names them all describes the schema.
 * False when the history cannot be read (a new database): the migrator runs, under its lock.
 */
export async function migrationsCurrent<DB>(db: Kysely<DB>): Promise<boolean> {
  try {
    const { rows } = await sql<{ name: string }>`select name from kysely_migration`.execute(db)
    const applied = new Set(rows.map((r) => r.name))
    const known = Object.keys(migrations)
    return applied.size === known.length && known.every((name) => applied.has(name))
  } catch {
    return false
  }
}

/** Whether the database answers a query at all (readiness). */
export async function databaseAnswers<DB>(db: Kysely<DB>): Promise<boolean> {
  await sql`select 1`.execute(db)
  return true
}
