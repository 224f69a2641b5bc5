/**
 * The change log and `GET /changes` (CONTRACT §12): every write appends in its own transaction, one
 * entry per record at its latest change, visibility per caller (§6), links, languages, cursors, paging,
 * retention and 410, malformed cursors; and `modified_after` / `modified_before` on the lists.
 */
import t, { type Test } from 'tap'
import type { Schema } from '../src/contract.js'
import { cursorOf } from '../src/handlers/changes.js'
import { pruneExpiredChanges } from '../src/retention.js'
import { API, API_URL, NOW, build, type Built } from './helpers/build.js'
import { expectError } from './helpers/errors.js'

type ChangeList = Schema<'ChangeList'>
type Change = Schema<'Change'>
type Headers = Record<string, string>

async function setup(t: Test, clock?: () => Date) {
  const built = await build(t, clock === undefined ? {} : { clock })
  const editor = await built.auth('editor')
  const send = async (method: 'POST' | 'PATCH' | 'DELETE', path: string, body: Record<string, unknown> | undefined, headers: Headers = editor) => {
    const res = await built.inject({ method, url: `${API}${path}`, headers, ...(body === undefined ? {} : { payload: body }) })
    t.ok(res.statusCode < 300, `${method} ${path} → ${res.statusCode}`, { body: res.body.slice(0, 300) })
    return res.json<{ id: number }>()
  }
  /** One answer of GET /changes. */
  const changes = async (query = '', headers: Headers = {}): Promise<ChangeList> => {
    const res = await built.inject({ url: `${API}/changes${query === '' ? '' : `?${query}`}`, headers })
    t.equal(res.statusCode, 200, `GET /changes?${query}`)
    return res.json<ChangeList>()
  }
  /** Every page from `since` (absent: the oldest kept), following next_cursor until has_more is false. */
  const walk = async (since: string | undefined, query = '', headers: Headers = {}) => {
    const seen: Change[] = []
    let cursor = since
    for (let n = 0; n < 1000; n++) {
      const page = await changes([cursor === undefined ? '' : `since=${cursor}`, query].filter((p) => p !== '').join('&'), headers)
      seen.push(...page.changes)
      cursor = page.next_cursor
      if (!page.has_more) break
    }
    return { changes: seen, cursor: cursor ?? '' }
  }
  const summary = (list: readonly Change[]) => list.map((c) => `${c.action} ${c.resource} ${c.id}`)
  return { ...built, editor, send, changes, walk, summary }
}

async function rows(built: Built) {
  return built.db.selectFrom('changes').selectAll().orderBy('position').execute()
}

t.test('an empty log: no changes, a cursor, nothing more; since=now likewise', async (t) => {
  const { changes } = await setup(t)
  const first = await changes()
  t.same(first.changes, [])
  t.equal(first.has_more, false)
  t.type(first.next_cursor, 'string')
  const now = await changes('since=now')
  t.same(now, first, 'the same cursor')
  t.same(await changes(`since=${first.next_cursor}`), first, 'next_cursor is the one sent when nothing changed')
})

t.test('every write appends, each record once per answer at its latest change, with its record as a list shows it', async (t) => {
  const { send, changes, summary, inject } = await setup(t)
  const category = await send('POST', '/categories', { name: 'Music' })
  const tag = await send('POST', '/tags', { name: 'Outdoor' })
  const venue = await send('POST', '/venues', { venue: 'Hall' })
  const event = await send('POST', '/events', { title: 'Gig', start_date: '2026-07-01 20:00:00', end_date: '2026-07-01 22:00:00', categories: [category.id], tags: [tag.id], venue: [venue.id] })
  const all = await changes()
  // Publishing the event moved the terms' counts: they changed after their creation, and after the event.
  t.same(summary(all.changes), [`created venues ${venue.id}`, `created events ${event.id}`, `created categories ${category.id}`, `created tags ${tag.id}`])
  for (const change of all.changes) {
    const res = await inject({ url: `${API}/${change.resource}/${change.id}` })
    const { json_ld: _, ...listShape } = res.json<Record<string, unknown>>()
    t.same(change.record, listShape, `${change.resource} ${change.id}: the record as GET shows it, without json_ld`)
    t.equal(change.rest_url, `${API_URL}/${change.resource}/${change.id}`)
    t.equal(change.modified_utc, '2026-06-15 12:00:00')
  }
  t.equal(all.has_more, false)
  await send('PATCH', `/events/${event.id}`, { title: 'Gig, moved' })
  const after = await changes(`since=${all.next_cursor}`)
  t.same(summary(after.changes), [`updated events ${event.id}`], 'only what changed after the cursor')
  t.equal((after.changes[0]?.record as { title?: string } | undefined)?.title, 'Gig, moved')
  const again = await changes()
  t.same(summary(again.changes), [`created venues ${venue.id}`, `created categories ${category.id}`, `created tags ${tag.id}`, `created events ${event.id}`],
    'from the start, the event appears once, at its latest change')
  t.equal(again.changes.at(-1)?.cursor, again.next_cursor, 'the cursor of the last entry is the next cursor')
})

