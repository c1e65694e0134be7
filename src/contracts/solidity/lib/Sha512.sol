// SPDX-License-Identifier: MIT
pragma solidity ^0.8.28;

/// @title Sha512
/// @notice SHA-512 (FIPS 180-4, sections 5.1.2, 5.3.5 and 6.4) of bytes in memory, written for the Ed25519 verifier.
/// @dev 64-bit words live in 256-bit stack slots. Sums are left unreduced until a word is stored back into the
/// working variables (the low 64 bits of a sum depend only on the low 64 bits of its terms), and a rotation of one
/// word uses its doubled form x | x << 64, whose bits n..n+63 are rotr(x, n). The message schedule is computed two
/// words at a time: W[2j] in bits 128..191 and W[2j+1] in bits 0..63 of one slot (a "pair"); carries and shifted-out
/// bits of one lane land in the 64 free bits above it, which one mask clears, so one set of shifts and XORs serves
/// both words. The rounds are written out two per iteration with six of the eight working variables on the stack
/// and the other two in a small ring in memory (see compress): that layout keeps the optimizer from spilling
/// variables to memory or duplicating expressions across rounds.
library Sha512 {
    /// @notice Bytes of scratch memory hash() needs at `work`.
    uint256 internal constant WORK_BYTES = 0xc00;

    /// @notice SHA-512 of the `len` bytes at `ptr`.
    /// @dev Pads in place: the caller must own the memory from ptr + len up to the next 128-byte boundary that leaves
    /// room for the 17 padding bytes, plus 16 bytes more. `work` points at WORK_BYTES of scratch memory: round
    /// constants and message schedule (as pairs, 0x500 bytes each), the hash state (0x100) and a ring of the last
    /// four rounds' a and e (0x100).
    /// @return hi the digest's first 32 bytes and @return lo its last 32 bytes, as big-endian words
    function hash(uint256 ptr, uint256 len, uint256 work) internal pure returns (uint256 hi, uint256 lo) {
        assembly ("memory-safe") {
            // Message schedule (6.4.2 step 1) of the block at blk: 40 pairs at w.
            function expand(blk, w) {
                let lanes := 0x0000000000000000ffffffffffffffff0000000000000000ffffffffffffffff
                for { let j := 0 } lt(j, 0x100) { j := add(j, 0x20) } {
                    let x := shr(128, mload(add(blk, shr(1, j)))) // W[2j] << 64 | W[2j+1]
                    x := or(shl(64, and(x, not(0xffffffffffffffff))), and(x, 0xffffffffffffffff))
                    mstore(add(w, j), x)
                }
                for { let q := add(w, 0x100) } lt(q, add(w, 0x500)) { q := add(q, 0x20) } {
                    let w2 := mload(sub(q, 0x20)) // W[2j-2], W[2j-1]
                    let w16 := mload(sub(q, 0x100)) // W[2j-16], W[2j-15]
                    let w7 := or(shl(128, mload(sub(q, 0x80))), shr(128, mload(sub(q, 0x60)))) // W[2j-7], W[2j-6]
                    let w15 := or(shl(128, w16), shr(128, mload(sub(q, 0xe0)))) // W[2j-15], W[2j-14]
                    // σ1 = rotr 19 ^ rotr 61 ^ shr 6 and σ0 = rotr 1 ^ rotr 8 ^ shr 7, on both lanes at once
                    let x := xor(xor(xor(shr(19, w2), shl(45, w2)), xor(shr(61, w2), shl(3, w2))), shr(6, w2))
                    x := add(
                        and(x, lanes),
                        and(xor(xor(xor(shr(1, w15), shl(63, w15)), xor(shr(8, w15), shl(56, w15))), shr(7, w15)),
                            lanes)
                    )
                    x := and(add(add(x, w7), w16), lanes)
                    mstore(q, x)
                }
            }

            // The 80 rounds (6.4.2 steps 2 to 4) of one block, added into the hash state at hs; w points at the
            // schedule pairs, the constant pairs are 0x500 bytes below (the round of a pair's low lane adds the whole
            // pair K + W, whose high lane only adds bits above 64). T1 = h + Σ1(e) + Ch(e, f, g) + K[t] + W[t] and
            // T2 = Σ0(a) + Maj(a, b, c), with Σ1 = rotr 14 ^ rotr 18 ^ rotr 41 and Σ0 = rotr 28 ^ rotr 34 ^ rotr 39.
            // The working variables are kept doubled (x | x << 64, so a rotation is one shift; Ch and Maj of doubled
            // words are doubled, and the upper copy only adds bits above 64 to the sums). a, b, c and e, f, g stay on
            // the stack; d and h of round t are the a and e of round t - 3, which round t - 4 wrote into slot
            // (t + 1) mod 4 of a 4-slot ring (64 bytes a slot: a, then e). Round t reads that slot, then overwrites it
            // with its new a and e.
            function compress(hs, w, ring) {
                let a := mul(mload(hs), 0x10000000000000001)
                let b := mul(mload(add(hs, 0x20)), 0x10000000000000001)
                let c := mul(mload(add(hs, 0x40)), 0x10000000000000001)
                let e := mul(mload(add(hs, 0x80)), 0x10000000000000001)
                let f := mul(mload(add(hs, 0xa0)), 0x10000000000000001)
                let g := mul(mload(add(hs, 0xc0)), 0x10000000000000001)
                // slot 1: d, h (read by round 0); slot 2: c, g; slot 3: b, f; slot 0: a, e
                mstore(add(ring, 0x40), mload(add(hs, 0x60)))
                mstore(add(ring, 0x60), mload(add(hs, 0xe0)))
                mstore(add(ring, 0x80), c)
                mstore(add(ring, 0xa0), g)
                mstore(add(ring, 0xc0), b)
                mstore(add(ring, 0xe0), f)
                mstore(ring, a)
                mstore(add(ring, 0x20), e)
                // two rounds per iteration: slots 1 and 2, then 3 and 0 (`half` is 0, then 0x80)
                for { let q := w let half := 0 } lt(q, add(w, 0x500)) {
                    q := add(q, 0x20)
                    half := xor(half, 0x80)
                } {
                    let kw := add(mload(q), mload(sub(q, 0x500)))
                    {
                        let slot := add(ring, add(half, 0x40))
                        let t1 := add(add(mload(add(slot, 0x20)), shr(128, kw)), xor(g, and(e, xor(f, g))))
                        t1 := add(t1, xor(xor(shr(14, e), shr(18, e)), shr(41, e)))
                        g := f
                        f := e
                        e := mul(and(add(mload(slot), t1), 0xffffffffffffffff), 0x10000000000000001)
                        mstore(add(slot, 0x20), e)
                        t1 := add(t1, or(and(a, b), and(c, or(a, b))))
                        t1 := add(t1, xor(xor(shr(28, a), shr(34, a)), shr(39, a)))
                        c := b
                        b := a
                        a := mul(and(t1, 0xffffffffffffffff), 0x10000000000000001)
                        mstore(slot, a)
                    }
                    {
                        let slot := add(ring, and(add(half, 0x80), 0xff))
                        let t1 := add(add(mload(add(slot, 0x20)), kw), xor(g, and(e, xor(f, g))))
                        t1 := add(t1, xor(xor(shr(14, e), shr(18, e)), shr(41, e)))
                        g := f
                        f := e
                        e := mul(and(add(mload(slot), t1), 0xffffffffffffffff), 0x10000000000000001)
                        mstore(add(slot, 0x20), e)
                        t1 := add(t1, or(and(a, b), and(c, or(a, b))))
                        t1 := add(t1, xor(xor(shr(28, a), shr(34, a)), shr(39, a)))
                        c := b
                        b := a
                        a := mul(and(t1, 0xffffffffffffffff), 0x10000000000000001)
                        mstore(slot, a)
                    }
                }
                // after round 79, slot 1 holds the a and e of round 77: d and h
                mstore(hs, and(add(mload(hs), a), 0xffffffffffffffff))
                mstore(add(hs, 0x20), and(add(mload(add(hs, 0x20)), b), 0xffffffffffffffff))
                mstore(add(hs, 0x40), and(add(mload(add(hs, 0x40)), c), 0xffffffffffffffff))
                mstore(add(hs, 0x60), and(add(mload(add(hs, 0x60)), mload(add(ring, 0x40))), 0xffffffffffffffff))
                mstore(add(hs, 0x80), and(add(mload(add(hs, 0x80)), e), 0xffffffffffffffff))
                mstore(add(hs, 0xa0), and(add(mload(add(hs, 0xa0)), f), 0xffffffffffffffff))
                mstore(add(hs, 0xc0), and(add(mload(add(hs, 0xc0)), g), 0xffffffffffffffff))
                mstore(add(hs, 0xe0), and(add(mload(add(hs, 0xe0)), mload(add(ring, 0x60))), 0xffffffffffffffff))
            }

            // Padding (5.1.2): 0x80, zeros, then the bit length as a 128-bit big-endian number ending the last block.
            let padded := and(add(len, 0x90), not(0x7f))
            calldatacopy(add(ptr, len), calldatasize(), sub(padded, len)) // zeros (calldata reads past its end as 0)
            mstore8(add(ptr, len), 0x80)
            mstore(add(ptr, sub(padded, 0x10)), shl(128, shl(3, len)))

            // K[2j] << 128 | K[2j+1] (4.2.3): the first 64 bits of the fractional parts of the cube roots of the
            // first 80 primes
            mstore(add(work, 0x0), 0x0000000000000000428a2f98d728ae2200000000000000007137449123ef65cd)
            mstore(add(work, 0x20), 0x0000000000000000b5c0fbcfec4d3b2f0000000000000000e9b5dba58189dbbc)
            mstore(add(work, 0x40), 0x00000000000000003956c25bf348b538000000000000000059f111f1b605d019)
            mstore(add(work, 0x60), 0x0000000000000000923f82a4af194f9b0000000000000000ab1c5ed5da6d8118)
            mstore(add(work, 0x80), 0x0000000000000000d807aa98a3030242000000000000000012835b0145706fbe)
            mstore(add(work, 0xa0), 0x0000000000000000243185be4ee4b28c0000000000000000550c7dc3d5ffb4e2)
            mstore(add(work, 0xc0), 0x000000000000000072be5d74f27b896f000000000000000080deb1fe3b1696b1)
            mstore(add(work, 0xe0), 0x00000000000000009bdc06a725c712350000000000000000c19bf174cf692694)
            mstore(add(work, 0x100), 0x0000000000000000e49b69c19ef14ad20000000000000000efbe4786384f25e3)
            mstore(add(work, 0x120), 0x00000000000000000fc19dc68b8cd5b50000000000000000240ca1cc77ac9c65)
            mstore(add(work, 0x140), 0x00000000000000002de92c6f592b027500000000000000004a7484aa6ea6e483)
            mstore(add(work, 0x160), 0x00000000000000005cb0a9dcbd41fbd4000000000000000076f988da831153b5)
            mstore(add(work, 0x180), 0x0000000000000000983e5152ee66dfab0000000000000000a831c66d2db43210)
            mstore(add(work, 0x1a0), 0x0000000000000000b00327c898fb213f0000000000000000bf597fc7beef0ee4)
            mstore(add(work, 0x1c0), 0x0000000000000000c6e00bf33da88fc20000000000000000d5a79147930aa725)
            mstore(add(work, 0x1e0), 0x000000000000000006ca6351e003826f0000000000000000142929670a0e6e70)
            mstore(add(work, 0x200), 0x000000000000000027b70a8546d22ffc00000000000000002e1b21385c26c926)
            mstore(add(work, 0x220), 0x00000000000000004d2c6dfc5ac42aed000000000000000053380d139d95b3df)
            mstore(add(work, 0x240), 0x0000000000000000650a73548baf63de0000000000000000766a0abb3c77b2a8)
            mstore(add(work, 0x260), 0x000000000000000081c2c92e47edaee6000000000000000092722c851482353b)
            mstore(add(work, 0x280), 0x0000000000000000a2bfe8a14cf103640000000000000000a81a664bbc423001)
            mstore(add(work, 0x2a0), 0x0000000000000000c24b8b70d0f897910000000000000000c76c51a30654be30)
            mstore(add(work, 0x2c0), 0x0000000000000000d192e819d6ef52180000000000000000d69906245565a910)
            mstore(add(work, 0x2e0), 0x0000000000000000f40e35855771202a0000000000000000106aa07032bbd1b8)
            mstore(add(work, 0x300), 0x000000000000000019a4c116b8d2d0c800000000000000001e376c085141ab53)
            mstore(add(work, 0x320), 0x00000000000000002748774cdf8eeb99000000000000000034b0bcb5e19b48a8)
            mstore(add(work, 0x340), 0x0000000000000000391c0cb3c5c95a6300000000000000004ed8aa4ae3418acb)
            mstore(add(work, 0x360), 0x00000000000000005b9cca4f7763e3730000000000000000682e6ff3d6b2b8a3)
            mstore(add(work, 0x380), 0x0000000000000000748f82ee5defb2fc000000000000000078a5636f43172f60)
            mstore(add(work, 0x3a0), 0x000000000000000084c87814a1f0ab7200000000000000008cc702081a6439ec)
            mstore(add(work, 0x3c0), 0x000000000000000090befffa23631e280000000000000000a4506cebde82bde9)
            mstore(add(work, 0x3e0), 0x0000000000000000bef9a3f7b2c679150000000000000000c67178f2e372532b)
            mstore(add(work, 0x400), 0x0000000000000000ca273eceea26619c0000000000000000d186b8c721c0c207)
            mstore(add(work, 0x420), 0x0000000000000000eada7dd6cde0eb1e0000000000000000f57d4f7fee6ed178)
            mstore(add(work, 0x440), 0x000000000000000006f067aa72176fba00000000000000000a637dc5a2c898a6)
            mstore(add(work, 0x460), 0x0000000000000000113f9804bef90dae00000000000000001b710b35131c471b)
            mstore(add(work, 0x480), 0x000000000000000028db77f523047d84000000000000000032caab7b40c72493)
            mstore(add(work, 0x4a0), 0x00000000000000003c9ebe0a15c9bebc0000000000000000431d67c49c100d4c)
            mstore(add(work, 0x4c0), 0x00000000000000004cc5d4becb3e42b60000000000000000597f299cfc657e2a)
            mstore(add(work, 0x4e0), 0x00000000000000005fcb6fab3ad6faec00000000000000006c44198c4a475817)
            // Initial hash value (5.3.5): the first 64 bits of the fractional parts of the square roots of the first
            // 8 primes.
            let hs := add(work, 0xa00)
            mstore(hs, 0x6a09e667f3bcc908)
            mstore(add(hs, 0x20), 0xbb67ae8584caa73b)
            mstore(add(hs, 0x40), 0x3c6ef372fe94f82b)
            mstore(add(hs, 0x60), 0xa54ff53a5f1d36f1)
            mstore(add(hs, 0x80), 0x510e527fade682d1)
            mstore(add(hs, 0xa0), 0x9b05688c2b3e6c1f)
            mstore(add(hs, 0xc0), 0x1f83d9abfb41bd6b)
            mstore(add(hs, 0xe0), 0x5be0cd19137e2179)

            for { let end := add(ptr, padded) } lt(ptr, end) { ptr := add(ptr, 0x80) } {
                expand(ptr, add(work, 0x500))
                compress(hs, add(work, 0x500), add(work, 0xb00))
            }
            hi := or(
                or(shl(192, mload(hs)), shl(128, mload(add(hs, 0x20)))),
                or(shl(64, mload(add(hs, 0x40))), mload(add(hs, 0x60)))
            )
            lo := or(
                or(shl(192, mload(add(hs, 0x80))), shl(128, mload(add(hs, 0xa0)))),
                or(shl(64, mload(add(hs, 0xc0))), mload(add(hs, 0xe0)))
            )
        }
    }
}
