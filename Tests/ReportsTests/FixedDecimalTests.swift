import Foundation
import XCTest

@testable import Reports

/// `FixedDecimal.format` against the C library's printf (through `String(format:)`), the
/// formatter it replaces: the same text for every value and number of decimals.
final class FixedDecimalTests: XCTestCase {
    private func assertMatchesPrintf(_ value: Double, file: StaticString = #filePath, line: UInt = #line) {
        for decimals in 0...6 {
            XCTAssertEqual(
                FixedDecimal.format(value, decimals: decimals), String(format: "%.\(decimals)f", value),
                "\(value) with \(decimals) decimals", file: file, line: line)
        }
    }

    func testHandPickedValues() {
        // Hand-written expectations (printf rounds the exact binary value, ties to even):
        XCTAssertEqual(FixedDecimal.format(0.5, decimals: 0), "0") // exact tie, 0 is even
        XCTAssertEqual(FixedDecimal.format(1.5, decimals: 0), "2") // exact tie, 2 is even
        XCTAssertEqual(FixedDecimal.format(2.5, decimals: 0), "2")
        XCTAssertEqual(FixedDecimal.format(0.125, decimals: 2), "0.12") // 0.125 is exact: tie, to even
        XCTAssertEqual(FixedDecimal.format(0.375, decimals: 2), "0.38")
        // 2.67499999999999982236431605997495353221893310546875
        XCTAssertEqual(FixedDecimal.format(2.675, decimals: 2), "2.67")
        // 1.00499999999999989341858963598497211933135986328125
        XCTAssertEqual(FixedDecimal.format(1.005, decimals: 2), "1.00")
        XCTAssertEqual(FixedDecimal.format(-0.001, decimals: 2), "-0.00") // the sign stays, as printf's
        XCTAssertEqual(FixedDecimal.format(-0.0, decimals: 1), "-0.0")
        XCTAssertEqual(FixedDecimal.format(0, decimals: 6), "0.000000")
        XCTAssertEqual(FixedDecimal.format(0.0000005, decimals: 6), "0.000000") // 4.99999999999999977e-07
        XCTAssertEqual(FixedDecimal.format(0.0126, decimals: 6), "0.012600")
        XCTAssertEqual(FixedDecimal.format(1234.5678, decimals: 3), "1234.568")
        // -16.8350000000000008526512829121202230453491210937500
        XCTAssertEqual(FixedDecimal.format(-16.835, decimals: 2), "-16.84")
        XCTAssertEqual(FixedDecimal.format(99.9999996, decimals: 6), "100.000000")
        for value in [
            0.5, 1.5, 2.5, 0.125, 0.375, 2.675, 1.005, -0.001, -0.0, 0, 0.0000005, 0.0126, 1234.5678, -16.835,
            99.9999996, 5e-324, 2.2250738585072014e-308, 1e-7, 0.1, 0.2, 0.3, 1.0 / 3, 2.0 / 3, 123_456.789_012_5,
            0x1p43 - 1, 0x1p43, 0x1p43 + 0.5, 1e15, -1e20, 0x1p-20, 0x1p-21 * 3, 0.05, 0.15, 0.25, 0.35, 0.45,
        ] {
            assertMatchesPrintf(value)
        }
    }

    func testExactTiesAtEveryDecimal() {
        // k / 2^j is exact in binary; with j up to 7 many of these are ties at some decimal count.
        for j in 0...7 {
            for k in 0..<300 {
                let value = Double(k) / Double(1 << j)
                assertMatchesPrintf(value)
                assertMatchesPrintf(-value)
                assertMatchesPrintf(value + 1_000_000)
            }
        }
    }

    func testPseudoRandomValuesOverEveryScale() {
        // A fixed linear congruential sequence (Knuth's MMIX constants): the same values every run.
        var state: UInt64 = 0x9E37_79B9_7F4A_7C15
        func next() -> UInt64 {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return state
        }
        for _ in 0..<20_000 {
            let unit = Double(next() >> 11) / Double(1 << 53) // [0, 1)
            let exponent = Int(next() % 70) - 40 // 2^-40 ... 2^29
            let value = (next() & 1 == 0 ? 1 : -1) * unit * pow(2, Double(exponent))
            assertMatchesPrintf(value)
        }
    }

    func testTheBytePathWritesTheSameText() {
        // endpoints.csv writes the text into its row's bytes: the same as `format` (which the
        // tests above hold to printf), after what the row holds, over every scale and sign.
        var state: UInt64 = 0x0123_4567_89AB_CDEF
        func next() -> UInt64 {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return state
        }
        var values: [Double] = [0, -0.0, 0.5, 1.5, -2.5, 0.125, 1e-7, 123_456.789, 0x1p43, .infinity, .nan]
        for _ in 0..<5_000 {
            let unit = Double(next() >> 11) / Double(1 << 53)
            values.append((next() & 1 == 0 ? 1 : -1) * unit * pow(2, Double(Int(next() % 60) - 30)))
        }
        for value in values {
            for decimals in 0...6 {
                var row = CSVRowBytes()
                row.append("x")
                row.append(value, decimals: decimals)
                XCTAssertEqual(
                    String(decoding: row.bytes, as: UTF8.self), "x," + FixedDecimal.format(value, decimals: decimals),
                    "\(value) with \(decimals) decimals")
            }
        }
    }

    func testValuesOutsideTheIntegerPathStillMatch() {
        for value in [Double.infinity, -Double.infinity, Double.nan, 1e300, -0x1p60] {
            assertMatchesPrintf(value)
        }
    }

    func testDigitCountAtEveryPowerOfTen() {
        // Each side of every power of ten UInt64 holds, and its extremes; the decimal
        // text's length is the oracle.
        var values: [UInt64] = [0, 1, 9, UInt64.max]
        var power: UInt64 = 10
        for _ in 1...19 {
            values += [power - 1, power, power + 1]
            if power > UInt64.max / 10 { break }
            power *= 10
        }
        for value in values {
            XCTAssertEqual(FixedDecimal.digitCount(value), String(value).count, "\(value)")
        }
        // Written in place: the same text as `String`, for whole numbers of every length.
        for value in values {
            var text = [UInt8](repeating: 0, count: FixedDecimal.maximumLength(decimals: 0))
            let length = text.withUnsafeMutableBufferPointer {
                FixedDecimal.write(value, decimals: 0, negative: false, at: $0.baseAddress!)
            }
            XCTAssertEqual(String(decoding: text[..<length], as: UTF8.self), String(value))
        }
    }
}
