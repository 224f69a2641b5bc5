// Random anonymous GET /events/{id} for scripts/bench/cold-allocations.ts and pg-cold-cpu.ts: <origin> <seconds> <events>
// [<paths file>: one path a line, asked in random order instead]; prints the totals as JSON.
import autocannon from 'autocannon'
import { readFileSync } from 'node:fs'
import process from 'node:process'
const [origin, seconds = '5', events = '20000', file] = process.argv.slice(2)
const paths = file === undefined ? undefined : readFileSync(file, 'utf8').split('\n').filter((p) => p !== '')
const next = paths === undefined
  ? () => `/calendar/events/v1/events/${1 + Math.floor(Math.random() * Number(events))}`
  : () => paths[Math.floor(Math.random() * paths.length)]
const result = await autocannon({
  url: origin, connections: 10, duration: Number(seconds),
  requests: [{ setupRequest: (req) => ({ ...req, path: next() }) }],
})
process.stdout.write(`${JSON.stringify({ total: result.requests.total, non2xx: result.non2xx })}\n`)
