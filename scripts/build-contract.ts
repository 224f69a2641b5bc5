/**
 * Writes `dist/contract.json`: the contract and its translations parsed once at build time, so the
 * server reads JSON at startup instead of parsing 700 kB of YAML. `loadSpec()` uses it only while the
 * hash stored in it matches the YAML files on disk, so a stale cache is ignored, never served.
 *
 * Also checks every schema of the contract against the JSON Schema 2020-12 meta-schema, which the
 * server's Ajv instances skip at run time (src/http/compilers.ts): a malformed schema fails the build.
 * And writes the OpenAPI 3.1 meta-schema compiled (Ajv standalone code) for the check fastify-openapi-glue
 * runs on every start (src/http/meta-validator.ts).
 *
 *   node --import tsx scripts/build-contract.ts        (part of `npm run build`)
 */
import { mkdirSync, renameSync, rmSync, writeFileSync } from 'node:fs'
import { dirname } from 'node:path'
import { fileURLToPath } from 'node:url'
import { isDeepStrictEqual } from 'node:util'
import { Ajv2020 } from 'ajv/dist/2020.js'
import { META_VALIDATOR_URL } from '../src/http/meta-validator.js'
import { CONTRACT_CACHE_URL, contractCache } from '../src/http/spec.js'
import { metaValidatorCode } from './meta-validator-code.js'

const cache = contractCache()

const { checked, problems } = schemaProblems(cache.document)
if (problems.length > 0) {
  process.stderr.write(`build-contract: invalid schemas in openapi/openapi.yaml:\n${problems.map((p) => `  ${p}`).join('\n')}\n`)
  process.exit(1)
}

const json = JSON.stringify(cache)
const file = fileURLToPath(CONTRACT_CACHE_URL)
// YAML can hold what JSON cannot (NaN, Infinity, undefined, dates with a custom schema): such a
// document would come back different from the cache: write none, the server then parses the YAML.
if (!isDeepStrictEqual(JSON.parse(json), { ...cache })) {
  rmSync(file, { force: true })
  process.stderr.write('build-contract: the contract does not survive a JSON round trip; no cache written (startup parses the YAML)\n')
  process.exit(0)
}
mkdirSync(dirname(file), { recursive: true })
writeAtomically(file, json)
process.stdout.write(`build-contract: ${checked} schemas valid; wrote ${file} (${(json.length / 1024).toFixed(0)} kB, sha256 ${cache.sha256.slice(0, 12)}…)\n`)
writeAtomically(fileURLToPath(META_VALIDATOR_URL), metaValidatorCode())
process.stdout.write(`build-contract: wrote ${fileURLToPath(META_VALIDATOR_URL)} (the OpenAPI 3.1 meta-schema, compiled)\n`)

function writeAtomically(target: string, text: string): void {
  const temporary = `${target}.${process.pid}.tmp`
  writeFileSync(temporary, text)
  renameSync(temporary, target)
}


/** Every Schema Object (`components.schemas.*` and any `schema`), checked against the meta-schema. */
function schemaProblems(document: Record<string, unknown>): { checked: number; problems: string[] } {
  const ajv = new Ajv2020({ strict: false })
  const problems: string[] = []
  let checked = 0
  const check = (schema: unknown, where: string) => {
    checked++
    if (!ajv.validateSchema(schema as object)) problems.push(`${where}: ${ajv.errorsText(ajv.errors)}`)
  }
  const walk = (node: unknown, where: string) => {
    if (Array.isArray(node)) node.forEach((item, i) => walk(item, `${where}/${i}`))
    if (typeof node !== 'object' || node === null || Array.isArray(node)) return
    for (const [key, value] of Object.entries(node)) {
      if (key === 'example' || key === 'examples' || key.startsWith('x-')) continue
      if (key === 'schema') check(value, `${where}/schema`)
      walk(value, `${where}/${key}`)
    }
  }
  const components = document.components
  const schemas = typeof components === 'object' && components !== null && 'schemas' in components ? components.schemas : undefined
  if (typeof schemas === 'object' && schemas !== null) {
    for (const [name, schema] of Object.entries(schemas)) check(schema, `#/components/schemas/${name}`)
  }
  walk(document, '#')
  return { checked, problems }
}
