/**
 * The horizon job (CONTRACT §17, docs/recurrence.md): a series whose rule has neither COUNT nor UNTIL has
 * occurrences up to `CALENDAR_RECURRENCE_HORIZON_DAYS` after today, and the horizon moves forward every day by
 * itself, on every node. Every node runs this at start and then once a day (server.ts): the series whose rows
 * end before now + the horizon days are read a batch at a time (`events_recurrence_through`), and each is
 * extended by its own compare-and-swap, a few series per unit of work (repositories/occurrence-horizon.ts: the new rows inserted with
 * `on conflict do nothing`, the horizon moved by compare-and-swap). Two nodes moving the same series, or a run
 * redone after a crash, leave the same rows; no change-log entry is written.
 *
 * The expansion is pure and runs outside the unit of work, so a write lock is held only for a few series' inserts.
 * A run stops between units of work when asked (shutdown). Errors end the run and go to `onError` (server.ts logs them
 * and, for a database that cannot serve, runs again a minute later, as retention does).
 */
import type { Kysely } from 'kysely'
import type { Database } from './db/schema.js'
import { withTransaction } from './db/unit-of-work.js'
import { formatUtc } from './lib/dates.js'
import { DAY } from './lib/time-zones.js'
import { extendSeries, occurrencesToAdd, seriesBehind } from './repositories/occurrence-horizon.js'

/** Series read per statement. */
export const HORIZON_BATCH = 100

/**
 * Series moved per unit of work: each move is two statements, so a unit of work of its own per series spent most of
 * its time beginning and committing (PostgreSQL: 4.7–5.9 s for a day of 550 series, docs/performance.md); a
 * write lock is still held only for a few milliseconds.
 */
export const HORIZON_UNIT = 25

/** What a run did. */
export interface HorizonRun {
  /** The horizon the series were moved to (UTC). */
  horizon: string
  /** Series moved, and occurrences they gained (rows another node inserted first included). */
  series: number
  occurrences: number
  /** Series left as they were: changed or moved by another node meanwhile. */
  lost: number
}

/** The horizon of unbounded series at `now`: `days` later, to the second. */
export function horizonAt(now: Date, days: number): string {
  return formatUtc(new Date(now.getTime() + days * DAY))
}

/**
 * Moves every unbounded series whose rows end before `now + days` to that horizon, a batch of series at a
 * time and HORIZON_UNIT series per unit of work, with a turn of the event loop between batches. `stopped` is asked
 * between units of work: a run stopped early leaves the rest for the next.
 */
export async function moveHorizons(db: Kysely<Database>, now: Date, days: number, stopped: () => boolean = () => false): Promise<HorizonRun> {
  const horizon = horizonAt(now, days)
  const run: HorizonRun = { horizon, series: 0, occurrences: 0, lost: 0 }
  let after: { through: string; id: number } | undefined
  for (;;) {
    const batch = await seriesBehind(db, horizon, after, HORIZON_BATCH)
    for (let from = 0; from < batch.length; from += HORIZON_UNIT) {
      if (stopped()) return run
      const unit = batch.slice(from, from + HORIZON_UNIT).map((series) => ({ series, occurrences: occurrencesToAdd(series, horizon) }))
      // Each series still moves by its own compare-and-swap: one lost leaves the others of its unit as they are.
      const moved = await withTransaction(db, async (trx) => {
        const done: boolean[] = []
        for (const { series, occurrences } of unit) done.push(await extendSeries(trx, series, horizon, occurrences))
        return done
      })
      moved.forEach((done, i) => {
        if (done) {
          run.series++
          run.occurrences += unit[i]?.occurrences.length ?? 0
        } else {
          run.lost++
        }
      })
      const last = unit.at(-1)?.series
      if (last !== undefined) after = { through: last.through, id: last.id }
    }
    if (batch.length < HORIZON_BATCH) return run
    await new Promise<void>((resolve) => setImmediate(resolve))
  }
}

/** How often the job runs after the run at start. */
export const HORIZON_EVERY_MS = DAY

export interface HorizonSchedule {
  /** Runs the job now (after any run in progress); resolves when it has run (errors go to `onError`). */
  runNow(): Promise<void>
  /** No more runs; resolves when the run in progress, told to stop between series, has ended. */
  stop(): Promise<void>
}

/**
 * Runs the job now and every `everyMs` (a day) until stopped, one run at a time; the timer does not keep the
 * process alive. `now` is the clock (tests move it), `onDone` hears what each run did.
 */
export function scheduleHorizon(db: Kysely<Database>, options: {
  now: () => Date
  days: number
  onError: (error: unknown) => void
  onDone?: (run: HorizonRun) => void
  everyMs?: number
}): HorizonSchedule {
  let stopped = false
  let running: Promise<void> = Promise.resolve()
  const runNow = (): Promise<void> => {
    running = running.then(async () => {
      if (stopped) return
      const run = await moveHorizons(db, options.now(), options.days, () => stopped)
      options.onDone?.(run)
    }).catch(options.onError)
    return running
  }
  void runNow()
  const timer = setInterval(() => void runNow(), options.everyMs ?? HORIZON_EVERY_MS)
  timer.unref()
  return {
    runNow,
    stop: () => {
      stopped = true
      clearInterval(timer)
      return running
    },
  }
}
