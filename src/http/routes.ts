/**
 * How the spec's paths become routes beyond what glue does: `{id}` matches digits only, and a text segment
 * (`{slug}`, `{occurrence}`) is never empty.
 */
import type { FastifyInstance } from 'fastify'

/**
 * `{id}` is digits only: `/events/abc` matches no route (404 `rest_no_route`) instead of failing
 * validation, as the source document's `<id>` pattern says. A text segment holds at least one character:
 * `/events/by-slug//` or `/events/1/occurrences//split` (an empty segment) matches no route either, before
 * authentication as CONTRACT §1 orders the checks, instead of failing the parameter's `minLength` (a 400).
 */
export function digitsOnlyIds(app: FastifyInstance): void {
  app.addHook('onRoute', (route) => {
    const params: unknown = route.schema?.params
    if (typeof params !== 'object' || params === null || !('properties' in params)) return
    const properties = params.properties
    if (typeof properties !== 'object' || properties === null) return
    for (const [name, schema] of Object.entries(properties)) {
      if (typeof schema === 'object' && schema !== null && 'type' in schema && schema.type === 'integer') {
        route.url = route.url.replace(`:${name}`, `:${name}(^\\d+$)`)
      } else if (typeof schema === 'object' && schema !== null && 'type' in schema && schema.type === 'string') {
        route.url = route.url.replace(`:${name}`, `:${name}(^[\\s\\S]+$)`)
      }
    }
  })
}
