// SPDX-License-Identifier: MIT
pragma solidity ^0.8.28;

/// @notice The callback surface the hub expects of a verification root (the registry).
interface ISelfVerificationRoot {
    /// @notice Entry point of the relayer: proofPayload = attestationId (32) || proof;
    /// userContextData = destChainId (32) || userIdentifier (32) || userDefinedData.
    function verifySelfProof(bytes calldata proofPayload, bytes calldata userContextData) external;

    /// @notice Called by the hub only, with abi.encode(GenericDiscloseOutputV2) and the userDefinedData.
    function onVerificationSuccess(bytes memory output, bytes memory userData) external;

    function scope() external view returns (uint256);
}
