import CBrotli

/// One brotli stream (RFC 7932) through libbrotli's streaming decoder.
final class BrotliStage: DecodingStage {
    let name = "br"
    private var state: OpaquePointer?
    private(set) var finished = false
    private(set) var consumedAny = false

    deinit { release() }

    func release() {
        if let state { BrotliDecoderDestroyInstance(state) }
        state = nil
    }

    func decode(
        _ input: UnsafeRawBufferPointer, scratch: UnsafeMutableRawBufferPointer,
        emit: (UnsafeRawBufferPointer) -> Bool
    ) -> String? {
        // Bytes after the end of the stream are ignored, as trailing garbage after gzip is:
        // brotli has no members to concatenate.
        guard !finished, let base = input.baseAddress, !input.isEmpty else { return nil }
        if state == nil {
            // Created on first input so a decoder that is never fed costs nothing.
            guard let created = BrotliDecoderCreateInstance(nil, nil, nil) else { return "brotli could not start" }
            state = created
        }
        consumedAny = true
        var availableIn = input.count
        var nextIn: UnsafePointer<UInt8>? = base.assumingMemoryBound(to: UInt8.self)
        let out = scratch.baseAddress!.assumingMemoryBound(to: UInt8.self)
        // NEEDS_MORE_OUTPUT means the scratch buffer filled and more is pending: go round.
        while true {
            var availableOut = scratch.count
            var nextOut: UnsafeMutablePointer<UInt8>? = out
            let result = BrotliDecoderDecompressStream(state, &availableIn, &nextIn, &availableOut, &nextOut, nil)
            let produced = scratch.count - availableOut
            if produced > 0 && !emit(UnsafeRawBufferPointer(start: out, count: produced)) { return nil }
            switch result {
            case BROTLI_DECODER_RESULT_NEEDS_MORE_OUTPUT:
                continue
            case BROTLI_DECODER_RESULT_NEEDS_MORE_INPUT:
                return nil
            case BROTLI_DECODER_RESULT_SUCCESS:
                finished = true
                return nil
            default:
                let code = BrotliDecoderGetErrorCode(state)
                let text = BrotliDecoderErrorString(code).map { String(cString: $0) } ?? "error \(code.rawValue)"
                return "br data is damaged: \(text)"
            }
        }
    }
}
