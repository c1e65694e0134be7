// SPDX-License-Identifier: MIT
pragma solidity ^0.8.28;

// LocalIdentityHub: the stand-in for Self's Identity Verification Hub V2 on local and test chains.
//
// THIS IS THE ONE SIMULATED PART OF THE SYSTEM. Hub V2 checks a Groth16 zero-knowledge proof that a real
// identity document (passport, EU id card, Aadhaar) discloses the given attributes. This hub instead checks an
// ECDSA signature by a trusted "document attester" over the same disclosure. Everything else follows Hub V2:
// the byte layouts of `verify`, the content-addressed config registry, the CustomVerifier checks (olderThan,
// OFAC, forbidden countries), the current-date window, the destination-chain rule and the callback
// `onVerificationSuccess(abi.encode(GenericDiscloseOutputV2), userDefinedData)` into the calling root.
// Mock documents are accepted everywhere except on Celo mainnet's chain id (42220).
//
// Proof format (the bytes after the 32-byte attestationId in the root's proofPayload):
//   abi.encode(bool mockDocument, uint256 currentDate, GenericDiscloseOutputV2 output, bytes signature)
//   - currentDate: unix seconds of the attestation; must fall within +-1 day of the block's day.
//   - output: the disclosure; its attestationId and userIdentifier are ignored and overwritten by the hub
//     with the header's attestationId and the context's userIdentifier (as Hub V2 takes them from public
//     signals bound to the header and context).
//   - signature: 65-byte ECDSA (r || s || v) by a trusted attester over the EIP-712 digest of
//       DocumentAttestation(uint256 scope,bytes32 attestationId,bytes32 userContextHash,bytes32 outputHash,
//                           bool mockDocument,uint256 currentDate)
//     in the domain {name: "LocalIdentityHub", version: "1", chainId, verifyingContract: this hub}, where
//       userContextHash = sha256(userContextData without the leading configId)
//                       = sha256(destChainId || userIdentifier || userDefinedData)  (what Hub V2 binds through
//                         the proof's user-identifier public signal, minus its ripemd160 step)
//       outputHash      = keccak256(abi.encode(output)) after that overwrite of attestationId and
//                         userIdentifier. After the checks the hub sets output.olderThan to the config's
//                         threshold (as Hub V2 does) before delivering it.

import {Ownable} from "@openzeppelin/contracts/access/Ownable.sol";
import {ECDSA} from "@openzeppelin/contracts/utils/cryptography/ECDSA.sol";
import {EIP712} from "@openzeppelin/contracts/utils/cryptography/EIP712.sol";
import {SelfStructs} from "./interfaces/SelfStructs.sol";
import {IIdentityVerificationHubV2} from "./interfaces/IIdentityVerificationHubV2.sol";
import {ISelfVerificationRoot} from "./interfaces/ISelfVerificationRoot.sol";

