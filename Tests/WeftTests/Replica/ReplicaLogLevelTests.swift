import Foundation
import Logging
import Testing
import WeftCore

@_spi(Engine) @testable import Weft

/// One call sets the level of Weft's own log lines (sync logged five lines at start and six at shutdown,
/// with no documented way to quiet them).
@Suite(.serialized) struct ReplicaLogLevelTests {
    @Test func theLevelAppliesToWeftsLoggersMadeBeforeAndAfterTheCall() {
        let before = Logger.weft(label: "test.before")
        let saved = Replica.logLevel
        defer { Replica.logLevel = saved }
        Replica.logLevel = .warning
        let after = Logger.weft(label: "test.after")
        // The logging system's default handler is at `.info`: the stricter level holds.
        #expect(before.logLevel == .warning)
        #expect(after.logLevel == .warning)
        #expect(ReplicaSyncOptions().logger.logLevel == .warning)
        Replica.logLevel = .error
        #expect(before.logLevel == .error)
    }

    @Test func aLevelSetOnOneLoggerStaysItsOwn() {
        let saved = Replica.logLevel
        defer { Replica.logLevel = saved }
        var own = Logger.weft(label: "test.own")
        own.logLevel = .debug
        own[metadataKey: "peer"] = "a"
        Replica.logLevel = .critical
        #expect(own.logLevel == .debug)
        #expect(own[metadataKey: "peer"] == "a")
        #expect(Logger.weft(label: "test.other").logLevel == .critical)
    }

    @Test func messagesBelowTheLevelAreDropped() {
        let saved = Replica.logLevel
        defer { Replica.logLevel = saved }
        let captured = Collector<String>()
        var logger = Logger(label: "test.capture") { _ in CapturingHandler(captured: captured) }
        logger.handler = WeftLogHandler(wrapping: logger.handler)
        Replica.logLevel = .warning
        logger.info("sync listening")
        logger.warning("peer refused")
        Replica.logLevel = .info
        logger.info("sync driver stopped")
        #expect(captured.values == ["peer refused", "sync driver stopped"])
    }

    @Test func aHandlerAtAStricterLevelStaysQuiet() {
        let saved = Replica.logLevel
        defer { Replica.logLevel = saved }
        let captured = Collector<String>()
        var logger = Logger(label: "test.strict") { _ in
            var handler = CapturingHandler(captured: captured)
            handler.logLevel = .error
            return handler
        }
        logger.handler = WeftLogHandler(wrapping: logger.handler)
        Replica.logLevel = .info
        logger.info("sync listening")
        logger.error("disk full")
        #expect(captured.values == ["disk full"], "an app that quieted its logging system stays quiet")
    }
}

/// Keeps the messages it is given.
private struct CapturingHandler: LogHandler {
    let captured: Collector<String>
    var logLevel: Logger.Level = .trace
    var metadata: Logger.Metadata = [:]

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    func log(event: LogEvent) { captured.append("\(event.message)") }
}
