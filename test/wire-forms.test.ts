/**
 * The contract tells the whole truth about what the server takes (issue 18): every query string and
 * form body the server accepts is accepted by a validator that follows the published document
 * (test/helpers/wire.ts, an independent oracle that knows nothing of the server's normalisation), in
 * all the text forms: booleans `1`/`0`, id lists `1,2`, repeated and bracketed keys, single values for
 * lists, empty values that clear. And the handlers still see only typed values: `typedDocument` drops
 * the text forms, and what the server validates is that.
 */
import fc from 'fast-check'
import t, { type Test } from 'tap'
import { parseBodyDate, parseFilterDate } from '../src/lib/dates.js'
import { isValidTimezone } from '../src/lib/time-zones.js'
import { typedDocument, wireFormRefs } from '../src/http/wire-forms.js'
import { API, NOW, build } from './helpers/build.js'
import { SPEC } from './helpers/contract.js'
import { PUBLISHED, documentProblems } from './helpers/wire.js'

type Json = Record<string, unknown>
const isJson = (value: unknown): value is Json => typeof value === 'object' && value !== null && !Array.isArray(value)

t.test('typedDocument: no text form is left, a form body validates as its JSON body, and nothing else changes', async (t) => {
  const wire = wireFormRefs(SPEC.document)
    t.strictSame([...wire].sort(), ['#/components/schemas/BooleanText', '#/components/schemas/ChangeResourceListText', '#/components/schemas/IdListText', '#/components/schemas/StatusListText'])
  const typed = typedDocument(SPEC.document)
  const text = JSON.stringify(typed)
  for (const ref of wire) t.notOk(text.includes(ref), `${ref} is gone`)
  for (const name of ['EventCreateForm', 'FormIdList', 'FormTermList', 'EmptyText', 'BooleanText']) {
    t.notOk(isJson(typed.components) && isJson(typed.components.schemas) && name in typed.components.schemas, `${name} is gone`)
  }
  const bodies = isJson(typed.components) && isJson(typed.components.requestBodies) ? typed.components.requestBodies : {}
  t.ok(Object.keys(bodies).length >= 11)
  for (const [name, body] of Object.entries(bodies)) {
    const content = isJson(body) && isJson(body.content) ? body.content : {}
    const json = content['application/json']
    const form = content['application/x-www-form-urlencoded']
    t.strictSame(isJson(form) ? form.schema : undefined, isJson(json) ? json.schema : undefined, `${name}: the form validates as JSON`)
    t.notOk(isJson(form) && 'example' in form, `${name}: the form's text example is left out`)
  }
  // A boolean parameter is a boolean, an id list a list of integers, defaults kept.
  const listTags = (typed.paths['/tags'] as Json).get as { parameters: Json[] }
  const param = (name: string) => JSON.parse(JSON.stringify(listTags.parameters.find((p) => p.name === name)?.schema))
  t.strictSame(param('hide_empty'), { type: 'boolean', default: true })
  t.strictSame(param('include'), { type: 'array', minItems: 1, maxItems: 100, items: { type: 'integer', minimum: 1 } })
  // The published document is unchanged by the derivation (it is a copy).
  t.ok(JSON.stringify(SPEC.document).includes('#/components/schemas/BooleanText'))
})

t.test('the oracle refuses what neither the document nor the server takes', async (t) => {
  t.not(documentProblems('GET', `${API}/tags?hide_empty=maybe`).length, 0)
  t.not(documentProblems('GET', `${API}/tags?include=1,x`).length, 0)
  t.not(documentProblems('GET', `${API}/events?featured=yes`).length, 0)
  t.not(documentProblems('POST', `${API}/events`, 'title=x&start_date=tomorrow&end_date=2026-07-01').length, 0)
  t.not(documentProblems('POST', `${API}/events`, 'title=x&start_date=2026-07-01&end_date=2026-07-01&featured=2').length, 0)
  t.not(documentProblems('POST', `${API}/events`, 'title=x&start_date=2026-07-01&end_date=2026-07-01&colour=red').length, 0)
  t.strictSame(documentProblems('GET', `${API}/tags?hide_empty=0&include=1,2`), [])
})

