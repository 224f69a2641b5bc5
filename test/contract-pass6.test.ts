/**
 * A sixth black-box pass over the contract (CONTRACT §3, §6, §8, §9, §10, §12): roles and visibility on every
 * resource (contributors, authors, subscribers; drafts, pending and private records in lists, counts and
 * /changes; other authors' records), the geolocation extension beside venue filters, the root and /doc in every
 * language and in YAML, and the `data.params` of every kind of rejected parameter on the venue, organizer and
 * term lists. Every answer is checked against the served spec by `inject`.
 */
import t from 'tap'
import { API } from './helpers/build.js'
import { expectError } from './helpers/errors.js'
import { EVENTS, setup } from './helpers/events.js'

type Json = Record<string, any> // eslint-disable-line @typescript-eslint/no-explicit-any
const LANGUAGES = ['at', 'en', 'de', 'es', 'ch-fr', 'ch-de']
const LISTS = ['events', 'venues', 'organizers', 'categories', 'tags'] as const

t.test('roles on venues and organizers: a contributor\'s publish is pending, its own drafts stay editable, others\' records are 403; lists, totals and /changes show each caller what it may read (CONTRACT §6, §12)', async (t) => {
  const s = await setup(t)
  const contributor = await s.auth('contributor')
  const other = await s.auth('contributor')
  const author = await s.auth('author')
  const subscriber = await s.auth('subscriber')
  const post = (path: string, payload: Json, headers: Record<string, string>) => s.inject({ method: 'POST', url: `${API}/${path}`, headers, payload })
  for (const [resource, field] of [['venues', 'venue'], ['organizers', 'organizer']] as const) {
    const singular = field
    const asked = await post(resource, { [field]: `Contributed ${field}`, status: 'publish' }, contributor)
    t.equal(asked.statusCode, 201, `${resource}: a contributor creates`)
    t.equal(asked.json().status, 'pending', `${resource}: asking publish stores pending`)
    const mine = asked.json<Json>()
    const theirs = (await post(resource, { [field]: `Other ${field}`, status: 'draft' }, other)).json<Json>()
    const authored = await post(resource, { [field]: `Authored ${field}` }, author)
    t.equal(authored.json().status, 'publish', `${resource}: an author publishes by default`)
    const priv = (await post(resource, { [field]: `Private ${field}`, status: 'private' }, s.editor)).json<Json>()
    expectError(t, await post(resource, { [field]: 'Nope' }, subscriber), 403, 'rest_forbidden')

    // Single reads: another's draft is 403 <resource>-not-accessible; one's own is 200.
    expectError(t, await s.inject({ url: `${API}/${resource}/${theirs.id as number}`, headers: contributor }), 403, `${singular}-not-accessible`)
    expectError(t, await s.inject({ url: `${API}/${resource}/${mine.id as number}` }), 403, `${singular}-not-accessible`)
    expectError(t, await s.inject({ url: `${API}/${resource}/by-slug/${mine.slug as string}` }), 403, `${singular}-not-accessible`)
    expectError(t, await s.inject({ url: `${API}/${resource}/${priv.id as number}`, headers: author }), 403, `${singular}-not-accessible`)
    t.equal((await s.inject({ url: `${API}/${resource}/${mine.id as number}`, headers: contributor })).statusCode, 200, `${resource}: one's own pending record`)
    // Writes: own pending record yes; another's no; once published, a contributor may no longer edit it.
    t.equal((await s.inject({ method: 'PATCH', url: `${API}/${resource}/${mine.id as number}`, headers: contributor, payload: { description: 'mine' } })).statusCode, 200, `${resource}: edits its own pending record`)
    expectError(t, await s.inject({ method: 'PATCH', url: `${API}/${resource}/${theirs.id as number}`, headers: contributor, payload: { description: 'theirs' } }), 403, 'rest_forbidden')
    expectError(t, await s.inject({ method: 'DELETE', url: `${API}/${resource}/${theirs.id as number}`, headers: contributor }), 403, 'rest_forbidden')
    expectError(t, await s.inject({ method: 'PATCH', url: `${API}/${resource}/${authored.json<Json>().id as number}`, headers: contributor, payload: { description: 'x' } }), 403, 'rest_forbidden')
    t.equal((await s.inject({ method: 'PATCH', url: `${API}/${resource}/${mine.id as number}`, headers: s.editor, payload: { status: 'publish' } })).statusCode, 200, `${resource}: the editor publishes it`)
    expectError(t, await s.inject({ method: 'PATCH', url: `${API}/${resource}/${mine.id as number}`, headers: contributor, payload: { description: 'after' } }), 403, 'rest_forbidden')

    // Lists: anonymous sees publish only; a contributor published plus its own; the editor every non-trash status.
    const names = async (headers: Record<string, string>, query = '') => {
      const res = await s.inject({ url: `${API}/${resource}?per_page=50${query}`, headers })
      t.equal(res.statusCode, 200)
      const body = res.json<Json>()
      t.equal(body.total, (body[resource] as Json[]).length, `${resource}: total counts what is shown`)
      t.equal(res.headers['x-total'], String(body.total))
      return (body[resource] as Json[]).map((r) => r[field] as string).sort()
    }
    t.same(await names({}), [`Authored ${field}`, `Contributed ${field}`], `${resource}: anonymous`)
    t.same(await names(other), [`Authored ${field}`, `Contributed ${field}`, `Other ${field}`], `${resource}: the other contributor sees its draft`)
    t.same(await names(subscriber), [`Authored ${field}`, `Contributed ${field}`], `${resource}: a subscriber`)
    t.same(await names(s.editor), [`Authored ${field}`, `Contributed ${field}`, `Other ${field}`, `Private ${field}`], `${resource}: the editor`)
    t.same(await names(s.editor, '&status=private'), [`Private ${field}`], `${resource}: the editor filters private`)
    t.same(await names(contributor, '&status=draft'), [], `${resource}: a contributor asking for drafts sees only its own (none)`)
    expectError(t, await s.inject({ url: `${API}/${resource}?status=draft` }), 400, 'rest_invalid_param', ['status'])
    expectError(t, await s.inject({ url: `${API}/${resource}?status=trash`, headers: s.editor }), 400, 'rest_invalid_param', ['status'])
  }
  // /changes: anonymous callers never see the drafts, pending or private records, nor their names.
  const changes = await s.inject({ url: `${API}/changes?per_page=100` })
  t.equal(changes.statusCode, 200)
  t.notMatch(changes.body, /Other (venue|organizer)|Private (venue|organizer)/, '/changes hides what anonymous callers may not read')
  const theirs = await s.inject({ url: `${API}/changes?per_page=100`, headers: other })
  t.match(theirs.body, /Other venue/, '/changes shows a contributor its own draft')
  t.notMatch(theirs.body, /Private venue/, '/changes hides another\'s private record from a contributor')
})

