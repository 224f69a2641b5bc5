/**
 * Swagger UI (CONTRACT §9) as this project's own page: its title and icon, no framework logo or
 * "Explore" bar, and a loader of its own that asks for the document in the page's language.
 *
 * @fastify/swagger-ui's loader builds the document's URL by appending `/json` to the whole page URL,
 * query included, so `/ui?ml_language=de` fetched `/ui?ml_language=de/./json` (the page itself) and
 * showed "Unable to render this definition". The loader here (served as a theme script, which replaces
 * the plugin's `window.onload`) asks for `<ui>/json` with the page's query instead.
 */
import type { FastifySwaggerUiOptions } from '@fastify/swagger-ui'
import { isRecord, type Json } from '../lib/json.js'
import type { OpenApiDocument } from './spec.js'

export const UI_TITLE = 'Calendar Events REST API'

const LOADER = `'use strict'
// A form field left empty is left out of the request. Swagger UI's own first choice is "Send empty value",
// which sends \`author=\` and the like (a 400): the first setting of each field, made as it is shown, is
// turned to leave it out; the box is still there to tick.
function formFieldsLeftOut() {
  return { statePlugins: { oas3: { wrapActions: { setRequestBodyInclusion: function (action, system) {
    return function (change) {
      var setting = system.getSystem().oas3Selectors.requestBodyInclusionSetting(change.pathMethod[0], change.pathMethod[1])
      var first = !setting || setting.get(change.name, 'no value') === 'no value'
      return action(first ? Object.assign({}, change, { value: false }) : change)
    }
  } } } } }
}
window.onload = function () {
  var page = window.location
  var ui = page.pathname.replace(/\\/+$/, '')
  window.ui = SwaggerUIBundle({
    url: ui + '/json' + page.search,
    dom_id: '#swagger-ui',
    deepLinking: true,
    displayRequestDuration: true,
    tryItOutEnabled: false,
    presets: [SwaggerUIBundle.presets.apis],
    plugins: [formFieldsLeftOut],
    layout: 'BaseLayout',
    // Reads that need no key are shown without a lock (see uiDocument): the key the page was given
    // still goes with every request that carries none, so a reader with a key sees what it may see.
    requestInterceptor: function (request) {
      // The document itself is fetched through here too, before window.ui is set.
      var key = window.ui && window.ui.authSelectors.authorized().getIn(['bearerAuth', 'value'])
      var headers = request.headers || {}
      if (key && !headers.Authorization && !headers.authorization) headers.Authorization = 'Bearer ' + key
      request.headers = headers
      return request
    },
  })
}
`

const STYLE = `body { margin: 0; }
.swagger-ui .information-container { padding-top: 8px; }
`

/** A calendar page in the project's colours. */
const ICON = `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 32 32">
<rect x="3" y="6" width="26" height="23" rx="3" fill="#fff" stroke="#1f5f8b" stroke-width="2"/>
<rect x="3" y="6" width="26" height="7" rx="3" fill="#1f5f8b"/>
<rect x="9" y="2" width="3" height="7" rx="1.5" fill="#1f5f8b"/><rect x="20" y="2" width="3" height="7" rx="1.5" fill="#1f5f8b"/>
<text x="16" y="26" font-family="sans-serif" font-size="11" font-weight="bold" text-anchor="middle" fill="#1f5f8b">31</text>
</svg>
`

/** The theme and options given to @fastify/swagger-ui (the document itself comes from its `transformSpecification`). */
export function swaggerUiTheme(): Pick<FastifySwaggerUiOptions, 'theme' | 'uiConfig'> {
  return {
    uiConfig: { layout: 'BaseLayout', deepLinking: true, displayRequestDuration: true },
    theme: {
      title: UI_TITLE,
      js: [{ filename: 'calendar-ui.js', content: LOADER }],
      css: [{ filename: 'calendar-ui.css', content: STYLE }],
      favicon: [{ filename: 'calendar.svg', rel: 'icon', sizes: 'any', type: 'image/svg+xml', content: Buffer.from(ICON) }],
    },
  }
}

/**
 * Where the page at `/ui` (no trailing slash) finds its assets. It names them by absolute path, which
 * behind a PUBLIC_URL with a path (`https://api.example.com/base`) must start with that path; `/ui/`
 * names them relative to itself and needs nothing.
 */
export function swaggerUiPaths(publicUrl: string): Pick<FastifySwaggerUiOptions, 'indexPrefix'> {
  const path = new URL(publicUrl).pathname.replace(/\/+$/, '')
  return path === '' ? {} : { indexPrefix: path }
}

/**
 * @fastify/helmet's options for the UI's pages (CONTRACT §16): a content security policy that lets the
 * page load only its own scripts, styles and the document (and call the API at PUBLIC_URL from "Try
 * it out"), `X-Frame-Options: DENY` and `frame-ancestors 'none'` against framing. No HSTS and no
 * `upgrade-insecure-requests`: TLS is the proxy's business, and the UI must work over plain HTTP on
 * localhost.
 */