/** A database with terms, venues, organizers and an event to refer to. */
async function calendar(t: Test) {
  const built = await build(t)
  const editor = await built.auth('editor')
  const post = async (path: string, payload: Json) => {
    const res = await built.inject({ method: 'POST', url: `${API}/${path}`, headers: editor, payload })
    if (res.statusCode !== 201) throw new Error(`${path}: ${res.body}`)
  }
  await post('categories', { name: 'Music' })
  await post('categories', { name: 'Jazz', parent: 1 })
  await post('tags', { name: 'Open air' })
  await post('venues', { venue: 'Hall' })
  await post('venues', { venue: 'Park' })
  await post('organizers', { organizer: 'Club' })
  await post('events', { title: 'Concert', start_date: '2026-07-01 20:00', end_date: '2026-07-01 22:00', categories: [1, 2], tags: [3], venue: [1], organizer: [1] })
  return { ...built, editor }
}

const BOOLEANS = ['true', 'false', '1', '0', 'yes', 'TRUE', '']
const IDS = ['1', '2', '1,2', ' 1 , 2 ', '1,,2', '', ',', 'x', '-1', '0', '1.5', '007']
const TERMS = ['1', '2', 'jazz', 'music', '1,jazz', 'open-air', 'nope', '']
const DATES = ['2026-06-01', '2026-06-01 10:00', '2026-06-01T10:00:00Z', 'today', 'Now', 'tomorrow', '1781000000', '2026-13-01', 'x', '']

/** One parameter in one of the text forms: single, repeated, bracketed. */
function sent(name: string, values: fc.Arbitrary<string>): fc.Arbitrary<string> {
  const enc = encodeURIComponent
  return fc.oneof(
    values.map((v) => `${name}=${enc(v)}`),
    fc.array(values, { minLength: 1, maxLength: 3 }).map((vs) => vs.map((v) => `${name}=${enc(v)}`).join('&')),
    fc.array(values, { minLength: 1, maxLength: 3 }).map((vs) => vs.map((v) => `${name}%5B%5D=${enc(v)}`).join('&')),
    // PHP's indexed form (`http_build_query`), indexes in any order.
    fc.array(values, { minLength: 1, maxLength: 3 }).map((vs) => vs.map((v, i) => `${name}%5B${vs.length - 1 - i}%5D=${enc(v)}`).join('&')),
  )
}

/**
 * A parameter that takes one value, sent once: repeated or bracketed it is refused by both (a bracketed
 * name that does not fit is 400), which tells the property nothing about what the document accepts.
 */
function single(name: string, values: fc.Arbitrary<string>): fc.Arbitrary<string> {
  return values.map((v) => `${name}=${encodeURIComponent(v)}`)
}

function query(parts: Array<fc.Arbitrary<string>>): fc.Arbitrary<string> {
  return fc.subarray(parts, { minLength: 1, maxLength: Math.min(5, parts.length) })
    .chain((chosen) => (chosen.length === 0 ? fc.constant('') : fc.tuple(...chosen).map((xs) => xs.join('&'))))
}

t.test('every list query the server accepts, the published document accepts (property)', async (t) => {
  const { inject, editor } = await calendar(t)
  const pick = (xs: string[]) => fc.constantFrom(...xs)
  const lists: Array<[string, fc.Arbitrary<string>]> = [
    ['events', query([
      single('featured', pick(BOOLEANS)), single('strict_dates', pick(BOOLEANS)), single('ticketed', pick(['false', '0', 'true'])),
      sent('venue', pick(IDS)), sent('organizer', pick(IDS)), sent('include', pick(IDS)), sent('categories', pick(TERMS)),
      sent('tags', pick(TERMS)), pick(DATES).map((d) => `start_date=${encodeURIComponent(d)}`), pick(DATES).map((d) => `ends_before=${encodeURIComponent(d)}`),
      pick(['1', '2', '0', 'x']).map((p) => `per_page=${p}`), sent('status', pick(['publish', 'draft', 'publish,draft', 'private', 'trash', ''])),
    ])],
    ['categories', query([
      single('hide_empty', pick(BOOLEANS)), sent('include', pick(IDS)), sent('exclude', pick(IDS)),
      pick(['0', '1', '2', 'x']).map((p) => `parent=${p}`), pick(['name', 'include', 'count']).map((o) => `orderby=${o}`), pick(['jazz', '']).map((s) => `slug=${s}`),
    ])],
    ['tags', query([single('hide_empty', pick(BOOLEANS)), sent('include', pick(IDS)), sent('exclude', pick(IDS)), pick(['1', '9']).map((e) => `event=${e}`)])],
    ['venues', query([single('has_events', pick(BOOLEANS)), single('only_with_upcoming', pick(BOOLEANS)), pick(['hall', 'zürich']).map((s) => `search=${encodeURIComponent(s)}`), sent('status', pick(['publish', 'draft,pending', 'x']))])],
  ]
  let accepted = 0
  let refused = 0
  const disagreements: string[] = []
  for (const [list, arbitrary] of lists) {
    await fc.assert(fc.asyncProperty(arbitrary, async (text) => {
      const url = `${API}/${list}?${text}`
      const res = await inject({ url, headers: editor }) // an editor: every status may be asked
      if (res.statusCode !== 200) {
        refused++
        return true
      }
      accepted++
      const problems = documentProblems('GET', url)
      if (problems.length > 0) disagreements.push(`${url}: ${problems.join('; ')}`)
      return problems.length === 0
    }), { numRuns: 150, seed: 18 })
  }
  t.strictSame(disagreements, [])
  t.ok(accepted > 150 && refused > 100, `${accepted} accepted and ${refused} refused queries`)
})

