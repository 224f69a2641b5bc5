/**
 * fastify-openapi-glue checks the contract against the OpenAPI 3.1 meta-schema on every start, through
 * @seriousme/openapi-schema-validator, which compiles that meta-schema with Ajv each time: about 130–160 ms
 * of a start that must stay under a second (a fifth of it on a slow machine). The build compiles it once
 * instead (scripts/build-contract.ts): Ajv's standalone code for the very meta-schema
 * file the validator reads, with the validator's own options, written to dist/. At start,
 * `usePrecompiledMetaValidator` hands that function to the validator in place of compiling, but only
 * when it was compiled from the meta-schema installed now (its SHA-256 is in the file): a stale or
 * missing file changes nothing, the validator then compiles as before. The check itself is the same.
 */
import { createHash } from 'node:crypto'
import { existsSync, readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { fileURLToPath } from 'node:url'
import { Validator } from '@seriousme/openapi-schema-validator'

// src/http/*.ts and dist/bundle/main.js both sit two folders below the project root.
export const META_VALIDATOR_URL = new URL('../../dist/openapi-3.1-meta-validator.cjs', import.meta.url)

const require = createRequire(import.meta.url)
const VERSION = '3.1'

/** The meta-schema the validator reads for OpenAPI 3.1 documents, as text. */
export function metaSchemaText(): string {
  return readFileSync(require.resolve('@seriousme/openapi-schema-validator/schemas/v3.1/schema.json'), 'utf8')
}

export const sha256 = (text: string): string => createHash('sha256').update(text).digest('hex')

type Compiled = ((data: unknown) => boolean) & { metaSchemaSha256?: string }
interface ValidatorInternals { getAjvValidator(version: string): unknown }

let installed = false

/**
 * Makes the validator use the build's compiled meta-schema for 3.1 documents, when it matches the
 * installed one; returns whether it does.
 */
export function usePrecompiledMetaValidator(file: URL = META_VALIDATOR_URL): boolean {
  if (installed) return true
  const path = fileURLToPath(file)
  if (!existsSync(path)) return false
  const compiled = require(path) as Compiled
  if (typeof compiled !== 'function' || compiled.metaSchemaSha256 !== sha256(metaSchemaText())) return false
  const prototype = Validator.prototype as unknown as ValidatorInternals
  const compile = prototype.getAjvValidator
  prototype.getAjvValidator = function (this: ValidatorInternals, version: string) {
    return version === VERSION ? compiled : compile.call(this, version)
  }
  installed = true
  return true
}
