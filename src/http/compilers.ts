/**
 * Schema compilers for validation (Ajv 2020) and serialisation (fast-json-stringify), memoised by
 * schema text: the same event schemas recur on many routes, and tests build many apps from one spec.
 *
 * Compilation is lazy: fastify asks for a validator and a serializer for every route and status code
 * at startup, but compiling them all took a quarter of a second, mostly for routes a given process may
 * never serve. Each function handed to fastify compiles its schema on its first call (or takes the
 * memoised one), so a schema Ajv or fast-json-stringify rejects throws at the first request that
 * uses it (fastify answers that request with a 500), not at startup.
 *
 * Ajv 2020 because the spec is OpenAPI 3.1. Bodies are strict (no coercion, unknown fields are errors,
 * no defaults, so a partial update stays partial); parameters get their defaults, and are converted
 * from strings beforehand by `query.ts`. `strict: false` lets OpenAPI keywords (`example`, `x-…`) through.
 */
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js'
import type { DataValidationCxt } from 'ajv/dist/types/index.js'
import addFormats from 'ajv-formats'
import fastJsonStringify from 'fast-json-stringify'
import type { FastifyInstance } from 'fastify'

/** As fastify calls a validator: Ajv's data context (`parentData`, …) second, `errors` read after a failure. */
type Validate = ((data: unknown, context?: DataValidationCxt) => boolean) & { errors?: ValidateFunction['errors'] }
type Serialize = (data: unknown) => string
type Part = 'body' | 'parameters'

export interface Compilers {
  validator(schema: object, httpPart: string | undefined): Validate
  serializer(schema: object): Serialize
}

export function createCompilers(): Compilers {
  const make = (useDefaults: boolean) => {
    // validateSchema: false skips checking each schema against the 2020-12 meta-schema, whose own
    // compilation took 70 ms per instance at the first request. Ajv still refuses what it cannot
    // compile (an unknown type, a keyword value of the wrong type, a bad pattern or `$ref`), and the
    // build checks every schema of the contract against the meta-schema (scripts/build-contract.ts).
    // verbose: a finding carries its schema, whose `x-calendar-message` names the contract's message for it.
    const ajv = new Ajv2020({ coerceTypes: false, useDefaults, removeAdditional: false, allErrors: false, strict: false, validateSchema: false, verbose: true })
    addFormats.default(ajv)
    return ajv
  }
  const ajv: Partial<Record<Part, Ajv2020>> = {}
  const validators = new Map<string, ValidateFunction>()
  const serializers = new Map<string, Serialize>()

  const compileValidator = (schema: object, part: Part): ValidateFunction => {
    const key = `${part}\u0000${JSON.stringify(schema)}`
    let validate = validators.get(key)
    if (validate === undefined) {
      validate = (ajv[part] ??= make(part === 'parameters')).compile(withoutId(schema))
      validators.set(key, validate)
    }
    return validate
  }
  const compileSerializer = (schema: object): Serialize => {
    const key = JSON.stringify(schema)
    let serialize = serializers.get(key)
    if (serialize === undefined) {
      serialize = fastJsonStringify(schema)
      serializers.set(key, serialize)
    }
    return serialize
  }

  return {
    validator(schema, httpPart) {
      const part: Part = httpPart === 'body' ? 'body' : 'parameters'
      let compiled: ValidateFunction | undefined
      const validate = ((data: unknown, context?: DataValidationCxt) =>
        (compiled ??= compileValidator(schema, part))(data, context)) as Validate
      Object.defineProperties(validate, {
        // Ajv's own validators have a `schemaEnv`: fastify then passes the data context (`parentData`),
        // which lets Ajv replace the root value. Keep that call form for the wrapper.
        schemaEnv: { value: true },
        errors: { get: () => compiled?.errors, enumerable: true },
      })
      return validate
    },
    serializer(schema) {
      let compiled: Serialize | undefined
      return (data: unknown) => (compiled ??= compileSerializer(schema))(data)
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
