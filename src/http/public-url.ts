/**
 * `{base_url}` (CONTRACT §1): PUBLIC_URL, else `http://HOST:PORT`. With PORT=0 the system picks the
 * port when the server listens, after the app is built; every URL (rest_url, the served document's
 * server, the route index's links, the start line) must name that port, not 0. So the base URL is
 * read when a URL is made, and takes the bound port once the server listens.
 */
import type { AddressInfo } from 'node:net'
import type { Config } from '../config.js'

declare module 'fastify' {
  interface FastifyInstance {
    /** `{base_url}` as it is now (the bound port once listening, when PORT is 0 and PUBLIC_URL unset). */
    readonly publicUrl: string
  }
}

export interface PublicUrl {
  /** The base URL now: scheme, host, port and path, no trailing slash. */
  readonly base: string
  /** Called once the server listens, with its address. */
  listening(address: AddressInfo | string | null): void
}

export function publicUrl(config: Pick<Config, 'publicUrl' | 'publicUrlSet' | 'port' | 'host'>): PublicUrl {
  let base = config.publicUrl
  return {
    get base() {
      return base
    },
    listening(address) {
      if (config.publicUrlSet || config.port !== 0 || address === null || typeof address === 'string') return
      const host = config.host.includes(':') ? `[${config.host}]` : config.host
      base = `http://${host}:${address.port}`
    },
  }
}
