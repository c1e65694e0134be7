// SPDX-License-Identifier: MIT
pragma solidity ^0.8.28;

/// @notice Pluggable RFC 8032 Ed25519 signature check used by the registry's "E" action.
interface IEd25519Verifier {
    /// @param publicKey the standard 32-byte compressed public key
    /// @param r the first 32 bytes of the 64-byte signature (encoded point R)
    /// @param s the last 32 bytes of the 64-byte signature (little-endian scalar S, as encoded)
    /// @param message the signed message (for registration: the 32 raw bytes of the challenge hash)
    function verify(bytes32 publicKey, bytes32 r, bytes32 s, bytes calldata message) external view returns (bool);
}
