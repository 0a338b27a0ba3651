// SPDX-License-Identifier: MIT
pragma solidity ^0.8.20;

/// Minimal implementation of the parts of the Multicall3 interface our code uses
/// (viem's `multicall` calls `aggregate3`; balance readers use `getEthBalance`).
/// The ABI matches the canonical Multicall3 so it can also be placed at
/// 0xcA11bde05977b3631167028862bE2a173976CA11 with anvil_setCode.
contract Multicall3 {
    struct Call3 {
        address target;
        bool allowFailure;
        bytes callData;
    }

    struct Result {
        bool success;
        bytes returnData;
    }

    /// Runs every call; a failing call reverts the whole batch unless it allows failure.
    function aggregate3(Call3[] calldata calls) external payable returns (Result[] memory returnData) {
        uint256 length = calls.length;
        returnData = new Result[](length);
        for (uint256 i = 0; i < length; i++) {
            Call3 calldata c = calls[i];
            (bool success, bytes memory ret) = c.target.call(c.callData);
            require(success || c.allowFailure, "Multicall3: call failed");
            returnData[i] = Result(success, ret);
        }
    }

    function getEthBalance(address addr) external view returns (uint256 balance) {
        balance = addr.balance;
    }

    function getBlockNumber() external view returns (uint256 blockNumber) {
        blockNumber = block.number;
    }
}
