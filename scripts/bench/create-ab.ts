/**
 * Two builds' creates compared in one process (issue 49): each variant is a source tree (its `src/`) and a
 * SQLite benchmark database (copied); the apps are built side by side and given creates in alternate
 * batches (`batch` creates, `concurrency` in flight), so that the machine's load falls on both alike.
 * Prints, per variant, the CPU of the process a create (user + system) in each round, their median, and
 * the median of the per-round ratios to the first variant; the median system CPU; the main thread's CPU
 * (`process.threadCpuUsage`: without the WAL's checkpointer thread and V8's helpers) and its ratio likewise.
 *
 *   node --import tsx scripts/bench/create-ab.ts <root>:<database file> <root>:<database file> [rounds, default 12] [batch, default 60] [concurrency, default 10]
 *
 * Keep rounds × batch × pages a create under 10,000 (the WAL is checkpointed at 10,000 pages).
 * The database files themselves are not changed (a copy of each is used and removed).
 */
import { copyFileSync, rmSync } from 'node:fs'
import { resolve } from 'node:path'
import { pathToFileURL } from 'node:url'
import { createBodies } from './create-body.js'

const specs = process.argv.slice(2).filter((a) => a.includes(':'))
const [rounds = 12, batch = 60, concurrency = 10] = process.argv.slice(2).filter((a) => !a.includes(':')).map(Number)
if (specs.length < 2) {
  process.stderr.write('usage: node --import tsx scripts/bench/create-ab.ts <root>:<db> <root>:<db> [rounds] [batch] [concurrency]\n')
  process.exit(2)
}

interface Variant { name: string; create: (n: number) => Promise<void>; close: () => Promise<void>; cpu: number[]; system: number[]; thread: number[] }
const variants: Variant[] = []
for (const [i, spec] of specs.entries()) {
  const [root, source] = spec.split(':') as [string, string]
  const from = (path: string): Promise<Record<string, unknown>> => import(pathToFileURL(resolve(root, path)).href) as Promise<Record<string, unknown>>
  /* eslint-disable @typescript-eslint/no-explicit-any */
  const { buildApp } = await from('src/app.ts') as any
  const { defaultConfig } = await from('src/config.ts') as any
  const { openSqlite } = await from('src/db/database.ts') as any
  const { withTransaction } = await from('src/db/unit-of-work.ts') as any
  const { generateKey } = await from('src/lib/api-keys.ts') as any
  const { createUserWithKey } = await from('src/repositories/users.ts') as any
  /* eslint-enable @typescript-eslint/no-explicit-any */
  const file = `${source}.ab${i}`
  const remove = (): void => { for (const f of [file, `${file}-wal`, `${file}-shm`]) rmSync(f, { force: true }) }
  remove()
  copyFileSync(source, file)
  const database = await openSqlite(file)
  const key = generateKey()
  await withTransaction(database.db, (trx: unknown) => createUserWithKey(trx, 'editor', key, '2026-01-01 00:00:00', 'create-ab'))
  const app = await buildApp({ db: database.db, config: defaultConfig({ databaseUrl: file, eventDocuments: false, logLevel: 'silent' }) })
  await app.ready()
  const body = createBodies(database.sqlite, 'Create AB')
  variants.push({
    name: spec, cpu: [], system: [], thread: [],
    create: async (n) => {
      const res = await app.inject({ method: 'POST', url: '/calendar/events/v1/events', headers: { authorization: `Bearer ${key}` }, payload: body(n) })
      if (res.statusCode !== 201) throw new Error(`${spec}: POST /events answered ${res.statusCode}: ${res.body.slice(0, 300)}`)
    },
    close: async () => { await app.close(); await database.close(); remove() },
  })
}
const run = async (v: Variant, first: number, n: number): Promise<void> => {
  let next = 0
  await Promise.all(Array.from({ length: concurrency }, async () => { while (next < n) await v.create(first + next++) }))
}
const median = (list: number[]): number => [...list].sort((a, b) => a - b)[Math.floor(list.length / 2)] ?? NaN
try {
  for (const v of variants) await run(v, 0, 100)
  let n = 1000
  for (let round = 0; round < rounds; round++) {
    // Alternate the order each round, so neither variant always follows the other.
    const order = round % 2 === 0 ? variants : [...variants].reverse()
    for (const v of order) {
      const cpu = process.cpuUsage()
      const thread = process.threadCpuUsage()
      await run(v, n, batch)
      const used = process.cpuUsage(cpu)
      const own = process.threadCpuUsage(thread)
      v.cpu.push((used.user + used.system) / 1000 / batch)
      v.system.push(used.system / 1000 / batch)
      v.thread.push((own.user + own.system) / 1000 / batch)
    }
    n += batch
  }
  const first = variants[0] as Variant
  for (const v of variants) {
    const ratios = v.cpu.map((c, i) => c / (first.cpu[i] as number))
    const threadRatios = v.thread.map((c, i) => c / (first.thread[i] as number))
    process.stdout.write(`${v.name}: CPU ms a create, median ${median(v.cpu).toFixed(3)} (rounds ${v.cpu.map((c) => c.toFixed(2)).join(' ')}); ` +
      `÷ first, median of rounds ${median(ratios).toFixed(3)}; system ${median(v.system).toFixed(3)}; ` +
      `main thread ${median(v.thread).toFixed(3)}, ÷ first ${median(threadRatios).toFixed(3)}\n`)
  }
} finally {
  for (const v of variants) await v.close()
}
