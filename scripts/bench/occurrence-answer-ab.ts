/**
 * Issue 45: a cold read of one occurrence against a cold read by id, two builds in one process (old and new source
 * trees, e.g. main's checked out with `git archive` beside a branch), alternated per round, so that a loaded machine
 * weighs on both alike. Each app is built on its own copy of `db` (a benchmark's bench-20000-series20.db); its
 * `app.coldReads` is called after a look, as the replay calls it. The same bytes from both are checked first. Prints
 * CPU µs a read (the process's).
 *
 *   node --import tsx scripts/bench/occurrence-answer-ab.ts <old root> <new root> (absolute paths) <db> [reads a round, 20000] [rounds, 6]
 */
import { copyFileSync, rmSync } from 'node:fs'
const [oldRoot, newRoot, dbFile, readsArg = '20000', roundsArg = '6'] = process.argv.slice(2)
const publicUrl = 'http://127.0.0.1:8080'
async function make(root: string, tag: string) {
  const { buildApp } = await import(`${root}/src/app.ts`)
  const { defaultConfig } = await import(`${root}/src/config.ts`)
  const { openDatabase } = await import(`${root}/src/db/database.ts`)
  const file = `/tmp/occurrence-answer-ab-${process.pid}-${tag}.db`
  copyFileSync(dbFile as string, file)
  const handle = await openDatabase(file)
  const app = await buildApp({ db: handle.db, config: defaultConfig({ databaseUrl: file, eventDocuments: true, logLevel: 'silent', publicUrl }) })
  const { lookedGeneration } = await import(`${root}/src/repositories/read-cache.ts`)
  const raw = app.coldReads as { answer(id: number, g?: number): Promise<{ etag: string; body: Buffer } | undefined>; occurrence(id: number, o: string, g?: number): Promise<{ etag: string; body: Buffer } | undefined> }
  // As the replay calls them: after a look (its generation given).
  const sources = {
    answer: async (id: number) => raw.answer(id, await lookedGeneration(handle.db)),
    occurrence: async (id: number, o: string) => raw.occurrence(id, o, await lookedGeneration(handle.db)),
  }
  return { app, handle, sources }
}
const old = await make(oldRoot as string, 'old')
const neu = await make(newRoot as string, 'new')
const db = neu.handle.db
const published = (recurring: boolean) => db.selectFrom('events as e').where('e.status', '=', 'publish').where('e.password', 'is', null).where('e.recurrence', recurring ? 'is not' : 'is', null)
const singles = (await published(false).select('e.id').execute()).map((r: { id: number }) => Number(r.id))
const occurrences = (await published(true).innerJoin('event_occurrences as o', 'o.event_id', 'e.id').where('o.overridden', '=', 0).select(['o.event_id', 'o.occurrence']).execute())
  .map((r: { event_id: number; occurrence: string }) => [Number(r.event_id), r.occurrence] as const)
const reads = Number(readsArg)
const cpu = () => { const u = process.cpuUsage(); return u.user + u.system }
let seed = 45
const random = () => ((seed = (seed * 1103515245 + 12345) & 0x7fffffff) / 0x80000000)
async function byId(s: typeof old.sources) {
  const t0 = cpu()
  for (let i = 0; i < reads; i++) if ((await s.answer(singles[Math.floor(random() * singles.length)] as number)) === undefined) throw new Error('no answer')
  return (cpu() - t0) / reads
}
async function byOcc(s: typeof old.sources) {
  const t0 = cpu()
  for (let i = 0; i < reads; i++) {
    const [id, o] = occurrences[Math.floor(random() * occurrences.length)] as readonly [number, string]
    if ((await s.occurrence(id, o)) === undefined) throw new Error(`no answer ${id}/${o}`)
  }
  return (cpu() - t0) / reads
}
// Same answers from both (bytes; ETags differ by design when the tag changed).
for (let i = 0; i < 200; i++) {
  const [id, o] = occurrences[Math.floor(random() * occurrences.length)] as readonly [number, string]
  const [a, b] = [await old.sources.occurrence(id, o), await neu.sources.occurrence(id, o)]
  if (a === undefined || b === undefined || !a.body.equals(b.body)) throw new Error(`differ ${id}/${o}`)
}
for (const s of [old.sources, neu.sources]) { await byId(s); await byOcc(s) }
const rows: string[] = []
const sum: Record<'old' | 'new', [number, number]> = { old: [0, 0], new: [0, 0] }
for (let r = 0; r < Number(roundsArg); r++) {
  for (const [name, s] of (r % 2 === 0 ? [['old', old.sources], ['new', neu.sources]] : [['new', neu.sources], ['old', old.sources]]) as Array<['old' | 'new', typeof old.sources]>) {
    const id = await byId(s)
    const oc = await byOcc(s)
    sum[name][0] += id; sum[name][1] += oc
    rows.push(`round ${r + 1} ${name}: by id ${id.toFixed(1)} µs, by occurrence ${oc.toFixed(1)} µs (${(oc / id).toFixed(2)} ×)`)
    process.stdout.write(rows.at(-1) + '\n')
  }
}
for (const name of ['old', 'new'] as const) process.stdout.write(`mean ${name}: by id ${(sum[name][0] / Number(roundsArg)).toFixed(1)}, by occurrence ${(sum[name][1] / Number(roundsArg)).toFixed(1)} (${(sum[name][1] / sum[name][0]).toFixed(2)} ×)\n`)
for (const tag of ['old', 'new']) for (const suffix of ['', '-wal', '-shm']) rmSync(`/tmp/occurrence-answer-ab-${process.pid}-${tag}.db${suffix}`, { force: true })
process.exit(0)
