import Analysis
import ContentCoding
import Estimation
import HTTP1

/// Measures a message body as it streams past: decodes it, and re-compresses what the
/// estimators need, counting only.
final class BodyMeter: BodyObserver {
    let decoder: ContentDecoder
    private let transferDecodedGzip: GzipSizer?
    private let decodedGzip: GzipSizer?
    private var bytesMissing = false

    init(decoder: ContentDecoder, needs: BodyNeeds, gzipLevel: Int32) {
        self.decoder = decoder
        transferDecodedGzip = needs.contains(.gzipTransferDecoded) ? GzipSizer(level: gzipLevel) : nil
        decodedGzip = needs.contains(.gzipDecoded) ? GzipSizer(level: gzipLevel) : nil
        if let decodedGzip { decoder.sink = { decodedGzip.feed($0) } }
    }

    func bodyBytes(_ bytes: UnsafeRawBufferPointer) {
        transferDecodedGzip?.feed(bytes)
        decoder.feed(bytes)
    }

    func bodyGap(_ length: Int) {
        bytesMissing = true
        decoder.gap(length)
    }

    /// Ends the body: how decoding went, and the facts the estimators work from.
    func finish(transferDecodedLength: Int) -> (DecodingOutcome, BodyFacts) {
        let outcome = decoder.finish()
        let exact = outcome == .decoded || outcome == .identity
        let facts = BodyFacts(
            transferDecodedLength: transferDecodedLength,
            decodedLength: outcome == .decoded ? decoder.decodedLength : transferDecodedLength,
            decodedExactly: exact, bytesMissing: bytesMissing,
            gzippedTransferDecoded: transferDecodedGzip?.finish(),
            gzippedDecoded: exact ? decodedGzip?.finish() : nil)
        return (outcome, facts)
    }
}

/// The HTTP layer's sink for one input: turns messages into records, hands them on, and
/// keeps the input's diagnostics.
final class RecordCollector: HTTPRecordSink {
    typealias Observer = BodyMeter

    private let source: String
    private let options: AnalysisOptions
    private let emit: (MessageRecord) -> Void
    private let scratch = UnsafeMutableRawBufferPointer.allocate(byteCount: 1 << 16, alignment: 16)
    private(set) var diagnostics: InputDiagnostics
    private var serverNames: Set<String> = []

    init(diagnostics: InputDiagnostics, options: AnalysisOptions, emit: @escaping (MessageRecord) -> Void) {
        self.source = diagnostics.source
        self.diagnostics = diagnostics
        self.options = options
        self.emit = emit
    }

    deinit { scratch.deallocate() }

    func bodyObserver(for message: HTTPMessage) -> BodyMeter? {
        let codings = message.values(of: "content-encoding").flatMap { value in
            value.split(separator: UInt8(ascii: ",")).map { String(httpBytes: Array(trimmedSpaces($0))) }
        }.filter { !$0.isEmpty }
        return BodyMeter(decoder: ContentDecoder(codings: codings, limits: options.limits.decoding, scratch: scratch),
                         needs: options.estimators.bodyNeeds(for: message), gzipLevel: options.gzipLevel)
    }

    func record(_ message: HTTPMessage, body: BodyMeter?) {
        // Without a body, every re-compression is of empty data: gzippedData gives it back empty.
        let (outcome, facts) = body?.finish(transferDecodedLength: message.bodyLength)
            ?? (.identity, BodyFacts(transferDecodedLength: message.bodyLength, decodedLength: message.bodyLength,
                                     decodedExactly: true, bytesMissing: message.missingBytes > 0,
                                     gzippedTransferDecoded: 0, gzippedDecoded: 0))
        switch outcome {
        case .identity, .decoded: break
        case .unsupported: diagnostics.notes["body-coding-unsupported", default: 0] += 1
        case .failed: diagnostics.notes["body-decoding-failed", default: 0] += 1
        case .overLimit: diagnostics.notes["body-decoding-over-limit", default: 0] += 1
        }
        count(message)
        let estimates = options.estimators.estimate(message, body: facts)
        for (estimator, estimate) in zip(options.estimators.names, estimates) {
            if case let .failure(reason) = estimate {
                diagnostics.unestimated[estimator, default: [:]][reason.rawValue, default: 0] += 1
            }
        }
        emit(MessageRecord(source: source, message: message, measured: message.complete,
                           bodyDecoded: facts.decodedLength, decoding: outcome, estimates: estimates))
    }

    private func count(_ message: HTTPMessage) {
        if message.kind == .request { diagnostics.records.requests += 1 } else { diagnostics.records.responses += 1 }
        if message.isInterim { diagnostics.records.interim += 1 }
        if message.complete { diagnostics.records.complete += 1 } else { diagnostics.records.incomplete += 1 }
        if message.pair != nil { diagnostics.records.paired += 1 } else if !message.isInterim { diagnostics.records.unpaired += 1 }
    }

    func connectionClosed(_ summary: HTTPConnectionSummary) {
        let accounting = summary.accounting
        diagnostics.connections.total += 1
        switch summary.protocolKind {
        case .http: diagnostics.connections.http += 1
        case .tls:
            diagnostics.connections.tls += 1
            diagnostics.tls.connections += 1
            diagnostics.tls.bytes += accounting.initiator.payloadBytes + accounting.responder.payloadBytes
            if let name = summary.serverName, serverNames.insert(name).inserted {
                diagnostics.tls.serverNames = serverNames.sorted()
            }
        case .other: diagnostics.connections.other += 1
        }
        for end in [accounting.initiatorEnd, accounting.responderEnd] where end == .endOfCapture || end == .idle {
            diagnostics.connections.unterminated += 1
            break
        }
        for side in [accounting.initiator, accounting.responder] {
            diagnostics.gaps.count += side.gaps
            diagnostics.gaps.bytes += side.gapBytes
            diagnostics.gaps.truncatedBytes += side.truncatedBytes
            diagnostics.connections.retransmittedBytes += side.retransmittedBytes
        }
        for tally in [summary.clientTally, summary.serverTally] {
            diagnostics.connections.tunnelBytes += tally.tunnelBytes
            diagnostics.connections.skippedBytes += tally.skippedBytes
        }
    }

    func finishPackets(_ packets: InputDiagnostics.PacketCounts, unsupported: [InputDiagnostics.UnsupportedLinkType]) {
        diagnostics.packets = packets
        diagnostics.unsupportedLinkTypes = unsupported
    }

    func fail(_ message: String, readable: Bool) {
        diagnostics.error = message
        diagnostics.readable = readable
    }

    func setFormat(_ format: String) { diagnostics.format = format }
}

private func trimmedSpaces(_ bytes: ArraySlice<UInt8>) -> ArraySlice<UInt8> {
    var slice = bytes
    while let first = slice.first, first == 32 || first == 9 { slice = slice.dropFirst() }
    while let last = slice.last, last == 32 || last == 9 { slice = slice.dropLast() }
    return slice
}
