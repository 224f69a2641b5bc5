/**
 * Venues: their row, record (CONTRACT §2) and own columns, for the shared linked-post queries.
 */
import type { Venue } from '../contract.js'
import { sql } from 'kysely'
import { idListValue, inIdValue } from '../db/dialect.js'
import { prepared } from '../db/prepared.js'
import type { Flag, VenueRow } from '../db/schema.js'
import type { LinkedKind } from './linked.js'
import { postFields } from './posts.js'

/** A venue's own columns as a write sets them (booleans become 0/1 here). */
export interface VenueColumns {
  address?: string | null
  city?: string | null
  country?: string | null
  province?: string | null
  state?: string | null
  zip?: string | null
  phone?: string | null
  stateprovince?: string | null
  website?: string | null
  show_map?: boolean
  show_map_link?: boolean
  geo_lat?: number | null
  geo_lng?: number | null
}

function stored(own: VenueColumns): Partial<Omit<VenueRow, 'show_map' | 'show_map_link'>> & { show_map?: Flag; show_map_link?: Flag } {
  const { show_map: showMap, show_map_link: showMapLink, ...rest } = own
  return {
    ...rest,
    ...(showMap !== undefined ? { show_map: showMap ? 1 : 0 } : {}),
    ...(showMapLink !== undefined ? { show_map_link: showMapLink ? 1 : 0 } : {}),
  }
}

/** Venues' rows by id (a list of ids: `idListValue`), the statement built once (db/prepared.ts). */
const venueRows = prepared(1, (db, list: number[] | string) => db.selectFrom('venues').selectAll().where(inIdValue(db, sql.ref('id'), list)))

export const VENUE: LinkedKind<VenueRow, Venue, VenueColumns> = {
  table: 'venues',
  resource: 'venue',
  link: { table: 'event_venues', column: 'venue_id' },
  searchColumns: ['name', 'description', 'address', 'city', 'country', 'province', 'state', 'stateprovince', 'zip', 'phone', 'website'],

  rows: async (db, ids) => {
    const list = idListValue(db, ids)
    return list === undefined ? [] : (await venueRows(db, list)).rows
  },

  toRecord(row, { image, translations, site }) {
    return {
      ...postFields(row, site, 'venues', image, translations),
      venue: row.name,
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
      geo_lat: site.geoloc ? row.geo_lat : null,
      geo_lng: site.geoloc ? row.geo_lng : null,
    }
  },

  async insert(trx, values, own) {
    const { id } = await trx.insertInto('venues').values({ ...values, ...stored(own) }).returning('id').executeTakeFirstOrThrow()
    return id
  },

  ownColumns: stored,

  async update(trx, id, version, values, own) {
    const result = await trx.updateTable('venues')
      .set({ ...values, ...stored(own), version: version + 1 })
      .where('id', '=', id).where('version', '=', version)
      .executeTakeFirst()
    return Number(result.numUpdatedRows) === 1
  },
}
