// SPDX-License-Identifier: MIT
pragma solidity ^0.8.28;

/// @notice Turns a document date string into a unix timestamp (UTC midnight). Never reverts: anything it cannot
/// read yields 0, which the registry treats as "no document cap".
library DocumentDate {
    uint256 private constant SECONDS_PER_DAY = 86_400;
    /// @dev Days before each month of a common year, 16 bits per month (Jan at the low end).
    uint256 private constant DAYS_BEFORE_MONTH = 0x14e0130011100f300d400b500970078005a003b001f0000;
    /// @dev Leap days in years 1..1969, so leap days since the epoch = _leapDaysUpTo(year - 1) - this.
    uint256 private constant LEAP_DAYS_BEFORE_1970 = 477;

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
        if (yy > 99) return 0;
        uint256 year = yy < 50 ? 2000 + yy : 1900 + yy;
        if (year < 1970 || mm < 1 || mm > 12 || dd < 1 || dd > _daysInMonth(year, mm)) return 0;

        uint256 day = (year - 1970) * 365 + _leapDaysUpTo(year - 1) - LEAP_DAYS_BEFORE_1970
            + ((DAYS_BEFORE_MONTH >> (16 * (mm - 1))) & 0xffff) + (mm > 2 && _isLeap(year) ? 1 : 0) + dd - 1;
        return day * SECONDS_PER_DAY;
    }

    /// @dev 100 (out of every valid range) when either character is not a digit.
    function _twoDigits(bytes memory b, uint256 i) private pure returns (uint256) {
        uint8 hi = uint8(b[i]);
        uint8 lo = uint8(b[i + 1]);
        if (hi < 0x30 || hi > 0x39 || lo < 0x30 || lo > 0x39) return 100;
        return (hi - 0x30) * 10 + (lo - 0x30);
    }

    function _isLeap(uint256 year) private pure returns (bool) {
        return (year % 4 == 0 && year % 100 != 0) || year % 400 == 0;
    }

    function _leapDaysUpTo(uint256 year) private pure returns (uint256) {
        return year / 4 - year / 100 + year / 400;
    }

    function _daysInMonth(uint256 year, uint256 month) private pure returns (uint256) {
        if (month == 2) return _isLeap(year) ? 29 : 28;
        if (month == 4 || month == 6 || month == 9 || month == 11) return 30;
        return 31;
    }
}