t.test('cursors page through every change exactly once; per_page is clamped to 500', async (t) => {
  const { send, changes, walk, summary } = await setup(t)
  const ids: number[] = []
  for (let i = 0; i < 7; i++) ids.push((await send('POST', '/tags', { name: `Tag ${i}` })).id)
  const pages: string[][] = []
  let cursor: string | undefined
  for (;;) {
    const page = await changes(['per_page=3', cursor === undefined ? '' : `since=${cursor}`].filter((p) => p !== '').join('&'))
    pages.push(summary(page.changes))
    cursor = page.next_cursor
    if (!page.has_more) break
  }
  t.same(pages, [ids.slice(0, 3), ids.slice(3, 6), ids.slice(6)].map((p) => p.map((id) => `created tags ${id}`)))
  t.same(summary((await walk(undefined, 'per_page=1')).changes), ids.map((id) => `created tags ${id}`))
  t.equal((await changes('per_page=100000')).changes.length, 7, 'a large per_page is clamped, not refused')
  for (const bad of ['per_page=0', 'per_page=-1', 'per_page=x']) expectError(t, await (await setup(t)).inject({ url: `${API}/changes?${bad}` }), 400, 'rest_invalid_param', ['per_page'])
})

t.test('resource filters changes (all three array forms); an unknown resource, or none, is 400', async (t) => {
  const { send, changes, summary, inject } = await setup(t)
  const tag = await send('POST', '/tags', { name: 'Jazz' })
  const venue = await send('POST', '/venues', { venue: 'Club' })
  const organizer = await send('POST', '/organizers', { organizer: 'Crew' })
  t.same(summary((await changes('resource=venues')).changes), [`created venues ${venue.id}`])
  t.same(summary((await changes('resource=tags,organizers')).changes), [`created tags ${tag.id}`, `created organizers ${organizer.id}`])
  t.same(summary((await changes('resource[]=tags&resource[]=venues')).changes), [`created tags ${tag.id}`, `created venues ${venue.id}`])
  t.same(summary((await changes('resource=organizers&resource=venues')).changes), [`created venues ${venue.id}`, `created organizers ${organizer.id}`])
  expectError(t, await inject({ url: `${API}/changes?resource=users` }), 400, 'rest_invalid_param', ['resource'])
  // An empty list is refused like any other value that is not one (CONTRACT §1: none is silently dropped).
  for (const empty of ['resource=', 'resource[]=', 'resource=,']) expectError(t, await inject({ url: `${API}/changes?${empty}` }), 400, 'rest_invalid_param', ['resource'])
})

t.test('ml_language keeps the changes of records in that language; a translation changes the record it translates', async (t) => {
  const { send, changes, summary } = await setup(t)
  const en = await send('POST', '/venues', { venue: 'Opera' })
  const cursor = (await changes()).next_cursor
  const de = await send('POST', '/venues', { venue: 'Oper', ml_language: 'de', translation_of: en.id })
  t.same(summary((await changes('ml_language=de')).changes), [`created venues ${de.id}`])
  t.same(summary((await changes(`since=${cursor}`)).changes), [`updated venues ${en.id}`, `created venues ${de.id}`],
    'the English version changed too: its translations name the German one')
  const en2 = (await changes(`since=${cursor}&ml_language=en`)).changes[0]
  t.same((en2?.record as { translations?: unknown } | undefined)?.translations, { en: en.id, de: de.id })
  expectError(t, await (await setup(t)).inject({ url: `${API}/changes?ml_language=fr` }), 400, 'rest_invalid_param', ['ml_language'])
})

