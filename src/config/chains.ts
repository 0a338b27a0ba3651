import type { Address } from 'viem'

/** Everything Paywatch needs to know about one EVM chain. */
export interface ChainConfig {
  name: string
  chainId: number
  /** JSON-RPC URLs (http(s) or ws(s)); a chain without any is not tracked. */
  rpc: string[]
  /** Per `rpc` entry (same index): at most this many requests per second to that provider, null = no limit. */
  rpcRps: (number | null)[]
  /**
   * Distinct providers that must return the same evidence before a verdict (other than a time-out)
   * is written; 1 = the first answer decides.
   */
  quorum: number
  /** The head is stale (readiness fails) when its block is older than this; null = never stale. */
  maxHeadAgeSeconds: number | null
  nativeSymbol: string
  nativeName: string
  nativeDecimals: number
  /** Wrapped native token, used for prices and listed by the assets endpoint. */
  wrapped: Address | null
  /** USD stablecoins: price 1, and the quote side of every price route. */
  stablecoins: Address[]
  /** Extra tokens listed by the assets endpoint. */
  tokens: Address[]
  multicall3: Address | null
  uniswapV2Factories: Address[]
  /** Uniswap V3 pools to quote from, when configured. */
  uniswapV3Pools: Address[]
  /** When set, `finalized` means this many blocks below the head instead of the RPC's `finalized` tag. */
  finalityDepth: number | null
  /** Used only when the RPC does not know the `finalized` tag. */
  fallbackFinalityDepth: number
  pollingIntervalMs: number
  /** How long one RPC request may take before the next URL is tried. */
  rpcTimeoutMs: number
}

export const NATIVE_TOKEN: Address = '0xEeeeeEeeeEeEeeEeEeEeeEEEeeeeEeeeeeeeEEeE'
const MULTICALL3: Address = '0xcA11bde05977b3631167028862bE2a173976CA11'

type BuiltIn = Omit<ChainConfig, 'rpc' | 'rpcRps' | 'quorum' | 'finalityDepth' | 'tokens' | 'uniswapV3Pools' | 'rpcTimeoutMs'>

