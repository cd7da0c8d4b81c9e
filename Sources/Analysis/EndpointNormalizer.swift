/// Groups request paths into endpoints: segments that are identifiers (numbers, UUIDs, long
/// hex or base64-like tokens) become `{id}`.
public struct EndpointNormalizer: Sendable {
    public init() {}

    public func normalize(path: String) -> String {
        guard !path.isEmpty else { return "/" }
        return path.split(separator: "/", omittingEmptySubsequences: false)
            .map { Self.isIdentifier($0) ? "{id}" : String($0) }
            .joined(separator: "/")
    }

    static func isIdentifier(_ segment: Substring) -> Bool {
        let bytes = Array(segment.utf8)
        guard !bytes.isEmpty else { return false }
        if bytes.allSatisfy({ $0 >= 48 && $0 <= 57 }) { return true }
        if isUUID(bytes) { return true }
        if bytes.count >= 16 && bytes.allSatisfy(isHex) { return true }
        // base64 / base64url tokens: long, mixed letters and digits, no dots (file names keep theirs).
        let base64 = bytes.allSatisfy { isAlphanumeric($0) || $0 == 43 || $0 == 45 || $0 == 95 || $0 == 61 }
        return base64 && bytes.count >= 20 && bytes.contains(where: { $0 >= 48 && $0 <= 57 })
            && bytes.contains(where: { ($0 | 0x20) >= 97 && ($0 | 0x20) <= 122 })
    }

    private static func isUUID(_ b: [UInt8]) -> Bool {
        guard b.count == 36 else { return false }
        for (i, c) in b.enumerated() {
            if [8, 13, 18, 23].contains(i) { if c != 45 { return false } } else if !isHex(c) { return false }
        }
        return true
    }

    private static func isHex(_ c: UInt8) -> Bool {
        (c >= 48 && c <= 57) || (c >= 97 && c <= 102) || (c >= 65 && c <= 70)
    }

    private static func isAlphanumeric(_ c: UInt8) -> Bool {
        (c >= 48 && c <= 57) || (c >= 97 && c <= 122) || (c >= 65 && c <= 90)
    }
}
