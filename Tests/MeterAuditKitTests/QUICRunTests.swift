import Analysis
import CaptureIO
import Foundation
import Flows
import PacketLayers
import TestSupport
import MeterAuditKit
import XCTest

/// QUIC through the whole run: RFC 9001 Appendix A's client and server Initial packets in a
/// capture (the RFC is the oracle for what they hold), and the HTTP/3 samples against tshark.
final class QUICRunTests: XCTestCase {
    static func hex(_ text: String) -> [UInt8] {
        let digits = Array(text.filter { !$0.isWhitespace })
        return stride(from: 0, to: digits.count, by: 2).map { UInt8(String(digits[$0...$0 + 1]), radix: 16)! }
    }

    private func udpFrame(_ from: String, _ to: String, _ payload: [UInt8]) -> [UInt8] {
        let (a, b) = (PacketBuilder.endpoint(from), PacketBuilder.endpoint(to))
        let udp = PacketBuilder.be16(a.port) + PacketBuilder.be16(b.port) + PacketBuilder.be16(UInt16(8 + payload.count))
            + [0, 0] + payload
        return PacketBuilder.frame(PacketBuilder.ipv4(source: a.address, destination: b.address, protocolNumber: 17, payload: udp))
    }

    /// The RFC's client Initial (1200 bytes) from port 50000, the server's Initial (135 bytes)
    /// answering, then the client's Initial again from port 50001 (a port change): one connection.
    func testInitialsMakeOneRowAcrossAPortChange() throws {
        let client = RFCPackets.client
        let server = RFCPackets.server
        let frames = [
            udpFrame("10.0.0.1:50000", "10.0.0.2:443", client),
            udpFrame("10.0.0.2:443", "10.0.0.1:50000", server),
            udpFrame("10.0.0.1:50001", "10.0.0.2:443", client),
        ]
        let pcap = CaptureFileWriter.pcap(frames.enumerated().map { .init(timestamp: Int64($0.offset) * 1000, bytes: $0.element) })
        let path = try CaptureFileWriter.temporaryFile(named: "quic-initials.pcap", containing: pcap)
        var rows: [ConnectionRow] = []
        let diagnostics = InputAnalyzer().analyze(path: path, connection: { rows.append($0) }) { _ in }
        XCTAssertEqual(rows.count, 1)
        let row = try XCTUnwrap(rows.first)
        XCTAssertEqual(row.protocolKind, .quic) // the RFC's ClientHello offers ALPN "alpn", not h3
        XCTAssertEqual(row.serverName, "example.com")
        XCTAssertEqual(row.alpn, "alpn")
        XCTAssertEqual(row.tlsVersion, "QUIC v1")
        XCTAssertEqual(row.cipherSuite, "TLS_AES_128_GCM_SHA256")
        XCTAssertEqual(row.decrypted, "no-key")
        XCTAssertEqual(row.records, 0)
        // Up: two datagrams of 1200 bytes: + 8 UDP + 20 IPv4 each, + 14 Ethernet.
        XCTAssertEqual(row.clientTCPBytes, 2400)
        XCTAssertEqual(row.clientCost.total.ip, 2 * 1228)
        XCTAssertEqual(row.clientCost.total.frame, 2 * 1242)
        XCTAssertEqual(row.serverCost.total.frame, 135 + 42)
        let udp = try XCTUnwrap(diagnostics.udp)
        XCTAssertEqual(udp.flows, 2)
        XCTAssertEqual(udp.readFlows, 2)
        XCTAssertEqual(udp.other, [:])
        let quic = try XCTUnwrap(udp.quic)
        XCTAssertEqual(quic.connections, 1)
        XCTAssertEqual(quic.up.packets, 2)
        XCTAssertEqual(quic.up.decrypted, 2)
        XCTAssertEqual(quic.down.decrypted, 1)
        XCTAssertEqual(quic.up.cryptoBytes, 2 * 241)
        XCTAssertEqual(quic.notDecrypted, ["no-key": 1])
        XCTAssertEqual(quic.undecryptedBytes, ["example.com": 2400 + 135])
        // Every UDP payload byte in one place: here each datagram is one Initial packet.
        XCTAssertEqual(quic.up.packetBytes, ["handshake": 2400, "stream": 0, "ack_only": 0, "control": 0, "unread": 0])
        XCTAssertEqual(quic.down.packetBytes["handshake"], 135)
        XCTAssertEqual(quic.up.datagramPadding + quic.up.unreadableBytes, 0)
    }

