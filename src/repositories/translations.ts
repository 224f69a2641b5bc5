/**
 * Translation groups: the versions of one record in several languages share a group (the id of the
 * first). Records carry `translations` (language → id of each version, itself included).
 */
import { sql, type SqlBool } from 'kysely'
import { idListValue, inIdValue, isPostgres } from '../db/dialect.js'
import { prepared } from '../db/prepared.js'
import type { Taxonomy } from '../db/schema.js'
import type { Owned } from '../lib/rights.js'
import { withVersionStates } from '../lib/translation-view.js'
import { recordChange, type ChangedResource, type Db, type Tx } from '../db/unit-of-work.js'

export type TranslatedTable = 'terms' | 'events' | 'venues' | 'organizers'

interface Member {
  id: number
  translation_group: number | null
  language: string
}

/** The members of the translation groups a list of ids names (`idListValue`), by id. */
const membersOf = (table: TranslatedTable) => prepared(1, (db, list: number[] | string) => db.selectFrom(table)
  .select(['id', 'translation_group', 'language'])
  .where(inIdValue(db, sql.ref('translation_group'), list))
  .orderBy('id'))
const groupMembers = { terms: membersOf('terms'), events: membersOf('events'), venues: membersOf('venues'), organizers: membersOf('organizers') }

/**
 * The same for venues and organizers, with each version's status and author (who may read it). The
 * members are found in the translation index (which holds their ids) and read by id: most records are
 * alone in no group (`translation_group` null), so the statistics make a lookup by group look as dear as
 * reading the table, and the planner would read the table whole for the two columns the index lacks.
 */
const postMembersOf = (table: 'venues' | 'organizers') => prepared(1, (db, list: number[] | string) => db.selectFrom(table)
  .select(['id', 'translation_group', 'language', 'status', 'author'])
  .where(sql<SqlBool>`id in (select g.id from ${sql.table(table)} g where ${inIdValue(db, sql.ref('g.translation_group'), list)})`)
  .orderBy('id'))
const postGroupMembers = { venues: postMembersOf('venues'), organizers: postMembersOf('organizers') }

/** The groups a page of records belongs to. */
const groupsOf = (rows: ReadonlyArray<Member>): number[] => [...new Set(rows.map((r) => r.translation_group ?? r.id))]

/** `translations` of a page of records, in one query. */
export async function translationsOf(db: Db, table: TranslatedTable, rows: ReadonlyArray<Member>): Promise<Map<number, Record<string, number>>> {
  const groups = groupsOf(rows)
  if (groups.length === 0) return new Map()
  const list = idListValue(db, groups)
  const members: Array<Member & Partial<Owned>> = list === undefined
    ? []
    : table === 'venues' || table === 'organizers' ? (await postGroupMembers[table](db, list)).rows : (await groupMembers[table](db, list)).rows
  return translationsFrom(rows, members)
}

/**
 * `translations` of terms, venues and organizers together (what a create's answer shows: event-records.ts
 * `writtenEventRecord`), in one statement where `translationsOf` takes one a table: the same members, read the same way.
 */
export async function linkedTranslations(
  db: Db, terms: ReadonlyArray<Member>, venues: ReadonlyArray<Member>, organizers: ReadonlyArray<Member>,
): Promise<{ terms: Map<number, Record<string, number>>; venues: Map<number, Record<string, number>>; organizers: Map<number, Record<string, number>> }> {
  const lists = [terms, venues, organizers].map((rows) => idListValue(db, groupsOf(rows)) ?? (isPostgres(db) ? [] : '[]'))
  const { rows } = lists.every((list) => list.length === 0 || list === '[]')
    ? { rows: [] }
    : await linkedMembers(db, lists[0] as number[] | string, lists[1] as number[] | string, lists[2] as number[] | string)
  const of = (table: number) => rows.filter((r) => Number(r.t) === table).map(({ t: _t, status, author, ...member }) => (table === 0 ? member : { ...member, status, author: author ?? null }) as Member & Partial<Owned>)
  return { terms: translationsFrom(terms, of(0)), venues: translationsFrom(venues, of(1)), organizers: translationsFrom(organizers, of(2)) }
}

/** `groupMembers.terms` and `postGroupMembers`' venues and organizers in one statement, each row marked with its table (0, 1, 2). */
const linkedMembers = prepared(3, (db, terms: number[] | string, venues: number[] | string, organizers: number[] | string) => {
  const posts = (table: 'venues' | 'organizers', list: number[] | string) => sql`select id, translation_group, language, status, author from ${sql.table(table)}
    where id in (select g.id from ${sql.table(table)} g where ${inIdValue(db, sql.ref('g.translation_group'), list)})`
  return sql<Member & { t: number; status: string | null; author: number | null }>`select * from (
    select 0 as t, id, translation_group, language, null as status, null as author from terms where ${inIdValue(db, sql.ref('translation_group'), terms)}
    union all select 1 as t, p.* from (${posts('venues', venues)}) p
    union all select 2 as t, o.* from (${posts('organizers', organizers)}) o
  ) m order by t, id`
})

