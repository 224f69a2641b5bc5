/**
 * Events as an iCalendar object (CONTRACT §14, RFC 5545), the one mapping from the contract's event
 * record to a VEVENT. ical-generator writes the text (escaping, CRLF, folding at 75 octets without
 * splitting a UTF-8 sequence); the VTIMEZONE definitions come from timezones-ical-library
 * (`ical-zones.ts`). Everything in the output derives from the records, so the same events give the
 * same bytes: DTSTAMP is the event's last modification, not the time of the request, which is what
 * lets a feed's ETag name its bytes and subscribers poll with `If-None-Match`.
 *
 * What each property is made of:
 * - UID `<id>@<host>`: the id never changes, so an event that moves keeps its UID (calendar apps
 *   update it instead of adding a copy); SEQUENCE is given by the caller (the stored version − 1).
 * - DTSTART/DTEND with the TZID of the event's zone, as the wall time of its UTC instant there (the
 *   JSON's `start_date`/`end_date`); all-day events as dates, DTEND the day after the last day; a manual
 *   offset such as `UTC+2` with a fixed-offset VTIMEZONE; an event in a zone without a definition, or at
 *   the second occurrence of a wall time that occurs twice, in UTC.
 * - A series (CONTRACT §17): one VEVENT with DTSTART;TZID, RRULE, RDATE and EXDATE (`ical-recurrence.ts`: one
 *   property per date, UNTIL in the form RFC 5545 wants for the DTSTART; a series without a rule has its DTSTART
 *   as an RDATE too, for readers that expand RDATEs alone), its TZID kept even for a first start
 *   at the second occurrence of a wall time (in UTC the RRULE would expand in UTC and lose the wall time:
 *   RFC-exact readers then place that first occurrence an hour earlier); plus one VEVENT per changed
 *   occurrence, made from the record as it stands for that occurrence, with the series' UID and SEQUENCE and
 *   a RECURRENCE-ID written as the series' DTSTART is (its TZID, UTC, or a date).
 * - DESCRIPTION is plain text (HTML converted, `plain-text.ts`), left out for password-protected events; LOCATION is the first venue's name and
 *   address, GEO its coordinates; ORGANIZER the first organizer (a `mailto:` address when it has an
 *   e-mail, else its website or `rest_url`); URL the website, else `rest_url`.
 */
import { createHash } from 'node:crypto'
import ical, { escape, foldLines, ICalCalendarMethod, ICalEvent, ICalEventStatus, type ICalCalendar, type ICalDayJsStub, type ICalEventData } from 'ical-generator'
import type { Event } from '../contract.js'
import { plainText } from './plain-text.js'
import { DAY, offsetFunction, utcMsToWallMs } from './time-zones.js'
import { recurrenceId, recurrenceLines } from './ical-recurrence.js'
import { vtimezone, zoneId } from './ical-zones.js'

/** An event as a feed shows it. */
export interface FeedEvent {
  /** The record as the caller may see it (linked records it may not read left out). */
  record: Event
  /** RFC 5545 SEQUENCE: 0 when created, one more with every update. */
  sequence: number
  /** A protected event is in the feed without its description. */
  passwordProtected: boolean
  /** A series (CONTRACT §17): its recurrence and its changed occurrences; absent for a single event. */
  series?: FeedSeries
}

/** A series' recurrence as the record shows it. */
export interface FeedRecurrence {
  rule: string | null
  rdates: readonly string[]
  exdates: readonly string[]
}

export interface FeedSeries {
  recurrence: FeedRecurrence
  /** The occurrences changed on their own, each a VEVENT of its own with the series' UID and a RECURRENCE-ID. */
  changed: readonly FeedOccurrence[]
}

/** A changed occurrence: the record as it stands for it, and its original start. */
export interface FeedOccurrence {
  record: Event
  /** The original start: the wall time in the event's zone (all-day: the day's 00:00:00) and its instant. */
  original: { start: string; startUtc: string }
}

export interface FeedOptions {
  /** The host of `{base_url}`: the right-hand side of every UID. */
  host: string
  /** X-WR-CALNAME. */
  name: string
  /** The site time zone (X-WR-TIMEZONE). */
  siteZone: string
}

export const PRODID = { company: 'calendar/events/v1', product: 'Calendar Events REST API', language: 'EN' }

