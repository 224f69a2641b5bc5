/**
 * `GET /changes` (CONTRACT §12): what changed after a cursor, for clients that keep a copy of the
 * calendar. The log gives the latest change of each record after the cursor, in order; this handler
 * decides what the caller is told of each: the record's state now, as the caller would see it in a
 * list, and whether the caller could read it before the cursor and can now (a record that became
 * readable is `created`, one that no longer is `deleted`, one never readable is left out).
 */
import type { FastifyRequest } from 'fastify'
import type { QueryOf, Schema } from '../contract.js'
import type { ChangeAction, ChangeResource } from '../db/schema.js'
import { ApiError, invalidParam } from '../http/errors.js'
import type { Handlers } from '../http/operations.js'
import { canRead, type Caller, type Owned } from '../lib/rights.js'
import { latestChanges, logBounds, priorStates, type LogEntry, type PriorState } from '../repositories/changes.js'
import { currentRecords as recordsNow, type ChangeRecord } from '../repositories/change-records.js'
import type { AppContext } from './context.js'

type ChangeHandlers = Pick<Handlers, 'listChanges'>
type ChangeQuery = QueryOf<'listChanges'>

const RESOURCES: readonly ChangeResource[] = ['events', 'venues', 'organizers', 'categories', 'tags']
const DEFAULT_PER_PAGE = 100
const MAX_PER_PAGE = 500

/**
 * Where a walk through the log stands. Cursors are opaque to clients: `v1:<position>` when the client
 * has seen everything up to a position, and `v1:<position>:<origin>:<horizon>` in the middle of a walk
 * (`has_more`): the pages of one walk look at the log up to its `horizon` only (the last position when
 * the walk began), so a record is on exactly one page of it, and what a record was to the client
 * before is its state at the walk's `origin` (every record a later page holds was on no page before).
 * A walk's last page still says `has_more` when the log moved past its horizon meanwhile.
 * Base64url, so that clients treat it as one opaque token.
 */
export interface Cursor {
  position: number
  origin: number
  horizon: number
}

export function cursorOf(position: number, walk?: { origin: number; horizon: number }): string {
  // At its horizon a walk is over: the plain form says the same.
  const text = walk === undefined || position === walk.horizon ? `v1:${position}` : `v1:${position}:${walk.origin}:${walk.horizon}`
  return Buffer.from(text).toString('base64url')
}

/** The cursor a `since` names, or undefined when it is not one of ours. */
export function readCursor(cursor: string): Cursor | undefined {
  if (!/^[A-Za-z0-9_-]{1,200}$/.test(cursor)) return undefined
  const n = '(0|[1-9]\\d{0,15})'
  const match = new RegExp(`^v1:${n}(?::${n}:${n})?$`).exec(Buffer.from(cursor, 'base64url').toString('latin1'))
  if (match === null) return undefined
  const position = Number(match[1])
  const origin = match[2] === undefined ? position : Number(match[2])
  const horizon = match[3] === undefined ? position : Number(match[3])
  if (![position, origin, horizon].every(Number.isSafeInteger) || origin > position || position >= horizon && match[2] !== undefined) return undefined
  const canonical = match[2] === undefined ? cursorOf(position) : cursorOf(position, { origin, horizon })
  return canonical === cursor ? { position, origin, horizon } : undefined
}

/** The position a cursor names (everything up to it was visited), or undefined when it is not one of ours. */
export function positionOf(cursor: string): number | undefined {
  return readCursor(cursor)?.position
}

/** Whether `caller` could read a record in this state (terms: anyone; trash: no one, for sync). */
function readable(caller: Caller | null, resource: ChangeResource, state: Owned | undefined): boolean {
  if (state === undefined) return false
  if (resource === 'categories' || resource === 'tags') return true
  return state.status !== 'trash' && canRead(caller, state)
}

function readableBefore(caller: Caller | null, resource: ChangeResource, prior: PriorState | undefined): boolean | undefined {
  if (prior === undefined || !prior.known) return undefined
  if (!prior.existed || prior.action === 'deleted') return false
  return readable(caller, resource, { status: prior.status ?? 'publish', author: prior.author })
}