t.test('roles on events: has_events and only_with_upcoming count what the caller may read; author is set by editors only; filters on records one cannot read (CONTRACT §6)', async (t) => {
  const s = await setup(t)
  const contributor = await s.auth('contributor')
  const author = await s.auth('author')
  const hidden = await s.venue({ venue: 'Hidden hall' })
  const shown = await s.venue({ venue: 'Shown hall' })
  const org = await s.organizer({ organizer: 'Only drafts' })
  await s.event('Draft night', { venue: [hidden.id], organizer: [org.id], status: 'draft', start_date: '2026-08-01 18:00:00', end_date: '2026-08-01 20:00:00' })
  await s.event('Private night', { venue: [hidden.id], status: 'private', start_date: '2026-08-02 18:00:00', end_date: '2026-08-02 20:00:00' })
  await s.event('Public night', { venue: [shown.id], start_date: '2026-08-03 18:00:00', end_date: '2026-08-03 20:00:00' })
  const names = async (path: string, headers: Record<string, string> = {}) => {
    const res = await s.inject({ url: `${API}/${path}`, headers })
    t.equal(res.statusCode, 200, path)
    const body = res.json<Json>()
    const key = path.split('?')[0] as string
    return (body[key] as Json[]).map((r) => (r.venue ?? r.organizer) as string).sort()
  }
  for (const q of ['has_events=true', 'has_events=1', 'only_with_upcoming=true', 'only_with_upcoming=1']) {
    t.same(await names(`venues?${q}`), ['Shown hall'], `anonymous ${q}`)
    t.same(await names(`venues?${q}`, contributor), ['Shown hall'], `a contributor ${q}: another's draft and private events do not count`)
    t.same(await names(`venues?${q}`, s.editor), ['Hidden hall', 'Shown hall'], `the editor ${q}`)
    t.same(await names(`organizers?${q}`), [], `organizers, anonymous ${q}`)
  }
  // `author`: editors set it to an existing user (unknown: 400); authors and contributors may not give it to others.
  const e = await s.event('Given away', { author: 2 })
  t.equal(e.author, 2, 'the editor sets author')
  expectError(t, await s.inject({ method: 'POST', url: EVENTS, headers: s.editor, payload: { title: 'x', start_date: '2026-07-01 10:00:00', end_date: '2026-07-01 11:00:00', author: 999 } }), 400, 'rest_invalid_param', ['author'])
  const own = await s.event('Author\'s own', {}, author)
  t.equal(own.status, 'publish')
  const byContributor = await s.event('Contributor\'s own', { status: 'publish' }, contributor)
  t.equal(byContributor.status, 'pending', 'a contributor asking publish stores pending')
  expectError(t, await s.patch(own.id, { title: 'mine now' }, contributor), 403, 'rest_forbidden')
  expectError(t, await s.patch(byContributor.id, { title: 'theirs' }, author), 403, 'rest_forbidden')
  expectError(t, await s.get(byContributor.id, '', author), 403, 'event-not-accessible')
  t.equal((await s.get(byContributor.id, '', s.editor)).statusCode, 200)
  // Events list: anonymous status other than publish is 400; a contributor sees published plus its own.
  expectError(t, await s.list('?status=pending'), 400, 'rest_invalid_param', ['status'])
  const seen = (await s.list('?per_page=50&start_date=2026-01-01&end_date=2027-01-01', contributor)).json<{ events: Json[] }>().events.map((x) => x.title as string).sort()
  t.same(seen, ['Author\'s own', 'Contributor\'s own', 'Given away', 'Public night'], 'a contributor\'s event list')
  // venue/organizer on the event list with a record the caller cannot read: 400 like an unknown id.
  const draftVenue = await s.inject({ method: 'POST', url: `${API}/venues`, headers: s.editor, payload: { venue: 'Draft venue', status: 'draft' } })
  expectError(t, await s.list(`?venue=${draftVenue.json<Json>().id as number}`), 400, 'rest_invalid_param', ['venue'])
  // event/post on term and venue lists with an event the caller cannot read matches nothing.
  const cat = await s.category('Secret cat')
  const secret = await s.event('Secret', { status: 'draft', categories: [cat.id], venue: [shown.id] })
  for (const path of [`categories?hide_empty=false&event=${secret.id}`, `categories?hide_empty=false&post=${secret.id}`, `venues?event=${secret.id}`, `organizers?event=${secret.id}`]) {
    const res = await s.inject({ url: `${API}/${path}` })
    t.equal(res.statusCode, 200, path)
    t.equal(res.json().total, 0, `${path}: anonymous sees nothing`)
  }
  t.equal((await s.inject({ url: `${API}/categories?hide_empty=false&event=${secret.id}`, headers: s.editor })).json().total, 1, 'the editor sees the draft\'s category')
})

