import Foundation
import Testing
import WeftCore

@_spi(Engine) @testable import Weft

/// A publisher's end does not wait for demand: Combine lets a completion through without it, and a
/// subscriber that asked for nothing more still learns that no event will ever come.
@Suite struct DataEventPublisherShutdownTests {
    @Test func aSubscriberWithNoDemandLeftIsFinishedAtShutdown() async throws {
        let fixture = try ReplicaFixture(.memory)
        let node = try fixture.replica.root.at("a")
        try await node.set(1)
        let subscriber = DemandingSubscriber(initial: .max(1))
        node.forCombine.eventPublisher().subscribe(subscriber)
        #expect(await subscriber.received.wait(for: 1).map(\.value) == [1])
        await fixture.replica.shutdown()
        let completions = await subscriber.completions.wait(for: 1)
        #expect(completions.count == 1)
        if case .failure(let error) = completions.first { Issue.record("finished with \(error), not .finished") }
        await fixture.finish()
    }

    @Test func aSubscriberWithNoDemandLeftGetsTheBufferedEventsBeforeTheEnd() async throws {
        let fixture = try ReplicaFixture(.memory)
        let node = try fixture.replica.root.at("a")
        let subscriber = DemandingSubscriber(initial: .max(1))
        node.forCombine.eventPublisher().subscribe(subscriber)
        #expect(await subscriber.received.wait(for: 1).map(\.value) == [.null])
        try await node.set(1)
        try await node.set(2)
        await fixture.replica.shutdown()
        try await Task.sleep(nanoseconds: 100_000_000)
        #expect(subscriber.completions.count == 0, "the end waits behind the events still buffered")
        subscriber.request(5)
        #expect(await subscriber.received.wait(for: 3).map(\.value) == [.null, 1, 2])
        #expect(await subscriber.completions.wait(for: 1).count == 1)
        await fixture.finish()
    }

    @Test func aSubscriberAskingForNothingAfterShutdownIsFailedAtOnce() async throws {
        let fixture = try ReplicaFixture(.memory)
        let node = try fixture.replica.root.at("a")
        await fixture.replica.shutdown()
        let subscriber = DemandingSubscriber(initial: .none)
        node.forCombine.eventPublisher().subscribe(subscriber)
        let completions = await subscriber.completions.wait(for: 1)
        guard case .failure(let error) = completions.first else {
            Issue.record("expected a shutDown failure, got \(completions)")
            return
        }
        #expect(error.code == .shutDown)
        await fixture.finish()
    }
}
