/**
 * `search` on every list (CONTRACT §3, issue 21 item 7): a literal substring match (`%`, `_`, `\` plain)
 * after NFC normalisation and full case folding, so that `istanbul` finds `İstanbul`, `STRASSE` finds
 * `Straße` and composed and decomposed `é` meet; no accent folding; a password-protected event's
 * description is never matched.
 */
import t from 'tap'
import { FOLDS_INTO_ASCII, foldText } from '../src/lib/text.js'
import { API } from './helpers/build.js'
import { setup } from './helpers/events.js'

const COMPOSED = 'Caf\u00e9'
const DECOMPOSED = 'Cafe\u0301'

t.test('item 7: FOLDS_INTO_ASCII lists every character whose fold holds ASCII (the pre-filter keeps every match)', async (t) => {
  const found: string[] = []
  for (let cp = 0x80; cp <= 0x10ffff; cp++) {
    if (cp >= 0xd800 && cp <= 0xdfff) continue
    if (/[\x00-\x7f]/.test(foldText(String.fromCodePoint(cp)))) found.push(String.fromCodePoint(cp))
  }
  t.same([...FOLDS_INTO_ASCII].filter((c) => c !== '\u0307').sort(), found.sort())
  t.equal(foldText('i\u0307'), 'i', 'U+0307 after i is dropped, hence listed too')
})

t.test('the fold is stable: a folded character folds to itself (ẞ, which lower-cases to ß, folds to ss like ß)', async (t) => {
  const unstable: string[] = []
  for (let cp = 0; cp <= 0x10ffff; cp++) {
    if (cp >= 0xd800 && cp <= 0xdfff) continue
    const folded = foldText(String.fromCodePoint(cp))
    if (foldText(folded) !== folded) unstable.push(`U+${cp.toString(16)}`)
  }
  t.same(unstable, [])
  t.equal(foldText('GROẞE'), foldText('große'))
})

t.test('item 7: every list searches folded text', async (t) => {
  const s = await setup(t)
  const names = ['İstanbul Nights', 'Straße Fest', `${COMPOSED} Crème`, `${DECOMPOSED} Noir`, '100% _under\\score', 'ΟΔΟΣ Party', 'Ofﬁce Hours']
  for (const name of names) {
    await s.event(name)
    await s.venue({ venue: `${name} Hall`, city: name })
    await s.organizer({ organizer: `${name} Club` })
    await s.category(`${name} C`)
    await s.tag(`${name} T`)
  }
  const secret = await s.event('Secret', { description: 'Istanbul backstage' })
  t.equal((await s.patch(secret.id, { password: 'pw' })).statusCode, 200)
  await s.event('Open', { description: 'STRASSE side' })
  const searches: Array<[string, string[]]> = [
    ['istanbul', ['İstanbul Nights']],
    ['İSTANBUL', ['İstanbul Nights']],
    ['strasse', ['Straße Fest']],
    ['STRASSE', ['Straße Fest']],
    ['straße', ['Straße Fest']],
    [COMPOSED.toLowerCase(), [`${COMPOSED} Crème`, `${DECOMPOSED} Noir`]],
    [DECOMPOSED.toUpperCase(), [`${COMPOSED} Crème`, `${DECOMPOSED} Noir`]],
    ['cafe', []], // terms: their slugs (`cafe-creme-c`) are ASCII, and terms search names and slugs
    ['100%', ['100% _under\\score']],
    ['%', ['100% _under\\score']],
    ['_', ['100% _under\\score']],
    ['\\s', ['100% _under\\score']],
    ['οδοσ', ['ΟΔΟΣ Party']],
    ['οδος', ['ΟΔΟΣ Party']],
    ['office', ['Ofﬁce Hours']],
  ]
  const lists: Array<[string, string, string]> = [
    ['events', 'events', 'title'], ['venues', 'venues', 'venue'], ['organizers', 'organizers', 'organizer'],
    ['categories', 'categories', 'name'], ['tags', 'tags', 'name'],
  ]
  for (const [path, field, key] of lists) {
    for (const [needle, expected] of searches) {
      const sep = path === 'categories' || path === 'tags' ? '&hide_empty=false' : ''
      const res = await s.inject({ url: `${API}/${path}?per_page=50${sep}&search=${encodeURIComponent(needle)}` })
      t.equal(res.statusCode, 200)
      const got = res.json<Record<string, Array<Record<string, string>>>>()[field]?.map((r) => r[key] ?? '') ?? []
      const want = expected.map((name) => (path === 'events' ? name : path === 'venues' ? `${name} Hall` : path === 'organizers' ? `${name} Club` : path === 'categories' ? `${name} C` : `${name} T`))
      const extra = path === 'events' && foldText(needle) === 'strasse' ? ['Open']
        : needle === 'cafe' && (path === 'categories' || path === 'tags') ? got.filter((n) => n.includes('Noir') || n.includes('Crème'))
        : []
      t.same(got.sort(), [...want, ...extra].sort(), `${path} search=${JSON.stringify(needle)}`)
    }
  }
  const hidden = await s.list('?search=backstage')
  t.same(hidden.json<{ events: unknown[] }>().events, [], 'a protected description is not searched')
  const istanbul = await s.list('?search=istanbul')
  t.same(istanbul.json<{ events: Array<{ title: string }> }>().events.map((e) => e.title), ['İstanbul Nights'], 'nor folded')
})
