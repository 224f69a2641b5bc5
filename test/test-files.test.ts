/**
 * The PostgreSQL leg of the test command runs only the test files that can reach the database under
 * test (scripts/test-files.ts): those that import test/helpers/database.ts; a leg can run the others. That holds while no other
 * file of test/ chooses an engine itself: none names the engine's variables or the PostgreSQL driver.
 */
import { execFileSync } from 'node:child_process'
import { readFileSync, readdirSync } from 'node:fs'
import t from 'tap'
import { databaseTestFiles, testFiles } from '../scripts/test-files.js'

const ENGINE = /\bTEST_DATABASE\b|\bTEST_POSTGRES_URL\b|from ['"]pg['"]|import\(['"]pg['"]\)|postgres(ql)?:\/\//

t.test('every test file that could choose PostgreSQL itself is run on the PostgreSQL leg', async (t) => {
  const listed = new Set(databaseTestFiles())
  for (const file of testFiles()) {
    if (ENGINE.test(readFileSync(file, 'utf8'))) t.ok(listed.has(file), `${file} names the engine: it is listed`)
  }
  for (const name of readdirSync('test/helpers')) {
    if (name !== 'database.ts') t.notMatch(readFileSync(`test/helpers/${name}`, 'utf8'), ENGINE, `test/helpers/${name} leaves the engine to database.ts`)
  }
})

t.test('the listing: files that build an app or a server are in it, files of plain functions are not', async (t) => {
  const listed = databaseTestFiles()
  for (const file of ['test/events-write.test.ts', 'test/stateful.test.ts', 'test/nodes.test.ts', 'test/fuzz.test.ts']) t.ok(listed.includes(file), file)
  for (const file of ['test/dates.test.ts', 'test/config.test.ts', 'test/test-files.test.ts']) t.notOk(listed.includes(file), file)
  t.ok(listed.length < testFiles().length)
})

t.test('the two listings part the test files: every file runs on a leg of each Node.js line', async (t) => {
  const run = (which: string) => execFileSync(process.execPath, ['--import', 'tsx', 'scripts/test-files.ts', which], { encoding: 'utf8' }).trim().split('\n')
  const database = run('database')
  const others = run('no-database')
  t.strictSame(database, databaseTestFiles())
  t.strictSame([...database, ...others].sort(), testFiles())
  t.equal(database.filter((file) => others.includes(file)).length, 0)
})
