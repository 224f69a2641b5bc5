/**
 * Error messages in six languages. The English templates are the spec's `x-messages`; translations come
 * from `openapi/i18n/<lang>.yaml`. Templates take `{name}` placeholders; a message that names a resource
 * has one template per resource (`notFoundById.venue`), since articles and genders differ by language.
 * Validator findings (Ajv's own texts) are translated with ajv-i18n.
 */
import { createRequire } from 'node:module'
import type { ErrorObject } from 'ajv'
import type { LanguagePack, MessageTable } from './i18n.js'
import type { Language } from '../contract.js'
import { correctValidationTexts } from './validation-texts.js'

type Localize = (errors: ErrorObject[]) => void

/**
 * ajv-i18n is CommonJS whose typings do not match its exports under NodeNext: load it plainly, and
 * only when a validation error is first translated (it loads every language it has: 16 ms at startup).
 */
let localizers: Record<'de' | 'es' | 'fr', Localize> | undefined
const ajvI18n = (): Record<'de' | 'es' | 'fr', Localize> => (localizers ??= createRequire(import.meta.url)('ajv-i18n'))

export const MESSAGE_KEYS = [
  'noRoute', 'invalidNamespace', 'forbidden', 'invalidParams', 'missingParams', 'namesAndMore', 'invalidJson', 'badUrl',
  'invalidRequest', 'unsupportedMediaType', 'unsupportedContentEncoding', 'unsupportedCharset', 'payloadTooLarge', 'internalError', 'notFoundById', 'notFoundBySlug',
  'archivePageNotFound', 'notAccessible', 'inTrash', 'preconditionFailed', 'termExists', 'parentNotFound',
  'parentCycle', 'parentLanguage', 'unknownEvent', 'translationOfMissing', 'translationExists', 'unknownUser',
  'statusNotAllowed', 'required', 'invalidDate', 'unknownImage', 'invalidImage', 'invalidUrl', 'invalidEmail',
  'geolocInactive', 'geoPair', 'geolocPair', 'unknownTerm', 'unknownLinked', 'noLongerAvailable',
  'passwordProtected', 'ticketsInactive', 'endBeforeStart', 'invalidTimezone', 'invalidFilterDate',
  'unparsableRequest', 'headersTooLarge', 'requestTimeout', 'invalidCursor', 'changesCursorExpired', 'nulCharacter',
  'invalidForm', 'datesDisagree', 'tooManyRequests', 'calendarName', 'webhookAddress', 'webhookHostUnresolved', 'notSent',
  'idempotencyKeyInUse', 'idempotencyKeyMismatch', 'invalidIdempotencyKey',
  'databaseUnavailable',
  'recurrenceMalformedRule', 'recurrenceMissingFrequency', 'recurrenceFinerFrequency', 'recurrenceUnsupportedPart',
  'recurrenceUnknownPart', 'recurrenceRepeatedPart', 'recurrenceMalformedValue', 'recurrencePartNotForFrequency',
  'recurrenceBySetPosAlone', 'recurrenceCountWithUntil', 'recurrenceTooManyOccurrences', 'recurrenceMalformedDate',
  'recurrenceTooManyDates', 'recurrenceUntilBeforeStart', 'recurrenceRdateBeforeStart', 'recurrenceNoOccurrences', 'recurrenceTooSparse',
  'occurrenceNotFound',
  'splitAtFirstOccurrence', 'occurrenceOfSingleEvent', 'splitAtRdate', 'splitChangesSeries',
] as const

export type MessageKey = (typeof MESSAGE_KEYS)[number]

export function isMessageKey(value: unknown): value is MessageKey {
  return typeof value === 'string' && (MESSAGE_KEYS as readonly string[]).includes(value)
}
export type MessageVars = Record<string, string>

export interface Catalog {
  /** The message for `key` in `language`; a string that is not a key is returned as it is. */
  translate(language: Language, key: string, vars?: MessageVars): string
  /** Ajv's messages in `language` (in place), for `data.details` and `data.params`. */
  localizeValidation(language: Language, errors: Array<{ keyword?: string; message?: string; params?: unknown }>): void
}

export class MessageCatalogError extends Error {}

/**
 * Builds the catalog, refusing to start when an English template is missing: every key thrown by the
 * code must have a text. A missing translation falls back to English (the completeness test fails).
 */
export function createCatalog(english: MessageTable, packs: Partial<Record<Language, LanguagePack>>): Catalog {
  for (const key of MESSAGE_KEYS) {
    if (english[key] === undefined) throw new MessageCatalogError(`x-messages lacks "${key}"`)
  }
  const template = (language: Language, key: string, resource: string | undefined): string | undefined => {
    const pick = (table: MessageTable | undefined) => {
      const entry = table?.[key]
      return typeof entry === 'string' ? entry : entry?.[resource ?? '']
    }
    return (language === 'en' ? undefined : pick(packs[language]?.messages)) ?? pick(english)
  }
  return {
    translate(language, key, vars = {}) {
      const text = template(language, key, vars.resource) ?? key
      return text.replace(/\{(\w+)\}/g, (whole, name: string) => vars[name] ?? whole)
    },
    localizeValidation(language, errors) {
      if (language === 'en') return
      const localize = ajvI18n()
      const base = language === 'es' ? 'es' : language === 'ch-fr' ? 'fr' : 'de'
      // ajv-i18n reads keyword and params and rewrites message: the fields Fastify passes on from Ajv.
      localize[base](errors as ErrorObject[])
      correctValidationTexts(base, errors)
      if (language === 'ch-de') for (const e of errors) if (e.message !== undefined) e.message = e.message.replace(/ß/g, 'ss')
    },
  }
}
