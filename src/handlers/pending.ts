/**
 * Operations whose resources are not built yet answer 501 `rest-not-implemented`, as the spec declares.
 * Each resource's issue removes its entries here together with the 501 in the spec.
 */
import { notImplemented } from '../http/errors.js'
import type { Handlers } from '../http/operations.js'

const PENDING = [
  'listEvents', 'createEvent', 'getEvent', 'updateEvent', 'updateEventPut', 'updateEventPost', 'deleteEvent',
  'getEventBySlug', 'updateEventBySlug', 'updateEventBySlugPut', 'updateEventBySlugPost', 'deleteEventBySlug',
] as const

type Pending = (typeof PENDING)[number]

export const PENDING_OPERATIONS: readonly string[] = PENDING

export function pendingHandlers(): Pick<Handlers, Pending> {
  const handler = async (): Promise<never> => {
    throw notImplemented()
  }
  return Object.fromEntries(PENDING.map((id) => [id, handler])) as Record<Pending, typeof handler>
}
