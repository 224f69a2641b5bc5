/**
 * The contract as handlers see it. Query strings and form bodies carry text, and the spec says so: a
 * boolean parameter also takes `1`/`0` (`BooleanText`), an id list also takes `1,2` (`IdListText`),
 * and a form body has a schema of its own (single values for lists, an empty value that clears). Those
 * text forms are component schemas marked `x-calendar-wire-form`; `query.ts` converts them before
 * validation, so a handler never sees them.
 *
 * `typedDocument` derives, in this one place, the document the server validates against and the
 * handlers' types are generated from (`npm run gen`): every `anyOf` alternative that refers to a
 * wire-form schema is dropped, and a form body is validated by the schema of the JSON body it is
 * converted to. So a request is checked once, as the handler will read it, and the types cannot claim
 * a text form that never reaches a handler.
 */
import { isRecord, type Json } from '../lib/json.js'
import type { OpenApiDocument } from './spec.js'

export const WIRE_FORM = 'x-calendar-wire-form'

const FORM = 'application/x-www-form-urlencoded'
const JSON_MEDIA = 'application/json'


/** `#/components/schemas/<name>` of every schema marked as a wire form. */
export function wireFormRefs(document: OpenApiDocument): Set<string> {
  const refs = new Set<string>()
  const components = isRecord(document.components) && isRecord(document.components.schemas) ? document.components.schemas : {}
  for (const [name, schema] of Object.entries(components)) {
    if (isRecord(schema) && schema[WIRE_FORM] === true) refs.add(`#/components/schemas/${name}`)
  }
  return refs
}

/** Derived once per document (documents are never changed once loaded): every app built from it shares the copy. */
const typedDocuments = new WeakMap<OpenApiDocument, OpenApiDocument>()

/** A copy of `document` without the wire forms (see above); the same copy for the same document, never to be changed. */
export function typedDocument<T extends OpenApiDocument>(document: T): T {
  let typed = typedDocuments.get(document)
  if (typed === undefined) typedDocuments.set(document, typed = withoutWireForms(document))
  return typed as T
}

function withoutWireForms<T extends OpenApiDocument>(document: T): T {
  const wire = wireFormRefs(document)
  const isWire = (node: unknown) => isRecord(node) && typeof node.$ref === 'string' && wire.has(node.$ref)
  const walk = (node: unknown): unknown => {
    if (Array.isArray(node)) return node.map(walk)
    if (!isRecord(node)) return node
    if (Array.isArray(node.anyOf) && node.anyOf.some(isWire)) {
      const { anyOf, ...rest } = node
      const kept = anyOf.filter((alternative) => !isWire(alternative))
      // One alternative left: it becomes the schema itself (the outer keys, such as `default`, stay).
      const only = kept.length === 1 && isRecord(kept[0]) ? kept[0] : undefined
      return walk(only !== undefined ? { ...only, ...rest } : { ...rest, anyOf: kept })
    }
    const out: Json = {}
    for (const [key, value] of Object.entries(node)) {
      if (key === '__proto__') Object.defineProperty(out, key, { value: walk(value), enumerable: true, writable: true, configurable: true })
      else out[key] = walk(value)
    }
    if (isRecord(out.content) && isRecord(out.content[FORM]) && isRecord(out.content[JSON_MEDIA])) {
      // A form body is converted to the JSON body's shape (query.ts), then validated as that. Its
      // examples show the text sent, so they go too.
      const { example: _example, examples: _examples, ...form } = out.content[FORM]
      out.content = { ...out.content, [FORM]: { ...form, schema: structuredClone(out.content[JSON_MEDIA].schema) } }
    }
    return out
  }
  const typed = walk(document) as T
  dropUnreferenced(typed, referencedSchemas(document))
  return typed
}

/** Names of the component schemas a `$ref` anywhere in `node` points to. */
function referencedSchemas(node: unknown): Set<string> {
  const names = new Set<string>()
  for (const match of JSON.stringify(node).matchAll(/"\$ref":"#\/components\/schemas\/([^"]+)"/g)) if (match[1] !== undefined) names.add(match[1])
  return names
}

/** Removes the schemas (wire forms, form bodies) that only the dropped text forms referred to. */
function dropUnreferenced(document: OpenApiDocument, before: Set<string>): void {
  const schemas = isRecord(document.components) && isRecord(document.components.schemas) ? document.components.schemas : undefined
  if (schemas === undefined) return
  for (;;) {
    const now = referencedSchemas(document)
    const orphans = Object.keys(schemas).filter((name) => !now.has(name) && (before.has(name) || isRecord(schemas[name]) && schemas[name][WIRE_FORM] === true))
    if (orphans.length === 0) return
    for (const name of orphans) delete schemas[name]
  }
}
