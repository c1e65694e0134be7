// SPDX-License-Identifier: MIT
pragma solidity ^0.8.28;

/// @notice Reads ASCII hex fields (no 0x prefix, either case) out of hub userData. userData travels through the
/// Self app as a UTF-8 string, so binary fields are carried as hex text.
library HexParser {
    /// @notice Decodes `chars` (even) hex characters starting at `offset` into chars / 2 bytes.
    /// @return ok false when the range runs past the end of `data` or holds a non-hex character
    function tryDecode(bytes memory data, uint256 offset, uint256 chars)
        internal
        pure
        returns (bool ok, bytes memory decoded)
    {
        if (chars % 2 != 0 || offset + chars > data.length) return (false, decoded);
        decoded = new bytes(chars / 2);
        for (uint256 i = 0; i < decoded.length; ++i) {
            uint256 hi = _nibble(uint8(data[offset + 2 * i]));
            uint256 lo = _nibble(uint8(data[offset + 2 * i + 1]));
            if (hi > 15 || lo > 15) return (false, decoded);
            decoded[i] = bytes1(uint8((hi << 4) | lo));
        }
        return (true, decoded);
    }

    /// @dev 16 marks a non-hex character.
    function _nibble(uint8 c) private pure returns (uint256) {
        if (c >= 0x30 && c <= 0x39) return c - 0x30; // 0-9
        if (c >= 0x61 && c <= 0x66) return c - 0x57; // a-f
        if (c >= 0x41 && c <= 0x46) return c - 0x37; // A-F
        return 16;
    }
}
