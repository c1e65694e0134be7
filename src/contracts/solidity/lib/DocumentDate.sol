// SPDX-License-Identifier: MIT
pragma solidity ^0.8.28;

/// @notice Turns a document date string into a unix timestamp (UTC midnight). Never reverts: anything it cannot
/// read yields 0, which the registry treats as "no document cap".
library DocumentDate {
    /// @dev Month lengths minus 28, two bits per month at bit 2 * month (common year).
    uint256 private constant MONTH_EXCESS_DAYS = 0x3bbeecc;
    /// @dev Days from 0000-03-01 to 1970-01-01 in the proleptic Gregorian calendar.
    uint256 private constant EPOCH_OFFSET_DAYS = 719_468;

    /// @notice Accepts "DD-MM-YY" (what Hub V2's formatter emits) and "YYMMDD" (raw MRZ order).
    /// Two-digit years below 50 are 20YY, others 19YY; dates before 1970 and invalid calendar dates return 0.
    function toTimestamp(string memory date) internal pure returns (uint256) {
        bytes memory b = bytes(date);
        uint256 year;
        uint256 month;
        uint256 day;
        if (b.length == 8) {
            if (b[2] != "-" || b[5] != "-") return 0;
            (day, month, year) = (_twoDigits(b, 0), _twoDigits(b, 3), _twoDigits(b, 6));
        } else if (b.length == 6) {
            (year, month, day) = (_twoDigits(b, 0), _twoDigits(b, 2), _twoDigits(b, 4));
        } else {
            return 0;
        }
        if (year > 99 || month == 0 || month > 12 || day == 0) return 0;
        // All values are small from here on; nothing can overflow or underflow.
        unchecked {
            year += year < 50 ? 2000 : 1900;
            if (year < 1970) return 0;
            bool leap = year % 4 == 0 && (year % 100 != 0 || year % 400 == 0);
            uint256 monthLength = 28 + ((MONTH_EXCESS_DAYS >> (2 * month)) & 3) + (month == 2 && leap ? 1 : 0);
            if (day > monthLength) return 0;

            // Days from civil (H. Hinnant): count in years starting on 1 March so the leap day comes last.
            if (month <= 2) year -= 1;
            uint256 yearOfEra = year % 400;
            uint256 dayOfYear = (153 * ((month + 9) % 12) + 2) / 5 + day - 1;
            uint256 dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear;
            return ((year / 400) * 146_097 + dayOfEra - EPOCH_OFFSET_DAYS) * 1 days;
        }
    }

    /// @dev 100 (outside every valid range) when either character is not a digit. Callers keep i + 1 in bounds.
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
            return hi > 9 || lo > 9 ? 100 : hi * 10 + lo;
        }
    }
}