/**
 * What the feed's bytes are made of besides the options and the events' records, versions and
 * protection: bump it when the output of the same inputs changes (a property added, another library
 * version), so that feed ETags made from the inputs (`http/ical.ts`) name the new bytes.
 */
export const FEED_FORMAT = 5

/**
 * The iCalendar text of `events`, in their order: the calendar's properties, a VTIMEZONE for every zone
 * the events use (in order of first use), then the VEVENTs. Each part is written by ical-generator
 * (escaping, folding); a VEVENT is written once per record object and kept with it (records are never
 * changed once made, and the read cache keeps them until they change), so a feed of events already
 * written is mostly concatenation.
 */
export function icalFeed(events: readonly FeedEvent[], options: FeedOptions): string {
  const vevents = events.flatMap((event) => {
    const master = vevent(event, options.host)
    if (event.series === undefined) return [master]
    // RECURRENCE-ID names the original start as the series' DTSTART is written (its TZID, UTC, or a date).
    const changed = event.series.changed.map((occurrence) => vevent(
      { record: occurrence.record, sequence: event.sequence, passwordProtected: event.passwordProtected },
      options.host,
      recurrenceId(occurrence.original, master.tzid, event.record.all_day),
    ))
    return [master, ...changed]
  })
  const tzids = new Set(vevents.flatMap((v) => (v.tzid === undefined ? [] : [v.tzid])))
  return [calendarHead(options), ...[...tzids].map(zoneBlock), ...vevents.map((v) => v.text), 'END:VCALENDAR\r\n'].join('')
}

/**
 * BEGIN:VCALENDAR and the calendar's properties (PRODID, VERSION, CALSCALE, METHOD, X-WR-CALNAME,
 * X-WR-TIMEZONE, REFRESH-INTERVAL), as ical-generator writes an empty calendar without END:VCALENDAR:
 * all before the first component (the library itself would write some after the VTIMEZONEs).
 */
function calendarHead(options: FeedOptions): string {
  const text = ical({
    prodId: PRODID,
    method: ICalCalendarMethod.PUBLISH,
    scale: 'GREGORIAN',
    // ical-generator writes NAME and X-WR-CALNAME as they are given: escaped here.
    name: escape(textOf(options.name), false),
    ttl: 60 * 60,
    x: [['X-WR-TIMEZONE', options.siteZone]],
  }).toString()
  return text.slice(0, text.lastIndexOf('END:VCALENDAR'))
}

const zoneBlocks = new Map<string, string>()

/** The VTIMEZONE of a TZID, as ical-generator puts a generator's block into a calendar (memoised per zone). */
function zoneBlock(tzid: string): string {
  let block = zoneBlocks.get(tzid)
  if (block === undefined) {
    const raw = vtimezone(tzid) ?? ''
    block = raw === '' ? '' : foldLines(raw.replace(/\r\n/g, '\n').replace(/\n/g, '\r\n').trim()) + '\r\n'
    zoneBlocks.set(tzid, block)
  }
  return block
}

/**
 * The calendar the VEVENTs are written for: without a calendar zone (DTSTAMP, CREATED and LAST-MODIFIED
 * in UTC; with one the library would write them as floating times), VTIMEZONEs from `ical-zones.ts`.
 */
const writer = ical({ timezone: { name: null, generator: vtimezone } })

interface Vevent {
  /** The folded VEVENT, CRLF-terminated. */
  text: string
  /** The TZID its DTSTART/DTEND name, if any. */
  tzid: string | undefined
}

/** VEVENTs per record object, by what else goes into one (host, SEQUENCE, protection). */
const written = new WeakMap<Event, Map<string, Vevent>>()

/**
 * The VEVENT of `event`: a single event, a series' master (with its RRULE, RDATE and EXDATE lines), or with
 * `recurrence` (a RECURRENCE-ID line) one changed occurrence of a series.
 */
function vevent(event: FeedEvent, host: string, recurrence?: string): Vevent {
  let forms = written.get(event.record)
  if (forms === undefined) {
    forms = new Map()
    written.set(event.record, forms)
  }
  const series = event.series?.recurrence
  const key = `${host} ${event.sequence} ${event.passwordProtected} ${recurrence ?? ''} ${series === undefined ? '' : JSON.stringify(series)}`
  let found = forms.get(key)
  if (found === undefined) {
    const data = eventData(event, host, series !== undefined)
    const tzid = data.data.timezone ?? undefined
    const lines = series === undefined ? [] : recurrenceLines(withStart(series, event.record), event.record.timezone, tzid, event.record.all_day)
    if (recurrence !== undefined) lines.push(recurrence)
    const extra = data.extra + lines.map((line) => `${line}\r\n`).join('')
    found = { text: foldLines(new FeedICalEvent(data.data, writer, extra).toString()), tzid }
    forms.set(key, found)
  }
  return found
}

