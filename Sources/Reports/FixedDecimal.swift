import Foundation

/// `String(format: "%.Nf", value)`, byte for byte, without the cost of Foundation's formatter
/// (a CFString and a va_list per call: it was the largest single cost of endpoints.csv and of
/// report.html's charts). The value's exact binary fraction is scaled by 10^N in 128-bit
/// integer arithmetic and rounded half to even, as glibc's and Darwin's printf round;
/// values this path does not cover (non-finite, 2^43 or more, more than 6 decimals) go to
/// `String(format:)` itself.
enum FixedDecimal {
    private static let powersOfTen: [UInt64] = [1, 10, 100, 1_000, 10_000, 100_000, 1_000_000]

    static func format(_ value: Double, decimals: Int) -> String {
        withText(value, decimals: decimals) { String(decoding: $0, as: UTF8.self) }
    }

    /// round(|value| · 10^decimals), half to even, from the value's exact binary fraction;
    /// nil for the values this path does not cover.
    private static func scaledMagnitude(_ value: Double, decimals: Int) -> UInt64? {
        let magnitude = value.magnitude
        guard value.isFinite, decimals >= 0, decimals < powersOfTen.count, magnitude < 0x1p43 else { return nil }
        let scale = powersOfTen[decimals]
        var scaled: UInt64 = 0
        if magnitude != 0 {
            // |value| = significand · 2^exponent exactly.
            let isNormal = magnitude.exponentBitPattern != 0
            let significand =
                isNormal ? (1 << 52) | magnitude.significandBitPattern : magnitude.significandBitPattern
            let exponent = isNormal ? Int(magnitude.exponentBitPattern) - 1075 : -1074
            let product = significand.multipliedFullWidth(by: scale) // < 2^73
            if exponent >= 0 {
                // |value| < 2^43 with a 53-bit significand: only 0 reaches here.
                scaled = product.low << UInt64(exponent)
            } else {
                scaled = shiftRoundingHalfToEven(high: product.high, low: product.low, by: -exponent)
            }
        }
        return scaled
    }

    /// The text of a value this path covers, written at `start` (room for
    /// `maximumLength(decimals:)` bytes); returns its length, or nil, writing nothing, for the
    /// values left to `String(format:)` (`withText` writes those).
    @inline(__always)
    static func write(_ value: Double, decimals: Int, at start: UnsafeMutablePointer<UInt8>) -> Int? {
        guard let scaled = scaledMagnitude(value, decimals: decimals) else { return nil }
        return write(scaled, decimals: decimals, negative: value.sign == .minus, at: start)
    }

    /// `body` of the text, written in a scratch buffer (by `String(format:)` for the values
    /// this path does not cover).
    static func withText<Result>(
        _ value: Double, decimals: Int, _ body: (UnsafeBufferPointer<UInt8>) -> Result
    ) -> Result {
        guard let scaled = scaledMagnitude(value, decimals: decimals) else {
            var text = String(format: "%.\(decimals)f", value)
            return text.withUTF8(body)
        }
        return withDigits(scaled, decimals: decimals, negative: value.sign == .minus, body)
    }

