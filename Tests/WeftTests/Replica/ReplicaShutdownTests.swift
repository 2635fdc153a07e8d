import Foundation
import Testing
import WeftCore

@_spi(Engine) @testable import Weft

@Suite struct ReplicaShutdownTests {
    @Test func writesAfterShutdownFailWithAClearErrorWhileReadsGoOn() async throws {
        let backend = MemoryBackend()
        let node = try backend.node("n")
        try await node.set(1)
        await backend.access.shutdown()
        for attempt: () async throws -> Void in [
            { try await node.set(2) },
            { try await node.clear() },
            { try await node.merge(with: ["a": 1]) },
            { _ = try await node.push("x") },
            { _ = try await node.increment() },
            { _ = try await node.runTransaction { _ in .set(3) } },
            { _ = try await node.copyValue(to: "/m") },
            { _ = try await backend.access.performChanges(at: .now, waitingFor: .durable) { try $0.set(1, at: node) } },
            { _ = try node.createChild() },
        ] {
            do {
                try await attempt()
                Issue.record("the call should fail after shutdown")
            } catch let error as WeftError {
                #expect(error.code == .shutDown)
                #expect(error.message.contains("shut down"))
            }
        }
        #expect(try await node.value() == 1)
        #expect(try backend.access.readSnapshot { try $0.value(of: node) } == 1)
        let failures = Collector<Result<WriteReceipt, WeftError>>()
        #expect(node.set(5) { failures.append($0) } == nil)
        let failure = try #require(await failures.wait(for: 1).first)
        #expect(throws: WeftError.self) { try failure.get() }
    }

    @Test func writesStartedBeforeShutdownFinish() async throws {
        let backend = MemoryBackend(durabilityDelay: nil)
        let node = try backend.node("n")
        let receipt = try await node.set(1, waitingFor: .pending)
        await backend.access.shutdown()
        #expect(receipt.status == .durable)
    }

    @Test func theCompletionFormCallsBackAfterShutdown() async throws {
        let backend = MemoryBackend()
        let done = Collector<Bool>()
        backend.access.shutdown(queue: nil) { done.append(true) }
        #expect(await done.wait(for: 1) == [true])
        #expect(backend.isShutDown)
    }

    @Test func feedsEndWhenTheReplicaShutsDown() async throws {
        let backend = MemoryBackend()
        let node = try backend.node("n")
        let iterated = Collector<DataEvent>()
        let iteration = Task { for await event in node.events() { iterated.append(event) } }
        let publisher = Recorder(node.eventPublisher())
        await iterated.wait(for: 1)
        await publisher.wait(for: 1)
        await backend.access.shutdown()
        await iteration.value
        #expect(iterated.count == 1)
        #expect(await eventually { publisher.isFinished })
        #expect(publisher.errors.isEmpty)

        let late = Recorder(node.eventPublisher())
        #expect(await eventually { !late.errors.isEmpty })
        #expect(late.errors.map(\.code) == [.shutDown])
        #expect(late.values.isEmpty)
    }
}
