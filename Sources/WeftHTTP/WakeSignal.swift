import Foundation

/// A wake-up one task waits for with a deadline: ``signal()`` ends the current wait, or the next one
/// at once when nobody waits; ``close()`` ends every wait from then on.
///
/// Not an `AsyncStream`: a wait that timed out must leave the signal usable, and cancelling a task
/// that awaits an `AsyncStream`'s `next()` finishes the stream for good, after which every wait
/// returns at once (the webhook deliverer spun a core that way once idle for a second).
final class WakeSignal: @unchecked Sendable {
    private let lock = NSLock()
    private var pending = false
    private var closed = false
    private var waiter: CheckedContinuation<Void, Never>?
    private var generation: UInt64 = 0

    /// Ends the current wait, or marks the next one to end at once.
    func signal() {
        let waiter = lock.withLock { () -> CheckedContinuation<Void, Never>? in
            guard let waiter = self.waiter else {
                pending = true
                return nil
            }
            self.waiter = nil
            return waiter
        }
        waiter?.resume()
    }

    /// Ends the current wait and every later one.
    func close() {
        let waiter = lock.withLock { () -> CheckedContinuation<Void, Never>? in
            closed = true
            defer { self.waiter = nil }
            return self.waiter
        }
        waiter?.resume()
    }

    /// Returns at a signal, at `close()`, or after `milliseconds`, whichever comes first.
    func wait(milliseconds: Int64) async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let turn = lock.withLock { () -> UInt64? in
                if pending || closed {
                    pending = false
                    return nil
                }
                generation &+= 1
                waiter = continuation
                return generation
            }
            guard let turn else {
                continuation.resume()
                return
            }
            Task { [weak self] in
                try? await Task.sleep(for: .milliseconds(milliseconds))
                self?.expire(turn)
            }
        }
    }

    /// Ends the wait `turn` if it is still the one waiting (a later wait keeps its own deadline).
    private func expire(_ turn: UInt64) {
        let waiter = lock.withLock { () -> CheckedContinuation<Void, Never>? in
            guard generation == turn, let waiter = self.waiter else { return nil }
            self.waiter = nil
            return waiter
        }
        waiter?.resume()
    }
}
