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

export const UI_TITLE = 'Calendar Events REST API'

const LOADER = `'use strict'
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
    layout: 'BaseLayout',
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
