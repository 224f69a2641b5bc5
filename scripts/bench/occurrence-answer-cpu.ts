/**
 * What a cold read of one occurrence costs beside a cold read by id (issue 45), in process, no HTTP: a fresh SQLite file
 * with `series` published series (weekly, COUNT 50, a category, a tag and a venue each) and as many single events, their
 * documents stored; then, alternately, `rounds` times: random reads by id answered as the cold path answers them
 * (`coldSources(ctx).answer`) and random reads of occurrences (`coldSources(ctx).occurrence`), each step of the
 * latter timed apart too. Prints µs a read (CPU of the process).
 *
 *   node --import tsx scripts/bench/occurrence-answer-cpu.ts [series, default 400] [reads a round, default 20000] [rounds, default 3] [id|occurrence]
 *   BENCH_DB=<a benchmark's bench-20000-series20.db> node --import tsx scripts/bench/occurrence-answer-cpu.ts 0 [reads] [rounds]
 *
 * With `id` or `occurrence` last, only those reads are made after the first round (for `node --cpu-prof`). With
 * BENCH_DB, a copy of that file (its documents stored for the benchmark's public URL) instead of a fresh one: reads
 * of its published single events by id and of the occurrences without an override of its published series. On a
 * build without `app.coldReads` (before this script), the cold sources are made as app.ts made them then.
 */
import { copyFileSync, rmSync } from 'node:fs'
import { buildApp } from '../../src/app.js'
import { defaultConfig } from '../../src/config.js'
import { openDatabase } from '../../src/db/database.js'
import { withTransaction } from '../../src/db/unit-of-work.js'
import { documentAnswer, documentTerms } from '../../src/handlers/event-documents.js'
import { occurrenceAnswer, slotsOf } from '../../src/handlers/occurrence-documents.js'
import { recordSerializers } from '../../src/http/serialized.js'
import { loadSpec } from '../../src/http/spec.js'
import { generateKey } from '../../src/lib/api-keys.js'
import { formatUtc } from '../../src/lib/dates.js'
import { createUserWithKey } from '../../src/repositories/users.js'

const PREFIX = '/calendar/events/v1'
const [seriesArg = '400', readsArg = '20000', roundsArg = '3', only] = process.argv.slice(2)
const file = `/tmp/occurrence-answer-cpu-${process.pid}.db`
const benchDb = process.env.BENCH_DB
if (benchDb !== undefined) copyFileSync(benchDb, file)
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
let singles: number[] = []
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
const published = (recurring: boolean) => handle.db.selectFrom('events as e').where('e.status', '=', 'publish').where('e.password', 'is', null)
  .where('e.recurrence', recurring ? 'is not' : 'is', null)
if (benchDb !== undefined) singles = (await published(false).select('e.id').execute()).map((r) => Number(r.id))
const occurrences = (await published(true).innerJoin('event_occurrences as o', 'o.event_id', 'e.id').where('o.overridden', '=', 0)
  .select(['o.event_id', 'o.occurrence']).execute()).map((r) => [Number(r.event_id), r.occurrence] as const)
const spec = loadSpec()
const apiUrl = `${publicUrl}${PREFIX}`
// As app.ts made the cold sources before they were handlers/cold-reads.ts (a build without `app.coldReads`).
const ctx = { db: handle.db, spec, json: recordSerializers(spec.document), site: { apiUrl, geoloc: false, timeZone: 'UTC' }, apiUrl, documents: app.eventDocuments } as unknown as Parameters<typeof slotsOf>[0]
const sources = (app as { coldReads?: { answer(id: number): Promise<{ etag: string; body: Buffer } | undefined>; occurrence(id: number, o: string): Promise<{ etag: string; body: Buffer } | undefined> } }).coldReads ?? {
  answer: async (id: number) => {
    const read = await app.eventDocuments.read(id, apiUrl)
    if (read?.found !== true) return undefined
    const made = await documentAnswer(ctx, read.document)
    return made === undefined ? undefined : { etag: made.etag, body: made.body() }
  },
  occurrence: async (eventId: number, id: string) => {
    const read = await app.eventDocuments.readOccurrence(eventId, apiUrl, id)
    if (read?.occurrence === undefined || read.occurrence.overridden) return undefined
    const slots = slotsOf(ctx, read.document)
    if (slots === null) return undefined
    const terms = await documentTerms(ctx, read.document)
    if (terms === undefined) return undefined
    const made = occurrenceAnswer(ctx, read.document, slots, { id, ...read.occurrence }, terms.categories, terms.tags, terms.etag)
    return made === undefined ? undefined : { etag: made.etag, body: made.body() }
  },
}
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
process.stdout.write(`${singles.length} single events, ${occurrences.length} occurrences without an override of published series${app.coldReads === undefined ? ' (the cold sources as app.ts made them)' : ''}\n`)
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
if (process.env.KEEP_DB === undefined) for (const suffix of ['', '-wal', '-shm']) rmSync(`${file}${suffix}`, { force: true })
else process.stdout.write(`kept ${file}\n`)
