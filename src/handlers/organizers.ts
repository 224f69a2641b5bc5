/**
 * /organizers operations, by id and by slug, one handler per operationId.
 */
import type { Handlers } from '../http/operations.js'
import { sendList } from '../http/pagination.js'
import { sendSerialized } from '../http/serialized.js'
import { ORGANIZER } from '../repositories/organizers.js'
import type { AppContext } from './context.js'
import { byId, bySlug, linkedOperations } from './linked.js'
import { organizerFields } from './organizer-input.js'

type OrganizerHandlers = Pick<Handlers,
  | 'listOrganizers' | 'createOrganizer'
  | 'getOrganizer' | 'updateOrganizer' | 'updateOrganizerPut' | 'updateOrganizerPost' | 'deleteOrganizer'
  | 'getOrganizerBySlug' | 'updateOrganizerBySlug' | 'updateOrganizerBySlugPut' | 'updateOrganizerBySlugPost' | 'deleteOrganizerBySlug'>

export function organizerHandlers(ctx: AppContext): OrganizerHandlers {
  const organizers = linkedOperations(ctx, ORGANIZER, { table: 'organizers', resource: 'organizer', fields: organizerFields }, 'organizers')
  return {
    async listOrganizers(req, reply) {
      const { records, list } = await organizers.list(req, req.query ?? {})
      return sendList(reply, 'organizers', list, records.map((r) => ctx.json.organizer(r)))
    },
    createOrganizer: (req, reply) => organizers.create(req, req.body, reply, ctx.json.organizer),
    getOrganizer: async (req, reply) => sendSerialized(reply, ctx.json.organizer(await organizers.get(req, byId(req.params), req.query?.ml_language, reply))),
    updateOrganizer: (req, reply) => organizers.update(req, byId(req.params), req.body, reply),
    updateOrganizerPut: (req, reply) => organizers.update(req, byId(req.params), req.body, reply),
    updateOrganizerPost: (req, reply) => organizers.update(req, byId(req.params), req.body, reply),
    deleteOrganizer: (req, reply) => organizers.remove(req, reply, byId(req.params), req.query?.force ?? false),
    getOrganizerBySlug: async (req, reply) => sendSerialized(reply, ctx.json.organizer(await organizers.get(req, bySlug(req.params), req.query?.ml_language, reply))),
    updateOrganizerBySlug: (req, reply) => organizers.update(req, bySlug(req.params), req.body, reply),
    updateOrganizerBySlugPut: (req, reply) => organizers.update(req, bySlug(req.params), req.body, reply),
    updateOrganizerBySlugPost: (req, reply) => organizers.update(req, bySlug(req.params), req.body, reply),
    deleteOrganizerBySlug: (req, reply) => organizers.remove(req, reply, bySlug(req.params), req.query?.force ?? false),
  }
}
