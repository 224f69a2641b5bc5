/**
 * Loaded into the server under test by test/gc.test.ts (`node --expose-gc --import tsx --import
 * ./test/helpers/gc-probe.ts src/server.ts`). It changes nothing the server does: it counts the
 * statements the SQLite driver prepares and those garbage collection has taken (a FinalizationRegistry),
 * and on each message from the test it forces collections of every kind, then answers with the counts.
 */
import SQLite from 'better-sqlite3'

export interface GcReport {
  prepared: number
  collected: number
  heapUsed: number
}

const counts = { prepared: 0, collected: 0 }
const taken = new FinalizationRegistry<undefined>(() => {
  counts.collected += 1
})

const prepare = SQLite.prototype.prepare
SQLite.prototype.prepare = function prepareCounted(this: SQLite.Database, source: string) {
  const statement = prepare.call(this, source)
  counts.prepared += 1
  taken.register(statement, undefined)
  return statement
} as typeof prepare

const force = globalThis.gc
if (force === undefined || process.send === undefined) {
  throw new Error('gc-probe needs --expose-gc and an IPC channel')
}
const send = process.send.bind(process)

/** A full collection, a young-generation one, and a full one V8 runs as a task of its own. */
async function collect(): Promise<void> {
  force?.({ type: 'major' })
  force?.({ type: 'minor' })
  await force?.({ type: 'major', execution: 'async' })
  // Finalization callbacks run as tasks after the collection: let them.
  await new Promise((resolve) => setImmediate(resolve))
}

process.on('message', (message: unknown) => {
  const rounds = typeof message === 'object' && message !== null && 'collect' in message && typeof message.collect === 'number' ? message.collect : 1
  void (async () => {
    for (let i = 0; i < rounds; i++) await collect()
    const report: GcReport = { ...counts, heapUsed: process.memoryUsage().heapUsed }
    send(report)
  })()
})
// The channel must not keep the server alive once it has closed on SIGTERM.
process.channel?.unref()
