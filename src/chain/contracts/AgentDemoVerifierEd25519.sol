// SPDX-License-Identifier: MIT
pragma solidity ^0.8.28;

import {IAgentRegistryReader} from "./interfaces/IAgentRegistryReader.sol";
import {IEd25519Verifier} from "./interfaces/IEd25519Verifier.sol";

/// @title AgentDemoVerifierEd25519
/// @notice The Ed25519 twin of AgentDemoVerifier: a relayer submits an Ed25519 agent's signature and the contract
/// records that a registry-verified agent checked in, the relayer paying the gas.
/// @dev Differences from the deployed design (onchain-facts 9.2), on purpose:
/// - agentKey is the raw 32-byte Ed25519 public key, the registry's own convention for "E" agents (the deployed demo
///   expected keccak256(pubkey) and so could never find a registered agent);
/// - no extKpub: the verifier needs only the public key, which is the agentKey itself;
/// - the signature is the standard 64-byte RFC 8032 signature (R then S) as `bytes`, so the function has the same
///   signature (and selector) as AgentDemoVerifier.metaVerifyAgent; any other length is MetaTxInvalidSignature.
/// The signed message is keccak256(agentKey || nonce || deadline) (32 + 32 + 32 bytes), signed as its 32 raw bytes.
contract AgentDemoVerifierEd25519 {
    IAgentRegistryReader public immutable registry;
    IEd25519Verifier public immutable ed25519Verifier;

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

    constructor(address registry_, address ed25519Verifier_) {
        registry = IAgentRegistryReader(registry_);
        ed25519Verifier = IEd25519Verifier(ed25519Verifier_);
    }

    /// @notice The 32 bytes the agent signs for (agentKey, nonce, deadline).
    function messageHash(bytes32 agentKey, uint256 nonce, uint256 deadline) public pure returns (bytes32) {
        return keccak256(abi.encodePacked(agentKey, nonce, deadline));
    }

    /// @notice Records a verification on behalf of the Ed25519 agent whose key (agentKey) signed
    /// messageHash(agentKey, nonce, deadline).
    /// @param signature the 64-byte Ed25519 signature R || S
    function metaVerifyAgent(bytes32 agentKey, uint256 nonce, uint256 deadline, bytes calldata signature)
        external
        returns (uint256 agentId)
    {
        if (block.timestamp > deadline) revert MetaTxExpired();
        if (nonces[agentKey] != nonce) revert MetaTxInvalidNonce();
        if (signature.length != 64) revert MetaTxInvalidSignature();
        bytes memory message = abi.encodePacked(messageHash(agentKey, nonce, deadline));
        if (!ed25519Verifier.verify(agentKey, bytes32(signature[0:32]), bytes32(signature[32:64]), message)) {
            revert MetaTxInvalidSignature();
        }
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
