import assert from 'node:assert/strict'
import { randomBytes } from 'node:crypto'
import { describe, it } from 'node:test'
import { getAddress } from 'viem'
import { checksumAddress } from '../../src/domain/eip55.ts'

describe('EIP-55 checksummed addresses', () => {
  it('matches the examples of EIP-55', () => {
    for (const address of [
      '0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed',
      '0xfB6916095ca1df60bB79Ce92cE3Ea74c37c5d359',
      '0xdbF03B407c01E7cD3CBea99509d93f8DDDC8C6FB',
      '0xD1220A0cf47c7B9Be7A2E6BA89F429762e7b9aDb',
      '0x52908400098527886E0F7030069857D2E4169EE7',
      '0x8617E340B3D01FA5F11F306F4090FD50E238070D',
      '0xde709f2102306220921060314715629080e2fb77',
      '0x27b1fdb04752bbc536007a920d24acb045561c26',
    ]) {
      assert.equal(checksumAddress(address.toLowerCase()), address)
      assert.equal(checksumAddress(address.toUpperCase().replace('0X', '0x')), address)
    }
  })

  it('agrees with viem on thousands of random addresses, first seen and cached', () => {
    const addresses = Array.from({ length: 10_000 }, () => `0x${randomBytes(20).toString('hex')}`)
    for (const round of ['computed', 'cached or computed again']) {
      for (const address of addresses) assert.equal(checksumAddress(address), getAddress(address), `${round}: ${address}`)
    }
  })

  it('handles the all-zero, all-f and native-token addresses', () => {
    for (const address of [
      '0x0000000000000000000000000000000000000000',
      '0xffffffffffffffffffffffffffffffffffffffff',
      '0xeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeee',
    ]) {
      assert.equal(checksumAddress(address), getAddress(address))
    }
  })
})
