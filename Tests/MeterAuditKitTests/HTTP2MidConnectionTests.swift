import Analysis
import CaptureIO
import Foundation
import MessageModel
import MeterAuditKit
import PacketLayers
import TestSupport
import XCTest

/// Captures begun mid-connection (issue 22, docs/METERING.md §2a "Partial decoding"): every
/// field that does not depend on HPACK state the capture never saw is decoded, every other one
/// is unknown. The oracle is the Python peer's frame log: `scripts/hpack-representations`
/// encodes its fields again with the peer's own encoder (checked against the frames' lengths)
/// and tells each field's representation; which entries a cut capture saw inserted follows.
final class HTTP2MidConnectionTests: XCTestCase {
    struct Rep: Decodable {
        var index: Int
        var literal: Bool
        var inserted: Bool
    }

    struct Block: Decodable {
        var label: String
        var side: String
        var stream: Int
        var fields: [[String]]
        var reps: [Rep]
    }

    struct Packet {
        var timestamp: Int64
        var bytes: [UInt8]
        var linkType: Int32
        var fromClient: Bool
        var payload: Int
        var segment: (source: TransportEndpoint, destination: TransportEndpoint, seq: UInt32, ack: UInt32, flags: TCPFlags, payload: [UInt8])?
    }

    func blocks(_ log: String) throws -> [Block] {
        guard let python = executable("python3") else { throw XCTSkip("python3 not installed") }
        let output = try runTool(
            python, [Fixtures.root.appendingPathComponent("scripts/hpack-representations").path, Fixtures.sample(log)])
        return try output.split(separator: "\n").map { try JSONDecoder().decode(Block.self, from: Data($0.utf8)) }
    }

    func packets(_ name: String, clientPort: UInt16) throws -> [Packet] {
        let reader = try CaptureReader(path: Fixtures.sample(name))
        let decoder = PacketDecoder()
        var packets: [Packet] = []
        while let frame = try reader.next() {
            var packet = Packet(
                timestamp: frame.timestamp, bytes: Array(frame.bytes), linkType: frame.linkType, fromClient: false,
                payload: 0)
            if case let .segment(segment) = decoder.decode(frame) {
                packet.fromClient = segment.source.port == clientPort
                packet.payload = segment.payload.count
                packet.segment = (
                    segment.source, segment.destination, segment.sequence, segment.acknowledgment, segment.flags,
                    Array(segment.payload)
                )
            }
            packets.append(packet)
        }
        return packets
    }

    /// Where each block's first frame begins in its sender's stream, and where its last ends.
    func blockOffsets(_ log: String) throws -> [String: (start: Int, end: Int)] {
        var offsets: [String: (start: Int, end: Int)] = [:]
        var position = ["client": 0, "server": 0]
        var pending: [String: String] = [:]
        for line in try String(contentsOfFile: Fixtures.sample(log), encoding: .utf8).split(separator: "\n") {
            let entry = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
            let side = try XCTUnwrap(entry["side"] as? String)
            if entry["kind"] as? String == "fields" {
                pending[side] = entry["label"] as? String
                continue
            }
            if entry["type"] as? String == "preface" {
                position[side, default: 0] += 24
                continue
            }
            guard let type = entry["type"] as? Int, let length = entry["length"] as? Int else { continue }
            let start = position[side, default: 0]
            position[side] = start + 9 + length
            if [1, 5, 9].contains(type), let label = pending[side] {
                let flags = entry["flags"] as? Int ?? 0
                offsets[label] = (offsets[label]?.start ?? start, start + 9 + length)
                if flags & 4 != 0 { pending[side] = nil }
            }
        }
        return offsets
    }

    /// What a cut capture can know of each block's fields: for each side, the entries it saw
    /// inserted (newest first, whether each one's name is known); a field is known when it is
    /// static, literal, or refers to such an entry with a known name.
    func expectedKnown(_ blocks: [Block], seen: (Block) -> Bool) -> [String: [Bool]] {
        var inserted: [String: [Bool]] = [:]
        var known: [String: [Bool]] = [:]
        for block in blocks where seen(block) {
            var table = inserted[block.side] ?? []
            var flags: [Bool] = []
            for rep in block.reps {
                let index = rep.index
                let nameKnown: Bool
                if index == 0 || index <= 61 {
                    nameKnown = true
                } else {
                    nameKnown = index - 62 < table.count && table[index - 62]
                }
                flags.append(nameKnown)
                if rep.inserted { table.insert(nameKnown, at: 0) }
            }
            inserted[block.side] = table
            known[block.label] = flags
        }
        return known
    }

