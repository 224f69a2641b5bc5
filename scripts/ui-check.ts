/**
 * Opens Swagger UI in headless Chromium against a running server, checks that it renders the 3.1
 * document with every operation, tries GET /categories through "Try it out", and saves a screenshot.
 * Usage: `node --import tsx scripts/ui-check.ts [base-url] [screenshot.png]` (Debian's chromium).
 */
import { chromium } from 'playwright-core'

const base = process.argv[2] ?? 'http://127.0.0.1:3000'
const shot = process.argv[3] ?? 'swagger-ui.png'
const browser = await chromium.launch({
  executablePath: '/usr/bin/chromium',
  args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run', '--disable-quic'],
})
try {
  const page = await browser.newPage({ viewport: { width: 1280, height: 1000 } })
  const errors: string[] = []
  page.on('pageerror', (e) => errors.push(e.message))
  await page.goto(`${base}/calendar/events/v1/ui`, { waitUntil: 'networkidle' })
  await page.waitForSelector('.opblock-summary')
  const title = (await page.locator('.info .title').first().textContent()) ?? ''
  const operations = await page.locator('.opblock-summary-path').count()
  const servers = await page.locator('.servers select option').allTextContents()
  const block = page.locator('.opblock-get', { has: page.locator('.opblock-summary-path[data-path="/categories"]') }).first()
  await block.locator('.opblock-summary').click()
  await block.getByRole('button', { name: 'Try it out' }).click()
  await block.getByRole('button', { name: 'Execute' }).click()
  await block.locator('.live-responses-table tr.response .response-col_status').first().waitFor()
  const status = (await block.locator('.live-responses-table tr.response .response-col_status').first().textContent())?.trim()
  await page.screenshot({ path: shot })
  process.stdout.write(`${JSON.stringify({ title, operations, servers, tryItOutStatus: status, pageErrors: errors }, null, 2)}\n`)
} finally {
  await browser.close()
}
