import Foundation

/// One figure printed by `weft bench`: a value with its unit, and where it has one, the baseline measured
/// in the same run and the ratio of the value to it.
struct Measurement: Codable, Sendable {
    var suite: String
    var name: String
    var value: Double
    var unit: String
    var baseline: Double?
    var ratio: Double?

    init(suite: String, name: String, value: Double, unit: String, baseline: Double? = nil) {
        self.suite = suite
        self.name = name
        self.value = value
        self.unit = unit
        self.baseline = baseline
        self.ratio = baseline.flatMap { $0 == 0 ? nil : value / $0 }
    }
}

/// Prints measurements as a readable table or as one JSON array.
enum MeasurementPrinter {
    static func table(_ measurements: [Measurement]) -> String {
        let header = ["suite", "name", "value", "unit", "baseline", "ratio"]
        let rows = measurements.map { m in
            [
                m.suite, m.name, format(m.value), m.unit, m.baseline.map(format) ?? "",
                m.ratio.map { String(format: "%.2f×", $0) } ?? "",
            ]
        }
        let widths = header.indices.map { column in ([header] + rows).map { $0[column].count }.max() ?? 0 }
        func line(_ cells: [String]) -> String {
            cells.enumerated().map { index, cell in
                let pad = String(repeating: " ", count: widths[index] - cell.count)
                return index >= 2 && index != 3 ? pad + cell : cell + pad
            }.joined(separator: "  ")
        }
        let rule = widths.map { String(repeating: "-", count: $0) }.joined(separator: "  ")
        return ([line(header), rule] + rows.map(line)).joined(separator: "\n")
    }

    static func json(_ measurements: [Measurement]) throws -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        return String(decoding: try encoder.encode(measurements), as: UTF8.self)
    }

    static func format(_ value: Double) -> String {
        if value >= 100 { return String(format: "%.0f", value) }
        if value >= 1 { return String(format: "%.2f", value) }
        return String(format: "%.4f", value)
    }
}

/// Progress lines for long benchmark steps, on standard error so `--json` output stays clean.
struct BenchProgress: Sendable {
    let quiet: Bool

    func step(_ text: String) {
        guard !quiet else { return }
        FileHandle.standardError.write(Data("[bench] \(text)\n".utf8))
    }
}

/// Seconds taken by `body`.
func measureSeconds(_ body: () throws -> Void) rethrows -> Double {
    let clock = ContinuousClock()
    let elapsed = try clock.measure(body)
    return Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
}

/// Seconds taken by `body`, printed as a progress line with the CPU time and page faults the process
/// spent meanwhile (``ProcessUsage``), under `phase`.
func measureSeconds(_ phase: String, progress: BenchProgress, _ body: () throws -> Void) rethrows -> Double {
    let usage = ProcessUsage.now
    let seconds = try measureSeconds(body)
    progress.step("\(phase): \(ProcessUsage.now.since(usage).summary(wallSeconds: seconds))")
    return seconds
}

/// CPU time and minor page faults of this process so far. A benchmark prints the difference across a
/// phase next to its wall time, so that a run slower than usual shows where the time went: to our code
/// (user time), to the kernel (system time, mostly page faults), or to neither (the host lent the core
/// to someone else).
struct ProcessUsage {
    var userSeconds: Double
    var systemSeconds: Double
    var minorFaults: Int

    static var now: ProcessUsage {
        var usage = rusage()
        #if os(Linux)
            getrusage(RUSAGE_SELF.rawValue, &usage)
        #else
            getrusage(RUSAGE_SELF, &usage)
        #endif
        func seconds(_ time: timeval) -> Double { Double(time.tv_sec) + Double(time.tv_usec) / 1e6 }
        return ProcessUsage(
            userSeconds: seconds(usage.ru_utime), systemSeconds: seconds(usage.ru_stime),
            minorFaults: Int(usage.ru_minflt))
    }

    /// What this process used since `earlier`.
    func since(_ earlier: ProcessUsage) -> ProcessUsage {
        ProcessUsage(
            userSeconds: userSeconds - earlier.userSeconds, systemSeconds: systemSeconds - earlier.systemSeconds,
            minorFaults: minorFaults - earlier.minorFaults)
    }

    /// "2.31 s wall: 2.24 s user, 0.07 s system, 46930 minor page faults".
    func summary(wallSeconds: Double) -> String {
        String(
            format: "%.2f s wall: %.2f s user, %.2f s system, %ld minor page faults", wallSeconds, userSeconds,
            systemSeconds, minorFaults)
    }
}
