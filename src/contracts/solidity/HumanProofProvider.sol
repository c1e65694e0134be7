// SPDX-License-Identifier: MIT
pragma solidity ^0.8.28;

import {ISelfHumanProofProvider} from "./interfaces/IHumanProofProvider.sol";

/// @title HumanProofProvider
/// @notice The provider record for agents registered through Self Hub V2. Hub proofs arrive asynchronously via
/// the registry's callback, so this contract only names the provider and its strength; it verifies nothing itself.
contract HumanProofProvider is ISelfHumanProofProvider {
    /// @notice Synchronous verification is impossible: Self proofs are checked by the hub, which calls back.
    error DirectVerificationNotSupported();

    address public immutable hubV2;
    uint256 public immutable scope;

    constructor(address hubV2_, uint256 scope_) {
        hubV2 = hubV2_;
        scope = scope_;
    }

    /// @dev Kept non-view to match IHumanProofProvider; always reverts.
    function verifyHumanProof(bytes calldata, bytes calldata) external returns (bool, uint256) {
        revert DirectVerificationNotSupported();
    }

    function providerName() external pure returns (string memory) {
        return "self";
    }

    /// @notice 100: government ID with NFC chip and biometric check.
    function verificationStrength() external pure returns (uint8) {
        return 100;
    }
}
