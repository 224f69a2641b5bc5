/**
 * `npm run ui-check`: Swagger UI in headless Chromium, as a newcomer uses it. Starts a fresh server
 * (empty in-memory database, an editor key, a free port) unless `--url` names a running one, then:
 * checks the page's title and that the 3.1 document renders every operation with no page error;
 * authorizes with the key; runs "Try it out" with the prefilled defaults on POST /categories,
 * POST /events (JSON, then as a form) and GET /events, in that order (expected 201, 201, 201, 200);
 * checks that a public read shows no lock; opens the German page (`/ui?ml_language=de`) and checks
 * that `ml_language` is prefilled with `de`. Saves a screenshot of each step in `--out` (default `ui-check/`), prints a
 * JSON report and exits 1 if anything differs.
 *
 * The browser is `--browser <path>`, else `CHROMIUM_PATH`, else the first of the usual Chromium paths
 * that exists (Debian: `apt-get install chromium fonts-liberation`; playwright's own download is not used).
 */
import { existsSync, mkdirSync } from 'node:fs'
import { join } from 'node:path'
import { chromium, type Locator, type Page } from 'playwright-core'
import { buildApp } from '../src/app.js'
import { defaultConfig } from '../src/config.js'
import { openDatabase } from '../src/db/database.js'
import { generateKey } from '../src/lib/api-keys.js'
import { createUserWithKey } from '../src/repositories/users.js'
import { withTransaction } from '../src/db/unit-of-work.js'
import { freePort } from './free-port.js'

const BROWSERS = ['/usr/bin/chromium', '/usr/bin/chromium-browser', '/usr/bin/google-chrome', '/usr/bin/google-chrome-stable']
const FORM = 'application/x-www-form-urlencoded'
const STEPS: Array<{ method: string; path: string; expected: string; media?: string }> = [
  { method: 'post', path: '/categories', expected: '201' },
  { method: 'post', path: '/events', expected: '201' },
  { method: 'post', path: '/events', expected: '201', media: FORM },
  { method: 'get', path: '/events', expected: '200' },
]

function option(name: string): string | undefined {
  const index = process.argv.indexOf(`--${name}`)
  return index === -1 ? undefined : process.argv[index + 1]
}

export function browserPath(): string {
  const chosen = option('browser') ?? process.env.CHROMIUM_PATH ?? BROWSERS.find((path) => existsSync(path))
  if (chosen === undefined || !existsSync(chosen)) {
    throw new Error(`no Chromium found (tried ${chosen ?? BROWSERS.join(', ')}): pass --browser <path> or set CHROMIUM_PATH`)
  }
  return chosen
}

/** A fresh server on a free loopback port, with an editor key; or the one at `--url` (key from `--key`). */
async function server(): Promise<{ base: string; key: string | undefined; close(): Promise<void> }> {
  const url = option('url')
  if (url !== undefined) return { base: url.replace(/\/$/, ''), key: option('key'), close: async () => {} }
  const database = await openDatabase(':memory:')
  const key = generateKey()
  await withTransaction(database.db, (trx) => createUserWithKey(trx, 'editor', key, '2026-01-01 00:00:00', 'ui-check'))
  const port = await freePort()
  const base = `http://127.0.0.1:${port}`
  const app = await buildApp({ db: database.db, config: defaultConfig({ port, publicUrl: base }) })
  await app.listen({ host: '127.0.0.1', port })
  return { base, key, close: async () => { await app.close(); await database.close() } }
}

function operation(page: Page, method: string, path: string): Locator {
  return page.locator(`.opblock-${method}`, { has: page.locator(`.opblock-summary-path[data-path="${path}"]`) }).first()
}

async function tryItOut(page: Page, method: string, path: string, media?: string): Promise<{ status: string; body: string }> {
  const block = operation(page, method, path)
  if (!(await block.getByRole('button', { name: 'Execute' }).isVisible())) {
    await block.locator('.opblock-summary').click()
    await block.getByRole('button', { name: 'Try it out' }).click()
  }
  if (media !== undefined) await block.locator('.body-param-content-type select').selectOption(media)
  await block.getByRole('button', { name: 'Execute' }).click()
  const row = block.locator('.live-responses-table tr.response').first()
  await row.locator('.response-col_status').waitFor({ timeout: 15_000 })
  const status = ((await row.locator('.response-col_status').textContent()) ?? '').trim()
  const body = ((await block.locator('.responses-inner .highlight-code').first().textContent()) ?? '').trim()
  return { status, body }
}