const builtIns: BuiltIn[] = [
  {
    name: 'ethereum',
    chainId: 1,
    nativeSymbol: 'ETH',
    nativeName: 'Ether',
    nativeDecimals: 18,
    wrapped: '0xC02aaA39b223FE8D0A0e5C4F27eAD9083C756Cc2',
    stablecoins: [
      '0xA0b86991c6218b36c1d19D4a2e9Eb0cE3606eB48',
      '0xdAC17F958D2ee523a2206206994597C13D831ec7',
      '0x6B175474E89094C44Da98b954EedeAC495271d0F',
    ],
    multicall3: MULTICALL3,
    uniswapV2Factories: ['0x5C69bEe701ef814a2B6a3EDD4B1652CB9cc5aA6f'],
    fallbackFinalityDepth: 64,
    pollingIntervalMs: 4000,
    maxHeadAgeSeconds: 120,
  },
  {
    name: 'bsc',
    chainId: 56,
    nativeSymbol: 'BNB',
    nativeName: 'BNB',
    nativeDecimals: 18,
    wrapped: '0xbb4CdB9CBd36B01bD1cBaEBF2De08d9173bc095c',
    stablecoins: [
      '0x55d398326f99059fF775485246999027B3197955',
      '0x8AC76a51cc950d9822D68b83fE1Ad97B32Cd580d',
      '0xe9e7CEA3DedcA5984780Bafc599bD69ADd087D56',
    ],
    multicall3: MULTICALL3,
    uniswapV2Factories: ['0xcA143Ce32Fe78f1f7019d7d551a6402fC5350c73'],
    fallbackFinalityDepth: 15,
    pollingIntervalMs: 1500,
    maxHeadAgeSeconds: 60,
  },
  {
    name: 'polygon',
    chainId: 137,
    nativeSymbol: 'POL',
    nativeName: 'Polygon Ecosystem Token',
    nativeDecimals: 18,
    wrapped: '0x0d500B1d8E8eF31E21C99d1Db9A6444d3ADf1270',
    stablecoins: [
      '0x3c499c542cEF5E3811e1192ce70d8cC03d5c3359',
      '0x2791Bca1f2de4661ED88A30C99A7a9449Aa84174',
      '0xc2132D05D31c914a87C6611C10748AEb04B58e8F',
    ],
    multicall3: MULTICALL3,
    uniswapV2Factories: ['0x5757371414417b8C6CAad45bAeF941aBc7d3Ab32'],
    fallbackFinalityDepth: 128,
    pollingIntervalMs: 2000,
    maxHeadAgeSeconds: 60,
  },
  {
    name: 'arbitrum',
    chainId: 42161,
    nativeSymbol: 'ETH',
    nativeName: 'Ether',
    nativeDecimals: 18,
    wrapped: '0x82aF49447D8a07e3bd95BD0d56f35241523fBab1',
    stablecoins: ['0xaf88d065e77c8cC2239327C5EDb3A432268e5831', '0xFd086bC7CD5C481DCC9C85ebE478A1C0b69FCbb9'],
    multicall3: MULTICALL3,
    uniswapV2Factories: ['0xf1D7CC64Fb4452F05c498126312eBE29f30Fbcf9'],
    fallbackFinalityDepth: 240,
    pollingIntervalMs: 1000,
    maxHeadAgeSeconds: 60,
  },
  {
    name: 'optimism',
    chainId: 10,
    nativeSymbol: 'ETH',
    nativeName: 'Ether',
    nativeDecimals: 18,
    wrapped: '0x4200000000000000000000000000000000000006',
    stablecoins: ['0x0b2C639c533813f4Aa9D7837CAf62653d097Ff85', '0x94b008aA00579c1307B0EF2c499aD98a8ce58e58'],
    multicall3: MULTICALL3,
    uniswapV2Factories: ['0x0c3c1c532F1e39EdF36BE9Fe0bE1410313E074Bf'],
    fallbackFinalityDepth: 120,
    pollingIntervalMs: 2000,
    maxHeadAgeSeconds: 60,
  },
  {
    name: 'base',
    chainId: 8453,
    nativeSymbol: 'ETH',
    nativeName: 'Ether',
    nativeDecimals: 18,
    wrapped: '0x4200000000000000000000000000000000000006',
    stablecoins: ['0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913'],
    multicall3: MULTICALL3,
    uniswapV2Factories: ['0x8909Dc15e40173Ff4699343b6eB8132c65e18eC6'],
    fallbackFinalityDepth: 120,
    pollingIntervalMs: 2000,
    maxHeadAgeSeconds: 60,
  },
  {
    name: 'avalanche',
    chainId: 43114,
    nativeSymbol: 'AVAX',
    nativeName: 'Avalanche',
    nativeDecimals: 18,
    wrapped: '0xB31f66AA3C1e785363F0875A1B74E27b85FD66c7',
    stablecoins: ['0xB97EF9Ef8734C71904D8002F8b6Bc66Dd9c48a6E', '0x9702230A8Ea53601f5cD2dc00fDBc13d4dF4A8c7'],
    multicall3: MULTICALL3,
    uniswapV2Factories: ['0x9Ad6C38BE94206cA50bb0d90783181662f0Cfa10'],
    fallbackFinalityDepth: 1,
    pollingIntervalMs: 2000,
    maxHeadAgeSeconds: 60,
  },
  {
    name: 'gnosis',
    chainId: 100,
    nativeSymbol: 'XDAI',
    nativeName: 'xDai',
    nativeDecimals: 18,
    wrapped: '0xe91D153E0b41518A2Ce8Dd3D7944Fa863463a97d',
    stablecoins: ['0xDDAfbb505ad214D7b80b1f830fcCc89B60fb7A83', '0x4ECaBa5870353805a9F068101A40E0f32ed605C6'],
    multicall3: MULTICALL3,
    uniswapV2Factories: ['0xA818b4F111Ccac7AA31D0BCc0806d64F2E0737D7'],
    fallbackFinalityDepth: 20,
    pollingIntervalMs: 5000,
    maxHeadAgeSeconds: 90,
  },
  {
    name: 'fantom',
    chainId: 250,
    nativeSymbol: 'FTM',
    nativeName: 'Fantom',
    nativeDecimals: 18,
    wrapped: '0x21be370D5312f44cB42ce377BC9b8a0cEF1A4C83',
    stablecoins: ['0x04068DA6C83AFCFA0e13ba15A6696662335D5B75', '0x049d68029688eAbF473097a2fC38ef61633A3C7A'],
    multicall3: MULTICALL3,
    uniswapV2Factories: ['0x152eE697f2E276fA89E96742e9bB9aB1F2E61bE3'],
    fallbackFinalityDepth: 5,
    pollingIntervalMs: 1000,
    maxHeadAgeSeconds: 60,
  },
  {
    name: 'worldchain',
    chainId: 480,
    nativeSymbol: 'ETH',
    nativeName: 'Ether',
    nativeDecimals: 18,
    wrapped: '0x4200000000000000000000000000000000000006',
    stablecoins: ['0x79A02482A880bCE3F13e09Da970dC34db4CD24d1'],
    multicall3: MULTICALL3,
    uniswapV2Factories: [],
    fallbackFinalityDepth: 120,
    pollingIntervalMs: 2000,
    maxHeadAgeSeconds: 60,
  },
]

/**
 * The known chains with their built-in values; RPC URLs come from configuration. `maxHeadAgeSeconds`
 * is several block times (at least a minute): a head older than that means the providers stopped.
 */
export function builtInChains(): Record<string, ChainConfig> {
  return Object.fromEntries(
    builtIns.map((chain) => [
      chain.name,
      { ...chain, rpc: [], rpcRps: [], quorum: 1, tokens: [], uniswapV3Pools: [], finalityDepth: null, rpcTimeoutMs: 10_000 },
    ]),
  )
}
