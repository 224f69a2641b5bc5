/**
 * What authenticating a key costs a request (issue 49): on a copy of a benchmark database (SQLite), the lookup of
 * the key's user as every write paid it (`findUserByKey`: its hash, the statement through the query builder, which
 * waits for the connection) against the kept keys (`keyCallers`: the hash, the key epoch's look, the map), in
 * alternate rounds of `calls` sequential calls each; prints the CPU of the process a call, median of the rounds.
 *
 *   node --import tsx scripts/bench/key-lookup.ts <database file> [rounds, default 10] [calls, default 20000]
 *
 * The file itself is not changed (a copy beside it is used and removed).
 */
import { findUserByKey, keyCallers } from '../../src/repositories/users.js'
import { openWithEditor, scratchCopy } from './scratch.js'

const rounds = Number(process.argv[3] ?? 10)
const calls = Number(process.argv[4] ?? 20000)
const { file, remove } = scratchCopy('key-lookup', '[rounds] [calls]')
const { database, key } = await openWithEditor(file, 'key-lookup')
const kept = keyCallers(database.db)
const ways: Record<string, () => unknown> = {
  'looked up (findUserByKey)': () => findUserByKey(database.db, key),
  'kept (keyCallers)': () => kept(key),
}
const per: Record<string, number[]> = Object.fromEntries(Object.keys(ways).map((k) => [k, []]))
for (let r = 0; r < rounds + 1; r++) {
  for (const [name, call] of Object.entries(ways)) {
    const start = process.cpuUsage()
    for (let i = 0; i < calls; i++) {
      const user = await call()
      if (user === undefined) throw new Error(`${name}: the key was not found`)
    }
    const used = process.cpuUsage(start)
    if (r > 0) per[name]?.push((used.user + used.system) / calls)
  }
}
const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? NaN
for (const [name, xs] of Object.entries(per)) {
  process.stdout.write(`${name}: ${median(xs).toFixed(2)} µs a call (rounds ${xs.map((x) => x.toFixed(1)).join(' ')})\n`)
}
await database.close()
remove()