t.test('visibility: what a caller could not read is left out; becoming readable is created, no longer readable is deleted', async (t) => {
  const { send, changes, summary, editor, auth } = await setup(t)
  const contributor = await auth('contributor')
  const draft = await send('POST', '/events', { title: 'Draft', status: 'draft', start_date: '2026-07-01 20:00:00', end_date: '2026-07-01 22:00:00' })
  const mine = await send('POST', '/venues', { venue: 'My place' }, contributor)
  t.same(summary((await changes()).changes), [], 'anonymous: neither a draft event nor a contributor\'s draft venue')
  t.same(summary((await changes('', editor)).changes), [`created events ${draft.id}`, `created venues ${mine.id}`], 'an editor sees both')
  t.same(summary((await changes('', contributor)).changes), [`created venues ${mine.id}`], 'a contributor sees its own')
  const anonymous = (await changes()).next_cursor
  const asEditor = (await changes('', editor)).next_cursor
  await send('PATCH', `/events/${draft.id}`, { status: 'publish' })
  t.same(summary((await changes(`since=${anonymous}`)).changes), [`created events ${draft.id}`], 'published: new to anonymous callers')
  t.same(summary((await changes(`since=${asEditor}`, editor)).changes), [`updated events ${draft.id}`], 'an update to an editor')
  const published = (await changes()).next_cursor
  await send('DELETE', `/events/${draft.id}`, undefined)
  const trashed = await changes(`since=${published}`)
  t.same(summary(trashed.changes), [`deleted events ${draft.id}`], 'trashed: deleted')
  t.equal(trashed.changes[0]?.record, undefined, 'a deleted entry has no record')
  t.same(summary((await changes(`since=${trashed.next_cursor}`)).changes), [])
  const editorBefore = (await changes('', editor)).next_cursor
  await send('DELETE', `/events/${draft.id}?force=true`, undefined)
  t.same(summary((await changes(`since=${trashed.next_cursor}`)).changes), [], 'deleted for good: no news to callers told of the trash')
  t.same(summary((await changes(`since=${editorBefore}`, editor)).changes), [], 'nor to an editor: a trashed event was unreadable already')
  t.same(summary((await changes(`since=${anonymous}`)).changes), [], 'published and deleted since the cursor: nothing to tell an anonymous caller')
})

t.test('links: linking changes the event; renaming a venue changes only the venue; deletes unlink and change the events', async (t) => {
  const { send, changes, summary } = await setup(t)
  const venue = await send('POST', '/venues', { venue: 'Hall' })
  const tag = await send('POST', '/tags', { name: 'Late' })
  const event = await send('POST', '/events', { title: 'Show', start_date: '2026-07-01 20:00:00', end_date: '2026-07-01 22:00:00' })
  let cursor = (await changes()).next_cursor
  const step = async () => {
    const page = await changes(`since=${cursor}`)
    cursor = page.next_cursor
    return summary(page.changes)
  }
  await send('PATCH', `/events/${event.id}`, { venue: [venue.id], tags: [tag.id] })
  t.same(await step(), [`updated events ${event.id}`, `updated tags ${tag.id}`], 'linked: the event, and the count of its tag')
  await send('PATCH', `/venues/${venue.id}`, { venue: 'Great Hall' })
  t.same(await step(), [`updated venues ${venue.id}`], 'renamed: the venue only')
  await send('PATCH', `/events/${event.id}`, { title: 'Show' })
  await send('DELETE', `/venues/${venue.id}?force=true`, undefined)
  t.same(await step(), [`deleted venues ${venue.id}`, `updated events ${event.id}`], 'the venue is gone, the event lost it')
  await send('DELETE', `/tags/${tag.id}`, undefined)
  t.same(await step(), [`deleted tags ${tag.id}`, `updated events ${event.id}`], 'the tag is gone, the event lost it')
  const inline = await send('PATCH', `/events/${event.id}`, { organizer: [{ organizer: 'New crew' }] }) as unknown as { organizer: Array<{ id: number }> }
  t.same(await step(), [`updated events ${event.id}`, `created organizers ${inline.organizer[0]?.id}`], 'an inline organizer is created with the event change')
  const trashedVenue = await send('POST', '/venues', { venue: 'Shed' })
  await step()
  await send('DELETE', `/venues/${trashedVenue.id}`, undefined)
  const editorView = await changes(`since=${cursor}`, (await (async () => ({}))()))
  t.same(summary(editorView.changes), [`deleted venues ${trashedVenue.id}`], 'a trashed venue: deleted for anonymous callers')
})

