import Dispatch
import Testing

@testable import WeftNet

/// One closure's record of who queued it and where it ran.
private struct Run: Sendable {
    let producer: Int
    let index: Int
    let onLoopThread: Bool
}

/// Queues `count` numbered closures from the calling thread.
private func produce(_ count: Int, as producer: Int, on loop: EventLoop, into runs: Recorder<Run>) {
    for index in 0..<count {
        do {
            try loop.execute { runs.append(Run(producer: producer, index: index, onLoopThread: loop.inLoopThread)) }
        } catch {
            Issue.record("execute failed: \(error)")
        }
    }
}

@Suite(.timeLimit(.minutes(5))) struct EventLoopExecuteTests {
    @Test func closuresQueuedFromManyThreadsAllRunOnTheLoopThreadInEachThreadsOrder() async throws {
        let loop = try EventLoop(label: "weft.net.test.producers")
        defer { loop.shutdown() }
        #expect(!loop.inLoopThread)
        let producers = 4
        let closuresPerProducer = 500
        let runs = Recorder<Run>()
        var tasks: [Task<Void, Never>] = []
        for producer in 0..<producers {
            tasks.append(Task.detached { produce(closuresPerProducer, as: producer, on: loop, into: runs) })
        }
        for task in tasks {
            await task.value
        }
        try await eventually("every closure to run") { runs.count == producers * closuresPerProducer }
        let recorded = runs.values
        #expect(recorded.allSatisfy { $0.onLoopThread })
        for producer in 0..<producers {
            let order = recorded.filter { $0.producer == producer }.map { $0.index }
            #expect(order == Array(0..<closuresPerProducer))
        }
    }

    @Test func submitReturnsTheClosuresValueFromTheLoopThread() async throws {
        try await withLoop { loop in
            let onLoopThread = try await loop.submit { loop.inLoopThread }
            #expect(onLoopThread)
            let answer = try await loop.submit { 6 * 7 }
            #expect(answer == 42)
        }
    }

    @Test func submitRethrowsTheClosuresError() async throws {
        try await withLoop { loop in
            let expected = NetError(.invalidArgument, context: "test", reason: "because")
            await #expect(throws: expected) {
                try await loop.submit { () throws -> Int in throw expected }
            }
        }
    }

    @Test func aClosureQueuedFromTheLoopThreadRunsOnALaterTurnNotInline() async throws {
        try await withLoop { loop in
            let events = Recorder<String>()
            try loop.execute {
                try? loop.execute { events.append("inner") }
                events.append("outer finished")
            }
            try await eventually("both closures") { events.count == 2 }
            #expect(events.values == ["outer finished", "inner"])
        }
    }

    @Test func theQueueRefusesClosuresBeyondItsLimitWhileTheLoopIsBusy() async throws {
        try await withLoop { loop in
            let release = DispatchSemaphore(value: 0)
            let busy = Completion<Void>()
            try loop.execute {
                busy.fulfill(())
                release.wait()
            }
            try await busy.value(within: 5_000, "the loop to be busy")
            let ran = Recorder<Int>()
            for index in 0..<NetLimits.executeQueueClosuresMax {
                try loop.execute { if index == 0 { ran.append(index) } }
            }
            do throws(NetError) {
                try loop.execute {}
                Issue.record("execute beyond the queue limit did not throw")
            } catch {
                #expect(error.code == .queueFull)
            }
            release.signal()
            try await eventually("the queued closures to run") { ran.count == 1 }
            try await loop.submit {}
        }
    }

    @Test func workIsRefusedOnceTheLoopHasStopped() async throws {
        let loop = try EventLoop(label: "weft.net.test.stopped")
        loop.shutdown()
        #expect(loop.isStopped)
        do throws(NetError) {
            try loop.execute {}
            Issue.record("execute after shutdown did not throw")
        } catch {
            #expect(error.code == .loopStopped)
        }
        do {
            try await loop.submit { 1 }
            Issue.record("submit after shutdown did not throw")
        } catch let error as NetError {
            #expect(error.code == .loopStopped)
        }
    }
}