t.test('every form body the server accepts, the published document accepts (property)', async (t) => {
  const { inject, editor } = await calendar(t)
  const pick = (xs: string[]) => fc.constantFrom(...xs)
  const enc = (v: string) => encodeURIComponent(v)
  const extra = query([
    single('featured', pick(BOOLEANS)), sent('all_day', pick(BOOLEANS)), sent('categories', pick(TERMS)), sent('tags', pick(TERMS)),
    sent('venue', pick(IDS)), sent('organizer', pick(IDS)), pick(['', 'https://example.com/x', 'nope']).map((w) => `website=${enc(w)}`),
    pick(['', 'Europe/Zurich', 'UTC+2', 'Mars/Base']).map((z) => `timezone=${enc(z)}`), pick(['', 'Free', '12.50']).map((c) => `cost=${enc(c)}`),
    pick(['', 'Notes']).map((d) => `description=${enc(d)}`), pick(['publish', 'draft', 'trash']).map((s) => `status=${s}`),
  ])
  let created = 0
  const disagreements: string[] = []
  await fc.assert(fc.asyncProperty(extra, pick(DATES.slice(0, 3)), async (fields, start) => {
    const payload = `title=Gig&start_date=${enc(start)}&end_date=2026-12-31%2023%3A00&${fields}`
    const res = await inject({ method: 'POST', url: `${API}/events`, headers: { ...editor, 'content-type': 'application/x-www-form-urlencoded' }, payload })
    if (res.statusCode !== 201) return true
    created++
    const problems = documentProblems('POST', `${API}/events`, payload)
    if (problems.length > 0) disagreements.push(`${payload}: ${problems.join('; ')}`)
    return problems.length === 0
  }), { numRuns: 300, seed: 18 })
  // Updates and the other resources' forms, in their text forms.
  for (const [url, payload] of [
    [`${API}/events/1`, 'featured=1&venue=2&organizer=&categories%5B%5D=music&categories%5B%5D=2&website='],
    [`${API}/events/1`, 'tags=3&show_map=0&sticky=true&description=&image='],
    [`${API}/venues/1`, 'show_map=no&show_map_link=1&website=&phone='],
    [`${API}/organizers/1`, 'email=&website=https%3A%2F%2Fclub.example&description='],
    [`${API}/categories/2`, 'description=&parent=0'],
    [`${API}/tags/3`, 'description=Outdoors&slug=outdoors'],
  ] as const) {
    const res = await inject({ method: 'PATCH', url, headers: { ...editor, 'content-type': 'application/x-www-form-urlencoded' }, payload })
    t.equal(res.statusCode, 200, `${url} ${payload}`)
    t.strictSame(documentProblems('PATCH', url, payload), [], `the document accepts ${payload}`)
  }
  t.strictSame(disagreements, [])
  t.ok(created > 50, `${created} events created from forms`)
})

