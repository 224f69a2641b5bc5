/**
 * The contract as data: loaded once from `openapi/openapi.yaml`, handed to glue for routes and
 * validation, and served (with its server set to the running base URL) at `/doc` and in Swagger UI.
 */
import { createHash } from 'node:crypto'
import { readFileSync } from 'node:fs'
import type { OpenAPIV3 } from 'openapi-types'
import { languagePack, localizeDocument, parseLanguagePacks, readLanguagePackSources, type LanguagePack } from './i18n.js'
import { LANGUAGES, type Language } from '../contract.js'
import { isRecord } from '../lib/json.js'
import { parseYaml } from './yaml.js'

export const NAMESPACE = 'calendar/events/v1'
export const PREFIX = `/${NAMESPACE}`

export type OpenApiDocument = Record<string, unknown> & { paths: Record<string, Record<string, unknown>> }

// This module is two levels below the project root both as src/http/spec.ts (tsx, tests) and as
// dist/http/spec.js (the build), so the same relative URLs hold in both.
const SPEC_URL = new URL('../../openapi/openapi.yaml', import.meta.url)
/** The parsed contract, written by `npm run build` (scripts/build-contract.ts). */
export const CONTRACT_CACHE_URL = new URL('../../dist/contract.json', import.meta.url)
/** Bump when the cache's layout (or what is stored in it) changes. */
const CACHE_FORMAT = 1

type PackLanguage = Exclude<Language, 'en'>

export interface LoadedSpec {
  text: string
  document: OpenApiDocument
  /** Translations of its texts and messages (openapi/i18n/<lang>.yaml). */
  packs: Record<PackLanguage, LanguagePack>
}

/** What the build caches: the parsed document and packs, and the hash of the YAML texts they came from. */
export interface ContractCache {
  format: number
  sha256: string
  document: OpenApiDocument
  packs: Record<PackLanguage, LanguagePack>
}

interface Sources {
  text: string
  packs: Record<PackLanguage, string | undefined>
}

/**
 * The contract's YAML text and parsed document, with its translations. Parsing the YAML (about 700 kB
 * with the translations) took a third of a second at startup, so the build stores the result as JSON;
 * it is used when it was made from exactly the YAML texts on disk now, else the YAML is parsed here.
 */
export function loadSpec(): LoadedSpec {
  const sources = readSources()
  return fromCache(sources) ?? parseSources(sources)
}

/** The cache for the YAML on disk now (the build writes it as JSON to `CONTRACT_CACHE_URL`). */
export function contractCache(): ContractCache {
  const sources = readSources()
  const { document, packs } = parseSources(sources)
  return { format: CACHE_FORMAT, sha256: sourcesHash(sources), document, packs }
}

function readSources(): Sources {
  return { text: readFileSync(SPEC_URL, 'utf8'), packs: readLanguagePackSources() }
}

function parseSources(sources: Sources): LoadedSpec {
  const document: unknown = parseYaml(sources.text)
  if (!isDocument(document)) throw new Error(`${SPEC_URL.pathname} is not an OpenAPI document`)
  return { text: sources.text, document, packs: parseLanguagePacks(sources.packs) }
}

function sourcesHash(sources: Sources): string {
  const hash = createHash('sha256').update(`contract-cache ${CACHE_FORMAT}\0`).update(sources.text)
  for (const [language, text] of Object.entries(sources.packs)) {
    hash.update(`\0${language}\0`).update(text === undefined ? '\u0001missing' : `\u0002${text}`)
  }
  return hash.digest('hex')
}

/** The cached parse of exactly these sources, or `undefined` (no cache, another version, unreadable). */
function fromCache(sources: Sources): LoadedSpec | undefined {
  let cache: unknown
  try {
    cache = JSON.parse(readFileSync(CONTRACT_CACHE_URL, 'utf8'))
  } catch {
    return undefined
  }
  if (typeof cache !== 'object' || cache === null || !('format' in cache) || cache.format !== CACHE_FORMAT) return undefined
  if (!('sha256' in cache) || cache.sha256 !== sourcesHash(sources)) return undefined
  if (!('document' in cache) || !isDocument(cache.document) || !('packs' in cache)) return undefined
  const cached: unknown = cache.packs
  if (typeof cached !== 'object' || cached === null) return undefined
  const packs: Partial<Record<PackLanguage, LanguagePack>> = {}
  for (const language of LANGUAGES) {
    if (language !== 'en') packs[language] = languagePack((cached as Record<string, unknown>)[language])
  }
  return { text: sources.text, document: cache.document, packs: packs as Record<PackLanguage, LanguagePack> }
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
  inLanguage(document, language)
  return document
}

/**
 * The examples that send `ml_language` send the document's own language, so that "Try it out" on the
 * German page asks for German records and writes German ones: the `ml_language` parameter's example
 * (what Swagger UI prefills) and the field in the write bodies' examples.
 */
function inLanguage(document: OpenApiDocument, language: Language): void {
  const components = isRecord(document.components) ? document.components : {}
  const parameter = isRecord(components.parameters) ? components.parameters.MlLanguage : undefined
  if (isRecord(parameter) && parameter.example !== undefined) parameter.example = language
  for (const body of isRecord(components.requestBodies) ? Object.values(components.requestBodies) : []) {
    for (const media of isRecord(body) && isRecord(body.content) ? Object.values(body.content) : []) {
      if (isRecord(media) && isRecord(media.example) && media.example.ml_language !== undefined) {
        // The example itself is shared with the loaded contract (localizing keeps examples as they are).
        media.example = { ...media.example, ml_language: language }
      }
    }
  }
}

/**
 * A copy of `value` with every local `$ref` (`#/...`) replaced by what it points to, for readers that
 * walk the document (the route index). Cycles are cut by leaving the inner `$ref` in place.
 *
 * The copy is about ten times the document (each schema is inlined wherever it is used), so the
 * expansion of a `$ref` whose expansion cut no cycle is made once and used for every occurrence: it
 * cannot depend on where it is met. Such subtrees are shared within the copy; treat it as read-only.
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
  const expanded = new Map<string, unknown>()
  let cuts = 0
  const walk = (node: unknown, seen: ReadonlySet<string>): unknown => {
    if (Array.isArray(node)) return node.map((n) => walk(n, seen))
    if (typeof node !== 'object' || node === null) return node
    const ref = (node as Record<string, unknown>).$ref
    if (typeof ref === 'string' && ref.startsWith('#/')) {
      if (seen.has(ref)) {
        cuts++
        return node
      }
      if (expanded.has(ref)) return expanded.get(ref)
      const before = cuts
      const out = walk(resolve(ref), new Set(seen).add(ref))
      if (cuts === before) expanded.set(ref, out)
      return out
    }
    const out: Record<string, unknown> = {}
    for (const [key, value] of Object.entries(node)) {
      if (key === '__proto__') Object.defineProperty(out, key, { value: walk(value, seen), enumerable: true, writable: true, configurable: true })
      else out[key] = walk(value, seen)
    }
    return out
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