t.test('geoloc with venue filters: the point and the venue filter both hold; a draft venue near the point never matches (CONTRACT §4, §8)', async (t) => {
  const s = await setup(t, { config: { extensions: new Set(['geoloc']) } as never })
  const near = await s.venue({ venue: 'Near', geo_lat: 0, geo_lng: 179.95 })
  const far = await s.venue({ venue: 'Far', geo_lat: 10, geo_lng: 10 })
  const plain = await s.venue({ venue: 'Plain' })
  const a = await s.event('At near', { venue: [near.id] })
  const b = await s.event('At far', { venue: [far.id] })
  const c = await s.event('At plain', { venue: [plain.id] })
  const both = await s.event('At both', { venue: [near.id, far.id] })
  const ids = async (q: string) => {
    const res = await s.list(q)
    t.equal(res.statusCode, 200, q)
    return res.json<{ events: Json[] }>().events.map((e) => e.id as number).sort((x, y) => x - y)
  }
  t.same(await ids(`?geoloc_lat=0&geoloc_lng=-179.95`), [a.id, both.id], 'across the antimeridian')
  t.same(await ids(`?geoloc_lat=0&geoloc_lng=-179.95&venue=${far.id}`), [both.id], 'with venue=far: only the event at both')
  t.same(await ids(`?geoloc_lat=0&geoloc_lng=-179.95&venue=${plain.id}`), [], 'with venue=plain: nothing')
  t.same(await ids(`?geoloc=true&venue=${plain.id},${near.id}`), [a.id, both.id], 'geoloc=true with two venues')
  t.same(await ids(`?geoloc=false&venue=${plain.id},${near.id}`), [c.id], 'geoloc=false with two venues')
  t.same(await ids(`?geoloc=false`), [c.id], 'geoloc=false')
  t.same(await ids(`?geoloc=true`), [a.id, b.id, both.id], 'geoloc=true')
  const draft = await s.inject({ method: 'POST', url: `${API}/venues`, headers: s.editor, payload: { venue: 'Draft near', status: 'draft', geo_lat: 0.01, geo_lng: 179.95 } })
  const d = await s.event('At draft', { venue: [draft.json<Json>().id] })
  t.notOk((await ids(`?geoloc_lat=0&geoloc_lng=-179.95`)).includes(d.id), 'a draft venue near the point does not count')
  t.ok((await ids('?geoloc=false')).includes(d.id), 'nor does it count as a venue with coordinates (geoloc=false keeps the event)')
  for (const [q, param] of [['geoloc_lat=90.5&geoloc_lng=0', 'geoloc_lat'], ['geoloc_lat=0&geoloc_lng=180.5', 'geoloc_lng'], ['geoloc_lat=abc&geoloc_lng=0', 'geoloc_lat'], ['geoloc=maybe', 'geoloc']] as const) {
    expectError(t, await s.list(`?${q}`), 400, 'rest_invalid_param', [param])
  }
  t.same(await ids(`?geoloc_lat=90&geoloc_lng=0`), [], 'the pole itself is a valid point')
  t.same(await ids(`?geoloc_lat=-90&geoloc_lng=-180`), [], 'the south pole and -180 are valid')
})

