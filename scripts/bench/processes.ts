/**
 * Child processes of the benchmark (the API server and the ceiling): started by this script, each in
 * its own process, optionally pinned to one core; readiness by polling; stopped with SIGTERM (SIGKILL
 * after a grace period, and SIGKILL for anything still alive when the script exits). Also reads
 * peak RSS and CPU time from /proc.
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process'
import { appendFileSync, existsSync, readFileSync } from 'node:fs'
import { createServer } from 'node:net'
import { setTimeout as sleep } from 'node:timers/promises'

export interface Managed {
  name: string
  child: ChildProcess
  pid: number
  port: number
  /** `http://127.0.0.1:<port>` */
  origin: string
  /** Milliseconds from spawn to the first HTTP answer (any status). */
  startupMs: number
  /** The last lines the process wrote, for error messages. */
  output: string[]
  /** Cpus_allowed_list of the process (e.g. `0` when pinned). */
  cpus: string
}

const alive = new Set<ChildProcess>()
/** Children this script is stopping: their exit is expected, any other exit is reported. */
const stopping = new Set<ChildProcess>()
let hooksInstalled = false

function isRunning(child: ChildProcess): boolean {
  return child.exitCode === null && child.signalCode === null
}

/** Kills every child still running (SIGKILL); used on exit and on a signal. */
export function killAllChildren(): void {
  for (const child of alive) {
    stopping.add(child)
    if (isRunning(child)) {
      try {
        child.kill('SIGKILL')
      } catch {
        // already gone
      }
    }
  }
  alive.clear()
}

function installHooks(): void {
  if (hooksInstalled) return
  hooksInstalled = true
  process.on('exit', killAllChildren)
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
    process.on(signal, () => {
      process.stderr.write(`\nbench: ${signal}, stopping child processes\n`)
      killAllChildren()
      process.exit(130)
    })
  }
}

/** A free TCP port on 127.0.0.1 (asked from the OS, then released). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer()
    server.unref()
    server.on('error', reject)
    server.listen(0, '127.0.0.1', () => {
      const address = server.address()
      const port = typeof address === 'object' && address !== null ? address.port : 0
      server.close(() => (port > 0 ? resolve(port) : reject(new Error('no free port'))))
    })
  })
}

export function hasTaskset(): boolean {
  try {
    execFileSync('taskset', ['-V'], { stdio: 'ignore' })
    return true
  } catch {
    return false
  }
}

/** Pins every thread of this process to `core`; false when that did not work. */
export function pinSelf(core: number): boolean {
  try {
    execFileSync('taskset', ['-a', '-p', '-c', String(core), String(process.pid)], { stdio: 'ignore' })
    return true
  } catch {
    return false
  }
}

export interface StartOptions {
  name: string
  cwd: string
  /** Arguments after `node`. */
  args: string[]
  env: Record<string, string>
  port: number
  /** Path polled for readiness; any HTTP answer counts. */
  readyPath: string
  /** Core to pin the process to (through taskset), or undefined. */
  core?: number
  timeoutMs?: number
  /** A file every byte the process writes (stdout and stderr) is appended to, or undefined. */
  outputFile?: string
}

/**
 * Starts `node <args>` and polls `readyPath` every 10 ms until the first answer or `timeoutMs`
 * (default 60 s), measuring spawn-to-first-answer. taskset execs node, so the pid is node's.
 */
export async function startProcess(options: StartOptions): Promise<Managed> {
  installHooks()
  const command = options.core === undefined ? process.execPath : 'taskset'
  const args = options.core === undefined ? options.args : ['-c', String(options.core), process.execPath, ...options.args]
  const output: string[] = []
  const keep = (chunk: Buffer) => {
    if (options.outputFile !== undefined) appendFileSync(options.outputFile, chunk)
    for (const line of chunk.toString('utf8').split('\n')) {
      if (line.trim() === '') continue
      output.push(line)
      if (output.length > 40) output.shift()
    }
  }
  const started = performance.now()
  const child = spawn(command, args, {
    cwd: options.cwd,
    env: { ...process.env, ...options.env },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  alive.add(child)
  child.stdout?.on('data', keep)
  child.stderr?.on('data', keep)
  child.on('exit', (code, signal) => {
    alive.delete(child)
    // A server that dies while it is measured shows only as failed requests: say so, with what it wrote last
    // (LOG_LEVEL is silent, so these are its crash and its warnings).
    if (!stopping.delete(child) && readyAt !== undefined) {
      process.stderr.write(`\nbench: ${options.name} (pid ${child.pid}) exited on its own (${code ?? signal}) after answering; its last output:\n${output.join('\n') || '(none)'}\n`)
    }
  })
  let readyAt: number | undefined
  const spawnError = new Promise<never>((_, reject) => child.once('error', reject))
  spawnError.catch(() => undefined)
  const origin = `http://127.0.0.1:${options.port}`
  const deadline = started + (options.timeoutMs ?? 60_000)
  while (performance.now() < deadline) {
    if (!isRunning(child)) {
      throw new Error(`${options.name} exited (${child.exitCode ?? child.signalCode}) before answering:\n${output.join('\n')}`)
    }
    try {
      const response = await Promise.race([fetch(`${origin}${options.readyPath}`, { signal: AbortSignal.timeout(2000) }), spawnError])
      await response.arrayBuffer()
      const startupMs = performance.now() - started
      readyAt = started + startupMs
      if (child.pid === undefined) throw new Error(`${options.name} has no pid`)
      return { name: options.name, child, pid: child.pid, port: options.port, origin, startupMs, output, cpus: allowedCpus(child.pid) }
    } catch (error) {
      if (error instanceof Error && 'code' in error && error.code === 'ENOENT') throw error
      await sleep(10)
    }
  }
  await stopProcess({ name: options.name, child, pid: child.pid ?? -1, port: options.port, origin, startupMs: NaN, output, cpus: '' })
  throw new Error(`${options.name} did not answer within ${options.timeoutMs ?? 60_000} ms:\n${output.join('\n')}`)
}

/** SIGTERM, up to 10 s to drain and exit, then SIGKILL. */
export async function stopProcess(managed: Managed): Promise<void> {
  const { child } = managed
  if (!isRunning(child)) return
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()))
  stopping.add(child)
  child.kill('SIGTERM')
  const graceful = await Promise.race([exited.then(() => true), sleep(10_000).then(() => false)])
  if (!graceful && isRunning(child)) {
    child.kill('SIGKILL')
    await Promise.race([exited, sleep(2000)])
  }
  alive.delete(child)
}

