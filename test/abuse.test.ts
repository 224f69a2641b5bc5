/**
 * The abuse suite's quick subset (`npm run abuse -- --quick`, scripts/abuse.ts): every probe passes.
 * Bounded: a few hundred requests and connections, on 127.0.0.1, in about 15 s.
 */
import { spawn } from 'node:child_process'
import t from 'tap'
import { TYPESCRIPT } from './helpers/typescript.js'

const ROOT = new URL('..', import.meta.url).pathname

t.test('every probe of the quick abuse suite passes', async (t) => {
  const result = await new Promise<{ code: number | null; out: string }>((resolve) => {
    const child = spawn(process.execPath, [...TYPESCRIPT, 'scripts/abuse.ts', '--quick'], {
      cwd: ROOT,
      env: { ...process.env, NODE_OPTIONS: '', NODE_V8_COVERAGE: undefined },
      stdio: ['ignore', 'pipe', 'pipe'],
    })
    let out = ''
    child.stdout.on('data', (chunk: Buffer) => { out += chunk.toString() })
    child.stderr.on('data', (chunk: Buffer) => { out += chunk.toString() })
    const timer = setTimeout(() => child.kill('SIGKILL'), 180_000)
    child.once('exit', (code) => {
      clearTimeout(timer)
      resolve({ code, out })
    })
  })
  t.equal(result.code, 0, result.out)
  t.match(result.out, /(\d+) of \1 probes passed/)
  t.notMatch(result.out, /\| FAIL \|/)
})
