// SPDX-License-Identifier: MIT
pragma solidity ^0.8.28;

/// @notice The registry views the lens reads: a subset that the registry deployed on Celo has with the same
/// selectors (onchain-facts 1.3), so the lens works against Celo as well as against our AgentRegistry.
interface ILensRegistry {
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

    function ownerOf(uint256 tokenId) external view returns (address);
    function agentIdToAgentKey(uint256 agentId) external view returns (bytes32);
    function getAgentId(bytes32 agentKey) external view returns (uint256);
    function hasHumanProof(uint256 agentId) external view returns (bool);
    function getHumanNullifier(uint256 agentId) external view returns (uint256);
    function getProofProvider(uint256 agentId) external view returns (address);
    function selfProofProvider() external view returns (address);
    function getAgentCountForHuman(uint256 nullifier) external view returns (uint256);
    function agentRegisteredAt(uint256 agentId) external view returns (uint256);
    function proofExpiresAt(uint256 agentId) external view returns (uint256);
    function isProofFresh(uint256 agentId) external view returns (bool);
    function agentGuardian(uint256 agentId) external view returns (address);
    function getAgentMetadata(uint256 agentId) external view returns (string memory);
    function getAgentCredentials(uint256 agentId) external view returns (AgentCredentials memory);
    function getAgentsForNullifier(uint256 nullifier) external view returns (uint256[] memory);
}

interface ILensProvider {
    function providerName() external view returns (string memory);
    function verificationStrength() external view returns (uint8);
}

/// @title AgentLens
/// @notice Everything the public queries need about an agent, read in one eth_call. Never deployed: the service
/// runs it as a deployless call (the creation code travels with the call), so it works on any chain the registry
/// is on. Reads that depend on earlier reads (the human's agent count needs the nullifier, the provider's name and
/// strength need its address) happen inside the call, which is why a plain multicall would need two round trips.
contract AgentLens {
    struct AgentView {
        uint256 agentId;
        /// @dev False for an id never minted or already burned; every other field is then zero or empty.
        bool exists;
        address owner;
        bytes32 agentKey;
        bool hasHumanProof;
        uint256 nullifier;
        address proofProvider;
        /// @dev Empty and 0 when there is no provider, or it does not answer.
        string providerName;
        uint8 verificationStrength;
        bool isSelfProvider;
        uint256 agentCountForHuman;
        uint256 registeredAtBlock;
        uint256 proofExpiresAt;
        bool isProofFresh;
        address guardian;
        string metadata;
        ILensRegistry.AgentCredentials credentials;
    }

    /// @notice One agent, with the block the state was read at.
    function agentView(ILensRegistry registry, uint256 agentId)
        external
        view
        returns (uint256 blockNumber, AgentView memory agent)
    {
        return (block.number, _view(registry, agentId, registry.selfProofProvider()));
    }

    /// @notice The agent registered under `agentKey`, with the block the state was read at; agentId 0 (and exists
    /// false) when the key has none. A session waiting for its registration learns the id and the agent in one call.
    function agentViewOfKey(ILensRegistry registry, bytes32 agentKey)
        external
        view
        returns (uint256 blockNumber, AgentView memory agent)
    {
        uint256 agentId = registry.getAgentId(agentKey);
        if (agentId == 0) return (block.number, agent);
        return (block.number, _view(registry, agentId, registry.selfProofProvider()));
    }

    /// @notice Several agents in one call, in the order given.
    function agentsView(ILensRegistry registry, uint256[] calldata agentIds)
        external
        view
        returns (uint256 blockNumber, AgentView[] memory agents)
    {
        address selfProvider = registry.selfProofProvider();
        agents = new AgentView[](agentIds.length);
        for (uint256 i = 0; i < agentIds.length; ++i) {
            agents[i] = _view(registry, agentIds[i], selfProvider);
        }
        return (block.number, agents);
    }

    /// @notice The live agents of a human nullifier (registry order), with the block the list was read at.
    function agentsForNullifier(ILensRegistry registry, uint256 nullifier)
        external
        view
        returns (uint256 blockNumber, uint256[] memory agentIds)
    {
        return (block.number, registry.getAgentsForNullifier(nullifier));
    }

    /// @notice The name and strength of each provider, read as agentView reads them, with the block they were
    /// read at: what the service compares its cached answers with, since a provider announces no change of its own.
    function providersView(address[] calldata providers)
        external
        view
        returns (uint256 blockNumber, string[] memory names, uint8[] memory strengths)
    {
        names = new string[](providers.length);
        strengths = new uint8[](providers.length);
        for (uint256 i = 0; i < providers.length; ++i) {
            (names[i], strengths[i]) = _provider(providers[i]);
        }
        return (block.number, names, strengths);
    }

    function _view(ILensRegistry registry, uint256 agentId, address selfProvider)
        private
        view
        returns (AgentView memory agent)
    {
        agent.agentId = agentId;
        // ownerOf reverts for an id never minted or burned.
        try registry.ownerOf(agentId) returns (address owner) {
            agent.owner = owner;
            agent.exists = owner != address(0);
        } catch {
            return agent;
        }
        if (!agent.exists) return agent;

        agent.agentKey = registry.agentIdToAgentKey(agentId);
        agent.hasHumanProof = registry.hasHumanProof(agentId);
        agent.nullifier = registry.getHumanNullifier(agentId);
        agent.proofProvider = registry.getProofProvider(agentId);
        agent.isSelfProvider = agent.proofProvider != address(0) && agent.proofProvider == selfProvider;
        agent.agentCountForHuman = agent.nullifier == 0 ? 0 : registry.getAgentCountForHuman(agent.nullifier);
        agent.registeredAtBlock = registry.agentRegisteredAt(agentId);
        agent.proofExpiresAt = registry.proofExpiresAt(agentId);
        agent.isProofFresh = registry.isProofFresh(agentId);
        agent.guardian = registry.agentGuardian(agentId);
        agent.metadata = registry.getAgentMetadata(agentId);
        agent.credentials = registry.getAgentCredentials(agentId);
        (agent.providerName, agent.verificationStrength) = _provider(agent.proofProvider);
    }

    /// @dev A provider that is unset, has no code or reverts reads as unnamed with strength 0, rather than failing
    /// the whole view (a call to an address without code would revert while decoding, which try cannot catch).
    function _provider(address provider) private view returns (string memory name, uint8 strength) {
        if (provider.code.length == 0) return (name, strength);
        try ILensProvider(provider).providerName() returns (string memory value) {
            name = value;
        } catch {}
        try ILensProvider(provider).verificationStrength() returns (uint8 value) {
            strength = value;
        } catch {}
    }
}
