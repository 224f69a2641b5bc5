/**
 * The benchmark's driver keeps what the tail needs to be explained (issue 49): each measured response's time at
 * full resolution and, with a latency prefix, its end on the monotonic clock every process shares (to lay beside a
 * probe in the server), and the client's own delays (its loop's lateness, its collections), which every response
 * time includes.
 */
import { createServer } from 'node:http'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import t from 'tap'
import { runScenario, type Scenario } from '../scripts/bench/driver.js'

interface LatencyFile {
  key: string
  t0: number
  t1: number
  ends: number[]
  ms: number[]
  gcs: Array<[number, number]>
  stalls: Array<[number, number]>
}

t.test('a measured run writes every response\'s end and time, and says how late the client\'s own loop was', async (t) => {
  const server = createServer((_req, res) => { res.end('{}') })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  t.teardown(() => { server.close() })
  const address = server.address()
  if (address === null || typeof address === 'string') throw new Error('no port')
  const dir = mkdtempSync(join(tmpdir(), 'bench-driver-'))
  t.teardown(() => { rmSync(dir, { recursive: true, force: true }) })

  const scenario: Scenario = { key: 'tiny', label: 'tiny', kind: 'single', expect: 200, next: () => ({ method: 'GET', path: '/' }) }
  const before = Number(process.hrtime.bigint()) / 1e6
  const result = await runScenario(scenario, {
    origins: [`http://127.0.0.1:${address.port}`], connections: 2, duration: 1, warmup: 0, timeout: 5, pids: [], latencyPrefix: `${dir}/`,
  })
  const after = Number(process.hrtime.bigint()) / 1e6

  const file = JSON.parse(readFileSync(join(dir, 'tiny.json'), 'utf8')) as LatencyFile
  t.equal(file.key, 'tiny')
  t.ok(file.ms.length > 0, 'responses kept')
  t.equal(file.ends.length, file.ms.length, 'an end for every time')
  t.equal(file.ms.length, result.requests, 'every measured response, as autocannon counted them')
  t.ok(before <= file.t0 && file.t0 < file.t1 && file.t1 <= after, 'the window on the monotonic clock')
  t.ok(file.ends.every((end, i) => end >= file.t0 && end <= file.t1 && end - (file.ms[i] ?? 0) >= file.t0 - 1), 'each response inside the window')
  t.ok(file.ends.every((end, i) => i === 0 || end >= (file.ends[i - 1] ?? 0)), 'ends in the order they came')
  t.ok(file.ms.some((ms) => ms !== Math.round(ms)), 'times finer than whole milliseconds')
  t.ok(Array.isArray(file.gcs) && Array.isArray(file.stalls))
  t.ok(result.clientLoop !== undefined && result.clientLoop.delayMax >= result.clientLoop.delayP99 && result.clientLoop.delayP99 > 0,
    'the client loop\'s delay at 1 ms resolution')
  t.equal(result.clientLoop?.gcCount, file.gcs.length, 'the collections counted are those written')
})
