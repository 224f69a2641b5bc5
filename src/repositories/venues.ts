/**
 * Venues: their own fields, row and record (CONTRACT §2) for the shared linked-post rules.
 */
import type { VenueRow } from '../db/schema.js'
import { ApiError, invalidParam } from '../http/errors.js'
import { asLanguage, type Schema, asStatus } from '../contract.js'
import type { LinkedKind } from './linked.js'
import { emptyToNull, isHttpUrl } from './posts.js'

type Venue = Schema<'Venue'>
type VenueCreate = Schema<'VenueCreate'>
type VenueUpdate = Schema<'VenueUpdate'>

const TEXT_FIELDS = ['address', 'city', 'country', 'province', 'state', 'zip', 'phone', 'stateprovince'] as const

type VenueColumns = Partial<Pick<VenueRow, (typeof TEXT_FIELDS)[number] | 'website' | 'show_map' | 'show_map_link' | 'geo_lat' | 'geo_lng'>>

/** `show_map*` are written as booleans or as "1"/"0"/"true"/"false"/"yes"/"no", stored as 0/1. */
function flag(value: boolean | string): 0 | 1 {
  return value === true || value === 'true' || value === '1' || value === 'yes' ? 1 : 0
}

export const geolocInactive = (field: string): ApiError =>
  new ApiError(400, 'geoloc-extension-inactive', 'geolocInactive', { name: field }, { reasons: { [field]: { key: 'geolocInactive', vars: { name: field } } } })

export const VENUE: LinkedKind<VenueRow, Venue, VenueCreate, VenueUpdate, VenueColumns> = {
  table: 'venues',
  resource: 'venue',
  collection: 'venues',
  link: { table: 'event_venues', column: 'venue_id' },
  searchColumns: ['name', 'description', 'address', 'city', 'country', 'province', 'state', 'stateprovince', 'zip', 'phone', 'website'],

  rows: (db, ids) => db.selectFrom('venues').selectAll().where('id', 'in', [...ids]).execute(),

  toRecord(row, extras) {
    return {
      id: row.id,
      author: row.author,
      status: asStatus(row.status),
      date: row.date,
      date_utc: row.date_utc,
      modified: row.modified,
      modified_utc: row.modified_utc,
      rest_url: `${extras.apiUrl}/venues/${row.id}`,
      venue: row.name,
      description: row.description,
      slug: row.slug,
      image: extras.image,
      address: row.address,
      city: row.city,
      country: row.country,
      province: row.province,
      state: row.state,
      zip: row.zip,
      phone: row.phone,
      website: row.website,
      stateprovince: row.stateprovince,
      show_map: row.show_map === 1,
      show_map_link: row.show_map_link === 1,
      geo_lat: extras.geoloc ? row.geo_lat : null,
      geo_lng: extras.geoloc ? row.geo_lng : null,
      ml_language: asLanguage(row.language),
      translations: extras.translations,
    }
  },

  fields(input, geoloc) {
    const own: VenueColumns = {}
    for (const field of TEXT_FIELDS) {
      const value = input[field]
      if (value !== undefined) own[field] = emptyToNull(value) ?? null
    }
    if (input.website !== undefined) {
      const website = emptyToNull(input.website)
      if (website !== null && website !== undefined && !isHttpUrl(website)) throw invalidParam('website', 'invalidUrl')
      own.website = website ?? null
    }
    if (input.show_map !== undefined) own.show_map = flag(input.show_map)
    if (input.show_map_link !== undefined) own.show_map_link = flag(input.show_map_link)
    if (input.geo_lat !== undefined || input.geo_lng !== undefined) {
      if (!geoloc) throw geolocInactive(input.geo_lat !== undefined ? 'geo_lat' : 'geo_lng')
      if (input.geo_lat === undefined || input.geo_lng === undefined || (input.geo_lat === null) !== (input.geo_lng === null)) {
        throw invalidParam(input.geo_lat === undefined || input.geo_lat === null ? 'geo_lat' : 'geo_lng', 'geoPair')
      }
      own.geo_lat = input.geo_lat
      own.geo_lng = input.geo_lng
    }
    return {
      ...(input.venue !== undefined ? { name: input.venue } : {}),
      ...(input.description !== undefined ? { description: emptyToNull(input.description) ?? null } : {}),
      own,
    }
  },

  async insert(trx, values, own) {
    const { name, ...rest } = values
    const { id } = await trx.insertInto('venues').values({
      ...rest,
      name,
      description: values.description ?? null,
      author: values.author ?? null,
      image_id: values.image_id ?? null,
      ...own,
    }).returning('id').executeTakeFirstOrThrow()
    return id
  },

  async update(trx, id, version, values, own) {
    const result = await trx.updateTable('venues')
      .set({ ...values, ...own, version: version + 1 })
      .where('id', '=', id).where('version', '=', version)
      .executeTakeFirst()
    return Number(result.numUpdatedRows) === 1
  },
}