    /// Every HTTP/3 sample with its key log, against tshark's QUIC decryption: per direction,
    /// packets, STREAM frames and STREAM data bytes, and the UDP datagrams' frame and IP bytes.
    /// The samples come from scripts/make-h3-samples (METERAUDIT_H3_SAMPLES names another folder
    /// of them). tshark learns connections from their handshake: in a capture that starts after
    /// it (h3-midconn) it finds none, so that one is checked against the senders' qlog after the
    /// cut instead (`testMidConnectionAgainstTheSendersAfterTheCut`).
    func testH3SamplesAgreeWithTshark() throws {
        guard let tshark = executable("tshark") else { throw XCTSkip("tshark is not installed") }
        let folder = ProcessInfo.processInfo.environment["METERAUDIT_H3_SAMPLES"]
            ?? (Fixtures.sample("h3") as NSString).deletingLastPathComponent
        let names = ((try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? [])
            .filter { $0.hasPrefix("h3-") && ($0.hasSuffix(".pcap") || $0.hasSuffix(".pcap.gz")) }.sorted()
        guard !names.isEmpty else { throw XCTSkip("no h3-*.pcap in \(folder)") }
        var comparedWithQlog = 0
        defer { print("QUICRunTests: \(names.count) samples, \(comparedWithQlog) against their senders' qlog") }
        for name in names {
            let pcap = folder + "/" + name
            let keys = folder + "/" + name.replacingOccurrences(of: ".pcap.gz", with: ".pcap").dropLast(5) + ".keys"
            var options = AnalysisOptions()
            var keyOption: [String] = []
            if FileManager.default.fileExists(atPath: keys) {
                try options.loadKeyLogs([keys])
                keyOption = ["-o", "tls.keylog_file:" + keys]
            }
            var rows: [ConnectionRow] = []
            let diagnostics = InputAnalyzer(options: options).analyze(path: pcap, connection: { rows.append($0) }) { _ in }
            // tshark: the client's port is the source of the first packet.
            func perSide(_ filter: String, _ fields: [String]) throws -> [[Int]] {
                var sums = [[Int]](repeating: [Int](repeating: 0, count: fields.count), count: 2)
                var clientPort: String?
                let output = try runTool(
                    tshark, keyOption + ["-r", pcap, "-Y", filter, "-T", "fields", "-e", "udp.srcport"] + fields.flatMap { ["-e", $0] })
                for line in output.split(separator: "\n") {
                    let cells = line.split(separator: "\t", omittingEmptySubsequences: false).map(String.init)
                    guard cells.count == fields.count + 1 else { continue }
                    clientPort = clientPort ?? cells[0]
                    let side = cells[0] == clientPort ? 0 : 1
                    for (index, cell) in cells.dropFirst().enumerated() {
                        let values = cell.split(separator: ",")
                        // packet_length: one per packet (count them); IPv6's payload length plus its
                        // 40-byte header; the others summed.
                        switch fields[index] {
                        case "quic.packet_length": sums[side][index] += values.count
                        case "ipv6.plen": sums[side][index] += values.reduce(0) { $0 + (Int($1) ?? 0) + 40 }
                        default: sums[side][index] += values.reduce(0) { $0 + (Int($1) ?? 0) }
                        }
                    }
                }
                return sums
            }
            let quicSides = try perSide("quic", ["quic.packet_length", "quic.stream.length"])
            if name.hasPrefix("h3-midconn") {
                XCTAssertEqual(quicSides[0][0] + quicSides[1][0], 0, "\(name): tshark found a connection without its handshake")
                XCTAssertEqual(diagnostics.udp?.quic?.midConnection, 1, name)
                continue
            }
            guard let quic = diagnostics.udp?.quic else {
                XCTAssertEqual(quicSides[0][0] + quicSides[1][0], 0, "\(name): tshark found QUIC packets")
                continue
            }
            XCTAssertEqual([quic.up.packets, quic.down.packets], [quicSides[0][0], quicSides[1][0]], "\(name): packets")
            XCTAssertEqual([quic.up.streamBytes, quic.down.streamBytes], [quicSides[0][1], quicSides[1][1]], "\(name): STREAM bytes")
            let frames = try perSide("udp", ["frame.len", "ip.len", "ipv6.plen"])
            let row = try XCTUnwrap(rows.first { $0.protocolKind == .h3 || $0.protocolKind == .quic }, name)
            XCTAssertEqual([row.clientCost.total.frame, row.serverCost.total.frame], [frames[0][0], frames[1][0]], "\(name): frame bytes")
            XCTAssertEqual([row.clientCost.total.ip, row.serverCost.total.ip], [frames[0][1] + frames[0][2], frames[1][1] + frames[1][2]], "\(name): IP bytes")
            XCTAssertEqual(row.decrypted, keyOption.isEmpty ? "no-key" : "yes", name)
            // The senders' own logs (qlog, written by aioquic as it sent): packets, STREAM frames,
            // STREAM bytes and those sent again (same stream, same offset), per direction.
            let qlog = folder + "/" + name.prefix(while: { $0 != "." }) + ".qlog.gz"
            if !keyOption.isEmpty, FileManager.default.fileExists(atPath: qlog), let gzip = executable("gzip") {
                let sent = try Self.sentByEachSide(qlog: try runTool(gzip, ["-dc", qlog]))
                comparedWithQlog += 1
                for (side, figures) in [(0, quic.up), (1, quic.down)] {
                    XCTAssertEqual(
                        [figures.packets, figures.streamFrames, figures.streamBytes, figures.repeatedStreamBytes], sent[side],
                        "\(name): side \(side) against the sender's qlog")
                }
            }
            // Every UDP payload byte lands in one place: a packet by class, datagram padding or unreadable.
            for (side, payload) in [(quic.up, row.clientTCPBytes), (quic.down, row.serverTCPBytes)] {
                XCTAssertEqual(
                    side.packetBytes.values.reduce(0, +) + side.datagramPadding + side.unreadableBytes, payload,
                    "\(name): UDP payload by packet class")
                XCTAssertEqual(side.unreadableBytes, 0, name)
            }
        }
    }
}

/// Records what a QUIC connection's streams deliver, checking the contract on the way.
final class StreamRecorder: MultiplexedStreamHandler {
    var bytes = [0, 0]
    var gaps = 0
    var finished: Set<String> = []
    var next: [String: Int64] = [:]
    var outOfOrder = 0

