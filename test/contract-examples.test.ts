/**
 * Every parameter, request body (JSON and form) and response of the contract has a realistic example,
 * and every example validates against its schema (Ajv 2020 with formats, no coercion: an example is the
 * value itself). Every Example Object has a value (Spectral's oas3-examples-value-or-externalValue): the
 * "Not sent" first choice that leaves a filter empty in Swagger UI is added to the UI's copy only
 * (test/swagger-ui.test.ts).
 */
import { Ajv2020 } from 'ajv/dist/2020.js'
import addFormats from 'ajv-formats'
import t from 'tap'
import { isMessageKey } from '../src/http/messages.js'
import { dereference, servedDocument } from '../src/http/spec.js'
import { SPEC } from './helpers/contract.js'

type Json = Record<string, unknown>
const isJson = (value: unknown): value is Json => typeof value === 'object' && value !== null && !Array.isArray(value)

const DOC = dereference(servedDocument(SPEC, 'https://calendar.example.com', 'en'))
const ajv = new Ajv2020({ strict: false, allErrors: true })
addFormats.default(ajv)

/** The example values of an object with `example` or `examples` (Example Objects), and how many lack a value. */
function examplesOf(node: Json): { values: unknown[]; unset: number } {
  const values: unknown[] = []
  let unset = 0
  if ('example' in node) values.push(node.example)
  if (isJson(node.examples)) {
    for (const example of Object.values(node.examples)) {
      if (isJson(example) && 'value' in example) values.push(example.value)
      else unset++
    }
  }
  return { values, unset }
}

function problems(schema: unknown, value: unknown): string[] {
  const validate = ajv.compile(isJson(schema) ? schema : {})
  return validate(value) ? [] : (validate.errors ?? []).map((e) => `${e.instancePath} ${e.message ?? ''}`)
}

const operations = Object.entries(DOC.paths).flatMap(([path, item]) =>
  ['get', 'post', 'put', 'patch', 'delete'].flatMap((method) => (isJson(item[method]) ? [{ where: `${method.toUpperCase()} ${path}`, op: item[method] as Json }] : [])))

t.test('every parameter has a valid example', async (t) => {
  let checked = 0
  for (const { where, op } of operations) {
    for (const parameter of Array.isArray(op.parameters) ? op.parameters.filter(isJson) : []) {
      const { values, unset } = examplesOf(parameter)
      t.ok(values.length >= 1, `${where} ${String(parameter.name)}: has an example`)
      t.equal(unset, 0, `${where} ${String(parameter.name)}: every example has a value`)
      for (const value of values) {
        t.strictSame(problems(parameter.schema, value), [], `${where} ${String(parameter.name)}: ${JSON.stringify(value)}`)
        checked++
      }
    }
  }
  t.ok(checked > 200, `${checked} parameter examples`)
})

t.test('every request body has a valid example for JSON and for the form', async (t) => {
  let checked = 0
  for (const { where, op } of operations) {
    const content = isJson(op.requestBody) && isJson(op.requestBody.content) ? op.requestBody.content : undefined
    if (content === undefined) continue
    t.strictSame(Object.keys(content).sort(), ['application/json', 'application/x-www-form-urlencoded'], `${where}: JSON and form`)
    for (const [type, media] of Object.entries(content)) {
      if (!isJson(media)) continue
      const { values } = examplesOf(media)
      t.equal(values.length, 1, `${where} ${type}: one example`)
      for (const value of values) {
        t.strictSame(problems(media.schema, value), [], `${where} ${type}`)
        if (type === 'application/x-www-form-urlencoded') {
          // A form carries text: every value of the example is a string (or a list of them).
          t.ok(isJson(value) && Object.values(value).every((v) => typeof v === 'string'), `${where}: the form example is text`)
        }
        checked++
      }
    }
  }
  t.equal(checked, 2 * 35, 'JSON and form examples of every write')
})

t.test('every response with a body has valid examples', async (t) => {
  let checked = 0
  for (const { where, op } of operations) {
    for (const [status, response] of Object.entries(isJson(op.responses) ? op.responses : {})) {
      if (!isJson(response) || !isJson(response.content)) continue
      for (const [type, media] of Object.entries(response.content)) {
        if (!isJson(media)) continue
        const { values } = examplesOf(media)
        t.ok(values.length >= 1, `${where} ${status} ${type}: has an example`)
        for (const value of values) {
          const found = type === 'application/yaml' ? (typeof value === 'string' ? [] : ['not text']) : problems(media.schema, value)
          if (found.length > 0) t.fail(`${where} ${status} ${type}`, { found })
          checked++
        }
      }
    }
  }
  t.ok(checked > 52 * 8, `${checked} response examples`)
})

t.test('error examples carry their own status; success examples are records of the demo calendar', async (t) => {
  for (const { where, op } of operations) {
    for (const [status, response] of Object.entries(isJson(op.responses) ? op.responses : {})) {
      if (!isJson(response) || !isJson(response.content) || Number(status) < 400) continue
      const media = response.content['application/json']
      const { values } = examplesOf(isJson(media) ? media : {})
      for (const value of values) t.equal(isJson(value) && isJson(value.data) ? value.data.status : undefined, Number(status), `${where} ${status}`)
    }
  }
  const event = (DOC.components as Json).examples as Record<string, { value: Json }>
  t.equal(event.Event?.value.title, 'Late Night Jazz')
  t.match(event.Event?.value.rest_url, /^https:\/\/calendar\.example\.com\/calendar\/events\/v1\/events\/1$/)
})

t.test('every x-calendar-message names a message of the catalog', async (t) => {
  const keys: unknown[] = []
  const walk = (node: unknown): void => {
    if (Array.isArray(node)) node.forEach(walk)
    else if (isJson(node)) for (const [key, value] of Object.entries(node)) (key === 'x-calendar-message' ? keys.push(value) : walk(value))
  }
  walk(SPEC.document)
  t.ok(keys.length >= 29, `${keys.length} rules with a message`)
  for (const key of new Set(keys)) t.ok(isMessageKey(key), String(key))
})
