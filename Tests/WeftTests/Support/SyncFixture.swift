import Foundation
import Logging
import WeftCore
import WeftSync

@_spi(Engine) @testable import Weft

/// Replica ids, shared tokens and configurations for drivers in tests, plus waiting helpers.
enum SyncFixture {
    static func replica(_ node: Int) -> ReplicaID { ReplicaID(rawValue: UInt64(node + 1) * 0x1_0001)! }

    static func token(_ a: Int, _ b: Int) -> AuthToken {
        try! AuthToken(string: "shared secret of \(min(a, b)) and \(max(a, b))")
    }

    /// A configuration for `node` holding a token for each of `others`.
    static func configuration(node: Int, others: [Int], role: SyncRole = .peer) -> SyncConfiguration {
        var book = TokenBook()
        for other in others where other != node {
            book.set(token(node, other), for: replica(other).description)
        }
        var configuration = SyncConfiguration(replica: replica(node), role: role, tokens: book)
        configuration.pingIntervalMilliseconds = 500
        configuration.idleTimeoutMilliseconds = 5_000
        return configuration
    }

    /// A driver for `node` over a fresh engine target.
    static func driver(node: Int, others: [Int], logs: LogRecorder? = nil) throws -> (SyncDriver, EngineTarget) {
        let target = EngineTarget(node: node)
        let driver = try SyncDriver(
            target: target, configuration: configuration(node: node, others: others),
            logger: logger(node: node, logs: logs))
        return (driver, target)
    }

    /// A logger for `node`'s driver at level info, into `logs` when given.
    static func logger(node: Int, logs: LogRecorder?) -> Logger {
        var logger = Logger(label: "weft.sync.test.\(node)") { label in
            logs.map { LogRecorder.Handler(recorder: $0) as any LogHandler } ?? SwiftLogNoOpLogHandler(label)
        }
        logger.logLevel = .info
        return logger
    }

    /// Polls `condition` every 10 ms until it holds, at most `milliseconds`.
    static func wait(
        _ what: String, within milliseconds: Int = 10_000, until condition: () throws -> Bool
    ) async throws {
        let deadline = ContinuousClock.now + .milliseconds(milliseconds)
        while ContinuousClock.now < deadline {
            if try condition() { return }
            try await Task.sleep(for: .milliseconds(10))
        }
        if try condition() { return }
        throw WaitTimeout(what: what, milliseconds: milliseconds)
    }
}

/// A wait in a test ran out of time.
struct WaitTimeout: Error, CustomStringConvertible {
    let what: String
    let milliseconds: Int
    var description: String { "timed out after \(milliseconds) ms waiting for \(what)" }
}

/// Keeps every log line, for tests that check what was logged.
final class LogRecorder: @unchecked Sendable {
    private let lock = NSLock()
    private var lines: [String] = []

    var messages: [String] { lock.withLock { lines } }

    func contains(_ text: String) -> Bool { messages.contains { $0.contains(text) } }

    func record(_ line: String) { lock.withLock { lines.append(line) } }

    struct Handler: LogHandler {
        let recorder: LogRecorder
        var metadata: Logger.Metadata = [:]
        var logLevel: Logger.Level = .trace

        subscript(metadataKey key: String) -> Logger.Metadata.Value? {
            get { metadata[key] }
            set { metadata[key] = newValue }
        }

        func log(event: LogEvent) {
            let fields = (event.metadata ?? [:]).sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }
            recorder.record("\(event.level) \(event.message) \(fields.joined(separator: " "))")
        }
    }
}
