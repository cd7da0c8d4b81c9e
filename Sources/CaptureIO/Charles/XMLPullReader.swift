#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Why an XML file could not be read. Positions are 1-based (columns count UTF-8 lead bytes).
public enum XMLStreamError: Error, Equatable, CustomStringConvertible {
    case cannotOpen(path: String, reason: String)
    case readFailed(path: String, reason: String)
    case invalidXML(line: Int, column: Int, reason: String)

    public var description: String {
        switch self {
        case let .cannotOpen(path, reason): return "\(path): cannot open: \(reason)"
        case let .readFailed(path, reason): return "\(path): read failed: \(reason)"
        case let .invalidXML(line, column, reason): return "invalid XML at line \(line), column \(column): \(reason)"
        }
    }
}

/// One event of an XML document. Text comes decoded (entities, character references, CDATA).
public enum XMLEvent: Equatable, Sendable {
    case start(name: String, attributes: [(String, String)])
    case end(name: String)
    case text(String)

    public static func == (lhs: XMLEvent, rhs: XMLEvent) -> Bool {
        switch (lhs, rhs) {
        case let (.start(a, x), .start(b, y)): return a == b && x.elementsEqual(y) { $0 == $1 }
        case let (.end(a), .end(b)): return a == b
        case let (.text(a), .text(b)): return a == b
        default: return false
        }
    }
}

/// A small streaming XML pull reader, Foundation-free, over a file read in fixed-size chunks:
/// memory is one chunk plus the token being read. It checks what a session needs to be sound:
/// tags nest and match, one root element, attributes quoted and not repeated, entities known,
/// nothing but white space, comments and processing instructions outside the root. It skips the
/// XML declaration, processing instructions, comments and a DOCTYPE (never fetching its DTD);
/// it normalizes line ends (CR LF and CR → LF) in text and white space in attribute values as
/// XML 1.0 says. A self-closing tag gives a start and an end. Not a validating parser; no
/// namespaces (a prefix is part of the name). Not thread-safe.
public final class XMLPullReader {
    public static let defaultChunkSize = 256 * 1024
    public static let maximumDepth = 512

    public let path: String
    public private(set) var line = 1
    public private(set) var column = 1
    public private(set) var bytesRead = 0
    public var depth: Int { stack.count }

    private var file: UnsafeMutablePointer<FILE>?
    private let buffer: UnsafeMutablePointer<UInt8>
    private let chunkSize: Int
    private var position = 0
    private var end = 0
    private var atEOF = false
    private var stack: [String] = []
    private var pendingEnd: String?
    private var sawRoot = false
    private var scratch: [UInt8] = []

    public init(path: String, chunkSize: Int = XMLPullReader.defaultChunkSize) throws {
        self.path = path
        self.chunkSize = max(16, chunkSize)
        guard let file = fopen(path, "rb") else {
            throw XMLStreamError.cannotOpen(path: path, reason: String(cString: strerror(errno)))
        }
        self.file = file
        buffer = .allocate(capacity: self.chunkSize)
        if try refill(), end - position >= 3, buffer[0] == 0xEF, buffer[1] == 0xBB, buffer[2] == 0xBF {
            position = 3
        }
    }

    deinit {
        if let file { fclose(file) }
        buffer.deallocate()
    }

    // MARK: Bytes

    private func refill() throws -> Bool {
        guard !atEOF, let file else { return false }
        let count = fread(buffer, 1, chunkSize, file)
        if count == 0 {
            atEOF = true
            if ferror(file) != 0 {
                throw XMLStreamError.readFailed(path: path, reason: String(cString: strerror(errno)))
            }
            return false
        }
        position = 0
        end = count
        bytesRead += count
        return true
    }

    @inline(__always)
    private func peek() throws -> UInt8? {
        if position == end, !(try refill()) { return nil }
        return buffer[position]
    }

    @inline(__always)
    private func advance(_ byte: UInt8) {
        position += 1
        if byte == 0x0A {
            line += 1
            column = 1
        } else if byte & 0xC0 != 0x80 {
            column += 1
        }
    }

    private func take() throws -> UInt8 {
        guard let byte = try peek() else { throw invalid("unexpected end of file") }
        advance(byte)
        return byte
    }

    private func invalid(_ reason: String) -> XMLStreamError {
        .invalidXML(line: line, column: column, reason: reason)
    }

    private static func isSpace(_ byte: UInt8) -> Bool { byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D }

