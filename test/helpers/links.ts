/**
 * Events linked to venues and organizers, inserted straight into storage (there is no events route yet):
 * an event from `insertEvent`, then its rows in `event_venues` / `event_organizers` in the order given.
 */
import type { Insertable, Kysely } from 'kysely'
import type { Database, EventsTable } from '../../src/db/schema.js'
import { insertEvent } from './fixtures.js'

export interface EventLinks {
  venues?: number[]
  organizers?: number[]
}

/** Inserts an event (published, English, starting 2026-07-01 18:00 UTC unless overridden) linked to `links`. */
export async function insertLinkedEvent(db: Kysely<Database>, links: EventLinks, overrides: Partial<Insertable<EventsTable>> = {}): Promise<number> {
  const id = await insertEvent(db, overrides)
  for (const [position, venue] of (links.venues ?? []).entries()) {
    await db.insertInto('event_venues').values({ event_id: id, venue_id: venue, position }).execute()
  }
  for (const [position, organizer] of (links.organizers ?? []).entries()) {
    await db.insertInto('event_organizers').values({ event_id: id, organizer_id: organizer, position }).execute()
  }
  return id
}

/** The ids linked to an event, in position order (to check what a delete left behind). */
export async function linkedIds(db: Kysely<Database>, event: number): Promise<{ venues: number[]; organizers: number[] }> {
  const venues = await db.selectFrom('event_venues').select('venue_id').where('event_id', '=', event).orderBy('position').execute()
  const organizers = await db.selectFrom('event_organizers').select('organizer_id').where('event_id', '=', event).orderBy('position').execute()
  return { venues: venues.map((r) => r.venue_id), organizers: organizers.map((r) => r.organizer_id) }
}
