/**
 * What a SQLite commit costs, and why (issue 49): on a copy of a benchmark database, transactions of one kind
 * each, timed at their commit, with the WAL frames (pages) each commit wrote. A bare one-page commit against
 * one inserting a row into the search index (FTS5 trigram), ten rows in one transaction, and the index of
 * pairs: FTS5 writes its pending terms as a new segment at commit, a cost per transaction.
 *
 *   node --import tsx scripts/bench/commit-cost.ts <database file> [transactions per kind, default 200]
 *
 * The file itself is not changed (a copy beside it is used and removed).
 */
import { statSync } from 'node:fs'
import SQLite from 'better-sqlite3'
import { scratchCopy } from './scratch.js'

const count = Number(process.argv[3] ?? 200)
const { file, remove } = scratchCopy('commit-cost', '[transactions]')
const db = new SQLite(file)
db.pragma('journal_mode = WAL')
db.pragma('synchronous = NORMAL')
// No checkpoint while measuring: the WAL's growth is the frames the commits wrote.
db.pragma('wal_autocheckpoint = 0')
const pageSize = Number(db.pragma('page_size', { simple: true }))
const walBytes = (): number => statSync(`${file}-wal`, { throwIfNoEntry: false })?.size ?? 0

const text = 'Created by the benchmark: an evening of music and conversation with local artists.'
let next = 1_000_000_000
const epoch = db.prepare('update data_epoch set n = n + 1')
const searchRow = db.prepare('insert into event_search (rowid, title, description) values (?, ?, ?)')
const pairsRow = db.prepare('insert or replace into event_search_pairs (rowid, pairs) values (?, ?)')
const kinds: Record<string, () => void> = {
  'bare (one row of data_epoch)': () => { epoch.run() },
  'one row into the search index': () => { searchRow.run(next++, `Bench event ${next}`, text) },
  'ten rows into the search index': () => { for (let i = 0; i < 10; i++) searchRow.run(next++, `Bench event ${next}`, text) },
  'one row into the index of pairs': () => { pairsRow.run(next++, '61g62 62g63 63g64 64g65 65g66 66g67 67g68 68g69') },
}
const begin = db.prepare('begin immediate')
const commit = db.prepare('commit')
try {
  for (const [name, write] of Object.entries(kinds)) {
    db.pragma('wal_checkpoint(TRUNCATE)')
    const before = walBytes()
    const commits: number[] = []
    for (let i = 0; i < count; i++) {
      begin.run()
      write()
      const started = performance.now()
      commit.run()
      commits.push(performance.now() - started)
    }
    commits.sort((a, b) => a - b)
    const pages = (walBytes() - before) / (pageSize + 24) / count
    const median = commits[Math.floor(commits.length / 2)] ?? NaN
    process.stdout.write(`${name}: ${pages.toFixed(1)} pages a commit, commit median ${(median * 1000).toFixed(0)} µs\n`)
  }
} finally {
  db.close()
  remove()
}
