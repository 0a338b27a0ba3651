// Proves the chain-test harness works and pins the anvil behaviours the chain engine relies on
// (traces, block receipts, reorgs, finalized tag, tx replacement). If an anvil upgrade changes
// one of these, this file should be the first thing to fail.
import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import {
  decodeErrorResult,
  encodeFunctionData,
  getAddress,
  parseEther,
  parseEventLogs,
  webSocket,
  type Abi,
  type Address,
  type Hash,
} from 'viem'
import { generatePrivateKey, privateKeyToAddress } from 'viem/accounts'
import { multicall3Abi, paymentRouterAbi, revertingTokenAbi, testTokenAbi, uniswapV2FactoryAbi, uniswapV2PairAbi } from './abis.ts'
import { startAnvil, type Anvil, type AnvilAccount } from './anvil.ts'
import { compileContracts } from './compile.ts'
import {
  addLiquidity,
  createPair,
  deployContract,
  deployMulticall3,
  deployRevertingToken,
  deployRouter,
  deployToken,
  deployUniswapV2,
  deployWeth,
  mine,
  mintToken,
  MULTICALL3_ADDRESS,
  routerPayNative,
  routerPayToken,
  sendNative,
  uniswapV2PairArtifactAbi,
  waitForReceipt,
} from './deploy.ts'

/** A never-used address, so balance assertions start from exactly zero. */
const freshAddress = (): Address => privateKeyToAddress(generatePrivateKey())

interface CallFrame {
  type: string
  from: string
  to?: string
  value?: string
  calls?: CallFrame[]
}

