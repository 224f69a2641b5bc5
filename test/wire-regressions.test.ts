/**
 * What goes over the wire, as issue 21 found it wrong: the list envelope's key order (item 8), ids above
 * 2^53 echoed as sent, the inline organizer's e-mail named, the sign of a cost (item 9), form bodies that
 * split only the comma-list form (item 14), and the codes of malformed bodies (item 17).
 */
import t from 'tap'
import { API } from './helpers/build.js'
import { setup } from './helpers/events.js'


// ------------------------------------------------------------------------------------------- item 8

t.test('item 8: every list envelope is <records>, rest_url, next_rest_url?, previous_rest_url?, total, total_pages', async (t) => {
  const s = await setup(t)
  for (let i = 0; i < 3; i++) {
    await s.event(`E${i}`)
    await s.venue({ venue: `V${i}` })
    await s.organizer({ organizer: `O${i}` })
    await s.category(`C${i}`)
    await s.tag(`T${i}`)
  }
  const lists: Array<[string, string]> = [
    ['events', 'events'], ['venues', 'venues'], ['organizers', 'organizers'],
    ['categories?hide_empty=false', 'categories'], ['tags?hide_empty=false', 'tags'],
  ]
  for (const [path, field] of lists) {
    const sep = path.includes('?') ? '&' : '?'
    const middle = await s.inject({ url: `${API}/${path}${sep}per_page=1&page=2` })
    t.same(Object.keys(middle.json()), [field, 'rest_url', 'next_rest_url', 'previous_rest_url', 'total', 'total_pages'], `${field}: a middle page`)
    const last = await s.inject({ url: `${API}/${path}${sep}per_page=1&page=3` })
    t.same(Object.keys(last.json()), [field, 'rest_url', 'previous_rest_url', 'total', 'total_pages'], `${field}: the last page`)
    const first = await s.inject({ url: `${API}/${path}${sep}per_page=1` })
    t.same(Object.keys(first.json()), [field, 'rest_url', 'next_rest_url', 'total', 'total_pages'], `${field}: the first page`)
    const only = await s.inject({ url: `${API}/${path}` })
    t.same(Object.keys(only.json()), [field, 'rest_url', 'total', 'total_pages'], `${field}: one page`)
  }
})
