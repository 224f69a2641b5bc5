/**
 * Bodies serialized ahead of the answer. A record remembered by the read cache keeps its JSON text
 * too, made by the contract's own schema for it (fast-json-stringify, as for every response), so that
 * a read sends text instead of serializing the same record again. A list's envelope is written in the
 * key order of CONTRACT §3, with the records' text put in its array.
 */
import fastJsonStringify from 'fast-json-stringify'
import type { FastifyReply } from 'fastify'
import type { components } from '../generated/openapi.js'

declare const serializedBody: unique symbol
/**
 * The JSON of a `T` as UTF-8 bytes, made by the contract's schema for it: a handler may answer with it
 * as it is. Bytes, not text: kept flat and encoded once, they are copied to the socket as they are.
 */
export type Serialized<T> = Buffer & { readonly [serializedBody]: T }

/**
 * The JSON of a `T` as pieces of UTF-8 bytes, in order (a stored document with its terms' records put in):
 * a list copies them into its body once, instead of joining them into a record's bytes first.
 */
export type SerializedPieces<T> = ReadonlyArray<Buffer> & { readonly [serializedBody]: T }

type Schemas = components['schemas']
type RecordSchema = 'Event' | 'Venue' | 'Organizer' | 'Category' | 'Tag' | 'WebhookCreated'

/**
 * A serializer for one schema of the contract, compiled on first use (with the document's components
 * for its `$ref`s). It remembers the JSON of each record object it serialized, for as long as the
 * object lives: records kept by the read cache are serialized once. Records are never changed after
 * they are made, which is what makes this safe.
 */
export function recordSerializer<N extends RecordSchema>(document: Record<string, unknown>, name: N): (value: Schemas[N]) => Serialized<Schemas[N]> {
  let serialize: ((value: unknown) => string) | undefined
  const made = new WeakMap<object, Serialized<Schemas[N]>>()
  return (value) => {
    const known = made.get(value)
    if (known !== undefined) return known
    serialize ??= compiledSerializer(document, name)
    const json = Buffer.from(serialize(value), 'utf8') as Serialized<Schemas[N]>
    made.set(value, json)
    return json
  }
}

/**
 * fast-json-stringify's function for one schema of a document, compiled once per document and schema:
 * every app built from the same document object (tests build hundreds) shares it. A pure function of
 * the schema, so sharing it changes nothing but the time of the first answer.
 */
const compiled = new WeakMap<object, Map<RecordSchema, (value: unknown) => string>>()
function compiledSerializer(document: Record<string, unknown>, name: RecordSchema): (value: unknown) => string {
  let byName = compiled.get(document)
  if (byName === undefined) compiled.set(document, byName = new Map())
  let serialize = byName.get(name)
  if (serialize === undefined) {
    serialize = fastJsonStringify({ $ref: `#/components/schemas/${name}`, components: document.components } as Parameters<typeof fastJsonStringify>[0])
    byName.set(name, serialize)
  }
  return serialize
}

export interface RecordSerializers {
  event: (record: Schemas['Event']) => Serialized<Schemas['Event']>
  venue: (record: Schemas['Venue']) => Serialized<Schemas['Venue']>
  organizer: (record: Schemas['Organizer']) => Serialized<Schemas['Organizer']>
  category: (record: Schemas['Category']) => Serialized<Schemas['Category']>
  tag: (record: Schemas['Tag']) => Serialized<Schemas['Tag']>
  /** A webhook subscription as its create answers it (the one answer, with its replays, that shows the secret). */
  webhookCreated: (record: Schemas['WebhookCreated']) => Serialized<Schemas['WebhookCreated']>
}

export function recordSerializers(document: Record<string, unknown>): RecordSerializers {
  return {
    event: recordSerializer(document, 'Event'),
    venue: recordSerializer(document, 'Venue'),
    organizer: recordSerializer(document, 'Organizer'),
    category: recordSerializer(document, 'Category'),
    tag: recordSerializer(document, 'Tag'),
    webhookCreated: recordSerializer(document, 'WebhookCreated'),
  }
}

/** Answers with `body` as it is (no second serialization), as JSON. */
export function sendSerialized<T>(reply: FastifyReply, body: Serialized<T>): Serialized<T> {
  reply.type('application/json; charset=utf-8')
  return body
}

/**
 * A list body: `envelope` as JSON in its own key order with its array `field` empty, then the items'
 * JSON put into that array. Not the route's schema serializer: fast-json-stringify writes required keys
 * before optional ones, and CONTRACT §3 orders `<records>, rest_url, next_rest_url?, previous_rest_url?,
 * total, total_pages` (the envelope holds only strings and integers, which the route's schema checks).
 */
export function listBody<T extends object, F extends keyof T & string>(envelope: T, field: F, items: ReadonlyArray<Buffer | ReadonlyArray<Buffer>>): Serialized<T> {
  const text = JSON.stringify({ ...envelope, [field]: [] })
  const empty = `"${field}":[]`
  const at = text.indexOf(empty)
  if (at < 0) throw new Error(`the ${field} array is missing from the serialized list`)
  const split = at + empty.length - 1
  const parts: Buffer[] = [Buffer.from(text.slice(0, split), 'utf8')]
  items.forEach((item, i) => {
    if (i > 0) parts.push(COMMA)
    if (Buffer.isBuffer(item)) parts.push(item)
    else parts.push(...item)
  })
  parts.push(Buffer.from(text.slice(split), 'utf8'))
  return Buffer.concat(parts) as Serialized<T>
}

const COMMA = Buffer.from(',')
