/**
 * The contract's shapes as TypeScript types, every one taken from the generated file (`npm run gen`):
 * records, bodies, parameters and enums. It imports nothing of the app, so `lib/`, the repositories and
 * the handlers all take their types from here and none restates a shape the spec already has. The few
 * runtime lists (languages, statuses) are checked against the generated unions by the compiler.
 */
import type { components, operations } from './generated/openapi.js'

export type Schema<N extends keyof components['schemas']> = components['schemas'][N]
export type OperationId = keyof operations

type Content<T> = T extends { content: infer C } ? C : never
type JsonOf<T> = Content<T> extends { 'application/json': infer B } ? B : never
type Part<O extends OperationId, K extends 'query' | 'path' | 'header'> =
  [NonNullable<operations[O]['parameters'][K]>] extends [never] ? Record<string, never> : NonNullable<operations[O]['parameters'][K]>

/** An operation's query parameters, path parameters, headers and JSON body. */
export type QueryOf<O extends OperationId> = Part<O, 'query'>
export type ParamsOf<O extends OperationId> = Part<O, 'path'>
export type HeadersOf<O extends OperationId> = Part<O, 'header'>
export type BodyOf<O extends OperationId> = operations[O] extends { requestBody?: infer R } ? JsonOf<NonNullable<R>> : never

type Responses<O extends OperationId> = operations[O]['responses']
/** The body of any 2xx response of an operation. */
export type SuccessOf<O extends OperationId> = {
  [C in keyof Responses<O>]: C extends 200 | 201 ? JsonOf<Responses<O>[C]> | Exclude<Content<Responses<O>[C]>[keyof Content<Responses<O>[C]>], JsonOf<Responses<O>[C]>> : never
}[keyof Responses<O>]

export type Event = Schema<'Event'>
export type Venue = Schema<'Venue'>
export type Organizer = Schema<'Organizer'>
export type Category = Schema<'Category'>
export type Tag = Schema<'Tag'>
export type Image = Schema<'Image'>
export type DateDetails = Schema<'DateDetails'>
export type CostDetails = Schema<'CostDetails'>
export type Translations = Schema<'Translations'>
/** The links of a list page (`rest_url`, `next_rest_url`, `previous_rest_url`), alike in every list. */
export type ListLinks = Pick<Schema<'EventList'>, 'rest_url' | 'next_rest_url' | 'previous_rest_url'>
export type RouteIndex = Schema<'RouteIndex'>
export type RouteEntry = Schema<'RouteEntry'>
export type RouteArg = Schema<'RouteArg'>

/** A list of members of the union `U` that holds every one of them: a member left out is a compile error. */
const every = <U>() => <const L extends readonly U[]>(list: L & ([Exclude<U, L[number]>] extends [never] ? unknown : { missing: Exclude<U, L[number]> })): L => list

export type Language = Schema<'Language'>
export const LANGUAGES = every<Language>()(['at', 'en', 'de', 'es', 'ch-fr', 'ch-de'])

export function isLanguage(value: unknown): value is Language {
  return typeof value === 'string' && (LANGUAGES as readonly string[]).includes(value)
}

/** A stored language code; anything else means the database was written by something other than this app. */
export function asLanguage(value: string): Language {
  if (!isLanguage(value)) throw new Error(`stored language is not a known code: ${value}`)
  return value
}

/** The statuses a record can have, and those a write may ask for (`trash` only comes from a DELETE). */
export type PostStatus = Event['status']
export type WritableStatus = NonNullable<Schema<'EventCreate'>['status']>
export const WRITABLE_STATUSES = every<WritableStatus>()(['publish', 'draft', 'pending', 'private'])
const POST_STATUSES: readonly string[] = every<PostStatus>()([...WRITABLE_STATUSES, 'trash'])

/** A stored status; anything else means the database was written by something other than this app. */
export function asStatus(value: string): PostStatus {
  if (!POST_STATUSES.includes(value)) throw new Error(`stored status is not known: ${value}`)
  return value as PostStatus
}