    struct CutResult {
        var records: Int
        var checkedFields = 0
        var knownFields = 0
        var unknownFields = 0
    }

    /// Checks one cut capture's records against the oracle; returns its counts.
    func check(
        records: [MessageRecord], blocks: [Block], known: [String: [Bool]], label cut: String
    ) -> CutResult {
        var result = CutResult(records: records.count)
        for block in blocks {
            guard let flags = known[block.label] else { continue }
            let kind = block.label.hasPrefix("request") ? "request" : "response"
            let matching = records.filter {
                $0.message.kind.rawValue == kind && $0.message.protocolFacts.stream == UInt64(block.stream)
                    && !$0.message.isInterim
            }
            let name = "\(cut): \(block.label)"
            XCTAssertEqual(matching.count, 1, name + " among " + records.map { "\($0.message.kind) \($0.message.protocolFacts.stream ?? 0) \($0.message.status ?? 0)" }.joined(separator: ";"))
            guard let record = matching.first else { continue }
            let message = record.message
            var regular: [HeaderField] = []
            var missing = HeadParts()
            for (field, isKnown) in zip(block.fields, flags) {
                result.checkedFields += 1
                if isKnown { result.knownFields += 1 } else { result.unknownFields += 1 }
                let (fieldName, value) = (field[0], field[1])
                let part: HeadParts? =
                    [":method": .method, ":scheme": .scheme, ":authority": .authority, ":path": .path, ":status": .status][
                        fieldName]
                if let part {
                    if !isKnown { missing.insert(part) }
                    guard isKnown else { continue }
                    switch fieldName {
                    case ":method": XCTAssertEqual(message.method, value, name)
                    case ":status": XCTAssertEqual(message.status, Int(value), name)
                    case ":path":
                        XCTAssertEqual(String(decoding: RequestTarget(message.target).path, as: UTF8.self), value, name)
                    case ":authority" where !missing.contains(.scheme):
                        XCTAssertEqual(RequestTarget(message.target).authority, value, name)
                    default: break
                    }
                } else if isKnown {
                    regular.append(HeaderField(fieldName, value))
                } else {
                    missing.insert(.fields)
                }
            }
            // Every known field decoded, in order; every unknown one left out and named.
            XCTAssertEqual(message.fields, regular, name)
            if missing.isEmpty {
                XCTAssertTrue(message.fieldsKnown, name)
                XCTAssertFalse(message.anomalies.contains(.hpackStateUnknown), name)
                let size = block.fields.reduce(0) { $0 + $1[0].utf8.count + $1[1].utf8.count + 32 }
                XCTAssertEqual(message.protocolFacts.headerListSize, size, name)
            } else {
                XCTAssertFalse(message.fieldsKnown, name)
                XCTAssertTrue(message.anomalies.contains(.hpackStateUnknown), name)
                XCTAssertNil(message.protocolFacts.headerListSize, name)
                XCTAssertEqual(message.protocolFacts.unknownHeadParts, missing, name)
            }
            if kind == "request" {
                XCTAssertEqual(
                    message.requestLineKnown, missing.isDisjoint(with: .requestLine), name)
            }
        }
        return result
    }

