import Analysis
import Foundation
import Reports

/// `meteraudit merge`: the output folders of earlier runs (parts: of `analyze`, or of `merge`)
/// become the folder one `analyze` over all their inputs, in the order given, would have
/// written, byte for byte, itself a part (docs/SCALE.md).
///
/// Every part is checked before anything is written (manifest, version, options, each file
/// present at its size); the outputs are written into a hidden folder beside `--out` and
/// moved into place only when all are complete. messages.csv and connections.csv are copied
/// through a buffer (their rows are numbered per input, so they concatenate); the figures are
/// read one part at a time and added; the scatter's points stream through. Memory is the
/// merged figures (8 bytes per record and estimator), not the records.
public struct PartMerge {
    public var parts: [String]
    public var outputDirectory: String

    public init(parts: [String], outputDirectory: String) {
        self.parts = parts
        self.outputDirectory = outputDirectory
    }

    public enum Error: Swift.Error, CustomStringConvertible {
        /// A part that cannot be merged, and why; nothing was written.
        case refused(part: String, reason: String)
        /// An output could not be written; nothing was moved into place.
        case output(String)

        public var description: String {
            switch self {
            case let .refused(part, reason): return "\(part): refused: \(reason); nothing was written"
            case let .output(reason): return "\(reason); nothing was written"
            }
        }
    }

    public struct Result {
        public var report: RunReport
        public var files: [String]
    }

    /// A part checked: its folder and manifest.
    struct Part {
        var path: String
        var manifest: PartManifest

        func file(_ name: String) -> String { path + "/" + name }
    }

    public func run() throws -> Result {
        ProtocolRegistry.standard.registerOverheadKinds()
        // Each figure read is at most 2^46, so adding this many cannot overflow.
        guard parts.count <= StateDecoder.maxParts else {
            throw Error.output("\(parts.count) parts: merge at most \(StateDecoder.maxParts) at once, then merge the merges")
        }
        let checked = try parts.map(check)
        guard let first = checked.first else { throw Error.output("no part to merge") }
        for part in checked.dropFirst() where part.manifest.options != first.manifest.options {
            throw Error.refused(
                part: part.path,
                reason:
                    "made with other options than the first part (\(first.path)): \(part.manifest.options.difference(from: first.manifest.options))"
            )
        }
        let options = first.manifest.options
        let formats = options.formats
        let staging = try makeStaging()
        do {
            let result = try write(checked, options: options, formats: formats, into: staging)
            try moveIntoPlace(staging)
            return Result(
                report: result.report,
                files: result.files.map { outputDirectory + "/" + ($0 as NSString).lastPathComponent })
        } catch {
            try? FileManager.default.removeItem(atPath: staging)
            throw error
        }
    }

