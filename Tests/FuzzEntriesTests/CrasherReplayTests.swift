import Foundation
@testable import FuzzEntries
import XCTest

/// Inputs that once crashed a parser, replayed through the fuzz targets' own entry code
/// (without the sanitizer): each must now return normally. A regression brings the test
/// process down, naming nothing; the file being replayed is printed first for that case.
final class CrasherReplayTests: XCTestCase {
    static let fixtures = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("Fixtures")

    /// Regular files under `directory`, recursively, sorted; README.md and `.expect` sidecars
    /// are notes, not inputs.
    static func inputs(under directory: URL) -> [URL] {
        guard
            let walker = FileManager.default.enumerator(at: directory, includingPropertiesForKeys: [.isRegularFileKey])
        else { return [] }
        return walker.compactMap { $0 as? URL }
            .filter { (try? $0.resourceValues(forKeys: [.isRegularFileKey]).isRegularFile) == true }
            .filter { $0.pathExtension != "expect" && $0.lastPathComponent != "README.md" }
            .sorted { $0.path < $1.path }
    }

    private func replay(_ file: URL, through entry: FuzzEntry) throws {
        let bytes = [UInt8](try Data(contentsOf: file))
        print("replaying \(file.path) through \(entry.rawValue)")
        fflush(stdout)
        entry.run(bytes)
    }

    /// `fuzz-crashers/<target>/FILE`: what scripts/fuzz saved, through the target that found it.
    func testFuzzCrashersReplayThroughTheirTarget() throws {
        let root = Self.fixtures.appendingPathComponent("fuzz-crashers")
        var replayed = 0
        for file in Self.inputs(under: root) {
            let target = file.deletingLastPathComponent().lastPathComponent
            guard let entry = FuzzEntry(targetName: target) else {
                XCTFail("\(file.path): the folder \(target) names no fuzz target")
                continue
            }
            try replay(file, through: entry)
            replayed += 1
        }
        print("replayed \(replayed) fuzz crashers")
    }

    /// `crashers/`: whole input files (captures, HARs) that crashed a run; any target must
    /// survive any bytes, so each goes through all of them.
    func testCrashersReplayThroughEveryTarget() throws {
        for file in Self.inputs(under: Self.fixtures.appendingPathComponent("crashers")) {
            for entry in FuzzEntry.allCases { try replay(file, through: entry) }
        }
    }

    /// The seed corpora parse through their targets: a seed that trips a check (HTTP/1's
    /// byte buckets, GzipSizer's streaming) is a bug found without fuzzing. Every target has
    /// seeds (scripts/make-fuzz-corpus).
    func testSeedCorporaRunThroughTheirTargets() throws {
        for entry in FuzzEntry.allCases {
            let seeds = Self.inputs(under: Self.fixtures.appendingPathComponent("fuzz/\(entry.rawValue)"))
            XCTAssertFalse(seeds.isEmpty, "no seed corpus for \(entry.rawValue); run scripts/make-fuzz-corpus")
            for seed in seeds { entry.run([UInt8](try Data(contentsOf: seed))) }
        }
    }

    /// The stream seeds are cut from the HTTP sample captures, so each must carry HTTP
    /// records through its harness format: a seed that decodes to nothing would only seed noise.
    func testStreamSeedsCarryHTTPRecords() throws {
        for (target, run) in [
            ("FuzzTCPAssembler", TCPAssemblerEntry.run), ("FuzzHTTP1", HTTP1Entry.run), ("FuzzHTTP2", HTTP2Entry.run),
        ] {
            let seeds = Self.inputs(under: Self.fixtures.appendingPathComponent("fuzz/\(target)"))
            XCTAssertFalse(seeds.isEmpty, target)
            for seed in seeds {
                let sink = [UInt8](try Data(contentsOf: seed)).withUnsafeBytes { run($0) }
                XCTAssertGreaterThan(
                    sink.records, 0, "\(seed.lastPathComponent) gives no HTTP record through \(target)")
            }
        }
    }
}

/// The FuzzTLS seeds cut from the Python TLS samples decrypt with the entry's fixed key log,
/// so fuzzing starts from inputs that reach the ciphers.
final class TLSSeedTests: XCTestCase {
    func testPythonSeedsDecrypt() throws {
        let directory = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Fixtures/fuzz/FuzzTLS")
        for name in ["tls13-python-pcap", "tls12-python-pcap"] {
            let seed = [UInt8](try Data(contentsOf: directory.appendingPathComponent(name)))
            let summary = seed.withUnsafeBytes { TLSEntry.run($0) }
            XCTAssertTrue(summary.isDecrypted, name)
            XCTAssertGreaterThan(summary.client.decryptedRecords, 0, name)
            XCTAssertGreaterThan(summary.server.plaintextBytes, 0, name)
        }
    }
}

/// Mutated FuzzHTTP2 seeds (bytes overwritten at random, from a fixed seed) go through the
/// HTTP/2 reader without trapping: a cheap stand-in for a fuzz run in the ordinary suite.
final class HTTP2MutationTests: XCTestCase {
    func testMutatedSeedsNeverTrap() throws {
        let seeds = CrasherReplayTests.inputs(
            under: CrasherReplayTests.fixtures.appendingPathComponent("fuzz/FuzzHTTP2"))
        XCTAssertFalse(seeds.isEmpty)
        var state: UInt64 = 0x9E37_79B9_7F4A_7C15
        func next() -> UInt64 {
            // xorshift64*
            state ^= state >> 12
            state ^= state << 25
            state ^= state >> 27
            return state &* 0x2545_F491_4F6C_DD1D
        }
        for seed in seeds {
            let original = [UInt8](try Data(contentsOf: seed))
            for _ in 0..<100 {
                var input = original
                for _ in 0..<(1 + Int(next() % 8)) {
                    input[5 + Int(next() % UInt64(input.count - 5))] = UInt8(truncatingIfNeeded: next())
                }
                FuzzEntry.http2.run(input)
            }
        }
    }
}
