/**
 * Instants, time-zone names and list windows around DST changes (issue 21, items 1, 4 and 5): an
 * instant written with an offset or `Z` is stored exactly, whatever the zone does at that moment
 * (CONTRACT §5); a zone name comes back exactly as sent (§2); a list's `rest_url` writes its window
 * as instants with their offsets, so that following it runs the same query in a DST overlap (§3).
 * The expected instants come from an oracle written here, independently of src/lib: `Date.parse` for
 * ISO strings with an offset, and `Intl.DateTimeFormat`'s `longOffset` names for the zones' offsets.
 */
import t from 'tap'
import fc from 'fast-check'
import { API } from './helpers/build.js'
import { eventsOf, restUrlOf, setup, type Event, type Setup } from './helpers/events.js'

const NY = 'America/New_York'

// ------------------------------------------------------------------------------------------ oracle

const offsetFormatters = new Map<string, Intl.DateTimeFormat>()

/** The zone's UTC offset at an instant, in minutes, read from ICU's `GMT±HH:MM` name. */
function oracleOffsetMinutes(zone: string, ms: number): number {
  let f = offsetFormatters.get(zone)
  if (f === undefined) {
    f = new Intl.DateTimeFormat('en-US', { timeZone: zone, timeZoneName: 'longOffset', year: 'numeric' })
    offsetFormatters.set(zone, f)
  }
  const name = f.formatToParts(ms).find((p) => p.type === 'timeZoneName')?.value ?? 'GMT'
  const m = /^GMT(?:([+-])(\d{2}):(\d{2})(?::(\d{2}))?)?$/.exec(name)
  if (m === null) throw new Error(`unexpected offset name ${name}`)
  if (m[1] === undefined) return 0
  const minutes = Number(m[2]) * 60 + Number(m[3]) + Number(m[4] ?? 0) / 60
  return m[1] === '-' ? -minutes : minutes
}

/** `YYYY-MM-DD HH:MM:SS` of the UTC fields of ms. */
function utcText(ms: number): string {
  return new Date(ms).toISOString().slice(0, 19).replace('T', ' ')
}

/** ISO 8601 of an instant written at a given offset (minutes), e.g. `2027-11-07T01:30:00-05:00`. */
function isoAt(ms: number, offsetMinutes: number): string {
  const wall = new Date(ms + offsetMinutes * 60_000).toISOString().slice(0, 19)
  const sign = offsetMinutes < 0 ? '-' : '+'
  const abs = Math.abs(offsetMinutes)
  return `${wall}${sign}${String(Math.floor(abs / 60)).padStart(2, '0')}:${String(abs % 60).padStart(2, '0')}`
}

/** Every instant (to the minute) in [from, to) at which the zone's offset changes, found by bisection. */
function transitions(zone: string, fromYear: number, toYear: number): number[] {
  const out: number[] = []
  const step = 6 * 3600_000
  let t0 = Date.UTC(fromYear, 0, 1)
  const end = Date.UTC(toYear, 0, 1)
  let before = oracleOffsetMinutes(zone, t0)
  while (t0 < end) {
    const t1 = t0 + step
    const after = oracleOffsetMinutes(zone, t1)
    if (after !== before) {
      let lo = t0
      let hi = t1
      while (hi - lo > 60_000) {
        const mid = lo + Math.floor((hi - lo) / 120_000) * 60_000
        if (oracleOffsetMinutes(zone, mid) === before) lo = mid
        else hi = mid
      }
      out.push(hi)
    }
    before = after
    t0 = t1
  }
  return out
}

// ------------------------------------------------------------------------------------------- item 1

async function createAt(s: Setup, start: string, end: string, timezone?: string): Promise<Event> {
  const res = await s.inject({
    method: 'POST', url: `${API}/events`, headers: s.editor,
    payload: { title: 'At', start_date: start, end_date: end, ...(timezone !== undefined ? { timezone } : {}) },
  })
  if (res.statusCode !== 201) throw new Error(`create ${start}: ${res.statusCode} ${res.body}`)
  return res.json<Event>()
}

