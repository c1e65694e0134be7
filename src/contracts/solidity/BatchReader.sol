// SPDX-License-Identifier: MIT
pragma solidity ^0.8.28;

/// @notice Batches read calls into one eth_call, with the `aggregate3` signature of the Multicall3 that
/// Celo has at its canonical address, so the chain layer's multicall works the same on local chains.
contract BatchReader {
    struct Call3 {
        address target;
        bool allowFailure;
        bytes callData;
    }

    struct Result {
        bool success;
        bytes returnData;
    }

    error CallFailed(uint256 index);

    function aggregate3(Call3[] calldata calls) external payable returns (Result[] memory results) {
        results = new Result[](calls.length);
        for (uint256 i = 0; i < calls.length; ++i) {
            (bool success, bytes memory returnData) = calls[i].target.call(calls[i].callData);
            if (!success && !calls[i].allowFailure) revert CallFailed(i);
            results[i] = Result(success, returnData);
        }
    }
}
