// SPDX-License-Identifier: MIT
pragma solidity ^0.8.20;

import {ERC20} from "@openzeppelin/contracts/token/ERC20/ERC20.sol";

/// Plain OpenZeppelin ERC-20 with configurable decimals and an unrestricted mint,
/// so tests can create USDC-like (6) or WETH-like (18) tokens and fund any account.
contract TestToken is ERC20 {
    uint8 private immutable _tokenDecimals;

    constructor(string memory name_, string memory symbol_, uint8 decimals_) ERC20(name_, symbol_) {
        _tokenDecimals = decimals_;
    }

    function decimals() public view override returns (uint8) {
        return _tokenDecimals;
    }

    /// Anyone may mint: this is a test fixture, not a real token.
    function mint(address to, uint256 amount) external {
        _mint(to, amount);
    }
}
