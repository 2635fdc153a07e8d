import CStopSignals
import Foundation
import Logging

/// SIGINT and SIGTERM for `weft serve`, caught from the moment it starts until the process ends: the
/// first asks for a clean stop, whatever the daemon is doing (loading its replica, serving, closing); a
/// second, while it stops, ends the process at once (a stop stuck on a slow disk, say).
///
/// ```swift
/// let signals = try StopSignals.route()
/// signals.watch(stop: stop, logger: logger)
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

    /// Installs the handlers of SIGINT and SIGTERM; a signal from now on waits in the pipe until
    /// ``watch(stop:logger:)`` reads it. Call it once per process.
    ///
    /// - Throws: ``Failure`` when the pipe or a handler cannot be made.
    static func route() throws -> StopSignals {
        let readEnd = weft_stop_signals_route()
        guard readEnd >= 0 else {
            throw Failure(description: "cannot catch SIGINT and SIGTERM: \(String(cString: strerror(errno)))")
        }
        return StopSignals(readEnd: readEnd)
    }

    /// Starts the thread that acts on the signals: the first is logged and fires `stop`; the second logs a
    /// `critical` line and exits at once with 128 + its number (130 for SIGINT, 143 for SIGTERM), without
    /// waiting for the clean stop: what is durable stays in the file, what group commit still held is lost.
    func watch(stop: StopSignal, logger: Logger) {
        let readEnd = readEnd
        Thread.detachNewThread {
            var received = 0
            while let number = Self.next(from: readEnd) {
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
