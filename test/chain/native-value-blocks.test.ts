// A native trace's catch-up searches its older blocks with `trace_filter` (src/chain/chain-reader.ts,
// `nativeValueBlocks`): the blocks where a call may have moved value to the receiver, oldest first, one
// request per 2,000 blocks; null where the RPC does not offer the method (the catch-up then reads blocks one
// by one); a malformed answer is an error, never a block left out.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { MethodNotFoundRpcError, MethodNotSupportedRpcError, type PublicClient } from 'viem'
import { createChainReader } from '../../src/chain/chain-reader.ts'
import { NonRetryableChainError } from '../../src/chain/errors.ts'

const RECEIVER = '0x00000000000000000000000000000000000000aa'

/** A reader over a client that answers every `trace_filter` with `answer(params)`, and records the params. */
function readerAnswering(answer: (filter: { fromBlock: string; toBlock: string }) => unknown) {
  const asked: { fromBlock: string; toBlock: string; toAddress: string[] }[] = []
  const client = {
    async request({ method, params }: { method: string; params: unknown[] }) {
      assert.equal(method, 'trace_filter')
      const filter = params[0] as (typeof asked)[number]
      asked.push(filter)
      return answer(filter)
    },
  } as unknown as PublicClient
  return { reader: createChainReader(client), asked }
}

const call = (blockNumber: unknown, value: string) => ({ type: 'call', blockNumber, action: { to: RECEIVER, value }, traceAddress: [] })

test('the blocks where value reached the receiver, oldest first, one request per 2,000 blocks; calls without value leave no block', async () => {
  const { reader, asked } = readerAnswering(({ fromBlock }) =>
    fromBlock === '0x64'
      ? [call(2_050, '0x1'), call(150, '0xde0b6b3a7640000'), call(160, '0x0'), call(150, '0x5')]
      : [call('0x1388', '0x10'), { type: 'suicide', blockNumber: 4_100, action: { refundAddress: RECEIVER, balance: '0x7' } }],
  )
  assert.deepEqual(await reader.nativeValueBlocks(RECEIVER, 100n, 5_000n), [150n, 2_050n, 4_100n, 5_000n])
  assert.deepEqual(
    asked.map((f) => [f.fromBlock, f.toBlock]),
    [
      ['0x64', '0x833'],
      ['0x834', '0x1003'],
      ['0x1004', '0x1388'],
    ],
  )
  assert.deepEqual(asked[0]!.toAddress, [RECEIVER])
})

test('an RPC without trace_filter: null, for the catch-up to read blocks one by one', async () => {
  for (const refusal of [
    new MethodNotFoundRpcError(new Error('the method trace_filter does not exist/is not available')),
    new MethodNotSupportedRpcError(new Error('trace_filter not supported')),
  ]) {
    const { reader } = readerAnswering(() => {
      throw refusal
    })
    assert.equal(await reader.nativeValueBlocks(RECEIVER, 1n, 10n), null)
  }
})

test('a malformed answer is an error, not a block left out', async () => {
  for (const answer of [{ not: 'a list' }, [null], [call('twelve', '0x1')], [call(1.5, '0x1')], [{ action: { value: '0x1' } }]]) {
    const { reader } = readerAnswering(() => answer)
    await assert.rejects(reader.nativeValueBlocks(RECEIVER, 1n, 10n), NonRetryableChainError, JSON.stringify(answer))
  }
})
