// SPDX-License-Identifier: MIT
pragma solidity ^0.8.28;

import {IEd25519Verifier} from "./interfaces/IEd25519Verifier.sol";
import {Curve25519} from "./lib/Curve25519.sol";
import {Sha512} from "./lib/Sha512.sol";

/// @title Ed25519Verifier
/// @notice Ed25519 signature verification (RFC 8032 section 5.1.7), written from the RFC.
///
/// Semantics: strict encodings and the cofactored equation, the same as the noble-curves ed25519.verify with
/// { zip215: false } (the RFC 8032 / FIPS 186-5 mode):
/// - S must be canonical (0 <= S < L);
/// - A and R must be canonical encodings of curve points (y < p, and no "negative zero" x);
/// - A must not have small order (noble's strict mode refuses such keys: they would verify unrelated signatures);
/// - the check is the cofactored [8][S]B = [8]R + [8][k]A, k = SHA-512(R || A || M) as a little-endian number.
/// Why cofactored: it is the equation RFC 8032 states (the cofactorless [S]B = R + [k]A is allowed as "sufficient"),
/// it is what noble checks in both of its modes, and it is what makes the half-size scalars below possible. The two
/// only differ on signatures whose R or A carries a small-order component, which a signer can craft for its own key
/// but which never lets anyone else sign: for honestly generated signatures both accept.
/// Malformed lengths cannot reach this contract: the key, R and S are fixed 32-byte arguments, and the message is
/// arbitrary bytes (the registry passes 32).
///
/// How it stays cheap (about 162,000 gas for a 32-byte message, `npm run bench:gas`; the deployed Celo registry's
/// verifier is documented at 456,000 to 990,000):
/// - SHA-512 with lazy masking, doubled words for rotations and a two-lane message schedule (lib/Sha512.sol);
/// - field arithmetic with the native mulmod/addmod, inputs left unreduced below 2^256 wherever mulmod follows;
///   the two square roots of point decoding are one modexp-precompile call each, and there is no inversion at all;
/// - half-size scalars: extended Euclid on (L, k), stopped half way, gives t, r below 2^127 with r = t k (mod L).
///   Multiplying the equation by t, the check becomes [8]([t S mod L]B - [t]R - [r]A) = 0: a four-scalar
///   multiplication (t S split at bit 127 over B and [2^127]B) with 127 doublings instead of 253. t is not a multiple
///   of L, so [8][t]X = 0 holds exactly when [8]X = 0 for X = [S]B - R - [k]A: nothing is lost;
/// - interleaved width-w NAF (Straus): A and R get tables of 8 odd multiples computed per call (w = 5); B and
///   [2^127]B use 64 precomputed odd multiples each (w = 8), kept as data behind the code and read with codecopy;
/// - extended twisted Edwards coordinates with complete formulas, T computed only when an addition follows;
/// - the result is tested for the 8-torsion directly (X = 0, Y = 0 or Y^2 = y8^2 Z^2) instead of three doublings
///   and a comparison with the identity.
///
/// The fixed-base tables are appended to this contract's code at deployment: deploy Ed25519VerifierDeployer, whose
/// constructor computes them from B and returns this contract's runtime code followed by them. Deployed any other
/// way, verify reverts with BaseTablesMissing.
contract Ed25519Verifier is IEd25519Verifier {
    /// @dev (y + x) mod p of B: the first word of the tables
    uint256 private constant TABLES_MARK = 0x07cf9d3a33d4ba65270b4898643d42c2cf932dc6fb8c0e192fbc93c6f58c3b85;

    error BaseTablesMissing();

    /// @inheritdoc IEd25519Verifier
    function verify(bytes32 publicKey, bytes32 r, bytes32 s, bytes calldata message) external view returns (bool) {
        uint256 tables = _tables();
        uint256 scalar = Curve25519.bswap(uint256(s));
        if (scalar >= Curve25519.L) return false;
        (bool ok, uint256 ax, uint256 ay) = Curve25519.decodePoint(publicKey);
        if (!ok || Curve25519.hasSmallOrder(ay)) return false;
        uint256 rx;
        uint256 ry;
        (ok, rx, ry) = Curve25519.decodePoint(r);
        if (!ok) return false;
        return _check(tables, scalar, _challenge(r, publicKey, message), ax, ay, rx, ry);
    }

    /// @dev Code offset of the fixed-base tables (the last TABLES_BYTES bytes of the code).
    function _tables() private pure returns (uint256 tables) {
        bool present;
        assembly ("memory-safe") {
            tables := sub(codesize(), 12288) // Curve25519.TABLES_BYTES
            codecopy(0, tables, 0x20)
            present := and(gt(codesize(), 12288), eq(mload(0), TABLES_MARK))
        }
        if (!present) revert BaseTablesMissing();
    }

    /// @dev k = SHA-512(R || A || M) read as a little-endian 512-bit number, mod L.
    function _challenge(bytes32 r, bytes32 publicKey, bytes calldata message) private pure returns (uint256) {
        uint256 work;
        assembly ("memory-safe") {
            work := mload(0x40)
        }
        // R || A || M after the hash's scratch memory (nothing is allocated: this is the call's last use of it)
        uint256 input = work + Sha512.WORK_BYTES;
        assembly ("memory-safe") {
            mstore(input, r)
            mstore(add(input, 0x20), publicKey)
            calldatacopy(add(input, 0x40), message.offset, message.length)
        }
        (uint256 hi, uint256 lo) = Sha512.hash(input, 64 + message.length, work);
        return addmod(
            mulmod(Curve25519.bswap(lo), Curve25519.R256_MOD_L, Curve25519.L), Curve25519.bswap(hi), Curve25519.L
        );
    }

    /// @dev The cofactored check [8]([S]B - R - [k]A) = 0 through half-size scalars (see the contract notes).
    function _check(uint256 tables, uint256 scalar, uint256 k, uint256 ax, uint256 ay, uint256 rx, uint256 ry)
        private
        pure
        returns (bool valid)
    {
        assembly ("memory-safe") {
            // p = 2^255 - 19 lives in scratch word 0 and is read from there: as a literal, the optimizer (tuned for
            // code size) would rebuild it with five instructions at each of its ~2000 uses.
            mstore(0, 0x7fffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffed)

            // Width-w NAF of k into byte `lane` of the 4-byte digit slots (one slot per bit position). A digit byte is
            // |d| (odd, < 2^(w-1)) with 0x80 set when d < 0. Returns the highest position written (0 if none). Each
            // iteration skips the zeros below the next digit (up to 4 at once: byte i of the constant is the number of
            // trailing zeros of i, for i < 16, and 4 for 0) and writes that digit, without branches.
            function wnaf(k_, w, digits, lane) -> top {
                let window := shl(w, 1)
                let half := shr(1, window)
                for { let pos := 0 } k_ { } {
                    let zeros := byte(and(k_, 0x0f), 0x0400010002000100030001000200010000000000000000000000000000000000)
                    k_ := shr(zeros, k_)
                    pos := add(pos, zeros)
                    if and(k_, 1) {
                        let d := and(k_, sub(window, 1))
                        let negative := iszero(lt(d, half))
                        // d >= half stands for d - 2^w: |d| = 2^w - d, and k - (d - 2^w) = k - d + 2^w
                        mstore8(
                            add(digits, add(shl(2, pos), lane)),
                            xor(d, mul(negative, xor(d, or(sub(window, d), 0x80))))
                        )
                        k_ := shr(w, add(sub(k_, d), mul(negative, window)))
                        top := pos
                        pos := add(pos, w)
                    }
                }
            }

            // (X1:Y1:Z1:T1) + (+-) the point at memory `e`, stored as (Y+X, Y-X, 2dT, 2Z): "add-2008-hwcd-3" (complete
            // for a = -1 and d not a square). -(x, y) = (-x, y) swaps Y+X and Y-X and negates T. The sums are left
            // unreduced (below 2p) where a mulmod consumes them.
            function addPoint(x1, y1, z1, t1, e, negative) -> x3, y3, z3, t3 {
                let p := mload(0)
                let n := shl(5, negative)
                let a := mulmod(add(y1, sub(p, x1)), mload(add(e, xor(0x20, n))), p)
                let b := mulmod(add(y1, x1), mload(add(e, n)), p)
                let c := mulmod(t1, mload(add(e, 0x40)), p)
                if negative { c := sub(p, c) }
                let d := mulmod(z1, mload(add(e, 0x60)), p)
                let ee := add(b, sub(p, a))
                let f := add(d, sub(p, c))
                let g := add(d, c)
                let h := add(b, a)
                x3 := mulmod(ee, f, p)
                y3 := mulmod(g, h, p)
                z3 := mulmod(f, g, p)
                t3 := mulmod(ee, h, p)
            }

            // The 8 odd multiples P, 3P, ..., 15P of the affine point (x, y) at `e`, as (Y+X, Y-X, 2dT, 2Z), with 2P
            // (dbl-2008-hwcd with a = -1, see the main loop) in the same form just after them.
            function oddMultiples(e, x, y) {
                let p := mload(0)
                let k2 := 0x2406d9dc56dffce7198e80f2eef3d13000e0149a8283b156ebd69b9426b2f159 // 2d
                let two := add(e, 0x400)
                {
                    let a := mulmod(x, x, p)
                    let b := mulmod(y, y, p)
                    let h := addmod(a, b, p)
                    let g := addmod(a, sub(p, b), p)
                    let f := add(g, 2)
                    let s := add(x, y)
                    let ee := add(h, sub(p, mulmod(s, s, p)))
                    let x2 := mulmod(ee, f, p)
                    let y2 := mulmod(g, h, p)
                    mstore(two, add(y2, x2))
                    mstore(add(two, 0x20), add(y2, sub(p, x2)))
                    mstore(add(two, 0x40), mulmod(k2, mulmod(ee, h, p), p))
                    let z2 := mulmod(f, g, p)
                    mstore(add(two, 0x60), add(z2, z2))
                }
                let x1 := x
                let y1 := y
                let z1 := 1
                let t1 := mulmod(x, y, p)
                for { } 1 { } {
                    mstore(e, add(y1, x1))
                    mstore(add(e, 0x20), add(y1, sub(p, x1)))
                    mstore(add(e, 0x40), mulmod(k2, t1, p))
                    mstore(add(e, 0x60), add(z1, z1))
                    e := add(e, 0x80)
                    if eq(e, two) { break }
                    x1, y1, z1, t1 := addPoint(x1, y1, z1, t1, two, 0)
                }
            }

            // Half-size scalars: extended Euclid on (L, k) until a remainder rh < 2^126, keeping the magnitude th of
            // its cofactor: rh = +-th k (mod L), with th <= L / 2^126 < 2^127 (|t_i| r_(i-1) <= L). Two steps per
            // iteration so nothing is swapped; the sign is settled at the end.
            let rh := 0x1000000000000000000000000000000014def9dea2f79cd65812631a5cf5d3ed
            let th := 0
            {
                let r1 := k
                let t1 := 1
                for { } 1 { } {
                    if lt(r1, 0x40000000000000000000000000000000) {
                        rh := r1
                        th := t1
                        break
                    }
                    let q := div(rh, r1)
                    rh := sub(rh, mul(q, r1))
                    th := add(th, mul(q, t1))
                    if lt(rh, 0x40000000000000000000000000000000) { break }
                    q := div(r1, rh)
                    r1 := sub(r1, mul(q, rh))
                    t1 := add(t1, mul(q, th))
                }
            }
            // X = [S]B - R - [k]A; [th]X = [u]B - [th]R - [+-rh]A (up to 8-torsion), u = th S mod L
            let u := mulmod(th, scalar, 0x1000000000000000000000000000000014def9dea2f79cd65812631a5cf5d3ed)
            // rh = th k (mod L) or rh = -th k: -[+-rh]A is [rh](-A) in the first case, [rh]A in the second
            let negA := eq(mulmod(th, k, 0x1000000000000000000000000000000014def9dea2f79cd65812631a5cf5d3ed), rh)

            // memory from m: 0x80 scratch for one B-table entry (its 2Z = 2 preset), the A and R tables (0x480 each,
            // 2P included), the digit slots
            let m := mload(0x40)
            mstore(add(m, 0x60), 2)
            calldatacopy(add(m, 0x980), calldatasize(), 0x220) // zero digit slots (calldata reads past its end as 0)
            // -[th]R = [th](-R)
            switch negA
            case 1 { oddMultiples(add(m, 0x80), mod(sub(mload(0), ax), mload(0)), ay) }
            default { oddMultiples(add(m, 0x80), ax, ay) }
            oddMultiples(add(m, 0x500), mod(sub(mload(0), rx), mload(0)), ry)

            let top := wnaf(and(u, 0x7fffffffffffffffffffffffffffffff), 8, add(m, 0x980), 0)
            let top2 := wnaf(shr(127, u), 8, add(m, 0x980), 1)
            if gt(top2, top) { top := top2 }
            top2 := wnaf(th, 5, add(m, 0x980), 2)
            if gt(top2, top) { top := top2 }
            top2 := wnaf(rh, 5, add(m, 0x980), 3)
            if gt(top2, top) { top := top2 }

            // Straus: one doubling per position, then the additions of that position's digits.
            let p := mload(0)
            let x := 0
            let y := 1
            let z := 1
            let t := 0
            for { let pos := top } 1 { pos := sub(pos, 1) } {
                // dbl-2008-hwcd with a = -1 and every intermediate negated (A = X^2, B = Y^2, C = 2Z^2, H = A + B,
                // G = A - B, F = G + C, E = H - (X+Y)^2; X3 = E F, Y3 = G H, Z3 = F G, T3 = E H)
                let h
                let g
                {
                    let a := mulmod(x, x, p)
                    let b := mulmod(y, y, p)
                    h := addmod(a, b, p)
                    g := addmod(a, sub(p, b), p)
                }
                let f := add(g, mulmod(add(z, z), z, p))
                {
                    let s := add(x, y)
                    x := add(h, sub(p, mulmod(s, s, p))) // E
                }
                z := mulmod(f, g, p)
                y := mulmod(g, h, p)
                let slot := shr(224, mload(add(m, add(0x980, shl(2, pos)))))
                switch slot
                case 0 { x := mulmod(x, f, p) } // T only matters to an addition
                default {
                    t := mulmod(x, h, p)
                    x := mulmod(x, f, p)
                    let dg := byte(28, slot)
                    if dg {
                        codecopy(m, add(tables, mul(and(dg, 0x7e), 48)), 0x60)
                        x, y, z, t := addPoint(x, y, z, t, m, shr(7, dg))
                    }
                    dg := byte(29, slot)
                    if dg {
                        codecopy(m, add(tables, add(6144, mul(and(dg, 0x7e), 48))), 0x60) // [2^127]B
                        x, y, z, t := addPoint(x, y, z, t, m, shr(7, dg))
                    }
                    dg := byte(30, slot)
                    if dg { x, y, z, t := addPoint(x, y, z, t, add(m, add(0x500, shl(6, and(dg, 0x7e)))), shr(7, dg)) }
                    dg := byte(31, slot)
                    if dg { x, y, z, t := addPoint(x, y, z, t, add(m, add(0x80, shl(6, and(dg, 0x7e)))), shr(7, dg)) }
                }
                if iszero(pos) { break }
            }

            // [8](x:y:z) = 0 exactly when the point is one of the 8 torsion points: x = 0 (y = +-1), y = 0 (x^2 = -1)
            // or y = +-y8 (order 8).
            let y2 := mulmod(y, y, p)
            let z2 := mulmod(mulmod(z, z, p), 0x76b9125b8bd5b257c2c2ebc2ba609c056bdf9e34b4f0a103ae4791859c155291, p)
            valid := iszero(mulmod(mulmod(x, y, p), addmod(y2, sub(p, z2), p), p))
        }
    }
}

/// @title Ed25519VerifierDeployer
/// @notice Deploying this contract deploys an Ed25519Verifier: the constructor computes the fixed-base tables from B
/// (Curve25519.baseTables) and returns Ed25519Verifier's runtime code followed by them as the new contract's code.
/// Use the Ed25519Verifier ABI with the resulting address.
contract Ed25519VerifierDeployer {
    constructor() {
        bytes memory code = bytes.concat(type(Ed25519Verifier).runtimeCode, Curve25519.baseTables());
        assembly ("memory-safe") {
            return(add(code, 0x20), mload(code))
        }
    }
}
