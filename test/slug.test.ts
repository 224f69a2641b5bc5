/**
 * Slugs (CONTRACT §5): `[a-z0-9-]`, at most 200 characters, lower case, folded to ASCII, words joined by
 * hyphens; made unique with `-2`, `-3` … within the same limit.
 */
import t from 'tap'
import { MAX_SLUG_LENGTH, slugify, trimSlug, uniqueSlug } from '../src/lib/slug.js'

const SLUG = /^[a-z0-9]+(-[a-z0-9]+)*$/

t.test('lower-cases and joins words with single hyphens', async (t) => {
  t.equal(slugify('Hello World'), 'hello-world')
  t.equal(slugify('Summer Jazz Festival 2026'), 'summer-jazz-festival-2026')
  t.equal(slugify('  many   spaces\tand\nlines  '), 'many-spaces-and-lines')
  t.equal(slugify('already-a-slug'), 'already-a-slug')
  t.equal(slugify('CamelCaseTitle'), 'camelcasetitle')
})

t.test('punctuation and symbols become one hyphen, never at either end', async (t) => {
  t.equal(slugify('Rock & Roll'), 'rock-roll')
  t.equal(slugify('--Hello--World--'), 'hello-world')
  t.equal(slugify('What?! Why... (now)'), 'what-why-now')
  t.equal(slugify('a_b.c/d\\e:f'), 'a-b-c-d-e-f')
  t.equal(slugify('100% fun @ 8pm #1'), '100-fun-8pm-1')
  t.equal(slugify('Café 🎉 Party'), 'cafe-party')
})

t.test('accents are folded to ASCII', async (t) => {
  t.equal(slugify('Crème brûlée à la façon'), 'creme-brulee-a-la-facon')
  t.equal(slugify('Año Nuevo en España'), 'ano-nuevo-en-espana')
  t.equal(slugify('Žižkov Łódź Øresund'), 'zizkov-lodz-oresund')
  t.equal(slugify('ÉCOLE'), 'ecole')
})

t.test('German letters fold the way German readers expect', async (t) => {
  t.equal(slugify('Jänner Fest'), 'jaenner-fest')
  t.equal(slugify('Öffnungszeiten über Ostern'), 'oeffnungszeiten-ueber-ostern')
  t.equal(slugify('ÄÖÜ äöü'), 'aeoeue-aeoeue')
  t.equal(slugify('Straße'), 'strasse')
  t.equal(slugify('GROẞE Feier'), 'grosse-feier')
})

t.test('letters without a decomposition have their own folding', async (t) => {
  t.equal(slugify('Æbleskiver Œuvre'), 'aebleskiver-oeuvre')
  t.equal(slugify('Þórr Ðóra'), 'thorr-dora')
  t.equal(slugify('ﬁnal ﬂight'), 'final-flight', 'ligatures are compatibility-decomposed')
  t.equal(slugify('Ⅻ ①'), 'xii-1')
})

t.test('nothing is left when no letter or digit can be folded', async (t) => {
  t.equal(slugify(''), '')
  t.equal(slugify('   '), '')
  t.equal(slugify('!!!'), '')
  t.equal(slugify('日本語'), '')
  t.equal(slugify('Ελληνικά'), '')
  t.equal(slugify('日本 2026'), '2026')
})

t.test('slugs are at most 200 characters and never end with a hyphen', async (t) => {
  t.equal(MAX_SLUG_LENGTH, 200)
  t.equal(slugify('a'.repeat(300)), 'a'.repeat(200))
  const words = slugify('word '.repeat(100))
  t.ok(words.length <= 200)
  t.match(words, SLUG)
  t.equal(words, 'word-'.repeat(40).slice(0, 199), 'the cut falls on a hyphen, which is dropped')
  const cut = slugify(`${'a'.repeat(199)} b`)
  t.equal(cut, 'a'.repeat(199))
  t.equal(slugify(`${'ä'.repeat(150)}`).length, 200, 'the limit applies after folding')
})

t.test('every slug matches [a-z0-9-] without empty segments', async (t) => {
  for (const text of ['Hello World', 'Ärger & Öl', ' -- x -- ', 'Ça va? Très bien!', 'ﬀ ﬃ', 'ᴬᴮᶜ', '１２３ ＡＢＣ', 'İstanbul Iğdır']) {
    const slug = slugify(text)
    t.match(slug, SLUG, `${text} → ${slug}`)
  }
  t.equal(slugify('１２３ ＡＢＣ'), '123-abc', 'full-width forms fold to ASCII')
  t.equal(slugify('İstanbul'), 'istanbul')
})

t.test('trimSlug cuts to a length without leaving a trailing hyphen', async (t) => {
  t.equal(trimSlug('hello-world', 20), 'hello-world')
  t.equal(trimSlug('hello-world', 11), 'hello-world')
  t.equal(trimSlug('hello-world', 6), 'hello')
  t.equal(trimSlug('hello-world', 5), 'hello')
  t.equal(trimSlug('hello--world', 7), 'hello')
  t.equal(trimSlug('hello-world', 8), 'hello-wo')
})

t.test('uniqueSlug keeps a free slug as it is', async (t) => {
  t.equal(uniqueSlug('rock', new Set()), 'rock')
  t.equal(uniqueSlug('rock', new Set(['rock-2', 'rocky'])), 'rock')
})

t.test('uniqueSlug appends the first free -2, -3 …', async (t) => {
  t.equal(uniqueSlug('rock', new Set(['rock'])), 'rock-2')
  t.equal(uniqueSlug('rock', new Set(['rock', 'rock-2'])), 'rock-3')
  t.equal(uniqueSlug('rock', new Set(['rock', 'rock-2', 'rock-4'])), 'rock-3')
  const taken = new Set(['rock', ...Array.from({ length: 10 }, (_, i) => `rock-${i + 2}`)])
  t.equal(uniqueSlug('rock', taken), 'rock-12')
})

t.test('uniqueSlug stays within 200 characters', async (t) => {
  const long = 'a'.repeat(200)
  const second = uniqueSlug(long, new Set([long]))
  t.equal(second, `${'a'.repeat(198)}-2`)
  t.equal(second.length, 200)
  const third = uniqueSlug(long, new Set([long, second]))
  t.equal(third, `${'a'.repeat(198)}-3`)
  const taken = new Set([long, ...Array.from({ length: 8 }, (_, i) => `${'a'.repeat(198)}-${i + 2}`)])
  const tenth = uniqueSlug(long, taken)
  t.equal(tenth, `${'a'.repeat(197)}-10`)
  t.equal(tenth.length, 200)
  const hyphen = `${'a'.repeat(197)}-bb`
  t.equal(uniqueSlug(hyphen, new Set([hyphen])), `${'a'.repeat(197)}-2`, 'a cut on a hyphen drops it before the suffix')
})
