/**
 * The types of webhook deliveries (CONTRACT §13): `<resource>.<action>` for every change of the log
 * (`event.created`, `venue.deleted`, …), the action as an administrator is told of it (an update that
 * trashed a record is `deleted`, one that took it out of the trash `created`: db/webhook-outbox.ts), and
 * what a subscription's `events` may name: a type, every action of a resource (`event.*`) or everything (`*`).
 */
export const WEBHOOK_RESOURCES = {
  events: 'event', venues: 'venue', organizers: 'organizer', categories: 'category', tags: 'tag',
} as const

export type WebhookResource = keyof typeof WEBHOOK_RESOURCES

/** Whether a subscription asking for `patterns` wants deliveries of `type`. */
export function wantsType(patterns: readonly string[], type: string): boolean {
  const resource = type.slice(0, type.indexOf('.'))
  return patterns.some((p) => p === '*' || p === type || p === `${resource}.*`)
}
