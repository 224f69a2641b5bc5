/**
 * /venues operations, by id and by slug, one handler per operationId.
 */
import type { Handlers } from '../http/operations.js'
import { sendList } from '../http/pagination.js'
import { sendSerialized } from '../http/serialized.js'
import { VENUE } from '../repositories/venues.js'
import type { AppContext } from './context.js'
import { byId, bySlug, linkedOperations } from './linked.js'
import { venueFields } from './venue-input.js'

type VenueHandlers = Pick<Handlers,
  | 'listVenues' | 'createVenue'
  | 'getVenue' | 'updateVenue' | 'updateVenuePut' | 'updateVenuePost' | 'deleteVenue'
  | 'getVenueBySlug' | 'updateVenueBySlug' | 'updateVenueBySlugPut' | 'updateVenueBySlugPost' | 'deleteVenueBySlug'>

export function venueHandlers(ctx: AppContext): VenueHandlers {
  const venues = linkedOperations(ctx, VENUE, { table: 'venues', resource: 'venue', fields: venueFields }, 'venues')
  return {
    async listVenues(req, reply) {
      const { records, list } = await venues.list(req, req.query ?? {})
      return sendList(reply, 'venues', list, records.map((r) => ctx.json.venue(r)))
    },
    createVenue: (req, reply) => venues.create(req, req.body, reply, ctx.json.venue),
    getVenue: async (req, reply) => sendSerialized(reply, ctx.json.venue(await venues.get(req, byId(req.params), req.query?.ml_language, reply))),
    updateVenue: (req, reply) => venues.update(req, byId(req.params), req.body, reply),
    updateVenuePut: (req, reply) => venues.update(req, byId(req.params), req.body, reply),
    updateVenuePost: (req, reply) => venues.update(req, byId(req.params), req.body, reply),
    deleteVenue: (req, reply) => venues.remove(req, reply, byId(req.params), req.query?.force ?? false),
    getVenueBySlug: async (req, reply) => sendSerialized(reply, ctx.json.venue(await venues.get(req, bySlug(req.params), req.query?.ml_language, reply))),
    updateVenueBySlug: (req, reply) => venues.update(req, bySlug(req.params), req.body, reply),
    updateVenueBySlugPut: (req, reply) => venues.update(req, bySlug(req.params), req.body, reply),
    updateVenueBySlugPost: (req, reply) => venues.update(req, bySlug(req.params), req.body, reply),
    deleteVenueBySlug: (req, reply) => venues.remove(req, reply, bySlug(req.params), req.query?.force ?? false),
  }
}
