/**
 * `node --import tsx scripts/test-files.ts database|no-database`: the test files that can reach the
 * database under test, or those that cannot, one a line, for a leg of scripts/test-ci.sh (`TEST_FILES`). The engine under test is chosen in one
 * place, test/helpers/database.ts (`TEST_DATABASE`, `TEST_POSTGRES_URL`): a test file that imports it,
 * directly or through other files of test/, may open PostgreSQL; any other one opens SQLite or no
 * database at all, whatever the leg, and gives nothing new on PostgreSQL (test/test-files.test.ts
 * checks that no other test file names the engine's variables or the PostgreSQL driver, nor a PostgreSQL URL
 * but as a value a command refuses without connecting, as test/backup.test.ts gives the SQLite backup).
 */
import { readFileSync, readdirSync } from 'node:fs'
import { dirname, relative, resolve } from 'node:path'

const ROOT = resolve(new URL('..', import.meta.url).pathname)
export const ENGINE_HELPER = resolve(ROOT, 'test/helpers/database.ts')

/** Relative imports of a file (static and dynamic), as absolute `.ts` paths. */
function importsOf(file: string): string[] {
  const text = readFileSync(file, 'utf8')
  return [...text.matchAll(/(?:\bfrom|\bimport)\s*\(?\s*['"](\.{1,2}\/[^'"]+)['"]/g)]
    .map((m) => resolve(dirname(file), (m[1] ?? '').replace(/\.js$/, '.ts')))
}

/** Whether `file` imports the engine helper, directly or through files under test/. */
export function reachesDatabase(file: string, seen = new Set<string>()): boolean {
  if (file === ENGINE_HELPER) return true
  if (seen.has(file) || !file.startsWith(resolve(ROOT, 'test'))) return false
  seen.add(file)
  return importsOf(file).some((target) => reachesDatabase(target, seen))
}

/** Every test file tap runs (`test/**\/*.test.ts`: the folder holds them flat), relative to the root. */
export function testFiles(): string[] {
  return readdirSync(resolve(ROOT, 'test')).filter((name) => name.endsWith('.test.ts')).sort().map((name) => `test/${name}`)
}

export function databaseTestFiles(): string[] {
  return testFiles().filter((file) => reachesDatabase(resolve(ROOT, file)))
}

if (process.argv[1] !== undefined && resolve(process.argv[1]) === resolve(ROOT, 'scripts/test-files.ts')) {
  const which = process.argv[2]
  if (which !== 'database' && which !== 'no-database') {
    process.stderr.write('usage: scripts/test-files.ts database|no-database\n')
    process.exit(2)
  }
  const database = new Set(databaseTestFiles())
  const files = testFiles().filter((file) => database.has(file) === (which === 'database'))
  process.stdout.write(`${files.map((file) => relative(ROOT, resolve(ROOT, file))).join('\n')}\n`)
}
