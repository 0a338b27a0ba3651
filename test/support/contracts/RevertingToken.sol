// SPDX-License-Identifier: MIT
pragma solidity ^0.8.20;

/// Looks like an ERC-20 from the outside (name/symbol/decimals answer normally) but every
/// balance lookup reverts. Used to test that balance/asset code survives a hostile token.
contract RevertingToken {
    string public name;
    string public symbol;
    uint8 public immutable decimals;

    error BalanceOfDisabled(address account);

    constructor(string memory name_, string memory symbol_, uint8 decimals_) {
        name = name_;
        symbol = symbol_;
        decimals = decimals_;
    }

    function totalSupply() external pure returns (uint256) {
        return 0;
    }

    function balanceOf(address account) external pure returns (uint256) {
        revert BalanceOfDisabled(account);
    }
}