    func receive(_ data: UnsafeRawBufferPointer, stream: UInt64, from side: Direction, at position: StreamPosition) {
        let key = "\(stream)/\(side.name)"
        if position.offset != next[key, default: 0] { outOfOrder += 1 }
        next[key] = position.offset + Int64(data.count)
        bytes[side.rawValue] += data.count
    }
    func gap(_ length: Int, stream: UInt64, from side: Direction, at position: StreamPosition) { gaps += length }
    func end(stream: UInt64, of side: Direction, reason: StreamEndReason, time: Int64) {
        if reason == .fin { finished.insert("\(stream)/\(side.name)") }
    }
    func close(_ accounting: ConnectionAccounting) {}
}

extension QUICRunTests {
    private var h3Folder: String? {
        let folder = ProcessInfo.processInfo.environment["METERAUDIT_H3_SAMPLES"]
            ?? (Fixtures.sample("h3") as NSString).deletingLastPathComponent
        return FileManager.default.fileExists(atPath: folder + "/h3-loss.qlog.gz") ? folder : nil
    }

    /// The loss sample's streams through the application's handler (what HTTP/3 will be): every
    /// byte the client and the server sent once (their qlog, repeats removed) arrives in order,
    /// none twice, no gap, and the streams the senders finished end with FIN.
    func testStreamsReachTheApplicationInOrder() throws {
        guard let folder = h3Folder, let gzip = executable("gzip") else { throw XCTSkip("no h3-loss sample") }
        let pcap = folder + "/h3-loss.pcap" + (FileManager.default.fileExists(atPath: folder + "/h3-loss.pcap") ? "" : ".gz")
        var options = AnalysisOptions()
        try options.loadKeyLogs([folder + "/h3-loss.keys"])
        let recorder = StreamRecorder()
        // An application of the test's own for ALPN h3, registered in one line.
        options.protocols.register(.quic("stream-recorder", alpn: "h3", handler: { _ in recorder }))
        _ = InputAnalyzer(options: options).analyze(path: pcap) { _ in }
        let sent = try Self.sentByEachSide(qlog: try runTool(gzip, ["-dc", folder + "/h3-loss.qlog.gz"]))
        XCTAssertEqual(recorder.bytes, [sent[0][2] - sent[0][3], sent[1][2] - sent[1][3]])
        XCTAssertEqual(recorder.outOfOrder, 0)
        XCTAssertEqual(recorder.gaps, 0)
        XCTAssertTrue(recorder.finished.contains("0/up") && recorder.finished.contains("0/down"), "\(recorder.finished)")
    }

