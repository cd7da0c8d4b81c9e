import Foundation
import TestSupport
import XCTest

/// scripts/cluster/dask-analyze on a LocalCluster of 2 workers (docs/SCALE.md): 200 renamed
/// copies of the sample captures, analyzed in batches on the cluster and merged in a tree,
/// give every file one `meteraudit analyze` over the same files writes, byte for byte. The
/// script installs dask and distributed into .venv-cluster/ the first time (from PyPI).
final class DaskAnalyzeTests: XCTestCase {
    func testTwoWorkersOverTwoHundredCopiesEqualOneAnalyze() throws {
        let scratch = NSTemporaryDirectory() + "meteraudit-dask-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: scratch) }
        let folder = scratch + "/inputs"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        let captures = try Fixtures.sampleInputs().filter {
            $0.hasSuffix(".pcap") || $0.hasSuffix(".pcapng") || $0.hasSuffix(".pcap.gz")
        }
        XCTAssertGreaterThan(captures.count, 20)
        var inputs: [String] = []
        for copy in 0..<200 {
            let capture = captures[copy % captures.count]
            // Renamed: one name per copy, in the order the glob sorts them.
            let path = folder + String(format: "/copy-%03d-", copy) + (capture as NSString).lastPathComponent
            try FileManager.default.copyItem(atPath: capture, toPath: path)
            inputs.append(path)
        }
        let keys = try Fixtures.sampleKeyLogs().flatMap { ["--keylog", $0] }
        let binary = try BuiltExecutable.meteraudit().path

        let whole = scratch + "/whole"
        let one = try BuiltExecutable.run(
            URL(fileURLWithPath: binary), ["analyze"] + inputs + keys + ["--out", whole, "--quiet"])
        XCTAssertEqual(one.status, 0, one.stderr)

        let out = scratch + "/cluster"
        let script = Fixtures.root.appendingPathComponent("scripts/cluster/dask-analyze").path
        // Batches of about 200 KB (some 30 tasks), merged 4 at a time.
        let cluster = try BuiltExecutable.run(
            URL(fileURLWithPath: "/usr/bin/env"),
            ["python3", script, folder + "/*.pcap*", "--out", out, "--workers", "2", "--batch-mb", "0.2", "--tree", "4",
             "--meteraudit", binary, "--"] + keys)
        XCTAssertEqual(cluster.status, 0, cluster.stderr)
        XCTAssertTrue(cluster.stderr.contains("200 inputs in "), cluster.stderr)
        XCTAssertTrue(cluster.stderr.contains("merge level 1"), cluster.stderr)
        XCTAssertFalse(FileManager.default.fileExists(atPath: out + ".parts"), "parts removed after the merge")
        for name in MergeTests.outputs {
            let expected = FileManager.default.contents(atPath: whole + "/" + name)
            XCTAssertNotNil(expected, name)
            XCTAssertTrue(
                FileManager.default.contents(atPath: out + "/" + name) == expected,
                "\(name) differs from one analyze's")
        }
    }

    /// An input whose analyze fails every time (a stand-in binary that crashes on it) is tried
    /// in its batch twice, then alone twice, then named and left out; the others are merged as
    /// one analyze over them would have them, and the exit status is 1.
    func testAnInputFailingTwiceIsLeftOutAndTheRestGoOn() throws {
        let scratch = NSTemporaryDirectory() + "meteraudit-dask-fail-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: scratch) }
        let folder = scratch + "/inputs"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        var good: [String] = []
        for (index, name) in ["nginx-curl.pcap", "python-pipeline.pcap", "h2c-curl.pcap", "python-chunked.pcap"]
            .enumerated()
        {
            let path = folder + "/\(index)-" + name
            try FileManager.default.copyItem(atPath: Fixtures.sample(name), toPath: path)
            good.append(path)
        }
        let bad = folder + "/1b-crashes.pcap"
        try FileManager.default.copyItem(atPath: Fixtures.sample("python-close.pcap"), toPath: bad)
        let binary = try BuiltExecutable.meteraudit().path
        let wrapper = scratch + "/crashing-meteraudit"
        try """
            #!/bin/bash
            for argument in "$@"; do [[ $argument == *crashes* ]] && { echo "crashed on $argument" >&2; exit 134; }; done
            exec "\(binary)" "$@"
            """.write(toFile: wrapper, atomically: true, encoding: .utf8)
        XCTAssertEqual(chmod(wrapper, 0o755), 0)

        let whole = scratch + "/whole"
        let one = try BuiltExecutable.run(URL(fileURLWithPath: binary), ["analyze"] + good + ["--out", whole, "--quiet"])
        XCTAssertEqual(one.status, 0, one.stderr)
        let out = scratch + "/cluster"
        let script = Fixtures.root.appendingPathComponent("scripts/cluster/dask-analyze").path
        let cluster = try BuiltExecutable.run(
            URL(fileURLWithPath: "/usr/bin/env"),
            ["python3", script, folder + "/*.pcap", "--out", out, "--batch-mb", "0.1", "--meteraudit", wrapper])
        XCTAssertEqual(cluster.status, 1, cluster.stderr)
        XCTAssertTrue(cluster.stderr.contains("one input at a time"), cluster.stderr)
        XCTAssertTrue(cluster.stderr.contains("  \(bad): analyze exited 134: crashed on \(bad)"), cluster.stderr)
        for name in MergeTests.outputs {
            XCTAssertTrue(
                FileManager.default.contents(atPath: out + "/" + name)
                    == FileManager.default.contents(atPath: whole + "/" + name), "\(name) differs")
        }
    }
}
