import { lookup as dnsLookup, type LookupAddress } from 'node:dns'
import { BlockList, isIP, type LookupFunction } from 'node:net'
import type { Clock } from '../common/clock.ts'
import { NonRetryableError } from '../common/errors.ts'

/**
 * SSRF guard for callback URLs: a callback must not reach the service's own network (loopback,
 * private ranges, link-local, CGNAT, unique-local IPv6, cloud metadata endpoints). The check runs when
 * a tracking is created and again on every connection a delivery opens, on the very address the
 * socket connects to (so a DNS answer that changes between check and connect cannot slip through).
 */

/** Ranges a callback may not reach, with the word an operator sees in the refusal. */
const ranges: [string, number, 'ipv4' | 'ipv6', string][] = [
  ['169.254.169.254', 32, 'ipv4', 'cloud metadata'],
  ['fd00:ec2::254', 128, 'ipv6', 'cloud metadata'],
  // Azure's WireServer (host agent, instance metadata and DNS): a public address, but the host's own.
  ['168.63.129.16', 32, 'ipv4', 'cloud metadata'],
  ['0.0.0.0', 8, 'ipv4', '"this network"'],
  ['10.0.0.0', 8, 'ipv4', 'private'],
  ['100.64.0.0', 10, 'ipv4', 'carrier-grade NAT'],
  ['127.0.0.0', 8, 'ipv4', 'loopback'],
  ['169.254.0.0', 16, 'ipv4', 'link-local'],
  ['172.16.0.0', 12, 'ipv4', 'private'],
  ['192.0.0.0', 24, 'ipv4', 'special-purpose'],
  ['192.0.2.0', 24, 'ipv4', 'documentation'],
  ['192.168.0.0', 16, 'ipv4', 'private'],
  // 6to4 relay anycast (RFC 7526 deprecated it): whichever relay is nearest answers, maybe one inside.
  ['192.88.99.0', 24, 'ipv4', '6to4 relay anycast'],
  ['198.18.0.0', 15, 'ipv4', 'benchmarking'],
  ['198.51.100.0', 24, 'ipv4', 'documentation'],
  ['203.0.113.0', 24, 'ipv4', 'documentation'],
  ['224.0.0.0', 4, 'ipv4', 'multicast'],
  ['240.0.0.0', 4, 'ipv4', 'reserved'],
  ['::', 128, 'ipv6', 'unspecified'],
  ['::1', 128, 'ipv6', 'loopback'],
  ['64:ff9b:1::', 48, 'ipv6', 'local NAT64'],
  ['100::', 64, 'ipv6', 'discard'],
  ['100:0:0:1::', 64, 'ipv6', 'dummy prefix'],
  ['2001::', 32, 'ipv6', 'Teredo'],
  // Anycast services, benchmarking, ORCHID and the rest of the IETF protocol block: never a callback.
  ['2001::', 23, 'ipv6', 'IETF protocol assignment'],
  ['2001:db8::', 32, 'ipv6', 'documentation'],
  ['3fff::', 20, 'ipv6', 'documentation'],
  ['5f00::', 16, 'ipv6', 'segment routing'],
  ['fc00::', 7, 'ipv6', 'unique-local'],
  ['fe80::', 10, 'ipv6', 'link-local'],
  ['fec0::', 10, 'ipv6', 'site-local'],
  ['ff00::', 8, 'ipv6', 'multicast'],
]

const lists = ranges.map(([network, prefix, type, label]) => {
  const list = new BlockList()
  list.addSubnet(network, prefix, type)
  return { list, label }
})
// All ranges in one list: a public address, the common case, is cleared by one check instead of one
// per range (the per-range lists only name the reason of a refusal).
const anyRange = new BlockList()
for (const [network, prefix, type] of ranges) anyRange.addSubnet(network, prefix, type)

/**
 * Why an IP address may not be called back, or null when it may. An IPv6 address that embeds an IPv4
 * address (IPv4-mapped, IPv4-compatible, SIIT, NAT64, 6to4) is also judged by the IPv4 address inside:
 * a stack or a translator on the way may deliver it there.
 */
export function forbiddenAddressReason(address: string): string | null {
  const family = isIP(address)
  if (family === 0) return 'not an IP address'
  const type = family === 4 ? 'ipv4' : 'ipv6'
  if (anyRange.check(address, type)) for (const { list, label } of lists) if (list.check(address, type)) return label
  if (family === 6) {
    const embedded = embeddedIpv4(address)
    if (embedded) return forbiddenAddressReason(embedded)
  }
  return null
}

/**
 * The IPv4 address inside an IPv6 address of a form that carries one: ::a.b.c.d (IPv4-compatible),
 * ::ffff:a.b.c.d (mapped), ::ffff:0:a.b.c.d (SIIT), 64:ff9b::a.b.c.d (NAT64), 2002:AABB:CCDD::/48 (6to4).
 */
