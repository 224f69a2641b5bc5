/**
 * `npm run gen`: the handlers' types (src/generated/openapi.ts) from the contract as handlers see it,
 * i.e. `typedDocument` of openapi/openapi.yaml (the text forms of query strings and forms left out:
 * src/http/wire-forms.ts). `check-gen` makes the same file to compare.
 */
import { execFileSync } from 'node:child_process'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import { loadSpec } from '../src/http/spec.js'
import { typedDocument } from '../src/http/wire-forms.js'

const root = new URL('..', import.meta.url).pathname
export const TYPES_FILE = join(root, 'src/generated/openapi.ts')

export function generateTypes(out: string): void {
  const dir = mkdtempSync(join(tmpdir(), 'gen-'))
  try {
    const typed = join(dir, 'openapi.json')
    writeFileSync(typed, JSON.stringify(typedDocument(loadSpec().document)))
    execFileSync(join(root, 'node_modules/.bin/openapi-typescript'), [typed, '-o', out], { stdio: 'pipe' })
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  generateTypes(TYPES_FILE)
  process.stdout.write(`wrote ${TYPES_FILE}\n`)
}
