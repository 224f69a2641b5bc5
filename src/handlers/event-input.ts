/**
 * What an event write body means once checked (CONTRACT §5): its columns, its dates in its zone, its
 * image and its links resolved to ids (venues and organizers sent inline checked as creates of their
 * own). Every check refuses with the error the contract names, in the order of CONTRACT §1: the
 * fields (400), then the right to name another author (403).
 */
import type { Event, Language, Schema } from '../contract.js'
import { readAhead } from '../db/dialect.js'
import type { Db } from '../db/unit-of-work.js'
import { invalidParam } from '../http/errors.js'
import type { MessageKey } from '../http/messages.js'
import { formatUtc, parseBodyDate } from '../lib/dates.js'
import { writtenTimezone, eventDates, type EventDates } from '../lib/event-dates.js'
import { modifiedNow, nowDates } from '../lib/post-dates.js'
import { checkRecurrence, expandSeries, parseRule, type RecurrenceInput, type RecurrenceRefusal } from '../lib/recurrence.js'
import { canRead, statusToStore, type Caller } from '../lib/rights.js'
import { wantedSlug } from '../lib/slug.js'
import { emptyToNull } from '../lib/text.js'
import { isHttpUrl } from '../lib/urls.js'
import type { EventColumns, EventLinks, EventUpdate, NewEvent } from '../repositories/event-writes.js'
import { rowOf, type SeriesRows } from '../repositories/occurrence-writes.js'
import { linkable, linkableRead, type LinkedRow, type NewLinked } from '../repositories/linked.js'
import type { OrganizerColumns } from '../repositories/organizers.js'
import { termIdsNamed, termIdsNamedRead } from '../repositories/terms.js'
import type { VenueColumns } from '../repositories/venues.js'
import { checkNewLinked, type LinkedBody, type LinkedInput, type Writer } from './linked-input.js'
import { organizerFields } from './organizer-input.js'
import { checkAuthorExists, checkedImage, checkMayAssignAuthor, postDates, translationGroup } from './post-input.js'
import { venueFields } from './venue-input.js'

export type EventBody = Schema<'EventCreate'> | Schema<'EventUpdate'> | Schema<'EventUpdateBySlug'>

const VENUE_INPUT: LinkedInput<Schema<'VenueCreate'>, VenueColumns> = { table: 'venues', resource: 'venue', fields: venueFields }
const ORGANIZER_INPUT: LinkedInput<Schema<'OrganizerCreate'>, OrganizerColumns> = { table: 'organizers', resource: 'organizer', fields: (body) => organizerFields(body) }

/** The stored dates of an event record, which an update's dates are merged with. */
export function datesOf(record: Event): EventDates {
  return {
    timezone: record.timezone, all_day: record.all_day, start_date: record.start_date, end_date: record.end_date,
    start_utc: record.utc_start_date, end_utc: record.utc_end_date,
  }
}

/** The columns a body sets that need no lookup: texts, dates (merged with `current` on an update), flags. */
export function eventColumns(body: EventBody, current: EventDates | undefined, siteTz: string): Omit<EventColumns, 'modified' | 'modified_utc'> {
  const dates = eventDates(body, current, siteTz)
  if ('reason' in dates) throw invalidParam(dates.field, dates.reason)
  const columns: Omit<EventColumns, 'modified' | 'modified_utc'> = { ...dates }
  if (body.title !== undefined) columns.title = body.title
  if (body.description !== undefined) columns.description = emptyToNull(body.description) ?? null
  if (body.excerpt !== undefined) columns.excerpt = emptyToNull(body.excerpt) ?? null
  if (body.cost !== undefined) columns.cost = body.cost === null || body.cost === '' ? null : String(body.cost)
  if (body.website !== undefined) {
    const website = emptyToNull(body.website) ?? null
    if (website !== null && !isHttpUrl(website)) throw invalidParam('website', 'invalidUrl')
    columns.website = website
  }
  if ('password' in body && body.password !== undefined) columns.password = emptyToNull(body.password) ?? null
  for (const name of ['show_map', 'show_map_link', 'hide_from_listings', 'sticky', 'featured'] as const) {
    const value = body[name]
    if (value !== undefined) columns[name] = value
  }
  return columns
}

