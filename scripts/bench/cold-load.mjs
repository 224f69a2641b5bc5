// Random anonymous GET /events/{id} for scripts/bench/cold-allocations.ts: <origin> <seconds> <events>; prints the totals as JSON.
import autocannon from 'autocannon'
import process from 'node:process'
const [origin, seconds = '5', events = '20000'] = process.argv.slice(2)
const result = await autocannon({
  url: origin, connections: 10, duration: Number(seconds),
  requests: [{ setupRequest: (req) => ({ ...req, path: `/calendar/events/v1/events/${1 + Math.floor(Math.random() * Number(events))}` }) }],
})
process.stdout.write(`${JSON.stringify({ total: result.requests.total, non2xx: result.non2xx })}\n`)