describe('anvil harness', () => {
  let anvil: Anvil
  let alice: AnvilAccount
  let router: Address

  before(async () => {
    anvil = await startAnvil()
    alice = anvil.accounts[1]!
    router = await deployRouter(anvil)
  })
  after(async () => {
    await anvil?.stop()
  })

  test('starts on a random port with 10 funded accounts and the requested chain id', async () => {
    assert.ok(anvil.port > 0 && anvil.port !== 8545)
    assert.equal(anvil.accounts.length, 10)
    assert.equal(await anvil.publicClient.getChainId(), 31337)
    assert.equal((await anvil.publicClient.getBalance({ address: alice.address })) > parseEther('9000'), true)
    // the printed private keys really belong to the listed accounts
    assert.equal(privateKeyToAddress(alice.privateKey), alice.address)
  })

  test('hand-written ABIs match the compiled contracts', async () => {
    const compiled = await compileContracts()
    const names = (abi: Abi) => new Set(abi.filter((x) => 'name' in x).map((x) => `${x.type}:${'name' in x ? x.name : ''}`))
    const check = (mine: Abi, real: Abi, label: string) => {
      const have = names(real)
      for (const n of names(mine)) assert.ok(have.has(n), `${label}: ${n} missing from compiled ABI`)
    }
    check(testTokenAbi, compiled.TestToken.abi, 'TestToken')
    check(revertingTokenAbi, compiled.RevertingToken.abi, 'RevertingToken')
    check(paymentRouterAbi, compiled.PaymentRouter.abi, 'PaymentRouter')
    check(multicall3Abi, compiled.Multicall3.abi, 'Multicall3')
    check(uniswapV2PairAbi, uniswapV2PairArtifactAbi(), 'UniswapV2Pair')
  })

  test('deploys an ERC-20 with custom decimals and mints', async () => {
    const usdc = await deployToken(anvil, 'USD Coin', 'USDC', 6)
    const read = <F extends 'decimals' | 'symbol'>(functionName: F) =>
      anvil.publicClient.readContract({ address: usdc, abi: testTokenAbi, functionName })
    assert.equal(await read('decimals'), 6)
    assert.equal(await read('symbol'), 'USDC')
    const to = freshAddress()
    await mintToken(anvil, usdc, to, 1_234_567n)
    const balance = await anvil.publicClient.readContract({
      address: usdc,
      abi: testTokenAbi,
      functionName: 'balanceOf',
      args: [to],
    })
    assert.equal(balance, 1_234_567n)
  })

  test('native transfer moves exactly the value', async () => {
    const to = freshAddress()
    const receipt = await sendNative(anvil, alice, to, parseEther('1.5'))
    assert.equal(receipt.status, 'success')
    assert.equal(await anvil.publicClient.getBalance({ address: to }), parseEther('1.5'))
  })

  test('router payNative splits value between receiver and fee receiver', async () => {
    const receiver = freshAddress()
    const feeReceiver = freshAddress()
    await routerPayNative(anvil, router, alice, { receiver, feeReceiver, value: 1000n, feeAmount: 30n })
    assert.equal(await anvil.publicClient.getBalance({ address: receiver }), 970n)
    assert.equal(await anvil.publicClient.getBalance({ address: feeReceiver }), 30n)
    assert.equal(await anvil.publicClient.getBalance({ address: router }), 0n)
  })

  test("router payToken: receiver's Transfer log comes from the router", async () => {
    const token = await deployToken(anvil, 'Dai', 'DAI', 18)
    await mintToken(anvil, token, alice.address, 1000n)
    const receiver = freshAddress()
    const feeReceiver = freshAddress()
    const receipt = await routerPayToken(anvil, router, alice, {
      token,
      receiver,
      amount: 900n,
      feeReceiver,
      feeAmount: 100n,
    })
    const transfers = parseEventLogs({ abi: testTokenAbi, eventName: 'Transfer', logs: receipt.logs })
    const toReceiver = transfers.find((t) => t.args.to === receiver)
    assert.ok(toReceiver, 'no Transfer to receiver')
    assert.equal(toReceiver.args.from, getAddress(router))
    assert.equal(toReceiver.args.value, 900n)
    assert.equal(transfers[0]?.args.from, alice.address, 'first Transfer pulls from the payer')
    const balanceOf = (a: Address) =>
      anvil.publicClient.readContract({ address: token, abi: testTokenAbi, functionName: 'balanceOf', args: [a] })
    assert.equal(await balanceOf(receiver), 900n)
    assert.equal(await balanceOf(feeReceiver), 100n)
    assert.equal(await balanceOf(router), 0n)
  })

  test("debug_traceTransaction callTracer shows the router's internal value calls", async () => {
    const receiver = freshAddress()
    const feeReceiver = freshAddress()
    const receipt = await routerPayNative(anvil, router, alice, { receiver, feeReceiver, value: 500n, feeAmount: 5n })
    const trace = await anvil.rpc<CallFrame>('debug_traceTransaction', [receipt.transactionHash, { tracer: 'callTracer' }])
    assert.equal(trace.to?.toLowerCase(), router.toLowerCase())
    assert.equal(BigInt(trace.value ?? '0x0'), 500n)
    const inner = (trace.calls ?? []).map((c) => ({ type: c.type, to: c.to?.toLowerCase(), value: BigInt(c.value ?? '0x0') }))
    assert.deepEqual(inner, [
      { type: 'CALL', to: receiver.toLowerCase(), value: 495n },
      { type: 'CALL', to: feeReceiver.toLowerCase(), value: 5n },
    ])
  })

  test('eth_getBlockReceipts returns every receipt of a block', async () => {
    const receipt = await sendNative(anvil, alice, freshAddress(), 1n)
    const receipts = await anvil.rpc<Array<{ transactionHash: Hash; blockNumber: string }>>('eth_getBlockReceipts', [
      `0x${receipt.blockNumber.toString(16)}`,
    ])
    assert.equal(receipts.length, 1)
    assert.equal(receipts[0]?.transactionHash, receipt.transactionHash)
    assert.equal(BigInt(receipts[0]!.blockNumber), receipt.blockNumber)
  })

  test('anvil_reorg replaces the last blocks: same height, new hashes, old txs gone', async () => {
    const victim = freshAddress()
    await mine(anvil, 2)
    const dropped = await sendNative(anvil, alice, victim, 777n)
    const head = await anvil.publicClient.getBlockNumber()
    const before = await Promise.all([head - 2n, head - 1n, head].map((n) => anvil.publicClient.getBlock({ blockNumber: n })))

    // depth 2 rewinds blocks head-1 and head; offset 1 puts the new tx in the second new block.
    const replacementTo = freshAddress()
    await anvil.reorg(2, [[{ from: alice.address, to: replacementTo, value: '0x2a' }, 1]])

    assert.equal(await anvil.publicClient.getBlockNumber(), head, 'reorg keeps the height')
    const afterBlocks = await Promise.all([head - 2n, head - 1n, head].map((n) => anvil.publicClient.getBlock({ blockNumber: n })))
    assert.equal(afterBlocks[0]!.hash, before[0]!.hash, 'common ancestor unchanged')
    assert.notEqual(afterBlocks[1]!.hash, before[1]!.hash)
    assert.notEqual(afterBlocks[2]!.hash, before[2]!.hash)
    assert.equal(afterBlocks[1]!.parentHash, afterBlocks[0]!.hash)
    assert.equal(afterBlocks[2]!.transactions.length, 1)

    // The dropped tx is not re-queued: it disappears and its effect is undone.
    await assert.rejects(anvil.publicClient.getTransactionReceipt({ hash: dropped.transactionHash }))
    assert.equal(await anvil.publicClient.getBalance({ address: victim }), 0n)
    assert.equal(await anvil.publicClient.getBalance({ address: replacementTo }), 42n)
  })

  test('Uniswap V2 pair reserves after addLiquidity', async () => {
    const factory = await deployUniswapV2(anvil)
    const weth = await deployWeth(anvil)
    const usdc = await deployToken(anvil, 'USD Coin', 'USDC', 6)
    const pair = await createPair(anvil, factory, weth, usdc)
    assert.notEqual(pair, '0x0000000000000000000000000000000000000000')
    assert.equal(await anvil.publicClient.readContract({ address: factory, abi: uniswapV2FactoryAbi, functionName: 'allPairsLength' }), 1n)
    const me = anvil.walletClient.account.address
    await mintToken(anvil, weth, me, parseEther('10'))
    await mintToken(anvil, usdc, me, 30_000n * 10n ** 6n)
    await addLiquidity(anvil, pair, weth, parseEther('10'), usdc, 30_000n * 10n ** 6n)

    const [reserve0, reserve1] = await anvil.publicClient.readContract({
      address: pair,
      abi: uniswapV2PairAbi,
      functionName: 'getReserves',
    })
    const token0 = await anvil.publicClient.readContract({ address: pair, abi: uniswapV2PairAbi, functionName: 'token0' })
    const [wethReserve, usdcReserve] = token0 === getAddress(weth) ? [reserve0, reserve1] : [reserve1, reserve0]
    assert.equal(wethReserve, parseEther('10'))
    assert.equal(usdcReserve, 30_000n * 10n ** 6n)
    const lp = await anvil.publicClient.readContract({ address: pair, abi: uniswapV2PairAbi, functionName: 'balanceOf', args: [me] })
    assert.ok(lp > 0n)
  })

  test('Multicall3 aggregate3 reports a failing call without failing the batch', async () => {
    const multicall = await deployMulticall3(anvil)
    const good = await deployToken(anvil, 'Good', 'GOOD', 18)
    const bad = await deployRevertingToken(anvil)
    await mintToken(anvil, good, alice.address, 42n)
    const balanceCall = (target: Address, allowFailure: boolean) => ({
      target,
      allowFailure,
      callData: encodeFunctionData({ abi: testTokenAbi, functionName: 'balanceOf', args: [alice.address] }),
    })

    const { result } = await anvil.publicClient.simulateContract({
      address: multicall,
      abi: multicall3Abi,
      functionName: 'aggregate3',
      args: [[balanceCall(good, true), balanceCall(bad, true)]],
    })
    assert.equal(result.length, 2)
    assert.equal(result[0]!.success, true)
    assert.equal(BigInt(result[0]!.returnData), 42n)
    assert.equal(result[1]!.success, false)
    const err = decodeErrorResult({ abi: revertingTokenAbi, data: result[1]!.returnData })
    assert.equal(err.errorName, 'BalanceOfDisabled')

    // allowFailure=false makes the whole batch revert
    await assert.rejects(
      anvil.publicClient.simulateContract({
        address: multicall,
        abi: multicall3Abi,
        functionName: 'aggregate3',
        args: [[balanceCall(good, true), balanceCall(bad, false)]],
      }),
      /Multicall3: call failed/,
    )

    const eth = await anvil.publicClient.readContract({
      address: multicall,
      abi: multicall3Abi,
      functionName: 'getEthBalance',
      args: [alice.address],
    })
    assert.equal(eth, await anvil.publicClient.getBalance({ address: alice.address }))

    // Installed at the canonical address, viem's own multicall works against it.
    assert.equal(await deployMulticall3(anvil, { canonical: true }), MULTICALL3_ADDRESS)
    const viaViem = await anvil.publicClient.multicall({
      multicallAddress: MULTICALL3_ADDRESS,
      contracts: [
        { address: good, abi: testTokenAbi, functionName: 'balanceOf', args: [alice.address] },
        { address: bad, abi: revertingTokenAbi, functionName: 'balanceOf', args: [alice.address] },
      ],
    })
    assert.equal(viaViem[0].status, 'success')
    assert.equal(viaViem[0].result, 42n)
    assert.equal(viaViem[1].status, 'failure')
  })

  test('wsUrl serves eth_subscribe newHeads', async () => {
    const transport = webSocket(anvil.wsUrl)({ chain: anvil.chain })
    const next = (await anvil.publicClient.getBlockNumber()) + 1n
    let onHead: (n: bigint) => void = () => {}
    const seen = new Promise<bigint>((resolve) => (onHead = resolve))
    // awaiting subscribe() means the subscription is registered before we mine
    const sub = await transport.value!.subscribe({
      params: ['newHeads'],
      onData: (msg) => onHead(BigInt((msg.result as { number: string }).number)),
    })
    try {
      await mine(anvil, 1)
      assert.equal(await seen, next)
    } finally {
      await sub.unsubscribe()
      await (await transport.value!.getRpcClient()).close()
    }
  })

  test('deployContract accepts a contract name with constructor args', async () => {
    const token = await deployContract(anvil, 'TestToken', ['Eight', 'EIGHT', 8])
    assert.equal(await anvil.publicClient.readContract({ address: token, abi: testTokenAbi, functionName: 'decimals' }), 8)
  })
})

