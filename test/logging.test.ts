/**
 * The request log never shows a credential (issue 19 item 5): the values of credential-looking query
 * parameters (`api_key`, `key`, `token`, `access_token`, `password`) are redacted in every line, and
 * the Authorization header is never logged. And a start logs no warning.
 */
import t, { type Test } from 'tap'
import { buildApp } from '../src/app.js'
import { defaultConfig } from '../src/config.js'
import { openDatabase } from '../src/db/database.js'
import { redactUrl } from '../src/http/logging.js'
import { API } from './helpers/build.js'
import { SPEC, contractProblems } from './helpers/contract.js'

/** An app on a new database whose log lines, from `level` up, are collected in `lines`. */
async function loggedApp(t: Test, level: 'trace' | 'info') {
  const lines: string[] = []
  const handle = await openDatabase(':memory:')
  const app = await buildApp({ db: handle.db, config: defaultConfig({ logLevel: level }), spec: SPEC, logStream: { write: (line) => lines.push(line) } })
  t.teardown(async () => {
    await app.close()
    await handle.close()
  })
  return { app, lines }
}

t.test('redactUrl keeps names and other values, and hides the credentials', async (t) => {
  t.equal(redactUrl('/a?api_key=s1&x=1&TOKEN=s2&key[]=s3&access_token=s4&password=s5&ok=yes'),
    '/a?api_key=[redacted]&x=1&TOKEN=[redacted]&key[]=[redacted]&access_token=[redacted]&password=[redacted]&ok=yes')
  t.equal(redactUrl('/a?api%5Fkey=s1'), '/a?api%5Fkey=[redacted]')
  t.equal(redactUrl('/a'), '/a')
  t.equal(redactUrl('/a?%ff=1'), '/a?%ff=1')
})

t.test('no log line shows a key, a token, a password or the Authorization header', async (t) => {
  const { app, lines } = await loggedApp(t, 'trace')
  const urls = [
    `${API}/events?api_key=SECRET1&per_page=2`,
    `${API}/events/1?password=SECRET2`,
    `${API}/venues?token=SECRET3&access_token=SECRET4&key=SECRET5`,
    `${API}/nowhere?api_key=SECRET6`,
  ]
  for (const url of urls) {
    const res = await app.inject({ url })
    t.same(contractProblems('GET', url, res), [], url)
  }
  const write = await app.inject({ method: 'POST', url: `${API}/categories?api_key=SECRET7`, headers: { authorization: 'Bearer SECRET8' }, payload: { name: 'x' } })
  t.equal(write.statusCode, 401)
  const log = lines.join('')
  t.ok(lines.length > 5, `${lines.length} lines logged`)
  t.match(log, 'per_page=2', 'other parameters are kept')
  t.match(log, 'api_key=[redacted]')
  t.notMatch(log, /SECRET\d/, 'no secret in any line')
  t.notMatch(log, /authorization/i, 'no Authorization header')
})

t.test('a start logs no warning (glue finds a parser for every media type of the spec, the answers\' too)', async (t) => {
  const { app, lines } = await loggedApp(t, 'info')
  await app.ready()
  const warnings = lines.map((line) => JSON.parse(line) as { level: number; msg?: string }).filter((entry) => entry.level >= 40)
  t.same(warnings.map((w) => w.msg), [], 'no warning or error while the app was built')
})
