/**
 * The outbox's intake (CONTRACT §13) against an oracle: random subscriptions (any patterns of the closed
 * list, active or not) and random writes of every resource, some of which change several records at
 * once (an event with a new venue and organizer inline; a venue's delete, which updates its events);
 * afterwards the pending deliveries are exactly, column for column, the changes of the log paired with
 * each active subscription that wants their type, as this file decides it from the contract's words: the
 * change's action as an administrator is told of it (§13, "as in §12"), so an update that trashed a record
 * is `deleted` and one that took it out of the trash `created`.
 */
import fc from 'fast-check'
import t from 'tap'
import { API, build } from './helpers/build.js'

const PATTERNS = ['*', 'event.*', 'event.created', 'event.updated', 'event.deleted', 'venue.*', 'venue.created', 'venue.updated',
  'venue.deleted', 'organizer.*', 'organizer.created', 'organizer.updated', 'organizer.deleted', 'category.*', 'category.created',
  'category.updated', 'category.deleted', 'tag.*', 'tag.created', 'tag.updated', 'tag.deleted']
const SINGULAR: Record<string, string> = { events: 'event', venues: 'venue', organizers: 'organizer', categories: 'category', tags: 'tag' }

/** The oracle: `<resource>.<action>` is wanted by `*`, by itself and by `<resource>.*`. */
function wants(patterns: readonly string[], type: string): boolean {
  const [resource] = type.split('.')
  return patterns.includes('*') || patterns.includes(type) || patterns.includes(`${resource}.*`)
}

type Write =
  | { kind: 'create'; path: 'tags' | 'categories' | 'venues' | 'organizers' | 'events' }
  | { kind: 'update' | 'delete'; path: 'tags' | 'categories' | 'venues' | 'organizers' | 'events'; pick: number }
  | { kind: 'trash' | 'restore'; path: 'venues' | 'organizers' | 'events'; pick: number }

const PATHS = ['tags', 'categories', 'venues', 'organizers', 'events'] as const
const write: fc.Arbitrary<Write> = fc.oneof(
  fc.record({ kind: fc.constant('create' as const), path: fc.constantFrom(...PATHS) }),
  fc.record({ kind: fc.constantFrom('update' as const, 'delete' as const), path: fc.constantFrom(...PATHS), pick: fc.nat() }),
  fc.record({ kind: fc.constantFrom('trash' as const, 'restore' as const), path: fc.constantFrom('venues' as const, 'organizers' as const, 'events' as const), pick: fc.nat() }),
)
const subscription = fc.record({ events: fc.uniqueArray(fc.constantFrom(...PATTERNS), { minLength: 1, maxLength: 4 }), active: fc.boolean() })

