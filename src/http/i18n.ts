/**
 * The contract in six languages. English lives in `openapi/openapi.yaml`: every description, summary and
 * the title, plus the error messages under `x-messages`. Each other language has `openapi/i18n/<lang>.yaml`
 * with `texts` (keyed by the English text, so a new or changed English text has no translation until
 * one is written: the completeness test fails) and `messages` (keyed as `x-messages`).
 */
import { existsSync, readFileSync } from 'node:fs'
import { LANGUAGES, type Language } from '../contract.js'
import { parseYaml } from './yaml.js'
import { isRecord, type Json } from '../lib/json.js'

export type MessageTable = Record<string, string | Record<string, string>>

export interface LanguagePack {
  texts: Record<string, string>
  messages: MessageTable
}

const I18N_DIR = new URL('../../openapi/i18n/', import.meta.url)



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
    texts: stringTable(isRecord(data) ? data.texts : undefined),
    messages: messageTable(isRecord(data) ? data.messages : undefined),
  }
}

function stringTable(value: unknown): Record<string, string> {
  const out: Record<string, string> = {}
  if (isRecord(value)) for (const [k, v] of Object.entries(value)) if (typeof v === 'string') out[k] = v
  return out
}

export function messageTable(value: unknown): MessageTable {
  const out: MessageTable = {}
  if (!isRecord(value)) return out
  for (const [k, v] of Object.entries(value)) {
    if (typeof v === 'string') out[k] = v
    else if (isRecord(v)) out[k] = stringTable(v)
  }
  return out
}

const TEXT_KEYS = new Set(['description', 'summary'])

/** A copy of the document with every text replaced by `translate(text)`. `x-messages` is left out. */
export function walkTexts(node: unknown, translate: (text: string) => string, root = true): unknown {
  if (Array.isArray(node)) return node.map((n) => walkTexts(n, translate, false))
  if (!isRecord(node)) return node
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
