/**
 * Writes of one occurrence of a series (CONTRACT §17): `PATCH`/`POST`/`PUT /events/{id}/occurrences/{occurrence}`
 * (its own changes), `DELETE` (cancel: its original start joins `exdates`) and `POST …/split` ("this and
 * following": a new event from it on). Rights, statuses, the trash and `If-Match` are those of updating the
 * event (handlers/events.ts `update`); the `If-Match` names the occurrence's ETag. Each is one unit of work
 * (repositories/occurrence-overrides.ts), and each is a change of the event: its version, `modified`, the
 * change log (`updated`; a split also `created` for the new event) and webhooks follow.
 */
import type { FastifyReply, FastifyRequest } from 'fastify'
import type { Event, Language, Schema } from '../contract.js'
import type { Db, Tx } from '../db/unit-of-work.js'
import { forbidden, inTrash, invalidParam, notFound, occurrenceNotFound, preconditionFailed } from '../http/errors.js'
import { eventEtag, expectedVersion, occurrenceEtag } from '../http/etag.js'
import { requestedLanguage } from '../http/language.js'
import type { Handlers } from '../http/operations.js'
import type { Serialized } from '../http/serialized.js'
import { addDays, formatUtc, parseBodyDate, utcToWall, wallToUtc } from '../lib/dates.js'
import { seenBy } from '../lib/event-view.js'
import { occurrenceRecord } from '../lib/occurrence-view.js'
import { modifiedNow, nowDates } from '../lib/post-dates.js'
import { checkRecurrence, expandSeries, MAX_DATES, parseOccurrenceId, parseRule, type RecurrenceInput } from '../lib/recurrence.js'
import { canEdit, editsAll, statusToStore, type Caller } from '../lib/rights.js'
import { wantedSlug } from '../lib/slug.js'
import { emptyToNull } from '../lib/text.js'
import { isHttpUrl } from '../lib/urls.js'
import { findEvent, type StoredEvent } from '../repositories/event-records.js'
import { insertEvent, occurrenceLinkIds, updateEvent, type NewEvent } from '../repositories/event-writes.js'
import { findOverride, hasOccurrence, moveOverrides, OVERRIDE_FIELDS, rewriteSeries, writeOverride, type OverrideColumns, type StoredOverride } from '../repositories/occurrence-overrides.js'
import { rowOf, writeOccurrences, type OccurrenceRow, type SeriesRows } from '../repositories/occurrence-writes.js'
import { occurrenceOf as storedOccurrence } from '../repositories/occurrences.js'
import type { PostRef } from '../repositories/posts.js'
import { lost, writeRead } from './compare-and-swap.js'
import type { AppContext } from './context.js'
import { checkEventUpdate, occurrenceLinks, datesOf, eventColumns, precheckEventUpdate, refusedRecurrence, seriesChange, type EventBody } from './event-input.js'
import { createOnce } from './idempotency.js'
import { lookupLanguage, writerOf } from './linked.js'

type OccurrenceHandlers = Pick<Handlers,
  'updateEventOccurrence' | 'updateEventOccurrencePut' | 'updateEventOccurrencePost' | 'cancelEventOccurrence' | 'splitEventOccurrence'>

type OccurrenceBody = Schema<'OccurrenceUpdate'>
/** Venues or organizers of an occurrence's change that include records to create (checked, created when it is written). */
interface Pending { entries: Awaited<ReturnType<typeof occurrenceLinks>> }
type PendingLinks = { venue?: Pending; organizer?: Pending }

const DAY_MS = 86_400_000

/** An occurrence's original dates (wall times in the series' zone, and UTC), as the expansion gives them. */
interface OriginalOccurrence {
  id: string
  start: string
  end: string
  startUtc: string
  endUtc: string
}

/** The series a stored event is: its recurrence as the expansion takes it (a single event: no rule, no dates). */
function recurrenceInput(record: Event): RecurrenceInput {
  return record.recurrence ?? { rule: null, rdates: [], exdates: [] }
}

/** Milliseconds of a `YYYY-MM-DD HH:MM:SS` text read as UTC. */
const msOf = (text: string): number => Date.parse(`${text.replace(' ', 'T')}Z`)

/**
 * The original dates of occurrence `id` of `record` (its original start is its id): a timed occurrence lasts
 * the first's real time, an all-day one its days (docs/recurrence.md). Undefined for a malformed id.
 */