t.test('pending deliveries are the log paired with the active subscriptions that want each change', async (t) => {
  const s = await build(t, { config: { webhooks: { retrySchedule: [1000], disableAfter: 10, allowPrivate: true } } })
  const headers = await s.auth('administrator')
  let serial = 0
  const body = (path: Write['path']): Record<string, unknown> => {
    serial += 1
    if (path === 'venues') return { venue: `Venue ${serial}` }
    if (path === 'organizers') return { organizer: `Organizer ${serial}` }
    if (path === 'events') {
      return { title: `Event ${serial}`, start_date: '2026-07-01 10:00:00', end_date: '2026-07-01 12:00:00', venue: [{ venue: `Inline venue ${serial}` }], organizer: [{ organizer: `Inline organizer ${serial}` }] }
    }
    return { name: `Term ${serial}` }
  }
  const call = async (method: 'POST' | 'PATCH' | 'DELETE', path: string, payload?: Record<string, unknown>) => {
    const res = await s.inject({ method, url: `${API}/${path}`, headers, ...(payload !== undefined ? { payload } : {}) })
    if (res.statusCode >= 300) throw new Error(`${method} ${path}: ${res.statusCode} ${res.body.slice(0, 200)}`)
    return res
  }

  let cases = 0
  await fc.assert(fc.asyncProperty(fc.array(subscription, { minLength: 1, maxLength: 5 }), fc.array(write, { minLength: 1, maxLength: 12 }), async (subscriptions, writes) => {
    cases += 1
    await s.db.deleteFrom('webhook_deliveries').execute()
    await s.db.deleteFrom('webhooks').execute()
    const made: Array<{ id: number; events: string[]; active: boolean }> = []
    for (const wanted of subscriptions) {
      const res = await call('POST', 'webhooks', { url: 'https://receiver.example.com/hook', events: wanted.events, active: wanted.active })
      made.push({ ...wanted, id: res.json<{ id: number }>().id })
    }
    const { head } = await s.db.selectFrom('changes').select((eb) => eb.fn.coalesce(eb.fn.max('position'), eb.lit(0)).as('head')).executeTakeFirstOrThrow()
    const live: Record<Write['path'], number[]> = { tags: [], categories: [], venues: [], organizers: [], events: [] }
    const trashed: Record<Write['path'], number[]> = { tags: [], categories: [], venues: [], organizers: [], events: [] }
    for (const step of writes) {
      if (step.kind === 'create') {
        live[step.path].push((await call('POST', step.path, body(step.path))).json<{ id: number }>().id)
        continue
      }
      if (step.kind === 'trash' || step.kind === 'restore') {
        const [from, to] = step.kind === 'trash' ? [live[step.path], trashed[step.path]] : [trashed[step.path], live[step.path]]
        if (from.length === 0) continue
        const id = from[step.pick % from.length] as number
        if (step.kind === 'trash') await call('DELETE', `${step.path}/${id}`)
        else await call('PATCH', `${step.path}/${id}`, { status: 'publish' })
        from.splice(from.indexOf(id), 1)
        to.push(id)
        continue
      }
      const ids = live[step.path]
      if (ids.length === 0) continue
      const id = ids[step.pick % ids.length] as number
      if (step.kind === 'update') {
        const payload = step.path === 'events' ? { title: `Renamed ${serial += 1}` } : step.path === 'venues' ? { venue: `Renamed ${serial += 1}` }
          : step.path === 'organizers' ? { organizer: `Renamed ${serial += 1}` } : { description: `Described ${serial += 1}` }
        await call('PATCH', `${step.path}/${id}`, payload)
      } else {
        // Events and linked records go to the trash first; force deletes them.
        await call('DELETE', `${step.path}/${id}${step.path === 'tags' || step.path === 'categories' ? '' : '?force=true'}`)
        ids.splice(ids.indexOf(id), 1)
      }
    }
    const log = await s.db.selectFrom('changes').selectAll().orderBy('position').execute()
    const changes = log.filter((change) => Number(change.position) > Number(head))
    const expected = changes.flatMap((change) => {
      const before = log.filter((p) => p.resource === change.resource && p.record_id === change.record_id && Number(p.position) < Number(change.position)).at(-1)
      const action = change.action !== 'updated' ? change.action : change.status === 'trash' ? 'deleted' : before?.status === 'trash' ? 'created' : 'updated'
      const type = `${SINGULAR[change.resource]}.${action}`
      return made.filter((m) => m.active && wants(m.events, type)).map((m) => ({
        webhook_id: m.id, position: Number(change.position), type, resource: change.resource, record_id: change.record_id,
        language: change.language, changed_utc: change.changed_utc, status: 'pending', attempts: 0,
      }))
    })
    const rows = await s.db.selectFrom('webhook_deliveries')
      .select(['webhook_id', 'position', 'type', 'resource', 'record_id', 'language', 'changed_utc', 'status', 'attempts']).execute()
    const key = (d: { webhook_id: number; position: number | string }) => `${d.webhook_id}:${d.position}`
    const sorted = <T extends { webhook_id: number; position: number | string }>(list: T[]) => [...list].sort((a, b) => key(a).localeCompare(key(b)))
    t.strictSame(sorted(rows.map((r) => ({ ...r, position: Number(r.position) }))), sorted(expected))
    return true
  }), { numRuns: 40, seed: 20261126 })
  t.equal(cases, 40)
})
