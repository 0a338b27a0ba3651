import assert from 'node:assert/strict'
import { test } from 'node:test'
import { clientAddress, createAddressLimits } from '../../src/cable/address-limits.ts'

test('a client is counted by its IPv4 address, or by the /64 of its IPv6 address', () => {
  assert.equal(clientAddress('203.0.113.7'), '203.0.113.7')
  assert.equal(clientAddress('::ffff:203.0.113.7'), '203.0.113.7')
  assert.equal(clientAddress('2001:db8:0:1:aaaa::1'), '2001:db8:0:1::/64')
  assert.equal(clientAddress('2001:0db8:0000:0001:bbbb:cccc:dddd:eeee'), '2001:db8:0:1::/64')
  assert.equal(clientAddress('2001:db8::5'), '2001:db8:0:0::/64')
  assert.equal(clientAddress('fe80::1%eth0'), 'fe80:0:0:0::/64')
  assert.equal(clientAddress('::1'), '0:0:0:0::/64')
})

test('addresses of one /64 share their limits; another address has its own', () => {
  let now = 0
  const limits = createAddressLimits({ maxConnectionsPerAddress: 2, connectBurst: 10, connectsPerSecond: 1 }, () => now)
  const closers: (() => void)[] = []
  const admit = (ip: string) => limits.admit(ip, (release) => closers.push(release))
  assert.equal(admit('2001:db8:0:1::1'), undefined)
  assert.equal(admit('2001:db8:0:1::2'), undefined)
  assert.equal(admit('2001:db8:0:1::3')?.reason, 'address_connections')
  assert.equal(admit('2001:db8:0:2::1'), undefined)
  closers[0]!()
  closers[0]!()
  assert.equal(admit('2001:db8:0:1::3'), undefined, 'a release counts once')
  assert.equal(admit('2001:db8:0:1::4')?.reason, 'address_connections')
})

test('the bucket refills at its rate and never beyond its size', () => {
  let now = 0
  const limits = createAddressLimits({ maxConnectionsPerAddress: 100, connectBurst: 3, connectsPerSecond: 2 }, () => now)
  const admit = () => limits.admit('198.51.100.1', () => {})
  for (let i = 0; i < 3; i++) assert.equal(admit(), undefined)
  const refused = admit()
  assert.equal(refused?.reason, 'connection_rate')
  assert.equal(refused?.problem.status, 429)
  assert.equal(refused?.problem.headers['retry-after'], '1')
  now += 500
  assert.equal(admit(), undefined, 'half a second refills one at 2 a second')
  assert.equal(admit()?.reason, 'connection_rate')
  now += 3_600_000
  for (let i = 0; i < 3; i++) assert.equal(admit(), undefined)
  assert.equal(admit()?.reason, 'connection_rate', 'an hour idle refills the burst, no more')
})
