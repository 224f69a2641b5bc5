/**
 * Two builds' list items of series' occurrences compared in one process (issue 45): what a random filtered list with
 * series spends beyond one without, its occurrences' items made from their series' documents
 * (handlers/occurrence-list-items.ts `unchangedItem`) and joined into a page's body, without the statements and the
 * HTTP around them, whose noise on a loaded machine hides it. Each variant is a source tree (its `src/`); both read the
 * same database (a PostgreSQL URL with its schema, or a SQLite file) (a benchmark's kept database with series: a copy,
 * the documents of the first variant's public URL are filled in it). Pages of 10 occurrences (not overridden) of random series are made in alternate rounds,
 * the variant going first alternating; each round's page list forms (`documentsListed`: the page's terms) are made
 * before the round, untimed. Prints the main thread's CPU µs an item per round, their median, the median ratio to the
 * first variant, and whether every page's bytes were the same in both.
 *
 *   node --import tsx scripts/bench/occurrence-items-ab.ts <root> <root> --database-url URL [--series 400] [--pages 300] [--rounds 12]
 */
import { resolve } from 'node:path'
import { pathToFileURL } from 'node:url'

const argv = process.argv.slice(2)
const opt = (name: string): string | undefined => {
  const i = argv.indexOf(`--${name}`)
  return i < 0 ? undefined : argv[i + 1]
}
const databaseUrl = opt('database-url')
if (databaseUrl === undefined) throw new Error('--database-url URL')
const seriesCount = Number(opt('series') ?? 400)
const pageCount = Number(opt('pages') ?? 300)
const rounds = Number(opt('rounds') ?? 12)
const roots = argv.filter((a, i) => !a.startsWith('--') && !(argv[i - 1] ?? '').startsWith('--'))
if (roots.length < 2) throw new Error('two source trees')

let state = 20261207
const rnd = (): number => {
  state = (state * 1103515245 + 12345) % 2147483648
  return state / 2147483648
}

type Doc = { id: number }
interface Variant {
  root: string
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  ctx: any
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  documentsListed: (ctx: any, documents: readonly Doc[]) => Promise<any>
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  unchangedItem: (ctx: any, listed: any, document: Doc, id: string) => Buffer | Buffer[] | undefined
  close: () => Promise<void>
  micros: number[]
}
const variants: Variant[] = []
let documents: Doc[] = []
let entries: Array<[Doc, string]> = []
for (const root of roots) {
  const from = (path: string): Promise<Record<string, unknown>> => import(pathToFileURL(resolve(root, path)).href) as Promise<Record<string, unknown>>
  /* eslint-disable @typescript-eslint/no-explicit-any */
  const { buildApp } = await from('src/app.ts') as any
  const { defaultConfig } = await from('src/config.ts') as any
  const { openDatabase } = await from('src/db/database.ts') as any
  const { recordSerializers } = await from('src/http/serialized.ts') as any
  const { loadSpec, PREFIX } = await from('src/http/spec.ts') as any
  const { documentsListed, isSingleDocument } = await from('src/handlers/event-documents.ts') as any
  const { unchangedItem } = await from('src/handlers/occurrence-list-items.ts') as any
  /* eslint-enable @typescript-eslint/no-explicit-any */
  const handle = await openDatabase(databaseUrl)
  const publicUrl = 'http://calendar.bench'
  const app = await buildApp({ db: handle.db, config: defaultConfig({ databaseUrl, publicUrl, logLevel: 'silent' }) })
  await app.ready()
  const apiUrl = `${publicUrl}${PREFIX}`
  const spec = loadSpec()
  const ctx = { db: handle.db, site: { apiUrl, geoloc: false, timeZone: 'UTC' }, json: recordSerializers(spec.document), apiUrl }
  if (documents.length === 0) {
    // The documents of this public URL, as the server fills them after it starts.
    await app.fillEventDocuments()
    // Series with a stored document, their occurrences without an override.
    const series = await handle.db.selectFrom('events').select('id').where('recurrence', 'is not', null).orderBy('id').limit(seriesCount * 3).execute()
    const read = await app.eventDocuments.readMany(series.map((r: { id: number }) => Number(r.id)), apiUrl)
    documents = [...read.found.values()].filter((d: Doc) => !isSingleDocument(d)).slice(0, seriesCount)
    const overridden = new Set((await handle.db.selectFrom('event_overrides').select(['event_id', 'occurrence']).execute()).map((r: { event_id: number; occurrence: string }) => `${r.event_id} ${r.occurrence}`))
    const rows = await handle.db.selectFrom('event_occurrences').select(['event_id', 'occurrence']).where('event_id', 'in', documents.map((d) => d.id)).execute()
    const byId = new Map(documents.map((d) => [d.id, d]))
    entries = rows.filter((r: { event_id: number; occurrence: string }) => !overridden.has(`${r.event_id} ${r.occurrence}`))
      .map((r: { event_id: number; occurrence: string }) => [byId.get(Number(r.event_id)) as Doc, r.occurrence])
  }
  variants.push({ root, ctx, documentsListed, unchangedItem, micros: [], close: async () => { await app.close(); await handle.close() } })
}
const pages = Array.from({ length: pageCount }, () => Array.from({ length: 10 }, () => entries[Math.floor(rnd() * entries.length)] as [Doc, string]))
console.log(`${documents.length} series, ${entries.length} occurrences, ${pageCount} pages of 10`)

