/**
 * Handler types derived from the generated contract (src/contract.ts): one handler per operationId,
 * its request parts and its success body, never restated by hand.
 */
import type { FastifyReply, FastifyRequest } from 'fastify'
import type { BodyOf, HeadersOf, OperationId, ParamsOf, QueryOf, SuccessOf } from '../contract.js'
import type { Serialized } from './serialized.js'

export type RequestOf<O extends OperationId> = FastifyRequest<{
  Querystring: QueryOf<O>
  Params: ParamsOf<O>
  Body: BodyOf<O>
  Headers: HeadersOf<O>
}>

/**
 * A handler answers with the success body, or with its JSON text made by the contract's schema (`Serialized`);
 * a handler that has its answer at once (a hot answer) may give that text without a promise (Fastify sends a
 * value a handler returns; what it throws is an error answer, as a rejection is).
 */
export type Handler<O extends OperationId> = (req: RequestOf<O>, reply: FastifyReply) => Promise<SuccessOf<O> | Serialized<SuccessOf<O>>> | Serialized<SuccessOf<O>>

export type Handlers = { [O in OperationId]: Handler<O> }
