/**
 * List totals are remembered until the data changes, also when another process (another connection
 * to the same SQLite file) writes.
 */
import { join } from 'node:path'
import t from 'tap'
import { buildApp } from '../src/app.js'
import { defaultConfig } from '../src/config.js'
import { openDatabase } from '../src/db/database.js'
import { createCompilers } from '../src/http/compilers.js'
import { API, NOW } from './helpers/build.js'
import { SPEC, contractProblems } from './helpers/contract.js'
import { insertEvent } from './helpers/fixtures.js'

t.test('a write by another connection to the same file drops the cached totals', async (t) => {
  const file = join(t.testdir(), 'calendar.db')
  const served = await openDatabase(file)
  const other = await openDatabase(file)
  const app = await buildApp({ db: served.db, config: defaultConfig({ databaseUrl: file }), now: () => NOW, spec: SPEC, compilers: createCompilers() })
  t.teardown(async () => {
    await app.close()
    await served.close()
    await other.close()
  })
  const total = async () => {
    const res = await app.inject({ url: `${API}/events` })
    t.same(contractProblems('GET', `${API}/events`, res), [])
    return res.json<{ total: number }>().total
  }
  await insertEvent(other.db, { slug: 'first' })
  t.equal(await total(), 1)
  t.equal(await total(), 1, 'served from the cache')
  await insertEvent(other.db, { slug: 'second' })
  t.equal(await total(), 2, 'the other connection committed: counted again')
})
