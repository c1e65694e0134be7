// SPDX-License-Identifier: MIT
pragma solidity ^0.8.28;

import {IERC8004} from "./IERC8004.sol";

/// @notice Proof-of-human extension of ERC-8004: every agent is bound to a human nullifier attested by an
/// approved provider. Interface ID 0x04f951ca (its own twelve functions).
/// Strength scale used by providers: 100 = chip-backed government ID with biometrics, 60 = government ID
/// without chip, 40 = video liveness, 0 = none.
interface IERC8004ProofOfHuman is IERC8004 {
    event AgentRegisteredWithHumanProof(
        uint256 indexed agentId, address indexed proofProvider, uint256 nullifier, uint8 verificationStrength
    );
    event HumanProofRevoked(uint256 indexed agentId, uint256 nullifier);
    event ProofProviderAdded(address indexed provider, string name);
    event ProofProviderRemoved(address indexed provider);
    event MaxProofAgeUpdated(uint256 newMaxProofAge);
    event MaxAgentsPerHumanUpdated(uint256 newMaxAgentsPerHuman);
    event HumanProofRefreshed(uint256 indexed agentId, uint256 nullifier, uint256 newExpiresAt, bytes32 configId);
    event NullifierIdentified(uint256 indexed nullifier, uint256 agentCount);

    error ConfigMismatch(bytes32 expected, bytes32 actual);
    error RefreshNotSupported(uint256 agentId);

    function registerWithHumanProof(
        string calldata agentURI,
        address proofProvider,
        bytes calldata proof,
        bytes calldata providerData
    ) external returns (uint256 agentId);

    function revokeHumanProof(uint256 agentId, address proofProvider, bytes calldata proof, bytes calldata providerData)
        external;

    /// @dev Stays true after expiry; see isProofFresh.
    function hasHumanProof(uint256 agentId) external view returns (bool);

    function proofExpiresAt(uint256 agentId) external view returns (uint256);

    function isProofFresh(uint256 agentId) external view returns (bool);

    function getHumanNullifier(uint256 agentId) external view returns (uint256);

    function getProofProvider(uint256 agentId) external view returns (address);

    function getAgentCountForHuman(uint256 nullifier) external view returns (uint256);

    function getAgentsForNullifier(uint256 nullifier) external view returns (uint256[] memory);

    function getAgentsForNullifier(uint256 nullifier, uint256 offset, uint256 limit)
        external
        view
        returns (uint256[] memory);

    function sameHuman(uint256 agentIdA, uint256 agentIdB) external view returns (bool);

    function isApprovedProvider(address provider) external view returns (bool);
}