t.test('item 1: an instant in the autumn overlap is stored exactly (Z, offset, site zone New York)', async (t) => {
  const s = await setup(t, { config: { timezone: NY } })
  const z = await createAt(s, '2027-11-07T06:30:00Z', '2027-11-07T07:00:00Z')
  t.equal(z.utc_start_date, '2027-11-07 06:30:00', 'Z: the second 01:30 (EST)')
  t.equal(z.utc_end_date, '2027-11-07 07:00:00')
  t.equal(z.start_date, '2027-11-07 01:30:00')
  const offset = await createAt(s, '2027-11-07T01:30:00-05:00', '2027-11-07T01:45:00-05:00')
  t.equal(offset.utc_start_date, '2027-11-07 06:30:00', '-05:00: the second 01:30')
  const read = await s.get(offset.id)
  const jsonLd = read.json<{ json_ld: { startDate: string } }>().json_ld
  t.equal(jsonLd.startDate, '2027-11-07T01:30:00-05:00', 'json_ld says -05:00')
  const first = await createAt(s, '2027-11-07T01:30:00-04:00', '2027-11-07T01:45:00-04:00')
  t.equal(first.utc_start_date, '2027-11-07 05:30:00', '-04:00: the first 01:30')
  const wall = await createAt(s, '2027-11-07 01:30:00', '2027-11-07 01:45:00')
  t.equal(wall.utc_start_date, '2027-11-07 05:30:00', 'a wall time without offset: its first occurrence (as before)')
})

t.test('item 1: Europe/Zurich, +01:00 in the overlap', async (t) => {
  const s = await setup(t, { config: { timezone: 'Europe/Zurich' } })
  const e = await createAt(s, '2027-10-31T02:30:00+01:00', '2027-10-31T02:45:00+01:00')
  t.equal(e.utc_start_date, '2027-10-31 01:30:00')
  t.equal(e.utc_end_date, '2027-10-31 01:45:00')
  const other = await createAt(s, '2027-10-31T02:30:00+01:00', '2027-10-31T02:45:00+01:00', 'Europe/Berlin')
  t.equal(other.utc_start_date, '2027-10-31 01:30:00', 'the same in an explicit zone')
  // An update that sends only end_date keeps the exact start instant.
  const patched = await s.patch(e.id, { end_date: '2027-10-31T03:00:00+01:00' })
  t.equal(patched.json<Event>().utc_start_date, '2027-10-31 01:30:00')
  t.equal(patched.json<Event>().utc_end_date, '2027-10-31 02:00:00')
})

const ZONES = ['America/New_York', 'Europe/Zurich', 'Australia/Lord_Howe', 'America/Santiago', 'Asia/Kolkata', 'Pacific/Chatham']

t.test('item 1: property: random instants at random offsets round-trip through create and read', async (t) => {
  const s = await setup(t, { config: { timezone: NY } })
  // Every DST change of the zones over ten years, and instants around it.
  const edges: number[] = []
  for (const zone of ZONES) {
    for (const at of transitions(zone, 2024, 2034)) edges.push(at - 3600_000, at - 1800_000, at - 60_000, at, at + 1800_000, at + 3600_000 - 60_000)
  }
  t.ok(edges.length > 200, `${edges.length} instants around DST changes`)
  const instant = fc.oneof(
    fc.integer({ min: Date.UTC(2024, 0, 1) / 60_000, max: Date.UTC(2034, 0, 1) / 60_000 }).map((m) => m * 60_000),
    fc.constantFrom(...edges),
  )
  const offset = fc.oneof(
    fc.integer({ min: -12 * 4, max: 14 * 4 }).map((q) => q * 15),
    fc.constantFrom(-300, -240, 60, 120, 330, 345, 630, 660, 765, 825),
  )
  const zone = fc.option(fc.constantFrom(...ZONES, 'UTC', 'Europe/Berlin'), { nil: undefined })
  let runs = 0
  await fc.assert(fc.asyncProperty(instant, offset, offset, zone, fc.integer({ min: 0, max: 180 }), async (start, startOffset, endOffset, tz, minutes) => {
    runs++
    const end = start + minutes * 60_000
    const created = await createAt(s, isoAt(start, startOffset), isoAt(end, endOffset), tz)
    const read = (await s.get(created.id)).json<Event>()
    for (const record of [created, read]) {
      if (record.utc_start_date !== utcText(start) || record.utc_end_date !== utcText(end)) return false
      const zoneName = tz ?? NY
      if (record.timezone !== zoneName) return false
      const wallStart = utcText(start + oracleOffsetMinutes(zoneName, start) * 60_000)
      if (record.start_date !== wallStart) return false
    }
    return true
  }), { numRuns: 400, seed: 21, endOnFailure: true })
  t.equal(runs >= 400, true, 'ran')
  // And every edge at the zone's own offsets on each side, in its own zone.
  const misses: string[] = []
  for (const zoneName of ZONES) {
    for (const at of transitions(zoneName, 2024, 2034)) {
      for (const ms of [at - 1800_000, at - 60_000, at, at + 1800_000]) {
        const iso = isoAt(ms, oracleOffsetMinutes(zoneName, ms))
        const e = await createAt(s, iso, iso, zoneName)
        if (e.utc_start_date !== utcText(ms)) misses.push(`${zoneName} ${iso} → ${e.utc_start_date}`)
      }
    }
  }
  t.same(misses, [], 'every DST edge at its own offset is stored exactly')
})

