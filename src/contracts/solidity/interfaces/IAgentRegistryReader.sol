// SPDX-License-Identifier: MIT
pragma solidity ^0.8.28;

/// @notice The read surface of AgentRegistry that gates and demo contracts rely on.
interface IAgentRegistryReader {
    function isVerifiedAgent(bytes32 agentKey) external view returns (bool);

    function getAgentId(bytes32 agentKey) external view returns (uint256);

    function hasHumanProof(uint256 agentId) external view returns (bool);

    function isProofFresh(uint256 agentId) external view returns (bool);

    function proofExpiresAt(uint256 agentId) external view returns (uint256);

    function getProofProvider(uint256 agentId) external view returns (address);

    function agentRegisteredAt(uint256 agentId) external view returns (uint256);

    /// @dev Reverts for a nonexistent token.
    function isAuthorizedOrOwner(address spender, uint256 agentId) external view returns (bool);
}
