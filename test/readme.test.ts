/**
 * The README's examples are one story that works top to bottom: this runs every ```sh block of its
 * "The story" section, in order, in bash, with curl as written (only the server's address differs),
 * against a fresh server on an empty database, and checks each command's status against the one its
 * comment gives (`# 201`), and the records each list holds against those its comment names
 * (`# 200: events 1, 2`, `# 200: no venues`, `# 200: categories 1; tags 3`): in that order, no more and no
 * fewer. Every list answer (JSON or iCalendar) must name its records, so a story whose dates fell out of
 * a list's window fails here. The blocks are read from README.md itself, so the README cannot drift.
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
  return statusComments(blocks).map((c) => c.status)
}

function statusComments(blocks: string[]): Array<{ status: number; rest: string }> {
  return blocks.flatMap((block) => [...block.matchAll(/^[^#\n].*\s#\s+(\d{3})\b(.*)$/gm)].map((m) => ({ status: Number(m[1]), rest: m[2] ?? '' })))
}

/** The resources a comment may name records of, by the words it uses. */
const KINDS: Record<string, string> = {
  event: 'events', events: 'events', venue: 'venues', venues: 'venues', organizer: 'organizers', organizers: 'organizers',
  category: 'categories', categories: 'categories', tag: 'tags', tags: 'tags',
}
const KIND_WORDS = Object.keys(KINDS).join('|')

/**
 * The records a comment names after its status (`: events 1, 2`, `: no venues`, `: categories 1; tags 3`), as
 * `<resource> <id>` in order; undefined when the comment names none.
 */
export function namedRecords(rest: string): string[] | undefined {
  const text = /^:\s+(.*)$/.exec(rest)?.[1]
  if (text === undefined) return undefined
  const named: string[] = []
  for (const [index, part] of text.replace(/\([^)]*\)/g, '').split(';').entries()) {
    if (new RegExp(`^\\s*no (${KIND_WORDS})\\b`).test(part)) continue
    const found = new RegExp(`^\\s*(${KIND_WORDS})\\s+(\\d+(?:,\\s*\\d+)*)\\b`).exec(part)
    if (found === null) {
      if (index === 0) return undefined
      throw new Error(`a README comment names records it cannot be read as: "${part}"`)
    }
    for (const id of (found[2] ?? '').split(/,\s*/)) named.push(`${KINDS[found[1] ?? ''] ?? '?'} ${id}`)
  }
  return named
}

/**
 * The records an answer holds, as `<resource> <id>` in order, and whether it is a list: an iCalendar feed's
 * events (by UID), a change list's changes, a JSON list's items, or one record.
 */
function heldRecords(text: string, url: string): { records: string[]; list: boolean } {
  if (text.startsWith('BEGIN:VCALENDAR')) return { records: [...text.matchAll(/^UID:(\d+)@/gm)].map((m) => `events ${m[1] ?? ''}`), list: true }
  let body: unknown
  try {
    body = JSON.parse(text)
  } catch {
    return { records: [], list: false }
  }
  if (typeof body !== 'object' || body === null || Array.isArray(body)) return { records: [], list: false }
  const record = body as Record<string, unknown>
  const items = (value: unknown): Array<Record<string, unknown>> => (Array.isArray(value) ? value.filter((v): v is Record<string, unknown> => typeof v === 'object' && v !== null) : [])
  const resource = /\/calendar\/events\/v1\/(events|venues|organizers|categories|tags)\b/.exec(url)?.[1] ?? '?'
  // One record (it has an id; its own lists, such as an event's categories, are not the answer's).
  if (typeof record.id === 'number') return { records: [`${resource} ${String(record.id)}`], list: false }
  if (Array.isArray(record.changes)) return { records: items(record.changes).map((c) => `${String(c.resource)} ${String(c.id)}`), list: true }
  for (const kind of new Set(Object.values(KINDS))) {
    if (Array.isArray(record[kind])) return { records: items(record[kind]).map((r) => `${kind} ${String(r.id)}`), list: true }
  }
  return { records: [], list: false }
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
  const comments = statusComments(blocks)
  const named = comments.map((c) => namedRecords(c.rest))
  // Records whose order the contract leaves to timing (venues by `date`, to the second): `(in any order…)`.
  const anyOrder = comments.map((c) => /\(in any order\b/.test(c.rest))

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
    const held = heldRecords(text, url)
    const names = named[index]
    const sorted = (records: readonly string[]) => (anyOrder[index] === true ? [...records].sort() : records)
    if (names !== undefined) t.strictSame(sorted(held.records), sorted(names), `${index + 1}. ${method} ${url.slice(base.length)} holds ${names.join(', ') || 'nothing'}`, { body: text.slice(0, 400) })
    else if (held.list && status === 200) t.fail(`${index + 1}. ${method} ${url.slice(base.length)} answers a list, and its comment names none of its records (it holds ${held.records.join(', ') || 'nothing'})`)
  }
  const lists = named.filter((n) => n !== undefined).length
  t.ok(lists >= 20, `${lists} answers checked for the records their comments name`)
})

t.test('a comment names records as the story writes them', async (t) => {
  t.strictSame(namedRecords(': events 1, 2'), ['events 1', 'events 2'])
  t.strictSame(namedRecords(': event 2 (the jam session)'), ['events 2'])
  t.strictSame(namedRecords(': no venues (other statuses need the right)'), [])
  t.strictSame(namedRecords(': categories 1; tags 3, 4; venue 1 (as kept; has_more true)'), ['categories 1', 'tags 3', 'tags 4', 'venues 1'])
  t.equal(namedRecords(': ä becomes ae'), undefined)
  t.equal(namedRecords(', event 1'), undefined)
  t.throws(() => namedRecords(': event 1; and more'), /cannot be read/)
})

t.test('the README sends nothing outside ASCII unencoded in a URL', async (t) => {
  for (const block of readmeExamples()) {
    for (const line of block.split('\n')) {
      const url = /"\$API([^"]*)"/.exec(line)?.[1]
      if (url !== undefined) t.match(url, /^[\x21-\x7e]*$/, `ASCII only: ${url}`)
    }
  }
})
