/**
 * A venue body's own fields, checked (CONTRACT §2): texts (an empty one clears the field), the website,
 * the map flags, and coordinates, which only the `geoloc` extension takes and only as a pair.
 */
import type { Schema } from '../contract.js'
import { geolocInactive, invalidParam } from '../http/errors.js'
import { emptyToNull } from '../lib/text.js'
import { isHttpUrl } from '../lib/urls.js'
import type { VenueColumns } from '../repositories/venues.js'
import type { LinkedFields } from './linked-input.js'

const TEXT_FIELDS = ['address', 'city', 'country', 'province', 'state', 'zip', 'phone', 'stateprovince'] as const

/** `show_map*` are written as booleans or as "1"/"0"/"true"/"false"/"yes"/"no". */
function flag(value: boolean | string): boolean {
  return value === true || value === 'true' || value === '1' || value === 'yes'
}

export function venueFields(input: Schema<'VenueCreate'> | Schema<'VenueUpdate'>, geoloc: boolean): LinkedFields<VenueColumns> {
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
}
