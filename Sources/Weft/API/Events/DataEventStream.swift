import Foundation

/// The events of a subscription as an `AsyncSequence`.
///
/// Each iteration starts its own subscription; it ends when the task is cancelled, the iterator is
/// dropped, or the replica shuts down (after the events already seen).
///
/// ```swift
/// for await event in chat.events(for: .childAddition) {
///     print(event.node.key ?? "", event.value)
/// }
/// ```
public struct DataEventStream: AsyncSequence, Sendable {
    /// Each element is one event of the subscription.
    public typealias Element = DataEvent

    let node: DataNode
    let type: DataEventType
    let constraint: ChildrenConstraint

    /// Starts a subscription of its own (what `for await` calls).
    ///
    /// ```swift
    /// var iterator = node.events().makeAsyncIterator()
    /// let first = await iterator.next()   // the current value
    /// ```
    public func makeAsyncIterator() -> Iterator {
        let feed = EventFeed(node: node, type: type, constraint: constraint)
        let signal = WakeSignal()
        feed.start { _ in signal.wake() }
        return Iterator(feed: feed, signal: signal)
    }

    /// Iterates over the events of one subscription.
    public final class Iterator: AsyncIteratorProtocol {
        private let feed: EventFeed
        private let signal: WakeSignal
        private var pending: [DataEvent] = []
        private var position = 0

        /// Events taken from the feed at a time.
        static let takeEventsMax = 64

        init(feed: EventFeed, signal: WakeSignal) {
            self.feed = feed
            self.signal = signal
        }

        /// The next event, or nil once the subscription ended.
        public func next() async -> DataEvent? {
            while true {
                if position < pending.count {
                    defer { position += 1 }
                    return pending[position]
                }
                let (events, end) = feed.take(Self.takeEventsMax)
                if !events.isEmpty {
                    pending = events
                    position = 0
                    continue
                }
                if end != nil || Task.isCancelled {
                    feed.cancel()
                    return nil
                }
                await signal.wait()
            }
        }

        deinit { feed.cancel() }
    }
}

/// A one-waiter wake-up flag: `wake()` before `wait()` makes the wait return at once. Task cancellation
/// wakes the waiter too.
final class WakeSignal: @unchecked Sendable {
    // Sendable: fields are guarded by `lock`.
    private let lock = NSLock()
    private var signaled = false
    private var waiter: CheckedContinuation<Void, Never>?

    func wake() {
        let continuation = lock.withLock {
            guard let waiter else {
                signaled = true
                return nil as CheckedContinuation<Void, Never>?
            }
            self.waiter = nil
            return waiter
        }
        continuation?.resume()
    }

    func wait() async {
        await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                let resumeNow = lock.withLock {
                    if signaled || Task.isCancelled {
                        signaled = false
                        return true
                    }
                    waiter = continuation
                    return false
                }
                if resumeNow { continuation.resume() }
            }
        } onCancel: {
            wake()
        }
    }
}
