/**
 * The contract in six languages. English lives in `openapi/openapi.yaml`: every description, summary and
 * the title, plus the error messages under `x-messages`. Each other language has `openapi/i18n/<lang>.yaml`
 * with `texts` (keyed by the English text, so a new or changed English text has no translation until
 * one is written: the completeness test fails) and `messages` (keyed as `x-messages`).
 */
import { existsSync, readFileSync } from 'node:fs'
import { LANGUAGES, type Language } from '../contract.js'
import { parseYaml } from './yaml.js'

export type MessageTable = Record<string, string | Record<string, string>>

export interface LanguagePack {
  texts: Record<string, string>
  messages: MessageTable
}

const I18N_DIR = new URL('../../openapi/i18n/', import.meta.url)

type Json = Record<string, unknown>

function isJson(value: unknown): value is Json {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}

/** The translation files of every language but English (missing files load as empty packs). */
export function loadLanguagePacks(): Record<Exclude<Language, 'en'>, LanguagePack> {
  return parseLanguagePacks(readLanguagePackSources())
}

/** The YAML text of each language's translation file, `undefined` where the file is missing. */
export function readLanguagePackSources(): Record<Exclude<Language, 'en'>, string | undefined> {
  const sources: Partial<Record<Exclude<Language, 'en'>, string | undefined>> = {}
  for (const language of LANGUAGES) {
    if (language === 'en') continue
    const url = new URL(`${language}.yaml`, I18N_DIR)
    sources[language] = existsSync(url) ? readFileSync(url, 'utf8') : undefined
  }
  return sources as Record<Exclude<Language, 'en'>, string | undefined>
}

/** The packs in those texts (a missing text is an empty pack). */
export function parseLanguagePacks(sources: Record<Exclude<Language, 'en'>, string | undefined>): Record<Exclude<Language, 'en'>, LanguagePack> {
  const packs: Partial<Record<Exclude<Language, 'en'>, LanguagePack>> = {}
  for (const [language, text] of Object.entries(sources) as Array<[Exclude<Language, 'en'>, string | undefined]>) {
    packs[language] = languagePack(text === undefined ? {} : parseYaml(text))
  }
  return packs as Record<Exclude<Language, 'en'>, LanguagePack>
}

/** A pack from parsed data (a translation file, or the build's contract cache). */
export function languagePack(data: unknown): LanguagePack {
  return {
    texts: stringTable(isJson(data) ? data.texts : undefined),
    messages: messageTable(isJson(data) ? data.messages : undefined),
  }
}

function stringTable(value: unknown): Record<string, string> {
  const out: Record<string, string> = {}
  if (isJson(value)) for (const [k, v] of Object.entries(value)) if (typeof v === 'string') out[k] = v
  return out
}

export function messageTable(value: unknown): MessageTable {
  const out: MessageTable = {}
  if (!isJson(value)) return out
  for (const [k, v] of Object.entries(value)) {
    if (typeof v === 'string') out[k] = v
    else if (isJson(v)) out[k] = stringTable(v)
  }
  return out
}

const TEXT_KEYS = new Set(['description', 'summary'])

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

/** A copy of the document with every text replaced by `translate(text)`. `x-messages` is left out. */
function walkTexts(node: unknown, translate: (text: string) => string, root = true): unknown {
  if (Array.isArray(node)) return node.map((n) => walkTexts(n, translate, false))
  if (!isJson(node)) return node
  const out: Json = {}
  for (const [key, value] of Object.entries(node)) {
    if (root && key === 'x-messages') continue
    // Example data is shown as it is sent and answered: its `description` fields are records' texts.
    if (key === 'example' || (key === 'value' && isExampleObject(node))) {
      out[key] = value
    } else if (typeof value === 'string' && (TEXT_KEYS.has(key) || (key === 'title' && root === false && isInfo(node)))) {
      out[key] = translate(value)
    } else {
      out[key] = walkTexts(value, translate, false)
    }
  }
  return out
}

const EXAMPLE_KEYS = new Set(['summary', 'description', 'value', 'externalValue'])

/** An OpenAPI Example Object: `value` (or `externalValue`) with an optional summary and description. */
function isExampleObject(node: Json): boolean {
  return Object.keys(node).every((key) => EXAMPLE_KEYS.has(key))
}

function isInfo(node: Json): boolean {
  return typeof node.version === 'string' && typeof node.title === 'string'
}

/** The document in `language`: texts translated (English kept where a translation is missing). */
export function localizeDocument<T extends Json>(document: T, pack: LanguagePack | undefined): T {
  const translated = walkTexts(document, (text) => pack?.texts[text] ?? text)
  return translated as T
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
