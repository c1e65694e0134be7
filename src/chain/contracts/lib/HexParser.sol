// SPDX-License-Identifier: MIT
pragma solidity ^0.8.28;

/// @notice Reads ASCII hex fields (no 0x prefix, either case) out of hub userData. userData travels through the
/// Self app as a UTF-8 string, so binary fields are carried as hex text.
library HexParser {
    /// @notice Parses `len` (<= 64) hex digits at `offset` as a big-endian integer.
    /// @return ok false when the field runs past the end of `data` or holds a non-hex character
    function tryParse(bytes memory data, uint256 offset, uint256 len) internal pure returns (bool ok, uint256 value) {
        if (len > 64 || offset + len > data.length) return (false, 0);
        for (uint256 i = offset; i < offset + len; ++i) {
            uint256 nibble = _nibble(uint8(data[i]));
            if (nibble > 15) return (false, 0);
            value = (value << 4) | nibble;
        }
        return (true, value);
    }

    /// @notice Whether `len` bytes at `offset` exist and are all hex digits.
    function isHex(bytes memory data, uint256 offset, uint256 len) internal pure returns (bool) {
        if (offset + len > data.length) return false;
        for (uint256 i = offset; i < offset + len; ++i) {
            if (_nibble(uint8(data[i])) > 15) return false;
        }
        return true;
    }

    /// @dev 16 marks a non-hex character.
    function _nibble(uint8 c) private pure returns (uint256) {
        if (c >= 0x30 && c <= 0x39) return c - 0x30; // 0-9
        if (c >= 0x61 && c <= 0x66) return c - 0x57; // a-f
        if (c >= 0x41 && c <= 0x46) return c - 0x37; // A-F
        return 16;
    }
}