/**
 * A series without a rule with its DTSTART among its RDATEs: RFC 5545 makes DTSTART the first instance either way
 * and ignores the duplicate, but ical.js 2.2 expands a VEVENT without RRULE from its RDATEs alone.
 */
function withStart(series: FeedRecurrence, record: Event): FeedRecurrence {
  if (series.rule !== null) return series
  const start = record.all_day ? record.start_date.slice(0, 10) : record.start_date
  return series.rdates.includes(start) ? series : { ...series, rdates: [start, ...series.rdates] }
}

/**
 * A date-time as ical-generator's documented `ICalDayJsStub` takes it: the record's own
 * `YYYY-MM-DD HH:MM:SS` text (a UTC time, or a wall time for a TZID), written as it is. No date library
 * converts it again: the text is what the JSON shows, and a feed of thousands of events is not
 * thousands of time-zone conversions.
 */
function stamp(text: string): ICalDayJsStub {
  const date = text.slice(0, 10).replaceAll('-', '')
  const time = text.slice(11, 19).replaceAll(':', '')
  const self: ICalDayJsStub = {
    format: (f) => (f === 'YYYYMMDD' ? date : f === 'HHmmss' ? time : `${date}T${time}`),
    isValid: () => true,
    toDate: () => new Date(`${text.slice(0, 10)}T${text.slice(11, 19)}Z`),
    toJSON: () => `${text.slice(0, 10)}T${text.slice(11, 19)}`,
    utc: () => self,
  }
  return self
}

const utc = stamp
/** A date as a stub (all-day events), `days` after the date of `text`. */
function day(text: string, days = 0): ICalDayJsStub {
  const ms = Date.parse(`${text.slice(0, 10)}T00:00:00Z`) + days * DAY
  return stamp(new Date(ms).toISOString().slice(0, 19).replace('T', ' '))
}

function eventData(event: FeedEvent, host: string, series: boolean): { data: ICalEventData; extra: string } {
  const { record } = event
  const data: ICalEventData = {
    id: `${record.id}@${host}`,
    sequence: event.sequence,
    stamp: utc(record.modified_utc),
    created: utc(record.date_utc),
    lastModified: utc(record.modified_utc),
    summary: textOf(record.title),
    description: event.passwordProtected || record.description === null ? null : textOf(plainText(record.description)),
    status: ICalEventStatus.CONFIRMED,
    categories: record.categories.map((c) => ({ name: textOf(c.name) })),
    ...dates(record, series),
    ...location(record),
  }
  const organizer = record.organizer[0]
  if (organizer?.email != null) data.organizer = { name: textOf(organizer.organizer), email: organizer.email }
  // The library writes an ORGANIZER only with an e-mail; without one it names the organizer by a URI of its own.
  // URL is written here too: the library escapes a URI like text (`,` → `\,`), which RFC 5545 does not do for
  // URIs; the website goes in as it is (a normalised URL holds no character a content line may not).
  const lines = [`URL:${record.website ?? record.rest_url}\r\n`]
  if (organizer !== undefined && organizer.email === null) {
    lines.push(`ORGANIZER;CN="${escape(textOf(organizer.organizer), true)}":${organizer.website ?? organizer.rest_url}\r\n`)
  }
  return { data, extra: lines.join('') }
}

/** `feedShown`'s digest per record object (records are never changed once made). */
const shownDigests = new WeakMap<Event, string>()

/**
 * A digest of what a VEVENT of `record` is written from (`eventData`, `dates`, `location`, the series' lines):
 * the members the feed shows, and no other, so that a feed's ETag (handlers/events.ts) moves with its bytes and
 * not with `translations`, `excerpt`, `slug`, a term's `count` or a venue's phone. Beside it the tag names the
 * SEQUENCE (the stored version), the protection and the calendar's options. Kept in step with `eventData`: a
 * member it reads that is missing here would leave a changed feed under its old tag.
 */
