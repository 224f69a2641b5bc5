/**
 * Translations of the contract: `check` lists what keeps each language from being complete (exit 1 if
 * anything); `missing <lang>` prints, as YAML ready to fill in, the texts and messages <lang> lacks.
 */
import { stringify } from 'yaml'
import { loadLanguagePacks, translatableTexts, translationProblems } from './i18n-problems.js'
import { messageTable } from '../src/http/i18n.js'
import { LANGUAGES, type Language } from '../src/contract.js'
import { loadSpec } from '../src/http/spec.js'

const [command, language] = process.argv.slice(2)
const { document } = loadSpec()
const packs = loadLanguagePacks()
const others = LANGUAGES.filter((l): l is Exclude<Language, 'en'> => l !== 'en')

if (command === 'check') {
  const problems = others.flatMap((l) => translationProblems(document, l, packs[l]))
  for (const p of problems) process.stdout.write(`${p}\n`)
  process.stdout.write(problems.length === 0 ? 'all languages complete\n' : `${problems.length} problems\n`)
  process.exit(problems.length === 0 ? 0 : 1)
} else if (command === 'missing' && others.some((l) => l === language)) {
  const pack = packs[language as Exclude<Language, 'en'>]
  const english = messageTable(document['x-messages'])
  const messages: Record<string, unknown> = {}
  for (const [key, entry] of Object.entries(english)) {
    const have = pack.messages[key]
    if (typeof entry === 'string') { if (typeof have !== 'string') messages[key] = entry }
    else {
      const missing = Object.fromEntries(Object.entries(entry).filter(([r]) => typeof have !== 'object' || have[r] === undefined))
      if (Object.keys(missing).length > 0) messages[key] = missing
    }
  }
  const texts = Object.fromEntries([...translatableTexts(document)].filter((t) => pack.texts[t] === undefined).map((t) => [t, t]))
  process.stdout.write(stringify({ messages, texts }, { lineWidth: 0 }))
} else {
  process.stderr.write('usage: npm run -s i18n -- check | missing <at|de|es|ch-fr|ch-de>\n')
  process.exit(2)
}