    /// h3-midconn against what each peer logged as sent after the cut (Tests/Fixtures/h3/
    /// h3-midconn.truth.json, `scripts/h3-truth truth --after`): per direction, the QUIC packets
    /// and their bytes, the datagrams' UDP payload, and the STREAM frame data bytes; every packet
    /// decrypted, the trial found it on the second datagram (the first, alone, is tried with a
    /// 0-length destination ID only: 2 secrets x 2 variants, 4 masks and at most 4 AEAD opens;
    /// the second, from the client too, confirms length 8, tried first: one mask, one open), and
    /// the other direction was found by trial too.
    func testMidConnectionAgainstTheSendersAfterTheCut() throws {
        guard let folder = h3Folder else { throw XCTSkip("no h3 samples") }
        var options = AnalysisOptions()
        try options.loadKeyLogs([folder + "/h3-midconn.keys"])
        var rows: [ConnectionRow] = []
        let diagnostics = InputAnalyzer(options: options).analyze(
            path: folder + "/h3-midconn.pcap", connection: { rows.append($0) }) { _ in }
        let udp = try XCTUnwrap(diagnostics.udp)
        let quic = try XCTUnwrap(udp.quic)
        let truth = try JSONSerialization.jsonObject(
            with: Data(contentsOf: URL(fileURLWithPath: Fixtures.path("h3/h3-midconn.truth.json")))) as! [String: Any]
        let directions = ((truth["connections"] as! [[String: Any]])[0]["directions"]) as! [String: [String: Any]]
        XCTAssertEqual(udp.other, [:])
        XCTAssertEqual(udp.readFlows, 1)
        XCTAssertEqual(quic.connections, 1)
        XCTAssertEqual(quic.decrypted, 1)
        XCTAssertEqual(quic.midConnection, 1)
        let row = try XCTUnwrap(rows.first)
        for (label, side, sent) in [("up", quic.up, row.clientTCPBytes), ("down", quic.down, row.serverTCPBytes)] {
            let truth = try XCTUnwrap(directions[label])
            XCTAssertEqual(side.packets, truth["packets"] as? Int, "\(label): packets")
            XCTAssertEqual(side.decrypted, side.packets, "\(label): every packet decrypted")
            XCTAssertEqual(side.packetBytes.values.reduce(0, +), truth["packet_bytes"] as? Int, "\(label): packet bytes")
            XCTAssertEqual(sent, truth["datagram_bytes"] as? Int, "\(label): UDP payload")
            XCTAssertEqual(side.streamBytes, truth["stream_frame_bytes"] as? Int, "\(label): STREAM bytes")
            XCTAssertEqual(side.repeatedStreamBytes, truth["retransmitted_stream_bytes"] as? Int, "\(label): repeated")
            XCTAssertEqual(side.withoutKey + side.badTag + side.unreadableBytes, 0, label)
        }
        let trials = try XCTUnwrap(udp.midConnectionTrials)
        XCTAssertEqual([trials.flows, trials.datagrams, trials.connections, trials.untriedFlows], [1, 2, 1, 0])
        XCTAssertGreaterThanOrEqual(trials.trials, 4 + 2)
        XCTAssertLessThanOrEqual(trials.trials, 4 + 4 + 2)
    }

