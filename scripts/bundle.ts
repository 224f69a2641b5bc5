/**
 * Bundles the server (src/server.ts and everything it imports, dependencies included) into one ES
 * module, dist/bundle/server.js, which `npm start` runs. Loading ~700 modules one by one took about
 * 0.4 s of a 1 s start; one file loads in a fraction of that.
 *
 * The bundle sits two folders below the project root, like src/http/*.ts, so that the paths the
 * modules compute from their own URL (openapi/, dist/contract.json) hold in it too. Left outside:
 * better-sqlite3 (a native addon), @fastify/swagger-ui (serves files from its own folder), glue's
 * spec validator (reads its schemas from its own folder) and ajv-i18n (loaded on first use).
 *
 *   node --import tsx scripts/bundle.ts        (part of `npm run build`)
 */
import { dirname, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { build } from 'esbuild'

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..')
export const BUNDLE = resolve(ROOT, 'dist/bundle/server.js')

const result = await build({
  entryPoints: [resolve(ROOT, 'src/server.ts')],
  outfile: BUNDLE,
  bundle: true,
  platform: 'node',
  format: 'esm',
  target: 'node22',
  sourcemap: true,
  legalComments: 'linked',
  logLevel: 'warning',
  metafile: true,
  external: ['better-sqlite3', '@fastify/swagger-ui', '@seriousme/openapi-schema-validator', 'ajv-i18n'],
  // CommonJS dependencies inside an ES module still call require().
  banner: { js: "import { createRequire as __bundleRequire } from 'node:module'; const require = __bundleRequire(import.meta.url);" },
})
const inputs = Object.keys(result.metafile.inputs).length
process.stdout.write(`bundle: ${inputs} modules into ${BUNDLE}\n`)
