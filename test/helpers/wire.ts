/**
 * A validator that follows the published document, as a gateway or Prism would: query parameters
 * and form fields are text, deserialized by the OpenAPI rules (a repeated key is an array, the style
 * `form` with `explode` for array parameters; a single value stays a string) and checked with Ajv 2020
 * with type coercion (`"5"` may be the integer 5, `"true"` the boolean true), as Prism does. It knows
 * nothing of the server's normalisation: it is the oracle for "the document accepts what the server
 * accepts".
 */
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js'
import addFormats from 'ajv-formats'
import { PREFIX, dereference, servedDocument, type OpenApiDocument } from '../../src/http/spec.js'
import { SPEC } from './contract.js'

type Json = Record<string, unknown>

const isJson = (value: unknown): value is Json => typeof value === 'object' && value !== null && !Array.isArray(value)

export const PUBLISHED: OpenApiDocument = dereference(servedDocument(SPEC, 'http://calendar.test', 'en'))
const ajv = new Ajv2020({ strict: false, allErrors: true, coerceTypes: true })
addFormats.default(ajv)
const compiled = new Map<unknown, ValidateFunction>()

function check(schema: unknown, value: unknown): string[] {
  let validate = compiled.get(schema)
  if (validate === undefined) {
    // Coercion needs a parent to write the coerced value to: wrap the value.
    validate = ajv.compile({ type: 'object', properties: { value: schema } })
    compiled.set(schema, validate)
  }
  return validate({ value }) ? [] : (validate.errors ?? []).map((e) => `${e.instancePath} ${e.message ?? ''}`)
}

function operation(method: string, path: string): Json {
  const inner = path.slice(PREFIX.length) || '/'
  for (const [template, item] of Object.entries(PUBLISHED.paths)) {
    const pattern = new RegExp(`^${template.replace(/\{id\}/g, '\\d+').replace(/\{slug\}/g, '[^/]+')}/?$`)
    const found = item[method.toLowerCase()]
    if (pattern.test(inner) && isJson(found)) return found
  }
  throw new Error(`no operation for ${method} ${path}`)
}

/** The fields of a text (query or form), a repeated key as an array. */
function fields(params: URLSearchParams): Map<string, string | string[]> {
  const out = new Map<string, string | string[]>()
  for (const [key, value] of params) {
    const before = out.get(key)
    out.set(key, before === undefined ? value : Array.isArray(before) ? [...before, value] : [before, value])
  }
  return out
}

/** What the document finds wrong with a request's query string and, for a form, its body. */
export function documentProblems(method: string, url: string, form?: string): string[] {
  const parsed = new URL(url, 'http://calendar.test')
  const op = operation(method, parsed.pathname)
  const problems: string[] = []
  const query = fields(parsed.searchParams)
  for (const parameter of Array.isArray(op.parameters) ? op.parameters.filter(isJson) : []) {
    if (parameter.in !== 'query' || typeof parameter.name !== 'string') continue
    const sent = query.get(parameter.name)
    if (sent === undefined) continue
    const schema = isJson(parameter.schema) ? parameter.schema : {}
    // Style form: an array parameter collects every value; any other takes its (last) value.
    const value = schema.type === 'array' ? (Array.isArray(sent) ? sent : [sent]) : Array.isArray(sent) ? sent.at(-1) : sent
    for (const problem of check(schema, value)) problems.push(`query ${parameter.name}${problem}`)
  }
  if (form !== undefined) {
    const body = isJson(op.requestBody) && isJson(op.requestBody.content) ? op.requestBody.content['application/x-www-form-urlencoded'] : undefined
    const schema = isJson(body) ? body.schema : undefined
    if (schema === undefined) problems.push('no form body declared')
    else for (const problem of check(schema, Object.fromEntries(fields(new URLSearchParams(form))))) problems.push(`form${problem}`)
  }
  return problems
}
