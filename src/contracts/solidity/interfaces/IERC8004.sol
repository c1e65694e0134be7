// SPDX-License-Identifier: MIT
pragma solidity ^0.8.28;

import {IERC165} from "@openzeppelin/contracts/utils/introspection/IERC165.sol";

/// @notice ERC-8004 identity registry surface. The interface ID (0x29d32aae) covers exactly the nine functions
/// below; the MetadataEntry[] register overload is a convenience outside the interface.
interface IERC8004 is IERC165 {
    struct MetadataEntry {
        string metadataKey;
        bytes metadataValue;
    }

    event Registered(uint256 indexed agentId, string agentURI, address indexed owner);
    event URIUpdated(uint256 indexed agentId, string newURI, address indexed updatedBy);
    event MetadataSet(
        uint256 indexed agentId, string indexed indexedMetadataKey, string metadataKey, bytes metadataValue
    );

    function register() external returns (uint256 agentId);

    function register(string calldata agentURI) external returns (uint256 agentId);

    /// @dev MUST revert when the two arrays differ in length.
    function register(string calldata agentURI, string[] calldata metadataKeys, bytes[] calldata metadataValues)
        external
        returns (uint256 agentId);

    function setAgentURI(uint256 agentId, string calldata newURI) external;

    function getMetadata(uint256 agentId, string calldata metadataKey) external view returns (bytes memory);

    /// @dev Owner only; the key "agentWallet" is reserved for setAgentWallet.
    function setMetadata(uint256 agentId, string calldata metadataKey, bytes calldata metadataValue) external;

    /// @dev newWallet proves control with an EIP-712 AgentWalletSet signature.
    function setAgentWallet(uint256 agentId, address newWallet, uint256 deadline, bytes calldata signature) external;

    /// @return The wallet, or address(0) when unset.
    function getAgentWallet(uint256 agentId) external view returns (address);

    function unsetAgentWallet(uint256 agentId) external;
}
