import CaptureIO
import PacketLayers
import TestSupport
import XCTest

/// A decoded segment with its payload copied out, so tests can compare it after the frame
/// buffer is gone.
struct Decoded: Equatable {
    var source: TransportEndpoint
    var destination: TransportEndpoint
    var sequence: UInt32
    var acknowledgment: UInt32
    var flags: TCPFlags
    var window: UInt16
    var payload: [UInt8]
    var payloadLength: Int
    var frameLength: Int
    var ipLength: Int
    var timestamp: Int64
    var frameNumber: Int

    init(_ segment: TCPSegment) {
        source = segment.source
        destination = segment.destination
        sequence = segment.sequence
        acknowledgment = segment.acknowledgment
        flags = segment.flags
        window = segment.window
        payload = Array(segment.payload)
        payloadLength = segment.payloadLength
        frameLength = segment.frameLength
        ipLength = segment.ipLength
        timestamp = segment.timestamp
        frameNumber = segment.frameNumber
    }
}

/// A decoded UDP datagram with its payload copied out.
struct DecodedDatagram: Equatable {
    var source: TransportEndpoint
    var destination: TransportEndpoint
    var payload: [UInt8]
    var payloadLength: Int
    var frameLength: Int
    var ipLength: Int

    init(_ datagram: UDPDatagram) {
        source = datagram.source
        destination = datagram.destination
        payload = Array(datagram.payload)
        payloadLength = datagram.payloadLength
        frameLength = datagram.frameLength
        ipLength = datagram.ipLength
    }
}

/// `DecodeResult` with the segment copied out.
enum Outcome: Equatable, CustomStringConvertible {
    case segment(Decoded)
    case datagram(DecodedDatagram)
    case held
    case skipped(SkipReason)

    init(_ result: DecodeResult) {
        switch result {
        case .segment(let segment): self = .segment(Decoded(segment))
        case .datagram(let datagram): self = .datagram(DecodedDatagram(datagram))
        case .fragmentHeld: self = .held
        case .skipped(let reason): self = .skipped(reason)
        }
    }

    var segment: Decoded? {
        if case .segment(let decoded) = self { return decoded }
        return nil
    }

    var datagram: DecodedDatagram? {
        if case .datagram(let decoded) = self { return decoded }
        return nil
    }

    var description: String {
        switch self {
        case .segment(let s): return "segment(\(s.source) > \(s.destination) seq \(s.sequence) len \(s.payloadLength))"
        case .datagram(let d): return "datagram(\(d.source) > \(d.destination) len \(d.payloadLength))"
        case .held: return "held"
        case .skipped(let reason): return "skipped(\(reason.rawValue))"
        }
    }
}

extension PacketDecoder {
    /// Decodes `bytes` as one frame of `link`.
    func decode(
        _ bytes: [UInt8], link: PacketBuilder.Link = .ethernet, number: Int = 1,
        timestamp: Int64 = 0, originalLength: Int? = nil
    ) -> Outcome {
        PacketBuilder.withCapturedFrame(
            bytes, link: link, number: number, timestamp: timestamp,
            originalLength: originalLength
        ) { Outcome(decode($0)) }
    }

    /// Decodes `bytes` under a raw link type number.
    func decode(_ bytes: [UInt8], linkType: Int32, originalLength: Int? = nil) -> Outcome {
        PacketBuilder.withCapturedFrame(bytes, linkType: linkType, originalLength: originalLength) {
            Outcome(decode($0))
        }
    }
}

/// Decodes with a fresh decoder and fails the test unless a segment comes out.
func decodeSegment(
    _ bytes: [UInt8], link: PacketBuilder.Link = .ethernet, originalLength: Int? = nil,
    file: StaticString = #filePath, line: UInt = #line
) throws -> Decoded {
    let outcome = PacketDecoder().decode(bytes, link: link, originalLength: originalLength)
    return try XCTUnwrap(outcome.segment, "expected a segment, got \(outcome)", file: file, line: line)
}

/// Decodes with a fresh decoder and returns the outcome.
func decodeOutcome(_ bytes: [UInt8], link: PacketBuilder.Link = .ethernet, originalLength: Int? = nil) -> Outcome {
    PacketDecoder().decode(bytes, link: link, originalLength: originalLength)
}

func endpoint(_ text: String) -> TransportEndpoint { PacketBuilder.endpoint(text) }
