// SPDX-License-Identifier: MIT
pragma solidity ^0.8.28;

import {Account} from "@openzeppelin/contracts/account/Account.sol";
import {ERC7821} from "@openzeppelin/contracts/account/extensions/draft-ERC7821.sol";
import {ERC4337Utils} from "@openzeppelin/contracts/account/utils/ERC4337Utils.sol";
import {IEntryPoint} from "@openzeppelin/contracts/interfaces/IERC4337.sol";
import {Initializable} from "@openzeppelin/contracts/proxy/utils/Initializable.sol";
import {ERC1155Holder} from "@openzeppelin/contracts/token/ERC1155/utils/ERC1155Holder.sol";
import {ERC721Holder} from "@openzeppelin/contracts/token/ERC721/utils/ERC721Holder.sol";
import {EIP712} from "@openzeppelin/contracts/utils/cryptography/EIP712.sol";
import {AbstractSigner} from "@openzeppelin/contracts/utils/cryptography/signers/AbstractSigner.sol";
import {ERC7739} from "@openzeppelin/contracts/utils/cryptography/signers/draft-ERC7739.sol";
import {SignerP256} from "@openzeppelin/contracts/utils/cryptography/signers/SignerP256.sol";
import {SignerWebAuthn} from "@openzeppelin/contracts/utils/cryptography/signers/SignerWebAuthn.sol";

/// @notice ERC-4337 (EntryPoint v0.7) smart account owned by one WebAuthn P-256 passkey, deployed as an
/// ERC-1167 clone by PasskeyAccountFactory and initialised with the passkey's public key in the same call.
///
/// Signatures everywhere are the WebAuthn assertion, ABI-encoded as OpenZeppelin's `WebAuthn.WebAuthnAuth`
/// fields `(bytes32 r, bytes32 s, uint256 challengeIndex, uint256 typeIndex, bytes authenticatorData,
/// string clientDataJSON)`, where the challenge is the 32-byte hash being signed and user verification
/// (the UV flag) is required.
///
/// - UserOperations: the challenge is EntryPoint v0.7's userOpHash (it already binds the chain and the
///   EntryPoint). The calls run through ERC-7821 `execute` (batch mode), which the EntryPoint may call.
/// - ERC-1271 `isValidSignature` is ERC-7739's: the passkey signs the hash nested in an EIP-712 envelope of
///   this account's domain ("PasskeyAccount", "1", chain id, this address) — `PersonalSign(bytes prefixed)`
///   for a message or a raw hash, `TypedDataSign(...)` for typed data. A plain 1271 over the bare hash would
///   let one assertion be replayed on every account of the same passkey, and the factory gives an account the
///   same address on every chain. viem's WebAuthn accounts sign any hash, so the client only computes the
///   envelope (viem's `erc7739` hash helpers) before asking the passkey; verifiers (viem `verifyHash`,
///   `verifyMessage`, `verifyTypedData`, ERC-6492 included) call `isValidSignature(hash, signature)` unchanged.
/// - It accepts ERC-721 and ERC-1155 safe transfers (the token holders' receiver hooks).
contract PasskeyAccount is
    Account,
    EIP712,
    ERC7739,
    SignerWebAuthn,
    ERC7821,
    ERC721Holder,
    ERC1155Holder,
    Initializable
{
    /// @dev The implementation behind the clones gets a key nobody can sign for (SignerP256 needs a valid
    /// point at construction): x is the first coordinate on P-256 at or after
    /// keccak256("PasskeyAccount implementation signer") mod p, y its even root.
    bytes32 private constant NO_SIGNER_X = 0x2183bcd1781d8602f410326c72095e06d44ad8fca2e2cc3d20fa851e27cce2bc;
    bytes32 private constant NO_SIGNER_Y = 0xad578b2f6baf25578a9b32cff8291a1f16a93169b234bb3709043055a83da2ec;

    constructor() EIP712("PasskeyAccount", "1") SignerP256(NO_SIGNER_X, NO_SIGNER_Y) {
        _disableInitializers();
    }

    /// @notice Sets the passkey of a fresh clone; the factory calls it in the transaction that creates it.
    function initialize(bytes32 qx, bytes32 qy) external initializer {
        _setSigner(qx, qy);
    }

    /// @inheritdoc Account
    function entryPoint() public pure override returns (IEntryPoint) {
        return ERC4337Utils.ENTRYPOINT_V07;
    }

    /// @dev The EntryPoint executes validated UserOperations; the account may call itself (nested batches).
    function _erc7821AuthorizedExecutor(
        address caller,
        bytes32 mode,
        bytes calldata executionData
    ) internal view override returns (bool) {
        return caller == address(entryPoint()) || super._erc7821AuthorizedExecutor(caller, mode, executionData);
    }

    function _rawSignatureValidation(
        bytes32 hash,
        bytes calldata signature
    ) internal view override(AbstractSigner, SignerWebAuthn) returns (bool) {
        return super._rawSignatureValidation(hash, signature);
    }
}
