/**
 * What PostgreSQL's connections wait on (issue 49): samples `pg_stat_activity` every 20 ms for some seconds
 * and prints, per state, wait event and statement, how many connections of the database were in it on
 * average. Run it beside a benchmark workload (`npm run bench -- --only mixed-90-10 --database-url …`) while
 * the workload is measured.
 *
 *   node --import tsx scripts/bench/pg-waits.ts <postgres URL> [seconds, default 10]
 */
import pg from 'pg'

const url = process.argv[2]
if (url === undefined) {
  process.stderr.write('usage: node --import tsx scripts/bench/pg-waits.ts <postgres URL> [seconds]\n')
  process.exit(2)
}
const seconds = Number(process.argv[3] ?? 10)
const client = new pg.Client({ connectionString: url })
await client.connect()
const counts = new Map<string, number>()
let samples = 0
const end = Date.now() + seconds * 1000
try {
  while (Date.now() < end) {
    const { rows } = await client.query<{ state: string; type: string; event: string; query: string }>(`
      select state, coalesce(wait_event_type, '-') as type, coalesce(wait_event, '-') as event,
        left(regexp_replace(query, '\\s+', ' ', 'g'), 70) as query
      from pg_stat_activity
      where datname = current_database() and pid <> pg_backend_pid() and backend_type = 'client backend' and state <> 'idle'`)
    samples++
    for (const row of rows) {
      // A statement is named when it runs or waits for a lock; an idle transaction's last one says little.
      const key = `${row.state} | ${row.type}:${row.event} | ${row.state === 'active' ? row.query : ''}`
      counts.set(key, (counts.get(key) ?? 0) + 1)
    }
    await new Promise((resolve) => setTimeout(resolve, 20))
  }
} finally {
  await client.end()
}
process.stdout.write(`${samples} samples; connections on average, by state | wait | statement:\n`)
for (const [key, n] of [...counts].sort((a, b) => b[1] - a[1]).slice(0, 25)) process.stdout.write(`${(n / samples).toFixed(3)} ${key}\n`)
