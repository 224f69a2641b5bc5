/**
 * Fails when src/generated/openapi.ts is not what `npm run gen` makes from openapi/openapi.yaml now,
 * so a spec change cannot land without its regenerated types.
 */
import { execFileSync } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

const root = new URL('..', import.meta.url).pathname
const dir = mkdtempSync(join(tmpdir(), 'check-gen-'))
try {
  const fresh = join(dir, 'openapi.ts')
  execFileSync(join(root, 'node_modules/.bin/openapi-typescript'), [join(root, 'openapi/openapi.yaml'), '-o', fresh], { stdio: 'pipe' })
  const committed = readFileSync(join(root, 'src/generated/openapi.ts'), 'utf8')
  if (readFileSync(fresh, 'utf8') !== committed) {
    process.stderr.write('src/generated/openapi.ts is stale: run `npm run gen` and commit the result.\n')
    process.exit(1)
  }
  process.stdout.write('src/generated/openapi.ts matches openapi/openapi.yaml\n')
} finally {
  rmSync(dir, { recursive: true, force: true })
}
