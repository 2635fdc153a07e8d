#if canImport(Combine)
    import Combine
#else
    import OpenCombine
#endif
import Foundation

@_spi(Engine) @testable import Weft

/// A subscriber of data events that asks for `initial` events when subscribed, and for more only when
/// told (``request(_:)``), recording events and completions; it cancels from inside `receive(_:)` once
/// it holds `cancellingAfter` events, when given.
final class DemandingSubscriber: Subscriber, @unchecked Sendable {
    // Sendable: `subscription` is guarded by `lock`; the collectors lock themselves.
    typealias Input = DataEvent
    typealias Failure = WeftError

    let received = Collector<DataEvent>()
    let completions = Collector<Subscribers.Completion<WeftError>>()
    private let initial: Subscribers.Demand
    private let cancellingAfter: Int?
    private let lock = NSLock()
    private var subscription: (any Subscription)?

    init(initial: Subscribers.Demand, cancellingAfter: Int? = nil) {
        self.initial = initial
        self.cancellingAfter = cancellingAfter
    }

    var combineIdentifier: CombineIdentifier { CombineIdentifier(self) }

    func receive(subscription: any Subscription) {
        lock.withLock { self.subscription = subscription }
        subscription.request(initial)
    }

    func receive(_ input: DataEvent) -> Subscribers.Demand {
        received.append(input)
        if received.count == cancellingAfter { cancel() }
        return .none
    }

    func receive(completion: Subscribers.Completion<WeftError>) { completions.append(completion) }

    func request(_ count: Int) { lock.withLock { subscription }?.request(.max(count)) }

    func cancel() { lock.withLock { subscription }?.cancel() }
}
