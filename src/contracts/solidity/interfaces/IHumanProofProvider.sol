// SPDX-License-Identifier: MIT
pragma solidity ^0.8.28;

/// @notice A source of proof-of-human attestations that the registry can approve.
interface IHumanProofProvider {
    /// @return verified whether the proof is valid for `data`
    /// @return nullifier a per-human identifier, stable across that human's proofs
    function verifyHumanProof(bytes calldata proof, bytes calldata data)
        external
        returns (bool verified, uint256 nullifier);

    function providerName() external view returns (string memory);

    function verificationStrength() external view returns (uint8);
}

/// @notice The Self provider record additionally exposes the hub and scope its proofs are bound to.
interface ISelfHumanProofProvider is IHumanProofProvider {
    function hubV2() external view returns (address);

    function scope() external view returns (uint256);
}