// ------------------------------------------------------------------------------------------- item 4

t.test('item 4: time-zone names come back exactly as sent, never a legacy alias', async (t) => {
  const s = await setup(t)
  const names = ['Asia/Kolkata', 'Europe/Kyiv', 'Asia/Kathmandu', 'America/Argentina/Buenos_Aires', 'Asia/Ho_Chi_Minh', 'GMT', 'Etc/UTC', 'US/Eastern', 'EST5EDT', 'Asia/Calcutta', 'UTC+5:30']
  for (const name of names) {
    const created = await createAt(s, '2026-07-01 10:00:00', '2026-07-01 11:00:00', name)
    t.equal(created.timezone, name, `${name} on create`)
    t.equal((await s.get(created.id)).json<Event>().timezone, name, `${name} on read`)
  }
  const e = await createAt(s, '2026-07-01 10:00:00', '2026-07-01 11:00:00', 'UTC')
  const res = await s.patch(e.id, { timezone: 'Asia/Kolkata' })
  t.equal(res.json<Event>().timezone, 'Asia/Kolkata', 'on update')
  t.equal(res.json<Event>().utc_start_date, '2026-07-01 04:30:00')
})

// ------------------------------------------------------------------------------------------- item 5

t.test('item 5: rest_url of a strict query in a DST overlap runs the same query', async (t) => {
  const s = await setup(t, { config: { timezone: NY } })
  // 05:30Z is the first 01:30 (EDT), 06:30Z the second (EST).
  await createAt(s, '2027-11-07T05:30:00Z', '2027-11-07T05:45:00Z')
  await createAt(s, '2027-11-07T06:30:00Z', '2027-11-07T06:45:00Z')
  await createAt(s, '2027-11-07T07:30:00Z', '2027-11-07T07:45:00Z')
  const query = '?start_date=2027-11-07T06:00:00Z&end_date=2027-11-08&strict_dates=true&per_page=1'
  const res = await s.list(query)
  t.equal(res.statusCode, 200)
  t.equal(res.json<{ total: number }>().total, 2)
  const url = new URL(restUrlOf(res))
  t.equal(url.searchParams.get('start_date'), '2027-11-07T01:00:00-05:00', 'the start as an instant with its offset')
  t.equal(url.searchParams.get('end_date'), '2027-11-08T00:00:00-05:00')
  const next = res.json<{ next_rest_url?: string }>().next_rest_url
  t.type(next, 'string')
  const again = await s.inject({ url: `${API}/events${url.search}` })
  t.same(eventsOf(again).map((e) => e.id), eventsOf(res).map((e) => e.id), 'following rest_url gives the same page')
  t.equal(again.json<{ total: number }>().total, 2, 'and the same total')
  t.equal(restUrlOf(again), restUrlOf(res), 'and the same rest_url')
  const nextUrl = new URL(next ?? '')
  const page2 = await s.inject({ url: `${API}/events${nextUrl.search}` })
  t.same(eventsOf(res).map((e) => e.id), [2], 'page 1: the second 01:30')
  t.same(eventsOf(page2).map((e) => e.id), [3], 'next page: 02:30 EST')
  t.equal(page2.json<{ total: number }>().total, 2)
})