t.test('a refused write appends nothing; keys are not logged', async (t) => {
  const built = await setup(t)
  const before = (await rows(built)).length
  const res = await built.inject({ method: 'POST', url: `${API}/events`, headers: built.editor, payload: { title: 'Bad', start_date: '2026-07-02 10:00:00', end_date: '2026-07-01 10:00:00', venue: [{ venue: 'Inline' }] } })
  expectError(t, res, 400, 'rest_invalid_param', ['end_date'])
  await built.auth('author')
  t.equal((await rows(built)).length, before, 'no entry for a refused write, none for a new key')
})

t.test('entries keep language, status and author as the write left them', async (t) => {
  const built = await setup(t)
  const author = await built.auth('author')
  const venue = await built.send('POST', '/venues', { venue: 'Stage', status: 'draft', ml_language: 'de' }, author)
  await built.send('DELETE', `/venues/${venue.id}`, undefined, author)
  const entries = (await rows(built)).map((r) => [r.resource, r.record_id, r.language, r.action, r.status, r.author])
  t.same(entries, [['venues', venue.id, 'de', 'created', 'draft', 2], ['venues', venue.id, 'de', 'updated', 'trash', 2]])
  t.ok((await rows(built)).every((r, i, all) => i === 0 || Number(r.position) > Number(all[i - 1]?.position)), 'positions grow')
})

t.test('malformed cursors and cursors ahead of the log are 400', async (t) => {
  const { inject } = await setup(t)
  for (const bad of ['abc', 'djE6', '%00', 'v1:3', Buffer.from('v1:01').toString('base64url'), Buffer.from('v2:3').toString('base64url'), 'x'.repeat(300), '']) {
    const res = await inject({ url: `${API}/changes?since=${encodeURIComponent(bad)}` })
    expectError(t, res, 400, 'rest_invalid_param', ['since'])
  }
  expectError(t, await inject({ url: `${API}/changes?since=${cursorOf(99)}` }), 400, 'rest_invalid_param', ['since'])
  expectError(t, await inject({ url: `${API}/changes?since=${cursorOf(0, { origin: 0, horizon: 5 })}` }), 400, 'rest_invalid_param', ['since'])
})

t.test('a walk whose last page comes after a newer change says has_more, and its next page holds that change', async (t) => {
  const { send, changes, walk, summary } = await setup(t)
  const tags: number[] = []
  for (let i = 0; i < 3; i++) tags.push((await send('POST', '/tags', { name: `Tag ${i}` })).id)
  const first = await changes('per_page=2')
  t.ok(first.has_more)
  const venue = await send('POST', '/venues', { venue: 'Written during the walk' })
  const second = await changes(`per_page=2&since=${first.next_cursor}`)
  t.same(summary(second.changes), [`created tags ${tags[2] ?? 0}`], 'the walk keeps its horizon')
  t.equal(second.has_more, true, 'a newer change exists: not the end')
  const third = await changes(`per_page=2&since=${second.next_cursor}`)
  t.same(summary(third.changes), [`created venues ${venue.id}`])
  t.equal(third.has_more, false)
  t.same(await changes(`since=${third.next_cursor}`), { changes: [], next_cursor: third.next_cursor, has_more: false }, 'drained')

  const before = (await changes('since=now')).next_cursor
  const own = await send('POST', '/organizers', { organizer: 'My write' })
  t.same(summary((await walk(before, 'per_page=1')).changes), [`created organizers ${own.id}`], 'a writer draining sees its write')
})