    /// A part's manifest read and its files checked, or why not.
    func check(_ path: String) throws -> Part {
        func refuse(_ reason: String) -> Error { .refused(part: path, reason: reason) }
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory), isDirectory.boolValue else {
            throw refuse("not a folder")
        }
        let manifestPath = path + "/" + PartFiles.manifest
        guard let data = FileManager.default.contents(atPath: manifestPath) else {
            throw refuse(
                "\(PartFiles.manifest) is missing: not the output folder of `meteraudit analyze` or `merge` (version \(ToolVersion.current))"
            )
        }
        let manifest: PartManifest
        do {
            manifest = try JSONDecoder().decode(PartManifest.self, from: data)
        } catch {
            throw refuse("\(PartFiles.manifest) cannot be read (cut short or changed?): \(error)")
        }
        guard manifest.format == PartManifest.formatName, manifest.formatVersion == PartManifest.formatVersion else {
            throw refuse("\(PartFiles.manifest) is a \(manifest.format) version \(manifest.formatVersion), not a \(PartManifest.formatName) version \(PartManifest.formatVersion)")
        }
        guard manifest.toolVersion == ToolVersion.current else {
            throw refuse(
                "made by meteraudit \(manifest.toolVersion), this is \(ToolVersion.current): analyze its inputs again with this version"
            )
        }
        if let reason = manifest.notMergeable { throw refuse(reason) }
        var needed = [PartFiles.figures, "diagnostics.json"]
        for format in manifest.options.formats {
            if format == MessagesCSV.formatName {
                needed.append(MessagesCSV.fileName)
            } else if format == ConnectionsCSV.formatName {
                needed.append(ConnectionsCSV.fileName)
            } else if let reporter = Reporters.all.first(where: { $0.name == format }) {
                needed.append(reporter.fileName)
                if reporter.name == HTMLReport.name { needed.append(PartFiles.points) }
            }
        }
        for name in needed where manifest.files[name] == nil {
            throw refuse("\(PartFiles.manifest) does not list \(name)")
        }
        for (name, size) in manifest.files.sorted(by: { $0.key < $1.key }) {
            var status = stat()
            guard stat(path + "/" + name, &status) == 0 else { throw refuse("\(name) is missing") }
            let actual = Int(status.st_size)
            if actual < size { throw refuse("\(name) is truncated: \(actual) of its \(size) bytes") }
            if actual != size { throw refuse("\(name) has changed: \(actual) bytes, written with \(size)") }
        }
        return Part(path: path, manifest: manifest)
    }

    /// A hidden folder beside `--out`, on the same file system so that it can be renamed.
    private func makeStaging() throws -> String {
        let url = URL(fileURLWithPath: outputDirectory).standardizedFileURL
        let parent = url.deletingLastPathComponent().path
        do {
            try FileManager.default.createDirectory(atPath: parent, withIntermediateDirectories: true)
        } catch {
            throw Error.output("\(outputDirectory): cannot create output: \(error.localizedDescription)")
        }
        let staging = parent + "/." + url.lastPathComponent + ".merging-\(getpid())"
        try? FileManager.default.removeItem(atPath: staging)
        do {
            try FileManager.default.createDirectory(atPath: staging, withIntermediateDirectories: false)
        } catch {
            throw Error.output("\(outputDirectory): cannot create output: \(error.localizedDescription)")
        }
        return staging
    }

    /// The staging folder becomes `--out` (renamed when `--out` is absent or empty; else each
    /// complete file replaces its namesake there).
    private func moveIntoPlace(_ staging: String) throws {
        let manager = FileManager.default
        if let existing = try? manager.contentsOfDirectory(atPath: outputDirectory), existing.isEmpty {
            try? manager.removeItem(atPath: outputDirectory)
        }
        if !manager.fileExists(atPath: outputDirectory) {
            if rename(staging, outputDirectory) == 0 { return }
            throw Error.output("\(outputDirectory): cannot create output: \(String(cString: strerror(errno)))")
        }
        // The manifest last: until it is replaced, the folder is not a part of the new figures.
        let names = try manager.contentsOfDirectory(atPath: staging).sorted { a, b in
            (a == PartFiles.manifest ? 1 : 0, a) < (b == PartFiles.manifest ? 1 : 0, b)
        }
        for name in names where rename(staging + "/" + name, outputDirectory + "/" + name) != 0 {
            throw Error.output("\(outputDirectory)/\(name): cannot write: \(String(cString: strerror(errno)))")
        }
        try? manager.removeItem(atPath: staging)
    }

    private func write(_ parts: [Part], options: PartManifest.Options, formats: [String], into staging: String) throws
        -> Result
    {
        var files: [String] = []
        for (format, name) in [
            (MessagesCSV.formatName, MessagesCSV.fileName), (ConnectionsCSV.formatName, ConnectionsCSV.fileName),
        ] where formats.contains(format) {
            try concatenate(name, of: parts, to: staging + "/" + name)
            files.append(name)
        }
        // The figures, one part at a time.
        var merged: PartFigures?
        var pointOffsets: [Int] = []
        for part in parts {
            let figures: PartFigures
            do {
                let bytes = try readWhole(part.file(PartFiles.figures))
                figures = try PartFigures(bytes: bytes)
            } catch let error as Error {
                throw error
            } catch {
                throw Error.refused(part: part.path, reason: "\(PartFiles.figures) \(error)")
            }
            guard figures.aggregation.estimatorNames == options.estimators else {
                throw Error.refused(part: part.path, reason: "\(PartFiles.figures) holds other estimators than its manifest")
            }
            // The points file holds one point per measured record: the reservoir's replay runs
            // over that count, so it is checked against the file before.
            if formats.contains(HTMLReport.name) {
                let size = ChartPoint.byteCount(estimators: options.estimators.count)
                let (expected, overflow) = figures.charts.measuredCount.multipliedReportingOverflow(by: size)
                guard !overflow, part.manifest.files[PartFiles.points] == expected else {
                    throw Error.refused(
                        part: part.path,
                        reason: "\(PartFiles.points) does not hold the \(figures.charts.measuredCount) points its figures count")
                }
            }
            pointOffsets.append(merged?.charts.offeredCount ?? 0)
            if merged == nil {
                merged = figures
            } else {
                merged!.aggregation.merge(figures.aggregation)
                merged!.charts.mergeSummary(figures.charts)
                merged!.inputs += figures.inputs
            }
        }
        guard var figures = merged else { throw Error.output("no part to merge") }
        if formats.contains(HTMLReport.name) {
            try mergePoints(parts, offsets: pointOffsets, charts: &figures.charts, to: staging + "/" + PartFiles.points)
        }
        let settings = options.settings.map { ($0.first ?? "", $0.dropFirst().first ?? "") }
        figures.aggregation.makeOrderFree()
        var report = RunReport(
            inputs: figures.inputs, aggregation: figures.aggregation, settings: settings, charts: figures.charts,
            rankBy: RankLayer(rawValue: options.rankBy) ?? .http)
        report.rankEndpoints()
        let finished = report
        var writers: [(name: String, write: () throws -> Void)] = []
        for reporter in Reporters.all where formats.contains(reporter.name) {
            let path = staging + "/" + reporter.fileName
            writers.append((reporter.fileName, { try reporter.write(finished, to: path) }))
        }
        writers.append(("diagnostics.json", { try DiagnosticsFile(inputs: finished.inputs).write(to: staging + "/diagnostics.json") }))
        let failures = NSLock()
        var failure: String?
        DispatchQueue.concurrentPerform(iterations: writers.count) { index in
            do {
                try writers[index].write()
            } catch {
                failures.withLock { failure = failure ?? String(describing: error) }
            }
        }
        if let failure { throw Error.output(failure) }
        files += writers.map(\.name)
        // This folder is a part too.
        let figuresFile = try OutputFile(path: staging + "/" + PartFiles.figures)
        try PartFigures(aggregation: finished.aggregation, charts: finished.charts, inputs: finished.inputs)
            .write(to: figuresFile)
        do { try figuresFile.commit() } catch { throw Error.output(String(describing: error)) }
        files.append(PartFiles.figures)
        if formats.contains(HTMLReport.name) { files.append(PartFiles.points) }
        var manifest = PartManifest(options: options, inputs: parts.flatMap(\.manifest.inputs), files: [:])
        for name in files {
            var status = stat()
            guard stat(staging + "/" + name, &status) == 0 else { throw Error.output("\(name): not written") }
            manifest.files[name] = Int(status.st_size)
        }
        do { try manifest.write(to: staging + "/" + PartFiles.manifest) } catch {
            throw Error.output(String(describing: error))
        }
        files.append(PartFiles.manifest)
        return Result(report: finished, files: files)
    }

    /// One part's file after another, through a buffer; the header line once (every part's
    /// must be the same).
    private func concatenate(_ name: String, of parts: [Part], to path: String) throws {
        let output: OutputFile
        do { output = try OutputFile(path: path) } catch { throw Error.output(String(describing: error)) }
        var header: [UInt8]?
        for part in parts {
            guard let input = FileHandle(forReadingAtPath: part.file(name)) else {
                throw Error.refused(part: part.path, reason: "\(name) cannot be opened")
            }
            defer { try? input.close() }
            var first = true
            var pending: [UInt8] = []
            while true {
                let chunk = input.readData(ofLength: 1 << 20)
                if chunk.isEmpty { break }
                if first {
                    pending += chunk
                    guard let end = pending.firstIndex(of: UInt8(ascii: "\n")) else { continue }
                    let line = Array(pending[...end])
                    if let header, header != line {
                        throw Error.refused(part: part.path, reason: "\(name) has other columns than the first part's")
                    }
                    if header == nil {
                        header = line
                        output.write(line)
                    }
                    output.write(pending[(end + 1)...])
                    pending = []
                    first = false
                } else {
                    output.write(chunk)
                }
            }
            if first && !pending.isEmpty {
                throw Error.refused(part: part.path, reason: "\(name) has no complete header line")
            }
        }
        do { try output.commit() } catch { throw Error.output(String(describing: error)) }
    }

    /// Replays the scatter's reservoir over every part's points (`ReservoirReplay`) and writes
    /// them all, renumbered, as this folder's points.
    private func mergePoints(_ parts: [Part], offsets: [Int], charts: inout ChartSamples, to path: String) throws {
        var replay = ReservoirReplay(measuredRecords: charts.measuredCount, capacity: charts.scatterCapacity)
        let estimators = charts.estimatorNames.count
        let size = ChartPoint.byteCount(estimators: estimators)
        let output: OutputFile
        do { output = try OutputFile(path: path) } catch { throw Error.output(String(describing: error)) }
        for (part, offset) in zip(parts, offsets) {
            guard let input = FileHandle(forReadingAtPath: part.file(PartFiles.points)) else {
                throw Error.refused(part: part.path, reason: "\(PartFiles.points) cannot be opened")
            }
            defer { try? input.close() }
            var rest: [UInt8] = []
            while true {
                let chunk = input.readData(ofLength: size * 8192)
                if chunk.isEmpty { break }
                rest += chunk
                let whole = rest.count / size * size
                var decoder = StateDecoder(bytes: Array(rest[..<whole]))
                var encoder = StateEncoder()
                while !decoder.atEnd {
                    let point: ChartPoint
                    do {
                        point = try ChartPoint(state: &decoder, estimators: estimators).shifted(by: offset)
                    } catch {
                        throw Error.refused(part: part.path, reason: "\(PartFiles.points) \(error)")
                    }
                    replay.offer(point)
                    point.encode(to: &encoder)
                }
                output.write(encoder.bytes)
                rest.removeFirst(whole)
            }
            if !rest.isEmpty {
                throw Error.refused(part: part.path, reason: "\(PartFiles.points) ends inside a point")
            }
        }
        guard replay.finish(into: &charts) else {
            throw Error.refused(
                part: parts.map(\.path).joined(separator: ", "),
                reason: "\(PartFiles.points) holds another number of points than the figures count")
        }
        do { try output.commit() } catch { throw Error.output(String(describing: error)) }
    }

    private func readWhole(_ path: String) throws -> [UInt8] {
        guard let data = FileManager.default.contents(atPath: path) else {
            throw StateDecoder.Malformed(reason: "cannot be read")
        }
        return [UInt8](data)
    }
}
