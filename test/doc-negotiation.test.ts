/**
 * `/doc` content negotiation (CONTRACT §9) by q-values and case-insensitive media types, as RFC 9110
 * §12.5.1 says, and Swagger UI under a PUBLIC_URL with a path (issue 19 items 14, 15).
 */
import t from 'tap'
import { API, build } from './helpers/build.js'

t.test('/doc picks JSON or YAML by the Accept header, q-values and case included', async (t) => {
  const { inject } = await build(t)
  const cases: Array<[string | undefined, 'json' | 'yaml']> = [
    [undefined, 'json'],
    ['*/*', 'json'],
    ['application/json', 'json'],
    ['application/yaml', 'yaml'],
    ['application/YAML', 'yaml'],
    ['Application/Yaml', 'yaml'],
    ['text/yaml', 'yaml'],
    ['application/yaml;q=0, application/json', 'json'],
    ['application/json, application/yaml;q=0.1', 'json'],
    ['application/json;q=0.5, application/yaml', 'yaml'],
    ['application/yaml;q=0.9, application/json;q=0.8', 'yaml'],
    ['application/yaml;q=0', 'json'],
    ['text/html', 'json'],
  ]
  for (const [accept, expected] of cases) {
    const res = await inject({ url: `${API}/doc`, headers: accept === undefined ? {} : { accept } })
    t.equal(res.statusCode, 200, String(accept))
    t.match(res.headers['content-type'], expected === 'json' ? /^application\/json/ : /^application\/yaml/, `${String(accept)} → ${expected}`)
    t.match(res.headers.vary, /(^|, )Accept(,|$)/, 'Vary names Accept: one URL, two forms')
    t.match(res.headers.vary, /Accept-Encoding/)
  }
})

t.test('Swagger UI at /ui and /ui/ loads its assets under the path of PUBLIC_URL', async (t) => {
  const { inject } = await build(t, { config: { publicUrl: 'https://api.example.com:8443/base' } })
  for (const url of [`${API}/ui`, `${API}/ui/`]) {
    const res = await inject({ url })
    t.equal(res.statusCode, 200, url)
    const sources = [...res.body.matchAll(/(?:src|href)="([^"]+)"/g)].map((m) => m[1] ?? '')
    t.ok(sources.length > 3, `${url}: assets found`)
    for (const source of sources) {
      t.ok(!source.startsWith('/') || source.startsWith(`/base${API}/ui/`), `${url}: ${source} is under /base`)
    }
  }
  const plain = await build(t)
  const res = await plain.inject({ url: `${API}/ui` })
  t.match(res.body, `src="${API}/ui/static/swagger-ui-bundle.js"`, 'without a path, assets stay at the root')
})
