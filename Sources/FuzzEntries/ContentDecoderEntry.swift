import ContentCoding

/// A body through `ContentDecoder` (its decoded bytes re-compressed by a `GzipSizer`, as a
/// run measures `gzippedData`), and the raw input through a `GzipSizer` streamed in pieces,
/// which must give the one-call length.
///
/// | byte | meaning |
/// | --- | --- |
/// | 0 | the Content-Encoding list (index into `codingLists`) |
/// | 1 | bits 0-3 piece size (2^n bytes); bit 4 a gap after the first piece; bits 5-7 the limits (index into `limitChoices`) |
/// | 2 | gzip level (index into `levels`) |
/// | 3... | the body |
enum ContentDecoderEntry {
    static let codingLists: [[String]] = [
        [], ["identity"], ["gzip"], ["x-gzip"], ["deflate"], ["br"], ["gzip", "br"], ["br", "gzip"],
        ["deflate", "gzip"], ["gzip", "gzip"], ["br", "br"], ["GZip"], ["compress"], ["gzip", "identity", "deflate"],
    ]
    static let limitChoices: [DecodingLimits] = [
        DecodingLimits(),
        DecodingLimits(maxDecodedBytes: 4096, maxRatio: 1000, ratioGrace: 1 << 20),
        DecodingLimits(maxDecodedBytes: 1 << 30, maxRatio: 4, ratioGrace: 64),
        DecodingLimits(maxDecodedBytes: 0, maxRatio: 1, ratioGrace: 0),
    ]
    static let levels: [Int32] = [-1, 1, 2, 3, 4, 5, 6, 7, 8, 9]

    /// Shared between runs like a body worker's scratch; a run starts with nothing in it
    /// that matters.
    nonisolated(unsafe) static let scratch = UnsafeMutableRawBufferPointer.allocate(byteCount: 16 << 10, alignment: 16)

    static func run(_ input: UnsafeRawBufferPointer) {
        var cursor = InputCursor(input)
        let codings = codingLists[Int(cursor.u8()) % codingLists.count]
        let shape = cursor.u8()
        let level = levels[Int(cursor.u8()) % levels.count]
        let body = cursor.rest()
        let pieceSize = 1 << Int(shape & 0x0F)
        let limits = limitChoices[Int(shape >> 5) % limitChoices.count]

        let decoder = ContentDecoder(codings: codings, limits: limits, scratch: scratch)
        let decodedSizer = GzipSizer(level: level)
        decoder.sink = { decodedSizer.feed($0) }
        var start = 0
        var gapPending = shape & 0x10 != 0
        while start < body.count {
            let end = min(start + pieceSize, body.count)
            decoder.feed(UnsafeRawBufferPointer(rebasing: body[start..<end]))
            start = end
            if gapPending {
                gapPending = false
                decoder.gap(pieceSize)
            }
        }
        let outcome = decoder.finish()
        decoder.sink = nil
        blackHole((outcome, decoder.decodedLength, decodedSizer.finish()))

        // Streaming must not change the length: the same bytes whole and in pieces.
        let streamedSizer = GzipSizer(level: level)
        start = 0
        while start < body.count {
            let end = min(start + pieceSize, body.count)
            streamedSizer.feed(UnsafeRawBufferPointer(rebasing: body[start..<end]))
            start = end
        }
        let streamed = streamedSizer.finish()
        let whole = GzipSizer.length(of: Array(body), level: level)
        precondition(
            streamed == whole, "GzipSizer streamed in \(pieceSize)-byte pieces: \(streamed), in one call: \(whole)")
    }
}
