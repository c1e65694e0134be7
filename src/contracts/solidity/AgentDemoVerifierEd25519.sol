// SPDX-License-Identifier: MIT
pragma solidity ^0.8.28;

import {AgentDemoVerifierBase} from "./AgentDemoVerifierBase.sol";
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
contract AgentDemoVerifierEd25519 is AgentDemoVerifierBase {
    IEd25519Verifier public immutable ed25519Verifier;

    constructor(address registry_, address ed25519Verifier_) AgentDemoVerifierBase(registry_) {
        ed25519Verifier = IEd25519Verifier(ed25519Verifier_);
    }

    /// @notice The 32 bytes the agent signs for (agentKey, nonce, deadline).
    function messageHash(bytes32 agentKey, uint256 nonce, uint256 deadline) public pure returns (bytes32) {
        return keccak256(abi.encodePacked(agentKey, nonce, deadline));
    }

    /// @dev `signature` is the 64-byte Ed25519 signature R || S by the key agentKey.
    function _checkSignature(bytes32 agentKey, uint256 nonce, uint256 deadline, bytes calldata signature)
        internal
        view
        override
    {
        if (signature.length != 64) revert MetaTxInvalidSignature();
        bytes memory message = abi.encodePacked(messageHash(agentKey, nonce, deadline));
        if (!ed25519Verifier.verify(agentKey, bytes32(signature[0:32]), bytes32(signature[32:64]), message)) {
            revert MetaTxInvalidSignature();
        }
    }
}