t.test('retention: cursors older than what is kept are 410; since=now and the oldest kept go on', async (t) => {
  let now = NOW
  const built = await setup(t, () => now)
  const old = (await built.changes()).next_cursor
  const first = await built.send('POST', '/tags', { name: 'Old' })
  const afterFirst = (await built.changes()).next_cursor
  now = new Date(NOW.getTime() + 10 * 86_400_000)
  const second = await built.send('POST', '/tags', { name: 'Newer' })
  const kept = (await built.changes()).next_cursor
  now = new Date(NOW.getTime() + 20 * 86_400_000)
  await built.send('POST', '/tags', { name: 'Newest' })
  t.equal(await pruneExpiredChanges(built.db, now, 15), 1, 'the entry older than 15 days')
  t.equal(await pruneExpiredChanges(built.db, now, 15), 0, 'nothing left to prune')
  expectError(t, await built.inject({ url: `${API}/changes?since=${old}` }), 410, 'rest-changes-cursor-expired')
  t.same(built.summary((await built.changes(`since=${afterFirst}`)).changes).length, 2, 'a cursor at the last pruned entry lost nothing: still valid')
  t.same(built.summary((await built.changes()).changes).length, 2, 'without since: from the oldest kept')
  t.same(built.summary((await built.changes(`since=${kept}`)).changes).length, 1)
  t.same((await built.changes('since=now')).changes, [])
  t.not(first.id, second.id)
  now = new Date(NOW.getTime() + 100 * 86_400_000)
  t.equal(await pruneExpiredChanges(built.db, now, 15), 1, 'the newest entry always stays')
  const end = await built.changes()
  t.same(end.changes.length, 1)
  t.same((await built.changes(`since=${end.next_cursor}`)).changes, [], 'an up-to-date cursor stays valid')
})

t.test('modified_after and modified_before on events, venues and organizers: exact instants, carried in rest_url as instants', async (t) => {
  let now = NOW
  const built = await setup(t, () => now)
  const at = (hours: number) => new Date(NOW.getTime() + hours * 3_600_000)
  const made: Record<string, number[]> = { events: [], venues: [], organizers: [] }
  for (const hours of [0, 1, 2]) {
    now = at(hours)
    made.events?.push((await built.send('POST', '/events', { title: `E${hours}`, start_date: '2026-07-01 20:00:00', end_date: '2026-07-01 22:00:00' })).id)
    made.venues?.push((await built.send('POST', '/venues', { venue: `V${hours}` })).id)
    made.organizers?.push((await built.send('POST', '/organizers', { organizer: `O${hours}` })).id)
  }
  for (const collection of ['events', 'venues', 'organizers'] as const) {
    const list = async (query: string) => {
      const res = await built.inject({ url: `${API}/${collection}?${query}` })
      t.equal(res.statusCode, 200, `${collection}?${query}`)
      const body = res.json<Record<string, unknown>>()
      return { ids: (body[collection] as Array<{ id: number }>).map((r) => r.id).sort((a, b) => a - b), restUrl: String(body.rest_url) }
    }
    const ids = made[collection] ?? []
    t.same((await list('modified_after=2026-06-15T12:00:00Z')).ids, ids.slice(1), `${collection}: after is exclusive`)
    t.same((await list('modified_before=2026-06-15 14:00:00')).ids, ids.slice(0, 2), `${collection}: before is exclusive, wall time in the site zone`)
    const both = await list('modified_after=2026-06-15T12:30:00Z&modified_before=2026-06-15T13:30:00%2B00:00')
    t.same(both.ids, ids.slice(1, 2))
    t.match(both.restUrl, /modified_after=2026-06-15T12%3A30%3A00%2B00%3A00/, 'rest_url carries the instant it stood for, with its offset (CONTRACT §3)')
    t.same((await list('modified_after=2026-06-15')).ids, ids, 'a day alone is its 00:00:00, then exact')
    t.same((await list('modified_before=2026-06-15')).ids, [], 'nothing before that day began')
    for (const name of ['modified_after', 'modified_before']) {
      expectError(t, await built.inject({ url: `${API}/${collection}?${name}=soon` }), 400, 'rest_invalid_param', [name])
    }
  }
})
