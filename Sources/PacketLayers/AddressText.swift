// Text forms of addresses and endpoints (reports, diagnostics, test input). Not on the
// per-packet path, so plain String work is fine here.

extension IPAddress: LosslessStringConvertible {
    /// IPv4 as a dotted quad; IPv6 in RFC 5952 canonical form (lowercase hex, the longest run
    /// of two or more zero groups — the first one on ties — as `::`, IPv4-mapped addresses as
    /// `::ffff:192.0.2.1`).
    public var description: String {
        guard isIPv6 else { return Self.dottedQuad(UInt32(truncatingIfNeeded: low)) }
        if high == 0, low >> 32 == 0xFFFF {
            return "::ffff:" + Self.dottedQuad(UInt32(truncatingIfNeeded: low))
        }
        var groups = [UInt16](repeating: 0, count: 8)
        for index in 0..<4 {
            groups[index] = UInt16(truncatingIfNeeded: high >> (48 - 16 * index))
            groups[index + 4] = UInt16(truncatingIfNeeded: low >> (48 - 16 * index))
        }
        // The longest run of zero groups, at least two long; the first wins ties.
        var bestStart = -1
        var bestLength = 1
        var index = 0
        while index < 8 {
            guard groups[index] == 0 else {
                index += 1
                continue
            }
            var end = index
            while end < 8, groups[end] == 0 { end += 1 }
            if end - index > bestLength {
                bestStart = index
                bestLength = end - index
            }
            index = end
        }
        func hex(_ range: Range<Int>) -> String {
            groups[range].map { String($0, radix: 16) }.joined(separator: ":")
        }
        guard bestStart >= 0 else { return hex(0..<8) }
        return hex(0..<bestStart) + "::" + hex((bestStart + bestLength)..<8)
    }

    /// Parses a dotted quad or an IPv6 address (`::` compression and a trailing dotted quad
    /// allowed; no zone id). Nil when the text is not an address.
    public init?(_ text: String) {
        if !text.contains(":") {
            guard let value = Self.parseDottedQuad(Substring(text)) else { return nil }
            self.init(ipv4: value)
            return
        }
        guard let groups = Self.parseIPv6Groups(text) else { return nil }
        var high: UInt64 = 0
        var low: UInt64 = 0
        for index in 0..<4 {
            high = high << 16 | UInt64(groups[index])
            low = low << 16 | UInt64(groups[index + 4])
        }
        self.init(high: high, low: low, isIPv6: true)
    }

    private static func dottedQuad(_ value: UInt32) -> String {
        "\(value >> 24).\(value >> 16 & 0xFF).\(value >> 8 & 0xFF).\(value & 0xFF)"
    }

    private static func parseDottedQuad(_ text: Substring) -> UInt32? {
        let parts = text.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 4 else { return nil }
        var value: UInt32 = 0
        for part in parts {
            guard (1...3).contains(part.count), part.allSatisfy({ $0.isASCII && $0.isNumber }),
                let octet = UInt32(part), octet <= 255
            else { return nil }
            value = value << 8 | octet
        }
        return value
    }

    /// The eight 16-bit groups of an IPv6 address text.
    private static func parseIPv6Groups(_ text: String) -> [UInt16]? {
        // At most one "::"; split the text around it into a head and a tail.
        guard let halves = splitAtDoubleColon(text) else { return nil }
        func groups(_ part: Substring, allowIPv4: Bool) -> [UInt16]? {
            if part.isEmpty { return [] }
            let fields = part.split(separator: ":", omittingEmptySubsequences: false)
            var result: [UInt16] = []
            for (index, field) in fields.enumerated() {
                if allowIPv4, index == fields.count - 1, field.contains(".") {
                    guard let value = parseDottedQuad(field) else { return nil }
                    result.append(UInt16(value >> 16))
                    result.append(UInt16(value & 0xFFFF))
                } else {
                    guard (1...4).contains(field.count), field.allSatisfy({ $0.isHexDigit }),
                        let group = UInt16(field, radix: 16)
                    else { return nil }
                    result.append(group)
                }
            }
            return result
        }
        if halves.count == 1 {
            guard let all = groups(halves[0], allowIPv4: true), all.count == 8 else { return nil }
            return all
        }
        guard let head = groups(halves[0], allowIPv4: false),
            let tail = groups(halves[1], allowIPv4: true),
            head.count + tail.count <= 7
        else { return nil }
        return head + [UInt16](repeating: 0, count: 8 - head.count - tail.count) + tail
    }

    /// Splits at "::"; nil when the text holds ":::" or more than one "::".
    private static func splitAtDoubleColon(_ text: String) -> [Substring]? {
        let utf8 = Array(text.utf8)
        var cuts: [Int] = []
        var index = 0
        while index + 1 < utf8.count {
            if utf8[index] == UInt8(ascii: ":"), utf8[index + 1] == UInt8(ascii: ":") {
                if index + 2 < utf8.count, utf8[index + 2] == UInt8(ascii: ":") { return nil }
                cuts.append(index)
                index += 2
            } else {
                index += 1
            }
        }
        guard cuts.count <= 1 else { return nil }
        guard let cut = cuts.first else { return [Substring(text)] }
        let start = text.utf8.index(text.utf8.startIndex, offsetBy: cut)
        let end = text.utf8.index(start, offsetBy: 2)
        return [text[..<start], text[end...]]
    }
}

extension TransportEndpoint: LosslessStringConvertible {
    /// `192.0.2.1:80`, or `[2001:db8::1]:8080` for IPv6.
    public var description: String {
        address.isIPv6 ? "[\(address)]:\(port)" : "\(address):\(port)"
    }

    /// Parses `192.0.2.1:80` or `[2001:db8::1]:8080`. Nil when the text is not an endpoint.
    public init?(_ text: String) {
        let addressText: Substring
        let portText: Substring
        if text.hasPrefix("[") {
            guard let close = text.firstIndex(of: "]") else { return nil }
            addressText = text[text.index(after: text.startIndex)..<close]
            let rest = text[text.index(after: close)...]
            guard rest.hasPrefix(":") else { return nil }
            portText = rest.dropFirst()
        } else {
            guard let colon = text.lastIndex(of: ":") else { return nil }
            addressText = text[..<colon]
            portText = text[text.index(after: colon)...]
            guard !addressText.contains(":") else { return nil } // IPv6 needs brackets
        }
        guard !portText.isEmpty, portText.allSatisfy({ $0.isASCII && $0.isNumber }),
            let port = UInt16(portText), let address = IPAddress(String(addressText))
        else { return nil }
        self.init(address: address, port: port)
    }
}
