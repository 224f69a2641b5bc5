/**
 * Which network addresses a webhook may be sent to (CONTRACT §13): none that is loopback, private,
 * link-local or unspecified (nor the other ranges that are not the public internet: carrier-grade NAT,
 * multicast, reserved, IPv6 unique local). The ranges are ipaddr.js's.
 *
 * An IPv6 address that carries an IPv4 address is judged by the IPv4 address it carries, in every form
 * that carries one (a connection to it may reach that IPv4 address, through the host's own stack, a
 * translator or a relay): IPv4-mapped (`::ffff:0:0/96`), IPv4-compatible (`::/96`, deprecated, which
 * ipaddr.js calls unicast), IPv4-translated (`::ffff:0:0:0/96`), the well-known NAT64 prefix
 * (`64:ff9b::/96`), 6to4 (`2002::/16`) and Teredo (`2001::/32`: its server's address and its client's,
 * both). A network-specific NAT64 prefix (`64:ff9b:1::/48`) is refused: where its IPv4 address sits
 * depends on the network.
 */
import ipaddr from 'ipaddr.js'

/** Whether `address` (an IP address in text) is on the public internet; false for anything unparsable. */
export function isPublicAddress(address: string): boolean {
  if (!ipaddr.isValid(address)) return false
  const parsed = ipaddr.parse(address)
  if (parsed.kind() === 'ipv4') return parsed.range() === 'unicast'
  const carried = carriedIPv4(ipaddr.IPv6.parse(address).parts)
  if (carried !== undefined) return carried.length > 0 && carried.every((v4) => v4.range() === 'unicast')
  return parsed.range() === 'unicast'
}

/**
 * The IPv4 addresses an IPv6 address carries (its eight 16-bit parts), or undefined when it is of no
 * form that carries one; an empty list for a form whose IPv4 address cannot be known.
 */
function carriedIPv4(parts: readonly number[]): ipaddr.IPv4[] | undefined {
  const p = (i: number): number => parts[i] ?? 0
  const v4 = (high: number, low: number): ipaddr.IPv4 => new ipaddr.IPv4([high >> 8, high & 0xff, low >> 8, low & 0xff])
  const zero = (from: number, to: number): boolean => parts.slice(from, to).every((x) => x === 0)
  // ::/96 (compatible, `::` and `::1` among them: 0.0.0.0 and 0.0.0.1 are not public), ::ffff:0:0/96 (mapped).
  if (zero(0, 5) && (p(5) === 0 || p(5) === 0xffff)) return [v4(p(6), p(7))]
  if (zero(0, 4) && p(4) === 0xffff && p(5) === 0) return [v4(p(6), p(7))]
  if (p(0) === 0x64 && p(1) === 0xff9b) return zero(2, 6) ? [v4(p(6), p(7))] : []
  if (p(0) === 0x2002) return [v4(p(1), p(2))]
  // Teredo: the server's address as it is, the client's with every bit inverted.
  if (p(0) === 0x2001 && p(1) === 0) return [v4(p(2), p(3)), v4(p(6) ^ 0xffff, p(7) ^ 0xffff)]
  return undefined
}
