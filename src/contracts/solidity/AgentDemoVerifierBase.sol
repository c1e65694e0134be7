// SPDX-License-Identifier: MIT
pragma solidity ^0.8.28;

import {IAgentRegistryReader} from "./interfaces/IAgentRegistryReader.sol";

/// @notice What both demo verifiers share: per-key nonces and counters, the registry check and the events.
/// A subclass checks the agent's signature for its key type in `_checkSignature`.
abstract contract AgentDemoVerifierBase {
    IAgentRegistryReader public immutable registry;

    mapping(bytes32 agentKey => bool) public hasVerified;
    mapping(bytes32 agentKey => uint256) public verificationCount;
    mapping(bytes32 agentKey => uint256) public nonces;
    uint256 public totalVerifications;

    event AgentChainVerified(bytes32 indexed agentKey, uint256 indexed agentId);
    event VerificationCompleted(bytes32 indexed agentKey, uint256 agentCount, uint256 totalCount);
    event GasSponsored(address indexed relayer, bytes32 indexed agentKey);

    error NotVerifiedAgent();
    error MetaTxExpired();
    error MetaTxInvalidNonce();
    error MetaTxInvalidSignature();

    constructor(address registry_) {
        registry = IAgentRegistryReader(registry_);
    }

    /// @dev Reverts MetaTxInvalidSignature unless `signature` is the agent's over (agentKey, nonce, deadline).
    function _checkSignature(bytes32 agentKey, uint256 nonce, uint256 deadline, bytes calldata signature)
        internal
        view
        virtual;

    /// @notice Records a verification on behalf of the agent whose key signed (agentKey, nonce, deadline); the
    /// relayer (msg.sender) pays the gas.
    function metaVerifyAgent(bytes32 agentKey, uint256 nonce, uint256 deadline, bytes calldata signature)
        external
        returns (uint256 agentId)
    {
        if (block.timestamp > deadline) revert MetaTxExpired();
        if (nonces[agentKey] != nonce) revert MetaTxInvalidNonce();
        _checkSignature(agentKey, nonce, deadline, signature);
        nonces[agentKey] = nonce + 1;

        if (!registry.isVerifiedAgent(agentKey)) revert NotVerifiedAgent();
        agentId = registry.getAgentId(agentKey);

        hasVerified[agentKey] = true;
        uint256 agentCount = ++verificationCount[agentKey];
        uint256 totalCount = ++totalVerifications;

        emit AgentChainVerified(agentKey, agentId);
        emit VerificationCompleted(agentKey, agentCount, totalCount);
        emit GasSponsored(msg.sender, agentKey);
    }

    /// @return agentId the registry's ID for a verified agent; reverts NotVerifiedAgent otherwise
    function checkAccess(bytes32 agentKey) external view returns (uint256 agentId) {
        if (!registry.isVerifiedAgent(agentKey)) revert NotVerifiedAgent();
        return registry.getAgentId(agentKey);
    }
}
