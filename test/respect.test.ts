/**
 * `npm run respect` (scripts/respect.ts) as a test: Redocly's workflows generated from the served
 * document, with its examples, against a server loaded with the demo calendar: all 66 pass (each checks
 * the success status, that the status is declared, the media type and the schema of the answer).
 */
import { execFile } from 'node:child_process'
import t from 'tap'
import { TYPESCRIPT } from './helpers/typescript.js'

const root = new URL('..', import.meta.url).pathname

t.test('redocly respect: every generated workflow passes against the demo calendar', async (t) => {
  const { code, output } = await new Promise<{ code: number; output: string }>((resolve) => {
    execFile('node', [...TYPESCRIPT, 'scripts/respect.ts'], { cwd: root, timeout: 240_000, maxBuffer: 16 * 1024 * 1024 },
      (error, stdout, stderr) => resolve({ code: error === null ? 0 : typeof error.code === 'number' ? error.code : 1, output: `${stdout}${stderr}` }))
  })
  const summary = /(\d+) workflows, (\d+) passed, (\d+) failed; (\d+) of (\d+) checks passed/.exec(output)
  t.ok(summary !== null, output.slice(-2000))
  t.equal(Number(summary?.[1]), 66, 'one workflow per operation')
  t.equal(Number(summary?.[2]), 66, 'all pass')
  t.equal(summary?.[4], summary?.[5], `${summary?.[4] ?? '?'} checks, all passed`)
  t.equal(code, 0)
})
