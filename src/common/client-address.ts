import { isIPv6 } from 'node:net'

/**
 * The unit a per-client limit counts: IPv4 as is, IPv6 by its /64, which one subscriber commonly holds
 * whole (a client rotating through its own /64 is still one client). Used by the widget socket limits
 * (src/cable/address-limits.ts) and the failed-authentication throttle (src/http/auth-throttle.ts).
 */
export function clientAddress(ip: string): string {
  const bare = ip.split('%')[0]!
  if (!isIPv6(bare) || /^::ffff:\d+\.\d+\.\d+\.\d+$/i.test(bare)) return bare.replace(/^::ffff:/i, '')
  const [head = '', tail] = bare.toLowerCase().split('::')
  const left = head ? head.split(':') : []
  const right = tail ? tail.split(':') : []
  const groups = tail === undefined ? left : [...left, ...Array<string>(8 - left.length - right.length).fill('0'), ...right]
  return `${groups
    .slice(0, 4)
    .map((g) => g.replace(/^0+(?=.)/, ''))
    .join(':')}::/64`
}
