import t from 'tap'
import { API, build } from './helpers/build.js'

t.test('categories round trip', async (t) => {
  const { inject, auth } = await build(t)
  const editor = await auth('editor')
  const created = await inject({ method: 'POST', url: `${API}/categories`, headers: editor, payload: { name: 'Rock' } })
  t.equal(created.statusCode, 201)
  const list = await inject({ url: `${API}/categories?hide_empty=false` })
  t.equal(list.json().total, 1)
})
