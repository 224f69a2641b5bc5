/**
 * Checks a response against the contract: the operation is found from method and path, the status must
 * be declared for it, the media type must be declared, and a JSON body must validate against the
 * declared schema (Ajv 2020 with formats). Every response of every test goes through this.
 */
import { Ajv2020 } from 'ajv/dist/2020.js'
import addFormats from 'ajv-formats'
import { PREFIX, dereference, loadSpec, type OpenApiDocument } from '../../src/http/spec.js'

type Json = Record<string, unknown>

export const SPEC = loadSpec()
const RESOLVED: OpenApiDocument = dereference(SPEC.document)
const ajv = new Ajv2020({ strict: false, allErrors: true, validateFormats: true })
addFormats.default(ajv)
const compiled = new Map<string, ReturnType<typeof ajv.compile>>()

const routes = Object.keys(RESOLVED.paths).map((path) => ({
  path,
  pattern: new RegExp(`^${path.replace(/\{id\}/g, '\\d+').replace(/\{[a-z_]+\}/g, '[^/]+')}$`),
}))

export interface ResponseLike {
  statusCode: number
  headers: Record<string, unknown>
  body: string
}

/** Problems found (empty when the response is as the contract says). */
export function contractProblems(method: string, url: string, res: ResponseLike): string[] {
  const path = new URL(url, 'http://x').pathname
  const upper = method.toUpperCase()
  if (path.startsWith(`${PREFIX}/ui`)) return []
  const inner = path === PREFIX ? '/' : path.startsWith(`${PREFIX}/`) ? path.slice(PREFIX.length).replace(/(.)\/$/, '$1') : undefined
  const route = inner === undefined ? undefined : routes.find((r) => r.pattern.test(inner))
  const item = route === undefined ? undefined : RESOLVED.paths[route.path]
  const operation = item?.[upper.toLowerCase()]
  if (upper === 'OPTIONS' && item !== undefined) return res.statusCode === 204 ? [] : [`OPTIONS ${path}: status ${res.statusCode}`]
  if (upper === 'HEAD') return []
  if (route === undefined || !isJson(operation)) {
    // Outside the contract's operations only the not-found answer is allowed.
    if (res.statusCode !== 404) return [`${upper} ${path}: no operation, yet status ${res.statusCode}`]
    return validate('#/components/schemas/Error', schemaAt(['components', 'schemas', 'Error']), res)
  }
  const responses = isJson(operation.responses) ? operation.responses : {}
  const declared = responses[String(res.statusCode)]
  const name = `${String(operation.operationId)} ${res.statusCode}`
  if (!isJson(declared)) return [`${name}: status not declared (declared: ${Object.keys(responses).join(', ')})`]
  const content = isJson(declared.content) ? declared.content : undefined
  if (content === undefined) return res.body === '' ? [] : [`${name}: declared without a body, got ${res.body.slice(0, 80)}`]
  const type = String(res.headers['content-type'] ?? '').split(';')[0]?.trim() ?? ''
  const media = content[type]
  if (!isJson(media)) return [`${name}: media type ${type} not declared (declared: ${Object.keys(content).join(', ')})`]
  if (!type.endsWith('json')) return []
  return validate(name, isJson(media.schema) ? media.schema : {}, res)
}

/** Problems of a body that should be the contract's Error (answers outside any operation). */
export function errorBodyProblems(body: string): string[] {
  return validate('#/components/schemas/Error', schemaAt(['components', 'schemas', 'Error']), { statusCode: 0, headers: {}, body })
}

function validate(key: string, schema: Json, res: ResponseLike): string[] {
  let check = compiled.get(key)
  if (check === undefined) {
    check = ajv.compile(schema)
    compiled.set(key, check)
  }
  let body: unknown
  try {
    body = JSON.parse(res.body)
  } catch {
    return [`${key}: body is not JSON: ${res.body.slice(0, 80)}`]
  }
  if (check(body)) return []
  return (check.errors ?? []).map((e) => `${key}: ${e.instancePath || '(root)'} ${e.message ?? ''} ${JSON.stringify(e.params)}`)
}

function schemaAt(path: string[]): Json {
  let node: unknown = RESOLVED
  for (const key of path) node = isJson(node) ? node[key] : undefined
  return isJson(node) ? node : {}
}

function isJson(value: unknown): value is Json {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}
