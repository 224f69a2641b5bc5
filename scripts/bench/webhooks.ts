/**
 * The webhook benchmark (`npm run bench:webhooks`): what subscriptions cost writes, and how fast
 * deliveries go out. One API server process over a fresh SQLite file (or DATABASE_URL), a receiver on
 * loopback in this process answering 204, and writers (PATCH of tags, `--writers` at once) for
 * `--duration` seconds per phase:
 *   1. no subscription: write latency (p50, p99) and writes per second;
 *   2. five subscriptions to the receiver: the same, while the dispatcher delivers;
 *   3. deliveries per second: every delivery of phase 2 received, from its start to the last one, and
 *      how many arrived while the writers ran (the dispatcher gives way to a saturated node).
 * Prints a markdown table. Loopback only; every wait is bounded.
 *
 *   node --import tsx scripts/bench/webhooks.ts [--duration S] [--writers N]
 */
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { openDatabase } from '../../src/db/database.js'
import { withTransaction } from '../../src/db/unit-of-work.js'
import { generateKey } from '../../src/lib/api-keys.js'
import { createUserWithKey } from '../../src/repositories/users.js'
import { freePort, startProcess, stopProcess } from './processes.js'

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..')
const PREFIX = '/calendar/events/v1'

function option(name: string, fallback: number): number {
  const at = process.argv.indexOf(`--${name}`)
  const value = at < 0 ? fallback : Number(process.argv[at + 1])
  if (!Number.isInteger(value) || value < 1 || value > 600) throw new Error(`--${name} must be an integer from 1 to 600`)
  return value
}

const percentile = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))] ?? NaN

async function main(): Promise<void> {
  const duration = option('duration', 5)
  const writers = option('writers', 4)
  const dir = mkdtempSync(join(tmpdir(), 'calendar-webhook-bench-'))
  const url = process.env.DATABASE_URL ?? join(dir, 'calendar.db')
  const key = generateKey()
  const handle = await openDatabase(url)
  await withTransaction(handle.db, (trx) => createUserWithKey(trx, 'administrator', key, '2026-01-01 00:00:00'))
  await handle.close()

  let received = 0
  let lastReceivedAt = 0
  const receiver = createServer((req, res) => {
    req.resume()
    req.on('end', () => {
      received += 1
      lastReceivedAt = performance.now()
      res.writeHead(204).end()
    })
  })
  await new Promise<void>((done) => receiver.listen(0, '127.0.0.1', done))
  const hookUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`

  const port = await freePort()
  const server = await startProcess({
    name: 'api', cwd: ROOT, args: ['--import', 'tsx', 'src/server.ts'], port, readyPath: '/healthz',
    env: { DATABASE_URL: url, PORT: String(port), HOST: '127.0.0.1', LOG_LEVEL: 'warn', CALENDAR_WEBHOOK_ALLOW_PRIVATE: 'true' },
  })
  const api = `${server.origin}${PREFIX}`
  const call = async (method: string, path: string, body: unknown) => {
    const res = await fetch(`${api}${path}`, { method, headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: JSON.stringify(body), signal: AbortSignal.timeout(10_000) })
    const json = await res.json() as { id: number }
    if (res.status >= 300) throw new Error(`${method} ${path}: ${res.status}`)
    return json
  }
  try {
    const tags = await Promise.all(Array.from({ length: writers }, (_v, i) => call('POST', '/tags', { name: `Bench tag ${i}` })))
    /** Writers for `duration` seconds: latencies in ms. */
    const phase = async (): Promise<number[]> => {
      const latencies: number[] = []
      const end = performance.now() + duration * 1000
      await Promise.all(tags.map(async (tag, w) => {
        for (let i = 0; performance.now() < end; i++) {
          const started = performance.now()
          await call('PATCH', `/tags/${tag.id}`, { description: `writer ${w} step ${i}` })
          latencies.push(performance.now() - started)
        }
      }))
      return latencies.sort((a, b) => a - b)
    }
    await phase() // warm-up
    const none = await phase()
    for (let i = 0; i < 5; i++) await call('POST', '/webhooks', { url: hookUrl, events: ['*'] })
    const before = received
    const startedAt = performance.now()
    const five = await phase()
    const duringWrites = received - before
    const expected = before + five.length * 5
    const deadline = performance.now() + 120_000
    while (received < expected && performance.now() < deadline) await new Promise((done) => setTimeout(done, 50))
    const seconds = (lastReceivedAt - startedAt) / 1000
    const row = (name: string, l: number[]) => `| ${name} | ${(l.length / duration).toFixed(0)} | ${percentile(l, 0.5).toFixed(2)} | ${percentile(l, 0.99).toFixed(2)} |`
    process.stdout.write([
      `| writes (PATCH /tags, ${writers} at once, ${duration} s) | writes/s | p50 ms | p99 ms |`, '| --- | --- | --- | --- |',
      row('0 subscriptions', none), row('5 subscriptions', five),
      '', `p50 change with 5 subscriptions: ${((percentile(five, 0.5) / percentile(none, 0.5) - 1) * 100).toFixed(1)} %`,
      `deliveries: ${received - before} of ${expected - before} in ${seconds.toFixed(1)} s = ${((received - before) / seconds).toFixed(0)} deliveries/s (while writing and after);`
        + ` ${duringWrites} while writing (${(duringWrites / duration).toFixed(0)}/s, the node saturated), the rest at ${((received - before - duringWrites) / Math.max(0.001, (lastReceivedAt - startedAt) / 1000 - duration)).toFixed(0)}/s after`,
      '',
    ].join('\n'))
  } finally {
    await stopProcess(server)
    receiver.close()
    rmSync(dir, { recursive: true, force: true })
  }
}

main().catch((error: unknown) => {
  process.stderr.write(`${error instanceof Error ? error.stack ?? error.message : String(error)}\n`)
  process.exit(1)
})
