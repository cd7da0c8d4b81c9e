import Flows
import Foundation
import TestSupport
import XCTest
@testable import TLS

/// Every TLS sample decrypted here and by tshark with the same key log: each connection's
/// plaintext per direction, and the count, sizes and content types of its records.
final class TLSSampleOracleTests: XCTestCase {
    static let samples = [
        "tls13-nginx-curl", "tls12-nginx-curl", "tls12-resume", "tls13-keyupdate",
        "tls13-python", "tls12-python",
    ]

    func testEverySampleMatchesTshark() throws {
        guard let tshark = executable("tshark") else { throw XCTSkip("tshark not installed") }
        for name in Self.samples {
            let capture = Fixtures.sample(name + ".pcap")
            let keys = Fixtures.sample(name + ".keys")
            let keyLog = try KeyLog.load(path: keys)
            XCTAssertEqual(keyLog.issues, [], name)
            let connections = try capturedConnections(capture)
            XCTAssertFalse(connections.isEmpty, name)
            let records = try tsharkRecords(tshark, capture, keys)
            for (index, connection) in connections.enumerated() {
                let label = "\(name) connection \(index)"
                let (summary, log) = connection.decode(keyLog: keyLog)
                XCTAssertNil(summary.notDecrypted, label)
                let (client, server) = try tsharkPlaintext(
                    tshark, capture, keys, stream: index, clientPort: connection.clientPort)
                XCTAssertTrue(
                    log.plaintext[0] == client,
                    label + " client plaintext: \(log.plaintext[0].count) vs \(client.count) bytes")
                XCTAssertTrue(
                    log.plaintext[1] == server,
                    label + " server plaintext: \(log.plaintext[1].count) vs \(server.count) bytes")
                XCTAssertFalse(client.isEmpty, label)
                for direction in Direction.allCases {
                    let ours = log.records.filter { $0.direction == direction }.map {
                        TsharkRecord(length: $0.wireLength - 5, type: Int($0.contentType))
                    }
                    let fromClient = direction == .up
                    let theirs = records[index, default: []].filter { $0.fromClient == fromClient }.map(\.record)
                    XCTAssertEqual(ours, theirs, label + " \(direction) records")
                }
                XCTAssertEqual(summary.client.recordBytes, connection.stream(.up).count, label)
                XCTAssertEqual(summary.server.recordBytes, connection.stream(.down).count, label)
            }
        }
    }

    /// The pcapng with the secrets injected by editcap: its Decryption Secrets Block gives the
    /// same keys as the key log file, and the same plaintext.
    func testInjectedSecretsDecryptTheSame() throws {
        let fromBlock = try decryptionSecretsBlocks(Fixtures.sample("tls13-nginx-curl-dsb.pcapng"))
        let fromFile = try sampleKeyLog("tls13-nginx-curl.keys")
        XCTAssertEqual(fromBlock.issues, [])
        XCTAssertEqual(fromBlock.secrets, fromFile.secrets)
        let connections = try capturedConnections(Fixtures.sample("tls13-nginx-curl-dsb.pcapng"))
        let plain = try capturedConnections(Fixtures.sample("tls13-nginx-curl.pcap"))
        XCTAssertEqual(connections.count, 3)
        for (a, b) in zip(connections, plain) {
            let (summaryA, logA) = a.decode(keyLog: fromBlock)
            let (_, logB) = b.decode(keyLog: fromFile)
            XCTAssertNil(summaryA.notDecrypted)
            XCTAssertEqual(logA.plaintext, logB.plaintext)
        }
    }

    // MARK: tshark

    struct TsharkRecord: Equatable, CustomStringConvertible {
        var length: Int
        var type: Int
        var description: String { "\(type):\(length)" }
    }

    /// Records per TCP stream, in frame order, with their direction.
    private func tsharkRecords(_ tshark: String, _ capture: String, _ keys: String) throws
        -> [Int: [(fromClient: Bool, record: TsharkRecord)]]
    {
        let output = try runTool(
            tshark,
            [
                "-r", capture, "-o", "tls.keylog_file:" + keys, "-Y", "tls",
                "-T", "fields", "-E", "separator=/t", "-e", "tcp.stream", "-e", "tcp.srcport",
                "-e", "tcp.dstport", "-e", "tls.record.length", "-e", "tls.record.content_type",
            ])
        var result: [Int: [(fromClient: Bool, record: TsharkRecord)]] = [:]
        for line in output.split(separator: "\n") {
            let fields = line.split(separator: "\t", omittingEmptySubsequences: false).map(String.init)
            guard fields.count == 5, let stream = Int(fields[0]), let source = Int(fields[1]),
                let destination = Int(fields[2])
            else { continue }
            let lengths = fields[3].split(separator: ",").compactMap { Int($0) }
            let types = fields[4].split(separator: ",").compactMap { Int($0) }
            XCTAssertEqual(lengths.count, types.count, line.description)
            // the client is the side with the higher (ephemeral) port in these samples
            let fromClient = source > destination
            for (length, type) in zip(lengths, types) {
                result[stream, default: []].append((fromClient, TsharkRecord(length: length, type: type)))
            }
        }
        return result
    }

    /// The decrypted application data of one TCP stream, per direction (`follow,tls,raw`).
    /// Lines of node 0 come unindented, node 1's indented by a tab.
    private func tsharkPlaintext(_ tshark: String, _ capture: String, _ keys: String, stream: Int, clientPort: UInt16)
        throws
        -> ([UInt8], [UInt8])
    {
        let output = try runTool(
            tshark, ["-r", capture, "-o", "tls.keylog_file:" + keys, "-q", "-z", "follow,tls,raw,\(stream)"])
        var client: [UInt8] = []
        var server: [UInt8] = []
        var inData = false
        var nodeZeroIsClient = true
        for line in output.split(separator: "\n", omittingEmptySubsequences: false) {
            if line.hasPrefix("Node 0:") {
                nodeZeroIsClient = line.hasSuffix(":\(clientPort)")
                continue
            }
            if line.hasPrefix("Node 1:") {
                inData = true
                continue
            }
            guard inData, !line.hasPrefix("====") else { continue }
            let isServer = line.hasPrefix("\t") == nodeZeroIsClient
            let hex = line.trimmingCharacters(in: .whitespaces)
            guard !hex.isEmpty else { continue }
            if isServer { server += hexBytes(hex) } else { client += hexBytes(hex) }
        }
        return (client, server)
    }
}
