/**
 * The README's examples are one story that works top to bottom: this runs every ```sh block of its
 * "Examples" section, in order, in bash, with curl as written (only the server's address differs),
 * against a fresh server on an empty database, and checks each command's status against the one its
 * comment gives (`# 201`). The blocks are read from README.md itself, so the README cannot drift.
 */
import { execFile } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import t from 'tap'
import { buildApp } from '../src/app.js'
import { defaultConfig } from '../src/config.js'
import { openDatabase } from '../src/db/database.js'
import { freePort } from '../scripts/free-port.js'
import { contractProblems } from './helpers/contract.js'
import { README_API, readmeExamples } from './helpers/readme.js'
import { freshDatabaseUrl } from './helpers/database.js'

const root = new URL('..', import.meta.url).pathname
const MARK = '@@README-STATUS'

/** The status each command's trailing comment expects, in order (`... # 201, id 1`). */
function expectedStatuses(blocks: string[]): number[] {
  return blocks.flatMap((block) => [...block.matchAll(/^[^#\n].*\s#\s+(\d{3})\b/gm)].map((m) => Number(m[1])))
}

/** The method and URL of each top-level curl command, in order (for the contract check of its answer). */
function requests(blocks: string[], base: string): Array<{ method: string; url: string }> {
  const commands = blocks.join('\n').replace(/\\\n/g, ' ').split('\n').filter((line) => /^curl\s/.test(line))
  return commands.map((line) => {
    const method = /-X\s+(\w+)/.exec(line)?.[1] ?? (/\s(-d|--data-urlencode)\s/.test(line) && !/\s-G\s/.test(line) ? 'POST' : 'GET')
    const url = (/"\$API([^"]*)"/.exec(line)?.[1] ?? '').replace(/^/, `${base}/calendar/events/v1`)
    return { method, url }
  })
}

t.test('every README example answers as its comment says, in order, against a fresh server', async (t) => {
  const blocks = readmeExamples()
  t.ok(blocks.length >= 5, `${blocks.length} example blocks`)
  const expected = expectedStatuses(blocks)
  t.ok(expected.length >= 50, `${expected.length} commands with an expected status`)

  const dir = mkdtempSync(join(tmpdir(), 'readme-'))
  const databaseUrl = await freshDatabaseUrl(t, join(dir, 'calendar.db'))
  const database = await openDatabase(databaseUrl)
  const port = await freePort()
  const base = `http://127.0.0.1:${port}`
  const app = await buildApp({ db: database.db, config: defaultConfig({ port, publicUrl: base, databaseUrl }) })
  await app.listen({ host: '127.0.0.1', port })
  t.teardown(async () => {
    await app.close()
    await database.close()
    rmSync(dir, { recursive: true, force: true })
  })

  // curl as written, with the status of each answer printed after it (a -w of the command itself wins).
  const script = [
    'set -u',
    `curl() { command curl --max-time 20 -w '\\n${MARK} %{http_code}\\n' "$@"; }`,
    ...blocks.map((block) => block.replaceAll(README_API, `${base}/calendar/events/v1`)),
  ].join('\n')
  const output = await new Promise<string>((resolve, reject) => {
    execFile('bash', ['-c', script], { cwd: root, env: { ...process.env, DATABASE_URL: databaseUrl, npm_config_loglevel: 'silent' }, timeout: 120_000, maxBuffer: 64 * 1024 * 1024 },
      (error, stdout, stderr) => (error !== null ? reject(new Error(`${error.message}\n${stderr}`)) : resolve(stdout)))
  })
  const answers = output.split(new RegExp(`\\n${MARK} (\\d{3})\\n`))
  const statuses: number[] = []
  const bodies: string[] = []
  for (let i = 1; i < answers.length; i += 2) {
    statuses.push(Number(answers[i]))
    bodies.push(answers[i - 1] ?? '')
  }
  t.equal(statuses.length, expected.length, 'one answer per command')
  const sent = requests(blocks, base)
  t.equal(sent.length, expected.length, 'one request per command')
  for (const [index, status] of statuses.entries()) {
    const { method, url } = sent[index] ?? { method: '?', url: '?' }
    t.equal(status, expected[index], `${index + 1}. ${method} ${url.slice(base.length)} answers ${String(expected[index])}`, { body: bodies[index]?.slice(-400) })
    // Bodies shown with -i carry their headers first: check the JSON after them.
    const text = (bodies[index] ?? '').replace(/^HTTP\/[\s\S]*?\r\n\r\n/, '').trim()
    // The calendar feeds' examples answer text/calendar; every other example JSON.
    const type = text.startsWith('BEGIN:VCALENDAR') ? 'text/calendar' : 'application/json'
    const problems = contractProblems(method, url, { statusCode: status, headers: { 'content-type': type }, body: text })
    t.strictSame(problems, [], `${index + 1}. the answer is as the contract says`)
  }
})

t.test('the README sends nothing outside ASCII unencoded in a URL', async (t) => {
  for (const block of readmeExamples()) {
    for (const line of block.split('\n')) {
      const url = /"\$API([^"]*)"/.exec(line)?.[1]
      if (url !== undefined) t.match(url, /^[\x21-\x7e]*$/, `ASCII only: ${url}`)
    }
  }
})
