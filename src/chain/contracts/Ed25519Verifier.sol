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
/// How it stays cheap (about 0.1 M gas for a 32-byte message):
/// - SHA-512 in 64-bit lanes with lazy masking (lib/Sha512.sol);
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
        uint256 input;
        assembly ("memory-safe") {
            work := mload(0x40)
            input := add(work, 0x1000)
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
            let p := 0x7fffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffed
            mstore(0, p)

            // Width-w NAF of k into byte `lane` of the 4-byte digit slots (one slot per bit position). A digit byte is
            // |d| (odd, < 2^(w-1)) with 0x80 set when d < 0. Returns the highest position written (0 if none).
            function wnaf(k_, w, digits, lane) -> top {
                let window := shl(w, 1)
                let half := shr(1, window)
                for { let pos := 0 } k_ { } {
                    if and(k_, 1) {
                        let d := and(k_, sub(window, 1))
                        switch lt(d, half)
                        case 1 {
                            k_ := sub(k_, d)
                            mstore8(add(digits, add(shl(2, pos), lane)), d)
                        }
                        default {
                            k_ := add(k_, sub(window, d))
                            mstore8(add(digits, add(shl(2, pos), lane)), or(sub(window, d), 0x80))
                        }
                        top := pos
                        k_ := shr(w, k_)
                        pos := add(pos, w)
                        continue
                    }
                    k_ := shr(1, k_)
                    pos := add(pos, 1)
                }
            }

            // (X1:Y1:Z1:T1) + (+-) the table point at `e`, stored as (Y+X, Y-X, 2Z, 2dT).
            function addProjective(x1, y1, z1, t1, e, negative) -> x3, y3, z3, t3 {
                let pp := mload(0)
                let n := shl(5, negative) // -(x, y) = (-x, y) swaps Y+X and Y-X and negates T
                let a := mulmod(add(y1, sub(pp, x1)), mload(add(e, xor(0x20, n))), pp)
                let b := mulmod(add(y1, x1), mload(add(e, n)), pp)
                let c := mulmod(t1, mload(add(e, 0x60)), pp)
                if negative { c := sub(pp, c) }
                let d := mulmod(z1, mload(add(e, 0x40)), pp)
                let ee := add(b, sub(pp, a))
                let f := add(d, sub(pp, c))
                let g := add(d, c)
                let h := add(b, a)
                x3 := mulmod(ee, f, pp)
                y3 := mulmod(g, h, pp)
                z3 := mulmod(f, g, pp)
                t3 := mulmod(ee, h, pp)
            }

            // (X1:Y1:Z1:T1) + (+-) the affine table point at code offset `off`, stored as (y+x, y-x, 2dxy).
            function addAffine(x1, y1, z1, t1, off, negative) -> x3, y3, z3, t3 {
                let pp := mload(0)
                let s := mload(0x40) // 0x60 bytes of scratch at the free memory pointer
                codecopy(s, off, 0x60)
                let n := shl(5, negative)
                let a := mulmod(add(y1, sub(pp, x1)), mload(add(s, xor(0x20, n))), pp)
                let b := mulmod(add(y1, x1), mload(add(s, n)), pp)
                let c := mulmod(t1, mload(add(s, 0x40)), pp)
                if negative { c := sub(pp, c) }
                let d := addmod(z1, z1, pp)
                let ee := add(b, sub(pp, a))
                let f := add(d, sub(pp, c))
                let g := add(d, c)
                let h := add(b, a)
                x3 := mulmod(ee, f, pp)
                y3 := mulmod(g, h, pp)
                z3 := mulmod(f, g, pp)
                t3 := mulmod(ee, h, pp)
            }

            // Doubling, dbl-2008-hwcd with a = -1, every intermediate negated (the results are unchanged).
            function double(x1, y1, z1) -> x3, y3, z3, t3 {
                let pp := mload(0)
                let a := mulmod(x1, x1, pp)
                let b := mulmod(y1, y1, pp)
                let c := mulmod(add(z1, z1), z1, pp)
                let s := add(x1, y1)
                let h := addmod(a, b, pp)
                let ee := add(h, sub(pp, mulmod(s, s, pp)))
                let g := addmod(a, sub(pp, b), pp)
                let f := add(g, c)
                x3 := mulmod(ee, f, pp)
                y3 := mulmod(g, h, pp)
                z3 := mulmod(f, g, pp)
                t3 := mulmod(ee, h, pp)
            }

            // The 8 odd multiples P, 3P, ..., 15P of the affine point (x, y) at `e`, as (Y+X, Y-X, 2Z, 2dT).
            function oddMultiples(e, x, y) {
                let pp := 0x7fffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffed
                let k2 := 0x2406d9dc56dffce7198e80f2eef3d13000e0149a8283b156ebd69b9426b2f159 // 2d
                let x1 := x
                let y1 := y
                let z1 := 1
                let t1 := mulmod(x, y, pp)
                let x2, y2, z2, t2 := double(x, y, 1)
                let two := add(e, 0x400) // 2P in the same form, in the 129th..160th bytes past the table
                mstore(two, add(y2, x2))
                mstore(add(two, 0x20), add(y2, sub(pp, x2)))
                mstore(add(two, 0x40), add(z2, z2))
                mstore(add(two, 0x60), mulmod(k2, t2, pp))
                for { let end := add(e, 0x400) } 1 { } {
                    mstore(e, add(y1, x1))
                    mstore(add(e, 0x20), add(y1, sub(pp, x1)))
                    mstore(add(e, 0x40), add(z1, z1))
                    mstore(add(e, 0x60), mulmod(k2, t1, pp))
                    e := add(e, 0x80)
                    if eq(e, end) { break }
                    x1, y1, z1, t1 := addProjective(x1, y1, z1, t1, two, 0)
                }
            }

            // Half-size scalars: extended Euclid on (L, k) until the remainder r1 < 2^126. Then r1 = +-t1 k (mod L)
            // (the sign alternates: `neg` means -) with t1 <= L / 2^126 < 2^127.
            let r0 := 0x1000000000000000000000000000000014def9dea2f79cd65812631a5cf5d3ed
            let r1 := k
            let t0 := 0
            let t1 := 1
            let neg := 0
            for { } iszero(lt(r1, 0x40000000000000000000000000000000)) { } {
                let q := div(r0, r1)
                let r2 := sub(r0, mul(q, r1))
                r0 := r1
                r1 := r2
                let t2 := add(t0, mul(q, t1))
                t0 := t1
                t1 := t2
                neg := iszero(neg)
            }
            // X = [S]B - R - [k]A; [t1]X = [u]B - [t1]R - [+-r1]A (up to 8-torsion), u = t1 S mod L
            let u := mulmod(t1, scalar, 0x1000000000000000000000000000000014def9dea2f79cd65812631a5cf5d3ed)

            let m := mload(0x40)
            let tableA := add(m, 0x60) // m..m+0x5f: scratch of addAffine
            let tableR := add(m, 0x4e0)
            let digits := add(m, 0x960)
            calldatacopy(digits, calldatasize(), 0x220) // zeros
            // -[+-r1]A = [r1](-+A): A itself when the sign is -, else -A; and -[t1]R = [t1](-R)
            switch neg
            case 0 { oddMultiples(tableA, mod(sub(p, ax), p), ay) }
            default { oddMultiples(tableA, ax, ay) }
            oddMultiples(tableR, mod(sub(p, rx), p), ry)

            let top := wnaf(and(u, 0x7fffffffffffffffffffffffffffffff), 8, digits, 0)
            let top2 := wnaf(shr(127, u), 8, digits, 1)
            if gt(top2, top) { top := top2 }
            top2 := wnaf(t1, 5, digits, 2)
            if gt(top2, top) { top := top2 }
            top2 := wnaf(r1, 5, digits, 3)
            if gt(top2, top) { top := top2 }

            // Straus: one doubling per position, then the additions of the digits at that position.
            let x := 0
            let y := 1
            let z := 1
            let t := 0
            let tablesHigh := add(tables, 6144) // [2^127]B
            for { let pos := top } 1 { pos := sub(pos, 1) } {
                x, y, z, t := double(x, y, z)
                let slot := shr(224, mload(add(digits, shl(2, pos))))
                if slot {
                    let dg := byte(28, slot)
                    if dg { x, y, z, t := addAffine(x, y, z, t, add(tables, mul(and(dg, 0x7e), 48)), shr(7, dg)) }
                    dg := byte(29, slot)
                    if dg { x, y, z, t := addAffine(x, y, z, t, add(tablesHigh, mul(and(dg, 0x7e), 48)), shr(7, dg)) }
                    dg := byte(30, slot)
                    if dg { x, y, z, t := addProjective(x, y, z, t, add(tableR, shl(6, and(dg, 0x7e))), shr(7, dg)) }
                    dg := byte(31, slot)
                    if dg { x, y, z, t := addProjective(x, y, z, t, add(tableA, shl(6, and(dg, 0x7e))), shr(7, dg)) }
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
