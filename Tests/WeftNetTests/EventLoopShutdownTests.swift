import CLibUV
import Testing

@testable import WeftNet

@Suite(.timeLimit(.minutes(5))) struct EventLoopShutdownTests {
    @Test func shutdownClosesEveryHandleAndEndsTheThread() async throws {
        let loop = try EventLoop(label: "weft.net.test.shutdown")
        let port = try await startEchoServer(on: loop)
        let closes = Recorder<NetError?>()
        let client = try await connect(on: loop, port: port) { connection in
            connection.onClose = { closes.append($0) }
        }
        let timerFired = Recorder<Int>()
        let timer = try await loop.submit {
            try loop.scheduleTimer(after: 60_000) { timerFired.append(1) }
        }
        // The listener, both ends of the connection, and the timer.
        try await eventually(on: loop, "four resources") { loop.resources.count == 4 }
        loop.shutdown()
        #expect(loop.isStopped)
        #expect(closes.count == 1)
        #expect(closes.values.first??.code == .loopStopped)
        #expect(!client.isOpen)
        #expect(!timer.isActive)
        #expect(timerFired.count == 0)
        #expect(loop.resources.isEmpty)
        // The port is free again.
        let again = try EventLoop(label: "weft.net.test.rebind")
        defer { again.shutdown() }
        let rebound = try await again.submit { try again.listen(host: "127.0.0.1", port: port) { _ in }.port }
        #expect(rebound == port)
    }

    @Test func closuresQueuedBeforeShutdownStillRun() async throws {
        let loop = try EventLoop(label: "weft.net.test.drain")
        let ran = Recorder<Int>()
        for index in 0..<100 {
            try loop.execute { ran.append(index) }
        }
        loop.shutdown()
        #expect(ran.values == Array(0..<100))
    }

    @Test func waitingForAJoinedLoopReturnsOnAThreadThatReusesTheLoopThreadsID() throws {
        // The system gives a joined thread's id (its control block) to the next thread it starts, so a thread
        // started after the join may compare equal to the loop thread. A second wait from such a thread (a
        // second SyncDriver.shutdown) was taken for the loop waiting for itself and stopped the process.
        for round in 0..<50 {
            let loop = try EventLoop(label: "weft.net.test.rejoin.\(round)")
            loop.shutdown()
            let waited = Recorder<Int>()
            var thread = uv_thread_t()
            let box = Unmanaged.passRetained(WaitBox(loop: loop, waited: waited))
            let started = uv_thread_create(&thread, { argument in
                guard let argument else { return }
                let box = Unmanaged<WaitBox>.fromOpaque(argument).takeRetainedValue()
                box.loop.waitUntilStopped()
                box.waited.append(1)
            }, box.toOpaque())
            #expect(started == 0)
            uv_thread_join(&thread)
            #expect(waited.count == 1)
        }
    }

    @Test func shutdownIsIdempotentAndSafeFromSeveralThreads() async throws {
        let loop = try EventLoop(label: "weft.net.test.twice")
        await withTaskGroup(of: Void.self) { group in
            for _ in 0..<3 {
                group.addTask { loop.shutdown() }
            }
        }
        loop.shutdown()
        #expect(loop.isStopped)
    }

    @Test func aHandleCannotBeMadeOnceShutdownHasBegun() async throws {
        let loop = try EventLoop(label: "weft.net.test.late")
        let port = try await startEchoServer(on: loop)
        let codes = Recorder<NetError.Code>()
        _ = try await connect(on: loop, port: port) { connection in
            // Runs while the loop closes its handles: new ones must be refused.
            connection.onClose = { _ in
                do throws(NetError) { try loop.scheduleTimer(after: 1) {} } catch { codes.append(error.code) }
                do throws(NetError) { _ = try loop.listen(host: "127.0.0.1", port: 0) { _ in } } catch {
                    codes.append(error.code)
                }
                do throws(NetError) { try loop.connect(host: "127.0.0.1", port: port) { _ in } } catch {
                    codes.append(error.code)
                }
            }
        }
        loop.shutdown()
        #expect(codes.values == [.loopStopped, .loopStopped, .loopStopped])
    }
}

/// What the thread of the rejoin test needs: the loop to wait for and where to say it returned.
private final class WaitBox: Sendable {
    let loop: EventLoop
    let waited: Recorder<Int>

    init(loop: EventLoop, waited: Recorder<Int>) {
        self.loop = loop
        self.waited = waited
    }
}