/** The message of each refusal of a `recurrence` (400 `rest_invalid_param` naming it). */
const RECURRENCE_MESSAGES: Record<RecurrenceRefusal, MessageKey> = {
  malformedRule: 'recurrenceMalformedRule',
  missingFrequency: 'recurrenceMissingFrequency',
  finerFrequency: 'recurrenceFinerFrequency',
  unsupportedPart: 'recurrenceUnsupportedPart',
  unknownPart: 'recurrenceUnknownPart',
  repeatedPart: 'recurrenceRepeatedPart',
  malformedValue: 'recurrenceMalformedValue',
  partNotForFrequency: 'recurrencePartNotForFrequency',
  bySetPosAlone: 'recurrenceBySetPosAlone',
  countWithUntil: 'recurrenceCountWithUntil',
  tooManyOccurrences: 'recurrenceTooManyOccurrences',
  malformedDate: 'recurrenceMalformedDate',
  tooManyDates: 'recurrenceTooManyDates',
  untilBeforeStart: 'recurrenceUntilBeforeStart',
  rdateBeforeStart: 'recurrenceRdateBeforeStart',
  noOccurrences: 'recurrenceNoOccurrences',
  tooSparse: 'recurrenceTooSparse',
}

/** A `recurrence` refused: 400 naming it, with the reason's message. */
export function refusedRecurrence(reason: RecurrenceRefusal) {
  return invalidParam('recurrence', RECURRENCE_MESSAGES[reason])
}

/** `recurrence` as a body sends it: undefined (not sent), null (single; an empty form value too), or the series. */
function sentRecurrence(body: EventBody): RecurrenceInput | null | undefined {
  const value = (body as { recurrence?: RecurrenceInput | null | '' }).recurrence
  return value === '' ? null : value
}

/** What a write makes of an event's series: the `recurrence` column, and its rows (null: single again). */
export interface SeriesChange {
  recurrence: string | null
  rows: SeriesRows | null
}

/**
 * What a write does to an event's series (CONTRACT §17): undefined when it leaves its occurrences as they
 * are (a single event, or a series whose dates and `recurrence` the body does not touch); else the
 * `recurrence` column to store and, for a series, its rows expanded up to `now + horizonDays` (pure, before
 * any transaction), or `rows: null` for an event made single again. A refusal is 400 naming `recurrence`.
 * `dates`: the event's dates as they will be; `current`: the stored recurrence (undefined on a create).
 */
export function seriesChange(body: EventBody, dates: EventDates, current: Event['recurrence'] | undefined, now: Date, horizonDays: number): SeriesChange | undefined {
  const sent = sentRecurrence(body)
  const datesTouched = body.timezone !== undefined || body.all_day !== undefined || body.start_date !== undefined || body.end_date !== undefined
  if (sent === undefined && (current === undefined || current === null || !datesTouched)) return undefined
  const input = sent === undefined ? current ?? null : sent
  if (input === null) return current === undefined || current === null ? undefined : { recurrence: null, rows: null }
  const checked = checkRecurrence(input, dates.all_day)
  if ('refused' in checked) throw refusedRecurrence(checked.refused)
  const horizonUtc = formatUtc(new Date(now.getTime() + horizonDays * 86_400_000))
  const expanded = expandSeries({
    timezone: dates.timezone, allDay: dates.all_day, start: dates.start_date, end: dates.end_date, startUtc: dates.start_utc, endUtc: dates.end_utc,
  }, checked, horizonUtc)
  if ('refused' in expanded) throw refusedRecurrence(expanded.refused)
  const unbounded = checked.parsed !== null && checked.parsed.count === undefined && checked.parsed.until === undefined
  return {
    recurrence: JSON.stringify({ rule: checked.rule, rdates: checked.rdates, exdates: checked.exdates }),
    rows: { occurrences: expanded.map(rowOf), throughUtc: unbounded ? horizonUtc : null },
  }
}

/**
 * The checks of an update body that need no record, made before it is looked up (CONTRACT §1: fields
 * are 400 before 404/410, 403 and 412): the time zone, the syntax of dates, the website, the image and
 * author named, and the fields of inline venues and organizers. What depends on the record (end before
 * start, terms and links in its language) is checked when it is written.
 */
