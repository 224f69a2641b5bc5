import t from 'tap'
import { translatableTexts, translationProblems } from '../scripts/i18n-problems.js'
import type { LanguagePack } from '../src/http/i18n.js'
import { LANGUAGES, type Language, type RouteIndex } from '../src/contract.js'
import { MESSAGE_KEYS } from '../src/http/messages.js'
import { API, build } from './helpers/build.js'
import { SPEC } from './helpers/contract.js'

const others = LANGUAGES.filter((l): l is Exclude<Language, 'en'> => l !== 'en')

t.test('every language is complete: every text and message translated, none left in English', async (t) => {
  for (const language of others) {
    t.same(translationProblems(SPEC.document, language, SPEC.packs[language]), [], `${language} is complete`)
  }
})

t.test('the completeness check fails on a missing, empty or untranslated text', async (t) => {
  const pack = SPEC.packs.de
  const [first, second] = [...translatableTexts(SPEC.document)].filter((text) => text.split(' ').length > 2)
  if (first === undefined || second === undefined) throw new Error('the spec has no long texts')
  const texts = { ...pack.texts, [second]: second }
  delete texts[first]
  const broken: LanguagePack = { texts, messages: { ...pack.messages, noRoute: '' } }
  const problems = translationProblems(SPEC.document, 'de', broken)
  t.same(problems, [
    `de: missing text: ${JSON.stringify(first)}`,
    `de: text left in English: ${JSON.stringify(second)}`,
    'de: empty message noRoute: "No route was found matching the URL and request method."',
  ])
})

t.test('Swiss Standard German never uses ß', async (t) => {
  const all = JSON.stringify(SPEC.packs['ch-de'])
  t.notOk(all.includes('ß'))
  t.match(all, /ss/)
})

t.test('x-messages has a text for every message the code can send', async (t) => {
  const messages = SPEC.document['x-messages']
  t.ok(typeof messages === 'object' && messages !== null)
  for (const key of MESSAGE_KEYS) t.ok(messages !== null && typeof messages === 'object' && key in messages, key)
})

t.test('/doc in every language: same shape, every description translated and none empty', async (t) => {
  const { inject } = await build(t)
  const english = (await inject({ url: `${API}/doc` })).json()
  const englishTexts = collectTexts(english)
  for (const language of LANGUAGES) {
    const res = await inject({ url: `${API}/doc?ml_language=${language}` })
    t.equal(res.statusCode, 200)
    t.equal(res.headers['content-language'], language)
    const doc = res.json()
    t.same(Object.keys(doc.paths), Object.keys(english.paths), `${language}: same paths`)
    const texts = collectTexts(doc)
    t.equal(texts.length, englishTexts.length, `${language}: same number of texts`)
    t.same(texts.filter((text) => text.trim() === ''), [], `${language}: no empty text`)
    if (language === 'en') continue
    const untranslated = texts.filter((text, i) => text === englishTexts[i] && text.split(/\s+/).length > 2)
    t.same(untranslated, [], `${language}: no English left`)
  }
})

t.test('the route index follows ml_language', async (t) => {
  const { inject } = await build(t)
  const en = (await inject({ url: API })).json<RouteIndex>()
  const es = (await inject({ url: `${API}?ml_language=es` })).json<RouteIndex>()
  const page = (index: RouteIndex) => index.routes[`${API}/events`]?.endpoints[0]?.args.page?.description
  t.equal(page(en), 'Page of results to return, starting at 1.')
  t.not(page(es), page(en))
  t.equal(es.routes[`${API}/events`]?.endpoints[0]?.args.page?.default, 1)
})

t.test('error messages follow ml_language, in the query or the body', async (t) => {
  const { inject, auth } = await build(t)
  const expected: Record<Language, string> = {
    en: 'Category with ID 99 does not exist.',
    de: 'Die Kategorie mit der ID 99 existiert nicht.',
    at: 'Die Kategorie mit der ID 99 existiert nicht.',
    'ch-de': 'Es gibt keine Kategorie mit der ID 99.',
    'ch-fr': "La catégorie avec l'identifiant 99 n'existe pas.",
    es: 'No existe ninguna categoría con el ID 99.',
  }
  for (const language of LANGUAGES) {
    const res = await inject({ url: `${API}/categories/99?ml_language=${language}` })
    t.equal(res.statusCode, 404)
    t.equal(res.headers['content-language'], language)
    t.same(res.json(), { code: 'rest-category-not-found', message: expected[language], data: { status: 404 } })
  }
  const editor = await auth('editor')
  const res = await inject({ method: 'PATCH', url: `${API}/tags/7`, headers: editor, payload: { ml_language: 'es' } })
  t.equal(res.json().message, 'No existe ninguna etiqueta con el ID 7.')
  const invalid = await inject({ url: `${API}/tags?per_page=x&ml_language=de` })
  t.equal(invalid.statusCode, 400)
  t.equal(invalid.json().message, 'Ungültige(r) Parameter: per_page.')
})

function collectTexts(node: unknown, out: string[] = [], parentIsInfo = false): string[] {
  if (Array.isArray(node)) for (const n of node) collectTexts(n, out)
  else if (node !== null && typeof node === 'object') {
    const isInfo = 'version' in node && 'title' in node
    // Example data (an `example`, the `value` of an Example Object) is shown as sent: records' texts, not the document's.
    const isExample = Object.keys(node).every((key) => ['summary', 'description', 'value', 'externalValue'].includes(key))
    for (const [key, value] of Object.entries(node)) {
      if (key === 'example' || (key === 'value' && isExample)) continue
      if (typeof value === 'string' && (key === 'description' || key === 'summary' || (key === 'title' && isInfo))) out.push(value)
      else collectTexts(value, out, parentIsInfo)
    }
  }
  return out
}
