/**
 * The PostgreSQL leg of the test command runs only the test files that can reach the database under
 * test (scripts/test-files.ts): those that import test/helpers/database.ts; a leg can run the others. That holds while no other
 * file of test/ chooses an engine itself: none names the engine's variables or the PostgreSQL driver, nor a
 * PostgreSQL URL other than one a command refuses without connecting.
 */
import { execFileSync } from 'node:child_process'
import { readFileSync, readdirSync } from 'node:fs'
import t from 'tap'
import { databaseTestFiles, testFiles } from '../scripts/test-files.js'

const CHOICE = /\bTEST_DATABASE\b|\bTEST_POSTGRES_URL\b|from ['"]pg['"]|import\(['"]pg['"]\)/
const PG_URL = /postgres(ql)?:\/\//
const ENGINE = new RegExp(`${CHOICE.source}|${PG_URL.source}`)
/**
 * Files that name a PostgreSQL URL only as a value a command refuses before connecting (the backup is
 * SQLite's: `npm run backup` points a PostgreSQL URL to pg_dump). They open no PostgreSQL on either leg.
 */
const REFUSED_URL_ONLY = new Set(['test/backup.test.ts'])

t.test('every test file that could choose PostgreSQL itself is run on the PostgreSQL leg', async (t) => {
  const listed = new Set(databaseTestFiles())
  for (const file of testFiles()) {
    const text = readFileSync(file, 'utf8')
    if (REFUSED_URL_ONLY.has(file)) {
      t.notMatch(text, CHOICE, `${file} names neither the engine's variables nor the driver`)
      t.match(text, PG_URL, `${file} still names a PostgreSQL URL, to be refused`)
      continue
    }
    if (ENGINE.test(text)) t.ok(listed.has(file), `${file} names the engine: it is listed`)
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
