/**
 * Handler types derived from the generated contract: one handler per operationId, its request parts
 * and its success body come from `src/generated/openapi.ts`, never restated by hand.
 */
import type { FastifyReply, FastifyRequest } from 'fastify'
import type { components, operations } from '../generated/openapi.js'
import type { Serialized } from './serialized.js'

export type Schema<N extends keyof components['schemas']> = components['schemas'][N]
export type OperationId = keyof operations

type Content<T> = T extends { content: infer C } ? C : never
type JsonOf<T> = Content<T> extends { 'application/json': infer B } ? B : never
type Part<O extends OperationId, K extends 'query' | 'path' | 'header'> =
  [NonNullable<operations[O]['parameters'][K]>] extends [never] ? Record<string, never> : NonNullable<operations[O]['parameters'][K]>

export type QueryOf<O extends OperationId> = Part<O, 'query'>
export type ParamsOf<O extends OperationId> = Part<O, 'path'>
export type HeadersOf<O extends OperationId> = Part<O, 'header'>
export type BodyOf<O extends OperationId> = operations[O] extends { requestBody?: infer R } ? JsonOf<NonNullable<R>> : never

type Responses<O extends OperationId> = operations[O]['responses']
/** The body of any 2xx response: what a handler returns. */
export type SuccessOf<O extends OperationId> = {
  [C in keyof Responses<O>]: C extends 200 | 201 ? JsonOf<Responses<O>[C]> | Exclude<Content<Responses<O>[C]>[keyof Content<Responses<O>[C]>], JsonOf<Responses<O>[C]>> : never
}[keyof Responses<O>]

/** Parameters that have a schema default are always present once validation has run. */
export type WithDefaults<T, K extends keyof T> = Omit<T, K> & { [P in K]-?: NonNullable<T[P]> }

/**
 * Narrows `values` to say that the parameters with a schema default are present, checking it rather
 * than assuming it (validation fills them in with `useDefaults`).
 */
export function withDefaults<T extends object, K extends keyof T>(values: T, ...keys: K[]): WithDefaults<T, K> {
  for (const key of keys) {
    if (values[key] === undefined || values[key] === null) throw new Error(`parameter ${String(key)} has no default`)
  }
  return values as WithDefaults<T, K>
}

export type RequestOf<O extends OperationId> = FastifyRequest<{
  Querystring: QueryOf<O>
  Params: ParamsOf<O>
  Body: BodyOf<O>
  Headers: HeadersOf<O>
}>

/** A handler answers with the success body, or with its JSON text made by the contract's schema (`Serialized`). */
export type Handler<O extends OperationId> = (req: RequestOf<O>, reply: FastifyReply) => Promise<SuccessOf<O> | Serialized<SuccessOf<O>>>

export type Handlers = { [O in OperationId]: Handler<O> }
