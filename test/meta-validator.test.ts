/**
 * The OpenAPI 3.1 meta-schema the build compiles (scripts/meta-validator-code.ts) stands in for the one
 * fastify-openapi-glue's validator compiles on every start only when it came from the installed schema,
 * and then judges every document as the validator's own compilation does: the contract valid, each of a
 * set of broken copies invalid with the same errors.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import t from 'tap'
import { Validator } from '@seriousme/openapi-schema-validator'
import { usePrecompiledMetaValidator } from '../src/http/meta-validator.js'
import { loadSpec } from '../src/http/spec.js'
import { metaValidatorCode } from '../scripts/meta-validator-code.js'

type Doc = Record<string, any> // eslint-disable-line @typescript-eslint/no-explicit-any

const contract = (): Doc => structuredClone(loadSpec().document) as Doc
const firstParameter = (d: Doc): Doc => Object.values(d.components.parameters as Record<string, Doc>)[0] as Doc

/** The contract, and copies broken in ways the meta-schema catches (types, required members, formats, patterns, enums). */
function documents(): Array<[string, Doc]> {
  const broken = (name: string, edit: (d: Doc) => void): [string, Doc] => {
    const d = contract()
    edit(d)
    return [name, d]
  }
  return [
    ['the contract', contract()],
    broken('responses not an object', (d) => { d.paths['/events'].get.responses = 'x' }),
    broken('no info', (d) => { delete d.info }),
    broken('info without a title', (d) => { delete d.info.title }),
    broken('a parameter without "in"', (d) => { delete firstParameter(d).in }),
    broken('a parameter "in" nowhere', (d) => { firstParameter(d).in = 'body' }),
    broken('a response code that is no code', (d) => { d.paths['/events'].get.responses['2XY'] = { description: 'x' } }),
    broken('a $ref that is not a string', (d) => { d.paths['/events'].get.responses['200'] = { $ref: 42 } }),
    broken('a server variable whose default is no string', (d) => { d.servers = [{ url: '/{v}', variables: { v: { default: 1 } } }] }),
    broken('an unknown member of an operation', (d) => { d.paths['/events'].get.bogus = true }),
    broken('a contact email that is no email', (d) => { d.info.contact = { email: 'not an email' } }),
    broken('a security scheme of no type', (d) => { d.components.securitySchemes = { x: { type: 'nothing' } } }),
  ]
}

async function judged(docs: Array<[string, Doc]>): Promise<Array<{ name: string; valid: boolean; errors: unknown }>> {
  const out = []
  for (const [name, doc] of docs) {
    const result = await new Validator().validate(doc)
    out.push({ name, valid: result.valid, errors: result.errors })
  }
  return out
}

t.test('the compiled meta-schema stands in only when it matches, and then judges alike', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'meta-validator-'))
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  const file = (name: string, text: string) => {
    writeFileSync(join(dir, name), text)
    return pathToFileURL(join(dir, name))
  }

  // Compiled from another schema text (the installed one changed since the build): not used.
  const stale = file('stale.cjs', metaValidatorCode(JSON.stringify({ $schema: 'https://json-schema.org/draft/2020-12/schema', type: 'object' })))
  t.equal(usePrecompiledMetaValidator(stale), false, 'a file compiled from another meta-schema is not used')
  t.equal(usePrecompiledMetaValidator(pathToFileURL(join(dir, 'missing.cjs'))), false, 'a missing file changes nothing')

  // The oracle: the validator compiling the meta-schema itself.
  const docs = documents()
  const expected = await judged(docs)
  t.same(expected.map((e) => e.valid), [true, ...docs.slice(1).map(() => false)], 'the contract is valid, every broken copy is not')

  t.equal(usePrecompiledMetaValidator(file('compiled.cjs', metaValidatorCode())), true, 'the matching file is used')
  const compile = (Validator.prototype as unknown as { getAjvValidator(v: string): unknown }).getAjvValidator
  const compiled = compile.call(new Validator(), '3.1') as { metaSchemaSha256?: string }
  t.type(compiled.metaSchemaSha256, 'string', 'a 3.1 document is checked by the compiled function')
  t.same(await judged(docs), expected, 'every document judged as the validator judges it, errors included')
})