    /// The capture starts after each of the first five exchanges of h2c-more in turn: right
    /// after the k-th request's header block, in the middle of the client's packet when the
    /// block ends there (that packet rewritten from the next frame on, its sequence number
    /// moved on: TestSupport's PacketBuilder). The client's bytes come first, so the capture
    /// takes it for the initiator, as a capture started between two requests would.
    func testCapturesStartingAfterEachOfTheFirstFiveExchanges() throws {
        let blocks = try blocks("h2c-more.frames.jsonl")
        let offsets = try blockOffsets("h2c-more.frames.jsonl")
        let packets = try packets("h2c-more.pcap", clientPort: 48064)
        let requests = blocks.filter { $0.side == "client" }.prefix(5)
        XCTAssertEqual(requests.count, 5)
        var summary: [String] = []
        for request in requests {
            let end = try XCTUnwrap(offsets[request.label]?.end)
            // The client packet carrying the block's last byte.
            var before = [0, 0]
            var kept: [CaptureFileWriter.Frame] = []
            var first: Int?
            for (number, packet) in packets.enumerated() {
                let side = packet.fromClient ? 0 : 1
                if first == nil, packet.fromClient, before[0] + packet.payload > end, let segment = packet.segment {
                    let skip = end - before[0]
                    first = number
                    before[0] = end
                    kept.append(
                        CaptureFileWriter.Frame(
                            timestamp: packet.timestamp,
                            bytes: PacketBuilder.tcp(
                                from: segment.source, to: segment.destination, seq: segment.seq &+ UInt32(skip),
                                ack: segment.ack, flags: segment.flags, payload: Array(segment.payload[skip...]))))
                    continue
                }
                if first == nil {
                    before[side] += packet.payload
                } else {
                    kept.append(CaptureFileWriter.Frame(timestamp: packet.timestamp, bytes: packet.bytes))
                }
            }
            XCTAssertNotNil(first, request.label)
            let file = try CaptureFileWriter.temporaryFile(
                named: "h2c-more-after-\(request.label.replacingOccurrences(of: ":", with: "-")).pcap",
                containing: CaptureFileWriter.pcap(kept, linkType: packets[0].linkType))
            var records: [MessageRecord] = []
            let diagnostics = InputAnalyzer(options: AnalysisOptions()).analyze(path: file, connection: { _ in }) {
                records.append($0)
            }
            XCTAssertNil(diagnostics.error)
            // A block is the capture's when its first frame begins after the cut.
            let known = expectedKnown(blocks) { block in
                guard let start = offsets[block.label]?.start else { return false }
                return start >= before[block.side == "client" ? 0 : 1]
            }
            let result = check(records: records, blocks: blocks, known: known, label: "after \(request.label)")
            XCTAssertGreaterThan(result.checkedFields, 0, request.label)
            summary.append(
                "after \(request.label) (from packet \((first ?? 0) + 1)): \(result.records) records, "
                    + "\(known.count) header blocks, \(result.knownFields) fields known, \(result.unknownFields) unknown")
        }
        print(summary.joined(separator: "\n"))
    }

    /// Samples/h2c-midconn: every record's method, path and status known where the frame log
    /// says they can be. Before partial decoding all 10 records had none (all unknown).
    func testMidconnSampleKnowsWhatTheFrameLogAllows() throws {
        let blocks = try blocks("h2c-more.frames.jsonl")
        var records: [MessageRecord] = []
        let diagnostics = InputAnalyzer(options: AnalysisOptions()).analyze(
            path: Fixtures.sample("h2c-midconn.pcap"), connection: { _ in }
        ) { records.append($0) }
        XCTAssertNil(diagnostics.error)
        // h2c-midconn begins after the first exchange: its blocks are all but request:1's and response:1's.
        let known = expectedKnown(blocks) { !$0.label.hasSuffix(":1") }
        let result = check(records: records, blocks: blocks, known: known, label: "h2c-midconn")
        XCTAssertEqual(records.count, 10)
        let requests = records.filter { $0.message.kind == .request }
        let responses = records.filter { $0.message.kind == .response }
        XCTAssertEqual(requests.filter { $0.message.method != nil }.count, 5)
        XCTAssertEqual(requests.filter { !RequestTarget($0.message.target).path.isEmpty }.count, 5)
        XCTAssertEqual(responses.filter { $0.message.status != nil }.count, 5)
        // :authority was inserted by request:1, before the capture: no endpoint can be told.
        XCTAssertTrue(records.allSatisfy { $0.endpoint.hasPrefix("?") })
        XCTAssertEqual(records.filter { $0.message.fieldsKnown }.count, 1, "response:5 (304) is wholly known")
        print("h2c-midconn: \(result.knownFields) fields known, \(result.unknownFields) unknown")
    }
}