    /// The same capture with every secret of its key log wrong: no tag verifies, so the flow is
    /// what it was without the trial, other UDP (never a guessed connection), every byte counted
    /// there; the trial tried its 4 datagrams and stopped.
    func testMidConnectionWithAWrongKeyStaysOtherUDP() throws {
        guard let folder = h3Folder else { throw XCTSkip("no h3 samples") }
        let text = try String(contentsOfFile: folder + "/h3-midconn.keys", encoding: .utf8)
        let wrong = text.split(separator: "\n").map { line -> String in
            guard let last = line.last, let digit = last.hexDigitValue else { return String(line) }
            return line.dropLast() + String((digit + 1) % 16, radix: 16)
        }.joined(separator: "\n") + "\n"
        let keys = try CaptureFileWriter.temporaryFile(named: "midconn-wrong.keys", containing: Array(wrong.utf8))
        var options = AnalysisOptions()
        try options.loadKeyLogs([keys])
        var rows: [ConnectionRow] = []
        var records = 0
        let diagnostics = InputAnalyzer(options: options).analyze(
            path: folder + "/h3-midconn.pcap", connection: { rows.append($0) }) { _ in records += 1 }
        let udp = try XCTUnwrap(diagnostics.udp)
        XCTAssertEqual(records, 0)
        XCTAssertEqual(rows.count, 0)
        XCTAssertNil(udp.quic)
        XCTAssertEqual(udp.readFlows, 0)
        XCTAssertEqual(udp.readDatagrams, 0)
        // 16 datagrams: 1,890 + 2,662 payload bytes (the truth's datagram bytes), 8 + 20 + 14
        // bytes of UDP, IPv4 and Ethernet headers each.
        let port = try XCTUnwrap(udp.other["18534"])
        XCTAssertEqual(port.flows, 1)
        XCTAssertEqual(port.datagrams, 16)
        XCTAssertEqual(port.payloadBytes, 1890 + 2662)
        XCTAssertEqual(port.udpBytes, 1890 + 2662 + 16 * 8)
        XCTAssertEqual(port.ipBytes, 1890 + 2662 + 16 * 28)
        XCTAssertEqual(port.frameBytes, 1890 + 2662 + 16 * 42)
        XCTAssertEqual(udp.otherUp.datagrams + udp.otherDown.datagrams, 16)
        let trials = try XCTUnwrap(udp.midConnectionTrials)
        XCTAssertEqual(trials.flows, 1)
        XCTAssertEqual(trials.datagrams, Limits().midConnectionQUIC.maxDatagramsTried)
        XCTAssertEqual(trials.connections, 0)
        XCTAssertGreaterThan(trials.trials, 0)
        XCTAssertLessThanOrEqual(trials.trials, Limits().midConnectionQUIC.maxTrialsPerFlow)
    }

