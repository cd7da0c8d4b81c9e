/// ISO 8601 times as HAR exporters (`startedDateTime`) and meter logs (`time`) write them.
public enum ISO8601Time {
    /// `YYYY-MM-DDThh:mm:ss[.fraction][Z|±hh:mm|±hhmm]` (no offset: UTC) as nanoseconds since
    /// the epoch, clamped to 1970...2262 (see `parse`). Nil when the text is not of that form.
    public static func nanoseconds(_ text: String) -> Int64? {
        parse(text)?.nanoseconds
    }

    /// As `nanoseconds`, and whether the time was clamped: a time before 1970 becomes 0 and one
    /// after 2262-04-11T23:47:16.854775807Z (the last Int64 nanosecond) becomes that instant.
    public static func parse(_ text: String) -> (nanoseconds: Int64, clamped: Bool)? {
        parse(text, requiringOffset: false)
    }

    /// As `parse(_:)`; with `requiringOffset`, a time without `Z` or `±hh:mm` is nil too.
    public static func parse(_ text: String, requiringOffset: Bool) -> (nanoseconds: Int64, clamped: Bool)? {
        // The text's own UTF-8 when it is contiguous (every native String): once per HAR entry,
        // without the array copy and the String lookups of each expected character.
        if let parsed = text.utf8.withContiguousStorageIfAvailable({ parse(bytes: $0, requiringOffset: requiringOffset) }) {
            return parsed
        }
        return Array(text.utf8).withUnsafeBufferPointer { parse(bytes: $0, requiringOffset: requiringOffset) }
    }

    private static func parse(bytes: UnsafeBufferPointer<UInt8>, requiringOffset: Bool)
        -> (nanoseconds: Int64, clamped: Bool)?
    {
        var position = 0
        func number(_ digits: Int) -> Int? {
            guard position + digits <= bytes.count else { return nil }
            var value = 0
            for byte in bytes[position..<(position + digits)] {
                guard isDigit(byte) else { return nil }
                value = value * 10 + Int(byte - 48)
            }
            position += digits
            return value
        }
        /// One of the given ASCII characters.
        func expect(_ first: Unicode.Scalar, _ second: Unicode.Scalar? = nil, _ third: Unicode.Scalar? = nil) -> Bool {
            guard position < bytes.count else { return false }
            let byte = bytes[position]
            guard byte == UInt8(ascii: first) || second.map({ byte == UInt8(ascii: $0) }) == true
                || third.map({ byte == UInt8(ascii: $0) }) == true
            else { return false }
            position += 1
            return true
        }
        guard let year = number(4), expect("-"), let month = number(2), expect("-"), let day = number(2),
            expect("T", "t", " "), let hour = number(2), expect(":"), let minute = number(2), expect(":"),
            let second = number(2),
            (1...12).contains(month), (1...31).contains(day), hour < 24, minute < 60, second < 61
        else { return nil }
        var nanos: Int64 = 0
        if expect(".", ",") {
            var scale: Int64 = 100_000_000
            let start = position
            while position < bytes.count, isDigit(bytes[position]) {
                nanos += Int64(bytes[position] - 48) * scale
                scale /= 10
                position += 1
            }
            guard position > start else { return nil }
        }
        var offsetSeconds = 0
        if position < bytes.count {
            if expect("Z", "z") {
                // UTC
            } else if expect("+", "-") {
                let sign = bytes[position - 1] == UInt8(ascii: "-") ? -1 : 1
                guard let offsetHours = number(2) else { return nil }
                _ = expect(":")
                guard let offsetMinutes = number(2) else { return nil }
                offsetSeconds = sign * (offsetHours * 3600 + offsetMinutes * 60)
            }
            guard position == bytes.count else { return nil }
        } else if requiringOffset {
            return nil
        }
        // Four-digit years keep these seconds far inside Int64; only the nanoseconds can overflow.
        let seconds =
            Int64(daysFromCivil(year: year, month: month, day: day)) * 86_400
            + Int64(hour * 3600 + minute * 60 + second - offsetSeconds)
        if seconds < 0 { return (0, true) }
        let (scaled, overflow) = seconds.multipliedReportingOverflow(by: 1_000_000_000)
        guard !overflow, scaled <= Int64.max - nanos else { return (Int64.max, true) }
        return (scaled + nanos, false)
    }

    /// Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's algorithm).
    private static func daysFromCivil(year: Int, month: Int, day: Int) -> Int {
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yearOfEra = y - era * 400
        let dayOfYear = (153 * (month + (month > 2 ? -3 : 9)) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }
}
