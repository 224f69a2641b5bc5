/**
 * `npm run respect`: Redocly's Arazzo runner over workflows generated from the served document, with
 * its examples, against a server loaded with the demo calendar (`npm run demo`), with an administrator key (the
 * webhook operations are administrators' only; webhook URLs are not checked against DNS here).
 * A fresh temporary database and server on a free port each run; `redocly generate-arazzo` makes one
 * workflow per operation (66), `redocly respect` runs them in the document's order and checks each
 * answer's status, media type and schema. Prints the summary and every failed workflow; exits 1 when
 * fewer than `--min` (default 66) pass. The reads of an event's occurrences name an event and an occurrence
 * of the demo calendar as it was loaded (`withOccurrenceExamples`): occurrence ids are dates, which the demo
 * makes from today, and the event of the examples (1) is trashed by the workflow of `DELETE /events/{id}`,
 * which runs before them. `--keep <dir>` keeps the document, the workflows and the JSON
 * report there.
 */
import { execFile } from 'node:child_process'
import { mkdtempSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { buildApp } from '../src/app.js'
import { defaultConfig } from '../src/config.js'
import { openDatabase } from '../src/db/database.js'
import { generateKey } from '../src/lib/api-keys.js'
import { formatUtc } from '../src/lib/dates.js'
import { createUserWithKey } from '../src/repositories/users.js'
import { withTransaction } from '../src/db/unit-of-work.js'
import { loadDemo } from './demo.js'
import { freePort } from './free-port.js'

const root = new URL('..', import.meta.url).pathname
const redocly = join(root, 'node_modules/.bin/redocly')

function option(name: string): string | undefined {
  const index = process.argv.indexOf(`--${name}`)
  return index === -1 ? undefined : process.argv[index + 1]
}

function run(args: string[], cwd: string): Promise<{ code: number; output: string }> {
  return new Promise((resolve) => {
    execFile(redocly, args, { cwd, env: { ...process.env, REDOCLY_TELEMETRY: 'off', NO_COLOR: '1' }, timeout: 300_000, maxBuffer: 64 * 1024 * 1024 },
      (error, stdout, stderr) => resolve({ code: error === null ? 0 : typeof error.code === 'number' ? error.code : 1, output: `${stdout}${stderr}` }))
  })
}

interface Report {
  executedWorkflows?: Array<{ workflowId?: string; status?: string; executedSteps?: Array<{ stepId?: string; response?: { statusCode?: number }; checks?: Array<{ name?: string; passed?: boolean; message?: string }> }> }>
}

type Json = Record<string, unknown>

/**
 * The document with the examples of the occurrence reads (`/events/{id}/occurrences…`) naming a published
 * event of the demo other than 1, and its first occurrence.
 */
async function withOccurrenceExamples(base: string, document: Json): Promise<Json> {
  const api = `${base}/calendar/events/v1`
  const listed = await (await fetch(`${api}/events?per_page=50`)).json() as { events: Array<{ id: number }> }
  const id = listed.events.find((e) => e.id !== 1)?.id
  if (id === undefined) throw new Error('the demo calendar lists no event but 1')
  const occurrences = await (await fetch(`${api}/events/${id}/occurrences?per_page=1`)).json() as { occurrences: Array<{ occurrence: { id: string } }> }
  const occurrence = occurrences.occurrences[0]?.occurrence.id
  if (occurrence === undefined) throw new Error(`event ${id} of the demo calendar has no occurrence`)
  const paths = document.paths as Record<string, Record<string, { parameters?: unknown[] }>>
  for (const [path, item] of Object.entries(paths)) {
    if (!path.startsWith('/events/{id}/occurrences')) continue
    const get = item.get
    if (get?.parameters === undefined) continue
    const shared = ((document.components as Json | undefined)?.parameters ?? {}) as Record<string, Json>
    get.parameters = get.parameters.map((parameter) => {
      const ref = (parameter as Json).$ref
      const p = typeof ref === 'string' ? shared[ref.replace('#/components/parameters/', '')] ?? {} : parameter as Json
      if (p.in !== 'path') return parameter
      const { examples: _examples, ...rest } = p
      return { ...rest, example: p.name === 'id' ? id : occurrence }
    })
  }
  return document
}

/**
 * The document with the examples of the writes of one occurrence (`PATCH`/`PUT`/`POST` and `DELETE
 * /events/{id}/occurrences/{occurrence}`, `POST …/split`) naming a weekly series made for them here (the demo's
 * events are single): its second occurrence is changed, its third cancelled, its fourth split off, in the
 * document's order.
 */
async function withOccurrenceWriteExamples(base: string, authorization: string, document: Json): Promise<Json> {
  const api = `${base}/calendar/events/v1`
  const day = new Date(Date.now() + 7 * 86_400_000).toISOString().slice(0, 10)
  const created = await fetch(`${api}/events`, {
    method: 'POST', headers: { authorization, 'content-type': 'application/json' },
    body: JSON.stringify({ title: 'Weekly Jam', start_date: `${day} 19:00`, end_date: `${day} 21:00`, timezone: 'UTC', recurrence: { rule: 'FREQ=WEEKLY;COUNT=10' } }),
  })
  const id = (await created.json() as { id?: number }).id
  if (id === undefined) throw new Error(`the series for the occurrence writes was not created (${created.status})`)
  const listed = await (await fetch(`${api}/events/${id}/occurrences?per_page=4`)).json() as { occurrences: Array<{ occurrence: { id: string } }> }
  const ids = listed.occurrences.map((o) => o.occurrence.id)
  const paths = document.paths as Record<string, Record<string, { parameters?: unknown[] }>>
  const shared = ((document.components as Json | undefined)?.parameters ?? {}) as Record<string, Json>
  const name = (method: string, path: string): string | undefined => path.endsWith('/split') ? ids[3] : method === 'delete' ? ids[2] : ids[1]
  for (const [path, item] of Object.entries(paths)) {
    if (!path.startsWith('/events/{id}/occurrences/{occurrence}')) continue
    for (const [method, operation] of Object.entries(item)) {
      if (method === 'get' || operation.parameters === undefined) continue
      operation.parameters = operation.parameters.map((parameter) => {
        const ref = (parameter as Json).$ref
        const p = typeof ref === 'string' ? shared[ref.replace('#/components/parameters/', '')] ?? {} : parameter as Json
        if (p.in !== 'path') return parameter
        const { examples: _examples, ...rest } = p
        return { ...rest, example: p.name === 'id' ? id : name(method, path) }
      })
    }
  }
  return document
}

async function main(): Promise<number> {
  const minimum = Number(option('min') ?? '66')
  const keep = option('keep')
  const dir = keep ?? mkdtempSync(join(tmpdir(), 'respect-'))
  mkdirSync(dir, { recursive: true })
  const databaseUrl = join(dir, 'calendar.db')
  rmSync(databaseUrl, { force: true })
  const database = await openDatabase(databaseUrl)
  const port = await freePort()
  const base = `http://127.0.0.1:${port}`
  // Webhook examples name a partner's host, which this machine need not resolve: no address check.
  const config = defaultConfig({ port, publicUrl: base, databaseUrl, webhooks: { ...defaultConfig().webhooks, allowPrivate: true } })
  const app = await buildApp({ db: database.db, config })
  try {
    const now = new Date()
    const key = generateKey()
    await withTransaction(database.db, (trx) => createUserWithKey(trx, 'administrator', key, formatUtc(now), 'respect'))
    const loaded = await loadDemo(app, `Bearer ${key}`, config, now)
    await app.listen({ host: '127.0.0.1', port })
    const doc = await (await fetch(`${base}/calendar/events/v1/doc`)).text()
    const document = await withOccurrenceWriteExamples(base, `Bearer ${key}`, await withOccurrenceExamples(base, JSON.parse(doc) as Json))
    writeFileSync(join(dir, 'openapi.json'), JSON.stringify(document))
    const generated = await run(['generate-arazzo', 'openapi.json', '-o', 'auto.arazzo.yaml'], dir)
    if (generated.code !== 0) throw new Error(`generate-arazzo failed:\n${generated.output}`)
    const respect = await run(['respect', 'auto.arazzo.yaml', '--input', `bearerAuth=${key}`, '--json-output', 'respect.json'], dir)
    const report = JSON.parse(readFileSync(join(dir, 'respect.json'), 'utf8')) as { files?: Record<string, Report> }
    const workflows = Object.values(report.files ?? {}).flatMap((file) => file.executedWorkflows ?? [])
    const failed = workflows.filter((w) => w.status !== 'success')
    const passed = workflows.length - failed.length
    const checks = workflows.flatMap((w) => (w.executedSteps ?? []).flatMap((step) => step.checks ?? []))
    process.stdout.write(`redocly respect against the demo calendar (${loaded.total} events): ${workflows.length} workflows, ${passed} passed, ` +
      `${failed.length} failed; ${checks.filter((c) => c.passed === true).length} of ${checks.length} checks passed\n`)
    for (const workflow of failed) {
      const problems = (workflow.executedSteps ?? []).flatMap((step) => (step.checks ?? []).filter((c) => c.passed === false).map((c) => `${c.name ?? ''}: ${(c.message ?? '').split('\n')[0] ?? ''}`))
      process.stdout.write(`  failed: ${workflow.workflowId ?? '?'} (status ${String(workflow.executedSteps?.[0]?.response?.statusCode ?? '?')}) ${problems.join('; ')}\n`)
    }
    if (workflows.length === 0) process.stdout.write(respect.output)
    return passed >= minimum && workflows.length > 0 ? 0 : 1
  } finally {
    await app.close()
    await database.close()
    if (keep === undefined) rmSync(dir, { recursive: true, force: true })
  }
}

main().then((code) => process.exit(code), (error: unknown) => {
  process.stderr.write(`${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`)
  process.exit(1)
})
