// SPDX-License-Identifier: MIT
pragma solidity ^0.8.28;

/// @notice Turns a document date string into a unix timestamp (UTC midnight). Never reverts: anything it cannot
/// read yields 0, which the registry treats as "no document cap".
library DocumentDate {
    uint256 private constant SECONDS_PER_DAY = 86_400;
    /// @dev Days before each month of a common year, 16 bits per month from January; entry 12 is the year length.
    uint256 private constant DAYS_BEFORE_MONTH = 0x16d014e0130011100f300d400b500970078005a003b001f0000;
    /// @dev Leap days in years 1..1969, so leap days since the epoch = _leapDaysUpTo(year - 1) - this.
    uint256 private constant LEAP_DAYS_BEFORE_1970 = 477;
    uint256 private constant INVALID = 100;

    /// @notice Accepts "DD-MM-YY" (what Hub V2's formatter emits) and "YYMMDD" (raw MRZ order).
    /// Two-digit years below 50 are 20YY, others 19YY; dates before 1970 and invalid calendar dates return 0.
    function toTimestamp(string memory date) internal pure returns (uint256) {
        bytes memory b = bytes(date);
        uint256 yy;
        uint256 mm;
        uint256 dd;
        if (b.length == 8) {
            if (b[2] != "-" || b[5] != "-") return 0;
            (dd, mm, yy) = (_twoDigits(b, 0), _twoDigits(b, 3), _twoDigits(b, 6));
        } else if (b.length == 6) {
            (yy, mm, dd) = (_twoDigits(b, 0), _twoDigits(b, 2), _twoDigits(b, 4));
        } else {
            return 0;
        }
        if (yy == INVALID || mm < 1 || mm > 12 || dd < 1) return 0;
        // Bounded values from here on (year < 2050, month 1..12, day < 100): nothing can overflow.
        unchecked {
            uint256 year = yy < 50 ? 2000 + yy : 1900 + yy;
            if (year < 1970) return 0;
            uint256 leapDay = _isLeap(year) ? 1 : 0;
            uint256 daysBefore = _daysBeforeMonth(mm);
            uint256 monthLength = _daysBeforeMonth(mm + 1) - daysBefore + (mm == 2 ? leapDay : 0);
            if (dd > monthLength) return 0;
            uint256 day = (year - 1970) * 365 + _leapDaysUpTo(year - 1) - LEAP_DAYS_BEFORE_1970 + daysBefore
                + (mm > 2 ? leapDay : 0) + dd - 1;
            return day * SECONDS_PER_DAY;
        }
    }

    /// @dev INVALID (outside every valid range) when either character is not a digit. Callers keep i + 1 in bounds.
    function _twoDigits(bytes memory b, uint256 i) private pure returns (uint256) {
        uint256 hi;
        uint256 lo;
        assembly ("memory-safe") {
            let word := mload(add(add(b, 32), i))
            hi := byte(0, word)
            lo := byte(1, word)
        }
        unchecked {
            hi -= 0x30; // wraps below '0', so a single comparison rejects both sides
            lo -= 0x30;
            return hi > 9 || lo > 9 ? INVALID : hi * 10 + lo;
        }
    }

    /// @dev month 1..13; 13 gives the length of a common year.
    function _daysBeforeMonth(uint256 month) private pure returns (uint256) {
        unchecked {
            return (DAYS_BEFORE_MONTH >> (16 * (month - 1))) & 0xffff;
        }
    }

    function _isLeap(uint256 year) private pure returns (bool) {
        return (year % 4 == 0 && year % 100 != 0) || year % 400 == 0;
    }

    function _leapDaysUpTo(uint256 year) private pure returns (uint256) {
        unchecked {
            return year / 4 - year / 100 + year / 400;
        }
    }
}