const DATE_PATTERN = (name: string) => {
  const schemas = PUBLISHED.components as { schemas: Record<string, { properties: Record<string, { pattern?: string }> }> }
  return new RegExp(schemas.schemas.EventCreate?.properties[name]?.pattern ?? '^$', 'u')
}

t.test('the patterns of body dates, filter dates and time zones match what the server parses (property)', async (t) => {
  const body = DATE_PATTERN('start_date')
  const zone = DATE_PATTERN('timezone')
  const listEvents = (PUBLISHED.paths['/events'] as Json).get as { parameters: Json[] }
  const filterSchema = listEvents.parameters.find((p) => p.name === 'start_date')?.schema as { pattern: string }
  const filter = new RegExp(filterSchema.pattern, 'u')
  const digits = (n: number) => fc.integer({ min: 0, max: 10 ** n - 1 }).map((v) => String(v).padStart(n, '0'))
  const dateText = fc.tuple(digits(4), digits(2), digits(2), fc.constantFrom('', ' ', 'T', 't', 'x'), digits(2), digits(2),
    fc.constantFrom('', ':00', ':59.5', ':07,123'), fc.constantFrom('', 'Z', 'z', '+02:00', '-0530', '+01', '+1', 'UTC'))
    .map(([y, mo, d, sep, h, mi, s, off]) => `${y}-${mo}-${d}${sep === '' ? '' : `${sep}${h}:${mi}${s}${off}`}`)
  const anything = fc.oneof(dateText, fc.string({ maxLength: 25 }), fc.constantFrom('now', 'TODAY', 'Tomorrow', 'yesterday', '1781000000', '-86400', '2026-06-01'))
  await fc.assert(fc.property(anything, (text) => {
    // Whatever the server parses, the pattern accepts (a pattern cannot know month lengths: the converse is not asked).
    if (parseBodyDate(text, 'UTC') !== null && !body.test(text)) return false
    if (parseFilterDate(text, 'UTC', NOW) !== null && !filter.test(text)) return false
    return true
  }), { numRuns: 3000, seed: 18 })
  const zoneText = fc.oneof(fc.constantFrom(...Intl.supportedValuesOf('timeZone')), fc.constantFrom('UTC+2', 'UTC-5', 'UTC+5:30', 'UTC+5.5', 'utc', 'Etc/GMT+5', 'europe/zurich'), fc.string({ maxLength: 20 }))
  await fc.assert(fc.property(zoneText, (text) => !isValidTimezone(text) || zone.test(text)), { numRuns: 2000, seed: 18 })
  t.notOk(body.test('2026-06-01 10'), 'an hour without minutes is refused by both')
  t.equal(parseBodyDate('2026-06-01 10', 'UTC'), null)
  t.ok(zone.test('America/Argentina/Buenos_Aires'))
  t.ok(zone.test(''), 'an empty time zone (the site zone) is accepted by both')
})

t.test('a malformed date or zone is refused by the pattern with the contract message, in the language asked', async (t) => {
  const { inject, editor } = await calendar(t)
  const res = await inject({ method: 'POST', url: `${API}/events?ml_language=de`, headers: editor, payload: { title: 'x', start_date: '1st of July', end_date: '2026-07-01' } })
  t.equal(res.statusCode, 400)
  t.strictSame(res.json(), {
    code: 'rest_invalid_param', message: 'Ungültige(r) Parameter: start_date.',
    data: {
      status: 400,
      params: { start_date: 'start_date ist kein gültiges Datum: Verwenden Sie YYYY-MM-DD HH:MM:SS oder ISO 8601 mit Offset.' },
      details: [{ field: 'start_date', message: 'start_date ist kein gültiges Datum: Verwenden Sie YYYY-MM-DD HH:MM:SS oder ISO 8601 mit Offset.' }],
    },
  })
  const zone = await inject({ method: 'PATCH', url: `${API}/events/1`, headers: editor, payload: { timezone: '+05:00' } })
  t.equal(zone.json().data.params.timezone, 'timezone must be an IANA time zone name (such as Europe/Zurich) or an offset such as UTC+2.')
  const filter = await inject({ url: `${API}/events?start_date=soon` })
  t.equal(filter.json().data.params.start_date, 'start_date is not a date: use YYYY-MM-DD, YYYY-MM-DD HH:MM:SS, ISO 8601, a UNIX timestamp, now, today, tomorrow or yesterday.')
})
