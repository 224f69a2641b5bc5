/**
 * Organizers: their own fields, row and record (CONTRACT §2) for the shared linked-post rules.
 */
import type { OrganizerRow } from '../db/schema.js'
import { invalidParam } from '../http/errors.js'
import { asLanguage, type Schema, asStatus } from '../contract.js'
import type { LinkedKind } from './linked.js'
import { emptyToNull, isHttpUrl } from './posts.js'

type Organizer = Schema<'Organizer'>
type OrganizerColumns = Partial<Pick<OrganizerRow, 'phone' | 'website' | 'email'>>

/** A plain address check (local@domain.tld, no spaces); the schema's `format: email` runs first. */
const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/

export const ORGANIZER: LinkedKind<OrganizerRow, Organizer, Schema<'OrganizerCreate'>, Schema<'OrganizerUpdate'>, OrganizerColumns> = {
  table: 'organizers',
  resource: 'organizer',
  collection: 'organizers',
  link: { table: 'event_organizers', column: 'organizer_id' },
  searchColumns: ['name', 'description', 'phone', 'email', 'website'],

  rows: (db, ids) => db.selectFrom('organizers').selectAll().where('id', 'in', [...ids]).execute(),

  toRecord(row, extras) {
    return {
      id: row.id,
      author: row.author,
      status: asStatus(row.status),
      date: row.date,
      date_utc: row.date_utc,
      modified: row.modified,
      modified_utc: row.modified_utc,
      rest_url: `${extras.apiUrl}/organizers/${row.id}`,
      organizer: row.name,
      description: row.description,
      slug: row.slug,
      image: extras.image,
      phone: row.phone,
      website: row.website,
      email: row.email,
      ml_language: asLanguage(row.language),
      translations: extras.translations,
    }
  },

  fields(input) {
    const own: OrganizerColumns = {}
    if (input.phone !== undefined) own.phone = emptyToNull(input.phone) ?? null
    if (input.website !== undefined) {
      const website = emptyToNull(input.website) ?? null
      if (website !== null && !isHttpUrl(website)) throw invalidParam('website', 'invalidUrl')
      own.website = website
    }
    if (input.email !== undefined) {
      const email = emptyToNull(input.email) ?? null
      if (email !== null && !EMAIL.test(email)) throw invalidParam('email', 'invalidEmail')
      own.email = email
    }
    return {
      ...(input.organizer !== undefined ? { name: input.organizer } : {}),
      ...(input.description !== undefined ? { description: emptyToNull(input.description) ?? null } : {}),
      own,
    }
  },

  async insert(trx, values, own) {
    const { id } = await trx.insertInto('organizers').values({
      ...values,
      description: values.description ?? null,
      author: values.author ?? null,
      image_id: values.image_id ?? null,
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
