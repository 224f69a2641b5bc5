/**
 * Which network addresses a webhook may be sent to (CONTRACT §13): none that is loopback, private,
 * link-local or unspecified (nor the other ranges that are not the public internet: carrier-grade NAT,
 * multicast, reserved, IPv6 unique local), IPv4 addresses mapped into IPv6 judged as the IPv4 address
 * they carry. The ranges are ipaddr.js's.
 */
import ipaddr from 'ipaddr.js'

/** Whether `address` (an IP address in text) is on the public internet; false for anything unparsable. */
export function isPublicAddress(address: string): boolean {
  if (!ipaddr.isValid(address)) return false
  let parsed = ipaddr.parse(address)
  if (parsed.kind() === 'ipv6' && (parsed as ipaddr.IPv6).isIPv4MappedAddress()) parsed = (parsed as ipaddr.IPv6).toIPv4Address()
  return parsed.range() === 'unicast'
}
