/**
 * The namespace root (route index) and `/doc` (the contract itself), both built from the spec and
 * served in the requested language.
 */
import { ApiError } from '../http/errors.js'
import type { Language, RouteIndex } from '../contract.js'
import type { Handlers } from '../http/operations.js'
import { preferredMediaType } from '../http/negotiation.js'
import { buildRouteIndex } from '../http/route-index.js'
import { NAMESPACE, dereference, servedDocument, type OpenApiDocument } from '../http/spec.js'
import { typedDocument } from '../http/wire-forms.js'
import { stringifyYaml } from '../http/yaml.js'
import type { AppContext } from './context.js'

type RootHandlers = Pick<Handlers, 'getRoot' | 'getDoc'>

/** What `/doc` is served as: JSON unless YAML is preferred (the YAML types in use are all understood). */
const DOC_MEDIA_TYPES = ['application/json', 'application/yaml', 'application/x-yaml', 'text/yaml', 'text/x-yaml'] as const

export function rootHandlers(ctx: AppContext): RootHandlers {
  // Per language, each form made on first use (the YAML text and the help index are rarely asked for).
  interface Served { document: OpenApiDocument; resolved?: OpenApiDocument; yaml?: string; index?: RouteIndex; help?: RouteIndex }
  const documents = new Map<Language, Served>()
  const served = (language: Language): Served => {
    let entry = documents.get(language)
    if (entry === undefined) {
      entry = { document: servedDocument(ctx.spec, ctx.publicUrl, language) }
      documents.set(language, entry)
    }
    return entry
  }
  const routeIndex = (entry: Served, help: boolean): RouteIndex => {
    // The arguments as handlers take them (`boolean`, `array`); their descriptions name the text forms too.
    entry.resolved ??= dereference(typedDocument(entry.document))
    return help
      ? (entry.help ??= buildRouteIndex(entry.resolved, ctx.publicUrl, true))
      : (entry.index ??= buildRouteIndex(entry.resolved, ctx.publicUrl, false))
  }

  return {
    async getRoot(req) {
      const query = req.query ?? {}
      if (query.namespace !== undefined && query.namespace !== NAMESPACE) {
        throw new ApiError(404, 'rest_invalid_namespace', 'invalidNamespace')
      }
      return routeIndex(served(query.ml_language ?? ctx.config.defaultLanguage), query.context === 'help')
    },

    async getDoc(req, reply) {
      // JSON or YAML by Accept, at one URL: caches must keep them apart.
      reply.header('Vary', 'Accept')
      const entry = served(req.query?.ml_language ?? ctx.config.defaultLanguage)
      if (preferredMediaType(req, DOC_MEDIA_TYPES) !== 'application/json') {
        reply.type('application/yaml; charset=utf-8')
        return (entry.yaml ??= stringifyYaml(entry.document))
      }
      return entry.document
    },
  }
}