async function main(): Promise<void> {
  const out = option('out') ?? 'ui-check'
  mkdirSync(out, { recursive: true })
  const target = await server()
  const browser = await chromium.launch({
    executablePath: browserPath(),
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run', '--disable-quic'],
  })
  const report: Record<string, unknown> = { server: target.base }
  const problems: string[] = []
  try {
    const page = await browser.newPage({ viewport: { width: 1280, height: 1000 } })
    const errors: string[] = []
    page.on('pageerror', (e) => errors.push(e.message))
    await page.goto(`${target.base}/calendar/events/v1/ui`, { waitUntil: 'networkidle' })
    await page.waitForSelector('.opblock-summary')
    report.pageTitle = await page.title()
    report.title = ((await page.locator('.info .title').first().textContent()) ?? '').trim()
    report.operations = await page.locator('.opblock-summary-path').count()
    report.topbar = await page.locator('.topbar').count()
    await page.screenshot({ path: join(out, '0-overview.png') })
    // Every operation of the served document, as many as its paths declare.
    const doc = await (await fetch(`${target.base}/calendar/events/v1/doc`)).json() as { paths: Record<string, Record<string, unknown>> }
    const declared = Object.values(doc.paths).flatMap((item) => Object.keys(item).filter((k) => ['get', 'put', 'post', 'patch', 'delete'].includes(k))).length
    if (report.operations !== declared) problems.push(`expected ${declared} operations, saw ${String(report.operations)}`)
    if (report.topbar !== 0) problems.push('the framework top bar is shown')

    if (target.key !== undefined) {
      await page.locator('.auth-wrapper .authorize').click()
      await page.locator('.modal-ux input').first().fill(target.key)
      await page.locator('.modal-ux .auth-btn-wrapper .modal-btn.authorize').click()
      await page.locator('.modal-ux .auth-btn-wrapper .btn-done').click()
    }
    const steps: Array<Record<string, string>> = []
    for (const [index, step] of STEPS.entries()) {
      const { status, body } = await tryItOut(page, step.method, step.path, step.media)
      const name = `${step.method.toUpperCase()} ${step.path}${step.media === undefined ? '' : ` (${step.media})`}`
      steps.push({ operation: name, status, expected: step.expected, body: body.slice(0, 160) })
      if (status !== step.expected) problems.push(`${name}: ${status}, expected ${step.expected}: ${body.slice(0, 300)}`)
      const block = operation(page, step.method, step.path)
      // The operation from its summary down to the live answer (the documented responses below it are long).
      const top = await block.boundingBox()
      const answer = await block.locator('.live-responses-table').first().boundingBox()
      if (top !== null && answer !== null) {
        // Bounding boxes are relative to the viewport; a full-page clip is in page coordinates.
        const scrollY = Number(await page.evaluate('window.scrollY'))
        const height = Math.min(answer.y + Math.min(answer.height, 500) - top.y, 2400)
        await page.screenshot({ path: join(out, `${index + 1}-${step.method}-${step.path.slice(1)}${step.media === undefined ? '' : '-form'}.png`), fullPage: true, clip: { x: top.x, y: top.y + scrollY, width: top.width, height } })
      }
    }
    report.tryItOut = steps
    // A read that needs no key shows no lock; a write shows one.
    report.locks = { getEvents: await operation(page, 'get', '/events').locator('.authorization__btn').count(), postEvents: await operation(page, 'post', '/events').locator('.authorization__btn').count() }
    if (JSON.stringify(report.locks) !== JSON.stringify({ getEvents: 0, postEvents: 1 })) problems.push(`locks: ${JSON.stringify(report.locks)}`)

    const german = await browser.newPage({ viewport: { width: 1280, height: 800 } })
    german.on('pageerror', (e) => errors.push(e.message))
    await german.goto(`${target.base}/calendar/events/v1/ui?ml_language=de`, { waitUntil: 'networkidle' })
    await german.waitForSelector('.opblock-summary', { timeout: 15_000 })
    report.germanSummary = ((await german.locator('.opblock-summary-description').first().textContent()) ?? '').trim()
    const list = operation(german, 'get', '/events')
    await list.locator('.opblock-summary').click()
    await list.getByRole('button', { name: 'Try it out' }).click()
    report.germanLanguage = await list.locator('tr[data-param-name="ml_language"] select').inputValue()
    if (report.germanLanguage !== 'de') problems.push(`the German page prefills ml_language=${String(report.germanLanguage)}`)
    await german.screenshot({ path: join(out, '4-german.png') })
    report.pageErrors = errors
    if (errors.length > 0) problems.push(`page errors: ${errors.join('; ')}`)
  } finally {
    await browser.close()
    await target.close()
  }
  report.problems = problems
  process.stdout.write(`${JSON.stringify(report, null, 2)}\n`)
  process.exit(problems.length === 0 ? 0 : 1)
}

main().catch((error: unknown) => {
  process.stderr.write(`${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`)
  process.exit(1)
})