/** `translations` of `rows` from their groups' `members` (with each one's status and author, for venues and organizers). */
function translationsFrom(rows: ReadonlyArray<Member>, members: ReadonlyArray<Member & Partial<Owned>>): Map<number, Record<string, number>> {
  const out = new Map<number, Record<string, number>>()
  if (rows.length === 0) return out
  const byGroup = new Map<number, Record<string, number>>()
  const states = new Map<number, Map<number, Owned>>()
  for (const m of members) {
    const group = m.translation_group ?? m.id
    const map = byGroup.get(group) ?? {}
    map[m.language] = m.id
    byGroup.set(group, map)
    if (m.status !== undefined) {
      const known = states.get(group) ?? new Map<number, Owned>()
      known.set(m.id, { status: m.status, author: m.author ?? null })
      states.set(group, known)
    }
  }
  // Who may read each version goes with the map (`lib/translation-view.ts`).
  for (const [group, known] of states) {
    const map = byGroup.get(group)
    if (map !== undefined) withVersionStates(map, known)
  }
  for (const row of rows) out.set(row.id, byGroup.get(row.translation_group ?? row.id) ?? { [row.language]: row.id })
  return out
}

/** The translation group of record `source` of `table` (terms: of this taxonomy); undefined when there is none. */
export async function translationGroupOf(db: Db, table: TranslatedTable, source: number, taxonomy?: Taxonomy): Promise<number | undefined> {
  if (!Number.isSafeInteger(source)) return undefined
  let query = db.selectFrom(table).select(['id', 'translation_group']).where('id', '=', source)
  if (taxonomy !== undefined) query = query.where(sql.ref('taxonomy'), '=', taxonomy)
  const row = await query.executeTakeFirst()
  return row === undefined ? undefined : row.translation_group ?? row.id
}

/**
 * Whether a create's look at a translation group locks what it read (PostgreSQL, events): creates, PATCHes and
 * deletes of events run beside each other there (issue 49), and a version that joins a group must not commit unseen
 * by a concurrent write of another version that reports the group's others as changed (`groupSeenOtherwise`,
 * `reportGroupChanged`), nor join a source trashed or deleted meanwhile. Locked for share until the create commits,
 * the group's versions make such a write wait for the create (and then see the new version), or the create wait for
 * it (and then read what it left). Venues, organizers and terms are written alone: nothing to lock.
 */
function lockedForShare(db: Db, table: TranslatedTable): boolean {
  return table === 'events' && db.isTransaction && isPostgres(db)
}

/** The translation group, status and author of event, venue or organizer `source`, or undefined when there is none. */
export async function translationSource(db: Db, table: 'events' | 'venues' | 'organizers', source: number): Promise<{ group: number; status: string; author: number | null } | undefined> {
  if (!Number.isSafeInteger(source)) return undefined
  const query = db.selectFrom(table).select(['id', 'translation_group', 'status', 'author']).where('id', '=', source)
  const row = await (lockedForShare(db, table) ? query.forShare() : query).executeTakeFirst()
  return row === undefined ? undefined : { group: row.translation_group ?? row.id, status: row.status, author: row.author }
}

/** Whether a translation group already has a version in `language`. */
export async function groupHasLanguage(db: Db, table: TranslatedTable, group: number, language: string): Promise<boolean> {
  if (lockedForShare(db, table)) {
    // Every version of the group locked, not only one in `language`: see `lockedForShare`.
    const members = await db.selectFrom('events').select('language').where('translation_group', '=', group).forShare().execute()
    return members.some((member) => member.language === language)
  }
  const row = await db.selectFrom(table).select('id').where('translation_group', '=', group).where('language', '=', language).executeTakeFirst()
  return row !== undefined
}

/**
 * Version `id` of a record of `table` changed status or author: who may read it changed, so the other
 * versions' `translations` show it to other callers. Each other version is updated (a change-log entry
 * and its version moved on, so that its ETag, the read cache and the stored event documents follow, as
 * when an event loses a link); its `modified` stays.
 */
export async function groupSeenOtherwise(trx: Tx, table: 'events' | 'venues' | 'organizers', resource: ChangedResource, id: number): Promise<void> {
  const row = await trx.selectFrom(table).select(['translation_group']).where('id', '=', id).executeTakeFirst()
  if (row === undefined || row.translation_group === null) return
  const others = await trx.updateTable(table).set((eb) => ({ version: eb('version', '+', 1) }))
    .where('translation_group', '=', row.translation_group).where('id', '!=', id).returning('id').execute()
  for (const other of others) recordChange(trx, { resource, id: other.id, action: 'update' })
}

/**
 * Reports the other versions in translation group `group` as changed: their `translations` name a
 * version that was just added to or removed from the group (`self`).
 */
export async function reportGroupChanged(trx: Tx, table: TranslatedTable, resource: ChangedResource, group: number, self: number): Promise<void> {
  const members = await trx.selectFrom(table).select('id').where('translation_group', '=', group).where('id', '!=', self).execute()
  for (const member of members) recordChange(trx, { resource, id: member.id, action: 'update' })
}
