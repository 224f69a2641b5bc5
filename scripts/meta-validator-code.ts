/**
 * The OpenAPI 3.1 meta-schema compiled to Ajv's standalone code, which the build writes for the check
 * fastify-openapi-glue runs on every start (src/http/meta-validator.ts).
 */
import { _ } from 'ajv'
import { Ajv2020 } from 'ajv/dist/2020.js'
import standaloneCode from 'ajv/dist/standalone/index.js'
import addFormats from 'ajv-formats'
import { metaSchemaText, sha256 } from '../src/http/meta-validator.js'

/**
 * The code of a CommonJS module exporting the 3.1 meta-schema's validation function, compiled as
 * @seriousme/openapi-schema-validator compiles it (Ajv 2020-12, not strict, ajv-formats, and a
 * `media-range` format that accepts anything), and `metaSchemaSha256`, the SHA-256 of the schema text.
 */
export function metaValidatorCode(text = metaSchemaText()): string {
  const ajv = new Ajv2020({ strict: false, code: { source: true, formats: _`require("ajv-formats/dist/formats").fullFormats` } })
  addFormats.default(ajv)
  ajv.addFormat('media-range', true)
  const validate = ajv.compile(JSON.parse(text) as object)
  return `${standaloneCode.default(ajv, validate)}\nmodule.exports.metaSchemaSha256 = ${JSON.stringify(sha256(text))};\n`
}
