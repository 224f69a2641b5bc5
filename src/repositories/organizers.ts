/**
 * Organizers: their row, record (CONTRACT §2) and own columns, for the shared linked-post queries.
 */
import { asLanguage, asStatus, type Organizer } from '../contract.js'
import type { OrganizerRow } from '../db/schema.js'
import type { LinkedKind } from './linked.js'

/** An organizer's own columns as a write sets them. */
export type OrganizerColumns = Partial<Pick<OrganizerRow, 'phone' | 'website' | 'email'>>

export const ORGANIZER: LinkedKind<OrganizerRow, Organizer, OrganizerColumns> = {
  table: 'organizers',
  resource: 'organizer',
  link: { table: 'event_organizers', column: 'organizer_id' },
  searchColumns: ['name', 'description', 'phone', 'email', 'website'],

  rows: (db, ids) => db.selectFrom('organizers').selectAll().where('id', 'in', [...ids]).execute(),

  toRecord(row, { image, translations, site }) {
    return {
      id: row.id,
      author: row.author,
      status: asStatus(row.status),
      date: row.date,
      date_utc: row.date_utc,
      modified: row.modified,
      modified_utc: row.modified_utc,
      rest_url: `${site.apiUrl}/organizers/${row.id}`,
      organizer: row.name,
      description: row.description,
      slug: row.slug,
      image,
      phone: row.phone,
      website: row.website,
      email: row.email,
      ml_language: asLanguage(row.language),
      translations,
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

  async update(trx, id, version, values, own) {
    const result = await trx.updateTable('organizers')
      .set({ ...values, ...own, version: version + 1 })
      .where('id', '=', id).where('version', '=', version)
      .executeTakeFirst()
    return Number(result.numUpdatedRows) === 1
  },
}