const COMMA = Buffer.from(',')
/** One round of `v`: its pages' bodies (the items joined as http/serialized.ts `listBody` joins them). */
async function round(v: Variant, timed: boolean): Promise<Buffer[]> {
  const listed = []
  for (const page of pages) listed.push(await v.documentsListed(v.ctx, [...new Set(page.map(([d]) => d))]))
  const bodies: Buffer[] = []
  const cpu = process.threadCpuUsage()
  for (const [p, page] of pages.entries()) {
    const parts: Buffer[] = []
    for (const [i, [document, id]] of page.entries()) {
      const item = v.unchangedItem(v.ctx, listed[p], document, id)
      if (item === undefined) throw new Error(`${v.root}: no item for ${document.id} ${id}`)
      if (i > 0) parts.push(COMMA)
      if (Buffer.isBuffer(item)) parts.push(item)
      else parts.push(...item)
    }
    bodies.push(Buffer.concat(parts))
  }
  const used = process.threadCpuUsage(cpu)
  if (timed) v.micros.push((used.user + used.system) / pages.length / 10)
  return bodies
}

try {
  let same = true
  const check = async (timed: boolean, order: Variant[]) => {
    const made = new Map<Variant, Buffer[]>()
    for (const v of order) made.set(v, await round(v, timed))
    const first = made.get(variants[0] as Variant) as Buffer[]
    for (const v of variants.slice(1)) (made.get(v) as Buffer[]).forEach((b, i) => { if (!b.equals(first[i] as Buffer)) same = false })
  }
  await check(false, variants)
  for (let r = 0; r < rounds; r++) await check(true, r % 2 === 0 ? variants : [...variants].reverse())
  const median = (xs: number[]): number => {
    const s = [...xs].sort((a, b) => a - b)
    return s.length % 2 === 1 ? s[(s.length - 1) / 2] as number : ((s[s.length / 2 - 1] as number) + (s[s.length / 2] as number)) / 2
  }
  const base = variants[0] as Variant
  for (const v of variants) {
    const ratios = v.micros.map((c, i) => c / (base.micros[i] as number))
    console.log(`${v.root}: CPU µs an item by round ${v.micros.map((c) => c.toFixed(2)).join(' ')}; median ${median(v.micros).toFixed(2)}; median ratio to the first ${median(ratios).toFixed(3)}`)
  }
  console.log(`pages' bytes the same in every round: ${same}`)
} finally {
  for (const v of variants) await v.close()
}
