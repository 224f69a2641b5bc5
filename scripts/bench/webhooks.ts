/**
 * The webhook benchmark (`npm run bench:webhooks`): what subscriptions cost writes, and how fast
 * deliveries go out. One API server process over a fresh SQLite file (or DATABASE_URL), a receiver on
 * loopback in this process answering 204, and writers (PATCH of tags, `--writers` at once) for
 * `--duration` seconds per phase, in `--rounds` rounds (default 3) so that the machine's drift falls on
 * both alike:
 *   1. no subscription: write latency (p50, p99) and writes per second;
 *   2. five new subscriptions to the receiver: the same, while the dispatcher delivers; they are deleted
 *      with what they still owe before the next round, except in the last;
 *   3. deliveries per second, in the last round: every delivery of its phase 2 received, from its start
 *      to the last one, and how many arrived while the writers ran (the dispatcher gives way to a
 *      saturated node).
 * The latency figures pool every round; the p50 change is also given per round.
 * Prints a markdown table. Loopback only; every wait is bounded.
 *
 *   node --import tsx scripts/bench/webhooks.ts [--duration S] [--writers N] [--rounds N]
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
import { cpuSecondsOf, freePort, hasTaskset, pinSelf, startProcess, stopProcess } from './processes.js'

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
  const rounds = option('rounds', 3)
  const dir = mkdtempSync(join(tmpdir(), 'calendar-webhook-bench-'))
  const url = process.env.DATABASE_URL ?? join(dir, 'calendar.db')
  const key = generateKey()
  const handle = await openDatabase(url)
  await withTransaction(handle.db, (trx) => createUserWithKey(trx, 'administrator', key, '2026-01-01 00:00:00'))
  await handle.close()

  // Deliveries by path (each round's subscriptions have their own), and when the last one came.
  const received = new Map<string, number>()
  const lastReceived = new Map<string, number>()
  const receivedAt = (path: string) => received.get(path) ?? 0
  const receiver = createServer((req, res) => {
    req.resume()
    req.on('end', () => {
      const path = req.url ?? ''
      received.set(path, receivedAt(path) + 1)
      lastReceived.set(path, performance.now())
      res.writeHead(204).end()
    })
  })
  await new Promise<void>((done) => receiver.listen(0, '127.0.0.1', done))
  const hookUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}`

  const port = await freePort()
  // The server on one core, writers and receiver on the other, as in `npm run bench`.
  const pinned = hasTaskset() && pinSelf(1)
  const server = await startProcess({
    name: 'api', cwd: ROOT, ...(pinned ? { core: 0 } : {}), args: ['--import', 'tsx', 'src/server.ts'], port, readyPath: '/healthz',
    env: { DATABASE_URL: url, PORT: String(port), HOST: '127.0.0.1', LOG_LEVEL: 'warn', CALENDAR_WEBHOOK_ALLOW_PRIVATE: 'true' },
  })
  const api = `${server.origin}${PREFIX}`
  const call = async (method: string, path: string, body: unknown) => {
    const res = await fetch(`${api}${path}`, { method, headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: JSON.stringify(body), signal: AbortSignal.timeout(10_000) })
    const json = (res.status === 204 ? {} : await res.json()) as { id: number }
    if (res.status >= 300) throw new Error(`${method} ${path}: ${res.status}`)
    return json
  }
  try {
    const tags = await Promise.all(Array.from({ length: writers }, (_v, i) => call('POST', '/tags', { name: `Bench tag ${i}` })))
    /** Writers for `duration` seconds: latencies in ms. */
    const cpu = { none: 0, five: 0 }
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
    // Rounds alternate: writes with no subscription, then with five (fresh ones, to a path of their own),
    // which are deleted with what they still owe before the next round, so that the machine's drift
    // falls on both alike. The last round's five are kept, and their deliveries counted to the last.
    const none: number[] = []
    const five: number[] = []
    const changes: number[] = []
    let last = { received: 0, during: 0, expected: 0, seconds: 0 }
    for (let round = 1; round <= rounds; round++) {
      let cpuBefore = cpuSecondsOf(server.pid)
      const without = await phase()
      cpu.none += cpuSecondsOf(server.pid) - cpuBefore
      const path = `/hook/${round}`
      const hooks = []
      for (let i = 0; i < 5; i++) hooks.push(await call('POST', '/webhooks', { url: `${hookUrl}${path}`, events: ['*'] }))
      const startedAt = performance.now()
      cpuBefore = cpuSecondsOf(server.pid)
      const withFive = await phase()
      cpu.five += cpuSecondsOf(server.pid) - cpuBefore
      const during = receivedAt(path)
      changes.push(percentile(withFive, 0.5) / percentile(without, 0.5) - 1)
      none.push(...without)
      five.push(...withFive)
      if (round < rounds) {
        for (const hook of hooks) await call('DELETE', `/webhooks/${hook.id}`, undefined)
        continue
      }
      const expected = withFive.length * 5
      const deadline = performance.now() + 120_000
      while (receivedAt(path) < expected && performance.now() < deadline) await new Promise((done) => setTimeout(done, 50))
      last = { received: receivedAt(path), during, expected, seconds: ((lastReceived.get(path) ?? startedAt) - startedAt) / 1000 }
    }
    none.sort((a, b) => a - b)
    five.sort((a, b) => a - b)
    const row = (name: string, l: number[], seconds: number) => `| ${name} | ${(l.length / duration / rounds).toFixed(0)} | ${percentile(l, 0.5).toFixed(2)} | ${percentile(l, 0.99).toFixed(2)} | ${(seconds * 1e6 / l.length).toFixed(0)} |`
    const pct = (x: number) => `${x >= 0 ? '+' : ''}${(x * 100).toFixed(1)} %`
    const after = last.received - last.during
    process.stdout.write([
      `| writes (PATCH /tags, ${writers} at once, ${rounds} rounds of ${duration} s each${pinned ? '; server on core 0' : ''}) | writes/s | p50 ms | p99 ms | server CPU µs per write |`,
      '| --- | --- | --- | --- | --- |',
      row('0 subscriptions', none, cpu.none), row('5 subscriptions', five, cpu.five),
      '', `p50 change with 5 subscriptions: ${pct(percentile(five, 0.5) / percentile(none, 0.5) - 1)} over all rounds; per round ${changes.map(pct).join(', ')}`,
      `deliveries of the last round: ${last.received} of ${last.expected} in ${last.seconds.toFixed(1)} s = ${(last.received / last.seconds).toFixed(0)} deliveries/s (while writing and after);`
        + ` ${last.during} while writing (${(last.during / duration).toFixed(0)}/s, the node saturated), the rest at ${(after / Math.max(0.001, last.seconds - duration)).toFixed(0)}/s after`,
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
