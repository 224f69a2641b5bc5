/**
 * `npm run backup -- <file>` (scripts/backup.ts): a copy of a SQLite database taken while a server process
 * takes writes holds every write acknowledged before the copy began, passes `PRAGMA integrity_check`, and
 * serves them again once restored as the README says (stop, copy the file in place, start). A PostgreSQL
 * URL is refused with a pointer to pg_dump, and an existing file is never overwritten.
 * The backup is SQLite's; it runs on a file of its own on either leg. Only 127.0.0.1; every wait is bounded.
 */
import t from 'tap'
import { copyFileSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import SQLite from 'better-sqlite3'
import { freePort } from './helpers/net.js'
import { REQUEST_TIMEOUT_MS, call, editorKey, runScript, startServer, type CommandRun, type Server } from './helpers/server.js'

const WRITERS = 4
/** Writes acknowledged before the backup starts, and after it ends (so that writes ran through it). */
const BEFORE = 120
const AFTER = 20

async function backupCommand(databaseUrl: string, args: readonly string[]): Promise<CommandRun> {
  return runScript('backup.ts', databaseUrl, args, 60_000)
}

async function until(check: () => boolean, what: string, ms = 60_000): Promise<void> {
  const deadline = Date.now() + ms
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`)
    await new Promise((resolve) => setTimeout(resolve, 10))
  }
}

async function stop(server: Server): Promise<void> {
  server.child.kill('SIGTERM')
  const timer = setTimeout(() => server.child.kill('SIGKILL'), 20_000)
  await server.exited
  clearTimeout(timer)
}

t.test('a backup taken under writes holds every write acknowledged before it began, and restores', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'backup-'))
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  const file = join(dir, 'calendar.db')
  const copy = join(dir, 'calendar-backup.db')
  const key = await editorKey(file)
  const server = await startServer(t, file, await freePort())

  // Writers create tags until told to stop; each acknowledged id is kept in the order it was answered.
  const acked: Array<{ id: number; name: string }> = []
  let writing = true
  let sent = 0
  const writers = Array.from({ length: WRITERS }, async () => {
    while (writing) {
      const name = `tag ${String(sent++)}`
      const res = await call(server.base, key, 'POST', '/tags', { name })
      if (res.status !== 201) throw new Error(`POST /tags answered ${String(res.status)}: ${JSON.stringify(res.body)}`)
      acked.push({ id: Number(res.body.id), name })
    }
  })
  const failed = Promise.all(writers).then(() => undefined)
  failed.catch(() => { writing = false })

  await until(() => acked.length >= BEFORE, `${String(BEFORE)} acknowledged writes`)
  const ackedBefore = acked.slice()
  const backup = await backupCommand(file, [copy])
  const ackedByEnd = acked.length
  await until(() => acked.length >= ackedByEnd + AFTER, 'writes after the backup')
  writing = false
  await failed
  t.equal(backup.code, 0, `the backup exits 0 (${backup.stderr.trim()})`)
  t.match(backup.stdout, /integrity ok/, 'it says the copy passed its check')
  t.ok(acked.length > ackedBefore.length, `writes went on around it (${String(ackedBefore.length)} before, ${String(acked.length)} in all)`)

  const checked = new SQLite(copy, { readonly: true, fileMustExist: true })
  t.equal(checked.pragma('integrity_check', { simple: true }), 'ok', 'the copy passes integrity_check')
  const inCopy = new Set((checked.prepare("select id from terms where taxonomy = 'tag'").pluck().all() as number[]))
  checked.close()
  t.ok(ackedBefore.every(({ id }) => inCopy.has(id)), `every write acknowledged before the backup is in the copy (${String(ackedBefore.length)})`)
  t.ok(inCopy.size < acked.length, `writes acknowledged after it are not (${String(inCopy.size)} of ${String(acked.length)})`)

  // Restore as the README says: stop, copy the backup over the database file, start.
  await stop(server)
  for (const leftover of [`${file}-wal`, `${file}-shm`]) rmSync(leftover, { force: true })
  copyFileSync(copy, file)
  const restored = await startServer(t, file, await freePort())
  let found = 0
  for (const { id, name } of ackedBefore) {
    const res = await fetch(`${restored.base}/tags/${String(id)}`, { signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS) })
    const body = (await res.json()) as { name?: string }
    if (res.status === 200 && body.name === name) found++
  }
  t.equal(found, ackedBefore.length, 'the restored server serves every write acknowledged before the backup')
  await stop(restored)
})

t.test('the backup refuses PostgreSQL (pointing to pg_dump), an existing file and a missing database', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'backup-'))
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))

  const postgres = await backupCommand('postgres://postgres@127.0.0.1:5432/calendar', [join(dir, 'copy.db')])
  t.equal(postgres.code, 2, 'a PostgreSQL URL exits 2')
  t.match(postgres.stderr, /pg_dump -Fc/, 'and names pg_dump')
  t.notOk(existsSync(join(dir, 'copy.db')), 'and writes nothing')

  const file = join(dir, 'calendar.db')
  await editorKey(file)
  const existing = join(dir, 'existing.db')
  writeFileSync(existing, 'keep me')
  const overwrite = await backupCommand(file, [existing])
  t.equal(overwrite.code, 2, 'an existing target exits 2')
  t.equal(readFileSync(existing, 'utf8'), 'keep me', 'and is left as it was')

  const missing = await backupCommand(join(dir, 'nothing-here.db'), [join(dir, 'copy.db')])
  t.equal(missing.code, 2, 'a database file that does not exist exits 2')
  t.notOk(existsSync(join(dir, 'nothing-here.db')), 'and is not created')

  const usage = await backupCommand(file, [])
  t.equal(usage.code, 2, 'no file given exits 2')
  t.match(usage.stderr, /usage: npm run -s backup/, 'with the usage')
})
