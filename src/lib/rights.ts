/**
 * The capability model of CONTRACT §6, as plain functions of the caller and a record: who may edit,
 * publish, set authors and see what. Venues and organizers follow the event rules.
 */
import { WRITABLE_STATUSES, type WritableStatus } from '../contract.js'
import type { Role } from './api-keys.js'

export interface Caller {
  id: number
  role: Role
}

export interface Owned {
  author: number | null
  status: string
}

/** Administrators and editors edit everything, set authors and manage terms. */
export function editsAll(caller: Caller | null): boolean {
  return caller !== null && (caller.role === 'administrator' || caller.role === 'editor')
}

/** Authors and above publish; contributors only submit for review. */
export function canPublish(caller: Caller | null): boolean {
  return editsAll(caller) || caller?.role === 'author'
}

/**
 * Whether the caller may change or delete this record: everything for editors; their own for authors;
 * their own while draft or pending for contributors.
 */
export function canEdit(caller: Caller | null, record: Owned): boolean {
  if (caller === null) return false
  if (editsAll(caller)) return true
  if (record.author !== caller.id) return false
  if (caller.role === 'author') return true
  return caller.role === 'contributor' && (record.status === 'draft' || record.status === 'pending')
}

/** Whether the caller may read this record by id or slug (trash has its own rules, per resource). */
export function canRead(caller: Caller | null, record: Owned): boolean {
  return record.status === 'publish' || canEdit(caller, record)
}

/**
 * Whether the caller may read this venue or organizer by id (CONTRACT §6): a trashed one only if it may
 * edit it (editors always), another one like any record.
 */
export function canReadLinked(caller: Caller | null, record: Owned): boolean {
  return record.status === 'trash' ? canEdit(caller, record) || editsAll(caller) : canRead(caller, record)
}

/**
 * Whether the caller may read this event by id (CONTRACT §6): never in the trash (410 for everyone),
 * else like any record. Filters on an event the caller cannot read match nothing.
 */
export function canReadEvent(caller: Caller | null, record: Owned): boolean {
  return record.status !== 'trash' && canRead(caller, record)
}

/**
 * The status a write stores: the requested one, or `publish` for publishers and `draft` for others when
 * none is asked; a contributor asking to publish (or to make private) submits for review: `pending`.
 */
export function statusToStore(caller: Caller | null, requested: WritableStatus | undefined, fallback?: string): string {
  if (requested === undefined) return fallback ?? (canPublish(caller) ? 'publish' : 'draft')
  if (!canPublish(caller) && (requested === 'publish' || requested === 'private')) return 'pending'
  return requested
}

/**
 * Which records a list shows (CONTRACT §6): anonymous callers and subscribers published ones only
 * (asking another status is refused); editors every non-trash status; authors and contributors
 * published records plus their own.
 */
export type ListScope =
  | { kind: 'all'; statuses: readonly string[] }
  | { kind: 'published-or-own'; statuses: readonly string[]; owner: number }
  | { kind: 'refused' }

export function listScope(caller: Caller | null, requested: readonly WritableStatus[] | undefined): ListScope {
  // Several statuses are their union (CONTRACT §4, §6), each allowed for the caller as one alone would be.
  const asked = requested === undefined || requested.length === 0 ? undefined : [...new Set(requested)]
  const statuses = asked ?? WRITABLE_STATUSES
  if (editsAll(caller)) return { kind: 'all', statuses }
  if (caller !== null && (caller.role === 'author' || caller.role === 'contributor')) {
    return { kind: 'published-or-own', statuses, owner: caller.id }
  }
  if (asked !== undefined && asked.some((status) => status !== 'publish')) return { kind: 'refused' }
  return { kind: 'all', statuses: ['publish'] }
}

/**
 * The events `has_events` and `only_with_upcoming` count for the caller (CONTRACT §6): of the published and
 * private ones (never draft, pending or trash), those it may read: editors all, authors the published ones
 * and their own private ones, everyone else the published ones.
 */
export function countedEventsScope(caller: Caller | null): ListScope {
  const statuses = ['publish', 'private'] as const
  if (editsAll(caller)) return { kind: 'all', statuses }
  if (caller !== null && caller.role === 'author') return { kind: 'published-or-own', statuses, owner: caller.id }
  return { kind: 'all', statuses: ['publish'] }
}
