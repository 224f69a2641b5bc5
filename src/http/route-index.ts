/**
 * The namespace root (CONTRACT §9): every route of the spec with its methods and, per group of methods
 * that take the same arguments, each argument's type, description, default, enum and whether it is
 * required. Built from the (localised) document, so it can never drift from the contract.
 */
import type { RouteArg, RouteEntry, RouteIndex } from '../contract.js'
import { NAMESPACE, PREFIX, type OpenApiDocument } from './spec.js'
import { isRecord, type Json } from '../lib/json.js'

const METHODS = ['get', 'post', 'put', 'patch', 'delete'] as const

type RouteEndpoint = RouteEntry['endpoints'][number]


export function buildRouteIndex(document: OpenApiDocument, baseUrl: string, help: boolean): RouteIndex {
  const routes: RouteIndex['routes'] = {}
  for (const [path, item] of Object.entries(document.paths)) {
    const endpoints: RouteEndpoint[] = []
    const methods: string[] = []
    for (const method of METHODS) {
      const operation = item[method]
      if (!isRecord(operation)) continue
      methods.push(method.toUpperCase())
      const args = argsOf(operation)
      const same = endpoints.find((e) => JSON.stringify(e.args) === JSON.stringify(args))
      if (same !== undefined) {
        same.methods.push(method.toUpperCase())
      } else {
        const endpoint: RouteEndpoint = { methods: [method.toUpperCase()], args }
        if (help && typeof operation.description === 'string') endpoint.description = operation.description
        endpoints.push(endpoint)
      }
    }
    const route = path === '/' ? PREFIX : `${PREFIX}${path}`
    routes[route] = { namespace: NAMESPACE, methods, endpoints }
  }
  return {
    namespace: NAMESPACE,
    routes,
    _links: {
      self: [{ href: `${baseUrl}${PREFIX}` }],
      describedby: [{ href: `${baseUrl}${PREFIX}/doc` }],
    },
  }
}

function argsOf(operation: Json): Record<string, RouteArg> {
  const args: Record<string, RouteArg> = {}
  const parameters = Array.isArray(operation.parameters) ? operation.parameters : []
  for (const parameter of parameters) {
    if (!isRecord(parameter) || (parameter.in !== 'query' && parameter.in !== 'path')) continue
    if (typeof parameter.name !== 'string') continue
    const schema = isRecord(parameter.schema) ? parameter.schema : {}
    args[parameter.name] = arg(schema, textOf(parameter.description, schema.description), parameter.required === true)
  }
  const body = isRecord(operation.requestBody) && isRecord(operation.requestBody.content) ? operation.requestBody.content['application/json'] : undefined
  const schema = isRecord(body) && isRecord(body.schema) ? body.schema : undefined
  if (schema !== undefined && isRecord(schema.properties)) {
    const required = Array.isArray(schema.required) ? schema.required : []
    for (const [name, property] of Object.entries(schema.properties)) {
      if (!isRecord(property) || name in args) continue
      args[name] = arg(property, textOf(property.description), required.includes(name))
    }
  }
  return args
}

function arg(schema: Json, description: string, required: boolean): RouteArg {
  const out: RouteArg = { type: typeOf(schema), description, required }
  if (schema.default !== undefined) out.default = schema.default
  if (Array.isArray(schema.enum)) out.enum = schema.enum
  return out
}

function typeOf(schema: Json): string | string[] {
  if (typeof schema.type === 'string') return schema.type
  const types = new Set<string>()
  if (Array.isArray(schema.type)) for (const t of schema.type) if (typeof t === 'string') types.add(t)
  for (const key of ['oneOf', 'anyOf'] as const) {
    const alternatives = schema[key]
    if (Array.isArray(alternatives)) {
      for (const alt of alternatives) {
        if (!isRecord(alt)) continue
        const t = typeOf(alt)
        for (const name of Array.isArray(t) ? t : [t]) types.add(name)
      }
    }
  }
  const list = [...types].filter((t) => t !== '')
  return list.length === 1 ? (list[0] ?? 'string') : list.length === 0 ? 'string' : list
}

function textOf(...candidates: unknown[]): string {
  for (const c of candidates) if (typeof c === 'string' && c.trim() !== '') return c
  return ''
}

