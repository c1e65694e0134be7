// SPDX-License-Identifier: MIT
pragma solidity ^0.8.28;

/// @notice Data shapes of Self's Identity Verification Hub V2, kept byte-compatible so that the registry
/// works unchanged against the real hub on Celo and against LocalIdentityHub on local chains.
library SelfStructs {
    /// @dev configId = sha256(abi.encode(config)); fully static (10 words).
    struct VerificationConfigV2 {
        bool olderThanEnabled;
        uint256 olderThan;
        bool forbiddenCountriesEnabled;
        uint256[4] forbiddenCountriesListPacked;
        bool[3] ofacEnabled;
    }

    /// @dev What the hub hands to the verification root after a successful proof, abi.encode(struct).
    struct GenericDiscloseOutputV2 {
        bytes32 attestationId;
        uint256 userIdentifier;
        uint256 nullifier;
        uint256[4] forbiddenCountriesListPacked;
        string issuingState;
        string[] name;
        string idNumber;
        string nationality;
        string dateOfBirth;
        string gender;
        string expiryDate;
        uint256 olderThan;
        bool[3] ofac;
    }
}