export function feedShownDigest(record: Event): string {
  let digest = shownDigests.get(record)
  if (digest === undefined) {
    const venue = record.venue[0]
    const organizer = record.organizer[0]
    const shown = [record.id, record.date_utc, record.modified_utc, record.title, record.description, record.all_day,
      record.start_date, record.end_date, record.utc_start_date, record.utc_end_date, record.timezone, record.website,
      record.rest_url, record.recurrence, record.occurrence?.id ?? null, record.categories.map((c) => c.name),
      venue === undefined ? null : [venue.venue, venue.address, venue.city, venue.stateprovince, venue.state, venue.province, venue.zip,
        venue.country, venue.geo_lat, venue.geo_lng],
      organizer === undefined ? null : [organizer.organizer, organizer.email, organizer.website, organizer.rest_url]]
    digest = createHash('sha256').update(JSON.stringify(shown)).digest('base64url').slice(0, 22)
    shownDigests.set(record, digest)
  }
  return digest
}

/**
 * DTSTART/DTEND: dates for all-day events, else wall times in the event's zone (a manual offset has a
 * fixed-offset VTIMEZONE); in UTC when the zone has no definition, or for the second occurrence of a
 * wall time that occurs twice (the hour the clocks go back): RFC 5545 §3.3.5 reads a local time with a
 * TZID as its first occurrence, so the first is written as one, and only the second needs UTC.
 */
function dates(record: Event, series: boolean): Pick<ICalEventData, 'start' | 'end' | 'allDay' | 'timezone'> {
  if (record.all_day) return { allDay: true, start: day(record.start_date), end: day(record.end_date, 1) }
  const zone = zoneId(record.timezone)
  // A series keeps its TZID whatever its first start (in UTC its RRULE would expand in UTC and lose the wall time).
  const secondOccurrence = !series && (isSecondOccurrence(record.utc_start_date, record.timezone) || isSecondOccurrence(record.utc_end_date, record.timezone))
  if (zone === undefined || secondOccurrence) {
    return { start: utc(record.utc_start_date), end: utc(record.utc_end_date) }
  }
  return { start: stamp(record.start_date), end: stamp(record.end_date), timezone: zone }
}

/** Whether the wall time of the UTC instant `text` in `zone` is also the wall time of an earlier instant. */
function isSecondOccurrence(text: string, zone: string): boolean {
  const offsetAt = offsetFunction(zone)
  const instant = Date.parse(`${text.slice(0, 10)}T${text.slice(11, 19)}Z`)
  const before = offsetAt(instant - DAY)
  const after = offsetAt(instant + DAY)
  if (before === after) return false
  const wall = utcMsToWallMs(instant, offsetAt)
  // The instants this wall time names: one per offset it holds under; ours is the second when another is earlier.
  return [before, after].some((offset) => wall - offset < instant && offsetAt(wall - offset) === offset)
}

function location(record: Event): Pick<ICalEventData, 'location'> {
  const venue = record.venue[0]
  if (venue === undefined) return {}
  const parts = [venue.venue, venue.address, venue.city, venue.stateprovince ?? venue.state ?? venue.province, venue.zip, venue.country]
  const title = textOf(parts.filter((p): p is string => p !== null && p.trim() !== '').join(', '))
  const geo = venue.geo_lat !== null && venue.geo_lng !== null ? { lat: venue.geo_lat, lon: venue.geo_lng } : undefined
  return { location: { title, ...(geo === undefined ? {} : { geo }) } }
}

/**
 * Text as RFC 5545 lets a TEXT value hold it: control characters other than tabs and line ends are not
 * TSAFE-CHARs (§3.3.11), so they are left out; a carriage return alone becomes a line end, which the
 * library escapes as `\n` (a raw one would end the content line).
 */
function textOf(text: string): string {
  return text.replace(/\r\n?/g, '\n').replace(/[\u0000-\u0008\u000B\u000C\u000E-\u001F\u007F]/g, '')
}

/** A VEVENT with lines the library does not write (URL, an ORGANIZER without e-mail), folded with the rest. */
class FeedICalEvent extends ICalEvent {
  private readonly extra: string

  constructor(data: ICalEventData, calendar: ICalCalendar, extra: string) {
    super(data, calendar)
    this.extra = extra
  }

  override toString(): string {
    const text = super.toString()
    return this.extra === '' ? text : text.replace(/END:VEVENT\r\n$/, `${this.extra}END:VEVENT\r\n`)
  }
}
