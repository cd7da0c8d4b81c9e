import Foundation

/// Loads a local page in headless Chromium (Debian's `chromium`, installed by scripts/setup)
/// and tells what happened: the DOM after the page's scripts ran, what the page wrote to the
/// console, and every network request the page started (read from Chromium's own NetLog).
/// Every connection goes to a proxy that refuses it (127.0.0.1:9) and every host name fails
/// to resolve, so nothing leaves the machine even if the page asks.
public struct HeadlessChromium {
    public let executable: String

    /// Nil when Chromium is not installed.
    public init?() {
        guard let path = TestSupport.executable("chromium") ?? TestSupport.executable("chromium-browser") else {
            return nil
        }
        executable = path
    }

    public struct Load {
        /// `--dump-dom`: the document serialized after its load event.
        public var dom: String
        /// Console messages, one per line Chromium logged (`CONSOLE` lines of its log).
        public var consoleMessages: [String]
        /// URLs the page itself requested over the network (the browser's own background
        /// requests, which are not the page's, are left out).
        public var pageRequests: [String]
    }

    /// Loads `path` and returns what happened; throws when Chromium fails or takes over 90 s.
    public func load(_ path: String) throws -> Load {
        let work = NSTemporaryDirectory() + "meteraudit-chromium-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: work, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: work) }
        let netLog = work + "/netlog.json"
        let output = try run([
            "--headless", "--disable-gpu", "--no-sandbox", "--no-first-run", "--disable-extensions",
            "--disable-background-networking", "--disable-component-update", "--disable-sync",
            "--user-data-dir=\(work)/profile", "--proxy-server=127.0.0.1:9",
            "--host-resolver-rules=MAP * ~NOTFOUND", "--enable-logging=stderr", "--v=0",
            "--log-net-log=\(netLog)", "--dump-dom", URL(fileURLWithPath: path).absoluteString,
        ])
        let console = output.stderr.split(separator: "\n").filter { $0.contains(":CONSOLE") }.map(String.init)
        return Load(dom: output.stdout, consoleMessages: console, pageRequests: try Self.pageRequests(netLog: netLog))
    }

    /// Takes a screenshot of `path` into `png`, `width` × `height` CSS pixels.
    public func screenshot(_ path: String, to png: String, width: Int, height: Int) throws {
        let work = NSTemporaryDirectory() + "meteraudit-chromium-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: work) }
        _ = try run([
            "--headless", "--disable-gpu", "--no-sandbox", "--no-first-run", "--hide-scrollbars",
            "--disable-background-networking", "--user-data-dir=\(work)/profile", "--proxy-server=127.0.0.1:9",
            "--host-resolver-rules=MAP * ~NOTFOUND", "--screenshot=\(png)", "--window-size=\(width),\(height)",
            URL(fileURLWithPath: path).absoluteString,
        ])
    }

    /// Requests of a URL_REQUEST whose network isolation key is a file:// page: the page's own
    /// (Chromium's background requests carry no page).
    static func pageRequests(netLog: String) throws -> [String] {
        let data = try Data(contentsOf: URL(fileURLWithPath: netLog))
        guard let log = try JSONSerialization.jsonObject(with: data) as? [String: Any],
            let constants = log["constants"] as? [String: Any],
            let eventTypes = constants["logEventTypes"] as? [String: Int],
            let startJob = eventTypes["URL_REQUEST_START_JOB"],
            let events = log["events"] as? [[String: Any]]
        else { throw ChromiumError.unreadableNetLog(netLog) }
        var urls: [String] = []
        for event in events where event["type"] as? Int == startJob {
            guard let params = event["params"] as? [String: Any], let url = params["url"] as? String else { continue }
            let key = params["network_isolation_key"] as? String ?? ""
            let initiator = params["initiator"] as? String ?? ""
            if key.contains("file://") || initiator == "null" || initiator.hasPrefix("file://") { urls.append(url) }
        }
        return urls
    }

    public enum ChromiumError: Error, CustomStringConvertible {
        case failed(String)
        case timedOut
        case unreadableNetLog(String)

        public var description: String {
            switch self {
            case let .failed(message): return "chromium failed: \(message)"
            case .timedOut: return "chromium took over 90 s"
            case let .unreadableNetLog(path): return "chromium's NetLog \(path) is not what was expected"
            }
        }
    }

    /// Runs Chromium with its output in files (no pipe to fill and block it), killed after 90 s.
    private func run(_ arguments: [String]) throws -> (stdout: String, stderr: String) {
        let base = NSTemporaryDirectory() + "meteraudit-chromium-output-\(UUID().uuidString)"
        _ = FileManager.default.createFile(atPath: base + ".out", contents: nil)
        _ = FileManager.default.createFile(atPath: base + ".err", contents: nil)
        defer {
            try? FileManager.default.removeItem(atPath: base + ".out")
            try? FileManager.default.removeItem(atPath: base + ".err")
        }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        process.standardOutput = FileHandle(forWritingAtPath: base + ".out")
        process.standardError = FileHandle(forWritingAtPath: base + ".err")
        try process.run()
        // A page that never finishes loading must not hang the suite.
        let deadline = DispatchWorkItem { if process.isRunning { process.terminate() } }
        DispatchQueue.global().asyncAfter(deadline: .now() + 90, execute: deadline)
        process.waitUntilExit()
        deadline.cancel()
        let stdout = (try? String(contentsOfFile: base + ".out", encoding: .utf8)) ?? ""
        let stderr = (try? String(contentsOfFile: base + ".err", encoding: .utf8)) ?? ""
        if process.terminationReason == .uncaughtSignal { throw ChromiumError.timedOut }
        guard process.terminationStatus == 0 else {
            throw ChromiumError.failed("exit \(process.terminationStatus): \(stderr.suffix(2000))")
        }
        return (stdout, stderr)
    }
}
