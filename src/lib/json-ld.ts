/**
 * schema.org `Event` markup for an event record (single reads only): dates with offsets, the venues
 * as `Place` locations and the organizers, as search engines read them.
 */
import type { Schema } from '../contract.js'
import { isoWithOffset } from './dates.js'

type Event = Schema<'Event'>

function compact(value: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== null && v !== undefined && v !== ''))
}

/** The markup's `startDate` and `endDate` of an event record (a day for an all-day event, else the instant with its offset). */
export function jsonLdDates(event: Pick<Event, 'all_day' | 'start_date' | 'end_date' | 'utc_start_date' | 'utc_end_date' | 'timezone'>): { startDate: string; endDate: string } {
  return {
    startDate: event.all_day ? event.start_date.slice(0, 10) : isoWithOffset(event.utc_start_date, event.timezone),
    endDate: event.all_day ? event.end_date.slice(0, 10) : isoWithOffset(event.utc_end_date, event.timezone),
  }
}

export function eventJsonLd(event: Event): Record<string, unknown> {
  const location = event.venue.map((venue) => compact({
    '@type': 'Place',
    name: venue.venue,
    description: venue.description,
    address: compact({
      '@type': 'PostalAddress',
      streetAddress: venue.address,
      addressLocality: venue.city,
      addressRegion: venue.stateprovince ?? venue.state ?? venue.province,
      postalCode: venue.zip,
      addressCountry: venue.country,
    }),
    telephone: venue.phone,
    sameAs: venue.website,
    geo: venue.geo_lat !== null && venue.geo_lng !== null
      ? { '@type': 'GeoCoordinates', latitude: venue.geo_lat, longitude: venue.geo_lng }
      : null,
  }))
  const organizer = event.organizer.map((o) => compact({
    '@type': 'Organization', name: o.organizer, description: o.description, telephone: o.phone, email: o.email, url: o.website,
  }))
  const price = event.cost_details.values[0]
  const offers = price === undefined ? null : compact({
    '@type': 'Offer',
    price,
    priceCurrency: event.cost_details.currency_code,
    url: event.website,
  })
  return compact({
    '@context': 'https://schema.org',
    '@type': 'Event',
    name: event.title,
    description: event.excerpt ?? event.description,
    image: event.image?.url,
    url: event.website ?? event.rest_url,
    ...jsonLdDates(event),
    eventStatus: 'https://schema.org/EventScheduled',
    eventAttendanceMode: 'https://schema.org/OfflineEventAttendanceMode',
    location: location.length === 1 ? location[0] : location.length > 1 ? location : null,
    organizer: organizer.length === 1 ? organizer[0] : organizer.length > 1 ? organizer : null,
    offers,
  })
}
