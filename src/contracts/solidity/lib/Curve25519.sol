// SPDX-License-Identifier: MIT
pragma solidity ^0.8.28;

/// @title Curve25519
/// @notice Field and point helpers for Ed25519 (RFC 8032 section 5.1) on edwards25519: -x^2 + y^2 = 1 + d x^2 y^2
/// over GF(p), p = 2^255 - 19, with the base point B of prime order L.
/// @dev Field elements are uint256 values; mulmod and addmod reduce them natively, and an exponentiation (square
/// root, inverse) is one call to the modexp precompile (EIP-198, address 0x05).
library Curve25519 {
    uint256 internal constant P = 0x7fffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffed;
    /// @dev the prime order of B: 2^252 + 27742317777372353535851937790883648493
    uint256 internal constant L = 0x1000000000000000000000000000000014def9dea2f79cd65812631a5cf5d3ed;
    /// @dev d = -121665 / 121666 mod p
    uint256 internal constant D = 0x52036cee2b6ffe738cc740797779e89800700a4d4141d8ab75eb4dca135978a3;
    uint256 internal constant D2 = 0x2406d9dc56dffce7198e80f2eef3d13000e0149a8283b156ebd69b9426b2f159;
    /// @dev 2^((p-1)/4), a square root of -1
    uint256 internal constant SQRT_M1 = 0x2b8324804fc1df0b2b4d00993dfbd7a72f431806ad2fe478c4ee1b274a0ea0b0;
    /// @dev B = (x, 4/5) with x even
    uint256 internal constant BX = 0x216936d3cd6e53fec0a4e231fdd6dc5c692cc7609525a7b2c9562d608f25d51a;
    uint256 internal constant BY = 0x6666666666666666666666666666666666666666666666666666666666666658;
    /// @dev y of the four points of order 8 is +-Y8; the other small-order points have y = 1, -1 (x = 0) or 0
    uint256 internal constant Y8 = 0x7a03ac9277fdc74ec6cc392cfa53202a0f67100d760b3cba4fd84d3d706a17c7;
    uint256 internal constant Y8_SQUARED = 0x76b9125b8bd5b257c2c2ebc2ba609c056bdf9e34b4f0a103ae4791859c155291;
    /// @dev 2^256 mod L, to reduce a 512-bit number hi * 2^256 + lo
    uint256 internal constant R256_MOD_L = 0x0ffffffffffffffffffffffffffffffec6ef5bf4737dcf70d6ec31748d98951d;

    /// @dev Odd multiples 1B, 3B, ..., 127B, then the same for [2^127]B: 64 entries each.
    uint256 internal constant TABLE_ENTRIES = 64;
    /// @dev An entry is (y + x, y - x, 2d x y) mod p of an affine point: 96 bytes.
    uint256 internal constant TABLES_BYTES = 2 * TABLE_ENTRIES * 96;

    /// @notice Reverses the byte order of a 32-byte word (RFC 8032 encodes integers little-endian).
    function bswap(uint256 x) internal pure returns (uint256) {
        x = ((x >> 8) & 0x00ff00ff00ff00ff00ff00ff00ff00ff00ff00ff00ff00ff00ff00ff00ff00ff)
            | ((x & 0x00ff00ff00ff00ff00ff00ff00ff00ff00ff00ff00ff00ff00ff00ff00ff00ff) << 8);
        x = ((x >> 16) & 0x0000ffff0000ffff0000ffff0000ffff0000ffff0000ffff0000ffff0000ffff)
            | ((x & 0x0000ffff0000ffff0000ffff0000ffff0000ffff0000ffff0000ffff0000ffff) << 16);
        x = ((x >> 32) & 0x00000000ffffffff00000000ffffffff00000000ffffffff00000000ffffffff)
            | ((x & 0x00000000ffffffff00000000ffffffff00000000ffffffff00000000ffffffff) << 32);
        x = ((x >> 64) & 0x0000000000000000ffffffffffffffff0000000000000000ffffffffffffffff)
            | ((x & 0x0000000000000000ffffffffffffffff0000000000000000ffffffffffffffff) << 64);
        return (x >> 128) | (x << 128);
    }

    /// @notice base^e mod p through the modexp precompile.
    function modExp(uint256 base, uint256 e) internal view returns (uint256 result) {
        assembly ("memory-safe") {
            let m := mload(0x40)
            mstore(m, 0x20) // length of base
            mstore(add(m, 0x20), 0x20) // length of exponent
            mstore(add(m, 0x40), 0x20) // length of modulus
            mstore(add(m, 0x60), base)
            mstore(add(m, 0x80), e)
            mstore(add(m, 0xa0), P)
            if iszero(staticcall(gas(), 0x05, m, 0xc0, m, 0x20)) { revert(0, 0) }
            result := mload(m)
        }
    }

    /// @notice Decodes a 32-byte point encoding (RFC 8032 section 5.1.3), strictly: y must be canonical (< p), the
    /// point must be on the curve, and x = 0 must come with sign bit 0.
    /// @return ok false when the encoding is not that of a curve point
    function decodePoint(bytes32 encoded) internal view returns (bool ok, uint256 x, uint256 y) {
        uint256 le = bswap(uint256(encoded));
        uint256 sign = le >> 255;
        y = le & ((1 << 255) - 1);
        if (y >= P) return (false, 0, 0);
        // x^2 = u / v with u = y^2 - 1 and v = d y^2 + 1 (never 0: d is not a square)
        uint256 y2 = mulmod(y, y, P);
        uint256 u = addmod(y2, P - 1, P);
        uint256 v = addmod(mulmod(D, y2, P), 1, P);
        // candidate root x = u v^3 (u v^7)^((p-5)/8), one exponentiation (p = 5 mod 8)
        uint256 v3 = mulmod(mulmod(v, v, P), v, P);
        uint256 uv3 = mulmod(u, v3, P);
        x = mulmod(uv3, modExp(mulmod(uv3, mulmod(v3, v, P), P), (P - 5) / 8), P);
        uint256 vx2 = mulmod(v, mulmod(x, x, P), P);
        if (vx2 != u) {
            if (vx2 != P - u) return (false, 0, 0); // u / v is not a square: no point with this y
            x = mulmod(x, SQRT_M1, P);
        }
        if (x == 0 && sign == 1) return (false, 0, 0);
        if (x & 1 != sign) x = P - x;
        return (true, x, y);
    }

    /// @notice Whether the point with this y (of a decoded point) has small order, i.e. lies in the 8-torsion.
    function hasSmallOrder(uint256 y) internal pure returns (bool) {
        return y == 0 || y == 1 || y == P - 1 || y == Y8 || y == P - Y8;
    }

    // ---------------------------------------------------------------------------------------------------------------
    // Tables of the fixed base, computed once when the verifier is deployed (not on the verification path).

    /// @notice The verifier's fixed-base tables: for Q = B and then Q = [2^127]B, the entries
    /// (y + x, y - x, 2d x y) mod p of the affine points Q, 3Q, 5Q, ..., 127Q (32-byte big-endian words).
    function baseTables() internal view returns (bytes memory tables) {
        tables = new bytes(TABLES_BYTES);
        uint256 out;
        assembly ("memory-safe") {
            out := add(tables, 0x20)
        }
        out = _oddMultiples(out, BX, BY);
        (uint256 x, uint256 y, uint256 z,) = (BX, BY, 1, 0);
        for (uint256 i = 0; i < 127; ++i) {
            (x, y, z,) = _double(x, y, z);
        }
        uint256 zInv = modExp(z, P - 2);
        _oddMultiples(out, mulmod(x, zInv, P), mulmod(y, zInv, P));
    }

    /// @dev Writes the 64 entries of (x, y) at `out`; returns the end.
    function _oddMultiples(uint256 out, uint256 x, uint256 y) private view returns (uint256) {
        (uint256 x2, uint256 y2, uint256 z2, uint256 t2) = _double(x, y, 1);
        (uint256 px, uint256 py, uint256 pz, uint256 pt) = (x, y, 1, mulmod(x, y, P));
        for (uint256 i = 0; i < TABLE_ENTRIES; ++i) {
            if (i > 0) (px, py, pz, pt) = _add(px, py, pz, pt, x2, y2, z2, t2);
            uint256 zInv = modExp(pz, P - 2);
            uint256 ax = mulmod(px, zInv, P);
            uint256 ay = mulmod(py, zInv, P);
            uint256 ypx = addmod(ay, ax, P);
            uint256 ymx = addmod(ay, P - ax, P);
            uint256 kxy = mulmod(D2, mulmod(ax, ay, P), P);
            assembly ("memory-safe") {
                mstore(out, ypx)
                mstore(add(out, 0x20), ymx)
                mstore(add(out, 0x40), kxy)
            }
            out += 96;
        }
        return out;
    }

    /// @dev Doubling in extended coordinates (Hisil-Wong-Carter-Dawson 2008, "dbl-2008-hwcd" with a = -1).
    function _double(uint256 x1, uint256 y1, uint256 z1)
        private
        pure
        returns (uint256 x3, uint256 y3, uint256 z3, uint256 t3)
    {
        uint256 a = mulmod(x1, x1, P);
        uint256 b = mulmod(y1, y1, P);
        uint256 c = mulmod(2, mulmod(z1, z1, P), P);
        uint256 h = addmod(a, b, P); // -H of the formula (a = -1)
        uint256 e = addmod(h, P - mulmod(addmod(x1, y1, P), addmod(x1, y1, P), P), P); // -E
        uint256 g = addmod(a, P - b, P); // -G
        uint256 f = addmod(g, c, P); // -F
        (x3, y3, z3, t3) = (mulmod(e, f, P), mulmod(g, h, P), mulmod(f, g, P), mulmod(e, h, P));
    }

    /// @dev Addition in extended coordinates ("add-2008-hwcd-3", complete for a = -1 and d not a square).
    function _add(uint256 x1, uint256 y1, uint256 z1, uint256 t1, uint256 x2, uint256 y2, uint256 z2, uint256 t2)
        private
        pure
        returns (uint256 x3, uint256 y3, uint256 z3, uint256 t3)
    {
        uint256 a = mulmod(addmod(y1, P - x1, P), addmod(y2, P - x2, P), P);
        uint256 b = mulmod(addmod(y1, x1, P), addmod(y2, x2, P), P);
        uint256 c = mulmod(mulmod(t1, D2, P), t2, P);
        uint256 d = mulmod(2, mulmod(z1, z2, P), P);
        uint256 e = addmod(b, P - a, P);
        uint256 f = addmod(d, P - c, P);
        uint256 g = addmod(d, c, P);
        uint256 h = addmod(b, a, P);
        (x3, y3, z3, t3) = (mulmod(e, f, P), mulmod(g, h, P), mulmod(f, g, P), mulmod(e, h, P));
    }
}
