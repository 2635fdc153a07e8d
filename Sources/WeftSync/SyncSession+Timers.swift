// MARK: - Timers

// Timers are rescheduled lazily: receiving bytes only records the time, and when the idle timer
// fires it either closes the session or reschedules itself for the time left. The keep-alive timer
// sends a fresh ack when the log grew since the last one, otherwise a ping when nothing was sent
// for a whole interval.
extension SyncSession {
    /// A timer scheduled by a ``SyncAction/scheduleTimer(_:afterMilliseconds:)`` fired.
    ///
    /// - Parameters:
    ///   - timer: which timer.
    ///   - source: the local log (a keep-alive tick may carry a fresh ack).
    ///   - now: the current time, in milliseconds.
    public mutating func onTimerFired(_ timer: SyncTimer, source: some OpSource, now: UInt64) -> [SyncAction] {
        switch state {
        case .idle, .modifying: preconditionFailure("timer \(timer) fired in state \(state)")
        case .closed: return []
        case .awaitingHello, .awaitingProof, .awaitingWelcome, .ready: break
        }
        var outbox = Outbox()
        switch timer {
        case .idle: idleTimerFired(outbox: &outbox, now: now)
        case .keepAlive: keepAliveTimerFired(source: source, outbox: &outbox, now: now)
        }
        return finish(&outbox, now: now)
    }

    mutating func idleTimerFired(outbox: inout Outbox, now: UInt64) {
        let deadline: UInt64
        let error: SyncError
        if case .ready = state {
            deadline = lastReceivedAt + configuration.idleTimeoutMilliseconds
            error = SyncError(
                .timeout, "nothing received from the peer for \(configuration.idleTimeoutMilliseconds) ms")
        } else {
            deadline = startedAt + configuration.handshakeTimeoutMilliseconds
            error = SyncError(
                .timeout, "the handshake did not complete within \(configuration.handshakeTimeoutMilliseconds) ms")
        }
        if now >= deadline {
            fail(error, outbox: &outbox)
        } else {
            outbox.append(.scheduleTimer(.idle, afterMilliseconds: deadline - now))
        }
    }

    mutating func keepAliveTimerFired(source: some OpSource, outbox: inout Outbox, now: UInt64) {
        guard case .ready = state else { return }
        // Also the end of a durable move's rate bound (``acknowledgeDurableMove``): the refresh sends it.
        isAcknowledgementDeferred = false
        withLinkNoThrow { $0.refreshAcknowledgement(source: source, outbox: &outbox) }
        let interval = configuration.pingIntervalMilliseconds
        let quietFor = now >= lastSentAt ? now - lastSentAt : 0
        if !outbox.sentAny, quietFor >= interval {
            pingsSent += 1
            outbox.send(.ping(pingsSent))
        }
        let next = outbox.sentAny ? interval : interval - quietFor
        outbox.append(.scheduleTimer(.keepAlive, afterMilliseconds: max(1, next)))
    }
}
