import Testing

@testable import WeftNet

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

@Suite(.timeLimit(.minutes(5))) struct EventLoopSignalTests {
    @Test func aWatchedSignalRunsItsHandlerOnTheLoopThread() async throws {
        try await withLoop { loop in
            let received = Recorder<Bool>()
            let watcher = try await loop.submit {
                try loop.onSignal(SIGUSR1) { received.append(loop.inLoopThread) }
            }
            // The watcher is installed before submit returns, so the signal cannot hit the default action.
            kill(getpid(), SIGUSR1)
            try await eventually("the handler") { received.count == 1 }
            #expect(received.values == [true])
            kill(getpid(), SIGUSR1)
            try await eventually("the handler again") { received.count == 2 }
            let active = try await loop.submit { () -> Bool in
                watcher.cancel()
                return watcher.isActive
            }
            #expect(!active)
        }
    }

    @Test func aSignalHandlerCanShutTheLoopDown() async throws {
        let loop = try EventLoop(label: "weft.net.test.signal")
        try await loop.submit {
            try loop.onSignal(SIGUSR2) { loop.beginShutdown() }
        }
        kill(getpid(), SIGUSR2)
        try await eventually("the loop to stop") { loop.isStopped }
        loop.waitUntilStopped()
    }

    @Test func anInvalidSignalNumberIsRefused() async throws {
        try await withLoop { loop in
            let code = try await loop.submit { () -> NetError.Code? in
                do throws(NetError) {
                    try loop.onSignal(100_000) {}
                    return nil
                } catch {
                    return error.code
                }
            }
            #expect(code == .invalidArgument)
        }
    }
}
