import Foundation
import Logging
import Testing
import WeftCore

@testable import Weft

/// One call sets the level of Weft's own log lines (sync logged five lines at start and six at shutdown,
/// with no documented way to quiet them).
@Suite(.serialized) struct ReplicaLogLevelTests {
    @Test func theLevelAppliesToWeftsLoggersMadeBeforeAndAfterTheCall() {
        let before = Logger.weft(label: "test.before")
        let saved = Replica.logLevel
        defer { Replica.logLevel = saved }
        Replica.logLevel = .warning
        let after = Logger.weft(label: "test.after")
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
}
