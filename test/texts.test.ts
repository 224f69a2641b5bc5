/**
 * Texts the server writes as it was asked (issue 19 item 16): an id that does not exist is echoed with
 * the digits sent (never `1e+23`), the validator's own texts are correct in every language, and the site
 * time zone is named in its canonical case whatever case it was configured in.
 */
import t from 'tap'
import { createRequire } from 'node:module'
import type { ErrorObject } from 'ajv'
import { loadConfig } from '../src/config.js'
import { createCatalog } from '../src/http/messages.js'
import { messageTable } from '../src/http/i18n.js'
import type { Language } from '../src/contract.js'
import { API, build } from './helpers/build.js'
import { SPEC } from './helpers/contract.js'
import { expectError } from './helpers/errors.js'

t.test('a huge id that does not exist is echoed with the digits sent', async (t) => {
  const { inject } = await build(t)
  const digits = '99999999999999999999999'
  for (const resource of ['events', 'venues', 'organizers', 'categories', 'tags']) {
    const res = await inject({ url: `${API}/${resource}/${digits}` })
    const body = expectError(t, res, 404, `rest-${resource === 'categories' ? 'category' : resource.slice(0, -1)}-not-found`)
    t.match(body.message, ` ${digits} `, resource)
    t.notMatch(body.message, /e\+/, `${resource}: no exponent`)
  }
  const de = await inject({ url: `${API}/events/${digits}?ml_language=de` })
  t.match(de.json<{ message: string }>().message, digits)
})

t.test('a Spanish enum finding says "debe ser"', async (t) => {
  const { inject } = await build(t)
  const res = await inject({ url: `${API}/events?status=bogus&ml_language=es` })
  const body = expectError(t, res, 400, 'rest_invalid_param', ['status'])
  t.match(body.data.params, { status: 'status[0] debe ser igual a uno de los valores predefinidos' })
})

/** One finding of every keyword Ajv reports, with the params each message reads. */
const FINDINGS: Array<Pick<ErrorObject, 'keyword' | 'params'>> = [
  { keyword: 'additionalItems', params: { limit: 2 } },
  { keyword: 'items', params: { limit: 1 } },
  { keyword: 'additionalProperties', params: { additionalProperty: 'x' } },
  { keyword: 'anyOf', params: {} },
  { keyword: 'const', params: { allowedValue: 1 } },
  { keyword: 'contains', params: {} },
  { keyword: 'dependentRequired', params: { property: 'a', deps: 'b', depsCount: 1 } },
  { keyword: 'discriminator', params: { error: 'tag', tag: 'kind' } },
  { keyword: 'discriminator', params: { error: 'mapping', tag: 'kind' } },
  { keyword: 'enum', params: { allowedValues: ['a'] } },
  { keyword: 'false schema', params: {} },
  { keyword: 'format', params: { format: 'uri' } },
  { keyword: 'if', params: { failingKeyword: 'then' } },
  { keyword: 'maximum', params: { comparison: '<=', limit: 5 } },
  { keyword: 'maxItems', params: { limit: 1 } },
  { keyword: 'maxItems', params: { limit: 100 } },
  { keyword: 'maxLength', params: { limit: 1 } },
  { keyword: 'maxLength', params: { limit: 200 } },
  { keyword: 'minLength', params: { limit: 1 } },
  { keyword: 'maxProperties', params: { limit: 2 } },
  { keyword: 'minimum', params: { comparison: '>=', limit: 1 } },
  { keyword: 'multipleOf', params: { multipleOf: 2 } },
  { keyword: 'not', params: {} },
  { keyword: 'oneOf', params: { passingSchemas: null } },
  { keyword: 'pattern', params: { pattern: '^a$' } },
  { keyword: 'propertyNames', params: { propertyName: 'x' } },
  { keyword: 'required', params: { missingProperty: 'title' } },
  { keyword: 'type', params: { type: 'integer' } },
  { keyword: 'unevaluatedItems', params: { len: 2 } },
  { keyword: 'unevaluatedProperties', params: { unevaluatedProperty: 'x' } },
  { keyword: 'uniqueItems', params: { i: 1, j: 0 } },
]

/** Misspellings and English left-overs found in ajv-i18n 4.2's German, French and Spanish texts. */
const WRONG = [/deber ser/, /(^|\s)és(\s|$)/, /patron\b/, /\b1 caracter\b/, /élémént/, /##/, /\bmust\b/, /\bvalue of\b/, /\btag "/, /valides/, /muss sein:/]

t.test('the validator texts of every language are free of known mistakes', async (t) => {
  const catalog = createCatalog(messageTable(SPEC.document['x-messages']), SPEC.packs)
  const english = createRequire(import.meta.url)('ajv-i18n').en as (errors: ErrorObject[]) => void
  for (const language of ['at', 'de', 'ch-de', 'ch-fr', 'es'] as Language[]) {
    for (const finding of FINDINGS) {
      const errors = [{ ...finding, instancePath: '', schemaPath: '#', message: 'untranslated' }] as ErrorObject[]
      catalog.localizeValidation(language, errors)
      const message = errors[0]?.message ?? ''
      const reference = [{ ...finding, instancePath: '', schemaPath: '#' }] as ErrorObject[]
      english(reference)
      t.not(message, 'untranslated', `${language} ${finding.keyword}: translated`)
      t.not(message, reference[0]?.message, `${language} ${finding.keyword}: not left in English (${message})`)
      for (const wrong of WRONG) t.notMatch(message, wrong, `${language} ${finding.keyword}: ${message}`)
      if (language === 'ch-de') t.notMatch(message, /ß/, 'ch-de: no ß')
    }
  }
})

t.test('the site time zone is named in its canonical case', async (t) => {
  t.equal(loadConfig({ CALENDAR_TIMEZONE: 'europe/zurich' }).timezone, 'Europe/Zurich')
  t.equal(loadConfig({ CALENDAR_TIMEZONE: 'AMERICA/NEW_YORK' }).timezone, 'America/New_York')
  t.equal(loadConfig({ CALENDAR_TIMEZONE: 'utc' }).timezone, 'UTC')
  t.equal(loadConfig({ CALENDAR_TIMEZONE: 'Asia/Kolkata' }).timezone, 'Asia/Kolkata', 'a canonical name stays')
  t.equal(loadConfig({ CALENDAR_TIMEZONE: 'Asia/Calcutta' }).timezone, 'Asia/Calcutta', 'an alias is not replaced')
  const { inject, auth } = await build(t, { config: { timezone: loadConfig({ CALENDAR_TIMEZONE: 'europe/zurich' }).timezone } })
  const editor = await auth('editor')
  const res = await inject({ method: 'POST', url: `${API}/events`, headers: editor, payload: { title: 'Gig', start_date: '2026-07-01 20:00:00', end_date: '2026-07-01 23:00:00' } })
  t.equal(res.statusCode, 201)
  t.equal(res.json().timezone, 'Europe/Zurich')
})
