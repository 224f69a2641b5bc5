/**
 * Schema compilers for validation (Ajv 2020) and serialisation (fast-json-stringify), memoised by
 * schema text: the same event schemas recur on many routes, and tests build many apps from one spec.
 *
 * Ajv 2020 because the spec is OpenAPI 3.1. Bodies are strict (no coercion, unknown fields are errors,
 * no defaults, so a partial update stays partial); parameters get their defaults, and are converted
 * from strings beforehand by `query.ts`. `strict: false` lets OpenAPI keywords (`example`, `x-…`) through.
 */
import { Ajv2020 } from 'ajv/dist/2020.js'
import addFormats from 'ajv-formats'
import fastJsonStringify from 'fast-json-stringify'
import type { FastifyInstance } from 'fastify'

type Validate = (data: unknown) => boolean
type Serialize = (data: unknown) => string

export interface Compilers {
  validator(schema: object, httpPart: string | undefined): Validate
  serializer(schema: object): Serialize
}

export function createCompilers(): Compilers {
  const make = (useDefaults: boolean) => {
    const ajv = new Ajv2020({ coerceTypes: false, useDefaults, removeAdditional: false, allErrors: false, strict: false })
    addFormats.default(ajv)
    return ajv
  }
  const ajv = { body: make(false), parameters: make(true) }
  const validators = new Map<string, Validate>()
  const serializers = new Map<string, Serialize>()
  return {
    validator(schema, httpPart) {
      const part = httpPart === 'body' ? 'body' : 'parameters'
      const key = `${part}\u0000${JSON.stringify(schema)}`
      let validate = validators.get(key)
      if (validate === undefined) {
        validate = ajv[part].compile(withoutId(schema))
        validators.set(key, validate)
      }
      return validate
    },
    serializer(schema) {
      const key = JSON.stringify(schema)
      let serialize = serializers.get(key)
      if (serialize === undefined) {
        serialize = fastJsonStringify(schema)
        serializers.set(key, serialize)
      }
      return serialize
    },
  }
}

/** glue gives schemas with internal refs a fixed `$id`; Ajv refuses a second schema with the same id. */
function withoutId(schema: object): object {
  if (!('$id' in schema)) return schema
  const { $id: _id, ...rest } = schema
  return rest
}

export function useCompilers(app: FastifyInstance, compilers: Compilers): void {
  app.setValidatorCompiler(({ schema, httpPart }) => compilers.validator(schema, httpPart))
  app.setSerializerCompiler(({ schema }) => compilers.serializer(schema))
}