export async function precheckEventUpdate(db: Db, body: EventBody, writer: Writer): Promise<void> {
  if (body.timezone !== undefined && writtenTimezone(body.timezone, writer.siteTz) === undefined) throw invalidParam('timezone', 'invalidTimezone')
  for (const field of ['start_date', 'end_date'] as const) {
    const value = body[field]
    if (value !== undefined && parseBodyDate(value, writer.siteTz) === null) throw invalidParam(field, 'invalidDate')
  }
  const website = emptyToNull(body.website)
  if (website !== null && website !== undefined && !isHttpUrl(website)) throw invalidParam('website', 'invalidUrl')
  postDates(body, writer.siteTz, { date: '', date_utc: '' })
  // The rule's parts need no record (the dates' forms and the limits need its dates).
  const recurrence = sentRecurrence(body)
  if (recurrence !== undefined && recurrence !== null && recurrence.rule !== null) {
    const rule = parseRule(recurrence.rule)
    if (typeof rule === 'string') throw refusedRecurrence(rule)
  }
  await checkedImage(db, body.image)
  await checkAuthorExists(db, body.author)
  for (const entry of linkEntries(body.venue) ?? []) if (typeof entry !== 'number') venueFields(entry, writer.geoloc)
  for (const entry of linkEntries(body.organizer) ?? []) if (typeof entry !== 'number') organizerFields(entry)
}

/** A new event, checked; `columns` from `eventColumns`. */
export async function checkNewEvent(db: Db, body: Schema<'EventCreate'>, columns: Omit<EventColumns, 'modified' | 'modified_utc'>, language: Language, caller: Caller, writer: Writer): Promise<NewEvent> {
  const { timezone, start_date, end_date, start_utc, end_utc } = columns
  if (timezone === undefined || start_date === undefined || end_date === undefined || start_utc === undefined || end_utc === undefined) {
    throw invalidParam('start_date', 'required')
  }
  // The author named must exist (400) before anything else; the right to name one comes last (403).
  await checkAuthorExists(db, body.author, caller.id)
  const group = body.translation_of === undefined ? null : await translationGroup(db, 'events', 'event', body.translation_of, language, caller)
  const image = await checkedImage(db, body.image)
  const dates = postDates(body, writer.siteTz, nowDates(writer.now, writer.siteTz))
  const slug = wantedSlug(body.slug, body.title)
  const links = await checkedLinks(db, body, language, caller, writer)
  checkMayAssignAuthor(body.author, caller.id, writer.mayAssignAuthor)
  return {
    language,
    translationGroup: group,
    columns: {
      ...columns, title: body.title, timezone, start_date, end_date, start_utc, end_utc,
      author: body.author ?? caller.id, status: statusToStore(caller, body.status), ...dates, ...modifiedNow(writer.now, writer.siteTz),
    },
    slug,
    image,
    links,
    now: writer.now,
  }
}

/** A partial update of `current`, checked; `status` is the one to store if the body changes it. */
export async function checkEventUpdate(
  db: Db, current: Event, body: EventBody, columns: Omit<EventColumns, 'modified' | 'modified_utc'>, status: string | undefined, caller: Caller, writer: Writer,
): Promise<EventUpdate> {
  await checkAuthorExists(db, body.author, caller.id)
  checkMayAssignAuthor(body.author, caller.id, writer.mayAssignAuthor)
  const set: EventColumns = { ...columns, ...modifiedNow(writer.now, writer.siteTz) }
  if (body.author !== undefined) set.author = body.author
  if (status !== undefined) set.status = status
  if (body.date !== undefined || body.date_utc !== undefined) Object.assign(set, postDates(body, writer.siteTz, current))
  const slug = body.slug === undefined ? undefined : wantedSlug(body.slug, body.title ?? current.title) || `event-${current.id}`
  const image = await checkedImage(db, body.image)
  return {
    id: current.id, language: current.ml_language, status: current.status, columns: set, slug, currentSlug: current.slug, image,
    links: await checkedLinks(db, body, current.ml_language, caller, writer), now: writer.now,
  }
}

/**
 * The links of a body: terms by id, slug or name in the event's language, existing venues and organizers
 * in that language (not trashed), and inline ones checked as creates with their own `status` (CONTRACT
 * §5). Anything unknown is a 400 naming the field.
 */
