/**
 * /categories operations, one handler per operationId.
 */
import type { Handlers } from '../http/operations.js'
import { sendList } from '../http/pagination.js'
import { sendSerialized } from '../http/serialized.js'
import { CATEGORY } from '../repositories/terms.js'
import type { AppContext } from './context.js'
import { termOperations } from './terms.js'

type CategoryHandlers = Pick<Handlers,
  'listCategories' | 'createCategory' | 'getCategory' | 'updateCategory' | 'updateCategoryPut' | 'updateCategoryPost' | 'deleteCategory'>

export function categoryHandlers(ctx: AppContext): CategoryHandlers {
  const terms = termOperations(ctx, CATEGORY)
  return {
    async listCategories(req, reply) {
      const { records, list } = await terms.list(req, req.query ?? {})
      return sendList(reply, 'categories', list, records.map((r) => ctx.json.category(r)))
    },
    createCategory: (req, reply) => terms.create(req, req.body, reply, ctx.json.category),
    getCategory: async (req, reply) => sendSerialized(reply, ctx.json.category(await terms.get(req, req.params.id, req.query?.ml_language, reply))),
    updateCategory: (req, reply) => terms.update(req, req.params.id, req.body, reply),
    updateCategoryPut: (req, reply) => terms.update(req, req.params.id, req.body, reply),
    updateCategoryPost: (req, reply) => terms.update(req, req.params.id, req.body, reply),
    deleteCategory: (req) => terms.remove(req, req.params.id),
  }
}