describe('anvil modes', () => {
  const started: Anvil[] = []
  after(async () => {
    await Promise.all(started.map((a) => a.stop()))
  })
  const start = async (opts: Parameters<typeof startAnvil>[0]) => {
    const a = await startAnvil(opts)
    started.push(a)
    return a
  }

  test('slotsInAnEpoch: 1 makes `finalized` = head - 2 and `safe` = head - 1', async () => {
    const a = await start({ slotsInAnEpoch: 1, chainId: 1337 })
    assert.equal(await a.publicClient.getChainId(), 1337)
    await mine(a, 10)
    const numberOf = async (blockTag: 'latest' | 'safe' | 'finalized') => (await a.publicClient.getBlock({ blockTag })).number
    assert.equal(await numberOf('latest'), 10n)
    assert.equal(await numberOf('safe'), 9n)
    assert.equal(await numberOf('finalized'), 8n)
    await mine(a, 3)
    assert.equal(await numberOf('finalized'), 11n, 'finalized advances with the head')
  })

  test('default epoch (32 slots): finalized stays at genesis for a short chain', async () => {
    const a = await start({})
    await mine(a, 10)
    assert.equal((await a.publicClient.getBlock({ blockTag: 'finalized' })).number, 0n)
  })

  test('noMining: a same-nonce, higher-fee transaction replaces the pending one (speed-up)', async () => {
    const a = await start({ noMining: true })
    const sender = a.accounts[2]!
    const to = freshAddress()
    const nonce = await a.publicClient.getTransactionCount({ address: sender.address })
    const fees = await a.publicClient.estimateFeesPerGas()

    const original = await sender.wallet.sendTransaction({
      to,
      value: 1n,
      nonce,
      maxFeePerGas: fees.maxFeePerGas,
      maxPriorityFeePerGas: fees.maxPriorityFeePerGas,
    })
    assert.equal(await a.publicClient.getBlockNumber(), 0n, 'nothing mined yet')
    const pending = await a.publicClient.getTransaction({ hash: original })
    assert.equal(pending.blockNumber, null)

    const speedUp = await sender.wallet.sendTransaction({
      to,
      value: 2n,
      nonce,
      maxFeePerGas: fees.maxFeePerGas * 2n,
      maxPriorityFeePerGas: fees.maxPriorityFeePerGas * 2n,
    })
    assert.notEqual(speedUp, original)

    await mine(a, 1)
    const receipt = await waitForReceipt(a, speedUp)
    assert.equal(receipt.status, 'success')
    const block = await a.publicClient.getBlock({ blockNumber: receipt.blockNumber })
    assert.deepEqual(block.transactions, [speedUp])
    await assert.rejects(a.publicClient.getTransactionReceipt({ hash: original }))
    assert.equal(await a.publicClient.getBalance({ address: to }), 2n)
  })

  test('helpers still confirm when automine is off', async () => {
    const a = await start({ noMining: true })
    const token = await deployToken(a, 'T', 'T', 18) // would hang without the helper mining
    assert.equal(await a.publicClient.getBlockNumber(), 1n)
    assert.match(token, /^0x[0-9a-fA-F]{40}$/)
  })

  test('parallel instances get distinct ports; stop() kills the node', async () => {
    const [a, b] = await Promise.all([startAnvil(), startAnvil()])
    assert.notEqual(a.port, b.port)
    await Promise.all([a.stop(), b.stop()])
    await a.stop() // idempotent
    await assert.rejects(fetch(a.rpcUrl, { method: 'POST', body: '{}' }))
  })
})