export function swaggerUiSecurityHeaders(publicUrl: string) {
  const api = new URL(publicUrl).origin
  return {
    global: true,
    contentSecurityPolicy: {
      useDefaults: false,
      directives: {
        defaultSrc: ["'self'"],
        baseUri: ["'self'"],
        scriptSrc: ["'self'"],
        scriptSrcAttr: ["'none'"],
        // Swagger UI sets style attributes and injects a few style elements at run time.
        styleSrc: ["'self'", "'unsafe-inline'"],
        imgSrc: ["'self'", 'data:'],
        fontSrc: ["'self'", 'data:'],
        connectSrc: ["'self'", api],
        objectSrc: ["'none'"],
        frameAncestors: ["'none'"],
        formAction: ["'self'"],
      },
    },
    frameguard: { action: 'deny' as const },
    strictTransportSecurity: false,
    // The UI's assets are same-origin; nothing else needs these relaxed.
    crossOriginEmbedderPolicy: false,
  }
}

const FORM = 'application/x-www-form-urlencoded'
const METHODS = ['get', 'put', 'post', 'patch', 'delete', 'head', 'options']

/**
 * The served document as the UI shows it (a copy; /doc serves `document` itself). Three things differ,
 * none of them in what a request may be:
 * - an operation that needs no key (`security: [{}, {bearerAuth: []}]`: a key only shows more) is
 *   `security: [{}]`, which Swagger UI shows without a lock; the loader still sends the key it was given;
 * - an optional parameter with examples gets a first choice `notSent` without a value, so that "Try it
 *   out" leaves it out until one is chosen (the contract's examples all carry a value);
 * - a form body's fields are prefilled from the form's example and left empty otherwise: Swagger UI fills
 *   each form field from its schema alone, which for dates and time zones is text that a pattern only
 *   resembles (`2311-63-58`), and a field left empty is not sent. An example's key that the form takes
 *   through `patternProperties` (a PHP-style `venue[city]`) is a field of its own, with the schema of its
 *   pattern: Swagger UI shows only `properties` as fields, and would drop it from the request.
 */
export function uiDocument(document: OpenApiDocument, notSent: string): OpenApiDocument {
  const copy = structuredClone(document)
  const components = isRecord(copy.components) ? copy.components : {}
  const schemas = isRecord(components.schemas) ? components.schemas : {}
  const operations = Object.values(copy.paths).flatMap((item) => METHODS.flatMap((method) => isRecord(item[method]) ? [item[method]] : []))
  const parameters = [
    ...operations.flatMap((operation) => Array.isArray(operation.parameters) ? operation.parameters : []),
    ...(isRecord(components.parameters) ? Object.values(components.parameters) : []),
  ]
  for (const operation of operations) {
    if (Array.isArray(operation.security) && operation.security.some((s) => isRecord(s) && Object.keys(s).length === 0)) operation.security = [{}]
  }
  for (const parameter of parameters) {
    if (isRecord(parameter) && parameter.required !== true && isRecord(parameter.examples)) {
      parameter.examples = { unset: { summary: notSent }, ...parameter.examples }
    }
  }
  const bodies = [
    ...operations.map((operation) => operation.requestBody),
    ...(isRecord(components.requestBodies) ? Object.values(components.requestBodies) : []),
  ]
  for (const body of bodies) {
    const form = isRecord(body) && isRecord(body.content) ? body.content[FORM] : undefined
    if (isRecord(form) && isRecord(form.example)) form.schema = prefilled(resolved(form.schema, schemas), form.example, schemas)
  }
  return copy
}

/** `schema`, or the component schema its `$ref` names. */
function resolved(schema: unknown, schemas: Json): unknown {
  const ref = isRecord(schema) ? schema.$ref : undefined
  return typeof ref === 'string' && ref.startsWith('#/components/schemas/') ? schemas[ref.slice('#/components/schemas/'.length)] : schema
}

/**
 * An object schema whose every property samples as `example` has it, or as empty; an example's key that
 * only a `patternProperties` pattern takes becomes a property with that pattern's schema. A property
 * Swagger UI edits as a list (its schema, or the first of its `anyOf`, is an array) samples as a list.
 */
function prefilled(schema: unknown, example: Json, schemas: Json): unknown {
  if (!isRecord(schema) || !isRecord(schema.properties)) return schema
  const fields: Json = { ...schema.properties }
  const patterns = isRecord(schema.patternProperties) ? Object.entries(schema.patternProperties) : []
  for (const name of Object.keys(example)) {
    if (name in fields) continue
    const match = patterns.find(([pattern]) => new RegExp(pattern, 'u').test(name))
    if (match !== undefined) fields[name] = match[1]
  }
  const properties: Json = {}
  for (const [name, property] of Object.entries(fields)) {
    const value = example[name]
    const sample = !isList(property, schemas) ? value ?? '' : value === undefined ? [] : Array.isArray(value) ? value : [value]
    properties[name] = { ...(isRecord(property) ? property : {}), examples: [sample] }
  }
  return { ...schema, properties }
}

function isList(property: unknown, schemas: Json): boolean {
  const schema = resolved(property, schemas)
  if (!isRecord(schema)) return false
  const first = Array.isArray(schema.anyOf) ? schema.anyOf[0] : Array.isArray(schema.oneOf) ? schema.oneOf[0] : undefined
  const type = first === undefined ? schema.type : isRecord(resolved(first, schemas)) ? (resolved(first, schemas) as Json).type : undefined
  return type === 'array' || (Array.isArray(type) && type[0] === 'array')
}
