// SPDX-License-Identifier: MIT
pragma solidity ^0.8.28;

import {AccessControl} from "@openzeppelin/contracts/access/AccessControl.sol";
import {IERC165} from "@openzeppelin/contracts/utils/introspection/IERC165.sol";
import {ERC721} from "@openzeppelin/contracts/token/ERC721/ERC721.sol";
import {ECDSA} from "@openzeppelin/contracts/utils/cryptography/ECDSA.sol";
import {EIP712} from "@openzeppelin/contracts/utils/cryptography/EIP712.sol";
import {MessageHashUtils} from "@openzeppelin/contracts/utils/cryptography/MessageHashUtils.sol";

import {IEd25519Verifier} from "./interfaces/IEd25519Verifier.sol";
import {IERC8004} from "./interfaces/IERC8004.sol";
import {IERC8004ProofOfHuman} from "./interfaces/IERC8004ProofOfHuman.sol";
import {IHumanProofProvider} from "./interfaces/IHumanProofProvider.sol";
import {IIdentityVerificationHubV2} from "./interfaces/IIdentityVerificationHubV2.sol";
import {ISelfVerificationRoot} from "./interfaces/ISelfVerificationRoot.sol";
import {SelfStructs} from "./interfaces/SelfStructs.sol";
import {DocumentDate} from "./lib/DocumentDate.sol";
import {HexParser} from "./lib/HexParser.sol";

