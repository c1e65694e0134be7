// SPDX-License-Identifier: MIT
pragma solidity ^0.8.28;

/// @notice Reads ASCII hex fields (no 0x prefix, either case) out of hub userData. userData travels through the
/// Self app as a UTF-8 string, so binary fields are carried as hex text.
/// @dev Decodes 32 characters at a time with byte-parallel (SWAR) arithmetic on one word: an E payload (552
/// characters) costs some 20,000 gas instead of ~250,000 for a character loop.
library HexParser {
    uint256 private constant ONES = 0x0101010101010101010101010101010101010101010101010101010101010101;
    uint256 private constant HIGH = 0x8080808080808080808080808080808080808080808080808080808080808080;

    /// @notice Decodes `chars` (even) hex characters starting at `offset` into chars / 2 bytes.
    /// @return ok false when the range runs past the end of `data` or holds a non-hex character
    function tryDecode(bytes memory data, uint256 offset, uint256 chars)
        internal
        pure
        returns (bool ok, bytes memory decoded)
    {
        if (chars % 2 != 0 || offset + chars > data.length) return (false, decoded);
        decoded = new bytes(chars / 2);
        for (uint256 done = 0; done < chars; done += 32) {
            uint256 word;
            assembly ("memory-safe") {
                word := mload(add(add(data, 32), add(offset, done)))
            }
            if (chars - done < 32) {
                // the last, partial word: the characters past the field become '0', the bytes they make are
                // written past the end of `decoded`, into unallocated memory
                uint256 keep = type(uint256).max << (8 * (32 - (chars - done)));
                word = (word & keep) | (ONES * 0x30 & ~keep);
            }
            (bool valid, uint256 packed) = _decodeWord(word);
            if (!valid) return (false, decoded);
            // 16 bytes, then 16 zero bytes that the next word overwrites
            assembly ("memory-safe") {
                mstore(add(add(decoded, 32), div(done, 2)), shl(128, packed))
            }
        }
        return (true, decoded);
    }

    /// @dev 32 hex characters -> 16 bytes (in the low 128 bits), every byte of the word at once. A character c
    /// maps to n = (c & 0x0f) + 9 * bit6(c) ('0'-'9' -> 0-9, 'A'-'F' and 'a'-'f' -> 10-15); it is a hex digit iff
    /// n < 16 and writing n back as lowercase hex gives c with its letters lowercased. All per-byte sums stay
    /// below 0x100, so no carry crosses into the next byte.
    function _decodeWord(uint256 x) private pure returns (bool valid, uint256 packed) {
        unchecked {
            uint256 n = (x & (ONES * 0x0f)) + ((x >> 6) & ONES) * 9;
            uint256 lowered = x | ((x >> 1) & (ONES * 0x20));
            uint256 letters = ((n + ONES * 0x76) & HIGH) >> 7; // 1 in each byte where n >= 10
            // a byte >= 0x80 (not ASCII) or n >= 16 sets a high bit here
            if ((x | (n + ONES * 0x70)) & HIGH != 0 || n + ONES * 0x30 + letters * 0x27 != lowered) {
                return (false, 0);
            }
            // pairs of nibbles -> bytes (a loop rather than shift-and-mask steps: smaller code, where the
            // registry has little room)
            for (uint256 shift = 248; shift < 256; shift -= 16) {
                packed = (packed << 8) | (((n >> shift) & 0x0f) << 4) | ((n >> (shift - 8)) & 0x0f);
            }
        }
        return (true, packed);
    }
}
