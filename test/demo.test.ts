/**
 * `npm run demo` (scripts/demo.ts) on the engine under test: it loads the demo calendar into an empty
 * database, refuses one that has records, and with `--reset` empties it first (after a warning line) so
 * that the calendar is the demo's alone again, its ids starting at 1 as the contract's examples name them; its three
 * recurring series (a weekly class, a last-Friday meetup, a yearly festival with a cancelled year) have their occurrences.
 */
import t, { type Test } from 'tap'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { openDatabase } from '../src/db/database.js'
import { utcToWall } from '../src/lib/dates.js'
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

/** The demo's three series (CONTRACT §17): stored as the API took them, with their occurrences. */
async function recurringSeries(t: Test, url: string): Promise<void> {
  const database = await openDatabase(url)
  try {
    const series = await database.db.selectFrom('events').select(['id', 'title', 'recurrence', 'start_date', 'timezone', 'all_day'])
      .where('recurrence', 'is not', null).orderBy('id').execute()
    t.strictSame(series.map((e) => e.title), ['Swing Dance Class', 'Jazz Lovers Meetup', 'Lake Parade Festival'], 'three series, the last events')
    const rows = async (id: number) => database.db.selectFrom('event_occurrences').select(['occurrence', 'start_utc']).where('event_id', '=', id).orderBy('start_utc').execute()
    const [weekly, monthly, yearly] = series as [typeof series[0], typeof series[0], typeof series[0]]
    // Unbounded rules: rows up to the horizon, five years by default.
    const classes = await rows(weekly.id)
    t.ok(classes.length >= 260 && classes.length <= 262, `a weekly class for five years: ${classes.length} occurrences`)
    const weekday = (utc: string) => new Date(`${utcToWall(utc, weekly.timezone).slice(0, 10)}T00:00:00Z`).getUTCDay()
    t.ok(classes.every((o) => weekday(o.start_utc) === weekday(classes[0]?.start_utc ?? '')), 'on one weekday')
    t.match(JSON.parse(monthly.recurrence ?? '{}'), { rule: 'FREQ=MONTHLY;BYDAY=-1FR' })
    const meetups = await rows(monthly.id)
    t.ok(meetups.length >= 59 && meetups.length <= 61, `a meetup every month for five years: ${meetups.length}`)
    for (const o of meetups) {
      const day = utcToWall(o.start_utc, monthly.timezone).slice(0, 10)
      const next = new Date(Date.parse(`${day}T00:00:00Z`) + 7 * 86_400_000)
      if (new Date(`${day}T00:00:00Z`).getUTCDay() !== 5 || next.getUTCMonth() === new Date(`${day}T00:00:00Z`).getUTCMonth()) t.fail(`${day} is not the last Friday of its month`)
    }
    const festival = JSON.parse(yearly.recurrence ?? '{}') as { rule: string; exdates: string[] }
    t.equal(festival.rule, 'FREQ=YEARLY')
    t.equal(festival.exdates.length, 1, 'one cancelled year')
    const years = (await rows(yearly.id)).map((o) => o.occurrence)
    t.equal(yearly.all_day, 1, 'an all-day festival')
    t.notOk(years.includes((festival.exdates[0] ?? '').replaceAll('-', '')), 'the cancelled year has no occurrence')
    t.ok(years.length >= 4 && years.length <= 5, `the other years have: ${years.join(', ')}`)
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
  t.match(first.stdout, /Loaded the demo calendar .*: 33 events/, 'it says what it loaded')
  const loaded = await contents(url)
  t.equal(loaded.events.length, 33, '33 events')
  t.equal(loaded.events[0], 1, 'the first is event 1')
  await recurringSeries(t, url)

  // A record of someone's own, beside the demo's: --reset must take it away too.
  const database = await openDatabase(url)
  await database.db.updateTable('events').set({ title: 'Mine, not the demo\'s' }).where('id', '=', 2).execute()
  await database.close()

  const again = await demo(url)
  t.equal(again.code, 2, 'a second load without --reset is refused')
  t.match(again.stderr, /already has events.*npm run demo -- --reset/s, 'saying how to start over')
  t.equal((await contents(url)).events.length, 33, 'and changes nothing')

  const reset = await demo(url, ['--reset'])
  t.equal(reset.code, 0, `--reset exits 0 ${reset.stderr}`)
  t.match(reset.stderr, /^WARNING: --reset deletes everything in .*Stop the servers on it first\.\n$/s, 'after one warning line')
  const after = await contents(url)
  t.strictSame(after.events, loaded.events, 'the same 33 events, ids from 1 again')
  t.strictSame(after.titles, loaded.titles, 'as the demo made them: the edited title is gone')
  t.equal(after.venues, loaded.venues, 'as many venues as the first load')
  t.equal(after.keys, 1, 'and one key: the demo editor of this load, the earlier ones deleted')

  const wrong = await demo(url, ['--fresh'])
  t.equal(wrong.code, 2, 'an unknown option is refused')
  t.match(wrong.stderr, /usage: npm run demo/, 'with the usage')
})
