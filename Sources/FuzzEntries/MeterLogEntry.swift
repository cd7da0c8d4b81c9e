import MeterLog

/// The whole input as a meter log: `MeterLogReader` (read in 61-byte chunks, lines bounded at
/// 512 bytes so long lines are cut off), then each meter's entries joined to records made from
/// those same entries (a second later), with the offset estimated. Checks that every line and
/// diagnostic lies within the lines read and that the join's output covers each entry and
/// record exactly once.
enum MeterLogEntry {
    static let limits = MeterLogLimits(chunkBytes: 61, maxLineBytes: 512, maxDiagnostics: 16)

    static func run(_ input: UnsafeRawBufferPointer) {
        let path = InputFile.shared.write(input)
        guard let log = try? MeterLogReader.read(path: path, limits: limits) else { return }
        precondition(log.peakLineBytes <= limits.maxLineBytes, "a line held past the limit")
        for entry in log.entries { precondition(Int(entry.logLine) <= log.linesRead, "entry past the last line") }
        for diagnostic in log.diagnostics {
            precondition(diagnostic.line <= log.linesRead, "diagnostic past the last line")
        }
        for meter in log.meterNames {
            let entries = log.joinEntries(meter: meter)
            let records = entries.enumerated().map { position, entry in
                WireRecord(
                    direction: entry.direction, method: entry.method, url: entry.url, status: entry.status,
                    time: entry.time &+ (entry.time < Int64.max - 1_000_000_000 ? 1_000_000_000 : 0),
                    exchange: entry.pairing, index: position)
            }
            let result = MeterJoin.join(
                entries: entries, records: records, options: JoinOptions(maxCandidatePairs: 4096, candidateOffsets: 4))
            precondition(result.pairs.count + result.unmatchedEntries.count == entries.count, "entries lost or doubled")
            precondition(result.pairs.count + result.unmatchedRecords.count == records.count, "records lost or doubled")
            precondition(Set(result.pairs.map(\.entry)).count == result.pairs.count, "an entry matched twice")
            precondition(Set(result.pairs.map(\.record)).count == result.pairs.count, "a record matched twice")
        }
    }
}
