// Hand-written `as const` ABIs for the fixture contracts.
//
// The compiled ABIs (compile.ts, Uniswap JSON) are only known at runtime, so viem cannot infer
// argument/return types from them. These literal copies give tests typed readContract /
// writeContract calls. harness.test.ts checks every entry here against the compiled ABI, so a
// drift between these and the Solidity sources fails loudly.
import { erc20Abi, parseAbi } from 'viem'

export const testTokenAbi = [...erc20Abi, ...parseAbi(['function mint(address to, uint256 amount)'])] as const

export const revertingTokenAbi = parseAbi([
  'function name() view returns (string)',
  'function symbol() view returns (string)',
  'function decimals() view returns (uint8)',
  'function totalSupply() pure returns (uint256)',
  'function balanceOf(address account) pure returns (uint256)',
  'error BalanceOfDisabled(address account)',
])

export const paymentRouterAbi = parseAbi([
  'function payNative(address receiver, address feeReceiver, uint256 feeAmount) payable',
  'function payToken(address token, uint256 amount, address receiver, uint256 feeAmount, address feeReceiver)',
  'error FeeExceedsValue(uint256 value, uint256 feeAmount)',
  'error NativeTransferFailed(address to, uint256 amount)',
])

export const multicall3Abi = parseAbi([
  'struct Call3 { address target; bool allowFailure; bytes callData; }',
  'struct Result { bool success; bytes returnData; }',
  'function aggregate3(Call3[] calls) payable returns (Result[] returnData)',
  'function getEthBalance(address addr) view returns (uint256 balance)',
  'function getBlockNumber() view returns (uint256 blockNumber)',
])

export const uniswapV2FactoryAbi = parseAbi([
  'function createPair(address tokenA, address tokenB) returns (address pair)',
  'function getPair(address tokenA, address tokenB) view returns (address pair)',
  'function allPairsLength() view returns (uint256)',
  'event PairCreated(address indexed token0, address indexed token1, address pair, uint256)',
])

export const uniswapV2PairAbi = parseAbi([
  'function token0() view returns (address)',
  'function token1() view returns (address)',
  'function getReserves() view returns (uint112 reserve0, uint112 reserve1, uint32 blockTimestampLast)',
  'function mint(address to) returns (uint256 liquidity)',
  'function swap(uint256 amount0Out, uint256 amount1Out, address to, bytes data)',
  'function sync()',
  'function balanceOf(address owner) view returns (uint256)',
  'function totalSupply() view returns (uint256)',
  'event Sync(uint112 reserve0, uint112 reserve1)',
  'event Swap(address indexed sender, uint256 amount0In, uint256 amount1In, uint256 amount0Out, uint256 amount1Out, address indexed to)',
])
