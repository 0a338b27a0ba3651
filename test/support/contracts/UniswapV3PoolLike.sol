// SPDX-License-Identifier: MIT
pragma solidity ^0.8.20;

/// The read-only face of a Uniswap V3 pool that price readers use: `token0`/`token1` (sorted the way
/// the real factory sorts them) and `slot0` with the real seven-field layout. The price is fixed at
/// construction (as `initialize` does); the pool's liquidity is whatever tokens are sent to it.
// (The Uniswap V3 core package is not installed; this keeps V3 price reading testable on Anvil.)
contract UniswapV3PoolLike {
    struct Slot0 {
        uint160 sqrtPriceX96;
        int24 tick;
        uint16 observationIndex;
        uint16 observationCardinality;
        uint16 observationCardinalityNext;
        uint8 feeProtocol;
        bool unlocked;
    }

    address public immutable token0;
    address public immutable token1;
    Slot0 public slot0;

    constructor(address tokenA, address tokenB, uint160 sqrtPriceX96) {
        (token0, token1) = tokenA < tokenB ? (tokenA, tokenB) : (tokenB, tokenA);
        slot0 = Slot0(sqrtPriceX96, 0, 0, 1, 1, 0, true);
    }
}