/// @title AgentRegistry
/// @notice Soulbound ERC-721 registry of AI agents, each bound to a human through a proof-of-human check.
/// Self Hub V2 calls back `onVerificationSuccess` after verifying a passport/ID proof; the first byte of the
/// userDefinedData selects the action (register, deregister, refresh, identify). ERC-8004 compatible.
/// @dev Selector-compatible with the SelfAgentRegistry deployed on Celo, but a plain (non-upgradeable) contract.
contract AgentRegistry is ERC721, AccessControl, EIP712, IERC8004ProofOfHuman, ISelfVerificationRoot {
    // ------------------------------------------------------------------ types and constants

    /// @notice Disclosed document fields, copied verbatim from the hub output at registration / refresh.
    struct AgentCredentials {
        string issuingState;
        string[] name;
        string idNumber;
        string nationality;
        string dateOfBirth;
        string gender;
        string expiryDate;
        uint256 olderThan;
        bool[3] ofac;
    }

    bytes32 public constant SECURITY_ROLE = keccak256("SECURITY_ROLE");
    bytes32 public constant OPERATIONS_ROLE = keccak256("OPERATIONS_ROLE");
    bytes32 public constant AGENT_WALLET_SET_TYPEHASH =
        keccak256("AgentWalletSet(uint256 agentId,address newWallet,address owner,uint256 nonce,uint256 deadline)");
    uint8 public constant NUM_CONFIGS = 6;

    /// @dev The BN254 scalar field: the Self circuits take the scope as a field element.
    uint256 private constant SNARK_SCALAR_FIELD =
        21888242871839275222246405745257275088548364400416034343698204186575808495617;
    string private constant AGENT_WALLET_KEY = "agentWallet";
    bytes32 private constant AGENT_WALLET_KEY_HASH = keccak256("agentWallet");

    bytes private constant ECDSA_CHALLENGE_PREFIX = "self-agent-id:register:";
    bytes private constant ED25519_CHALLENGE_PREFIX = "self-agent-id:register-ed25519:";

    // userData action bytes (ASCII)
    bytes1 private constant ACTION_REGISTER = "R";
    bytes1 private constant ACTION_DEREGISTER = "D";
    bytes1 private constant ACTION_REGISTER_ADVANCED = "K";
    bytes1 private constant ACTION_DEREGISTER_ADVANCED = "X";
    bytes1 private constant ACTION_REGISTER_WALLET_FREE = "W";
    bytes1 private constant ACTION_REGISTER_ED25519 = "E";
    bytes1 private constant ACTION_REFRESH = "F";
    bytes1 private constant ACTION_IDENTIFY = "I";

    // Hex characters after the action and config bytes (trailing bytes are ignored). The decoded payloads are
    // read at fixed byte offsets: K = agent 20 | r 32 | s 32 | v 1; X = agent 20;
    // W = agent 20 | guardian 20 | r 32 | s 32 | v 1;
    // E = pubkey 32 | sigR 32 | sigS 32 | extKpub[0..3] 128 | extKpub[4] 32 | guardian 20; F = agentId 32.
    uint256 private constant ADVANCED_REGISTER_HEX = 170;
    uint256 private constant ADVANCED_DEREGISTER_HEX = 40;
    uint256 private constant WALLET_FREE_REGISTER_HEX = 210;
    uint256 private constant ED25519_REGISTER_HEX = 552;
    uint256 private constant REFRESH_HEX = 64;
    /// @dev F as deployed: action, config, then the agentId as 32 raw big-endian bytes.
    uint256 private constant REFRESH_BINARY_LENGTH = 34;

    // ------------------------------------------------------------------ events and errors

    event GuardianSet(uint256 indexed agentId, address indexed guardian);
    event AgentMetadataUpdated(uint256 indexed agentId);
    event AgentCredentialsStored(uint256 indexed agentId);
    event Ed25519VerifierUpdated(address indexed verifier);

    error TransferNotAllowed();
    error ProofRequired();
    error AgentAlreadyRegistered(bytes32 agentKey);
    error AgentNotRegistered(bytes32 agentKey);
    error NotAgentOwner(uint256 expected, uint256 actual);
    error InvalidAction(uint8 action);
    error InvalidUserData();
    error ProviderNotApproved(address provider);
    error ProviderAlreadyApproved(address provider);
    error AgentHasNoHumanProof(uint256 agentId);
    error InvalidAgentSignature();
    error NotGuardian(uint256 agentId);
    error NotNftOwner(uint256 agentId);
    error NoGuardianSet(uint256 agentId);
    error TooManyAgentsForHuman(uint256 nullifier, uint256 max);
    error InvalidConfigIndex(uint8 raw);
    error VerificationFailed();
    error ProviderDataTooShort();
    error NotSameHuman();
    error ReservedMetadataKey();
    error DeadlineExpired();
    error InvalidWalletSignature();
    error InvalidMaxProofAge();
    error ArrayLengthMismatch(uint256 keysLength, uint256 valuesLength);
    error UnauthorizedCaller();
    error InvalidDataFormat();
    error Ed25519VerifierNotConfigured();
    error SelfProofProviderNotSet();

    // ------------------------------------------------------------------ state

    IIdentityVerificationHubV2 private immutable _hub;
    /// @notice Scope the hub binds proofs (and therefore nullifiers) to; unique per registry deployment.
    uint256 public immutable scope;

    /// @notice Hub config IDs; index = (ofac ? 3 : 0) + (minimumAge 0/18/21 -> 0/1/2).
    bytes32[6] public configIds;

    mapping(uint256 agentId => uint256) public agentNullifier;
    mapping(uint256 agentId => address) public agentProofProvider;
    mapping(uint256 agentId => bool) public agentHasHumanProof;
    /// @notice Block number of the mint; 0 once burned.
    mapping(uint256 agentId => uint256) public agentRegisteredAt;
    mapping(uint256 nullifier => uint256) public activeAgentCount;
    mapping(bytes32 agentKey => uint256) public agentKeyToAgentId;
    mapping(uint256 agentId => bytes32) public agentIdToAgentKey;
    mapping(address provider => bool) public approvedProviders;
    address public selfProofProvider;
    mapping(uint256 agentId => address) public agentGuardian;
    /// @notice Free-form agent card (JSON), owner-managed.
    mapping(uint256 agentId => string) public agentMetadata;
    /// @notice ECDSA registration-challenge nonce per agent address; survives deregistration to stop replays.
    mapping(address agent => uint256) public agentNonces;
    /// @notice Ed25519 registration-challenge nonce per raw public key.
    mapping(bytes32 pubkey => uint256) public ed25519Nonce;
    /// @notice Raw Ed25519 key behind an agent's derived owner address, so D/X can find Ed25519 agents.
    mapping(address derived => bytes32) public ed25519KeyForAddress;
    mapping(uint256 agentId => uint256) public proofExpiresAt;
    mapping(uint256 agentId => uint256) public walletSetNonces;
    /// @notice Hub config the agent registered under (0 for external-provider agents); refresh must match it.
    mapping(uint256 agentId => bytes32) public agentConfigId;

    uint256 public maxAgentsPerHuman = 1;
    uint256 public maxProofAge = 365 days;
    bool public requireHumanProof = true;
    /// @notice Verifier for the "E" action; address(0) disables Ed25519 registration.
    address public ed25519Verifier;

    mapping(uint256 agentId => string) private _agentURIs;
    mapping(uint256 agentId => mapping(string key => bytes)) private _metadata;
    mapping(uint256 agentId => AgentCredentials) private _credentials;
    mapping(uint256 nullifier => uint256[]) private _agentsByNullifier;
    mapping(uint256 agentId => uint256) private _indexInNullifierList;
    uint256 private _nextAgentId = 1;

    // ------------------------------------------------------------------ construction

    constructor(address hubV2_, address initialOwner)
        ERC721("Agent Identity", "AGENTID")
        EIP712("AgentRegistry", "1")
    {
        _hub = IIdentityVerificationHubV2(hubV2_);
        // Poseidon (used by the deployed registry) is not available on local chains; keccak keeps the scope
        // unique per deployment and inside the field.
        scope = uint256(keccak256(abi.encodePacked("self-agent-id", address(this)))) % SNARK_SCALAR_FIELD;

        _setRoleAdmin(SECURITY_ROLE, SECURITY_ROLE);
        _setRoleAdmin(OPERATIONS_ROLE, SECURITY_ROLE);
        _grantRole(SECURITY_ROLE, initialOwner);
        _grantRole(OPERATIONS_ROLE, initialOwner);

        uint256[4] memory noCountries;
        for (uint256 i = 0; i < NUM_CONFIGS; ++i) {
            bool ofac = i >= 3;
            uint256 olderThan = [uint256(0), 18, 21][i % 3];
            configIds[i] = _hub.setVerificationConfigV2(
                SelfStructs.VerificationConfigV2({
                    olderThanEnabled: olderThan > 0,
                    olderThan: olderThan,
                    forbiddenCountriesEnabled: false,
                    forbiddenCountriesListPacked: noCountries,
                    ofacEnabled: [ofac, ofac, ofac]
                })
            );
        }
    }

    // ------------------------------------------------------------------ Self verification root

    /// @notice Relayer entry point. proofPayload = attestationId (32) || proof;
    /// userContextData = destChainId (32) || userIdentifier (32) || userDefinedData.
    function verifySelfProof(bytes calldata proofPayload, bytes calldata userContextData) external {
        if (proofPayload.length < 32 || userContextData.length < 64) revert InvalidDataFormat();
        bytes32 configId = getConfigId(
            bytes32(userContextData[0:32]), bytes32(userContextData[32:64]), userContextData[64:]
        );
        _hub.verify(
            abi.encodePacked(uint8(2), bytes31(0), scope, proofPayload), abi.encodePacked(configId, userContextData)
        );
    }

    /// @notice Hub callback after a successful proof; `userData` is the userDefinedData, passed through.
    function onVerificationSuccess(bytes memory output, bytes memory userData) external {
        if (msg.sender != address(_hub)) revert UnauthorizedCaller();
        _handleVerifiedProof(abi.decode(output, (SelfStructs.GenericDiscloseOutputV2)), userData);
    }

    /// @notice Hub config selected by userDefinedData[1]: ASCII '0'..'5' or binary 0..5; default 0 when absent.
    function getConfigId(bytes32, bytes32, bytes memory userDefinedData) public view returns (bytes32) {
        if (userDefinedData.length < 2) return configIds[0];
        uint8 raw = uint8(userDefinedData[1]);
        if (raw >= 0x30 && raw <= 0x35) return configIds[raw - 0x30];
        if (raw < NUM_CONFIGS) return configIds[raw];
        revert InvalidConfigIndex(raw);
    }

    /// @notice The Hub V2 this registry trusts for callbacks.
    function hubV2() external view returns (address) {
        return address(_hub);
    }

    // ------------------------------------------------------------------ hub actions

    function _handleVerifiedProof(SelfStructs.GenericDiscloseOutputV2 memory out, bytes memory userData) private {
        if (userData.length == 0) revert InvalidUserData();
        // Resolved up front so that an invalid config digit rejects every action.
        bytes32 configId = getConfigId(bytes32(0), bytes32(0), userData);
        address human = address(uint160(out.userIdentifier));
        bytes1 action = userData[0];

        if (action == ACTION_REGISTER) {
            _registerFromHub(out, configId, _addressKey(human), human, address(0));
        } else if (action == ACTION_DEREGISTER) {
            _deregisterFromHub(human, out.nullifier);
        } else if (action == ACTION_REGISTER_ADVANCED) {
            bytes memory payload = _hexPayload(userData, ADVANCED_REGISTER_HEX);
            address agent = _addressAt(payload, 0);
            _consumeEcdsaChallenge(payload, 20, agent, human);
            _registerFromHub(out, configId, _addressKey(agent), human, address(0));
        } else if (action == ACTION_DEREGISTER_ADVANCED) {
            _deregisterFromHub(_addressAt(_hexPayload(userData, ADVANCED_DEREGISTER_HEX), 0), out.nullifier);
        } else if (action == ACTION_REGISTER_WALLET_FREE) {
            bytes memory payload = _hexPayload(userData, WALLET_FREE_REGISTER_HEX);
            address agent = _addressAt(payload, 0);
            _consumeEcdsaChallenge(payload, 40, agent, human);
            _registerFromHub(out, configId, _addressKey(agent), agent, _addressAt(payload, 20));
        } else if (action == ACTION_REGISTER_ED25519) {
            _registerEd25519(out, configId, _hexPayload(userData, ED25519_REGISTER_HEX), human);
        } else if (action == ACTION_REFRESH) {
            _refresh(_refreshTarget(userData), out, configId);
        } else if (action == ACTION_IDENTIFY) {
            emit NullifierIdentified(out.nullifier, _agentsByNullifier[out.nullifier].length);
        } else {
            revert InvalidAction(uint8(action));
        }
    }

    /// @dev Checks the agent's EIP-191 signature over the registration challenge (r 32 | s 32 | v 1 at
    /// `sigOffset` of the decoded payload) and consumes its nonce. The challenge binds human, chain, registry and
    /// nonce, so it cannot be replayed.
    function _consumeEcdsaChallenge(bytes memory payload, uint256 sigOffset, address agent, address human) private {
        bytes32 r = _wordAt(payload, sigOffset);
        bytes32 s = _wordAt(payload, sigOffset + 32);
        uint8 v = uint8(payload[sigOffset + 64]);
        uint256 nonce = agentNonces[agent];
        bytes32 challenge =
            keccak256(abi.encodePacked(ECDSA_CHALLENGE_PREFIX, human, block.chainid, address(this), nonce));
        if (ECDSA.recover(MessageHashUtils.toEthSignedMessageHash(challenge), v, r, s) != agent) {
            revert InvalidAgentSignature();
        }
        agentNonces[agent] = nonce + 1;
    }

    /// @dev "E": the agent key is the raw Ed25519 public key; the NFT goes to the address derived from it (low 20
    /// bytes of keccak256(pubkey)), which nobody holds a key for, hence the optional guardian.
    function _registerEd25519(
        SelfStructs.GenericDiscloseOutputV2 memory out,
        bytes32 configId,
        bytes memory payload,
        address human
    ) private {
        bytes32 pubkey = _wordAt(payload, 0);
        bytes32 sigR = _wordAt(payload, 32);
        bytes32 sigS = _wordAt(payload, 64);
        // extKpub[0..3] (bytes 96..224) are curve points precomputed for the deployed on-chain verifier; the
        // pluggable verifier needs only the key, so they are just hex-validated.
        bytes32 extKeyCompressed = _wordAt(payload, 224);
        address guardian = _addressAt(payload, 256);
        // The deployed registry verified against extKpub[4] but registered `pubkey`; bind them.
        if (pubkey == 0 || extKeyCompressed != pubkey) revert InvalidUserData();

        address verifier = ed25519Verifier;
        if (verifier == address(0)) revert Ed25519VerifierNotConfigured();
        uint256 nonce = ed25519Nonce[pubkey];
        bytes32 challenge =
            keccak256(abi.encodePacked(ED25519_CHALLENGE_PREFIX, human, block.chainid, address(this), nonce));
        if (!IEd25519Verifier(verifier).verify(pubkey, sigR, sigS, abi.encodePacked(challenge))) {
            revert InvalidAgentSignature();
        }
        ed25519Nonce[pubkey] = nonce + 1;

        address owner = address(uint160(uint256(keccak256(abi.encodePacked(pubkey)))));
        ed25519KeyForAddress[owner] = pubkey;
        _registerFromHub(out, configId, pubkey, owner, guardian);
    }

    /// @dev Mint through the Self provider, then store credentials, the document-capped expiry and the guardian.
    function _registerFromHub(
        SelfStructs.GenericDiscloseOutputV2 memory out,
        bytes32 configId,
        bytes32 agentKey,
        address to,
        address guardian
    ) private {
        address provider = selfProofProvider;
        if (provider == address(0)) revert SelfProofProviderNotSet();
        uint256 agentId = _mintAgent(out.nullifier, agentKey, provider, to, "", configId);
        _storeCredentials(agentId, out);
        _applyProofExpiry(agentId, out.expiryDate);
        if (guardian != address(0)) {
            agentGuardian[agentId] = guardian;
            emit GuardianSet(agentId, guardian);
        }
    }

    /// @dev "D"/"X": the proof's nullifier must be the one the agent was registered with.
    function _deregisterFromHub(address agentAddress, uint256 nullifier) private {
        uint256 agentId = _agentIdForAddress(agentAddress);
        uint256 stored = agentNullifier[agentId];
        if (stored != nullifier) revert NotAgentOwner(stored, nullifier);
        _revokeAgent(agentId);
    }

    /// @dev An address names either a padded-address agent key or, failing that, the Ed25519 agent it was
    /// derived from (those agents have no other hub deregistration path).
    function _agentIdForAddress(address agentAddress) private view returns (uint256 agentId) {
        bytes32 key = _addressKey(agentAddress);
        agentId = agentKeyToAgentId[key];
        if (agentId != 0) return agentId;
        bytes32 pubkey = ed25519KeyForAddress[agentAddress];
        if (pubkey != 0) agentId = agentKeyToAgentId[pubkey];
        if (agentId == 0) revert AgentNotRegistered(key);
    }

    /// @dev "F" carries the agentId as 64 hex chars (survives UTF-8 string transport) or, as deployed, as 32 raw
    /// big-endian bytes.
    function _refreshTarget(bytes memory data) private pure returns (uint256) {
        (bool isHex, bytes memory decoded) = HexParser.tryDecode(data, 2, REFRESH_HEX);
        if (isHex) return uint256(_wordAt(decoded, 0));
        if (data.length < REFRESH_BINARY_LENGTH) revert InvalidUserData();
        return uint256(_wordAt(data, 2));
    }

    /// @dev Re-proves an existing agent in place under the same config (no downgrade), same human.
    function _refresh(uint256 agentId, SelfStructs.GenericDiscloseOutputV2 memory out, bytes32 configId) private {
        if (!agentHasHumanProof[agentId]) revert AgentHasNoHumanProof(agentId);
        bytes32 stored = agentConfigId[agentId];
        if (stored == 0) revert RefreshNotSupported(agentId);
        if (stored != configId) revert ConfigMismatch(stored, configId);
        uint256 nullifier = agentNullifier[agentId];
        if (nullifier != out.nullifier) revert NotAgentOwner(nullifier, out.nullifier);

        _storeCredentials(agentId, out);
        uint256 expiresAt = _applyProofExpiry(agentId, out.expiryDate);
        emit HumanProofRefreshed(agentId, nullifier, expiresAt, configId);
    }

    function _storeCredentials(uint256 agentId, SelfStructs.GenericDiscloseOutputV2 memory out) private {
        AgentCredentials storage c = _credentials[agentId];
        c.issuingState = out.issuingState;
        c.name = out.name;
        c.idNumber = out.idNumber;
        c.nationality = out.nationality;
        c.dateOfBirth = out.dateOfBirth;
        c.gender = out.gender;
        c.expiryDate = out.expiryDate;
        c.olderThan = out.olderThan;
        c.ofac = out.ofac;
        emit AgentCredentialsStored(agentId);
    }

    /// @dev A proof is fresh for maxProofAge, or until the document expires if that comes first.
    function _applyProofExpiry(uint256 agentId, string memory documentExpiry) private returns (uint256 expiresAt) {
        expiresAt = block.timestamp + maxProofAge;
        uint256 documentExpiresAt = DocumentDate.toTimestamp(documentExpiry);
        if (documentExpiresAt != 0 && documentExpiresAt < expiresAt) expiresAt = documentExpiresAt;
        proofExpiresAt[agentId] = expiresAt;
    }

    // ------------------------------------------------------------------ shared mint / revoke

    function _mintAgent(
        uint256 nullifier,
        bytes32 agentKey,
        address provider,
        address to,
        string memory agentURI,
        bytes32 configId
    ) private returns (uint256 agentId) {
        if (agentKeyToAgentId[agentKey] != 0) revert AgentAlreadyRegistered(agentKey);
        uint256 max = maxAgentsPerHuman;
        if (max > 0 && activeAgentCount[nullifier] >= max) revert TooManyAgentsForHuman(nullifier, max);

        agentId = _nextAgentId++;
        _mint(to, agentId);

        agentNullifier[agentId] = nullifier;
        agentProofProvider[agentId] = provider;
        agentHasHumanProof[agentId] = true;
        agentRegisteredAt[agentId] = block.number;
        activeAgentCount[nullifier]++;
        _indexInNullifierList[agentId] = _agentsByNullifier[nullifier].length;
        _agentsByNullifier[nullifier].push(agentId);
        agentKeyToAgentId[agentKey] = agentId;
        agentIdToAgentKey[agentId] = agentKey;
        agentConfigId[agentId] = configId;
        if (bytes(agentURI).length > 0) _agentURIs[agentId] = agentURI;
        proofExpiresAt[agentId] = block.timestamp + maxProofAge;

        emit AgentRegisteredWithHumanProof(
            agentId, provider, nullifier, IHumanProofProvider(provider).verificationStrength()
        );
        emit Registered(agentId, agentURI, to);
    }

    /// @dev Burns the agent and clears its per-agent state. Agents minted by the bare register() overloads
    /// carry no proof and were never counted or listed, so only proven agents are unlinked from their human.
    function _revokeAgent(uint256 agentId) private {
        uint256 nullifier = agentNullifier[agentId];
        bytes32 agentKey = agentIdToAgentKey[agentId];
        if (agentKey != 0) {
            delete agentKeyToAgentId[agentKey];
            delete agentIdToAgentKey[agentId];
        }
        if (agentHasHumanProof[agentId]) {
            agentHasHumanProof[agentId] = false;
            if (activeAgentCount[nullifier] > 0) activeAgentCount[nullifier]--;
            _removeFromNullifierList(nullifier, agentId);
        }
        delete agentNullifier[agentId];
        delete agentProofProvider[agentId];
        delete agentRegisteredAt[agentId];
        delete agentGuardian[agentId];
        delete agentMetadata[agentId];
        delete _credentials[agentId];
        delete _agentURIs[agentId];
        delete proofExpiresAt[agentId];
        delete agentConfigId[agentId];

        _burn(agentId);
        emit HumanProofRevoked(agentId, nullifier);
    }

    /// @dev Swap-and-pop; a no-op when the agent is not in the list.
    function _removeFromNullifierList(uint256 nullifier, uint256 agentId) private {
        uint256[] storage list = _agentsByNullifier[nullifier];
        uint256 index = _indexInNullifierList[agentId];
        if (index >= list.length || list[index] != agentId) return;
        uint256 last = list[list.length - 1];
        list[index] = last;
        _indexInNullifierList[last] = index;
        list.pop();
        delete _indexInNullifierList[agentId];
    }

    // ------------------------------------------------------------------ ERC-8004 registration and metadata

    function register() external returns (uint256 agentId) {
        return _registerWithoutProof("");
    }

    function register(string calldata agentURI) external returns (uint256 agentId) {
        return _registerWithoutProof(agentURI);
    }

    function register(string calldata agentURI, string[] calldata metadataKeys, bytes[] calldata metadataValues)
        external
        returns (uint256 agentId)
    {
        if (metadataKeys.length != metadataValues.length) {
            revert ArrayLengthMismatch(metadataKeys.length, metadataValues.length);
        }
        agentId = _registerWithoutProof(agentURI);
        for (uint256 i = 0; i < metadataKeys.length; ++i) {
            _setMetadata(agentId, metadataKeys[i], metadataValues[i]);
        }
    }

    function register(string calldata agentURI, MetadataEntry[] calldata metadata) external returns (uint256 agentId) {
        agentId = _registerWithoutProof(agentURI);
        for (uint256 i = 0; i < metadata.length; ++i) {
            _setMetadata(agentId, metadata[i].metadataKey, metadata[i].metadataValue);
        }
    }

    function setAgentURI(uint256 agentId, string calldata newURI) external {
        _requireNftOwner(agentId);
        _agentURIs[agentId] = newURI;
        emit URIUpdated(agentId, newURI, msg.sender);
    }

    function getMetadata(uint256 agentId, string calldata metadataKey) external view returns (bytes memory) {
        return _metadata[agentId][metadataKey];
    }

    function setMetadata(uint256 agentId, string calldata metadataKey, bytes calldata metadataValue) external {
        _requireNftOwner(agentId);
        _setMetadata(agentId, metadataKey, metadataValue);
    }

    /// @notice Links a payment wallet; the wallet signs the EIP-712 AgentWalletSet message to prove control.
    function setAgentWallet(uint256 agentId, address newWallet, uint256 deadline, bytes calldata signature) external {
        _requireNftOwner(agentId);
        if (block.timestamp > deadline) revert DeadlineExpired();
        uint256 nonce = walletSetNonces[agentId]++;
        bytes32 digest = _hashTypedDataV4(
            keccak256(abi.encode(AGENT_WALLET_SET_TYPEHASH, agentId, newWallet, msg.sender, nonce, deadline))
        );
        if (ECDSA.recover(digest, signature) != newWallet) revert InvalidWalletSignature();
        bytes memory value = abi.encode(newWallet);
        _metadata[agentId][AGENT_WALLET_KEY] = value;
        emit MetadataSet(agentId, AGENT_WALLET_KEY, AGENT_WALLET_KEY, value);
    }

    function getAgentWallet(uint256 agentId) external view returns (address) {
        bytes memory value = _metadata[agentId][AGENT_WALLET_KEY];
        return value.length == 0 ? address(0) : abi.decode(value, (address));
    }

    function unsetAgentWallet(uint256 agentId) external {
        _requireNftOwner(agentId);
        if (_metadata[agentId][AGENT_WALLET_KEY].length == 0) return;
        delete _metadata[agentId][AGENT_WALLET_KEY];
        emit MetadataSet(agentId, AGENT_WALLET_KEY, AGENT_WALLET_KEY, "");
    }

    function domainSeparator() external view returns (bytes32) {
        return _domainSeparatorV4();
    }

    /// @dev Bare ERC-8004 registration: no human behind it, so only allowed when requireHumanProof is off.
    function _registerWithoutProof(string memory agentURI) private returns (uint256 agentId) {
        if (requireHumanProof) revert ProofRequired();
        agentId = _nextAgentId++;
        _mint(msg.sender, agentId);
        if (bytes(agentURI).length > 0) _agentURIs[agentId] = agentURI;
        emit Registered(agentId, agentURI, msg.sender);
    }

    function _setMetadata(uint256 agentId, string calldata key, bytes calldata value) private {
        if (keccak256(bytes(key)) == AGENT_WALLET_KEY_HASH) revert ReservedMetadataKey();
        _metadata[agentId][key] = value;
        emit MetadataSet(agentId, key, key, value);
    }

    // ------------------------------------------------------------------ external proof providers

    /// @notice Registers msg.sender's agent with a proof checked synchronously by an approved provider.
    /// The agent key is the first 32 bytes of providerData.
    function registerWithHumanProof(
        string calldata agentURI,
        address proofProvider,
        bytes calldata proof,
        bytes calldata providerData
    ) external returns (uint256 agentId) {
        if (!approvedProviders[proofProvider]) revert ProviderNotApproved(proofProvider);
        if (providerData.length < 32) revert ProviderDataTooShort();
        (bool verified, uint256 nullifier) = IHumanProofProvider(proofProvider).verifyHumanProof(proof, providerData);
        if (!verified) revert VerificationFailed();
        return _mintAgent(nullifier, bytes32(providerData[0:32]), proofProvider, msg.sender, agentURI, 0);
    }

    /// @notice Anyone holding a fresh proof of the same human (via any approved provider) may revoke the agent.
    function revokeHumanProof(uint256 agentId, address proofProvider, bytes calldata proof, bytes calldata providerData)
        external
    {
        if (!approvedProviders[proofProvider]) revert ProviderNotApproved(proofProvider);
        if (!agentHasHumanProof[agentId]) revert AgentHasNoHumanProof(agentId);
        (bool verified, uint256 nullifier) = IHumanProofProvider(proofProvider).verifyHumanProof(proof, providerData);
        if (!verified) revert VerificationFailed();
        if (nullifier != agentNullifier[agentId]) revert NotSameHuman();
        _revokeAgent(agentId);
    }

    // ------------------------------------------------------------------ proof-of-human views

    function hasHumanProof(uint256 agentId) external view returns (bool) {
        return agentHasHumanProof[agentId];
    }

    function isProofFresh(uint256 agentId) external view returns (bool) {
        return agentHasHumanProof[agentId] && block.timestamp < proofExpiresAt[agentId];
    }

    function getHumanNullifier(uint256 agentId) external view returns (uint256) {
        return agentNullifier[agentId];
    }

    function getProofProvider(uint256 agentId) external view returns (address) {
        return agentProofProvider[agentId];
    }

    function getAgentCountForHuman(uint256 nullifier) external view returns (uint256) {
        return activeAgentCount[nullifier];
    }

    function getAgentsForNullifier(uint256 nullifier) external view returns (uint256[] memory) {
        return _agentsByNullifier[nullifier];
    }

    function getAgentsForNullifier(uint256 nullifier, uint256 offset, uint256 limit)
        external
        view
        returns (uint256[] memory page)
    {
        uint256[] storage list = _agentsByNullifier[nullifier];
        uint256 length = list.length;
        if (offset >= length) return page;
        uint256 count = limit < length - offset ? limit : length - offset;
        page = new uint256[](count);
        for (uint256 i = 0; i < count; ++i) {
            page[i] = list[offset + i];
        }
    }

    function sameHuman(uint256 agentIdA, uint256 agentIdB) external view returns (bool) {
        if (!agentHasHumanProof[agentIdA] || !agentHasHumanProof[agentIdB]) return false;
        uint256 nullifier = agentNullifier[agentIdA];
        return nullifier != 0 && nullifier == agentNullifier[agentIdB];
    }

    function isApprovedProvider(address provider) external view returns (bool) {
        return approvedProviders[provider];
    }

    // ------------------------------------------------------------------ agent views

    /// @notice True while the key has a live agent with a human proof (freshness is not considered).
    function isVerifiedAgent(bytes32 agentKey) external view returns (bool) {
        uint256 agentId = agentKeyToAgentId[agentKey];
        return agentId != 0 && agentHasHumanProof[agentId];
    }

    function getAgentId(bytes32 agentKey) external view returns (uint256) {
        return agentKeyToAgentId[agentKey];
    }

    function getAgentMetadata(uint256 agentId) external view returns (string memory) {
        return agentMetadata[agentId];
    }

    function getAgentCredentials(uint256 agentId) external view returns (AgentCredentials memory) {
        return _credentials[agentId];
    }

    function tokenURI(uint256 tokenId) public view override returns (string memory) {
        _requireOwned(tokenId);
        return _agentURIs[tokenId];
    }

    /// @dev Reverts for a nonexistent token (through ownerOf).
    function isAuthorizedOrOwner(address spender, uint256 agentId) external view returns (bool) {
        return _isAuthorized(ownerOf(agentId), spender, agentId);
    }

    // ------------------------------------------------------------------ agent management

    function guardianRevoke(uint256 agentId) external {
        address guardian = agentGuardian[agentId];
        if (guardian == address(0)) revert NoGuardianSet(agentId);
        if (msg.sender != guardian) revert NotGuardian(agentId);
        _revokeAgent(agentId);
    }

    function selfDeregister(uint256 agentId) external {
        _requireNftOwner(agentId);
        _revokeAgent(agentId);
    }

    function updateAgentMetadata(uint256 agentId, string calldata metadata) external {
        _requireNftOwner(agentId);
        agentMetadata[agentId] = metadata;
        emit AgentMetadataUpdated(agentId);
    }

    // ------------------------------------------------------------------ administration

    function setRequireHumanProof(bool required) external onlyRole(SECURITY_ROLE) {
        requireHumanProof = required;
    }

    /// @notice Switches the provider recorded for hub registrations, un-approving the previous one.
    function setSelfProofProvider(address provider) external onlyRole(SECURITY_ROLE) {
        address previous = selfProofProvider;
        if (previous != address(0) && approvedProviders[previous]) {
            approvedProviders[previous] = false;
            emit ProofProviderRemoved(previous);
        }
        selfProofProvider = provider;
        if (!approvedProviders[provider]) _approveProvider(provider);
    }

    function addProofProvider(address provider) external onlyRole(SECURITY_ROLE) {
        if (approvedProviders[provider]) revert ProviderAlreadyApproved(provider);
        _approveProvider(provider);
    }

    function removeProofProvider(address provider) external onlyRole(SECURITY_ROLE) {
        if (!approvedProviders[provider]) revert ProviderNotApproved(provider);
        approvedProviders[provider] = false;
        emit ProofProviderRemoved(provider);
    }

    function setEd25519Verifier(address verifier) external onlyRole(SECURITY_ROLE) {
        ed25519Verifier = verifier;
        emit Ed25519VerifierUpdated(verifier);
    }

    /// @param max agents one human may hold at once; 0 = unlimited
    function setMaxAgentsPerHuman(uint256 max) external onlyRole(OPERATIONS_ROLE) {
        maxAgentsPerHuman = max;
        emit MaxAgentsPerHumanUpdated(max);
    }

    /// @dev Applies to proofs registered or refreshed from now on; existing expiries are kept.
    function setMaxProofAge(uint256 maxAge) external onlyRole(OPERATIONS_ROLE) {
        if (maxAge == 0) revert InvalidMaxProofAge();
        maxProofAge = maxAge;
        emit MaxProofAgeUpdated(maxAge);
    }

    function _approveProvider(address provider) private {
        approvedProviders[provider] = true;
        emit ProofProviderAdded(provider, IHumanProofProvider(provider).providerName());
    }

    // ------------------------------------------------------------------ ERC-721 / ERC-165

    function supportsInterface(bytes4 interfaceId)
        public
        view
        override(ERC721, AccessControl, IERC165)
        returns (bool)
    {
        return interfaceId == type(IERC8004).interfaceId || interfaceId == type(IERC8004ProofOfHuman).interfaceId
            || super.supportsInterface(interfaceId);
    }

    /// @dev Soulbound: transferFrom can never succeed (see _update), so the receiver callback of safe transfers is
    /// unreachable; skipping it keeps the errors identical and the contract under EIP-170.
    function safeTransferFrom(address from, address to, uint256 tokenId, bytes memory) public override {
        transferFrom(from, to, tokenId);
    }

    /// @dev Soulbound: mint and burn only.
    function _update(address to, uint256 tokenId, address auth) internal override returns (address) {
        address from = _ownerOf(tokenId);
        if (from != address(0) && to != address(0)) revert TransferNotAllowed();
        return super._update(to, tokenId, auth);
    }

    // ------------------------------------------------------------------ helpers

    function _requireNftOwner(uint256 agentId) private view {
        if (ownerOf(agentId) != msg.sender) revert NotNftOwner(agentId);
    }

    /// @dev ECDSA agents are keyed by their address, left-padded to 32 bytes.
    function _addressKey(address agent) private pure returns (bytes32) {
        return bytes32(uint256(uint160(agent)));
    }

    /// @dev The hex fields after the action and config bytes, decoded; InvalidUserData if short or not hex.
    function _hexPayload(bytes memory userData, uint256 hexChars) private pure returns (bytes memory payload) {
        bool ok;
        (ok, payload) = HexParser.tryDecode(userData, 2, hexChars);
        if (!ok) revert InvalidUserData();
    }

    /// @dev Big-endian 32-byte word at `offset`; callers stay within the fixed payload layouts.
    function _wordAt(bytes memory data, uint256 offset) private pure returns (bytes32 word) {
        assembly ("memory-safe") {
            word := mload(add(add(data, 32), offset))
        }
    }

    /// @dev 20-byte address at `offset`.
    function _addressAt(bytes memory data, uint256 offset) private pure returns (address) {
        return address(bytes20(_wordAt(data, offset)));
    }
}
