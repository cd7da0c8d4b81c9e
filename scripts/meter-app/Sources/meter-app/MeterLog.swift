import Foundation

/// One message as a meter counted it: a line of the meter log (docs/METERING.md §7's format,
/// JSON Lines). `line`, `headers` and `body` always sum to `bytes`.
struct MeterEntry {
    var time: Double
    var kind: String          // "request" or "response"
    var method: String
    var url: String
    var status: Int?          // responses
    var line: Int
    var headers: Int
    var body: Int
    var id: Int               // the exchange (one per request the meter saw, redirects included)
    var task: Int             // the app's URLSessionTask id
    var tag: String           // the sample's tag (X-Tag field, else the `tag` query parameter)
    var source: String        // "network" or "cache"
    var bytes: Int { line + headers + body }
}

/// A meter log file: one JSON object per line, keys in a fixed order, appended and flushed per entry.
final class MeterLog {
    let meter: String
    private let handle: FileHandle
    private let lock = NSLock()
    private(set) var count = 0

    init(meter: String, path: String) throws {
        self.meter = meter
        FileManager.default.createFile(atPath: path, contents: nil)
        guard let h = FileHandle(forWritingAtPath: path) else {
            throw NSError(domain: "meter-app", code: 1, userInfo: [NSLocalizedDescriptionKey: "cannot write \(path)"])
        }
        handle = h
    }

    func write(_ e: MeterEntry) {
        var s = "{\"time\":" + String(format: "%.6f", e.time)
        s += ",\"kind\":" + jsonString(e.kind)
        s += ",\"method\":" + jsonString(e.method)
        s += ",\"url\":" + jsonString(e.url)
        if let st = e.status { s += ",\"status\":\(st)" }
        s += ",\"bytes\":\(e.bytes),\"line\":\(e.line),\"headers\":\(e.headers),\"body\":\(e.body)"
        s += ",\"id\":\(e.id),\"task\":\(e.task),\"tag\":" + jsonString(e.tag)
        s += ",\"source\":" + jsonString(e.source) + ",\"meter\":" + jsonString(meter) + "}\n"
        lock.lock()
        handle.write(s.data(using: .utf8)!)
        count += 1
        lock.unlock()
    }

    func close() { lock.lock(); try? handle.synchronize(); try? handle.close(); lock.unlock() }
}

func jsonString(_ s: String) -> String {
    var out = "\""
    for u in s.unicodeScalars {
        switch u {
        case "\"": out += "\\\""
        case "\\": out += "\\\\"
        case "\n": out += "\\n"
        case "\r": out += "\\r"
        case "\t": out += "\\t"
        default:
            if u.value < 0x20 { out += String(format: "\\u%04x", u.value) } else { out.unicodeScalars.append(u) }
        }
    }
    return out + "\""
}
