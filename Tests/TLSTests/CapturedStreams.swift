import CaptureIO
import Flows
import Foundation
import PacketLayers
import TCPReassembly
import TestSupport
import XCTest
@testable import TLS

/// One TCP connection of a capture, reassembled by the project's own stages: each side's
/// ordered bytes as pieces (segment by segment, as the pipeline delivers them) and gaps.
final class CapturedConnection: ByteStreamHandler {
    enum Piece { case bytes([UInt8]), gap(Int) }

    let info: ConnectionInfo
    var pieces: [[Piece]] = [[], []] // [initiator, responder]

    init(info: ConnectionInfo) { self.info = info }

    var clientPort: UInt16 { info.initiator.port }
    func stream(_ direction: Direction) -> [UInt8] {
        pieces[direction.rawValue].reduce(into: []) { all, piece in if case .bytes(let b) = piece { all += b } }
    }

    func receive(_ bytes: UnsafeRawBufferPointer, from side: Direction, at position: StreamPosition) {
        pieces[side.rawValue].append(.bytes(Array(bytes)))
    }
    func gap(_ length: Int, from side: Direction, at position: StreamPosition) {
        pieces[side.rawValue].append(.gap(length))
    }
    func end(of side: Direction, reason: StreamEndReason, time: Int64) {}
    func close(_ accounting: ConnectionAccounting) {}

    /// Feeds both sides into a TLSConnection in segment order, the client's pieces first where
    /// `interleave` is false, alternately otherwise.
    func decode(keyLog: KeyLog, pieceLimit: Int = .max) -> (TLSSummary, RecordLog) {
        let log = RecordLog()
        let connection = TLSConnection(keyLog: keyLog, onRecord: log.handler())
        var next = [0, 0]
        while next[0] < pieces[0].count || next[1] < pieces[1].count {
            for side in 0..<2 where next[side] < pieces[side].count {
                let direction = Direction(rawValue: side)!
                switch pieces[side][next[side]] {
                case .bytes(let bytes):
                    connection.receive(bytes, from: direction, inPiecesOf: min(pieceLimit, max(1, bytes.count)))
                case .gap(let length): connection.gap(length, in: direction)
                }
                next[side] += 1
            }
        }
        connection.finish()
        return (connection.summary, log)
    }
}

final class ConnectionCollector: ByteStreamHandlerFactory {
    var connections: [CapturedConnection] = []
    func makeHandler(for connection: ConnectionInfo) -> ByteStreamHandler {
        let handler = CapturedConnection(info: connection)
        connections.append(handler)
        return handler
    }
}

/// Reads a capture into its TCP connections, in the order of their first packets.
func capturedConnections(_ path: String) throws -> [CapturedConnection] {
    let reader = try CaptureReader(path: path)
    let decoder = PacketDecoder()
    let collector = ConnectionCollector()
    let assembler = TCPAssembler(factory: collector)
    while let frame = try reader.next() {
        if case .segment(let segment) = decoder.decode(frame) { assembler.process(segment) }
    }
    assembler.finish()
    return collector.connections
}

func sampleKeyLog(_ name: String) throws -> KeyLog {
    try KeyLog.load(path: Fixtures.sample(name))
}

/// The pcapng Decryption Secrets Blocks of a file, read with a minimal block walker (the
/// capture reader does not hand them over yet).
func decryptionSecretsBlocks(_ path: String) throws -> KeyLog {
    let data = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
    var keyLog = KeyLog()
    var offset = 0
    var bigEndian = false
    func u32(_ at: Int) -> Int {
        let b = data[at..<(at + 4)].map(Int.init)
        return bigEndian ? b[0] << 24 | b[1] << 16 | b[2] << 8 | b[3] : b[3] << 24 | b[2] << 16 | b[1] << 8 | b[0]
    }
    while offset + 12 <= data.count {
        if data[offset..<(offset + 4)].elementsEqual([0x0a, 0x0d, 0x0d, 0x0a]) {
            bigEndian = data[offset + 8] == 0x1a // byte-order magic 0x1A2B3C4D
        }
        let type = u32(offset)
        let length = u32(offset + 4)
        guard length >= 12, offset + length <= data.count else { break }
        if type == 0x0000_000A {
            keyLog.add(
                decryptionSecretsBlockBody: Array(data[(offset + 8)..<(offset + length - 4)]), bigEndian: bigEndian,
                file: path)
        }
        offset += length
    }
    return keyLog
}
