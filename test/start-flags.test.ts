/**
 * The V8 flags `npm start` runs the server with (package.json's start script; the benchmark and the docs' service
 * files start it the same way): a young generation fixed at 16 MB a semi-space (`--min-semi-space-size=16
 * --max-semi-space-size=16`: half the scavenges of the 1–8 MB V8 chose under `--max-semi-space-size=8` alone, issue 49's
 * tail, docs/performance.md) and the old generation's growth held to half its size (`--heap-growing-percent=50`).
 * A node started with exactly those flags reports its new space at 16 MB from the first moment: the flags are
 * understood by this Node and not left to V8's own sizing.
 */
import t from 'tap'
import { execFileSync } from 'node:child_process'
import { readFileSync } from 'node:fs'

const ROOT = new URL('..', import.meta.url)
const start = (JSON.parse(readFileSync(new URL('package.json', ROOT), 'utf8')) as { scripts: { start: string } }).scripts.start.trim().split(/\s+/)

t.test('npm start runs node with the young generation fixed and the old generation held', async (t) => {
  t.equal(start[0], 'node')
  t.equal(start.at(-1), 'dist/bundle/server.js')
  const flags = start.slice(1, -1)
  t.ok(flags.includes('--heap-growing-percent=50'), flags.join(' '))
  const probe = `const v8 = require('node:v8'); const s = v8.getHeapSpaceStatistics().find((x) => x.space_name === 'new_space'); process.stdout.write(JSON.stringify({ newSpace: s.space_size }))`
  const seen = JSON.parse(execFileSync(process.execPath, [...flags, '-e', probe], { encoding: 'utf8' })) as { newSpace: number }
  t.equal(seen.newSpace, 16 * 1024 * 1024, 'the new space is 16 MB from the start')
})