    /// `body` of the text of `scaled` / 10^`decimals`, with exactly `decimals` decimals after
    /// the point (none and no point for 0), after a minus if `negative`.
    static func withDigits<Result>(
        _ scaled: UInt64, decimals: Int, negative: Bool, _ body: (UnsafeBufferPointer<UInt8>) -> Result
    ) -> Result {
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: maximumLength(decimals: decimals)) { text -> Result in
            let length = write(scaled, decimals: decimals, negative: negative, at: text.baseAddress!)
            return body(UnsafeBufferPointer(rebasing: text[..<length]))
        }
    }

    /// Bytes `write` takes at most: UInt64's 20 digits, the point, the sign and the decimals.
    @inline(__always)
    static func maximumLength(decimals: Int) -> Int { 22 + decimals }

    /// Writes the text of `scaled` / 10^`decimals` (as `withDigits` gives it) at `start`, which
    /// has room for `maximumLength(decimals:)` bytes; returns its length. Written in place, so a
    /// writer with a buffer of its own (report.json's, a CSV row) copies no digits.
    @inline(__always)
    static func write(
        _ scaled: UInt64, decimals: Int, negative: Bool, at start: UnsafeMutablePointer<UInt8>
    ) -> Int {
        // The length first, then the digits from the end: the decimals, the point, the whole
        // part (at least one digit), the sign.
        let wholeDigits = max(digitCount(scaled) - decimals, 1)
        let length = (negative ? 1 : 0) + wholeDigits + (decimals > 0 ? decimals + 1 : 0)
        var position = start + length
        var rest = scaled
        if decimals > 0 {
            position = writeDigits(of: &rest, count: decimals, before: position) - 1
            position.pointee = UInt8(ascii: ".")
        }
        _ = writeDigits(of: &rest, count: wholeDigits, before: position)
        if negative { start.pointee = UInt8(ascii: "-") }
        return length
    }

    /// The last `count` decimal digits of `value`, written before `end`, two per division;
    /// `value` keeps the digits above them. Returns where the digits begin.
    @inline(__always)
    private static func writeDigits(
        of value: inout UInt64, count: Int, before end: UnsafeMutablePointer<UInt8>
    ) -> UnsafeMutablePointer<UInt8> {
        let pairs = digitPairs.utf8Start
        var position = end
        var left = count
        while left >= 2 {
            let pair = 2 * Int(value % 100)
            value /= 100
            position -= 2
            position[0] = pairs[pair]
            position[1] = pairs[pair + 1]
            left -= 2
        }
        if left == 1 {
            position -= 1
            position.pointee = UInt8(ascii: "0") &+ UInt8(truncatingIfNeeded: value % 10)
            value /= 10
        }
        return position
    }

    /// 00, 01, ... 99, each number's two digits.
    private static let digitPairs: StaticString = """
        0001020304050607080910111213141516171819202122232425262728293031323334353637383940414243444546474849\
        5051525354555657585960616263646566676869707172737475767778798081828384858687888990919293949596979899
        """

    /// Decimal digits of `value` (1 for 0): log10 estimated from the bit length (1233 / 4096
    /// is just over log10 2), then corrected by one comparison.
    @inline(__always)
    static func digitCount(_ value: UInt64) -> Int {
        let bits = 64 - value.leadingZeroBitCount
        let estimate = (bits &* 1233) >> 12 // 0...19: the digits, or one more
        return value < allPowersOfTen[estimate] ? max(estimate, 1) : estimate + 1
    }

    /// 10^0 ... 10^19, every power of ten UInt64 holds.
    private static let allPowersOfTen: [UInt64] = [
        1, 10, 100, 1_000, 10_000, 100_000, 1_000_000, 10_000_000, 100_000_000, 1_000_000_000, 10_000_000_000,
        100_000_000_000, 1_000_000_000_000, 10_000_000_000_000, 100_000_000_000_000, 1_000_000_000_000_000,
        10_000_000_000_000_000, 100_000_000_000_000_000, 1_000_000_000_000_000_000, 10_000_000_000_000_000_000,
    ]

    /// (high · 2^64 + low) / 2^shift, rounded half to even; the quotient fits 64 bits here
    /// (|value| < 2^43 and 10^6 < 2^20).
    private static func shiftRoundingHalfToEven(high: UInt64, low: UInt64, by shift: Int) -> UInt64 {
        if shift >= 128 { return 0 } // below 2^-55 of the last decimal: rounds to 0
        var quotient: UInt64
        var remainderAboveHalf: Bool
        var remainderIsHalf: Bool
        if shift < 64 {
            quotient = (high << UInt64(64 - shift)) | (low >> UInt64(shift))
            let remainder = low & ((1 << UInt64(shift)) - 1)
            let half: UInt64 = 1 << UInt64(shift - 1)
            remainderAboveHalf = remainder > half
            remainderIsHalf = remainder == half
        } else if shift == 64 {
            quotient = high
            remainderAboveHalf = low > 1 << 63
            remainderIsHalf = low == 1 << 63
        } else {
            let highShift = UInt64(shift - 64)
            quotient = high >> highShift
            let remainderHigh = high & ((1 << highShift) - 1)
            let halfHigh: UInt64 = 1 << (highShift - 1)
            remainderAboveHalf = remainderHigh > halfHigh || (remainderHigh == halfHigh && low > 0)
            remainderIsHalf = remainderHigh == halfHigh && low == 0
        }
        if remainderAboveHalf || (remainderIsHalf && quotient & 1 == 1) { quotient += 1 }
        return quotient
    }
}

/// `String(value)`'s bytes, handed to `body` from the stack: the report files write hundreds of
/// thousands of numbers, and a String per number cost more than the rest of their cells.
@inline(__always)
func withDecimalText<Result>(_ value: Int, _ body: (UnsafeBufferPointer<UInt8>) -> Result) -> Result {
    FixedDecimal.withDigits(UInt64(value.magnitude), decimals: 0, negative: value < 0, body)
}
