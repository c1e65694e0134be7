// SPDX-License-Identifier: MIT
pragma solidity ^0.8.28;

import {Clones} from "@openzeppelin/contracts/proxy/Clones.sol";
import {PasskeyAccount} from "./PasskeyAccount.sol";

/// @notice Deploys PasskeyAccounts as ERC-1167 clones at CREATE2 addresses that follow from the passkey and a
/// salt, so an account's address is known before it exists (counterfactual) and the UserOperation that
/// first uses it can create it (`initCode` = this factory ‖ `createAccount(...)`).
contract PasskeyAccountFactory {
    /// @notice The account code every clone delegates to, created with this factory.
    PasskeyAccount public immutable accountImplementation;

    event AccountCreated(address indexed account, bytes32 x, bytes32 y, uint256 salt);

    constructor() {
        accountImplementation = new PasskeyAccount();
    }

    /// @notice Creates the account of passkey (x, y) and `salt`, or returns it when it already exists (the
    /// EntryPoint calls factories only for senders without code, but a direct caller may repeat).
    function createAccount(bytes32 x, bytes32 y, uint256 salt) external returns (address account) {
        bytes32 cloneSalt = _cloneSalt(x, y, salt);
        account = Clones.predictDeterministicAddress(address(accountImplementation), cloneSalt);
        if (account.code.length > 0) return account;
        // clone and initialise in one call: nobody can set another key on the new account in between
        Clones.cloneDeterministic(address(accountImplementation), cloneSalt);
        PasskeyAccount(payable(account)).initialize(x, y);
        emit AccountCreated(account, x, y, salt);
    }

    /// @notice The address `createAccount(x, y, salt)` deploys to.
    function getAddress(bytes32 x, bytes32 y, uint256 salt) external view returns (address) {
        return Clones.predictDeterministicAddress(address(accountImplementation), _cloneSalt(x, y, salt));
    }

    /// @dev The key is part of the CREATE2 salt, so an address can only ever hold the account of its own key.
    function _cloneSalt(bytes32 x, bytes32 y, uint256 salt) private pure returns (bytes32) {
        return keccak256(abi.encode(x, y, salt));
    }
}
