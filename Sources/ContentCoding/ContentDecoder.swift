/// Bounds that keep a decompression bomb from costing more than counting time.
public struct DecodingLimits: Sendable {
    /// Decoded bytes past this stop the decoding.
    public var maxDecodedBytes: Int
    /// Decoded bytes per encoded byte past this (once over `ratioGrace` decoded bytes) stop it.
    public var maxRatio: Int
    public var ratioGrace: Int

    public init(maxDecodedBytes: Int = 1 << 30, maxRatio: Int = 1000, ratioGrace: Int = 1 << 20) {
        self.maxDecodedBytes = maxDecodedBytes
        self.maxRatio = maxRatio
        self.ratioGrace = ratioGrace
    }
}

/// How a body's content coding turned out.
public enum DecodingOutcome: Equatable, Sendable {
    /// No content coding (or `identity`): the body is its own decoded form.
    case identity
    /// Decoded to the end of every coding.
    case decoded
    /// A coding this build does not decode.
    case unsupported(String)
    /// The encoded data is damaged, cut short, or has holes.
    case failed(String)
    /// A limit stopped the decoding.
    case overLimit

    /// Short name for outputs: `identity`, `decoded`, `unsupported:br`, `failed`, `over-limit`.
    public var name: String {
        switch self {
        case .identity: return "identity"
        case .decoded: return "decoded"
        case let .unsupported(coding): return "unsupported:\(coding)"
        case .failed: return "failed"
        case .overLimit: return "over-limit"
        }
    }
}

/// Streams a body through its content codings (applied in order, so decoded in reverse)
/// and counts the decoded bytes through a fixed scratch buffer: nothing is held whole.
/// Decoded bytes can be handed on to `sink` (for re-compression) as they come.
public final class ContentDecoder {
    public private(set) var decodedLength = 0
    public private(set) var encodedLength = 0
    /// Innermost coding (the last applied) first.
    private var stages: [any DecodingStage] = []
    private var outcome: DecodingOutcome
    private let limits: DecodingLimits
    /// Output buffer per stage: the shared scratch for the first, own buffers for stacked
    /// codings (each stage's output is the next one's input, so they cannot share).
    private var outputs: [UnsafeMutableRawBufferPointer] = []
    private var ownedOutputs: [UnsafeMutableRawBufferPointer] = []
    /// Sees every decoded byte, in order.
    public var sink: ((UnsafeRawBufferPointer) -> Void)?

    /// `codings` as listed in Content-Encoding (first applied first): gzip, x-gzip, deflate, br
    /// and identity are decoded, any other makes the body `.unsupported`; `scratch` is an output
    /// buffer the caller owns and may share between decoders used one at a time.
    public init(codings: [String], limits: DecodingLimits, scratch: UnsafeMutableRawBufferPointer) {
        self.limits = limits
        self.outcome = .identity
        for coding in codings.reversed() {
            switch coding.lowercased() {
            case "identity", "": continue
            case "gzip", "x-gzip": stages.append(InflateStage(format: .gzip))
            case "deflate": stages.append(InflateStage(format: .deflate))
            case "br": stages.append(BrotliStage())
            default:
                outcome = .unsupported(coding)
                stages = []
                return
            }
        }
        if !stages.isEmpty { outcome = .decoded }
        outputs = [scratch]
        for _ in stages.dropFirst() {
            let own = UnsafeMutableRawBufferPointer.allocate(byteCount: scratch.count, alignment: 16)
            ownedOutputs.append(own)
            outputs.append(own)
        }
    }

    deinit {
        for stage in stages { stage.release() }
        for buffer in ownedOutputs { buffer.deallocate() }
    }

    public func feed(_ bytes: UnsafeRawBufferPointer) {
        encodedLength += bytes.count
        switch outcome {
        case .identity:
            decodedLength += bytes.count
            sink?(bytes)
        case .decoded:
            push(bytes, into: 0)
        default:
            break
        }
    }

    /// Bytes of the body are missing: a coded stream cannot go on.
    public func gap(_ length: Int) {
        encodedLength += length
        if outcome == .identity { decodedLength += length }
        if outcome == .decoded { fail("\(length) bytes missing from the capture") }
    }

    /// Ends the body; tells how decoding went.
    public func finish() -> DecodingOutcome {
        if outcome == .decoded, let open = stages.firstIndex(where: { !$0.finished }) {
            fail(
                stages[open].consumedAny
                    ? "data ends before the end of the \(stages[open].name) stream"
                    : "empty \(stages[open].name) data")
        }
        for stage in stages { stage.release() }
        stages = []
        return outcome
    }

    private func fail(_ reason: String) {
        outcome = .failed(reason)
    }

    /// Decodes `input` through stage `index` and hands its output to the next stage.
    /// A stage stops as soon as a limit or a later stage's failure ends the decoding.
    private func push(_ input: UnsafeRawBufferPointer, into index: Int) {
        guard index < stages.count else {
            decodedLength += input.count
            sink?(input)
            if decodedLength > limits.maxDecodedBytes
                || (decodedLength > limits.ratioGrace && decodedLength / max(encodedLength, 1) > limits.maxRatio)
            {
                outcome = .overLimit
            }
            return
        }
        let stage = stages[index]
        let result = stage.decode(input, scratch: outputs[index]) { output in
            self.push(output, into: index + 1)
            return self.outcome == .decoded
        }
        if let error = result, outcome == .decoded { fail(error) }
    }
}
