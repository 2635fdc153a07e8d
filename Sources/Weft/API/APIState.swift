import Dispatch
import Foundation
import WeftCore

/// What the public API keeps per replica beside the engine: the JSON coders, the default callback queue,
/// the transactions in flight and the live event feeds.
///
/// `Replica` owns one; every `DataNode` of the replica shares it. Thread-safe.
final class APIState: @unchecked Sendable {
    // Sendable: every mutable field is guarded by `lock`.
    private let lock = NSLock()
    /// The replica's webhook and notification subscriptions (see ``SubscriptionBook``).
    let subscriptions = SubscriptionBook()
    private var encoder: JSONEncoder
    private var decoder: JSONDecoder
    private var queue: DispatchQueue
    private var emptyCollections = true
    private var transactions: [UInt64: InFlightTransaction] = [:]
    private var nextTransactionID: UInt64 = 0
    private var feeds: [ObjectIdentifier: WeakFinishable] = [:]
    private var finished = false

    /// A fresh state; callbacks default to a serial queue of their own.
    init(encoder: JSONEncoder = JSONEncoder(), decoder: JSONDecoder = JSONDecoder(), label: String = "weft.callbacks") {
        self.encoder = encoder
        self.decoder = decoder
        queue = DispatchQueue(label: label)
    }

    // MARK: - Configuration

    var coding: ValueCoding {
        lock.withLock {
            ValueCoding(encoder: encoder, decoder: decoder, missingCollectionsAsEmpty: emptyCollections)
        }
    }

    var missingCollectionsAsEmpty: Bool {
        get { lock.withLock { emptyCollections } }
        set { lock.withLock { emptyCollections = newValue } }
    }

    var jsonEncoder: JSONEncoder {
        get { lock.withLock { encoder } }
        set { lock.withLock { encoder = newValue } }
    }

    var jsonDecoder: JSONDecoder {
        get { lock.withLock { decoder } }
        set { lock.withLock { decoder = newValue } }
    }

    var callbackQueue: DispatchQueue {
        get { lock.withLock { queue } }
        set { lock.withLock { queue = newValue } }
    }

    // MARK: - Transactions in flight

    /// Records a transaction running at `path`, until ``endTransaction(_:)``.
    func beginTransaction(at path: Path) -> UInt64 {
        lock.withLock {
            nextTransactionID += 1
            transactions[nextTransactionID] = InFlightTransaction(path: path)
            return nextTransactionID
        }
    }

    func endTransaction(_ id: UInt64) { _ = lock.withLock { transactions.removeValue(forKey: id) } }

    /// True when a local blind write touched the transaction's subtree since it began (Firebase aborts a
    /// transaction overridden by a `set` rather than retry it over the app's own write).
    func isOverridden(_ id: UInt64) -> Bool { lock.withLock { transactions[id]?.overridden ?? false } }

    /// Marks the transactions whose subtree overlaps a local blind write (set, clear, merge, push, batch).
    func noteBlindWrite(at paths: [Path]) {
        lock.withLock {
            guard !transactions.isEmpty else { return }
            for (id, transaction) in transactions where paths.contains(where: { $0.isRelated(to: transaction.path) }) {
                transactions[id]?.overridden = true
            }
        }
    }

    // MARK: - Feeds

    /// Keeps `feed` until it ends, so that shutdown can finish it. Returns false after shutdown.
    func add(_ feed: any Finishable) -> Bool {
        lock.withLock {
            guard !finished else { return false }
            feeds[ObjectIdentifier(feed)] = WeakFinishable(feed)
            return true
        }
    }

    func remove(_ feed: any Finishable) { _ = lock.withLock { feeds.removeValue(forKey: ObjectIdentifier(feed)) } }

    /// Finishes every live feed (the replica shut down): publishers complete, event sequences end.
    func finishFeeds() {
        let live = lock.withLock {
            finished = true
            defer { feeds.removeAll() }
            return feeds.values.compactMap(\.feed)
        }
        for feed in live { feed.finish() }
    }
}

/// Something that ends when the replica shuts down.
protocol Finishable: AnyObject, Sendable {
    func finish()
}

private struct InFlightTransaction {
    let path: Path
    var overridden = false
}

private struct WeakFinishable {
    weak var feed: (any Finishable)?
    init(_ feed: any Finishable) { self.feed = feed }
}
