// SPDX-License-Identifier: MIT
pragma solidity ^0.8.28;

import {ECDSA} from "@openzeppelin/contracts/utils/cryptography/ECDSA.sol";
import {EIP712} from "@openzeppelin/contracts/utils/cryptography/EIP712.sol";

import {AgentDemoVerifierBase} from "./AgentDemoVerifierBase.sol";

/// @title AgentDemoVerifier
/// @notice Demo of gas-sponsored agent verification: a relayer submits an agent's EIP-712 MetaVerify signature
/// and the contract records that a registry-verified agent checked in. Works for ECDSA (padded-address) agents.
contract AgentDemoVerifier is AgentDemoVerifierBase, EIP712 {
    bytes32 private constant META_VERIFY_TYPEHASH =
        keccak256("MetaVerify(bytes32 agentKey,uint256 nonce,uint256 deadline)");

    constructor(address registry_) AgentDemoVerifierBase(registry_) EIP712("AgentDemoVerifier", "1") {}

    /// @dev tryRecover: a malformed signature is MetaTxInvalidSignature, not one of OZ's ECDSA errors.
    function _checkSignature(bytes32 agentKey, uint256 nonce, uint256 deadline, bytes calldata signature)
        internal
        view
        override
    {
        bytes32 digest = _hashTypedDataV4(keccak256(abi.encode(META_VERIFY_TYPEHASH, agentKey, nonce, deadline)));
        (address signer, ECDSA.RecoverError err,) = ECDSA.tryRecover(digest, signature);
        if (err != ECDSA.RecoverError.NoError || signer != address(uint160(uint256(agentKey)))) {
            revert MetaTxInvalidSignature();
        }
    }

    // solhint-disable-next-line func-name-mixedcase
    function DOMAIN_SEPARATOR() external view returns (bytes32) {
        return _domainSeparatorV4();
    }
}
