/**
 * A network's round trip between the API and PostgreSQL, on one machine (issue 49): a TCP proxy that forwards
 * what the client sends at once and what the server answers `delay` ms after it read it, so that a statement's
 * round trip costs `delay` ms more (as across a real network; pipelined statements share one). Order is kept
 * (one delay for all, sent in the order read). Node's timers count whole milliseconds, so the proxy waits in a
 * worker thread instead (`Atomics.wait`, which takes fractions of a millisecond and sleeps, no spinning) and is
 * woken by its message; the wake-up's own lateness (0.1-0.3 ms on a loaded machine) is measured as it goes and
 * taken off the next waits (`lead`). It runs in a process of its own, so that the benchmark's client does not
 * delay it. Measured with a bare `select 1` (2026-12-06, host CPU pressure about 25 %): see docs/performance.md.
 *
 *   node --import tsx scripts/bench/delay-proxy.ts <postgres URL> <delay ms a round trip>
 *     prints `listening <port>`, then forwards 127.0.0.1:<port> to the URL's host and port until killed.
 *
 * `startDelayProxy(url, delayMs)` starts it and answers the URL through it (used by `npm run bench --
 * --pg-delay-ms D` for the API servers' DATABASE_URL).
 */
import { spawn } from 'node:child_process'
import { once } from 'node:events'
import { createConnection, createServer, type Socket } from 'node:net'
import { fileURLToPath } from 'node:url'
import { Worker } from 'node:worker_threads'

/** The worker: sleeps until the deadline it is given (shared[1] as a Float64 of `performance.now()` ms), then says so. */
const SLEEPER = `
const { parentPort, workerData } = require('node:worker_threads')
const flags = new Int32Array(workerData, 0, 2)
const deadline = new Float64Array(workerData, 8, 1)
for (;;) {
  Atomics.wait(flags, 0, 0)
  const left = deadline[0] - performance.now()
  if (left > 0) Atomics.wait(flags, 1, 0, left)
  Atomics.store(flags, 0, 0)
  parentPort.postMessage(0)
}`

interface Pending {
  due: number
  to: Socket
  chunk: Buffer
}

/** Forwards 127.0.0.1:<port> to `host:port`, each chunk `oneWayMs` late; resolves with the port it listens on. */
export async function runProxy(host: string, port: number, delayMs: number): Promise<number> {
  const shared = new SharedArrayBuffer(16)
  const flags = new Int32Array(shared, 0, 2)
  const deadline = new Float64Array(shared, 8, 1)
  const sleeper = new Worker(SLEEPER, { eval: true, workerData: shared })
  sleeper.unref()
  const queue: Pending[] = []
  let head = 0
  let armed = false
  // How late a wake-up comes (a moving average), taken off the next waits.
  let lead = 0
  const arm = () => {
    if (armed || head >= queue.length) return
    armed = true
    deadline[0] = (queue[head] as Pending).due - lead
    Atomics.store(flags, 0, 1)
    Atomics.notify(flags, 0)
  }
  const flush = () => {
    armed = false
    const now = performance.now()
    if (head < queue.length) lead = Math.max(0, Math.min(delayMs / 2, lead + 0.1 * (now - ((queue[head] as Pending).due - lead) - lead)))
    // What is due within the lead (at least 20 µs) goes now: woken that much early, on average on time.
    while (head < queue.length && (queue[head] as Pending).due <= now + Math.max(0.02, lead)) {
      const { to, chunk } = queue[head] as Pending
      queue[head++] = undefined as unknown as Pending
      if (!to.destroyed) to.write(chunk)
    }
    if (head > 1024 && head * 2 > queue.length) {
      queue.splice(0, head)
      head = 0
    }
    arm()
  }
  sleeper.on('message', flush)
  const later = (to: Socket) => (chunk: Buffer) => {
    if (delayMs <= 0) {
      to.write(chunk)
      return
    }
    queue.push({ due: performance.now() + delayMs, to, chunk })
    arm()
  }
  const server = createServer({ noDelay: true }, (client) => {
    const upstream = createConnection({ host, port, noDelay: true })
    client.on('data', (chunk: Buffer) => upstream.write(chunk))
    upstream.on('data', later(client))
    const close = () => {
      client.destroy()
      upstream.destroy()
    }
    client.on('close', close).on('error', close)
    upstream.on('close', close).on('error', close)
  })
  server.listen(0, '127.0.0.1')
  await once(server, 'listening')
  return (server.address() as { port: number }).port
}

/** Starts the proxy in a process of its own for `url`'s server; answers `url` through it, and a way to stop it. */
export async function startDelayProxy(url: string, delayMs: number): Promise<{ url: string; pid: number; stop: () => void }> {
  const child = spawn(process.execPath, ['--import', 'tsx', fileURLToPath(import.meta.url), url, String(delayMs)], { stdio: ['ignore', 'pipe', 'inherit'] })
  const stop = () => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL')
  }
  process.on('exit', stop)
  const port = await new Promise<number>((resolve, reject) => {
    let out = ''
    child.stdout.on('data', (data: Buffer) => {
      out += data.toString()
      const match = /listening (\d+)/.exec(out)
      if (match !== null) resolve(Number(match[1]))
    })
    child.on('exit', (code) => reject(new Error(`the delay proxy exited (${code}) before listening`)))
  })
  // Killed when this process exits (above): it does not keep this one running.
  child.stdout.destroy()
  child.unref()
  const through = new URL(url)
  through.hostname = '127.0.0.1'
  through.port = String(port)
  return { url: through.toString(), pid: child.pid as number, stop }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const [raw, delay] = process.argv.slice(2)
  if (raw === undefined || delay === undefined || !(Number(delay) >= 0)) {
    process.stderr.write('usage: node --import tsx scripts/bench/delay-proxy.ts <postgres URL> <delay ms a round trip>\n')
    process.exit(2)
  }
  const target = new URL(raw)
  const port = await runProxy(target.hostname || '127.0.0.1', Number(target.port || 5432), Number(delay))
  process.stdout.write(`listening ${port}\n`)
}

/** The mean round trip of a bare statement (`select 1`, one connection, 200 after 20 unmeasured) to `url`'s server. */
export async function roundTripMs(url: string): Promise<number> {
  const { default: pg } = await import('pg')
  const client = new pg.Client({ connectionString: url })
  await client.connect()
  try {
    for (let i = 0; i < 20; i++) await client.query('select 1')
    const started = performance.now()
    for (let i = 0; i < 200; i++) await client.query('select 1')
    return (performance.now() - started) / 200
  } finally {
    await client.end()
  }
}
