/**
 * `translations` of a page of records (language → id of each version, itself included), in one query.
 */
import { sql, type Kysely } from 'kysely'
import { inIdList } from '../db/dialect.js'
import type { Database } from '../db/schema.js'

export type TranslatedTable = 'terms' | 'events' | 'venues' | 'organizers'

interface Member {
  id: number
  translation_group: number | null
  language: string
}

export async function translationsOf(db: Kysely<Database>, table: TranslatedTable, rows: ReadonlyArray<Member>): Promise<Map<number, Record<string, number>>> {
  const groups = [...new Set(rows.map((r) => r.translation_group ?? r.id))]
  const out = new Map<number, Record<string, number>>()
  if (groups.length === 0) return out
  const members = await db.selectFrom(table)
    .select(['id', 'translation_group', 'language'])
    .where(inIdList(db, sql.ref('translation_group'), groups))
    .orderBy('id')
    .execute()
  const byGroup = new Map<number, Record<string, number>>()
  for (const m of members) {
    const group = m.translation_group ?? m.id
    const map = byGroup.get(group) ?? {}
    map[m.language] = m.id
    byGroup.set(group, map)
  }
  for (const row of rows) out.set(row.id, byGroup.get(row.translation_group ?? row.id) ?? { [row.language]: row.id })
  return out
}