function originalOf(record: Event, id: string): OriginalOccurrence | undefined {
  const parsed = parseOccurrenceId(id, record.all_day)
  if (parsed === null) return undefined
  try {
    if ('day' in parsed) {
      const days = Math.round((msOf(record.end_date.slice(0, 10) + ' 00:00:00') - msOf(record.start_date.slice(0, 10) + ' 00:00:00')) / DAY_MS)
      const start = `${parsed.day} 00:00:00`
      const end = `${addDays(parsed.day, days)} 23:59:59`
      return { id, start, end, startUtc: wallToUtc(start, record.timezone), endUtc: wallToUtc(end, record.timezone) }
    }
    const endUtc = formatUtc(new Date(msOf(parsed.startUtc) + msOf(record.utc_end_date) - msOf(record.utc_start_date)))
    return { id, start: utcToWall(parsed.startUtc, record.timezone), end: utcToWall(endUtc, record.timezone), startUtc: parsed.startUtc, endUtc }
  } catch {
    return undefined
  }
}

/** Whether two expansions are the same occurrences (ids and dates). */
function sameSet(a: readonly OccurrenceRow[], b: readonly OccurrenceRow[]): boolean {
  const key = (o: OccurrenceRow): string => `${o.id} ${o.startUtc} ${o.endUtc}`
  const keys = new Set(a.map(key))
  return a.length === b.length && keys.size === a.length && b.every((o) => keys.has(key(o)))
}

/** An exdate or rdate of the occurrence: its original start as the series writes dates (all-day: the day). */
function wallKey(record: Event, original: OriginalOccurrence): string {
  return record.all_day ? original.start.slice(0, 10) : original.start
}

