/**
 * `translations` names only the versions the caller could read directly (CONTRACT §2, §6): a draft,
 * private or trashed version is left out of the map for a caller that may not read it (an editor still
 * sees what it may read), in single reads, lists, the venues and organizers an event shows, `/changes`
 * records and webhook payloads; and a version that becomes readable or unreadable changes the others
 * (their ETags, the cached records and the stored event documents follow).
 */
import t from 'tap'
import { API } from './helpers/build.js'
import { setup } from './helpers/events.js'

type Mapped = { id: number; translations: Record<string, number> }

t.test('an event\'s translations leave out the versions the caller cannot read', async (t) => {
  const s = await setup(t)
  const en = await s.event('Concert')
  const german = await s.inject({ method: 'POST', url: `${API}/events?ml_language=de`, headers: s.editor, payload: { title: 'Konzert', start_date: '2026-07-01 18:00', end_date: '2026-07-01 21:00', translation_of: en.id, status: 'draft' } })
  t.equal(german.statusCode, 201, german.body.slice(0, 200))
  const deId = german.json<Mapped>().id

  const anonymous = async () => (await s.get(en.id)).json<Mapped>().translations
  const asEditor = async () => (await s.get(en.id, '', s.editor)).json<Mapped>().translations
  t.same(await anonymous(), { en: en.id }, 'a draft version is left out for anonymous callers')
  t.equal((await s.get(deId)).statusCode, 403, 'which cannot read it')
  t.same(await asEditor(), { en: en.id, de: deId }, 'an editor sees it')
  const listed = (await s.list()).json<{ events: Mapped[] }>().events.find((e) => e.id === en.id)
  t.same(listed?.translations, { en: en.id }, 'in lists too')
  const changes = (await s.inject({ url: `${API}/changes?resource=events` })).json<{ changes: Array<{ id: number; record?: Mapped }> }>()
  t.same(changes.changes.find((c) => c.id === en.id)?.record?.translations, { en: en.id }, 'in /changes records too')

  const before = String((await s.get(en.id)).headers.etag)
  t.equal((await s.patch(deId, { status: 'publish' })).statusCode, 200)
  t.same(await anonymous(), { en: en.id, de: deId }, 'published: shown to everyone')
  t.not(String((await s.get(en.id)).headers.etag), before, 'the other version\'s ETag moved')
  t.same((await s.list()).json<{ events: Mapped[] }>().events.find((e) => e.id === en.id)?.translations, { en: en.id, de: deId })

  t.equal((await s.patch(deId, { status: 'private' })).statusCode, 200)
  t.same(await anonymous(), { en: en.id }, 'private: left out again')
  t.same(await asEditor(), { en: en.id, de: deId })

  t.equal((await s.remove(deId)).statusCode, 200)
  t.same(await asEditor(), { en: en.id }, 'in the trash: no one reads it (410), no one is shown it')
  const admin = await s.auth('administrator')
  const adminChanges = (await s.inject({ url: `${API}/changes?resource=events`, headers: admin })).json<{ changes: Array<{ id: number; record?: Mapped }> }>()
  t.same(adminChanges.changes.find((c) => c.id === en.id)?.record?.translations, { en: en.id }, 'nor an administrator in /changes (and webhook payloads)')
})

t.test('venues and organizers: their translations, alone and as an event shows them', async (t) => {
  const s = await setup(t)
  for (const [collection, field, name] of [['venues', 'venue', 'Hall'], ['organizers', 'organizer', 'Club']] as const) {
    const en = (await s.inject({ method: 'POST', url: `${API}/${collection}`, headers: s.editor, payload: { [field]: name } })).json<Mapped>()
    const created = await s.inject({ method: 'POST', url: `${API}/${collection}?ml_language=de`, headers: s.editor, payload: { [field]: `${name} DE`, translation_of: en.id, status: 'draft' } })
    t.equal(created.statusCode, 201, created.body.slice(0, 200))
    const de = created.json<Mapped>()
    const event = await s.event(`At ${name}`, { [field]: [en.id] })
    const single = async (headers = {}) => (await s.inject({ url: `${API}/${collection}/${en.id}`, headers })).json<Mapped>().translations
    const shown = async (headers = {}) => (await s.get(event.id, '', headers)).json<Record<string, Mapped[]>>()[field]?.[0]?.translations
    t.same(await single(), { en: en.id }, `${collection}: a draft version left out`)
    t.same(await single(s.editor), { en: en.id, de: de.id }, `${collection}: an editor sees it`)
    t.same(await shown(), { en: en.id }, `${collection}: as the event shows it`)
    t.same(await shown(s.editor), { en: en.id, de: de.id })
    const list = (await s.inject({ url: `${API}/${collection}` })).json<Record<string, Mapped[]>>()[collection]?.find((r) => r.id === en.id)
    t.same(list?.translations, { en: en.id }, `${collection}: in lists`)
    const before = String((await s.inject({ url: `${API}/${collection}/${en.id}` })).headers.etag)

    t.equal((await s.inject({ method: 'PATCH', url: `${API}/${collection}/${de.id}`, headers: s.editor, payload: { status: 'publish' } })).statusCode, 200)
    t.same(await single(), { en: en.id, de: de.id }, `${collection}: published, shown`)
    t.same(await shown(), { en: en.id, de: de.id }, `${collection}: and in the event`)
    t.not(String((await s.inject({ url: `${API}/${collection}/${en.id}` })).headers.etag), before, 'the ETag moved')

    t.equal((await s.inject({ method: 'DELETE', url: `${API}/${collection}/${de.id}`, headers: s.editor })).statusCode, 200)
    t.same(await single(), { en: en.id }, `${collection}: in the trash, left out for anonymous callers`)
    t.same(await shown(), { en: en.id })
    t.same(await single(s.editor), { en: en.id, de: de.id }, `${collection}: an editor may read a trashed one, and is shown it`)
  }
})
