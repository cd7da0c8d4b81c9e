import ContentCoding
import Estimation

/// What measuring one body found: how its content coding came off, its decoded length,
/// and the `gzippedData` lengths the estimators asked for.
struct BodyMeasurement: Sendable, Equatable {
    var outcome: DecodingOutcome
    var decodedLength: Int
    var gzippedTransferDecoded: Int?
    var gzippedDecoded: Int?
}

/// What a body needs measured, fixed when its head is parsed.
struct BodyRecipe: Hashable, Sendable {
    /// Content codings in the order applied.
    var codings: [String]
    var needs: BodyNeeds

    /// Identity coding and no re-compression asked: the length says it all.
    var needsBytes: Bool { !codings.isEmpty || needs != [] }
}

extension BodyNeeds: Hashable {}

/// Measures a body streamed through it: decodes it through a fixed scratch buffer (bounded
/// by the decoding limits) and re-compresses what the recipe asks for, counting only.
final class StreamingMeasurer {
    private let decoder: ContentDecoder
    private let transferDecodedGzip: GzipSizer?
    private let decodedGzip: GzipSizer?
    private var bytesMissing = false

    init(_ recipe: BodyRecipe, level: Int32, limits: DecodingLimits, scratch: UnsafeMutableRawBufferPointer) {
        decoder = ContentDecoder(codings: recipe.codings, limits: limits, scratch: scratch)
        transferDecodedGzip = recipe.needs.contains(.gzipTransferDecoded) ? GzipSizer(level: level) : nil
        decodedGzip = recipe.needs.contains(.gzipDecoded) ? GzipSizer(level: level) : nil
        if let decodedGzip { decoder.sink = { decodedGzip.feed($0) } }
    }

    func feed(_ bytes: UnsafeRawBufferPointer) {
        transferDecodedGzip?.feed(bytes)
        decoder.feed(bytes)
    }

    func gap(_ length: Int) {
        bytesMissing = true
        decoder.gap(length)
    }

    func finish() -> BodyMeasurement {
        let outcome = decoder.finish()
        let exact = outcome == .decoded || outcome == .identity
        // Missing bytes or an undecodable body leave nothing exact to re-compress.
        return BodyMeasurement(
            outcome: outcome, decodedLength: decoder.decodedLength,
            gzippedTransferDecoded: bytesMissing ? nil : transferDecodedGzip?.finish(),
            gzippedDecoded: bytesMissing || !exact ? nil : decodedGzip?.finish())
    }
}
