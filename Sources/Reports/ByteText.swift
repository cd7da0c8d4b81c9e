/// Text a report file builds piece by piece (a CSV row, a chart's SVG), as UTF-8 written in
/// place: the text is `buffer[..<count]`, and the buffer is kept longer than the text (zeros
/// past it), so that a piece is copied, or a number's digits written, straight to the end,
/// where an Array append per piece cost more than most pieces' own bytes.
struct ByteText {
    private var buffer: [UInt8]
    /// Bytes of text so far.
    private(set) var count = 0

    init(capacity: Int = 512) { buffer = Array(repeating: 0, count: max(capacity, 16)) }

    /// The text's bytes.
    var bytes: [UInt8] { Array(buffer[..<count]) }

    /// The text's bytes, lent for the call.
    func withBytes<Result>(_ body: (UnsafeRawBufferPointer) -> Result) -> Result {
        buffer.withUnsafeBytes { body(UnsafeRawBufferPointer(rebasing: $0[..<count])) }
    }

    /// Lets `body` write up to `maximumLength` bytes at the end; it returns how many it wrote.
    @inline(__always)
    mutating func write(maximumLength: Int, _ body: (UnsafeMutablePointer<UInt8>) -> Int) {
        if buffer.count - count < maximumLength {
            buffer.append(contentsOf: repeatElement(0, count: max(maximumLength, buffer.count)))
        }
        let start = count
        count += buffer.withUnsafeMutableBufferPointer { body($0.baseAddress! + start) }
    }

    @inline(__always)
    mutating func append(_ bytes: UnsafeBufferPointer<UInt8>) {
        guard let source = bytes.baseAddress, !bytes.isEmpty else { return }
        write(maximumLength: bytes.count) {
            $0.update(from: source, count: bytes.count)
            return bytes.count
        }
    }

    @inline(__always)
    mutating func append(_ byte: UInt8) {
        write(maximumLength: 1) {
            $0.pointee = byte
            return 1
        }
    }

    mutating func append(_ text: StaticString) { text.withUTF8Buffer { append($0) } }

    mutating func append(_ text: String) {
        var text = text
        text.withUTF8 { append($0) }
    }

    /// Empties the text, keeping the buffer.
    mutating func removeAll() { count = 0 }
}
