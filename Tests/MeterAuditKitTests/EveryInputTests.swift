import Foundation
import TestSupport
import XCTest

/// Every file the repository holds, handed to the built `meteraudit` as an input: whatever
/// the bytes, the run ends with exit status 0 (read) or 1 (not readable as a capture or
/// HAR), never a signal or another status. A crasher fixture with a sidecar `NAME.expect`
/// must also leave that text in diagnostics.json, messages.csv or stderr
/// (Tests/Fixtures/crashers/README.md).
final class EveryInputTests: XCTestCase {
    /// Runs the tool on one file at a time, two at once (the suite shares a small machine).
    private static let parallelRuns = 2
    /// A run past this is taken for a hang. The debug build reads the largest fixture (the
    /// HPACK bomb's 64 connections) in 41 s on a 2-core machine under a load of 9.
    private static let timeoutSeconds = 180.0

    private func executable() throws -> URL { try BuiltExecutable.meteraudit() }

    /// Files that are notes about inputs rather than inputs.
    static func isNote(_ file: URL) -> Bool {
        file.pathExtension == "expect" || file.pathExtension == "md"
    }

    static func inputs() throws -> [URL] {
        var files: [URL] = []
        for directory in ["Samples", "Tests/Fixtures"] {
            let root = Fixtures.root.appendingPathComponent(directory)
            guard let walker = FileManager.default.enumerator(at: root, includingPropertiesForKeys: [.isRegularFileKey])
            else {
                throw CocoaError(.fileReadNoSuchFile)
            }
            for case let file as URL in walker
            where (try? file.resourceValues(forKeys: [.isRegularFileKey]).isRegularFile) == true {
                // Also the fuzz seeds in harness formats: any bytes can be handed to the tool.
                // Not the crashers waiting for their fix (docs/FUZZING.md): they crash today.
                if !isNote(file) && !file.path.contains("/fuzz-crashers-pending/") { files.append(file) }
            }
        }
        return files.sorted { $0.path < $1.path }
    }

    /// The sidecar naming the text a crasher fixture must leave: `NAME.expect`, where NAME is
    /// the file's name or its name without the extension.
    static func expectation(for file: URL) -> String? {
        guard file.path.contains("/Tests/Fixtures/crashers/") else { return nil }
        for sidecar in [
            file.appendingPathExtension("expect"), file.deletingPathExtension().appendingPathExtension("expect"),
        ] {
            if let text = try? String(contentsOf: sidecar, encoding: .utf8) {
                return text.trimmingCharacters(in: .whitespacesAndNewlines)
            }
        }
        return nil
    }

    /// Runs the tool on `file`; returns what went wrong, or nil.
    private static func check(_ file: URL, executable: URL) -> String? {
        let output = FileManager.default.temporaryDirectory.appendingPathComponent(
            "meteraudit-every-input-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: output) }
        let stderrFile = output.appendingPathExtension("stderr")
        defer { try? FileManager.default.removeItem(at: stderrFile) }
        guard FileManager.default.createFile(atPath: stderrFile.path, contents: nil),
            let stderrHandle = try? FileHandle(forWritingTo: stderrFile)
        else { return "cannot create \(stderrFile.path)" }

        let process = Process()
        process.executableURL = executable
        process.arguments = ["analyze", file.path, "--out", output.path, "--quiet"]
        process.standardOutput = FileHandle.nullDevice
        process.standardError = stderrHandle // a file, not a pipe: a long error list cannot block the tool
        do { try process.run() } catch { return "cannot start meteraudit: \(error)" }
        let deadline = Date().addingTimeInterval(timeoutSeconds)
        while process.isRunning && Date() < deadline { usleep(5_000) }
        if process.isRunning {
            process.terminate()
            process.waitUntilExit()
            return "still running after \(Int(timeoutSeconds)) s"
        }
        try? stderrHandle.close()
        let stderr = (try? String(contentsOf: stderrFile, encoding: .utf8)) ?? ""
        if process.terminationReason == .uncaughtSignal {
            return "killed by signal \(process.terminationStatus)\n\(stderr.suffix(2000))"
        }
        guard process.terminationStatus == 0 || process.terminationStatus == 1 else {
            return "exit status \(process.terminationStatus)\n\(stderr.suffix(2000))"
        }
        if let expected = expectation(for: file) {
            let written = ["diagnostics.json", "messages.csv"].compactMap {
                try? String(contentsOf: output.appendingPathComponent($0), encoding: .utf8)
            }
            if !(written + [stderr]).contains(where: { $0.contains(expected) }) {
                return
                    "expected \"\(expected)\" in diagnostics.json, messages.csv or stderr; stderr:\n\(stderr.suffix(2000))"
            }
        }
        return nil
    }

    func testEveryFileEndsWithStatusZeroOrOne() throws {
        let binary = try executable()
        let files = try Self.inputs()
        // Samples and fixtures both exist, so far more than a handful of files.
        XCTAssertGreaterThan(files.count, 50)
        let lock = NSLock()
        var failures: [(URL, String)] = []
        var next = 0
        DispatchQueue.concurrentPerform(iterations: Self.parallelRuns) { _ in
            while true {
                lock.lock()
                let index = next
                next += 1
                lock.unlock()
                guard index < files.count else { return }
                if let failure = Self.check(files[index], executable: binary) {
                    lock.lock()
                    failures.append((files[index], failure))
                    lock.unlock()
                }
            }
        }
        for (file, failure) in failures.sorted(by: { $0.0.path < $1.0.path }) {
            XCTFail("\(file.path): \(failure)")
        }
    }

    func testExpectSidecarsBelongToAnInput() throws {
        // A sidecar whose input is gone (renamed, deleted) would silently check nothing.
        let crashers = Fixtures.root.appendingPathComponent("Tests/Fixtures/crashers")
        let names = (try? FileManager.default.contentsOfDirectory(atPath: crashers.path)) ?? []
        for sidecar in names where sidecar.hasSuffix(".expect") {
            let stem = String(sidecar.dropLast(".expect".count))
            let hasInput = names.contains {
                $0 == stem
                    || ($0 != sidecar && !$0.hasSuffix(".expect")
                        && URL(fileURLWithPath: $0).deletingPathExtension().lastPathComponent == stem)
            }
            XCTAssertTrue(hasInput, "\(sidecar) has no input file beside it")
        }
    }
}