export function occurrenceWriteHandlers(ctx: AppContext): OccurrenceHandlers {
  const seriesEtag = (stored: StoredEvent, caller: Caller | null): string => eventEtag(seenBy(caller, stored.record), stored.version)
  const horizonUtc = (now: Date): string => formatUtc(new Date(now.getTime() + ctx.config.recurrenceHorizonDays * DAY_MS))

  async function find(ref: PostRef, language: Language | undefined, reader: Db): Promise<StoredEvent> {
    const stored = await findEvent(reader, ctx.site, ref, lookupLanguage(ctx, ref, language))
    if (stored === undefined) throw notFound('event', 'id' in ref ? ref.id : ref.slug)
    return stored
  }

  /** The rights of updating the event (handlers/events.ts `update`): 410 in the trash, 403 without edit rights. */
  function refuseWrite(caller: Caller, record: Event): void {
    if (record.status === 'trash') throw inTrash('event')
    if (!canEdit(caller, record)) throw forbidden(403)
  }

  /** The occurrence `id` of the event, or 404 when it is not in the set (never was, cancelled, malformed). */
  async function occurrenceOf(reader: Db, record: Event, id: string): Promise<OriginalOccurrence> {
    const original = originalOf(record, id)
    if (original === undefined || !(await hasOccurrence(reader, record.id, id))) throw occurrenceNotFound(id)
    return original
  }

  /**
   * An occurrence as `caller` is shown it (lib/occurrence-view.ts, as its reads show it), with its ETag (the one
   * `GET /events/{id}/occurrences/{occurrence}` gives, which `If-Match` names), read with `reader`.
   */
  async function occurrenceAnswer(reader: Db, stored: StoredEvent, id: string, caller: Caller): Promise<{ record: Event; etag: string }> {
    const found = await storedOccurrence(reader, ctx.site, stored.record.id, id)
    if (found === undefined) throw occurrenceNotFound(id)
    const record = seenBy(caller, occurrenceRecord(stored.record, found.state, found.override))
    return { record, etag: occurrenceEtag(seriesEtag(stored, caller), stored.record.id, stored.version, id, found.overrideVersion, record) }
  }

  /** The checks of an occurrence body that need no record (CONTRACT §1: 400 before 404, 403, 412). */
  function precheck(body: OccurrenceBody, siteTz: string): void {
    for (const field of ['start_date', 'end_date'] as const) {
      const value = body[field]
      if (value !== undefined && value !== null && parseBodyDate(value, siteTz) === null) throw invalidParam(field, 'invalidDate')
    }
    const website = emptyToNull(body.website)
    if (website !== null && website !== undefined && !isHttpUrl(website)) throw invalidParam('website', 'invalidUrl')
  }

  /**
   * The `venue`/`organizer` entry of an occurrence body, checked as an event's links are (CONTRACT §5: 400 naming the
   * field; a single entry is a list of one, `{ "id": N }` names the record N, an object of fields is a record to
   * create): the ids to store, or, when records are to be created, those entries (created in the unit of work).
   */
  async function links(reader: Db, field: 'venue' | 'organizer', value: NonNullable<OccurrenceBody['venue'] | OccurrenceBody['organizer']>, language: Language, caller: Caller): Promise<string | Pending> {
    const entries = await occurrenceLinks(reader, field, value, language, caller, writerOf(ctx, caller))
    if (entries.some((e) => typeof e !== 'number')) return { entries }
    return JSON.stringify([...new Set(entries as number[])])
  }

  /** The override a body makes of `current` for the occurrence `original` of `record` (dates in the event's zone). */
  async function mergedOverride(reader: Db, record: Event, original: OriginalOccurrence, current: StoredOverride | undefined, body: OccurrenceBody, caller: Caller, pending: PendingLinks): Promise<OverrideColumns> {
    const merged: OverrideColumns = Object.fromEntries(OVERRIDE_FIELDS.map((f) => [f, current?.[f] ?? null])) as unknown as OverrideColumns
    if (body.title !== undefined) merged.title = body.title
    if (body.description !== undefined) merged.description = body.description
    if (body.excerpt !== undefined) merged.excerpt = body.excerpt
    if (body.cost !== undefined) merged.cost = body.cost === null ? null : String(body.cost)
    if (body.website !== undefined) merged.website = body.website
    for (const [field, column] of [['venue', 'venues'], ['organizer', 'organizers']] as const) {
      const value = body[field]
      if (value === undefined) continue
      const ids = value === null ? null : await links(reader, field, value, record.ml_language, caller)
      if (ids === null || typeof ids === 'string') merged[column] = ids
      else pending[field] = ids
    }
    if (body.start_date === null || body.end_date === null) {
      Object.assign(merged, { start_date: null, end_date: null, start_utc: null, end_utc: null })
    } else if (body.start_date !== undefined || body.end_date !== undefined) {
      const tz = record.timezone
      const at = (value: string, field: 'start_date' | 'end_date'): { wall: string; utc: string } => {
        const utc = parseBodyDate(value, tz)
        if (utc === null) throw invalidParam(field, 'invalidDate')
        const wall = utcToWall(utc, tz)
        if (!record.all_day) return { wall, utc }
        const widened = `${wall.slice(0, 10)} ${field === 'start_date' ? '00:00:00' : '23:59:59'}`
        return { wall: widened, utc: wallToUtc(widened, tz) }
      }
      const nowStart = { wall: merged.start_date ?? original.start, utc: merged.start_utc ?? original.startUtc }
      const nowEnd = { wall: merged.end_date ?? original.end, utc: merged.end_utc ?? original.endUtc }
      const start = body.start_date !== undefined ? at(body.start_date, 'start_date') : nowStart
      let end: { wall: string; utc: string }
      if (body.end_date !== undefined) end = at(body.end_date, 'end_date')
      else if (record.all_day) {
        // Sent alone, the start moves the occurrence: an all-day one keeps its days.
        const days = Math.round((msOf(nowEnd.wall.slice(0, 10) + ' 00:00:00') - msOf(nowStart.wall.slice(0, 10) + ' 00:00:00')) / DAY_MS)
        const wall = `${addDays(start.wall.slice(0, 10), days)} 23:59:59`
        end = { wall, utc: wallToUtc(wall, tz) }
      } else {
        const utc = formatUtc(new Date(msOf(start.utc) + msOf(nowEnd.utc) - msOf(nowStart.utc)))
        end = { wall: utcToWall(utc, tz), utc }
      }
      if (end.utc < start.utc) throw invalidParam('end_date', 'endBeforeStart')
      const moved = start.utc !== original.startUtc || end.utc !== original.endUtc || start.wall !== original.start || end.wall !== original.end
      Object.assign(merged, moved
        ? { start_date: start.wall, end_date: end.wall, start_utc: start.utc, end_utc: end.utc }
        : { start_date: null, end_date: null, start_utc: null, end_utc: null })
    }
    return merged
  }

  async function update(req: FastifyRequest, params: { id: number; occurrence: string }, body: OccurrenceBody, reply: FastifyReply): Promise<Event> {
    const caller = req.user
    if (caller === null) throw forbidden(401)
    precheck(body, ctx.config.timezone)
    const ref: PostRef = { id: params.id }
    const answer = await writeRead(ctx.db, req, async (reader, write) => {
      const current = await find(ref, requestedLanguage(req), reader)
      const { record } = current
      refuseWrite(caller, record)
      const original = await occurrenceOf(reader, record, params.occurrence)
      if (record.recurrence === null) throw invalidParam('occurrence', 'occurrenceOfSingleEvent')
      const override = await findOverride(reader, record.id, params.occurrence)
      const shown = await occurrenceAnswer(reader, current, params.occurrence, caller)
      const expected = expectedVersion(req, () => shown.etag, current.version) ?? current.version
      const pending: PendingLinks = {}
      const merged = await mergedOverride(reader, record, original, override, body, caller, pending)
      const same = pending.venue === undefined && pending.organizer === undefined && OVERRIDE_FIELDS.every((f) => merged[f] === (override?.[f] ?? null))
      return write(async (trx) => {
        // Venues and organizers sent inline are created with the change, in its unit of work.
        if (pending.venue !== undefined) merged.venues = JSON.stringify(await occurrenceLinkIds(trx, 'venue', pending.venue.entries))
        if (pending.organizer !== undefined) merged.organizers = JSON.stringify(await occurrenceLinkIds(trx, 'organizer', pending.organizer.entries))
        // A body that changes nothing writes nothing (CONTRACT §5).
        if (!same) {
          const dates = { startUtc: merged.start_utc ?? original.startUtc, endUtc: merged.end_utc ?? original.endUtc }
          if (!(await writeOverride(trx, record.id, params.occurrence, merged, dates, expected, modifiedNow(ctx.now(), ctx.config.timezone), current.password !== null))) lost()
        }
        return occurrenceAnswer(trx, await find({ id: record.id }, undefined, trx), params.occurrence, caller)
      })
    })
    reply.header('ETag', answer.etag)
    return answer.record
  }

  /** The series' rows for `recurrence` from its own dates (400 naming `recurrence` when refused). */
  function rowsOf(record: Event, recurrence: RecurrenceInput, dates: Pick<OriginalOccurrence, 'start' | 'end' | 'startUtc' | 'endUtc'>, now: Date): { json: string; rows: SeriesRows } {
    const checked = checkRecurrence(recurrence, record.all_day)
    if ('refused' in checked) throw refusedRecurrence(checked.refused)
    const horizon = horizonUtc(now)
    const expanded = expandSeries({ timezone: record.timezone, allDay: record.all_day, ...dates }, checked, horizon)
    if ('refused' in expanded) throw refusedRecurrence(expanded.refused)
    const unbounded = checked.parsed !== null && checked.parsed.count === undefined && checked.parsed.until === undefined
    return {
      json: JSON.stringify({ rule: checked.rule, rdates: checked.rdates, exdates: checked.exdates }),
      rows: { occurrences: expanded.map(rowOf), throughUtc: unbounded ? horizon : null },
    }
  }

  /** The series' own first occurrence's dates (DTSTART). */
  const firstOf = (record: Event) => ({ start: record.start_date, end: record.end_date, startUtc: record.utc_start_date, endUtc: record.utc_end_date })

  async function cancel(req: FastifyRequest, params: { id: number; occurrence: string }, reply: FastifyReply): Promise<Event> {
    const caller = req.user
    if (caller === null) throw forbidden(401)
    const ref: PostRef = { id: params.id }
    const answer = await writeRead(ctx.db, req, async (reader, write) => {
      const current = await find(ref, requestedLanguage(req), reader)
      const { record } = current
      refuseWrite(caller, record)
      const original = await occurrenceOf(reader, record, params.occurrence)
      const shown = await occurrenceAnswer(reader, current, params.occurrence, caller)
      const expected = expectedVersion(req, () => shown.etag, current.version) ?? current.version
      const recurrence = recurrenceInput(record)
      const key = wallKey(record, original)
      const exdates = recurrence.exdates?.includes(key) === true ? recurrence.exdates : [...recurrence.exdates ?? [], key]
      const series = rowsOf(record, { ...recurrence, exdates }, firstOf(record), ctx.now())
      return write(async (trx) => {
        if (!(await rewriteSeries(trx, record.id, series.json, series.rows, expected, modifiedNow(ctx.now(), ctx.config.timezone)))) lost()
        const stored = await find({ id: record.id }, undefined, trx)
        return { record: seenBy(caller, stored.record), etag: seriesEtag(stored, caller) }
      })
    })
    reply.header('ETag', answer.etag)
    return answer.record
  }

  /**
   * The two rules of a split at `original` (CONTRACT §17): the series' ends before it (UNTIL one second before
   * its original start, in the form RFC 5545 wants for the DTSTART: UTC for timed series, a date for all-day
   * ones; or a COUNT of the rule's occurrences before it), the new one keeps the rest.
   */
  function splitRules(record: Event, rule: string | null, original: OriginalOccurrence): { before: string | null; after: string | null } {
    if (rule === null) return { before: null, after: null }
    const parsed = parseRule(rule)
    if (typeof parsed === 'string') throw refusedRecurrence(parsed)
    const parts = parsed.text.split(';').filter((part) => !/^(COUNT|UNTIL)=/i.test(part))
    if (parsed.count !== undefined) {
      // The rule's own occurrences (no rdates, no exdates) before the split, DTSTART included.
      const checked = checkRecurrence({ rule, rdates: [], exdates: [] }, record.all_day)
      if ('refused' in checked) throw refusedRecurrence(checked.refused)
      const expanded = expandSeries({ timezone: record.timezone, allDay: record.all_day, ...firstOf(record) }, checked, horizonUtc(ctx.now()))
      if ('refused' in expanded) throw refusedRecurrence(expanded.refused)
      const before = expanded.filter((o) => o.startUtc < original.startUtc).length
      const remaining = parsed.count - before
      return { before: [...parts, `COUNT=${before}`].join(';'), after: remaining > 0 ? [...parts, `COUNT=${remaining}`].join(';') : null }
    }
    const until = record.all_day
      ? addDays(original.start.slice(0, 10), -1).replaceAll('-', '')
      : `${formatUtc(new Date(msOf(original.startUtc) - 1000)).replace(/[-:]/g, '').replace(' ', 'T')}Z`
    return { before: [...parts, `UNTIL=${until}`].join(';'), after: parsed.text }
  }

  async function split(req: FastifyRequest, params: { id: number; occurrence: string }, body: EventBody, reply: FastifyReply): Promise<Serialized<Event>> {
    const caller = req.user
    if (caller === null) throw forbidden(401)
    const writer = writerOf(ctx, caller)
    await precheckEventUpdate(ctx.db, body, writer)
    return createOnce(ctx, req, reply,
      async (trx) => splitIn(trx, req, params, body, caller),
      async (reader, id) => {
        const stored = await find({ id }, undefined, reader)
        const record = seenBy(caller, stored.record)
        return { body: ctx.json.event(record), location: record.rest_url, etag: seriesEtag(stored, caller) }
      })
  }

  /** The split's unit of work (read inside it: a split creates, as a create does): the new event's id. */
  async function splitIn(trx: Tx, req: FastifyRequest, params: { id: number; occurrence: string }, body: EventBody, caller: Caller): Promise<number> {
    const writer = writerOf(ctx, caller)
    const current = await find({ id: params.id }, requestedLanguage(req), trx)
    const { record } = current
    refuseWrite(caller, record)
    const original = await occurrenceOf(trx, record, params.occurrence)
    const shown = await occurrenceAnswer(trx, current, params.occurrence, caller)
    const expected = expectedVersion(req, () => shown.etag, current.version) ?? current.version
    const earlier = await trx.selectFrom('event_occurrences').select('occurrence').where('event_id', '=', record.id)
      .where('occurrence', '<', params.occurrence).limit(1).executeTakeFirst()
    if (earlier === undefined) throw invalidParam('occurrence', 'splitAtFirstOccurrence')
    const recurrence = recurrenceInput(record)
    const rules = splitRules(record, recurrence.rule, original)
    const key = wallKey(record, original)
    const now = ctx.now()
    const stamp = modifiedNow(now, ctx.config.timezone)
    const old = rowsOf(record, {
      rule: rules.before, rdates: (recurrence.rdates ?? []).filter((d) => d < key), exdates: (recurrence.exdates ?? []).filter((d) => d < key),
    }, firstOf(record), now)
    const started = { start: original.start, end: original.end, startUtc: original.startUtc, endUtc: original.endUtc }
    let later = rowsOf(record, {
      rule: rules.after, rdates: (recurrence.rdates ?? []).filter((d) => d > key), exdates: (recurrence.exdates ?? []).filter((d) => d >= key),
    }, started, now)
    // The invariant (docs/recurrence.md): the two series' sets together are the original's, each occurrence
    // keeping its id and dates. A rule is anchored on DTSTART (weekday, time of day, INTERVAL phase, COUNT), so
    // a new series starting at an rdate may not continue it: then the new one lists its dates (finite tail), or
    // the split is refused; nothing is written unless both sets are the original's.
    const whole = rowsOf(record, recurrence, firstOf(record), now).rows.occurrences
    const head = whole.filter((o) => o.id < params.occurrence)
    const tail = whole.filter((o) => o.id >= params.occurrence)
    if (!sameSet(old.rows.occurrences, head)) throw invalidParam('occurrence', 'splitChangesSeries')
    if (!sameSet(later.rows.occurrences, tail)) {
      const parsed = recurrence.rule === null ? null : parseRule(recurrence.rule)
      const finite = parsed === null || (typeof parsed !== 'string' && (parsed.count !== undefined || parsed.until !== undefined))
      if (!finite || tail.length - 1 > MAX_DATES) throw invalidParam('occurrence', 'splitAtRdate')
      later = rowsOf(record, { rule: null, rdates: tail.slice(1).map((o) => wallKey(record, originalOf(record, o.id) as OriginalOccurrence)), exdates: [] }, started, now)
      if (!sameSet(later.rows.occurrences, tail)) throw invalidParam('occurrence', 'splitChangesSeries')
    }
    const row = await trx.selectFrom('events').selectAll().where('id', '=', record.id).where('version', '=', expected).executeTakeFirst()
    if (row === undefined) throw preconditionFailed()
    const created: NewEvent = {
      language: record.ml_language,
      translationGroup: null,
      columns: {
        title: row.title, description: row.description, excerpt: row.excerpt, cost: row.cost, website: row.website,
        show_map: row.show_map === 1, show_map_link: row.show_map_link === 1, hide_from_listings: row.hide_from_listings === 1,
        sticky: row.sticky === 1, featured: row.featured === 1, author: row.author, status: row.status,
        timezone: row.timezone, all_day: row.all_day === 1,
        start_date: original.start, end_date: original.end, start_utc: original.startUtc, end_utc: original.endUtc,
        ...nowDates(now, ctx.config.timezone), ...stamp,
      },
      slug: wantedSlug(undefined, row.title),
      image: row.image_id === null ? null : { id: row.image_id },
      links: {
        categories: record.categories.map((c) => c.id), tags: record.tags.map((t) => t.id),
        venues: record.venue.map((v) => v.id), organizers: record.organizer.map((o) => o.id),
      },
      now,
      series: { recurrence: later.json, rows: later.rows },
    }
    const { id } = await insertEvent(trx, created)
    // The later occurrences' own changes go with them (their ids, their original starts, stay).
    await moveOverrides(trx, record.id, id, later.rows.occurrences.map((o) => o.id))
    await writeOccurrences(trx, id, later.rows.occurrences)
    // Then the series ends before the split (the overrides it no longer holds have moved, none is lost).
    if (!(await rewriteSeries(trx, record.id, old.json, old.rows, expected, stamp))) throw preconditionFailed()
    // The body's fields apply to the new event, as an update of it would (the protection it had included).
    const applied: EventBody = row.password !== null && !('password' in body && body.password !== undefined) ? { ...body, password: row.password } : body
    if (Object.keys(applied).some((k) => k !== 'ml_language')) {
      const made = await find({ id }, undefined, trx)
      const status = applied.status === undefined ? undefined : statusToStore(caller, applied.status, made.record.status)
      const columns = eventColumns(applied, datesOf(made.record), ctx.config.timezone)
      const series = seriesChange(applied, { ...datesOf(made.record), ...columns } as ReturnType<typeof datesOf>, made.record.recurrence, now, ctx.config.recurrenceHorizonDays)
      if (applied.author !== undefined && applied.author !== caller.id && !editsAll(caller)) throw forbidden(403)
      const changes = await checkEventUpdate(trx, made.record, applied, columns, status, caller, writer)
      if (!(await updateEvent(trx, series === undefined ? changes : { ...changes, series }, made.version))) throw preconditionFailed()
    }
    return id
  }

  const updateOne = (req: FastifyRequest<{ Params: { id: number; occurrence: string }; Body?: OccurrenceBody }>, reply: FastifyReply) =>
    update(req, req.params, req.body ?? {}, reply)

  return {
    updateEventOccurrence: (req, reply) => updateOne(req, reply),
    updateEventOccurrencePut: (req, reply) => updateOne(req, reply),
    updateEventOccurrencePost: (req, reply) => updateOne(req, reply),
    cancelEventOccurrence: (req, reply) => cancel(req, req.params, reply),
    splitEventOccurrence: (req, reply) => split(req, req.params, req.body ?? {}, reply),
  }
}
