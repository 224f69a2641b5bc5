/**
 * The translation checks of `npm run i18n` and of the completeness test: which texts of the contract
 * are translatable, and what keeps a language from being complete. Tool code: the server never loads it.
 */
import type { Language } from '../src/contract.js'
import { messageTable, parseLanguagePacks, readLanguagePackSources, walkTexts, type LanguagePack } from '../src/http/i18n.js'
import type { Json } from '../src/lib/json.js'

/** The translation files of every language but English (missing files load as empty packs). */
export function loadLanguagePacks(): Record<Exclude<Language, 'en'>, LanguagePack> {
  return parseLanguagePacks(readLanguagePackSources())
}

/**
 * Every translatable English text of the document: descriptions and summaries anywhere (a property
 * *named* `description` is a schema, not a text, and is walked into), and `info.title`.
 */
export function translatableTexts(document: Json): Set<string> {
  const texts = new Set<string>()
  walkTexts(document, (text) => {
    texts.add(text)
    return text
  })
  return texts
}

const PLACEHOLDER = /\{(\w+)\}/g

function placeholders(text: string): string {
  return [...text.matchAll(PLACEHOLDER)].map((m) => m[1]).sort().join(',')
}

function wordCount(text: string): number {
  return text.trim().split(/\s+/).filter((w) => w !== '').length
}

/**
 * What keeps a language from being complete: a text or message without a translation, an empty one,
 * one left in English (over two words), lost `{placeholders}`, a `ß` in Swiss German, or an entry whose
 * English text no longer exists. The completeness test and `npm run i18n -- check` report these.
 */
export function translationProblems(document: Json, language: Exclude<Language, 'en'>, pack: LanguagePack): string[] {
  const problems: string[] = []
  const english = messageTable(document['x-messages'])
  const texts = translatableTexts(document)
  const check = (where: string, source: string, translated: string | undefined) => {
    if (translated === undefined) problems.push(`${language}: missing ${where}: ${JSON.stringify(source)}`)
    else if (translated.trim() === '') problems.push(`${language}: empty ${where}: ${JSON.stringify(source)}`)
    else {
      if (wordCount(source) > 2 && translated === source) problems.push(`${language}: ${where} left in English: ${JSON.stringify(source)}`)
      if (placeholders(source) !== placeholders(translated)) problems.push(`${language}: ${where} placeholders differ: ${JSON.stringify(translated)}`)
      if (language === 'ch-de' && translated.includes('ß')) problems.push(`${language}: ${where} uses ß: ${JSON.stringify(translated)}`)
    }
  }
  for (const text of texts) check('text', text, pack.texts[text])
  for (const text of Object.keys(pack.texts)) if (!texts.has(text)) problems.push(`${language}: stale text (no such English text): ${JSON.stringify(text)}`)
  for (const [key, entry] of Object.entries(english)) {
    const translated = pack.messages[key]
    if (typeof entry === 'string') {
      check(`message ${key}`, entry, typeof translated === 'string' ? translated : undefined)
    } else {
      for (const [resource, text] of Object.entries(entry)) {
        check(`message ${key}.${resource}`, text, typeof translated === 'object' ? translated[resource] : undefined)
      }
    }
  }
  for (const key of Object.keys(pack.messages)) if (english[key] === undefined) problems.push(`${language}: stale message ${key}`)
  return problems
}