t.test('the root and /doc in every language and in YAML; the root\'s namespace and context (CONTRACT §9)', async (t) => {
  const s = await setup(t)
  const descriptions = new Set<string>()
  for (const language of LANGUAGES) {
    const doc = await s.inject({ url: `${API}/doc?ml_language=${language}` })
    t.equal(doc.statusCode, 200, `/doc in ${language}`)
    const body = doc.json<Json>()
    t.equal((body.openapi as string).slice(0, 3), '3.1')
    t.equal((body.servers as Json[]).length, 1)
    t.equal(body.servers[0].url, `http://calendar.test${API}`)
    descriptions.add(JSON.stringify(body.paths['/events'].get.summary ?? body.paths['/events'].get.description))
    const yaml = await s.inject({ url: `${API}/doc?ml_language=${language}`, headers: { accept: 'application/yaml' } })
    t.equal(yaml.statusCode, 200, `YAML in ${language}`)
    t.match(String(yaml.headers['content-type']), /^application\/yaml/)
    t.match(yaml.body, /^openapi: ['"]?3\.1/m)
    t.match(yaml.body, new RegExp(`url: ['"]?http://calendar\\.test${API.replace(/\//g, '\\/')}`))
    const root = await s.inject({ url: `${API}?ml_language=${language}` })
    t.equal(root.statusCode, 200, `root in ${language}`)
    t.equal(root.json().namespace, 'calendar/events/v1')
  }
  t.ok(descriptions.size > 1, 'descriptions follow the language')
  expectError(t, await s.inject({ url: `${API}/doc?ml_language=fr` }), 400, 'rest_invalid_param', ['ml_language'])
  expectError(t, await s.inject({ url: `${API}/doc?ml_language=` }), 400, 'rest_invalid_param', ['ml_language'])
  expectError(t, await s.inject({ url: `${API}/doc?ml_language=DE` }), 400, 'rest_invalid_param', ['ml_language'])
  expectError(t, await s.inject({ url: `${API}?namespace=wp/v2` }), 404, 'rest_invalid_namespace')
  t.equal((await s.inject({ url: `${API}?namespace=calendar/events/v1` })).statusCode, 200)
  for (const context of ['view', 'help']) t.equal((await s.inject({ url: `${API}?context=${context}` })).statusCode, 200, `context=${context}`)
  expectError(t, await s.inject({ url: `${API}?context=edit` }), 400, 'rest_invalid_param', ['context'])
})

t.test('data.params for every kind of rejected parameter on the venue, organizer and term lists; page and per_page on every list (CONTRACT §3, §6, §10)', async (t) => {
  const s = await setup(t)
  const e = await s.event('Something')
  for (const list of LISTS) {
    for (const [q, param] of [['page=0', 'page'], ['page=abc', 'page'], ['page=1.5', 'page'], ['per_page=0', 'per_page'], ['per_page=-1', 'per_page'], ['per_page=x', 'per_page'], ['search[a]=x', 'search'], ['ml_language=xx', 'ml_language']] as const) {
      expectError(t, await s.inject({ url: `${API}/${list}?${q}` }), 400, 'rest_invalid_param', [param])
    }
    const clamped = await s.inject({ url: `${API}/${list}?per_page=500&hide_empty=false` })
    t.equal(clamped.statusCode, 200, `${list}: per_page=500`)
    t.match(clamped.json().rest_url, /[?&]per_page=50(&|$)/, `${list}: per_page clamped to 50 in rest_url`)
    expectError(t, await s.inject({ url: `${API}/${list}?page=99&hide_empty=false` }), 404, `${list.replace(/ies$/, 'y').replace(/s$/, '')}-archive-page-not-found`)
  }
  for (const list of ['venues', 'organizers']) {
    for (const [q, param] of [['event=abc', 'event'], ['event=999', 'event'], ['has_events=maybe', 'has_events'], ['only_with_upcoming=yes', 'only_with_upcoming'], ['status=bogus', 'status']] as const) {
      expectError(t, await s.inject({ url: `${API}/${list}?${q}` }), 400, 'rest_invalid_param', [param])
    }
  }
  for (const list of ['categories', 'tags']) {
    for (const [q, param] of [['orderby=date', 'orderby'], ['orderby=', 'orderby'], ['order=up', 'order'], ['order=ASC', 'order'], ['include=a', 'include'], ['include=1,x', 'include'], ['exclude=-1', 'exclude'], ['slug=', 'slug'], ['hide_empty=yes', 'hide_empty'], ['hide_empty=no', 'hide_empty'], ['hide_empty=', 'hide_empty'], ['post=abc', 'post'], ['post=999', 'post'], ['event=999', 'event'], ['event=x', 'event']] as const) {
      expectError(t, await s.inject({ url: `${API}/${list}?${q}` }), 400, 'rest_invalid_param', [param])
    }
    for (const q of ['hide_empty=true', 'hide_empty=false', 'hide_empty=1', 'hide_empty=0', 'orderby=count&order=desc', 'orderby=include&include=2,1', 'slug=a,b', `post=${e.id}`, `event=${e.id}`]) {
      t.equal((await s.inject({ url: `${API}/${list}?${q}` })).statusCode, 200, `${list}?${q}`)
    }
  }
  expectError(t, await s.inject({ url: `${API}/categories?parent=abc` }), 400, 'rest_invalid_param', ['parent'])
  expectError(t, await s.inject({ url: `${API}/categories?parent=-2` }), 400, 'rest_invalid_param', ['parent'])
  t.equal((await s.inject({ url: `${API}/categories?parent=0&hide_empty=0` })).statusCode, 200, 'parent=0: top-level terms')
})

t.test('a password-protected event shows no protected text to anonymous callers anywhere: lists, search, json_ld, iCal, /changes, occurrences; /changes follows visibility (draft → publish is created, → private is deleted) (CONTRACT §6, §12, §14)', async (t) => {
  const s = await setup(t)
  const contributor = await s.auth('contributor')
  const subscriber = await s.auth('subscriber')
  const draftVenue = (await s.inject({ method: 'POST', url: `${API}/venues`, headers: s.editor, payload: { venue: 'Veiled venue', status: 'draft' } })).json<Json>()
  const pw = await s.event('Guarded', { description: 'protected words', excerpt: 'protected summary', venue: [draftVenue.id] })
  t.equal((await s.patch(pw.id, { password: 'sekrit' })).statusCode, 200, 'the editor sets a password')
  for (const url of [`${EVENTS}`, `${EVENTS}?json_ld=1`, `${EVENTS}?ical=1`, `${EVENTS}?search=Guarded`, `${API}/changes`, `${API}/changes?resource=events&ml_language=en`]) {
    const res = await s.inject({ url })
    t.equal(res.statusCode, 200, url)
    t.notMatch(res.body, /protected (words|summary)|Veiled venue/, `${url}: no protected text, no draft venue`)
  }
  const listed = (await s.list('', contributor)).json<{ events: Json[] }>().events[0] as Json
  t.equal(listed.description, null, 'a contributor\'s list: description null')
  t.equal(listed.excerpt, null, 'a contributor\'s list: excerpt null')
  t.same(listed.venue, [], 'a contributor\'s list: the editor\'s draft venue left out')
  t.equal((await s.list('?search=protected')).json().total, 0, 'search does not match the protected text')
  for (const url of [`${EVENTS}/${pw.id}`, `${EVENTS}/${pw.id}?ical=1`, `${EVENTS}/${pw.id}?json_ld=1`, `${EVENTS}/${pw.id}/occurrences`, `${EVENTS}/by-slug/${pw.slug}?password=sekrit`]) {
    expectError(t, await s.inject({ url, headers: subscriber }), 403, 'event-password-protected')
  }
  const opened = await s.get(pw.id, '?password=sekrit')
  t.equal(opened.json().description, 'protected words', 'by id with the password')
  t.same(opened.json().venue, [], 'still without the draft venue')
  const feed = await s.get(pw.id, '?password=sekrit&ical=1')
  t.equal(feed.statusCode, 200)
  t.notMatch(feed.body, /DESCRIPTION/, 'the iCal VEVENT of a protected event has no DESCRIPTION (§14)')
  // /changes as an anonymous mirror sees it.
  const since = (await s.inject({ url: `${API}/changes` })).json<Json>().next_cursor as string
  const later = await s.event('Later', { status: 'draft' })
  const step = async (cursor: string) => (await s.inject({ url: `${API}/changes?since=${encodeURIComponent(cursor)}` })).json<Json>()
  const first = await step(since)
  t.same(first.changes, [], 'a draft is not a change an anonymous caller sees')
  await s.patch(later.id, { status: 'publish' })
  const second = await step(first.next_cursor as string)
  t.same((second.changes as Json[]).map((c) => [c.resource, c.id, c.action]), [['events', later.id, 'created']], 'published: created')
  await s.patch(later.id, { status: 'private' })
  const third = await step(second.next_cursor as string)
  t.same((third.changes as Json[]).map((c) => [c.resource, c.id, c.action, c.record]), [['events', later.id, 'deleted', undefined]], 'private: deleted, without a record')
  await s.inject({ method: 'PATCH', url: `${API}/venues/${draftVenue.id as number}`, headers: s.editor, payload: { status: 'publish' } })
  const fourth = await step(third.next_cursor as string)
  t.same((fourth.changes as Json[]).map((c) => [c.resource, c.id, c.action]).sort(), [['events', pw.id, 'updated'], ['venues', draftVenue.id, 'created']], 'the venue published: the venue created, the event showing it updated')
})

t.test('author rules and term list edges: only editors give a record to another user (unknown 400), contributors and authors may name only themselves; event and post both checked; include ids are positive (CONTRACT §5, §6, §10)', async (t) => {
  const s = await setup(t)
  const contributor = await s.auth('contributor')
  const author = await s.auth('author')
  const subscriber = await s.auth('subscriber')
  for (const [resource, field] of [['venues', 'venue'], ['organizers', 'organizer']] as const) {
    const own = await s.inject({ method: 'POST', url: `${API}/${resource}`, headers: contributor, payload: { [field]: `Own ${field}`, author: 2 } })
    t.equal(own.statusCode, 201, `${resource}: a contributor names itself`)
    t.equal(own.json().author, 2)
    t.equal(own.json().status, 'draft', `${resource}: a contributor's create without status is a draft`)
    expectError(t, await s.inject({ method: 'POST', url: `${API}/${resource}`, headers: contributor, payload: { [field]: 'Gift', author: 1 } }), 403, 'rest_forbidden')
    expectError(t, await s.inject({ method: 'POST', url: `${API}/${resource}`, headers: author, payload: { [field]: 'Gift', author: 1 } }), 403, 'rest_forbidden')
    const id = own.json<Json>().id as number
    expectError(t, await s.inject({ method: 'PATCH', url: `${API}/${resource}/${id}`, headers: s.editor, payload: { author: 999 } }), 400, 'rest_invalid_param', ['author'])
    expectError(t, await s.inject({ method: 'PATCH', url: `${API}/${resource}/${id}`, headers: s.editor, payload: { author: null } }), 400, 'rest_invalid_param', ['author'])
    const given = await s.inject({ method: 'PATCH', url: `${API}/${resource}/${id}`, headers: s.editor, payload: { author: 3 } })
    t.equal(given.json().author, 3, `${resource}: the editor gives it to the author`)
    expectError(t, await s.inject({ url: `${API}/${resource}/${id}`, headers: contributor }), 403, `${field}-not-accessible`)
    t.equal((await s.inject({ url: `${API}/${resource}/${id}`, headers: author })).statusCode, 200, `${resource}: its new author reads it`)
  }
  expectError(t, await s.list('?status=draft', subscriber), 400, 'rest_invalid_param', ['status'])
  expectError(t, await s.inject({ url: `${API}/venues?status=private`, headers: subscriber }), 400, 'rest_invalid_param', ['status'])
  const a = await s.category('Alpha')
  const b = await s.category('Beta')
  const g = await s.category('Gamma')
  const e = await s.event('Tagged', { categories: [a.id, b.id, g.id] })
  const names = async (q: string) => (await s.inject({ url: `${API}/categories?${q}` })).json<{ categories: Json[] }>().categories.map((c) => c.name as string)
  t.same(await names(`orderby=include&include=${g.id},${a.id},${b.id}`), ['Gamma', 'Alpha', 'Beta'], 'orderby=include: in the order given')
  t.same(await names(`orderby=include&include=${g.id},${a.id},${b.id}&order=desc`), ['Beta', 'Alpha', 'Gamma'], 'orderby=include&order=desc: reversed')
  expectError(t, await s.inject({ url: `${API}/categories?event=${e.id}&post=999` }), 400, 'rest_invalid_param', ['post'])
  expectError(t, await s.inject({ url: `${API}/tags?post=${e.id}&event=999` }), 400, 'rest_invalid_param', ['event'])
  for (const list of ['categories', 'tags']) {
    expectError(t, await s.inject({ url: `${API}/${list}?include=0` }), 400, 'rest_invalid_param', ['include'])
    expectError(t, await s.inject({ url: `${API}/${list}?exclude=0` }), 400, 'rest_invalid_param', ['exclude'])
    expectError(t, await s.inject({ url: `${API}/${list}?slug[]=` }), 400, 'rest_invalid_param', ['slug'])
  }
})

t.test('filters by records the caller cannot read: event wins over post on term lists and both are checked; another contributor\'s draft organizer is 400 like an unknown id; a trashed venue is 400 to those who cannot read it, matches nothing for those who can (CONTRACT §5, §6)', async (t) => {
  const s = await setup(t)
  const contributor = await s.auth('contributor')
  const other = await s.auth('contributor')
  const a = await s.category('A')
  const b = await s.category('B')
  const ea = await s.event('EA', { categories: [a.id] })
  const eb = await s.event('EB', { categories: [b.id] })
  const draft = await s.event('ED', { categories: [b.id], status: 'draft' })
  const names = async (q: string) => {
    const res = await s.inject({ url: `${API}/categories?${q}` })
    t.equal(res.statusCode, 200, q)
    return res.json<{ categories: Json[] }>().categories.map((c) => c.name as string)
  }
  t.same(await names(`event=${ea.id}&post=${eb.id}`), ['A'], 'event wins over post')
  t.same(await names(`post=${eb.id}&event=${ea.id}`), ['A'], 'event wins whatever the order')
  t.same(await names(`event=${draft.id}&post=${ea.id}`), [], 'event names a draft: nothing for an anonymous caller')
  t.same(await names(`event=${ea.id}&post=${draft.id}`), ['A'], 'post names a draft but event wins')
  const theirs = (await s.inject({ method: 'POST', url: `${API}/organizers`, headers: other, payload: { organizer: 'Their organizer' } })).json<Json>()
  expectError(t, await s.list(`?organizer=${theirs.id as number}`, contributor), 400, 'rest_invalid_param', ['organizer'])
  t.equal((await s.list(`?organizer=${theirs.id as number}`, other)).statusCode, 200, 'its own draft organizer is a valid filter')
  const venue = await s.venue({ venue: 'Gone hall' })
  await s.event('At the hall', { venue: [venue.id] })
  t.equal((await s.inject({ method: 'DELETE', url: `${API}/venues/${venue.id}`, headers: s.editor })).statusCode, 200, 'venue trashed')
  expectError(t, await s.list(`?venue=${venue.id}`), 400, 'rest_invalid_param', ['venue'])
  const editorView = await s.list(`?venue=${venue.id}`, s.editor)
  t.equal(editorView.statusCode, 200, 'the editor may name a trashed venue')
  t.equal(editorView.json().total, 0, 'a trashed venue matches no event')
})
