/**
 * Long fuzz runs against the contract (see test/helpers/fuzz.ts for what is generated and checked):
 *
 *   node --import tsx scripts/fuzz.ts --runs 20000 [--seed S] [--path P] [--max-requests N]
 *
 * A new random seed by default; the seed is printed first, and on a failure a command that replays it.
 * At the end: runs, requests, time and the answers by status.
 */
import { parseArgs } from 'node:util'
import { runFuzz } from '../test/helpers/fuzz.js'

const { values } = parseArgs({
  options: {
    runs: { type: 'string', default: '2000' },
    seed: { type: 'string' },
    path: { type: 'string' },
    'max-requests': { type: 'string', default: '8' },
  },
})

const runs = Number(values.runs)
const maxRequests = Number(values['max-requests'])
const seed = values.seed !== undefined ? Number(values.seed) : Math.floor(Math.random() * 2 ** 31)
if (!Number.isSafeInteger(runs) || runs < 1 || !Number.isSafeInteger(seed) || !Number.isSafeInteger(maxRequests) || maxRequests < 1) {
  console.error('usage: node --import tsx scripts/fuzz.ts --runs N [--seed S] [--path P] [--max-requests N]')
  process.exit(2)
}

console.log(`fuzz: seed ${seed}, ${runs} runs of up to ${maxRequests} requests`)
const started = performance.now()
try {
  const stats = await runFuzz({ seed, numRuns: runs, maxRequests, ...(values.path !== undefined ? { path: values.path } : {}) })
  const seconds = stats.ms / 1000
  console.log(`fuzz: ${stats.runs} runs, ${stats.requests} requests in ${seconds.toFixed(1)} s (${Math.round(stats.requests / seconds)} requests/s), no failure`)
  console.log(`fuzz: answers by status ${JSON.stringify(stats.byStatus)}`)
  for (const [rule, n] of Object.entries(stats.refusals).sort((a, b) => b[1] - a[1])) console.log(`fuzz: ${n} schema-valid requests refused by contract rule: ${rule}`)
} catch (error) {
  const message = error instanceof Error ? error.message : String(error)
  console.error(message)
  const path = /path: "([^"]*)"/.exec(message)?.[1]
  console.error(`\nfuzz: FAILED after ${((performance.now() - started) / 1000).toFixed(1)} s with seed ${seed}. Replay with:`)
  console.error(`  node --import tsx scripts/fuzz.ts --runs ${runs} --seed ${seed}${path !== undefined ? ` --path "${path}"` : ''} --max-requests ${maxRequests}`)
  process.exit(1)
}
