// Deploy and transaction helpers for chain tests.
//
// Conventions:
// - Every helper takes `clients` first; an `Anvil` from startAnvil() satisfies it. Deployments
//   and admin calls are sent from `clients.walletClient` (dev account 0).
// - Helpers that send a transaction return only once it is mined and successful (they throw on
//   revert). If automine is off (noMining / blockTime), they mine one block themselves so a test
//   never hangs; to keep a transaction pending, call viem's wallet.sendTransaction directly.
import { readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { TransactionReceiptNotFoundError, type Abi, type Address, type Hash, type Hex, type TransactionReceipt } from 'viem'
import { paymentRouterAbi, testTokenAbi, uniswapV2FactoryAbi, uniswapV2PairAbi } from './abis.ts'
import type { AnvilAccount, TestPublicClient, TestTestClient, TestWallet } from './anvil.ts'
import { getArtifact, type ContractName } from './compile.ts'

/** The subset of an `Anvil` the helpers need. */
export interface Clients {
  publicClient: TestPublicClient
  testClient: TestTestClient
  walletClient: TestWallet
}

/** Where Multicall3 lives on virtually every EVM chain (viem's default multicall address). */
export const MULTICALL3_ADDRESS: Address = '0xcA11bde05977b3631167028862bE2a173976CA11'

const require = createRequire(import.meta.url)

// ---------------------------------------------------------------------------------------------
// Transactions

/** Poll for a receipt (25 ms steps). Does not mine; see `confirm` for that. */
export async function waitForReceipt(clients: Pick<Clients, 'publicClient'>, hash: Hash, timeoutMs = 10_000): Promise<TransactionReceipt> {
  const deadline = Date.now() + timeoutMs
  for (;;) {
    try {
      return await clients.publicClient.getTransactionReceipt({ hash })
    } catch (e) {
      if (!(e instanceof TransactionReceiptNotFoundError)) throw e
      if (Date.now() > deadline) throw new Error(`no receipt for ${hash} after ${timeoutMs} ms`)
      await new Promise((r) => setTimeout(r, 25))
    }
  }
}

/** Mine a block if automine is off, wait for the receipt, and throw if the tx reverted. */
export async function confirm(clients: Clients, hash: Hash): Promise<TransactionReceipt> {
  if (!(await clients.testClient.getAutomine())) await clients.testClient.mine({ blocks: 1 })
  const receipt = await waitForReceipt(clients, hash)
  if (receipt.status !== 'success') throw new Error(`transaction ${hash} reverted`)
  return receipt
}

/** Mine `n` empty blocks (or blocks with whatever is pending). */
export async function mine(clients: Pick<Clients, 'testClient'>, n = 1): Promise<void> {
  await clients.testClient.mine({ blocks: n })
}

/** Plain native-coin transfer from a dev account. */
export async function sendNative(clients: Clients, from: AnvilAccount, to: Address, value: bigint): Promise<TransactionReceipt> {
  return confirm(clients, await from.wallet.sendTransaction({ to, value }))
}

/** ERC-20 `transfer` signed by `from`. */
export async function transferToken(
  clients: Clients,
  token: Address,
  from: AnvilAccount,
  to: Address,
  amount: bigint,
): Promise<TransactionReceipt> {
  const hash = await from.wallet.writeContract({
    address: token,
    abi: testTokenAbi,
    functionName: 'transfer',
    args: [to, amount],
  })
  return confirm(clients, hash)
}

/** TestToken `mint` (open to anyone), sent by the default wallet. */
export async function mintToken(clients: Clients, token: Address, to: Address, amount: bigint): Promise<TransactionReceipt> {
  const hash = await clients.walletClient.writeContract({
    address: token,
    abi: testTokenAbi,
    functionName: 'mint',
    args: [to, amount],
  })
  return confirm(clients, hash)
}

/** ERC-20 `approve` signed by `owner`. */
export async function approveToken(
  clients: Clients,
  token: Address,
  owner: AnvilAccount,
  spender: Address,
  amount: bigint,
): Promise<TransactionReceipt> {
  const hash = await owner.wallet.writeContract({
    address: token,
    abi: testTokenAbi,
    functionName: 'approve',
    args: [spender, amount],
  })
  return confirm(clients, hash)
}

/** PaymentRouter.payNative: receiver gets `value - feeAmount`, feeReceiver gets `feeAmount`. */
export async function routerPayNative(
  clients: Clients,
  router: Address,
  from: AnvilAccount,
  args: { receiver: Address; value: bigint; feeReceiver?: Address; feeAmount?: bigint },
): Promise<TransactionReceipt> {
  const feeAmount = args.feeAmount ?? 0n
  const feeReceiver = args.feeReceiver ?? args.receiver
  const hash = await from.wallet.writeContract({
    address: router,
    abi: paymentRouterAbi,
    functionName: 'payNative',
    args: [args.receiver, feeReceiver, feeAmount],
    value: args.value,
  })
  return confirm(clients, hash)
}

/**
 * Approves the router for `amount + feeAmount`, then PaymentRouter.payToken. The receiver's
 * Transfer log has `from = router`. Returns the payment's receipt (not the approval's).
 */
export async function routerPayToken(
  clients: Clients,
  router: Address,
  from: AnvilAccount,
  args: { token: Address; receiver: Address; amount: bigint; feeReceiver?: Address; feeAmount?: bigint },
): Promise<TransactionReceipt> {
  const feeAmount = args.feeAmount ?? 0n
  const feeReceiver = args.feeReceiver ?? args.receiver
  await approveToken(clients, args.token, from, router, args.amount + feeAmount)
  const hash = await from.wallet.writeContract({
    address: router,
    abi: paymentRouterAbi,
    functionName: 'payToken',
    args: [args.token, args.amount, args.receiver, feeAmount, feeReceiver],
  })
  return confirm(clients, hash)
}

// ---------------------------------------------------------------------------------------------
// Deployments

/** Deploy a fixture contract by name (compiled from test/support/contracts) or a raw artifact. */
export async function deployContract(
  clients: Clients,
  contract: ContractName | { abi: Abi; bytecode: Hex },
  args: readonly unknown[] = [],
): Promise<Address> {
  const { abi, bytecode } = typeof contract === 'string' ? await getArtifact(contract) : contract
  const hash = await clients.walletClient.deployContract({ abi, bytecode, args })
  const receipt = await confirm(clients, hash)
  if (!receipt.contractAddress) throw new Error(`deployment ${hash} produced no contract address`)
  return receipt.contractAddress
}

/** OpenZeppelin ERC-20 with open `mint` and the given decimals. */
export function deployToken(clients: Clients, name: string, symbol: string, decimals: number): Promise<Address> {
  return deployContract(clients, 'TestToken', [name, symbol, decimals])
}

/** WETH stand-in: a TestToken with 18 decimals (no deposit/withdraw; fund it with mintToken). */
export function deployWeth(clients: Clients): Promise<Address> {
  return deployToken(clients, 'Wrapped Ether', 'WETH', 18)
}

/** ERC-20 look-alike whose balanceOf always reverts. */
export function deployRevertingToken(clients: Clients, name = 'Reverting Token', symbol = 'REV', decimals = 18): Promise<Address> {
  return deployContract(clients, 'RevertingToken', [name, symbol, decimals])
}

export function deployRouter(clients: Clients): Promise<Address> {
  return deployContract(clients, 'PaymentRouter')
}

/**
 * Deploys our Multicall3. With `{ canonical: true }` its runtime code is also installed at
 * MULTICALL3_ADDRESS (anvil_setCode) and that address is returned, so code that assumes the
 * well-known address works unchanged.
 */
export async function deployMulticall3(clients: Clients, opts: { canonical?: boolean } = {}): Promise<Address> {
  if (opts.canonical) {
    const { deployedBytecode } = await getArtifact('Multicall3')
    await clients.testClient.setCode({ address: MULTICALL3_ADDRESS, bytecode: deployedBytecode })
    return MULTICALL3_ADDRESS
  }
  return deployContract(clients, 'Multicall3')
}

function uniswapArtifact(name: 'UniswapV2Factory' | 'UniswapV2Pair'): { abi: Abi; bytecode: Hex } {
  const json = JSON.parse(readFileSync(require.resolve(`@uniswap/v2-core/build/${name}.json`), 'utf8')) as {
    abi: Abi
    bytecode: string
  }
  const bytecode = (json.bytecode.startsWith('0x') ? json.bytecode : `0x${json.bytecode}`) as Hex
  return { abi: json.abi, bytecode }
}

/** Compiled Uniswap V2 pair ABI from the npm artifact (for decoding logs etc.). */
export function uniswapV2PairArtifactAbi(): Abi {
  return uniswapArtifact('UniswapV2Pair').abi
}

/** Deploys the real UniswapV2Factory (npm artifact). Returns the factory address. */
export function deployUniswapV2(clients: Clients, feeToSetter?: Address): Promise<Address> {
  return deployContract(clients, uniswapArtifact('UniswapV2Factory'), [feeToSetter ?? clients.walletClient.account.address])
}

/** factory.createPair; returns the new pair's address. */
export async function createPair(clients: Clients, factory: Address, tokenA: Address, tokenB: Address): Promise<Address> {
  const hash = await clients.walletClient.writeContract({
    address: factory,
    abi: uniswapV2FactoryAbi,
    functionName: 'createPair',
    args: [tokenA, tokenB],
  })
  await confirm(clients, hash)
  return clients.publicClient.readContract({
    address: factory,
    abi: uniswapV2FactoryAbi,
    functionName: 'getPair',
    args: [tokenA, tokenB],
  })
}

/**
 * Uniswap V2 "add liquidity" without the periphery router: transfer both tokens from the
 * default wallet to the pair, then `pair.mint(to)`. The default wallet must hold the tokens
 * (use mintToken first). The first deposit must satisfy sqrt(amountA*amountB) > 1000.
 */
export async function addLiquidity(
  clients: Clients,
  pair: Address,
  tokenA: Address,
  amountA: bigint,
  tokenB: Address,
  amountB: bigint,
  to?: Address,
): Promise<TransactionReceipt> {
  const wallet = clients.walletClient
  for (const [token, amount] of [
    [tokenA, amountA],
    [tokenB, amountB],
  ] as const) {
    const hash = await wallet.writeContract({
      address: token,
      abi: testTokenAbi,
      functionName: 'transfer',
      args: [pair, amount],
    })
    await confirm(clients, hash)
  }
  const hash = await wallet.writeContract({
    address: pair,
    abi: uniswapV2PairAbi,
    functionName: 'mint',
    args: [to ?? wallet.account.address],
  })
  return confirm(clients, hash)
}