    private static func isNameByte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
            UInt8(ascii: "_"), UInt8(ascii: ":"), UInt8(ascii: "-"), UInt8(ascii: "."):
            return true
        default: return byte >= 0x80
        }
    }

    // MARK: Events

    /// The next event; nil at the end of the document (after the root closed and only white
    /// space, comments or processing instructions followed).
    public func next() throws -> XMLEvent? {
        if let name = pendingEnd {
            pendingEnd = nil
            return close(name)
        }
        while true {
            guard let byte = try peek() else {
                if !stack.isEmpty { throw invalid("unexpected end of file inside <\(stack.last!)>") }
                if !sawRoot { throw invalid("the file holds no element") }
                return nil
            }
            if byte != UInt8(ascii: "<") {
                let text = try readText()
                if stack.isEmpty {
                    if text.utf8.contains(where: { !Self.isSpace($0) }) { throw invalid("text outside the root element") }
                    continue
                }
                return .text(text)
            }
            advance(byte)
            guard let second = try peek() else { throw invalid("unexpected end of file") }
            switch second {
            case UInt8(ascii: "?"):
                advance(second)
                try skip(until: Array("?>".utf8))
            case UInt8(ascii: "!"):
                advance(second)
                if try peek() == UInt8(ascii: "-") {
                    try expect("--")
                    try skip(until: Array("-->".utf8))
                } else if try peek() == UInt8(ascii: "[") {
                    try expect("[CDATA[")
                    guard !stack.isEmpty else { throw invalid("CDATA outside the root element") }
                    return .text(try readCDATA())
                } else {
                    try expect("DOCTYPE")
                    guard !sawRoot else { throw invalid("DOCTYPE after the root element") }
                    try skipDoctype()
                }
            case UInt8(ascii: "/"):
                advance(second)
                let name = try readName()
                try skipSpace()
                guard try take() == UInt8(ascii: ">") else { throw invalid("expected '>' closing </\(name)") }
                guard let open = stack.last else { throw invalid("</\(name)> without an open element") }
                guard open == name else { throw invalid("</\(name)> closes <\(open)>") }
                return close(name)
            default:
                return try readStartTag()
            }
        }
    }

    private func close(_ name: String) -> XMLEvent {
        stack.removeLast()
        return .end(name: name)
    }

    private func expect(_ word: String) throws {
        for expected in word.utf8 {
            guard try take() == expected else { throw invalid("expected '\(word)'") }
        }
    }

    private func skipSpace() throws {
        while let byte = try peek(), Self.isSpace(byte) { advance(byte) }
    }

    private func skip(until terminator: [UInt8]) throws {
        var matched = 0
        while matched < terminator.count {
            let byte = try take()
            if byte == terminator[matched] {
                matched += 1
            } else {
                matched = byte == terminator[0] ? 1 : 0
            }
        }
    }

    private func skipDoctype() throws {
        var quote: UInt8?
        var brackets = 0
        while true {
            let byte = try take()
            if let open = quote {
                if byte == open { quote = nil }
                continue
            }
            switch byte {
            case UInt8(ascii: "\""), UInt8(ascii: "'"): quote = byte
            case UInt8(ascii: "["): brackets += 1
            case UInt8(ascii: "]"): brackets -= 1
            case UInt8(ascii: ">") where brackets <= 0: return
            default: break
            }
        }
    }

    private func readName() throws -> String {
        scratch.removeAll(keepingCapacity: true)
        while let byte = try peek(), Self.isNameByte(byte) {
            scratch.append(byte)
            advance(byte)
        }
        guard let first = scratch.first, !(UInt8(ascii: "0")...UInt8(ascii: "9")).contains(first),
            first != UInt8(ascii: "-"), first != UInt8(ascii: ".")
        else { throw invalid("expected a name") }
        return String(decoding: scratch, as: UTF8.self)
    }

    private func readStartTag() throws -> XMLEvent {
        guard stack.count < Self.maximumDepth else { throw invalid("nesting deeper than \(Self.maximumDepth) levels") }
        if stack.isEmpty {
            guard !sawRoot else { throw invalid("a second root element") }
            sawRoot = true
        }
        let name = try readName()
        var attributes: [(String, String)] = []
        while true {
            let hadSpace = (try peek()).map(Self.isSpace) ?? false
            try skipSpace()
            let byte = try take()
            if byte == UInt8(ascii: ">") {
                stack.append(name)
                return .start(name: name, attributes: attributes)
            }
            if byte == UInt8(ascii: "/") {
                guard try take() == UInt8(ascii: ">") else { throw invalid("expected '>' after '/' in <\(name)>") }
                stack.append(name)
                pendingEnd = name
                return .start(name: name, attributes: attributes)
            }
            guard hadSpace else { throw invalid("expected white space before an attribute in <\(name)>") }
            position -= 1
            column -= 1
            let attribute = try readName()
            try skipSpace()
            guard try take() == UInt8(ascii: "=") else { throw invalid("expected '=' after attribute \(attribute)") }
            try skipSpace()
            let quote = try take()
            guard quote == UInt8(ascii: "\"") || quote == UInt8(ascii: "'") else {
                throw invalid("attribute \(attribute) is not quoted")
            }
            let value = try readCharacters(until: quote, attribute: true)
            guard !attributes.contains(where: { $0.0 == attribute }) else {
                throw invalid("attribute \(attribute) repeated in <\(name)>")
            }
            attributes.append((attribute, value))
        }
    }

    /// Text up to the next '<' (not consumed).
    private func readText() throws -> String {
        try readCharacters(until: UInt8(ascii: "<"), attribute: false)
    }

    /// Characters up to `terminator` (consumed when it is a quote), references decoded.
    private func readCharacters(until terminator: UInt8, attribute: Bool) throws -> String {
        scratch.removeAll(keepingCapacity: true)
        var lastWasCR = false
        while true {
            if position == end, !(try refill()) {
                if attribute { throw invalid("unterminated attribute value") }
                break
            }
            // Fast path: a run of plain bytes.
            var index = position
            while index < end {
                let byte = buffer[index]
                if byte == terminator || byte == UInt8(ascii: "&") || byte == 0x0D || byte == 0x0A || byte < 0x20
                    || (attribute && byte == UInt8(ascii: "<"))
                {
                    break
                }
                index += 1
            }
            if index > position {
                scratch.append(contentsOf: UnsafeBufferPointer(start: buffer + position, count: index - position))
                var cursor = position
                while cursor < index {
                    if buffer[cursor] & 0xC0 != 0x80 { column += 1 }
                    cursor += 1
                }
                position = index
                lastWasCR = false
            }
            if index == end { continue }
            let byte = buffer[index]
            if byte == terminator {
                if attribute { advance(byte) }
                break
            }
            advance(byte)
            switch byte {
            case 0x0D:
                scratch.append(attribute ? 0x20 : 0x0A)
                lastWasCR = true
                continue
            case 0x0A:
                if !lastWasCR { scratch.append(attribute ? 0x20 : 0x0A) }
            case 0x09:
                scratch.append(attribute ? 0x20 : 0x09)
            case UInt8(ascii: "&"):
                try readReference()
            case UInt8(ascii: "<"):
                throw invalid("'<' in an attribute value")
            default:
                throw invalid("control character 0x\(String(byte, radix: 16)) in text")
            }
            lastWasCR = false
        }
        if !attribute, scratch.count >= 3 {
            // "]]>" may not appear in text.
            for index in 2..<scratch.count where scratch[index] == UInt8(ascii: ">") && scratch[index - 1] == UInt8(ascii: "]") && scratch[index - 2] == UInt8(ascii: "]") {
                throw invalid("']]>' in text")
            }
        }
        return String(decoding: scratch, as: UTF8.self)
    }

    /// After '&': a predefined entity or a character reference, appended to `scratch`.
    private func readReference() throws {
        var name: [UInt8] = []
        while true {
            let byte = try take()
            if byte == UInt8(ascii: ";") { break }
            name.append(byte)
            guard name.count <= 10 else { throw invalid("unterminated entity reference") }
        }
        switch String(decoding: name, as: UTF8.self) {
        case "lt": scratch.append(UInt8(ascii: "<"))
        case "gt": scratch.append(UInt8(ascii: ">"))
        case "amp": scratch.append(UInt8(ascii: "&"))
        case "quot": scratch.append(UInt8(ascii: "\""))
        case "apos": scratch.append(UInt8(ascii: "'"))
        case let text where text.hasPrefix("#"):
            let digits = text.dropFirst()
            let value: UInt32?
            if digits.hasPrefix("x") { value = UInt32(digits.dropFirst(), radix: 16) } else { value = UInt32(digits, radix: 10) }
            guard let value, value != 0, let scalar = Unicode.Scalar(value) else {
                throw invalid("invalid character reference &\(text);")
            }
            scratch.append(contentsOf: UTF8.encode(scalar)!)
        case let other:
            throw invalid("unknown entity &\(other);")
        }
    }

    /// After `<![CDATA[`: up to `]]>`, line ends normalized.
    private func readCDATA() throws -> String {
        var out: [UInt8] = []
        var lastWasCR = false
        while true {
            let byte = try take()
            out.append(byte == 0x0D ? 0x0A : byte)
            if byte == 0x0A, lastWasCR { out.removeLast() }
            lastWasCR = byte == 0x0D
            if out.count >= 3, out[out.count - 1] == UInt8(ascii: ">"), out[out.count - 2] == UInt8(ascii: "]"),
                out[out.count - 3] == UInt8(ascii: "]")
            {
                out.removeLast(3)
                return String(decoding: out, as: UTF8.self)
            }
        }
    }
}