contract LocalIdentityHub is IIdentityVerificationHubV2, Ownable, EIP712 {
    /// @dev Celo mainnet: the only chain id on which mock documents are refused.
    uint256 public constant CELO_MAINNET_CHAIN_ID = 42220;
    /// @dev The header version byte the verification root writes (Hub V2 contract version).
    uint8 public constant CONTRACT_VERSION = 2;

    bytes32 public constant E_PASSPORT = bytes32(uint256(1));
    bytes32 public constant EU_ID_CARD = bytes32(uint256(2));
    bytes32 public constant AADHAAR = bytes32(uint256(3));

    bytes32 public constant DOCUMENT_ATTESTATION_TYPEHASH = keccak256(
        "DocumentAttestation(uint256 scope,bytes32 attestationId,bytes32 userContextHash,bytes32 outputHash,bool mockDocument,uint256 currentDate)"
    );

    mapping(bytes32 configId => SelfStructs.VerificationConfigV2) private _configs;
    mapping(bytes32 configId => bool) private _configExists;
    mapping(address attester => bool) public isTrustedAttester;

    event AttesterSet(address indexed attester, bool trusted);
    event VerificationConfigV2Set(bytes32 indexed configId, SelfStructs.VerificationConfigV2 config);
    /// @notice One successful verification: which root, which config, whose document (nullifier), for whom.
    event DisclosureVerified(
        address indexed root,
        bytes32 indexed configId,
        bytes32 indexed attestationId,
        uint256 scope,
        uint256 nullifier,
        uint256 userIdentifier,
        address attester,
        bool mockDocument
    );

    error InputTooShort();
    error UserContextDataTooShort();
    error UnsupportedContractVersion(uint8 version);
    error ConfigNotSet();
    error UnsupportedAttestationId(bytes32 attestationId);
    error MockDocumentsNotAccepted();
    error CurrentDateNotInValidRange(uint256 currentDate, uint256 blockTimestamp);
    error InvalidAttesterSignature();
    error InvalidOlderThan();
    error InvalidOfac();
    error InvalidForbiddenCountries();
    error CrossChainIsNotSupportedYet();

    /// @dev The decoded header and context of one verify call (kept in memory to spare the stack).
    struct Request {
        bytes32 attestationId;
        uint256 scope;
        bytes32 configId;
        uint256 destChainId;
        uint256 userIdentifier;
        bytes32 userContextHash;
    }

    constructor(address initialAttester) Ownable(msg.sender) EIP712("LocalIdentityHub", "1") {
        if (initialAttester != address(0)) _setAttester(initialAttester, true);
    }

    // ----- attesters -----

    function setAttester(address attester, bool trusted) external onlyOwner {
        _setAttester(attester, trusted);
    }

    function _setAttester(address attester, bool trusted) private {
        isTrustedAttester[attester] = trusted;
        emit AttesterSet(attester, trusted);
    }

    /// @notice Mock documents verify on every chain except Celo mainnet.
    function acceptsMockDocuments() public view returns (bool) {
        return block.chainid != CELO_MAINNET_CHAIN_ID;
    }

    // ----- config registry (content-addressed, open to anyone as on Hub V2) -----

    function setVerificationConfigV2(SelfStructs.VerificationConfigV2 memory config)
        external
        override
        returns (bytes32 configId)
    {
        configId = generateConfigId(config);
        _configs[configId] = config;
        _configExists[configId] = true;
        emit VerificationConfigV2Set(configId, config);
    }

    function verificationConfigV2Exists(bytes32 configId) external view override returns (bool) {
        return _configExists[configId];
    }

    function getVerificationConfigV2(bytes32 configId) external view returns (SelfStructs.VerificationConfigV2 memory) {
        return _configs[configId];
    }

    function generateConfigId(SelfStructs.VerificationConfigV2 memory config) public pure returns (bytes32) {
        return sha256(abi.encode(config));
    }

    /// @notice The EIP-712 digest an attester signs; exposed so off-chain code can check its own encoding.
    function attestationDigest(
        uint256 scope,
        bytes32 attestationId,
        bytes32 userContextHash,
        bytes32 outputHash,
        bool mockDocument,
        uint256 currentDate
    ) public view returns (bytes32) {
        return _hashTypedDataV4(
            keccak256(
                abi.encode(
                    DOCUMENT_ATTESTATION_TYPEHASH,
                    scope,
                    attestationId,
                    userContextHash,
                    outputHash,
                    mockDocument,
                    currentDate
                )
            )
        );
    }

    // ----- verification -----

    /// @param baseVerificationInput contractVersion (1) || 31 zero bytes || scope (32) || attestationId (32) || proof
    /// @param userContextData configId (32) || destChainId (32) || userIdentifier (32) || userDefinedData
    function verify(bytes calldata baseVerificationInput, bytes calldata userContextData) external override {
        if (baseVerificationInput.length < 97) revert InputTooShort();
        if (userContextData.length < 96) revert UserContextDataTooShort();
        uint8 version = uint8(baseVerificationInput[0]);
        if (version != CONTRACT_VERSION) revert UnsupportedContractVersion(version);

        Request memory req = Request({
            scope: uint256(bytes32(baseVerificationInput[32:64])),
            attestationId: bytes32(baseVerificationInput[64:96]),
            configId: bytes32(userContextData[0:32]),
            destChainId: uint256(bytes32(userContextData[32:64])),
            userIdentifier: uint256(bytes32(userContextData[64:96])),
            userContextHash: sha256(userContextData[32:])
        });
        if (!_configExists[req.configId]) revert ConfigNotSet();
        if (req.attestationId != E_PASSPORT && req.attestationId != EU_ID_CARD && req.attestationId != AADHAAR) {
            revert UnsupportedAttestationId(req.attestationId);
        }

        (bool mockDocument, uint256 currentDate, SelfStructs.GenericDiscloseOutputV2 memory output, bytes memory sig) =
            abi.decode(baseVerificationInput[96:], (bool, uint256, SelfStructs.GenericDiscloseOutputV2, bytes));
        if (mockDocument && !acceptsMockDocuments()) revert MockDocumentsNotAccepted();
        _checkCurrentDate(currentDate);

        // The header and context are authoritative for these two, as the public signals are on Hub V2.
        output.attestationId = req.attestationId;
        output.userIdentifier = req.userIdentifier;

        address attester = _checkAttestation(req, output, mockDocument, currentDate, sig);
        SelfStructs.VerificationConfigV2 storage config = _configs[req.configId];
        _checkDisclosure(config, output);
        // Like Hub V2, report the config's threshold rather than the age the document proved.
        output.olderThan = config.olderThan;
        if (req.destChainId != block.chainid) revert CrossChainIsNotSupportedYet();

        emit DisclosureVerified(
            msg.sender,
            req.configId,
            req.attestationId,
            req.scope,
            output.nullifier,
            output.userIdentifier,
            attester,
            mockDocument
        );
        ISelfVerificationRoot(msg.sender).onVerificationSuccess(abi.encode(output), userContextData[96:]);
    }

    /// @dev Hub V2's window: the attested day must be the block's day, the day before or the day after.
    function _checkCurrentDate(uint256 currentDate) private view {
        uint256 attestedDay = currentDate / 1 days;
        uint256 blockDay = block.timestamp / 1 days;
        if (attestedDay + 1 < blockDay || attestedDay > blockDay + 1) {
            revert CurrentDateNotInValidRange(currentDate, block.timestamp);
        }
    }

    /// @dev Replaces the Groth16 check: a trusted attester vouches for exactly this disclosure, for this
    /// scope, this user context and this hub on this chain.
    function _checkAttestation(
        Request memory req,
        SelfStructs.GenericDiscloseOutputV2 memory output,
        bool mockDocument,
        uint256 currentDate,
        bytes memory sig
    ) private view returns (address signer) {
        bytes32 digest = attestationDigest(
            req.scope, req.attestationId, req.userContextHash, keccak256(abi.encode(output)), mockDocument, currentDate
        );
        ECDSA.RecoverError err;
        (signer, err,) = ECDSA.tryRecover(digest, sig);
        if (err != ECDSA.RecoverError.NoError || !isTrustedAttester[signer]) revert InvalidAttesterSignature();
    }

    /// @dev Hub V2's CustomVerifier rules for the disclosure against the selected config.
    function _checkDisclosure(
        SelfStructs.VerificationConfigV2 storage config,
        SelfStructs.GenericDiscloseOutputV2 memory output
    ) private view {
        if (config.olderThanEnabled && output.olderThan < config.olderThan) revert InvalidOlderThan();
        // ofac = [documentNoCleared, nameDobCleared, nameYobCleared]; only passports carry the document-number
        // check. Hub V2 gates an EU id card's two checks by ofacEnabled[0..1] and Aadhaar's by ofacEnabled[1..2].
        bool[3] memory cleared = output.ofac;
        bool[3] memory enabled = config.ofacEnabled;
        if (output.attestationId == E_PASSPORT) {
            if ((enabled[0] && !cleared[0]) || (enabled[1] && !cleared[1]) || (enabled[2] && !cleared[2])) {
                revert InvalidOfac();
            }
        } else {
            (bool nameDob, bool nameYob) =
                output.attestationId == EU_ID_CARD ? (enabled[0], enabled[1]) : (enabled[1], enabled[2]);
            if ((nameDob && !cleared[1]) || (nameYob && !cleared[2])) revert InvalidOfac();
        }
        if (config.forbiddenCountriesEnabled) {
            for (uint256 i = 0; i < 4; i++) {
                if (output.forbiddenCountriesListPacked[i] != config.forbiddenCountriesListPacked[i]) {
                    revert InvalidForbiddenCountries();
                }
            }
        }
    }
}
