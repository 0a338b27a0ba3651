// SPDX-License-Identifier: MIT
pragma solidity ^0.8.20;

import {IERC20} from "@openzeppelin/contracts/token/ERC20/IERC20.sol";
import {SafeERC20} from "@openzeppelin/contracts/token/ERC20/utils/SafeERC20.sol";

/// Minimal payment router. It exists so tests see payments the way they look on real chains
/// when a router sits in the middle:
/// - native payments arrive at the receiver through internal calls (only visible in traces),
/// - token payments arrive with `Transfer(from = router, to = receiver)`, not from the payer.
contract PaymentRouter {
    using SafeERC20 for IERC20;

    error FeeExceedsValue(uint256 value, uint256 feeAmount);
    error NativeTransferFailed(address to, uint256 amount);

    /// Splits msg.value: `msg.value - feeAmount` to `receiver`, `feeAmount` to `feeReceiver`.
    function payNative(address receiver, address feeReceiver, uint256 feeAmount) external payable {
        if (feeAmount > msg.value) revert FeeExceedsValue(msg.value, feeAmount);
        _sendNative(receiver, msg.value - feeAmount);
        if (feeAmount > 0) _sendNative(feeReceiver, feeAmount);
    }

    /// Pulls `amount + feeAmount` of `token` from the payer (needs prior approval of the router),
    /// then forwards `amount` to `receiver` and `feeAmount` to `feeReceiver`.
    function payToken(address token, uint256 amount, address receiver, uint256 feeAmount, address feeReceiver)
        external
    {
        IERC20(token).safeTransferFrom(msg.sender, address(this), amount + feeAmount);
        IERC20(token).safeTransfer(receiver, amount);
        if (feeAmount > 0) IERC20(token).safeTransfer(feeReceiver, feeAmount);
    }

    function _sendNative(address to, uint256 amount) private {
        (bool ok,) = payable(to).call{value: amount}("");
        if (!ok) revert NativeTransferFailed(to, amount);
    }
}
