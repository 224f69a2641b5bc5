/**
 * The real server as a child process over a database file, for the tests that need a process of their
 * own (a kill, a signal, a second process on the same file): started from the sources on the tests' type
 * stripping (typescript.ts), on 127.0.0.1 only, killed in teardown; every wait is bounded.
 */
import type { Test } from 'tap'
import { spawn, type ChildProcess } from 'node:child_process'
import { openDatabase } from '../../src/db/database.js'
import { generateKey } from '../../src/lib/api-keys.js'
import { createUserWithKey } from '../../src/repositories/users.js'
import { withTransaction } from '../../src/db/unit-of-work.js'
import { TYPESCRIPT } from './typescript.js'

const ROOT = new URL('../..', import.meta.url).pathname
export const API = '/calendar/events/v1'
/** How long one request may take before the test gives up on it. */
export const REQUEST_TIMEOUT_MS = 15_000

type Json = Record<string, unknown>

function isJson(value: unknown): value is Json {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}

/** Creates an editor and returns its key, straight in the database file (before the server runs). */
export async function editorKey(file: string, role: 'editor' | 'administrator' = 'editor'): Promise<string> {
  const handle = await openDatabase(file)
  try {
    const key = generateKey()
    await withTransaction(handle.db, (trx) => createUserWithKey(trx, role, key, '2026-01-01 00:00:00'))
    return key
  } finally {
    await handle.close()
  }
}

export interface Server {
  child: ChildProcess
  base: string
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>
  stderr(): string
  /** What the server wrote to stdout (its log lines, when LOG_LEVEL lets any through). */
  stdout(): string
}

/** Starts `src/server.ts` on `file` and `port` (with `env` beside the usual); resolves once it listens (bounded wait). */
export async function startServer(t: Test, file: string, port: number, env: Record<string, string> = {}): Promise<Server> {
  const child = spawn(process.execPath, [...TYPESCRIPT, 'src/server.ts'], {
    cwd: ROOT,
    // No NODE_V8_COVERAGE: coverage counts the test processes only (typescript-loader.ts).
    env: { ...process.env, DATABASE_URL: file, PORT: String(port), HOST: '127.0.0.1', LOG_LEVEL: 'silent', PUBLIC_URL: 'http://calendar.test', NODE_OPTIONS: '', NODE_V8_COVERAGE: undefined, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  t.teardown(() => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL')
  })
  let out = ''
  let err = ''
  child.stderr?.on('data', (chunk: Buffer) => { err += chunk.toString() })
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => {
    child.once('exit', (code, signal) => resolve({ code, signal }))
  })
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`server did not listen within 30 s: ${err}`)), 30_000)
    child.stdout?.on('data', (chunk: Buffer) => {
      out += chunk.toString()
      if (out.includes('listening on') || out.includes('Server listening at')) {
        clearTimeout(timer)
        resolve()
      }
    })
    void exited.then(({ code, signal }) => {
      clearTimeout(timer)
      reject(new Error(`server exited before listening (${code ?? signal}): ${err}`))
    })
  })
  return { child, base: `http://127.0.0.1:${port}${API}`, exited, stderr: () => err, stdout: () => out }
}

/** What a command of the project printed, and how it ended. */
export interface CommandRun { code: number | null; stdout: string; stderr: string }

/**
 * Runs `scripts/<script>` on the database at `databaseUrl`, as an operator would while servers run, killed after
 * `timeoutMs` (the scripts: api-key, backup, demo).
 */
export async function runScript(script: string, databaseUrl: string, args: readonly string[], timeoutMs: number, extra: Record<string, string> = {}): Promise<CommandRun> {
  const env: Record<string, string | undefined> = { ...process.env, DATABASE_URL: databaseUrl, NODE_OPTIONS: '', LOG_LEVEL: 'silent', ...extra }
  delete env.NODE_V8_COVERAGE
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [...TYPESCRIPT, `scripts/${script}`, ...args], { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] })
    let stdout = ''
    let stderr = ''
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs)
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => { stdout += chunk })
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => { stderr += chunk })
    child.on('error', reject)
    child.on('close', (code) => {
      clearTimeout(timer)
      resolve({ code, stdout, stderr })
    })
  })
}

/** Runs the api-key command on the database at `file`, as an operator would while servers run (bounded). */
export async function apiKeyCommand(file: string, args: readonly string[], extra: Record<string, string> = {}): Promise<CommandRun> {
  return runScript('api-key.ts', file, args, 30_000, extra)
}

export async function call(base: string, key: string, method: string, path: string, body?: Json): Promise<{ status: number; body: Json }> {
  const res = await fetch(`${base}${path}`, {
    method,
    headers: { authorization: `Bearer ${key}`, ...(body !== undefined ? { 'content-type': 'application/json' } : {}) },
    ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
    signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
  })
  const text = await res.text()
  const parsed: unknown = text === '' ? {} : JSON.parse(text)
  return { status: res.status, body: isJson(parsed) ? parsed : {} }
}

