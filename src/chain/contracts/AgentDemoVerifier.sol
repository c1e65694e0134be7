// SPDX-License-Identifier: MIT
pragma solidity ^0.8.28;

import {ECDSA} from "@openzeppelin/contracts/utils/cryptography/ECDSA.sol";
import {EIP712} from "@openzeppelin/contracts/utils/cryptography/EIP712.sol";

import {IAgentRegistryReader} from "./interfaces/IAgentRegistryReader.sol";

/// @title AgentDemoVerifier
/// @notice Demo of gas-sponsored agent verification: a relayer submits an agent's EIP-712 MetaVerify signature
/// and the contract records that a registry-verified agent checked in. Works for ECDSA (padded-address) agents.
contract AgentDemoVerifier is EIP712 {
    bytes32 private constant META_VERIFY_TYPEHASH =
        keccak256("MetaVerify(bytes32 agentKey,uint256 nonce,uint256 deadline)");

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

    constructor(address registry_) EIP712("AgentDemoVerifier", "1") {
        registry = IAgentRegistryReader(registry_);
    }

    /// @notice Records a verification on behalf of the agent whose key signed MetaVerify(agentKey, nonce, deadline).
    function metaVerifyAgent(bytes32 agentKey, uint256 nonce, uint256 deadline, bytes calldata signature)
        external
        returns (uint256 agentId)
    {
        if (block.timestamp > deadline) revert MetaTxExpired();
        if (nonces[agentKey] != nonce) revert MetaTxInvalidNonce();
        bytes32 digest = _hashTypedDataV4(keccak256(abi.encode(META_VERIFY_TYPEHASH, agentKey, nonce, deadline)));
        (address signer, ECDSA.RecoverError err,) = ECDSA.tryRecover(digest, signature);
        if (err != ECDSA.RecoverError.NoError || signer != address(uint160(uint256(agentKey)))) {
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

    // solhint-disable-next-line func-name-mixedcase
    function DOMAIN_SEPARATOR() external view returns (bytes32) {
        return _domainSeparatorV4();
    }
}
