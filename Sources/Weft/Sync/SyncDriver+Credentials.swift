import Logging
import WeftSync

// MARK: - Tokens and rules reloaded

extension SyncDriver {
    /// Replaces the token book (its secrets, kinds and path rules) without dropping the sessions it still
    /// allows: `weft serve` calls it on SIGHUP.
    ///
    /// New sessions use the new book. Each open session is checked against it
    /// (``SyncSession/onCredentialsChanged(_:now:)``): one whose token was removed or changed is closed with
    /// `authenticationFailed`, one whose entry is now of another kind with `roleMismatch`, a replicating
    /// peer whose access changed with `permissionDenied` (it dials again under the new rules); a client
    /// goes on, and each of its watches of a path it may no longer read ends with a failed reply.
    ///
    /// ```swift
    /// var book = TokenBook()
    /// book.set(try AuthToken(string: "alice's long secret"), for: "alice")
    /// try book.rules.add(try PathRule(grant: .readWrite, pattern: "/users/$name"), for: "alice")
    /// let report = try await driver.updateTokens(book)   // alice's watches outside /users/alice end
    /// ```
    ///
    /// - Returns: how many sessions were closed and how many watches ended.
    /// - Throws: `WeftError` with code `shutDown` when the driver is shut down.
    @discardableResult
    public func updateTokens(_ tokens: TokenBook) async throws(WeftError) -> SyncCredentialsReport {
        try await onLoop { () throws(WeftError) -> SyncCredentialsReport in
            guard !self.isShuttingDown else { throw WeftError(.shutDown, "the sync driver is shut down") }
            self.configuration.tokens = tokens
            var report = SyncCredentialsReport()
            for channel in Array(self.channels.values) where !channel.isClosed {
                let book = self.tokens(side: channel.side, outbound: channel.outbound)
                let watchesBefore = channel.session.openWatchIDs
                self.perform(channel.session.onCredentialsChanged(book, now: self.now), on: channel)
                if channel.session.phase == .closed {
                    report.sessionsClosed += 1
                    continue
                }
                let watchesAfter = channel.session.openWatchIDs
                let ended = watchesBefore.subtracting(watchesAfter)
                guard !ended.isEmpty else { continue }
                report.watchesEnded += ended.count
                self.clientService?.endWatches(ended, channel: ObjectIdentifier(channel))
            }
            self.logger.info(
                "tokens and rules reloaded",
                metadata: [
                    "entries": "\(tokens.names.count)", "sessionsClosed": "\(report.sessionsClosed)",
                    "watchesEnded": "\(report.watchesEnded)",
                ])
            self.publishStatus()
            return report
        }
    }
}

/// What ``SyncDriver/updateTokens(_:)`` changed in the open sessions.
public struct SyncCredentialsReport: Sendable, Hashable {
    /// Sessions closed: their token was removed or changed, their kind changed, or a replicating peer's
    /// access changed.
    public var sessionsClosed = 0
    /// Client watches ended: their path is no longer readable.
    public var watchesEnded = 0

    /// An empty report.
    public init() {}
}
