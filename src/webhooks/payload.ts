/**
 * The body and headers of a webhook delivery (CONTRACT §13, Standard Webhooks). The body is
 * `{ type, timestamp, data: { resource, id, cursor, ml_language, record? } }`: `timestamp` is when the
 * change happened, `cursor` its place in the change log (as `GET /changes` names it), `record` the
 * record as it is when first sent, as an administrator sees it in a list, in the contract's JSON (absent
 * for a deletion or a record gone since, to the trash or for good). The body is fixed at the first attempt: retries send it again.
 * The headers are signed by the `standardwebhooks` package: `webhook-id` (the same on every attempt),
 * `webhook-timestamp` (this attempt) and `webhook-signature`.
 */
import { Webhook } from 'standardwebhooks'
import type { Kysely } from 'kysely'
import type { Database } from '../db/schema.js'
import { cursorOf } from '../handlers/changes.js'
import type { RecordSerializers } from '../http/serialized.js'
import type { Caller } from '../lib/rights.js'
import { currentRecords, type ChangeRecord } from '../repositories/change-records.js'
import type { Site } from '../repositories/site.js'
import type { ClaimedDelivery } from '../repositories/webhook-deliveries.js'
import type { Category, Event, Organizer, Tag, Venue } from '../contract.js'

/** Records in payloads are shown as an administrator sees them. */
const ADMINISTRATOR: Caller = { id: 0, role: 'administrator' }

/** The `webhook-id` of a delivery: one per change and subscription, the same on every retry. */
export function messageId(webhookId: number, position: number): string {
  return `msg_${webhookId}_${position}`
}

export interface PayloadSources {
  db: Kysely<Database>
  site: Site
  json: RecordSerializers
}

/** The body of a delivery's first attempt. */
export async function buildPayload(sources: PayloadSources, delivery: ClaimedDelivery): Promise<string> {
  const action = delivery.type.slice(delivery.type.indexOf('.') + 1)
  let record: Buffer | undefined
  if (action !== 'deleted') {
    const found = (await currentRecords(sources.db, sources.site, ADMINISTRATOR, delivery.resource, [delivery.record_id])).get(delivery.record_id)
    // Type and record agree: a record that has since left what an administrator's list shows (the
    // trash) goes without one, as `GET /changes` tells of it.
    if (found !== undefined && found.state.status !== 'trash') record = serialize(sources.json, delivery.resource, found.record)
  }
  const head = JSON.stringify({
    type: delivery.type,
    timestamp: `${delivery.changed_utc.replace(' ', 'T')}Z`,
    data: { resource: delivery.resource, id: delivery.record_id, cursor: cursorOf(delivery.position), ml_language: delivery.language },
  })
  // The record's JSON, as the contract's schema makes it, goes in as it is: `…"ml_language":"en","record":{…}}}`.
  return record === undefined ? head : `${head.slice(0, -2)},"record":${record.toString('utf8')}}}`
}

function serialize(json: RecordSerializers, resource: ClaimedDelivery['resource'], record: ChangeRecord): Buffer {
  switch (resource) {
    case 'events': return json.event(record as Event)
    case 'venues': return json.venue(record as Venue)
    case 'organizers': return json.organizer(record as Organizer)
    case 'categories': return json.category(record as Category)
    case 'tags': return json.tag(record as Tag)
  }
}

/** The signed Standard Webhooks headers of one attempt. */
export function signedHeaders(secret: string, id: string, at: Date, body: string): Record<string, string> {
  const seconds = Math.floor(at.getTime() / 1000)
  return {
    'webhook-id': id,
    'webhook-timestamp': String(seconds),
    'webhook-signature': new Webhook(secret).sign(id, new Date(seconds * 1000), body),
  }
}
