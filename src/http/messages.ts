/**
 * Texts of error messages, by key, with `{name}` placeholders. `{resource}` and `{Resource}` are filled
 * with the resource's name in the language served, so one template serves all five resources.
 */
import type { Language } from './language.js'

const EN = {
  noRoute: 'No route was found matching the URL and request method.',
  invalidNamespace: 'The specified namespace could not be found.',
  forbidden: 'Sorry, you are not allowed to do that.',
  invalidParams: 'Invalid parameter(s): {names}.',
  missingParams: 'Missing parameter(s): {names}.',
  invalidJson: 'Invalid JSON body passed.',
  badUrl: 'The request URL is malformed.',
  invalidRequest: 'The request could not be understood.',
  unsupportedMediaType: 'Unsupported media type "{type}": send application/json or application/x-www-form-urlencoded.',
  payloadTooLarge: 'The request body is larger than the limit of 1 MiB.',
  internalError: 'An internal error occurred; the request was not completed.',
  notFoundById: '{Resource} with ID {id} does not exist.',
  notFoundBySlug: '{Resource} with slug "{id}" does not exist.',
  archivePageNotFound: 'The requested {resource} archive page does not exist.',
  notAccessible: 'The requested {resource} is not accessible.',
  inTrash: 'The {resource} is already trashed.',
  preconditionFailed: 'The record has changed since it was read (If-Match does not match its current ETag).',
  termExists: 'A term with the name provided already exists with this parent.',
  parentNotFound: 'Parent term does not exist.',
  parentCycle: 'The parent would make the term its own ancestor.',
  parentLanguage: 'The parent term must be in the same language as the term.',
  unknownEvent: 'The {name} parameter must be the ID of an existing event.',
  translationOfMissing: 'translation_of must be the ID of an existing {resource}.',
  translationExists: 'The translation group already has a version in this language.',
  unknownUser: 'author must be the ID of an existing user.',
  statusNotAllowed: 'Only published records can be listed without the right to edit others.',
  required: '{name} is required.',
  invalidDate: '{name} is not a valid date: use YYYY-MM-DD HH:MM:SS or ISO 8601 with an offset.',
  unknownImage: 'image must be the ID of an existing image or an absolute http(s) URL.',
  invalidImage: 'image must be the ID of an existing image or an absolute http(s) URL.',
  invalidUrl: '{name} must be an absolute http(s) URL.',
  invalidEmail: '{name} must be an e-mail address.',
  geolocInactive: '{name} needs the geolocation extension: start the server with CALENDAR_EXTENSIONS=geoloc to enable it.',
  geoPair: 'geo_lat and geo_lng must be given together.',
  geolocPair: 'geoloc_lat and geoloc_lng must be given together.',
  unknownTerm: '{name}: no term "{value}" exists in this language.',
  unknownLinked: '{name}: there is no record with ID {value} in this language.',
  noLongerAvailable: 'This event is no longer available.',
  passwordProtected: 'The requested event is not accessible without a password.',
  ticketsInactive: 'Event Tickets is not active: this service has no ticketing module.',
  endBeforeStart: 'end_date must not be before start_date.',
  invalidTimezone: '{name} must be an IANA time zone name (such as Europe/Zurich) or an offset such as UTC+2.',
  invalidFilterDate: '{name} is not a date: use YYYY-MM-DD, YYYY-MM-DD HH:MM:SS, ISO 8601, a UNIX timestamp, now, today, tomorrow or yesterday.',
} as const

export type MessageKey = keyof typeof EN
export type MessageVars = Record<string, string>

type Catalog = Record<MessageKey, string>

const RESOURCE_NAMES: Record<Language, Record<string, string>> = {
  en: { event: 'event', venue: 'venue', organizer: 'organizer', category: 'category', tag: 'tag' },
  de: { event: 'event', venue: 'venue', organizer: 'organizer', category: 'category', tag: 'tag' },
  at: { event: 'event', venue: 'venue', organizer: 'organizer', category: 'category', tag: 'tag' },
  'ch-de': { event: 'event', venue: 'venue', organizer: 'organizer', category: 'category', tag: 'tag' },
  'ch-fr': { event: 'event', venue: 'venue', organizer: 'organizer', category: 'category', tag: 'tag' },
  es: { event: 'event', venue: 'venue', organizer: 'organizer', category: 'category', tag: 'tag' },
}

const CATALOGS: Record<Language, Catalog> = { en: EN, de: EN, at: EN, 'ch-de': EN, 'ch-fr': EN, es: EN }

function isMessageKey(key: string): key is MessageKey {
  return Object.hasOwn(EN, key)
}

/** The message for `key` in `language`; a string that is not a key is returned as it is. */
export function translate(language: Language, key: string, vars: MessageVars = {}): string {
  const template = isMessageKey(key) ? CATALOGS[language][key] : key
  const names = RESOURCE_NAMES[language]
  return template.replace(/\{(\w+)\}/g, (whole, name: string) => {
    if (name === 'resource' || name === 'Resource') {
      const word = names[vars.resource ?? ''] ?? vars.resource ?? ''
      return name === 'Resource' ? word.charAt(0).toUpperCase() + word.slice(1) : word
    }
    return vars[name] ?? whole
  })
}