    /// h3-midconn without its first two datagrams (the client's): the first one captured is the
    /// server's, opened by the server's secret, so the flow's first sender is the server; the row
    /// still names the client as client, and both directions are read.
    func testMidConnectionFirstSeenFromTheServer() throws {
        guard let folder = h3Folder else { throw XCTSkip("no h3 samples") }
        let bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: folder + "/h3-midconn.pcap")))
        // Classic pcap, little-endian: a 24-byte file header, then 16-byte record headers.
        var at = 24
        for _ in 0..<2 {
            let length = Int(bytes[at + 8]) | Int(bytes[at + 9]) << 8 | Int(bytes[at + 10]) << 16 | Int(bytes[at + 11]) << 24
            at += 16 + length
        }
        let cut = try CaptureFileWriter.temporaryFile(named: "midconn-server-first.pcap", containing: Array(bytes[0..<24] + bytes[at...]))
        var options = AnalysisOptions()
        try options.loadKeyLogs([folder + "/h3-midconn.keys"])
        var rows: [ConnectionRow] = []
        let diagnostics = InputAnalyzer(options: options).analyze(path: cut, connection: { rows.append($0) }) { _ in }
        let row = try XCTUnwrap(rows.first)
        XCTAssertEqual(row.client, "127.0.0.1:58847")
        XCTAssertEqual(row.server, "127.0.0.1:18534")
        XCTAssertEqual(row.decrypted, "mid-connection")
        let quic = try XCTUnwrap(diagnostics.udp?.quic)
        // The truth's 9 client packets less the 2 cut, and the server's 7.
        XCTAssertEqual([quic.up.packets, quic.down.packets], [7, 7])
        XCTAssertEqual([quic.up.decrypted, quic.down.decrypted], [7, 7])
    }

    /// A key log whose secrets are all wrong: tags do not verify, so nothing is read past the
    /// Initial packets, and the row says bad-key.
    func testWrongSecretsAreABadKey() throws {
        guard let folder = h3Folder else { throw XCTSkip("no h3 samples") }
        let text = try String(contentsOfFile: folder + "/h3-mixed.keys", encoding: .utf8)
        // The last hex digit of every secret changed.
        let wrong = text.split(separator: "\n").map { line -> String in
            guard let last = line.last, let digit = last.hexDigitValue else { return String(line) }
            return line.dropLast() + String((digit + 1) % 16, radix: 16)
        }.joined(separator: "\n") + "\n"
        let keys = try CaptureFileWriter.temporaryFile(named: "wrong.keys", containing: Array(wrong.utf8))
        var options = AnalysisOptions()
        try options.loadKeyLogs([keys])
        var rows: [ConnectionRow] = []
        let diagnostics = InputAnalyzer(options: options).analyze(path: folder + "/h3-mixed.pcap", connection: { rows.append($0) }) { _ in }
        XCTAssertEqual(rows.first?.decrypted, "bad-key")
        let quic = try XCTUnwrap(diagnostics.udp?.quic)
        XCTAssertGreaterThan(quic.up.badTag + quic.down.badTag, 0)
        XCTAssertEqual(quic.up.streamBytes + quic.down.streamBytes, 0)
        XCTAssertEqual(quic.decrypted, 0)
    }

    /// Per side (client, server): packets sent, STREAM frames, their data bytes, and the bytes
    /// that repeat a (stream, offset) the side had sent before, from each vantage point's
    /// `packet_sent` events.
    static func sentByEachSide(qlog text: String) throws -> [[Int]] {
        let root = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any])
        var result = [[0, 0, 0, 0], [0, 0, 0, 0]]
        for trace in root["traces"] as? [[String: Any]] ?? [] {
            let type = (trace["vantage_point"] as? [String: Any])?["type"] as? String
            let side = type == "client" ? 0 : 1
            var seen: [Int: [Range<Int>]] = [:]
            for event in trace["events"] as? [[String: Any]] ?? [] {
                guard let name = event["name"] as? String, name.hasSuffix("packet_sent"),
                    let data = event["data"] as? [String: Any]
                else { continue }
                result[side][0] += 1
                for frame in data["frames"] as? [[String: Any]] ?? [] where frame["frame_type"] as? String == "stream" {
                    guard let id = frame["stream_id"] as? Int, let offset = frame["offset"] as? Int,
                        let length = frame["length"] as? Int
                    else { continue }
                    result[side][1] += 1
                    result[side][2] += length
                    let range = offset..<(offset + length)
                    // `seen` holds each stream's sent bytes as disjoint ranges.
                    var union = seen[id, default: []]
                    result[side][3] += union.reduce(0) { $0 + ($1.overlaps(range) ? $1.clamped(to: range).count : 0) }
                    union.append(range)
                    union.sort { $0.lowerBound < $1.lowerBound }
                    var merged: [Range<Int>] = []
                    for next in union {
                        if let last = merged.last, last.upperBound >= next.lowerBound {
                            merged[merged.count - 1] = last.lowerBound..<max(last.upperBound, next.upperBound)
                        } else {
                            merged.append(next)
                        }
                    }
                    seen[id] = merged
                }
            }
        }
        return result
    }
}

