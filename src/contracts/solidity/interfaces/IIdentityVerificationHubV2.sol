// SPDX-License-Identifier: MIT
pragma solidity ^0.8.28;

import {SelfStructs} from "./SelfStructs.sol";

/// @notice The part of Hub V2 that a verification root uses.
interface IIdentityVerificationHubV2 {
    /// @param baseVerificationInput contractVersion (1 byte) || 31 zero bytes || scope (32) || attestationId (32) || proof
    /// @param userContextData configId (32) || destChainId (32) || userIdentifier (32) || userDefinedData
    function verify(bytes calldata baseVerificationInput, bytes calldata userContextData) external;

    function setVerificationConfigV2(SelfStructs.VerificationConfigV2 memory config) external returns (bytes32 configId);

    function verificationConfigV2Exists(bytes32 configId) external view returns (bool);
}
