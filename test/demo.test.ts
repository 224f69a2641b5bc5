/**
 * `npm run demo` (scripts/demo.ts) on the engine under test: it loads the demo calendar into an empty
 * database, refuses one that has records, and with `--reset` empties it first (after a warning line) so
 * that the calendar is the demo's alone again, its ids starting at 1 as the contract's examples name them.
 */
import t from 'tap'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { openDatabase } from '../src/db/database.js'
import { freshDatabaseUrl } from './helpers/database.js'
import { runScript, type CommandRun } from './helpers/server.js'

async function demo(databaseUrl: string, args: readonly string[] = []): Promise<CommandRun> {
  return runScript('demo.ts', databaseUrl, args, 120_000)
}

/** The events' ids, the venues' count and the API keys' count in the database at `url`. */
async function contents(url: string): Promise<{ events: number[]; venues: number; keys: number; titles: string[] }> {
  const database = await openDatabase(url)
  try {
    const events = await database.db.selectFrom('events').select(['id', 'title']).orderBy('id').execute()
    const venues = await database.db.selectFrom('venues').select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow()
    const keys = await database.db.selectFrom('api_keys').select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow()
    return { events: events.map((e) => Number(e.id)), venues: Number(venues.n), keys: Number(keys.n), titles: events.map((e) => e.title) }
  } finally {
    await database.close()
  }
}

t.test('demo loads an empty database, refuses a full one, and --reset empties it first', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'demo-'))
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  const url = await freshDatabaseUrl(t, join(dir, 'calendar.db'))

  const first = await demo(url)
  t.equal(first.code, 0, `the first load exits 0 ${first.stderr}`)
  t.match(first.stdout, /Loaded the demo calendar .*: 30 events/, 'it says what it loaded')
  const loaded = await contents(url)
  t.equal(loaded.events.length, 30, '30 events')
  t.equal(loaded.events[0], 1, 'the first is event 1')

  // A record of someone's own, beside the demo's: --reset must take it away too.
  const database = await openDatabase(url)
  await database.db.updateTable('events').set({ title: 'Mine, not the demo\'s' }).where('id', '=', 2).execute()
  await database.close()

  const again = await demo(url)
  t.equal(again.code, 2, 'a second load without --reset is refused')
  t.match(again.stderr, /already has events.*npm run demo -- --reset/s, 'saying how to start over')
  t.equal((await contents(url)).events.length, 30, 'and changes nothing')

  const reset = await demo(url, ['--reset'])
  t.equal(reset.code, 0, `--reset exits 0 ${reset.stderr}`)
  t.match(reset.stderr, /^WARNING: --reset deletes everything in .*Stop the servers on it first\.\n$/s, 'after one warning line')
  const after = await contents(url)
  t.strictSame(after.events, loaded.events, 'the same 30 events, ids from 1 again')
  t.strictSame(after.titles, loaded.titles, 'as the demo made them: the edited title is gone')
  t.equal(after.venues, loaded.venues, 'as many venues as the first load')
  t.equal(after.keys, 1, 'and one key: the demo editor of this load, the earlier ones deleted')

  const wrong = await demo(url, ['--fresh'])
  t.equal(wrong.code, 2, 'an unknown option is refused')
  t.match(wrong.stderr, /usage: npm run demo/, 'with the usage')
})