/// RFC 9001 A.2 and A.3, the protected packets verbatim.
enum RFCPackets {
    static let client = QUICRunTests.hex(
        """
        c000000001088394c8f03e5157080000449e7b9aec34d1b1c98dd7689fb8ec11
        d242b123dc9bd8bab936b47d92ec356c0bab7df5976d27cd449f63300099f399
        1c260ec4c60d17b31f8429157bb35a1282a643a8d2262cad67500cadb8e7378c
        8eb7539ec4d4905fed1bee1fc8aafba17c750e2c7ace01e6005f80fcb7df6212
        30c83711b39343fa028cea7f7fb5ff89eac2308249a02252155e2347b63d58c5
        457afd84d05dfffdb20392844ae812154682e9cf012f9021a6f0be17ddd0c208
        4dce25ff9b06cde535d0f920a2db1bf362c23e596d11a4f5a6cf3948838a3aec
        4e15daf8500a6ef69ec4e3feb6b1d98e610ac8b7ec3faf6ad760b7bad1db4ba3
        485e8a94dc250ae3fdb41ed15fb6a8e5eba0fc3dd60bc8e30c5c4287e53805db
        059ae0648db2f64264ed5e39be2e20d82df566da8dd5998ccabdae053060ae6c
        7b4378e846d29f37ed7b4ea9ec5d82e7961b7f25a9323851f681d582363aa5f8
        9937f5a67258bf63ad6f1a0b1d96dbd4faddfcefc5266ba6611722395c906556
        be52afe3f565636ad1b17d508b73d8743eeb524be22b3dcbc2c7468d54119c74
        68449a13d8e3b95811a198f3491de3e7fe942b330407abf82a4ed7c1b311663a
        c69890f4157015853d91e923037c227a33cdd5ec281ca3f79c44546b9d90ca00
        f064c99e3dd97911d39fe9c5d0b23a229a234cb36186c4819e8b9c5927726632
        291d6a418211cc2962e20fe47feb3edf330f2c603a9d48c0fcb5699dbfe58964
        25c5bac4aee82e57a85aaf4e2513e4f05796b07ba2ee47d80506f8d2c25e50fd
        14de71e6c418559302f939b0e1abd576f279c4b2e0feb85c1f28ff18f58891ff
        ef132eef2fa09346aee33c28eb130ff28f5b766953334113211996d20011a198
        e3fc433f9f2541010ae17c1bf202580f6047472fb36857fe843b19f5984009dd
        c324044e847a4f4a0ab34f719595de37252d6235365e9b84392b061085349d73
        203a4a13e96f5432ec0fd4a1ee65accdd5e3904df54c1da510b0ff20dcc0c77f
        cb2c0e0eb605cb0504db87632cf3d8b4dae6e705769d1de354270123cb11450e
        fc60ac47683d7b8d0f811365565fd98c4c8eb936bcab8d069fc33bd801b03ade
        a2e1fbc5aa463d08ca19896d2bf59a071b851e6c239052172f296bfb5e724047
        90a2181014f3b94a4e97d117b438130368cc39dbb2d198065ae3986547926cd2
        162f40a29f0c3c8745c0f50fba3852e566d44575c29d39a03f0cda721984b6f4
        40591f355e12d439ff150aab7613499dbd49adabc8676eef023b15b65bfc5ca0
        6948109f23f350db82123535eb8a7433bdabcb909271a6ecbcb58b936a88cd4e
        8f2e6ff5800175f113253d8fa9ca8885c2f552e657dc603f252e1a8e308f76f0
        be79e2fb8f5d5fbbe2e30ecadd220723c8c0aea8078cdfcb3868263ff8f09400
        54da48781893a7e49ad5aff4af300cd804a6b6279ab3ff3afb64491c85194aab
        760d58a606654f9f4400e8b38591356fbf6425aca26dc85244259ff2b19c41b9
        f96f3ca9ec1dde434da7d2d392b905ddf3d1f9af93d1af5950bd493f5aa731b4
        056df31bd267b6b90a079831aaf579be0a39013137aac6d404f518cfd4684064
        7e78bfe706ca4cf5e9c5453e9f7cfd2b8b4c8d169a44e55c88d4a9a7f9474241
        e221af44860018ab0856972e194cd934
        """)
    static let server = QUICRunTests.hex(
        """
        cf000000010008f067a5502a4262b5004075c0d95a482cd0991cd25b0aac406a
        5816b6394100f37a1c69797554780bb38cc5a99f5ede4cf73c3ec2493a1839b3
        dbcba3f6ea46c5b7684df3548e7ddeb9c3bf9c73cc3f3bded74b562bfb19fb84
        022f8ef4cdd93795d77d06edbb7aaf2f58891850abbdca3d20398c276456cbc4
        2158407dd074ee
        """)
}