export function changeHandlers(ctx: AppContext): ChangeHandlers {
  const currentRecords = (caller: Caller | null, resource: ChangeResource, ids: number[]) => recordsNow(ctx.db, ctx.site, caller, resource, ids)

  /** What the caller is told of one record's latest change; undefined: nothing (it never could read it). */
  function entryFor(caller: Caller | null, entry: LogEntry, cursor: string, current: { record: ChangeRecord } | undefined, readableNow: boolean, before: boolean | undefined): Schema<'Change'> | undefined {
    let action: ChangeAction
    if (readableNow && current !== undefined) {
      action = before === true ? 'updated' : before === false ? 'created' : entry.action === 'created' ? 'created' : 'updated'
    } else {
      if (before === false) return undefined
      action = 'deleted'
    }
    const base = {
      cursor,
      resource: entry.resource,
      id: entry.record_id,
      action,
      modified_utc: entry.changed_utc,
      rest_url: `${ctx.apiUrl}/${entry.resource}/${entry.record_id}`,
    }
    return action === 'deleted' || current === undefined ? base : { ...base, record: current.record }
  }

  async function list(req: FastifyRequest, query: ChangeQuery): Promise<Schema<'ChangeList'>> {
    const caller = req.user
    const { head, prunedThrough } = await logBounds(ctx.db)
    let cursor: Cursor
    if (query.since === undefined) cursor = { position: prunedThrough, origin: prunedThrough, horizon: prunedThrough }
    else if (query.since === 'now') cursor = { position: head, origin: head, horizon: head }
    else {
      const read = readCursor(query.since)
      if (read === undefined) throw invalidParam('since', 'invalidCursor')
      cursor = read
    }
    // A position the log never reached was never an answer's cursor (the log's position never goes back).
    if (cursor.horizon > head) throw invalidParam('since', 'invalidCursor')
    if (cursor.position < prunedThrough) throw new ApiError(410, 'rest-changes-cursor-expired', 'changesCursorExpired')
    // A walk begins where the client stands and looks at the log as it is now; a walk going on keeps its horizon.
    const walk = cursor.position === cursor.horizon ? { origin: cursor.position, horizon: head } : { origin: cursor.origin, horizon: cursor.horizon }
    const perPage = Math.min(query.per_page ?? DEFAULT_PER_PAGE, MAX_PER_PAGE)
    const resources = query.resource === undefined || query.resource.length === 0 ? RESOURCES : RESOURCES.filter((r) => query.resource?.includes(r))
    const latest = cursor.position === walk.horizon ? [] : await latestChanges(ctx.db, {
      since: cursor.position, head: walk.horizon, resources, limit: perPage + 1, ...(query.ml_language !== undefined ? { language: query.ml_language } : {}),
    })
    // A walk that reached its horizon while newer changes exist is not over: the next cursor, plain,
    // begins a walk up to the log's head (has_more false says nothing newer existed at this request).
    const pageFull = latest.length > perPage
    const hasMore = pageFull || walk.horizon < head
    const page = latest.slice(0, perPage)
    const byResource = new Map<ChangeResource, number[]>()
    for (const entry of page) byResource.set(entry.resource, [...(byResource.get(entry.resource) ?? []), entry.record_id])
    const current = new Map<string, { record: ChangeRecord; state: Owned }>()
    const prior = new Map<string, PriorState>()
    await Promise.all([...byResource].map(async ([resource, ids]) => {
      const [records, states] = await Promise.all([currentRecords(caller, resource, ids), priorStates(ctx.db, resource, ids, walk.origin)])
      for (const [id, record] of records) current.set(`${resource}:${id}`, record)
      for (const [id, state] of states) prior.set(`${resource}:${id}`, state)
    }))
    const changes: Array<Schema<'Change'>> = []
    for (const entry of page) {
      const key = `${entry.resource}:${entry.record_id}`
      const now = current.get(key)
      // Each entry's own cursor: the walk with everything up to it visited.
      const told = entryFor(caller, entry, cursorOf(entry.position, walk), now, readable(caller, entry.resource, now?.state), readableBefore(caller, entry.resource, prior.get(key)))
      if (told !== undefined) changes.push(told)
    }
    const last = page.at(-1)
    const nextCursor = pageFull && last !== undefined ? cursorOf(last.position, walk) : cursorOf(walk.horizon)
    return { changes, next_cursor: nextCursor, has_more: hasMore }
  }

  return {
    listChanges: (req) => list(req, req.query ?? {}),
  }
}