async function checkedLinks(db: Db, body: EventBody, language: Language, caller: Caller, writer: Writer): Promise<EventLinks> {
  const links: EventLinks = {}
  const venues = linkEntries(body.venue)
  const organizers = linkEntries(body.organizer)
  // Both lists' ids looked up together (one statement), then each checked in turn.
  const fields = ([['category', 'categories'], ['tag', 'tags']] as const).filter(([, field]) => body[field] !== undefined)
  const lists = fields.map(([taxonomy, field]) => ({ taxonomy, entries: body[field] ?? [] }))
  // What the checks read, sent together (issue 49: one round trip on PostgreSQL, with a create's begin; a read not sent
  // so, or after any other statement, is run as ever): each check below still refuses in its order.
  const linked = (table: 'venues' | 'organizers', entries: ReadonlyArray<number | object> | undefined) =>
    (entries ?? []).flatMap((entry) => (typeof entry === 'number' ? [linkableRead(db, table, entry, language)] : []))
  await readAhead(db, [...(fields.length === 0 ? [] : [termIdsNamedRead(db, lists)]), ...linked('venues', venues), ...linked('organizers', organizers)])
  const named = fields.length === 0 ? [] : await termIdsNamed(db, lists, language)
  for (const [n, [, field]] of fields.entries()) {
    const entries = body[field] ?? []
    const ids: number[] = []
    const found = named[n] ?? []
    for (const [i, entry] of entries.entries()) {
      const id = found[i]
      if (id === undefined) throw invalidParam(field, 'unknownTerm', { value: String(entry).trim() })
      if (!ids.includes(id)) ids.push(id)
    }
    links[field] = ids
  }
  // The rows the checks read, kept for a create's answer (repositories/event-writes.ts `EventLinks.read`).
  const read = { venues: new Map<number, LinkedRow>(), organizers: new Map<number, LinkedRow>() }
  if (venues !== undefined) links.venues = await checkedEntries(db, VENUE_INPUT, venues, language, caller, writer, read.venues)
  if (organizers !== undefined) links.organizers = await checkedEntries(db, ORGANIZER_INPUT, organizers, language, caller, writer, read.organizers)
  if (venues !== undefined || organizers !== undefined) links.read = read
  return links
}

/**
 * `venue`/`organizer` as a list of ids and records to create (CONTRACT §5): as in the reference, a single
 * id or object where the list is expected is a list of one, and `{ "id": N }` names the existing record N.
 */
function linkEntries<C extends object>(value: LinkEntry<C> | Array<LinkEntry<C>> | undefined): Array<number | C> | undefined {
  if (value === undefined) return undefined
  return (Array.isArray(value) ? value : [value]).map((entry) => (typeof entry === 'object' && 'id' in entry ? entry.id : entry))
}

type LinkEntry<C> = number | { id: number } | C

/**
 * The `venue` or `organizer` entries of an occurrence body (CONTRACT §17, as §5 reads an event's): existing
 * records and records to create inline, checked as an event's are.
 */
export async function occurrenceLinks(
  db: Db, field: 'venue' | 'organizer', value: NonNullable<EventBody['venue'] | EventBody['organizer']>, language: Language, caller: Caller, writer: Writer,
): Promise<Array<number | NewLinked<VenueColumns>>|Array<number | NewLinked<OrganizerColumns>>> {
  if (field === 'venue') {
    const entries = linkEntries(value as NonNullable<EventBody['venue']>) ?? []
    for (const entry of entries) if (typeof entry !== 'number') venueFields(entry, writer.geoloc)
    return checkedEntries(db, VENUE_INPUT, entries, language, caller, writer)
  }
  const entries = linkEntries(value as NonNullable<EventBody['organizer']>) ?? []
  return checkedEntries(db, ORGANIZER_INPUT, entries, language, caller, writer)
}

/**
 * `venue`/`organizer` entries: ids of records that may be linked, or records to create inline, checked
 * as their own create is, `translation_of` included (in the event's language: one version per language
 * in a group, counting the other entries of the body).
 */
async function checkedEntries<Body extends LinkedBody & { translation_of?: number }, Own>(
  db: Db, input: LinkedInput<Body, Own>, entries: Array<number | Body>, language: Language, caller: Caller, writer: Writer,
  read?: Map<number, LinkedRow>,
): Promise<Array<number | NewLinked<Own>>> {
  const checked: Array<number | NewLinked<Own>> = []
  const groups = new Set<number>()
  for (const entry of entries) {
    if (typeof entry === 'number') {
      // A record the caller cannot read is refused like an unknown one (CONTRACT §6): linking reveals nothing.
      const owner = await linkable(db, input.table, entry, language)
      if (owner === undefined || !canRead(caller, owner)) throw invalidParam(input.resource, 'unknownLinked', { value: String(entry) })
      read?.set(entry, owner)
      checked.push(entry)
    } else {
      const inline = await checkNewLinked(db, input, entry, language, entry.translation_of, statusToStore(caller, entry.status), writer)
      if (inline.translationGroup !== null) {
        if (groups.has(inline.translationGroup)) throw invalidParam('translation_of', 'translationExists')
        groups.add(inline.translationGroup)
      }
      checked.push(inline)
    }
  }
  return checked
}
