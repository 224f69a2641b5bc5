/**
 * Two builds' random filtered lists compared in one process (issue 45): each variant is a source tree (its `src/`)
 * and a database (a PostgreSQL URL with its schema, or a SQLite file: copy it first, the app may store event
 * documents); the apps are built side by side, their event documents filled, and each is sent the same seeded
 * `random-filter` requests (scripts/bench/scenarios.ts `realScenarios`, one sequence per variant, the same seed) in
 * alternate batches, the variant going first alternating, so that the machine's load falls on both alike. Prints,
 * per variant, the CPU of the process a request (user + system) in each round, their median, and the median of the
 * per-round ratios to the first variant; the answers of each round are compared across the variants (status,
 * headers of the list, body), which must be the same bytes.
 *
 *   node --import tsx scripts/bench/list-ab.ts --file DB <root>=<database URL or file> <root>=<…> [--rounds 10] [--batch 150] [--warm 600] [--seed N]
 *
 * `--file`: the SQLite benchmark database the samples (ids, terms, venues) are read from (`sampleData`).
 */
import { resolve } from 'node:path'
import { pathToFileURL } from 'node:url'
import { realScenarios, sampleData } from './scenarios.js'

const argv = process.argv.slice(2)
const opt = (name: string): string | undefined => {
  const i = argv.indexOf(`--${name}`)
  return i < 0 ? undefined : argv[i + 1]
}
const file = opt('file')
if (file === undefined) throw new Error('--file DB')
const rounds = Number(opt('rounds') ?? 10)
const batch = Number(opt('batch') ?? 150)
const warm = Number(opt('warm') ?? 600)
const seed = Number(opt('seed') ?? 20261125)
const specs = argv.filter((a) => a.includes('=') && !a.startsWith('--'))
if (specs.length < 2) throw new Error('two variants: <root>=<database>')

const now = new Date()
const samples = sampleData(file, 20000, now)

interface Variant {
  name: string
  send: (n: number) => Promise<string[]>
  close: () => Promise<void>
  cpu: number[]
}
const variants: Variant[] = []
for (const spec of specs) {
  const at = spec.indexOf('=')
  const root = spec.slice(0, at)
  const databaseUrl = spec.slice(at + 1)
  const from = (path: string): Promise<Record<string, unknown>> => import(pathToFileURL(resolve(root, path)).href) as Promise<Record<string, unknown>>
  /* eslint-disable @typescript-eslint/no-explicit-any */
  const { buildApp } = await from('src/app.ts') as any
  const { defaultConfig } = await from('src/config.ts') as any
  const { openDatabase } = await from('src/db/database.ts') as any
  /* eslint-enable @typescript-eslint/no-explicit-any */
  const handle = await openDatabase(databaseUrl)
  const app = await buildApp({ db: handle.db, config: defaultConfig({ databaseUrl, publicUrl: 'http://calendar.bench', logLevel: 'silent' }), now: () => now })
  await app.ready()
  await (app as unknown as { fillEventDocuments: () => Promise<boolean> }).fillEventDocuments()
  const scenario = realScenarios(samples, 'no-key', now, seed).find((s) => s.key === 'random-filter')
  if (scenario === undefined) throw new Error('no random-filter')
  variants.push({
    name: spec, cpu: [],
    send: async (n) => {
      const answers: string[] = []
      for (let i = 0; i < n; i++) {
        const req = scenario.next()
        const res = await app.inject({ method: req.method, url: req.path })
        if (res.statusCode !== 200 && res.statusCode !== 404) throw new Error(`${spec} ${req.path}: ${res.statusCode} ${res.body.slice(0, 300)}`)
        answers.push(`${req.path} ${res.statusCode} ${res.headers['x-total']} ${res.headers['x-total-pages']} ${res.headers.link} ${res.body}`)
      }
      return answers
    },
    close: async () => { await app.close(); await handle.close() },
  })
}
try {
  const warmed = await Promise.all(variants.map((v) => v.send(warm)))
  let differing = warmed.some((a) => a.join('\n') !== warmed[0]?.join('\n')) ? 1 : 0
  let compared = warm
  for (let r = 0; r < rounds; r++) {
    const order = r % 2 === 0 ? variants : [...variants].reverse()
    const answers = new Map<Variant, string[]>()
    for (const v of order) {
      const cpu = process.cpuUsage()
      answers.set(v, await v.send(batch))
      const used = process.cpuUsage(cpu)
      v.cpu.push((used.user + used.system) / 1000 / batch)
    }
    const first = answers.get(variants[0] as Variant) as string[]
    for (const v of variants.slice(1)) for (const [i, a] of (answers.get(v) as string[]).entries()) if (a !== first[i]) differing++
    compared += batch
  }
  const median = (xs: number[]): number => {
    const s = [...xs].sort((a, b) => a - b)
    return s.length % 2 === 1 ? s[(s.length - 1) / 2] as number : ((s[s.length / 2 - 1] as number) + (s[s.length / 2] as number)) / 2
  }
  const base = variants[0] as Variant
  for (const v of variants) {
    const ratios = v.cpu.map((c, i) => c / (base.cpu[i] as number))
    console.log(`${v.name}: CPU ms a request by round ${v.cpu.map((c) => c.toFixed(3)).join(' ')}; median ${median(v.cpu).toFixed(3)}; median ratio to the first ${median(ratios).toFixed(3)}`)
  }
  console.log(`answers compared: ${compared} a variant, ${differing} differing`)
} finally {
  for (const v of variants) await v.close()
}
