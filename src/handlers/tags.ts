/**
 * /tags operations, one handler per operationId.
 */
import type { Handlers } from '../http/operations.js'
import { sendList } from '../http/pagination.js'
import { sendSerialized } from '../http/serialized.js'
import { TAG } from '../repositories/terms.js'
import type { AppContext } from './context.js'
import { termOperations } from './terms.js'

type TagHandlers = Pick<Handlers,
  'listTags' | 'createTag' | 'getTag' | 'updateTag' | 'updateTagPut' | 'updateTagPost' | 'deleteTag'>

export function tagHandlers(ctx: AppContext): TagHandlers {
  const terms = termOperations(ctx, TAG)
  return {
    async listTags(req, reply) {
      const { records, list } = await terms.list(req, req.query ?? {})
      return sendList(reply, 'tags', list, records.map((r) => ctx.json.tag(r)))
    },
    createTag: (req, reply) => terms.create(req, req.body, reply, ctx.json.tag),
    getTag: async (req, reply) => sendSerialized(reply, ctx.json.tag(await terms.get(req, req.params.id, req.query?.ml_language, reply))),
    updateTag: (req, reply) => terms.update(req, req.params.id, req.body, reply),
    updateTagPut: (req, reply) => terms.update(req, req.params.id, req.body, reply),
    updateTagPost: (req, reply) => terms.update(req, req.params.id, req.body, reply),
    deleteTag: (req) => terms.remove(req, req.params.id),
  }
}
