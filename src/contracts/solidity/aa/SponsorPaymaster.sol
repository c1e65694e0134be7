// SPDX-License-Identifier: MIT
pragma solidity ^0.8.28;

import {Ownable} from "@openzeppelin/contracts/access/Ownable.sol";
import {Paymaster} from "@openzeppelin/contracts/account/paymaster/Paymaster.sol";
import {ERC4337Utils} from "@openzeppelin/contracts/account/utils/ERC4337Utils.sol";
import {IEntryPoint, PackedUserOperation} from "@openzeppelin/contracts/interfaces/IERC4337.sol";
import {ECDSA} from "@openzeppelin/contracts/utils/cryptography/ECDSA.sol";
import {MessageHashUtils} from "@openzeppelin/contracts/utils/cryptography/MessageHashUtils.sol";

/// @notice Verifying paymaster for EntryPoint v0.7: it pays for the UserOperations the service's signer has
/// approved off chain, within the time window the approval names.
///
/// paymasterAndData = paymaster (20) ‖ paymasterVerificationGasLimit (16) ‖ paymasterPostOpGasLimit (16)
///                  ‖ abi.encode(uint48 validUntil, uint48 validAfter) (64) ‖ signature (65)
///
/// The signature is the signer's EIP-191 personal signature of `getHash(userOp, validUntil, validAfter)`.
/// A bad signature or an expired window is reported to the EntryPoint in the validation data (AA34, AA32)
/// rather than reverting, so gas estimation with a well-formed dummy signature goes through.
contract SponsorPaymaster is Paymaster, Ownable {
    using MessageHashUtils for bytes32;

    uint256 private constant PAYMASTER_DATA_OFFSET = 52;
    uint256 private constant SIGNATURE_OFFSET = 116;
    uint256 private constant PAYMASTER_AND_DATA_LENGTH = 181;

    /// @notice Approves sponsored UserOperations.
    address public verifyingSigner;

    /// @dev paymasterData (paymasterAndData after its first 52 bytes) must be 64 + 65 bytes.
    error InvalidPaymasterDataLength(uint256 length);
    error InvalidVerifyingSigner();

    event VerifyingSignerChanged(address indexed previousSigner, address indexed newSigner);

    constructor(address initialOwner, address signer) Ownable(initialOwner) {
        _setVerifyingSigner(signer);
    }

    /// @inheritdoc Paymaster
    function entryPoint() public pure override returns (IEntryPoint) {
        return ERC4337Utils.ENTRYPOINT_V07;
    }

    /// @notice What the signer signs (EIP-191) to sponsor `userOp` between validAfter and validUntil: every
    /// field but the signatures, the paymaster's own gas limits, the chain and this paymaster.
    function getHash(
        PackedUserOperation calldata userOp,
        uint48 validUntil,
        uint48 validAfter
    ) public view returns (bytes32) {
        return
            keccak256(
                abi.encode(
                    userOp.sender,
                    userOp.nonce,
                    keccak256(userOp.initCode),
                    keccak256(userOp.callData),
                    userOp.accountGasLimits,
                    bytes32(userOp.paymasterAndData[20:PAYMASTER_DATA_OFFSET]),
                    userOp.preVerificationGas,
                    userOp.gasFees,
                    block.chainid,
                    address(this),
                    validUntil,
                    validAfter
                )
            );
    }

    /// @notice Anyone may add to the paymaster's deposit on the EntryPoint.
    function deposit() external payable {
        _deposit(msg.value);
    }

    /// @notice The paymaster's deposit on the EntryPoint: what it can still pay for.
    function getDeposit() external view returns (uint256) {
        return entryPoint().balanceOf(address(this));
    }

    function withdrawTo(address payable to, uint256 amount) external onlyOwner {
        _withdraw(to, amount);
    }

    function addStake(uint32 unstakeDelaySec) external payable onlyOwner {
        _addStake(msg.value, unstakeDelaySec);
    }

    function unlockStake() external onlyOwner {
        _unlockStake();
    }

    function withdrawStake(address payable to) external onlyOwner {
        _withdrawStake(to);
    }

    function setVerifyingSigner(address signer) external onlyOwner {
        _setVerifyingSigner(signer);
    }

    function _setVerifyingSigner(address signer) private {
        // a zero signer would match the zero address that recovery yields for malformed signatures
        if (signer == address(0)) revert InvalidVerifyingSigner();
        emit VerifyingSignerChanged(verifyingSigner, signer);
        verifyingSigner = signer;
    }

    /// @dev No context: nothing to settle after execution, so the EntryPoint skips postOp.
    function _validatePaymasterUserOp(
        PackedUserOperation calldata userOp,
        bytes32 /* userOpHash */,
        uint256 /* requiredPreFund */
    ) internal view override returns (bytes memory context, uint256 validationData) {
        bytes calldata paymasterAndData = userOp.paymasterAndData;
        if (paymasterAndData.length != PAYMASTER_AND_DATA_LENGTH) {
            uint256 dataLength = paymasterAndData.length < PAYMASTER_DATA_OFFSET
                ? 0
                : paymasterAndData.length - PAYMASTER_DATA_OFFSET;
            revert InvalidPaymasterDataLength(dataLength);
        }
        (uint48 validUntil, uint48 validAfter) = abi.decode(
            paymasterAndData[PAYMASTER_DATA_OFFSET:SIGNATURE_OFFSET],
            (uint48, uint48)
        );
        bytes32 digest = getHash(userOp, validUntil, validAfter).toEthSignedMessageHash();
        (address recovered, ECDSA.RecoverError recoverError, ) = ECDSA.tryRecoverCalldata(
            digest,
            paymasterAndData[SIGNATURE_OFFSET:]
        );
        bool approved = recoverError == ECDSA.RecoverError.NoError && recovered == verifyingSigner;
        return ("", ERC4337Utils.packValidationData(approved, validAfter, validUntil));
    }
}
