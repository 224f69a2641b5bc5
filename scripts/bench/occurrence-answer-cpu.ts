/**
 * What a cold read of one occurrence costs beside a cold read by id (issue 45), in process, no HTTP: a fresh SQLite file
 * with `series` published series (weekly, COUNT 50, a category, a tag and a venue each) and as many single events, their
 * documents stored; then, alternately, `rounds` times: random reads by id answered as the cold path answers them
 * (`coldSources(ctx).answer`) and random reads of occurrences (`coldSources(ctx).occurrence`), each step of the
 * latter timed apart too. Prints µs a read (CPU of the process).
 *
 *   node --import tsx scripts/bench/occurrence-answer-cpu.ts [series, default 400] [reads a round, default 20000] [rounds, default 3] [id|occurrence]
 *
 * With `id` or `occurrence` last, only those reads are made after the first round (for `node --cpu-prof`).
 */
import { rmSync } from 'node:fs'
import { buildApp } from '../../src/app.js'
import { defaultConfig } from '../../src/config.js'
import { openDatabase } from '../../src/db/database.js'
import { withTransaction } from '../../src/db/unit-of-work.js'
import { generateKey } from '../../src/lib/api-keys.js'
import { formatUtc } from '../../src/lib/dates.js'
import { createUserWithKey } from '../../src/repositories/users.js'

const PREFIX = '/calendar/events/v1'
const [seriesArg = '400', readsArg = '20000', roundsArg = '3', only] = process.argv.slice(2)
const file = `/tmp/occurrence-answer-cpu-${process.pid}.db`
const handle = await openDatabase(file)
const key = generateKey()
await withTransaction(handle.db, (trx) => createUserWithKey(trx, 'editor', key, formatUtc(new Date()), 'bench'))
const publicUrl = 'http://127.0.0.1:8080'
const app = await buildApp({ db: handle.db, config: defaultConfig({ databaseUrl: file, eventDocuments: true, logLevel: 'silent', publicUrl }) })
const headers = { authorization: `Bearer ${key}`, 'content-type': 'application/json' }
const post = async (url: string, body: unknown): Promise<{ id: number }> => {
  const res = await app.inject({ method: 'POST', url: `${PREFIX}${url}`, headers, payload: JSON.stringify(body) })
  if (res.statusCode !== 201) throw new Error(`${url}: ${res.statusCode} ${res.body.slice(0, 300)}`)
  return res.json<{ id: number }>()
}
const category = await post('/categories', { name: 'Jazz' })
const tag = await post('/tags', { name: 'Outdoor' })
const venue = await post('/venues', { venue: 'Hall', city: 'Vienna', status: 'publish' })
const singles: number[] = []
for (let i = 0; i < Number(seriesArg); i++) {
  const body = {
    title: `Event ${i} with a description`, description: 'A longer text '.repeat(20), status: 'publish', categories: [category.id], tags: [tag.id], venue: [venue.id],
    start_date: '2026-07-01 18:00:00', end_date: '2026-07-01 21:00:00', timezone: i % 2 === 0 ? 'Europe/Vienna' : 'UTC',
  }
  singles.push((await post('/events', body)).id)
  await post('/events', { ...body, recurrence: { rule: 'FREQ=WEEKLY;COUNT=50' } })
}
await app.fillEventDocuments()
await app.eventDocuments.settled()
const occurrences = (await handle.db.selectFrom('event_occurrences as o').innerJoin('events as e', 'e.id', 'o.event_id')
  .select(['o.event_id', 'o.occurrence']).where('e.recurrence', 'is not', null).execute()).map((r) => [Number(r.event_id), r.occurrence] as const)
if (app.coldReads === undefined) throw new Error('no cold reads (SQLite with documents only)')
const sources = app.coldReads
const reads = Number(readsArg)
const cpu = (): number => {
  const used = process.cpuUsage()
  return used.user + used.system
}
let seed = 45
const random = (): number => {
  seed = (seed * 1103515245 + 12345) & 0x7fffffff
  return seed / 0x80000000
}
async function byId(): Promise<number> {
  const started = cpu()
  let bytes = 0
  for (let i = 0; i < reads; i++) {
    const made = await sources.answer(singles[Math.floor(random() * singles.length)] as number)
    if (made === undefined) throw new Error('no cold answer by id')
    bytes += made.body.length + made.etag.length
  }
  if (bytes === 0) throw new Error('nothing')
  return (cpu() - started) / reads
}
async function byOccurrence(): Promise<number> {
  const started = cpu()
  let bytes = 0
  for (let i = 0; i < reads; i++) {
    const [id, occurrence] = occurrences[Math.floor(random() * occurrences.length)] as readonly [number, string]
    const made = await sources.occurrence(id, occurrence)
    if (made === undefined) throw new Error(`no cold answer for ${id}/${occurrence}`)
    bytes += made.body.length + made.etag.length
  }
  if (bytes === 0) throw new Error('nothing')
  return (cpu() - started) / reads
}
process.stdout.write(`${singles.length} single events, ${occurrences.length} occurrences of ${singles.length} series\n`)
await byId()
await byOccurrence()
for (let round = 0; round < Number(roundsArg); round++) {
  if (only !== undefined) {
    process.stdout.write(`round ${round + 1}: ${only} ${(only === 'id' ? await byId() : await byOccurrence()).toFixed(1)} µs\n`)
    continue
  }
  const id = await byId()
  const occurrence = await byOccurrence()
  process.stdout.write(`round ${round + 1}: by id ${id.toFixed(1)} µs, by occurrence ${occurrence.toFixed(1)} µs (${(occurrence / id).toFixed(2)} ×)\n`)
}
await app.close()
await handle.close()
if (process.env.KEEP_DB === undefined) for (const suffix of ["", "-wal", "-shm"]) rmSync(`${file}${suffix}`, { force: true })
else process.stdout.write(`kept ${file}\n`)