function embeddedIpv4(address: string): string | null {
  const g = expandIpv6(address)
  if (!g) return null
  const zero = (from: number, to: number) => g.slice(from, to).every((group) => group === 0)
  let high: number, low: number
  if (zero(0, 5) && (g[5] === 0 || g[5] === 0xffff)) [high, low] = [g[6]!, g[7]!]
  else if (zero(0, 4) && g[4] === 0xffff && g[5] === 0) [high, low] = [g[6]!, g[7]!]
  else if (g[0] === 0x64 && g[1] === 0xff9b && zero(2, 6)) [high, low] = [g[6]!, g[7]!]
  else if (g[0] === 0x2002) [high, low] = [g[1]!, g[2]!]
  else return null
  return `${high >> 8}.${high & 0xff}.${low >> 8}.${low & 0xff}`
}

function expandIpv6(address: string): number[] | null {
  let text = address.split('%')[0]!
  const v4 = /(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(text)
  if (v4) {
    const [a, b, c, d] = v4.slice(1).map(Number) as [number, number, number, number]
    text = `${text.slice(0, v4.index)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`
  }
  const [head, tail] = text.split('::') as [string, string | undefined]
  const parse = (part: string) => (part === '' ? [] : part.split(':').map((g) => parseInt(g, 16)))
  const left = parse(head)
  const right = tail === undefined ? [] : parse(tail)
  const fill = 8 - left.length - right.length
  if (fill < 0 || (tail === undefined && fill !== 0)) return null
  return [...left, ...new Array<number>(fill).fill(0), ...right]
}

/** A callback refused because of where it leads. */
export class ForbiddenCallbackError extends NonRetryableError {
  override name = 'ForbiddenCallbackError'
  override readonly code = 'ERR_CALLBACK_FORBIDDEN_ADDRESS'
  constructor(host: string, address: string, reason: string) {
    super(`${host} resolves to ${address}, a ${reason} address; callbacks may only reach public addresses`)
  }
}

/** Host name of a URL without IPv6 brackets. */
export function hostOf(url: URL): string {
  return url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname
}

/**
 * Resolves a callback URL's host the way a delivery will and refuses forbidden addresses. Returns
 * undefined when allowed, including when the name does not resolve now (it is checked again on
 * every delivery). Resolution is bounded by `timeoutMs`; `clock` times the cache of resolved hosts.
 */
export async function checkCallbackUrl(callback: string, clock: Clock, timeoutMs = 3000): Promise<ForbiddenCallbackError | undefined> {
  let url: URL
  try {
    url = new URL(callback)
  } catch {
    return undefined // the request parser already refused it
  }
  const host = hostOf(url)
  if (isIP(host)) {
    const reason = forbiddenAddressReason(host)
    return reason ? new ForbiddenCallbackError(host, host, reason) : undefined
  }
  // A merchant's trackings share a callback host: resolve it once a minute, not on every create.
  const now = clock().getTime()
  const cached = verdicts.get(host)
  if (cached && cached.until > now) return cached.verdict
  const verdict = await resolveAndCheck(host, timeoutMs)
  if (verdicts.size >= 10_000) verdicts.clear()
  verdicts.set(host, { verdict, until: now + 60_000 })
  return verdict
}

const verdicts = new Map<string, { verdict: ForbiddenCallbackError | undefined; until: number }>()

async function resolveAndCheck(host: string, timeoutMs: number): Promise<ForbiddenCallbackError | undefined> {
  const addresses = await new Promise<LookupAddress[]>((resolve) => {
    const timer = setTimeout(() => resolve([]), timeoutMs)
    dnsLookup(host, { all: true }, (error, found) => {
      clearTimeout(timer)
      resolve(error ? [] : found)
    })
  })
  for (const { address } of addresses) {
    const reason = forbiddenAddressReason(address)
    if (reason) return new ForbiddenCallbackError(host, address, reason)
  }
  return undefined
}

/**
 * A `lookup` for http(s) requests that resolves as usual and fails the connection when any address
 * of the name is forbidden; the socket connects to the address checked here (DNS rebinding safe).
 */
export const guardedLookup: LookupFunction = (hostname, options, callback) => {
  dnsLookup(hostname, { ...options, all: true }, (error, addresses) => {
    if (error) return callback(error, '', 0)
    for (const { address } of addresses) {
      const reason = forbiddenAddressReason(address)
      if (reason) return callback(new ForbiddenCallbackError(hostname, address, reason) as NodeJS.ErrnoException, '', 0)
    }
    if (options.all) return (callback as unknown as (e: null, a: LookupAddress[]) => void)(null, addresses)
    const first = addresses[0]
    if (!first) return callback(Object.assign(new Error(`no address for ${hostname}`), { code: 'ENOTFOUND' }), '', 0)
    callback(null, first.address, first.family)
  })
}
