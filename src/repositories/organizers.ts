/**
 * Organizers: their row, record (CONTRACT §2) and own columns, for the shared linked-post queries.
 */
import type { Organizer } from '../contract.js'
import { sql } from 'kysely'
import { idListValue, inIdValue } from '../db/dialect.js'
import { prepared } from '../db/prepared.js'
import type { OrganizerRow } from '../db/schema.js'
import type { LinkedKind } from './linked.js'
import { postFields } from './posts.js'

/** An organizer's own columns as a write sets them. */
export type OrganizerColumns = Partial<Pick<OrganizerRow, 'phone' | 'website' | 'email'>>

/** Organizers' rows by id (a list of ids: `idListValue`), the statement built once (db/prepared.ts). */
const organizerRows = prepared(1, (db, list: number[] | string) => db.selectFrom('organizers').selectAll().where(inIdValue(db, sql.ref('id'), list)))

export const ORGANIZER: LinkedKind<OrganizerRow, Organizer, OrganizerColumns> = {
  table: 'organizers',
  resource: 'organizer',
  link: { table: 'event_organizers', column: 'organizer_id' },
  searchColumns: ['name', 'description', 'phone', 'email', 'website'],

  rows: async (db, ids) => {
    const list = idListValue(db, ids)
    return list === undefined ? [] : (await organizerRows(db, list)).rows
  },

  toRecord(row, { image, translations, site }) {
    return {
      ...postFields(row, site, 'organizers', image, translations),
      organizer: row.name,
      phone: row.phone,
      website: row.website,
      email: row.email,
    }
  },

  async insert(trx, values, own) {
    const { id } = await trx.insertInto('organizers').values({
      ...values,
      phone: own.phone ?? null,
      website: own.website ?? null,
      email: own.email ?? null,
    }).returning('id').executeTakeFirstOrThrow()
    return id
  },

  ownColumns: (own) => own,

  async update(trx, id, version, values, own) {
    const result = await trx.updateTable('organizers')
      .set({ ...values, ...own, version: version + 1 })
      .where('id', '=', id).where('version', '=', version)
      .executeTakeFirst()
    return Number(result.numUpdatedRows) === 1
  },
}
