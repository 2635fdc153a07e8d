import Foundation
import WeftCore

/// A failing schedule on disk: the scenario to replay, and how it failed when it was written.
///
/// `weft-sim shrink` writes one; `weft-sim replay FILE` runs it.
///
/// ```swift
/// let file = try ScheduleFile.read(from: "seed-42.schedule.json")
/// let report = Simulation(scenario: file.scenario).run()
/// ```
public struct ScheduleFile: Codable, Sendable, Hashable {
    /// The file format; this build writes and reads 1.
    public static let formatCurrent = 1

    /// The format of this file.
    public var format: Int
    /// What the file is, for a human reading it.
    public var note: String
    /// The scenario to replay.
    public var scenario: Scenario
    /// How the scenario failed when the file was written.
    public var failure: SimulationFailure?
    /// The seed and size of the run it was shrunk from.
    public var shrunkFrom: ShrinkOrigin?
    /// The trace hash of the scenario's run when the file was written, sixteen hex digits (absent from
    /// files written before it was recorded): a replay that gives another ran differently.
    public var traceHash: String?

    /// Where a shrunk schedule came from.
    public struct ShrinkOrigin: Codable, Sendable, Hashable {
        /// The seed of the original run.
        public var seed: UInt64
        /// Replicas of the original run.
        public var replicas: Int
        /// Writes of the original run.
        public var writes: Int
        /// Fault episodes of the original run.
        public var episodes: Int
        /// Simulations the shrink ran.
        public var runs: Int
    }

    /// A file for the result of a shrink.
    public init(result: ShrinkResult) {
        format = ScheduleFile.formatCurrent
        note = "weft-sim schedule: replay with `weft-sim replay FILE`"
        scenario = result.shrunk
        failure = result.failure
        traceHash = result.traceHash.map { StateDigest(rawValue: $0).description }
        shrunkFrom = ShrinkOrigin(
            seed: result.original.seed, replicas: result.original.replicaCount,
            writes: result.original.keptWrites?.count ?? result.original.opCount,
            episodes: result.original.episodes.count, runs: result.runs)
    }

    /// Writes the file as JSON.
    /// - Throws: Foundation's file errors.
    public func write(to path: String) throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        try encoder.encode(self).write(to: URL(fileURLWithPath: path))
    }

    /// Reads and checks a schedule file.
    /// - Throws: ``SimulationError/unreadableSchedule(path:reason:)``, or
    ///   ``SimulationError/invalidScenario(reason:)`` when its scenario breaks a limit.
    public static func read(from path: String) throws -> ScheduleFile {
        let file: ScheduleFile
        do {
            file = try JSONDecoder().decode(ScheduleFile.self, from: try contents(of: path))
        } catch let error as DecodingError {
            throw unreadable(path, "it is not a schedule file (\(reason(error)))")
        }
        guard file.format == formatCurrent else {
            throw SimulationError.unreadableSchedule(
                path: path,
                reason: "format \(file.format); this build reads format \(formatCurrent): replay it with the "
                    + "weft-sim that wrote it, or write it again with this one's `weft-sim shrink`")
        }
        try file.scenario.validate()
        return file
    }

    private static func contents(of path: String) throws -> Data {
        var isFolder: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isFolder) else {
            throw unreadable(path, "no such file")
        }
        guard !isFolder.boolValue else { throw unreadable(path, "it is a folder, not a schedule file") }
        do {
            return try Data(contentsOf: URL(fileURLWithPath: path))
        } catch {
            throw unreadable(path, "it cannot be read (\((error as NSError).localizedDescription))")
        }
    }

    private static func unreadable(_ path: String, _ reason: String) -> SimulationError {
        .unreadableSchedule(
            path: path, reason: reason + "; `weft-sim shrink --seed N --output FILE` writes a schedule file")
    }

    /// Where the JSON broke, in a line: the keys leading there and what was wrong.
    private static func reason(_ error: DecodingError) -> String {
        let context: DecodingError.Context
        switch error {
        case .dataCorrupted(let found), .keyNotFound(_, let found), .typeMismatch(_, let found),
            .valueNotFound(_, let found):
            context = found
        @unknown default: return "\(error)"
        }
        let keys = context.codingPath.map(\.stringValue).joined(separator: ".")
        return keys.isEmpty ? context.debugDescription : "at \(keys): \(context.debugDescription)"
    }
}

/// Ops as one line of text each, for replays.
public enum OpText {
    /// `tick r1 seq 3 0123456789A-stamp set /items/i0/name "s4"`.
    public static func line(_ op: Op, tick: UInt64, replica: Int) -> String {
        "\(tick) r\(replica) seq \(op.sequence) \(op.stamp) \(kind(op))"
    }

    static func kind(_ op: Op) -> String {
        switch op.kind {
        case .set(let value): return "set \(op.path) \(value.jsonString())"
        case .merge(let children):
            return "merge \(op.path) {"
                + children.map { "\($0.relative): \($0.value.jsonString())" }.joined(separator: ", ")
                + "}"
        case .increment(let by, let from): return "increment \(op.path) by \(by) from \(from)"
        case .batch(let writes):
            return "batch [" + writes.map(write).joined(separator: "; ") + "]"
        case .transaction(let read, let result): return "transaction \(op.path) read \(read) = \(result.jsonString())"
        case .guardedBatch(let read, let reads, let writes):
            return "guarded read \(read) reads [" + reads.map(\.description).joined(separator: ", ") + "] batch ["
                + writes.map(write).joined(separator: "; ") + "]"
        case .call(let call):
            return "call \(op.path) \(call.name)@\(call.version)(\(call.arguments.jsonString()))"
        }
    }

    static func write(_ write: Write) -> String {
        switch write {
        case .set(let path, let value): return "set \(path) \(value.jsonString())"
        case .merge(let path, let children):
            return "merge \(path) {"
                + children.map { "\($0.relative): \($0.value.jsonString())" }.joined(separator: ", ")
                + "}"
        case .increment(let path, let by, let from): return "increment \(path) by \(by) from \(from)"
        }
    }
}
