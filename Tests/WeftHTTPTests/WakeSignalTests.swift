import Foundation
import Testing

@testable import WeftHTTP

/// The webhook deliverer's wake-up: a wait that timed out must leave it able to wait again (an
/// `AsyncStream` finished itself there, and the deliverer's loop spun a core from then on).
@Suite(.timeLimit(.minutes(5))) struct WakeSignalTests {
    /// Set once a wait has returned.
    final class Flag: @unchecked Sendable {
        private let lock = NSLock()
        private var value = false
        var isSet: Bool { lock.withLock { value } }
        func set() { lock.withLock { value = true } }
    }

    @Test("after waits that timed out, a long wait still waits, and a signal ends it")
    func aTimedOutWaitLeavesTheSignalUsable() async throws {
        let signal = WakeSignal()
        for _ in 0..<3 { await signal.wait(milliseconds: 5) }
        let returned = Flag()
        let waiting = Task {
            await signal.wait(milliseconds: 30_000)
            returned.set()
        }
        try await Task.sleep(for: .milliseconds(300))
        #expect(!returned.isSet, "a wait returned before its deadline with no signal")
        signal.signal()
        await waiting.value
        #expect(returned.isSet)
    }

    @Test("a signal given while nobody waits ends the next wait at once, and only that one")
    func aSignalIsKeptForTheNextWait() async throws {
        let signal = WakeSignal()
        signal.signal()
        let start = ContinuousClock.now
        await signal.wait(milliseconds: 30_000)
        #expect(ContinuousClock.now - start < .seconds(10))
        let returned = Flag()
        let waiting = Task {
            await signal.wait(milliseconds: 30_000)
            returned.set()
        }
        try await Task.sleep(for: .milliseconds(300))
        #expect(!returned.isSet, "one signal ended two waits")
        signal.close()
        await waiting.value
        await signal.wait(milliseconds: 30_000)  // closed: returns at once
        #expect(returned.isSet)
    }
}
