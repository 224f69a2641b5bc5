/**
 * The contract as data: loaded once from `openapi/openapi.yaml`, handed to glue for routes and
 * validation, and served (with its server set to the running base URL) at `/doc` and in Swagger UI.
 */
import { readFileSync } from 'node:fs'
import type { OpenAPIV3 } from 'openapi-types'
import { parse } from 'yaml'
import { loadLanguagePacks, localizeDocument, type LanguagePack } from './i18n.js'
import type { Language } from './language.js'

export const NAMESPACE = 'calendar/events/v1'
export const PREFIX = `/${NAMESPACE}`

export type OpenApiDocument = Record<string, unknown> & { paths: Record<string, Record<string, unknown>> }

const SPEC_URL = new URL('../../openapi/openapi.yaml', import.meta.url)

export interface LoadedSpec {
  text: string
  document: OpenApiDocument
  /** Translations of its texts and messages (openapi/i18n/<lang>.yaml). */
  packs: Record<Exclude<Language, 'en'>, LanguagePack>
}

/** The contract's YAML text and parsed document, with its translations. */
export function loadSpec(): LoadedSpec {
  const text = readFileSync(SPEC_URL, 'utf8')
  const document: unknown = parse(text)
  if (!isDocument(document)) throw new Error(`${SPEC_URL.pathname} is not an OpenAPI document`)
  return { text, document, packs: loadLanguagePacks() }
}

function isDocument(value: unknown): value is OpenApiDocument {
  return typeof value === 'object' && value !== null && 'openapi' in value && 'paths' in value &&
    typeof value.paths === 'object' && value.paths !== null
}

/**
 * The document as served: the one absolute server `{base_url}/calendar/events/v1`, descriptions in
 * `language`. Built once per language and base URL.
 */
export function servedDocument(spec: Pick<LoadedSpec, 'document' | 'packs'>, baseUrl: string, language: Language): OpenApiDocument {
  const document = localizeDocument(spec.document, language === 'en' ? undefined : spec.packs[language])
  const server: unknown = Array.isArray(document.servers) ? document.servers[0] : undefined
  const description = typeof server === 'object' && server !== null && 'description' in server ? server.description : undefined
  document.servers = [{ url: `${baseUrl}${PREFIX}`, ...(typeof description === 'string' ? { description } : {}) }]
  return document
}

/**
 * A copy of `value` with every local `$ref` (`#/...`) replaced by what it points to, for readers that
 * walk the document (the route index). Cycles are cut by leaving the inner `$ref` in place.
 */
export function dereference<T>(root: T): T {
  const resolve = (pointer: string): unknown => {
    let node: unknown = root
    for (const raw of pointer.replace(/^#\//, '').split('/')) {
      const key = raw.replace(/~1/g, '/').replace(/~0/g, '~')
      node = typeof node === 'object' && node !== null ? (node as Record<string, unknown>)[key] : undefined
    }
    return node
  }
  const walk = (node: unknown, seen: ReadonlySet<string>): unknown => {
    if (Array.isArray(node)) return node.map((n) => walk(n, seen))
    if (typeof node !== 'object' || node === null) return node
    const ref = (node as Record<string, unknown>).$ref
    if (typeof ref === 'string' && ref.startsWith('#/')) {
      if (seen.has(ref)) return node
      return walk(resolve(ref), new Set([...seen, ref]))
    }
    return Object.fromEntries(Object.entries(node).map(([k, v]) => [k, walk(v, seen)]))
  }
  return walk(root, new Set()) as T
}

/** The document as @fastify/swagger types it (it serves it to Swagger UI as it is). */
export function asSwaggerDocument(document: OpenApiDocument): OpenAPIV3.Document {
  if (!isSwaggerDocument(document)) throw new Error('the contract lacks openapi/info/paths')
  return document
}

function isSwaggerDocument(value: OpenApiDocument): value is OpenApiDocument & OpenAPIV3.Document {
  return typeof value.openapi === 'string' && typeof value.info === 'object' && value.info !== null
}
