/**
 * Where webhooks may be sent (CONTRACT §13): an absolute http(s) URL whose host is not, and does not
 * resolve to, a loopback, private, link-local or unspecified address (`lib/addresses.ts`), unless
 * CALENDAR_WEBHOOK_ALLOW_PRIVATE=true. Checked when a subscription is created or its URL changed, and
 * again at every delivery, on the very addresses the connection uses (`guardedLookup` is the lookup
 * of the sender's connections), so that a name that later resolves elsewhere is refused too.
 */
import { lookup, type LookupAddress, type LookupOptions } from 'node:dns'
import { isIP } from 'node:net'
import { isPublicAddress } from '../lib/addresses.js'

/** Why a URL may not receive webhooks: not http(s), or not a public address; undefined when it may. */
export type UrlRefusal = 'invalidUrl' | 'webhookAddress' | 'webhookHostUnresolved'

/** The host of a URL as an address or a name (IPv6 without its brackets). */
function hostOf(url: URL): string {
  return url.hostname.replace(/^\[(.*)\]$/, '$1')
}

/** Checks a subscription's URL; resolves its host unless private addresses are allowed. */
export async function refusedUrl(text: string, allowPrivate: boolean): Promise<UrlRefusal | undefined> {
  let url: URL
  try {
    url = new URL(text)
  } catch {
    return 'invalidUrl'
  }
  if ((url.protocol !== 'http:' && url.protocol !== 'https:') || url.hostname === '') return 'invalidUrl'
  if (allowPrivate) return undefined
  const host = hostOf(url)
  if (isIP(host) !== 0) return isPublicAddress(host) ? undefined : 'webhookAddress'
  let addresses: LookupAddress[]
  try {
    addresses = await resolveAll(host)
  } catch {
    // Refused all the same (where it would go cannot be checked), saying why.
    return 'webhookHostUnresolved'
  }
  return addresses.length > 0 && addresses.every((a) => isPublicAddress(a.address)) ? undefined : 'webhookAddress'
}

function resolveAll(host: string): Promise<LookupAddress[]> {
  return new Promise((resolve, reject) => {
    lookup(host, { all: true }, (error, addresses) => (error === null ? resolve(addresses) : reject(error)))
  })
}

/** An error of a delivery refused because of where it would go. */
export class RefusedAddress extends Error {
  readonly code = 'EWEBHOOKADDRESS'
}

type LookupCallback = (error: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void

/**
 * A `lookup` for outgoing connections that fails when the host resolves to any address that is not
 * public (all of them are checked, whichever the connection would pick).
 */
export function guardedLookup(allowPrivate: boolean) {
  return (host: string, options: LookupOptions, callback: LookupCallback): void => {
    lookup(host, { ...options, all: true }, (error, addresses) => {
      if (error !== null) return callback(error, [])
      const refused = !allowPrivate && addresses.some((a) => !isPublicAddress(a.address))
      if (refused || addresses.length === 0) return callback(new RefusedAddress(`${host} resolves to an address that is not public`), [])
      if (options.all === true) return callback(null, addresses)
      const first = addresses[0]!
      callback(null, first.address, first.family)
    })
  }
}

/** Whether a delivery to `url` is refused before any connection: an address literal that is not public. */
export function refusedLiteral(url: URL, allowPrivate: boolean): boolean {
  const host = hostOf(url)
  return !allowPrivate && isIP(host) !== 0 && !isPublicAddress(host)
}
