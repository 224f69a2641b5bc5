/**
 * The statements of a date window's list compiled once per shape (repositories/event-filters.ts `windowStatement`):
 * for every shape a window list may have (which of the date bounds, `post_parent`, `modified_*` are present, the
 * scope's kind and number of statuses, `featured` true, false or absent, `hide_subsequent_recurrences`), two filters
 * of the same shape with different values give exactly the text and the values the query builder gives for each
 * (`eventCountQuery`, `eventIdsQuery`, `windowMatchesQuery`), on the engine the tests run; the lists a prepared text
 * cannot serve (links, search, `include`, `geoloc`) are not served by one. The answers themselves are compared with
 * an app without cache in test/list-recheck.test.ts, and the plans in test/query-plans.test.ts.
 */
import t from 'tap'
import type { CompiledQuery } from 'kysely'
import { eventCountQuery, eventIdsQuery, windowMatchesQuery, windowStatement, type EventFilter } from '../src/repositories/event-filters.js'
import type { ListScope } from '../src/lib/rights.js'
import { openTestDatabase } from './helpers/database.js'

const BOUNDS = ['startGte', 'endLte', 'startGt', 'startLt', 'endGt', 'endLt', 'postParent', 'modifiedAfter', 'modifiedBefore'] as const

/** A filter of the shape `mask` (a bit per bound of BOUNDS, then the scope, `featured`, `hide_subsequent_recurrences`), its values from `n`. */
function filterOf(mask: number, scopeKind: number, featured: number, hide: boolean, n: number): EventFilter {
  const scopes: ListScope[] = [
    { kind: 'all', statuses: ['publish'] },
    { kind: 'all', statuses: n % 2 === 0 ? ['publish', 'draft'] : ['draft', 'private'] },
    { kind: 'published-or-own', statuses: ['publish', 'draft', 'private'], owner: 10 + n },
  ]
  const f: EventFilter = { language: n % 2 === 0 ? 'en' : 'de', scope: scopes[scopeKind] as ListScope }
  const values: Record<(typeof BOUNDS)[number], string | number> = {
    startGte: `2026-0${1 + n}-01 00:00:00`, endLte: `2026-0${2 + n}-28 23:59:59`, startGt: `2026-0${1 + n}-02 10:00:00`,
    startLt: `2026-0${3 + n}-01 00:00:00`, endGt: `2026-0${1 + n}-03 00:00:00`, endLt: `2026-0${4 + n}-01 00:00:00`,
    postParent: 100 + n, modifiedAfter: `2025-0${1 + n}-01 00:00:00`, modifiedBefore: `2027-0${1 + n}-01 00:00:00`,
  }
  const filter = f as unknown as Record<string, unknown>
  BOUNDS.forEach((name, bit) => {
    if ((mask & (1 << bit)) !== 0) filter[name] = values[name]
  })
  if (featured > 0) f.featured = featured === 1
  if (hide) f.hideSubsequent = true
  return f
}

const of = (q: CompiledQuery) => ({ sql: q.sql, parameters: q.parameters }) as unknown

t.test('a window statement is the built statement, shape by shape, with each read\'s values', async (t) => {
  const handle = await openTestDatabase(t)
  t.teardown(() => handle.close())
  const db = handle.db
  let shapes = 0
  // Every single bound, pairs of the date bounds, and every bound together, under each scope, featured and hiding.
  const masks = [0, ...BOUNDS.map((_, bit) => 1 << bit), 0b11, 0b101, 0b1001, 0b10010, 0b110000, 0b111000000, (1 << BOUNDS.length) - 1]
  for (const mask of masks) {
    for (const scopeKind of [0, 1, 2]) {
      for (const featured of [0, 1, 2]) {
        for (const hide of [false, true]) {
          shapes++
          for (const n of [0, 1]) {
            const f = filterOf(mask, scopeKind, featured, hide, n)
            const count = windowStatement(f, 'count')
            const page = windowStatement(f, 'page')
            const matches = windowStatement(f, 'matches')
            if (count === undefined || page === undefined || matches === undefined) {
              t.fail(`no window statement for ${JSON.stringify(f)}`)
              continue
            }
            const label = JSON.stringify(f)
            t.same(of(count(db, [])), of(eventCountQuery(db, f, false).compile()), `count ${label}`)
            t.same(of(page(db, [20 + n, 10])), of(eventIdsQuery(db, f, 20 + n, 10, 1000, false).compile()), `page ${label}`)
            t.same(of(matches(db, [7 + n])), of(windowMatchesQuery(db, f, 7 + n).compile()), `matches ${label}`)
            // And it runs, as the built one does.
            t.same((await db.executeQuery(count(db, []))).rows.map((r) => Number(r.n)), [0])
            t.same((await db.executeQuery(page(db, [0, 10]))).rows, [])
          }
        }
      }
    }
  }
  t.ok(shapes > 100, `${shapes} shapes`)
})

t.test('lists a prepared text cannot serve are built as before', async (t) => {
  const base = filterOf(0b11, 0, 0, false, 0)
  for (const f of [
    { ...base, search: 'jazz' }, { ...base, search: '' }, { ...base, include: [1, 2] }, { ...base, categories: [3] }, { ...base, tags: [4] },
    { ...base, venues: [5] }, { ...base, organizers: [6] }, { ...base, hasGeo: true }, { ...base, near: { lat: 1, lng: 2, km: 3 } },
    { ...base, scope: { kind: 'refused' } as ListScope },
  ]) {
    for (const kind of ['count', 'page', 'matches'] as const) t.equal(windowStatement(f, kind), undefined, `${kind} ${JSON.stringify(f)}`)
  }
})