/** The cores a process may run on (`Cpus_allowed_list` in /proc), or '' where unknown. */
export function allowedCpus(pid: number): string {
  try {
    return /^Cpus_allowed_list:\s*(\S+)/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? ''
  } catch {
    return ''
  }
}

export interface MemoryStatus {
  /** Peak resident set size (VmHWM), kB. */
  peakRssKb: number
  /** Current resident set size (VmRSS), kB. */
  rssKb: number
  /**
   * The memory that counts (issue 49): the process's anonymous memory, RssAnon + RssShmem, kB. File-backed
   * pages (the binary, SQLite's mmap, the page cache) are not in it.
   */
  anonKb: number
}

/** The fields of a /proc/<pid>/status text that `memoryOf` reads (exported for its test). */
export function parseMemoryStatus(text: string): MemoryStatus {
  const field = (name: string): number => Number(new RegExp(`^${name}:\\s+(\\d+)\\s+kB`, 'm').exec(text)?.[1] ?? NaN)
  return { peakRssKb: field('VmHWM'), rssKb: field('VmRSS'), anonKb: field('RssAnon') + field('RssShmem') }
}

export function memoryOf(pid: number): MemoryStatus | undefined {
  const path = `/proc/${pid}/status`
  if (!existsSync(path)) return undefined
  try {
    return parseMemoryStatus(readFileSync(path, 'utf8'))
  } catch {
    return undefined
  }
}

/**
 * Samples a process's anonymous memory (RssAnon + RssShmem) every `everyMs` until stopped: the peak, in kB
 * (the kernel keeps a peak of the whole RSS only, VmHWM, which counts file-backed pages too).
 */
export function anonSampler(pid: number, everyMs = 200): { peakKb: () => number; stop: () => number } {
  let peak = 0
  const sample = (): void => {
    const anon = memoryOf(pid)?.anonKb
    if (anon !== undefined && Number.isFinite(anon) && anon > peak) peak = anon
  }
  sample()
  const timer = setInterval(sample, everyMs)
  timer.unref()
  return {
    peakKb: () => peak,
    stop: () => {
      clearInterval(timer)
      sample()
      return peak
    },
  }
}

let clockTicks: number | undefined

function ticksPerSecond(): number {
  if (clockTicks === undefined) {
    try {
      clockTicks = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100
    } catch {
      clockTicks = 100
    }
  }
  return clockTicks
}

/** User + system CPU seconds the process has used so far (all threads), or NaN. */
export function cpuSecondsOf(pid: number): number {
  const path = `/proc/${pid}/stat`
  if (!existsSync(path)) return NaN
  const text = readFileSync(path, 'utf8')
  // Fields after "pid (comm) ": state is field 3, utime 14, stime 15.
  const rest = text.slice(text.lastIndexOf(')') + 2).split(' ')
  return (Number(rest[11]) + Number(rest[12])) / ticksPerSecond()
}

/** Microseconds some task waited for a CPU (PSI, /proc/pressure/cpu "some" total), or NaN where unavailable. */
export function cpuPressureMicros(): number {
  try {
    const text = readFileSync('/proc/pressure/cpu', 'utf8')
    return Number(/^some .*total=(\d+)/m.exec(text)?.[1] ?? NaN)
  } catch {
    return NaN
  }
}

/**
 * How long a process must stay idle to count as idle (`waitIdle`): longer than the work a server defers after writes
 * (server.ts `FILL_AFTER_WRITES_MS`, 1 s: the documents of the events written stored once writes pause), which a
 * shorter look takes for idle and then charges to the next workload (a read workload after `event-create`).
 */
export const IDLE_QUIET_MS = 1400

/**
 * Waits until the process is idle (under 10 % of a core in each 200 ms for `IDLE_QUIET_MS` in a row), at most `maxMs`:
 * requests a client gave up on (end of a run, timeouts) are still worked off by a synchronous server, and work it
 * defers after writes starts a moment later; either would otherwise be charged to the next run. Returns the
 * milliseconds waited.
 */
export async function waitIdle(pid: number, maxMs = 60_000): Promise<number> {
  const started = performance.now()
  let quiet = 0
  while (performance.now() - started < maxMs && quiet < IDLE_QUIET_MS) {
    const before = cpuSecondsOf(pid)
    await sleep(200)
    const used = cpuSecondsOf(pid) - before
    quiet = used >= 0.02 ? 0 : quiet + 200
  }
  return performance.now() - started
}
