/**
 * Fails when src/generated/openapi.ts is not what `npm run gen` makes from openapi/openapi.yaml now,
 * so a spec change cannot land without its regenerated types.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { generateTypes, TYPES_FILE } from './gen.js'

const dir = mkdtempSync(join(tmpdir(), 'check-gen-'))
try {
  const fresh = join(dir, 'openapi.ts')
  generateTypes(fresh)
  if (readFileSync(fresh, 'utf8') !== readFileSync(TYPES_FILE, 'utf8')) {
    process.stderr.write('src/generated/openapi.ts is stale: run `npm run gen` and commit the result.\n')
    process.exit(1)
  }
  process.stdout.write('src/generated/openapi.ts matches openapi/openapi.yaml\n')
} finally {
  rmSync(dir, { recursive: true, force: true })
}
