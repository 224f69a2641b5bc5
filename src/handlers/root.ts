/**
 * The namespace root (route index) and `/doc` (the contract itself), both built from the spec and
 * served in the requested language.
 */
import { stringify } from 'yaml'
import { ApiError } from '../http/errors.js'
import type { Language } from '../http/language.js'
import type { Handlers } from '../http/operations.js'
import { buildRouteIndex, type RouteIndex } from '../http/route-index.js'
import { NAMESPACE, dereference, servedDocument, type OpenApiDocument } from '../http/spec.js'
import type { AppContext } from './context.js'

type RootHandlers = Pick<Handlers, 'getRoot' | 'getDoc'>

export function rootHandlers(ctx: AppContext): RootHandlers {
  const documents = new Map<Language, { document: OpenApiDocument; yaml: string; index: RouteIndex; help: RouteIndex }>()
  const served = (language: Language) => {
    let entry = documents.get(language)
    if (entry === undefined) {
      const document = servedDocument(ctx.spec, ctx.config.publicUrl, language)
      const resolved = dereference(document)
      entry = {
        document,
        yaml: stringify(document, { lineWidth: 0 }),
        index: buildRouteIndex(resolved, ctx.config.publicUrl, false),
        help: buildRouteIndex(resolved, ctx.config.publicUrl, true),
      }
      documents.set(language, entry)
    }
    return entry
  }

  return {
    async getRoot(req) {
      const query = req.query ?? {}
      if (query.namespace !== undefined && query.namespace !== NAMESPACE) {
        throw new ApiError(404, 'rest_invalid_namespace', 'invalidNamespace')
      }
      const entry = served(query.ml_language ?? ctx.config.defaultLanguage)
      return query.context === 'help' ? entry.help : entry.index
    },

    async getDoc(req, reply) {
      const entry = served(req.query?.ml_language ?? ctx.config.defaultLanguage)
      if (/\b(application|text)\/(x-)?yaml\b/.test(req.headers.accept ?? '')) {
        reply.type('application/yaml; charset=utf-8')
        return entry.yaml
      }
      return entry.document
    },
  }
}
