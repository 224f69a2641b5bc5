/**
 * ETags name the version of everything an answer shows (CONTRACT §5): an event's ETag changes when a
 * venue, organizer or term it shows changes (renamed, deleted and so unlinked), a term's when its
 * count moves; records nothing touched keep theirs; a 304 never hides a changed body.
 */
import fc from 'fast-check'
import t, { type Test } from 'tap'
import { API, build } from './helpers/build.js'

async function setup(t: Test) {
  const built = await build(t)
  const editor = await built.auth('editor')
  const send = async (method: 'POST' | 'PATCH' | 'DELETE', path: string, payload?: Record<string, unknown>) => {
    const res = await built.inject({ method, url: `${API}${path}`, headers: editor, ...(payload === undefined ? {} : { payload }) })
    t.ok(res.statusCode < 300, `${method} ${path}: ${res.statusCode}`)
    return res.json<{ id: number }>()
  }
  const read = async (path: string) => {
    const res = await built.inject({ url: `${API}${path}` })
    return { status: res.statusCode, etag: String(res.headers.etag), body: res.body }
  }
  /** Reading with the ETag seen last: 304 exactly when the body is the one that ETag was given with. */
  const revalidate = async (path: string, before: { etag: string; body: string }) => {
    const res = await built.inject({ url: `${API}${path}`, headers: { 'if-none-match': before.etag } })
    return res.statusCode
  }
  return { ...built, send, read, revalidate }
}

const EVENT = { start_date: '2026-07-01 20:00:00', end_date: '2026-07-01 22:00:00' }

t.test('an event\'s ETag changes with the venue, organizer and terms it shows', async (t) => {
  const s = await setup(t)
  const venue = await s.send('POST', '/venues', { venue: 'Hall' })
  const organizer = await s.send('POST', '/organizers', { organizer: 'Crew' })
  const category = await s.send('POST', '/categories', { name: 'Rock' })
  const tag = await s.send('POST', '/tags', { name: 'Loud' })
  const event = await s.send('POST', '/events', { title: 'Gig', ...EVENT, venue: [venue.id], organizer: [organizer.id], categories: [category.id], tags: [tag.id] })
  const path = `/events/${event.id}`
  const steps: Array<[string, () => Promise<unknown>]> = [
    ['the venue renamed', () => s.send('PATCH', `/venues/${venue.id}`, { venue: 'Great Hall' })],
    ['the organizer renamed', () => s.send('PATCH', `/organizers/${organizer.id}`, { organizer: 'Big Crew' })],
    ['the category renamed', () => s.send('PATCH', `/categories/${category.id}`, { name: 'Hard Rock' })],
    ['the tag\'s count moved by another event', () => s.send('POST', '/events', { title: 'Other', ...EVENT, tags: [tag.id] })],
    ['the venue deleted for good (unlinked)', () => s.send('DELETE', `/venues/${venue.id}?force=true`)],
    ['the tag deleted (unlinked)', () => s.send('DELETE', `/tags/${tag.id}`)],
  ]
  let before = await s.read(path)
  for (const [what, step] of steps) {
    await step()
    t.equal(await s.revalidate(path, before), 200, `${what}: the old ETag no longer matches`)
    const after = await s.read(path)
    t.not(after.body, before.body, `${what}: the body changed`)
    t.not(after.etag, before.etag, `${what}: and so did the ETag`)
    t.equal(await s.revalidate(path, after), 304, 'the new ETag matches')
    before = after
  }
})

t.test('a term\'s ETag changes when its count moves, by id and for every caller alike', async (t) => {
  const s = await setup(t)
  const category = await s.send('POST', '/categories', { name: 'Jazz' })
  const path = `/categories/${category.id}`
  const empty = await s.read(path)
  const event = await s.send('POST', '/events', { title: 'Session', ...EVENT, categories: [category.id] })
  const one = await s.read(path)
  t.not(one.etag, empty.etag, 'linked to a published event: count 0 → 1')
  t.equal(await s.revalidate(path, empty), 200)
  await s.send('DELETE', `/events/${event.id}`)
  const trashed = await s.read(path)
  t.not(trashed.etag, one.etag, 'the event trashed: count 1 → 0')
  t.not(trashed.etag, empty.etag, 'not the ETag it had before, though the body is the same again')
  const asEditor = await s.inject({ url: `${API}${path}`, headers: { 'if-none-match': trashed.etag } })
  t.equal(asEditor.statusCode, 304)
})

t.test('a property: random changes of linked records change the ETag of every record whose answer changed', async (t) => {
  const s = await setup(t)
  const venues = [await s.send('POST', '/venues', { venue: 'V0' }), await s.send('POST', '/venues', { venue: 'V1' })]
  const tags = [await s.send('POST', '/tags', { name: 'T0' }), await s.send('POST', '/tags', { name: 'T1' })]
  const events = [
    await s.send('POST', '/events', { title: 'E0', ...EVENT, venue: [venues[0]?.id], tags: [tags[0]?.id] }),
    await s.send('POST', '/events', { title: 'E1', ...EVENT, venue: [venues[1]?.id], tags: [tags[1]?.id] }),
    await s.send('POST', '/events', { title: 'E2', ...EVENT }),
  ]
  const paths = [...events.map((e) => `/events/${e.id}`), ...venues.map((v) => `/venues/${v.id}`), ...tags.map((g) => `/tags/${g.id}`)]
  let n = 0
  const step = fc.oneof(
    fc.record({ kind: fc.constant('venue' as const), i: fc.nat(1) }),
    fc.record({ kind: fc.constant('tag' as const), i: fc.nat(1) }),
    fc.record({ kind: fc.constant('link' as const), i: fc.nat(2), v: fc.nat(1) }),
    fc.record({ kind: fc.constant('status' as const), i: fc.nat(2), publish: fc.boolean() }),
  )
  await fc.assert(fc.asyncProperty(fc.array(step, { minLength: 1, maxLength: 6 }), async (plan) => {
    for (const move of plan) {
      const before = await Promise.all(paths.map((p) => s.read(p)))
      n += 1
      if (move.kind === 'venue') await s.send('PATCH', `/venues/${venues[move.i]?.id}`, { venue: `V${move.i} ${n}` })
      if (move.kind === 'tag') await s.send('PATCH', `/tags/${tags[move.i]?.id}`, { name: `T${move.i} ${n}` })
      if (move.kind === 'link') await s.send('PATCH', `/events/${events[move.i]?.id}`, { venue: [venues[move.v]?.id], tags: [tags[move.v]?.id] })
      if (move.kind === 'status') await s.send('PATCH', `/events/${events[move.i]?.id}`, { status: move.publish ? 'publish' : 'draft' })
      const after = await Promise.all(paths.map((p) => s.read(p)))
      for (const [k, path] of paths.entries()) {
        const [b, a] = [before[k], after[k]]
        if (b === undefined || a === undefined) continue
        // A changed body under an unchanged ETag is what must never happen: a cache would keep the old one.
        if (a.body !== b.body && a.etag === b.etag) {
          t.fail(`${path} after ${JSON.stringify(move)}: the body changed, the ETag did not`)
          return false
        }
      }
    }
    return true
  }), { seed: 20261125, numRuns: 25 })
  t.pass(`${n} changes, every changed body came with a new ETag`)
})
