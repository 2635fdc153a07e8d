import CStopSignals
import Foundation
import Logging

/// SIGINT and SIGTERM for `weft serve`, caught from the moment it starts until the process ends: the
/// first asks for a clean stop, whatever the daemon is doing (loading its replica, serving, closing); a
/// second, while it stops, ends the process at once (a stop stuck on a slow disk, say). SIGHUP asks for a
/// reload of the token and rules files (``ReloadSignal``), and never stops the daemon.
///
/// ```swift
/// let signals = try StopSignals.route()
/// signals.watch(stop: stop, reload: reload, logger: logger)
/// await stop.wait()
/// ```
///
/// The handler is C and only writes the signal's number to a pipe (`write` is async-signal-safe); a
/// thread of its own reads the pipe, logs and fires the stop. Neither depends on the sync driver's event
/// loop, which exists only once the replica is loaded and is gone before the final flush.
struct StopSignals: Sendable {
    /// Why the signals could not be routed (no descriptor left for the pipe, say).
    struct Failure: Error, CustomStringConvertible {
        let description: String
    }

    /// The pipe's read end.
    private let readEnd: Int32

    /// Installs the handlers of SIGINT, SIGTERM and SIGHUP; a signal from now on waits in the pipe until
    /// ``watch(stop:logger:)`` reads it. Call it once per process.
    ///
    /// - Throws: ``Failure`` when the pipe or a handler cannot be made.
    static func route() throws -> StopSignals {
        let readEnd = weft_stop_signals_route()
        guard readEnd >= 0 else {
            throw Failure(
                description: "cannot catch SIGINT, SIGTERM and SIGHUP: \(String(cString: strerror(errno)))")
        }
        return StopSignals(readEnd: readEnd)
    }

    /// Starts the thread that acts on the signals: the first is logged and fires `stop`; the second logs a
    /// `critical` line and exits at once with 128 + its number (130 for SIGINT, 143 for SIGTERM), without
    /// waiting for the clean stop: what is durable stays in the file, what group commit still held is lost.
    /// Each SIGHUP fires `reload`.
    func watch(stop: StopSignal, reload: ReloadSignal, logger: Logger) {
        let readEnd = readEnd
        Thread.detachNewThread {
            var received = 0
            while let number = Self.next(from: readEnd) {
                if number == SIGHUP {
                    logger.info(
                        "signal received, reloading the token and rules files", metadata: ["signal": "\(number)"])
                    reload.fire()
                    continue
                }
                received += 1
                if received == 1 {
                    logger.info("signal received, shutting down", metadata: ["signal": "\(number)"])
                    stop.fire()
                } else {
                    let what =
                        "second signal while stopping: stop forced, exiting now; what was durable stays in the "
                        + "file, writes not yet durable may be lost"
                    logger.critical(
                        "\(what)",
                        metadata: ["signal": "\(number)", "status": "\(128 + number)"])
                    _exit(128 + number)
                }
            }
        }
    }

    /// The next signal's number, waiting for it; nil if the pipe fails (its write end is never closed).
    private static func next(from readEnd: Int32) -> Int32? {
        var number: UInt8 = 0
        while true {
            let count = read(readEnd, &number, 1)
            if count == 1 { return Int32(number) }
            if count < 0 && errno == EINTR { continue }
            return nil
        }
    }
}

/// Fired by SIGHUP: runs the daemon's reload (the token and rules files, read again), one at a time. A
/// SIGHUP before the daemon serves (while it loads its replica) is kept and runs once it does, since the
/// files were read before the load.
final class ReloadSignal: @unchecked Sendable {
    private let lock = NSLock()
    private var handler: (@Sendable () async -> Void)?
    private var pending = false
    private var running = false

    /// Sets what a SIGHUP runs; runs it now if one came before.
    func setHandler(_ handler: @escaping @Sendable () async -> Void) {
        let runNow = lock.withLock { () -> Bool in
            self.handler = handler
            return pending
        }
        if runNow { fire() }
    }

    /// Runs the handler, or keeps the request until there is one; a request while it runs runs it again
    /// after, once (two SIGHUPs in a row read the files twice at most).
    func fire() {
        let start = lock.withLock { () -> (@Sendable () async -> Void)? in
            pending = true
            guard let handler, !running else { return nil }
            running = true
            pending = false
            return handler
        }
        guard let start else { return }
        Task { await self.run(start) }
    }

    private func run(_ first: @escaping @Sendable () async -> Void) async {
        var next: (@Sendable () async -> Void)? = first
        while let current = next {
            await current()
            next = lock.withLock { () -> (@Sendable () async -> Void)? in
                guard pending, let handler else {
                    running = false
                    return nil
                }
                pending = false
                return handler
            }
        }
    }
}
