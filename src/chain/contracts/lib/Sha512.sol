// SPDX-License-Identifier: MIT
pragma solidity ^0.8.28;

/// @title Sha512
/// @notice SHA-512 (FIPS 180-4, sections 5.1.2, 5.3.5 and 6.4) of bytes in memory, written for the Ed25519 verifier.
/// @dev 64-bit words live in 256-bit stack slots. Additions are left unreduced until a word is stored back into the
/// working variables (the low 64 bits of a sum depend only on the low 64 bits of its terms), and a rotation of one
/// word uses its doubled form x | x << 64, whose bits n..n+63 are rotr(x, n). The message schedule is computed two
/// words at a time: W[2j] in bits 128..191 and W[2j+1] in bits 0..63 of one slot (a "pair"). Carries and shifted-out
/// bits of one lane then land in the 64 free bits above it, which a single mask clears, so one set of shifts and
/// XORs serves both words.
library Sha512 {
    /// @notice SHA-512 of the `len` bytes at `ptr`.
    /// @dev Pads in place: the caller must own the memory from ptr + len up to the next 128-byte boundary that leaves
    /// room for the 17 padding bytes, plus 16 bytes more. `work` points at 0x1000 bytes of scratch memory (round
    /// constants, message schedule as pairs, the pairs plus constants, and the hash state).
    /// @return hi the digest's first 32 bytes and @return lo its last 32 bytes, as big-endian words
    function hash(uint256 ptr, uint256 len, uint256 work) internal pure returns (uint256 hi, uint256 lo) {
        assembly ("memory-safe") {
            // Padding (5.1.2): 0x80, zeros, then the bit length as a 128-bit big-endian number ending the last block.
            let padded := and(add(len, 0x90), not(0x7f))
            calldatacopy(add(ptr, len), calldatasize(), sub(padded, len)) // zeros (calldata reads past its end as 0)
            mstore8(add(ptr, len), 0x80)
            mstore(add(ptr, sub(padded, 0x10)), shl(128, shl(3, len)))

            // K[2j] << 128 | K[2j+1]: the first 64 bits of the fractional parts of the cube roots of the first 80 primes
            let k := work
            let w := add(work, 0x500)
            mstore(add(k, 0x0), 0x0000000000000000428a2f98d728ae2200000000000000007137449123ef65cd)
            mstore(add(k, 0x20), 0x0000000000000000b5c0fbcfec4d3b2f0000000000000000e9b5dba58189dbbc)
            mstore(add(k, 0x40), 0x00000000000000003956c25bf348b538000000000000000059f111f1b605d019)
            mstore(add(k, 0x60), 0x0000000000000000923f82a4af194f9b0000000000000000ab1c5ed5da6d8118)
            mstore(add(k, 0x80), 0x0000000000000000d807aa98a3030242000000000000000012835b0145706fbe)
            mstore(add(k, 0xa0), 0x0000000000000000243185be4ee4b28c0000000000000000550c7dc3d5ffb4e2)
            mstore(add(k, 0xc0), 0x000000000000000072be5d74f27b896f000000000000000080deb1fe3b1696b1)
            mstore(add(k, 0xe0), 0x00000000000000009bdc06a725c712350000000000000000c19bf174cf692694)
            mstore(add(k, 0x100), 0x0000000000000000e49b69c19ef14ad20000000000000000efbe4786384f25e3)
            mstore(add(k, 0x120), 0x00000000000000000fc19dc68b8cd5b50000000000000000240ca1cc77ac9c65)
            mstore(add(k, 0x140), 0x00000000000000002de92c6f592b027500000000000000004a7484aa6ea6e483)
            mstore(add(k, 0x160), 0x00000000000000005cb0a9dcbd41fbd4000000000000000076f988da831153b5)
            mstore(add(k, 0x180), 0x0000000000000000983e5152ee66dfab0000000000000000a831c66d2db43210)
            mstore(add(k, 0x1a0), 0x0000000000000000b00327c898fb213f0000000000000000bf597fc7beef0ee4)
            mstore(add(k, 0x1c0), 0x0000000000000000c6e00bf33da88fc20000000000000000d5a79147930aa725)
            mstore(add(k, 0x1e0), 0x000000000000000006ca6351e003826f0000000000000000142929670a0e6e70)
            mstore(add(k, 0x200), 0x000000000000000027b70a8546d22ffc00000000000000002e1b21385c26c926)
            mstore(add(k, 0x220), 0x00000000000000004d2c6dfc5ac42aed000000000000000053380d139d95b3df)
            mstore(add(k, 0x240), 0x0000000000000000650a73548baf63de0000000000000000766a0abb3c77b2a8)
            mstore(add(k, 0x260), 0x000000000000000081c2c92e47edaee6000000000000000092722c851482353b)
            mstore(add(k, 0x280), 0x0000000000000000a2bfe8a14cf103640000000000000000a81a664bbc423001)
            mstore(add(k, 0x2a0), 0x0000000000000000c24b8b70d0f897910000000000000000c76c51a30654be30)
            mstore(add(k, 0x2c0), 0x0000000000000000d192e819d6ef52180000000000000000d69906245565a910)
            mstore(add(k, 0x2e0), 0x0000000000000000f40e35855771202a0000000000000000106aa07032bbd1b8)
            mstore(add(k, 0x300), 0x000000000000000019a4c116b8d2d0c800000000000000001e376c085141ab53)
            mstore(add(k, 0x320), 0x00000000000000002748774cdf8eeb99000000000000000034b0bcb5e19b48a8)
            mstore(add(k, 0x340), 0x0000000000000000391c0cb3c5c95a6300000000000000004ed8aa4ae3418acb)
            mstore(add(k, 0x360), 0x00000000000000005b9cca4f7763e3730000000000000000682e6ff3d6b2b8a3)
            mstore(add(k, 0x380), 0x0000000000000000748f82ee5defb2fc000000000000000078a5636f43172f60)
            mstore(add(k, 0x3a0), 0x000000000000000084c87814a1f0ab7200000000000000008cc702081a6439ec)
            mstore(add(k, 0x3c0), 0x000000000000000090befffa23631e280000000000000000a4506cebde82bde9)
            mstore(add(k, 0x3e0), 0x0000000000000000bef9a3f7b2c679150000000000000000c67178f2e372532b)
            mstore(add(k, 0x400), 0x0000000000000000ca273eceea26619c0000000000000000d186b8c721c0c207)
            mstore(add(k, 0x420), 0x0000000000000000eada7dd6cde0eb1e0000000000000000f57d4f7fee6ed178)
            mstore(add(k, 0x440), 0x000000000000000006f067aa72176fba00000000000000000a637dc5a2c898a6)
            mstore(add(k, 0x460), 0x0000000000000000113f9804bef90dae00000000000000001b710b35131c471b)
            mstore(add(k, 0x480), 0x000000000000000028db77f523047d84000000000000000032caab7b40c72493)
            mstore(add(k, 0x4a0), 0x00000000000000003c9ebe0a15c9bebc0000000000000000431d67c49c100d4c)
            mstore(add(k, 0x4c0), 0x00000000000000004cc5d4becb3e42b60000000000000000597f299cfc657e2a)
            mstore(add(k, 0x4e0), 0x00000000000000005fcb6fab3ad6faec00000000000000006c44198c4a475817)

            // Initial hash value (5.3.5): fractional parts of the square roots of the first 8 primes. The state
            // H0..H7 lives in memory at hs: the stack is kept for a..h.
            let hs := add(work, 0xf00)
            mstore(hs, 0x6a09e667f3bcc908)
            mstore(add(hs, 0x20), 0xbb67ae8584caa73b)
            mstore(add(hs, 0x40), 0x3c6ef372fe94f82b)
            mstore(add(hs, 0x60), 0xa54ff53a5f1d36f1)
            mstore(add(hs, 0x80), 0x510e527fade682d1)
            mstore(add(hs, 0xa0), 0x9b05688c2b3e6c1f)
            mstore(add(hs, 0xc0), 0x1f83d9abfb41bd6b)
            mstore(add(hs, 0xe0), 0x5be0cd19137e2179)

            for { let blk := ptr } lt(blk, add(ptr, padded)) { blk := add(blk, 0x80) } {
                // Message schedule (6.4.2 step 1) as 40 pairs at w, and the pairs K + W at w + 0x500.
                for { let j := 0 } lt(j, 0x100) { j := add(j, 0x20) } {
                    let x := shr(128, mload(add(blk, shr(1, j)))) // W[2j] << 64 | W[2j+1]
                    x := or(shl(64, and(x, not(0xffffffffffffffff))), and(x, 0xffffffffffffffff))
                    mstore(add(w, j), x)
                    mstore(add(w, add(j, 0x500)), add(x, mload(add(k, j))))
                }
                for { let q := add(w, 0x100) } lt(q, add(w, 0x500)) { q := add(q, 0x20) } {
                    let w16 := mload(sub(q, 0x100)) // W[2j-16], W[2j-15]
                    // σ1(W[2j-2], W[2j-1]) with σ1 = rotr 19 ^ rotr 61 ^ shr 6, both lanes at once, plus W[2j-7], W[2j-6]
                    let x := mload(sub(q, 0x20))
                    x := and(
                        add(
                            and(
                                xor(xor(xor(shr(19, x), shl(45, x)), xor(shr(61, x), shl(3, x))), shr(6, x)),
                                0x0000000000000000ffffffffffffffff0000000000000000ffffffffffffffff
                            ),
                            add(or(shl(128, mload(sub(q, 0x80))), shr(128, mload(sub(q, 0x60)))), w16)
                        ),
                        0x0000000000000000ffffffffffffffff0000000000000000ffffffffffffffff
                    )
                    // σ0(W[2j-15], W[2j-14]) with σ0 = rotr 1 ^ rotr 8 ^ shr 7
                    let w15 := or(shl(128, w16), shr(128, mload(sub(q, 0xe0))))
                    x := and(
                        add(x, and(xor(xor(xor(shr(1, w15), shl(63, w15)), xor(shr(8, w15), shl(56, w15))), shr(7, w15)), 0x0000000000000000ffffffffffffffff0000000000000000ffffffffffffffff)),
                        0x0000000000000000ffffffffffffffff0000000000000000ffffffffffffffff
                    )
                    mstore(q, x)
                    mstore(add(q, 0x500), add(x, mload(sub(q, 0x500))))
                }

                let a := mload(hs)
                let b := mload(add(hs, 0x20))
                let c := mload(add(hs, 0x40))
                let d := mload(add(hs, 0x60))
                let e := mload(add(hs, 0x80))
                let f := mload(add(hs, 0xa0))
                let g := mload(add(hs, 0xc0))
                let h := mload(add(hs, 0xe0))
                // 80 rounds (6.4.2 step 3), eight per iteration: T1 = h + Σ1(e) + Ch(e, f, g) + K[t] + W[t] and
                // T2 = Σ0(a) + Maj(a, b, c) with Σ1 = rotr 14 ^ rotr 18 ^ rotr 41 and Σ0 = rotr 28 ^ rotr 34 ^ rotr 39.
                // Instead of shifting a..h, the new e (d + T1) goes into d's variable and the new a (T1 + T2) into
                // h's: the names rotate by one per round and come back after eight. The round of a pair's low lane
                // adds the whole pair, whose high lane only adds bits above 64.
                for { let q := add(w, 0x500) } lt(q, hs) { q := add(q, 0x80) } {
                    {
                        let t1 := add(h, shr(128, mload(q)))
                        {
                            let ee := or(e, shl(64, e))
                            t1 := add(t1, xor(xor(shr(14, ee), shr(18, ee)), shr(41, ee)))
                        }
                        t1 := add(t1, xor(g, and(e, xor(f, g))))
                        d := and(add(d, t1), 0xffffffffffffffff)
                        {
                            let aa := or(a, shl(64, a))
                            h := add(t1, xor(xor(shr(28, aa), shr(34, aa)), shr(39, aa)))
                        }
                        h := and(add(h, or(and(a, b), and(c, or(a, b)))), 0xffffffffffffffff)
                    }
                    {
                        let t1 := add(g, mload(q))
                        {
                            let ee := or(d, shl(64, d))
                            t1 := add(t1, xor(xor(shr(14, ee), shr(18, ee)), shr(41, ee)))
                        }
                        t1 := add(t1, xor(f, and(d, xor(e, f))))
                        c := and(add(c, t1), 0xffffffffffffffff)
                        {
                            let aa := or(h, shl(64, h))
                            g := add(t1, xor(xor(shr(28, aa), shr(34, aa)), shr(39, aa)))
                        }
                        g := and(add(g, or(and(h, a), and(b, or(h, a)))), 0xffffffffffffffff)
                    }
                    {
                        let t1 := add(f, shr(128, mload(add(q, 0x20))))
                        {
                            let ee := or(c, shl(64, c))
                            t1 := add(t1, xor(xor(shr(14, ee), shr(18, ee)), shr(41, ee)))
                        }
                        t1 := add(t1, xor(e, and(c, xor(d, e))))
                        b := and(add(b, t1), 0xffffffffffffffff)
                        {
                            let aa := or(g, shl(64, g))
                            f := add(t1, xor(xor(shr(28, aa), shr(34, aa)), shr(39, aa)))
                        }
                        f := and(add(f, or(and(g, h), and(a, or(g, h)))), 0xffffffffffffffff)
                    }
                    {
                        let t1 := add(e, mload(add(q, 0x20)))
                        {
                            let ee := or(b, shl(64, b))
                            t1 := add(t1, xor(xor(shr(14, ee), shr(18, ee)), shr(41, ee)))
                        }
                        t1 := add(t1, xor(d, and(b, xor(c, d))))
                        a := and(add(a, t1), 0xffffffffffffffff)
                        {
                            let aa := or(f, shl(64, f))
                            e := add(t1, xor(xor(shr(28, aa), shr(34, aa)), shr(39, aa)))
                        }
                        e := and(add(e, or(and(f, g), and(h, or(f, g)))), 0xffffffffffffffff)
                    }
                    {
                        let t1 := add(d, shr(128, mload(add(q, 0x40))))
                        {
                            let ee := or(a, shl(64, a))
                            t1 := add(t1, xor(xor(shr(14, ee), shr(18, ee)), shr(41, ee)))
                        }
                        t1 := add(t1, xor(c, and(a, xor(b, c))))
                        h := and(add(h, t1), 0xffffffffffffffff)
                        {
                            let aa := or(e, shl(64, e))
                            d := add(t1, xor(xor(shr(28, aa), shr(34, aa)), shr(39, aa)))
                        }
                        d := and(add(d, or(and(e, f), and(g, or(e, f)))), 0xffffffffffffffff)
                    }
                    {
                        let t1 := add(c, mload(add(q, 0x40)))
                        {
                            let ee := or(h, shl(64, h))
                            t1 := add(t1, xor(xor(shr(14, ee), shr(18, ee)), shr(41, ee)))
                        }
                        t1 := add(t1, xor(b, and(h, xor(a, b))))
                        g := and(add(g, t1), 0xffffffffffffffff)
                        {
                            let aa := or(d, shl(64, d))
                            c := add(t1, xor(xor(shr(28, aa), shr(34, aa)), shr(39, aa)))
                        }
                        c := and(add(c, or(and(d, e), and(f, or(d, e)))), 0xffffffffffffffff)
                    }
                    {
                        let t1 := add(b, shr(128, mload(add(q, 0x60))))
                        {
                            let ee := or(g, shl(64, g))
                            t1 := add(t1, xor(xor(shr(14, ee), shr(18, ee)), shr(41, ee)))
                        }
                        t1 := add(t1, xor(a, and(g, xor(h, a))))
                        f := and(add(f, t1), 0xffffffffffffffff)
                        {
                            let aa := or(c, shl(64, c))
                            b := add(t1, xor(xor(shr(28, aa), shr(34, aa)), shr(39, aa)))
                        }
                        b := and(add(b, or(and(c, d), and(e, or(c, d)))), 0xffffffffffffffff)
                    }
                    {
                        let t1 := add(a, mload(add(q, 0x60)))
                        {
                            let ee := or(f, shl(64, f))
                            t1 := add(t1, xor(xor(shr(14, ee), shr(18, ee)), shr(41, ee)))
                        }
                        t1 := add(t1, xor(h, and(f, xor(g, h))))
                        e := and(add(e, t1), 0xffffffffffffffff)
                        {
                            let aa := or(b, shl(64, b))
                            a := add(t1, xor(xor(shr(28, aa), shr(34, aa)), shr(39, aa)))
                        }
                        a := and(add(a, or(and(b, c), and(d, or(b, c)))), 0xffffffffffffffff)
                    }
                }
                mstore(hs, and(add(mload(hs), a), 0xffffffffffffffff))
                mstore(add(hs, 0x20), and(add(mload(add(hs, 0x20)), b), 0xffffffffffffffff))
                mstore(add(hs, 0x40), and(add(mload(add(hs, 0x40)), c), 0xffffffffffffffff))
                mstore(add(hs, 0x60), and(add(mload(add(hs, 0x60)), d), 0xffffffffffffffff))
                mstore(add(hs, 0x80), and(add(mload(add(hs, 0x80)), e), 0xffffffffffffffff))
                mstore(add(hs, 0xa0), and(add(mload(add(hs, 0xa0)), f), 0xffffffffffffffff))
                mstore(add(hs, 0xc0), and(add(mload(add(hs, 0xc0)), g), 0xffffffffffffffff))
                mstore(add(hs, 0xe0), and(add(mload(add(hs, 0xe0)), h), 0xffffffffffffffff))
            }
            hi := or(or(shl(192, mload(hs)), shl(128, mload(add(hs, 0x20)))), or(shl(64, mload(add(hs, 0x40))), mload(add(hs, 0x60))))
            lo := or(or(shl(192, mload(add(hs, 0x80))), shl(128, mload(add(hs, 0xa0)))), or(shl(64, mload(add(hs, 0xc0))), mload(add(hs, 0xe0))))
        }
    }
}
