/**
 * Bundles the server (src/server.ts and everything it imports, dependencies included) into one ES
 * module, dist/bundle/main.js. Loading ~700 modules one by one took about 0.4 s of a 1 s start; one
 * file loads in a fraction of that.
 *
 * `npm start` runs dist/bundle/server.js, a few lines written here that turn on Node's compile cache
 * (`module.enableCompileCache`, Node 22.1 and later) and then load the bundle: V8 keeps the code it
 * compiled for the bundle and the modules left outside it on disk (in the system's temporary folder, or
 * where NODE_COMPILE_CACHE says; NODE_DISABLE_COMPILE_CACHE=1 turns it off), and the next start reads it
 * instead of compiling the bundle's 5 MB again: the first answer 567–697 ms (median 629) after spawning
 * instead of 679–981 (median 727), eight starts each, alternately, on a copy of the benchmark's 20,000
 * events. The server flushes the cache a second after it listens (src/server.ts). A cache that cannot be
 * written or read costs nothing but the compilation it would have saved.
 *
 * The bundle sits two folders below the project root, like src/http/*.ts, so that the paths the
 * modules compute from their own URL (openapi/, dist/contract.json) hold in it too. Left outside:
 * better-sqlite3 (a native addon), @fastify/swagger-ui (serves files from its own folder), glue's
 * spec validator (reads its schemas from its own folder) and ajv-i18n (loaded on first use).
 *
 * The bundle's text is kept to ASCII (`asciiSource`): V8 holds a module's source for as long as the process runs
 * (its functions are compiled lazily from it), and Node makes it a one-byte string only when the file is ASCII,
 * two bytes a character otherwise. esbuild leaves other characters in comments, regular expressions and template
 * literals (a dependency's `’` in a comment, the search's `ẞ` and `ß`), which made the 5.9 MB bundle an 11.8 MB
 * string of the process's anonymous memory (issue 49: heap snapshots of the server, 11.8 → 5.9 MB); each such
 * character is written as its `\uXXXX` escape instead, which means the same character wherever it occurs (a
 * string, a regular expression, a template's cooked text, an identifier, a comment). Columns after it on its
 * line shift by five in the source map.
 *
 *   node --import tsx scripts/bundle.ts        (part of `npm run build`)
 */
import { readFileSync, rmSync, writeFileSync } from 'node:fs'
import { dirname, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { build } from 'esbuild'

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..')
export const BUNDLE = resolve(ROOT, 'dist/bundle/main.js')
/**
 * `source` with every UTF-16 unit past U+007F written as its `\uXXXX` escape (see above). One after a backslash
 * (an escape of its own, whose meaning the rewrite would change) stops the build.
 */
export function asciiSource(source: string): string {
  return source.replace(/[^\u0000-\u007f]/g, (unit, at: number) => {
    if (source[at - 1] === '\\') throw new Error(`bundle: a character past U+007F after a backslash at ${at}`)
    return `\\u${unit.charCodeAt(0).toString(16).padStart(4, '0')}`
  })
}

/** What `npm start` runs: the compile cache turned on, then the bundle. */
export const ENTRY = resolve(ROOT, 'dist/bundle/server.js')

const ENTRY_SOURCE = `// Written by scripts/bundle.ts: Node's compile cache on (where Node has one), then the server's bundle.
import module from 'node:module'
module.enableCompileCache?.()
await import('./main.js')
`

// Made anew: nothing of an earlier build's layout (its maps, its notices) is left beside this one's.
rmSync(dirname(BUNDLE), { recursive: true, force: true })
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
writeFileSync(BUNDLE, asciiSource(readFileSync(BUNDLE, 'utf8')))
writeFileSync(ENTRY, ENTRY_SOURCE)
const inputs = Object.keys(result.metafile.inputs).length
process.stdout.write(`bundle: ${inputs} modules into ${BUNDLE}, started by ${ENTRY}\n`)
