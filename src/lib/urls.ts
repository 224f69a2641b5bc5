/**
 * Which URLs the contract takes for websites and images: absolute, http or https, with a host.
 */
export function isHttpUrl(value: string): boolean {
  if (!/^https?:\/\//i.test(value)) return false
  try {
    const url = new URL(value)
    return (url.protocol === 'http:' || url.protocol === 'https:') && url.hostname !== ''
  } catch {
    return false
  }
}

const UTF8 = new TextEncoder()

/** What RFC 3986 allows after the authority, besides `%` escapes: unreserved, reserved and `%`. */
const URI_TAIL_CHAR = /[A-Za-z0-9\-._~:/?#@!$&'()*+,;=%]/

/**
 * The form an image URL is stored and answered in (CONTRACT §2): the WHATWG serialisation of an absolute
 * http(s) URL (spaces and non-ASCII percent-encoded, IDN hosts in punycode, `\` read as `/`), with what
 * WHATWG leaves that RFC 3986 does not allow percent-encoded too (`|`, `^`, `{`, `}`, backtick, `[`, `]`
 * in the query, a `%` that starts no escape), so that it is always a valid `uri`. Undefined when it
 * does not parse as an absolute http(s) URL with a host.
 */
export function normalisedHttpUrl(value: string): string | undefined {
  if (!isHttpUrl(value)) return undefined
  const url = new URL(value)
  const href = url.href
  // The path starts at the first `/` after `scheme://`: WHATWG has encoded what the authority may not hold.
  const pathAt = href.indexOf('/', url.protocol.length + 2)
  if (pathAt < 0) return href
  const tail = href.slice(pathAt).replace(/%(?![0-9A-Fa-f]{2})/g, '%25')
  let encoded = ''
  for (const c of tail) {
    encoded += URI_TAIL_CHAR.test(c) ? c : [...UTF8.encode(c)].map((b) => `%${b.toString(16).toUpperCase().padStart(2, '0')}`).join('')
  }
  return href.slice(0, pathAt) + encoded
}
