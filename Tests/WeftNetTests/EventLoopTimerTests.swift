import Testing

@testable import WeftNet

@Suite(.timeLimit(.minutes(5))) struct EventLoopTimerTests {
    @Test func aOneShotTimerFiresOnceAfterItsDelay() async throws {
        try await withLoop { loop in
            let clock = ContinuousClock()
            let started = clock.now
            let fired = Recorder<Duration>()
            let timer = try await loop.submit {
                try loop.scheduleTimer(after: 30) { fired.append(clock.now - started) }
            }
            try await eventually("the timer to fire") { fired.count == 1 }
            // libuv keeps the loop's time in whole milliseconds, truncated, from a clock that may be
            // coarse up to a millisecond: measured with a finer clock, a timer may fire up to 2 ms before
            // its delay (29.26 ms was seen once for 30 ms), never sooner.
            #expect(fired.values[0] >= .milliseconds(28))
            try await Task.sleep(for: .milliseconds(60))
            #expect(fired.count == 1)
            let active = try await loop.submit { timer.isActive }
            #expect(!active)
        }
    }

    @Test func aRepeatingTimerFiresUntilCancelled() async throws {
        try await withLoop { loop in
            let ticks = Recorder<Int>()
            let timer = try await loop.submit {
                try loop.scheduleTimer(after: 5, repeating: 5) { ticks.append(1) }
            }
            try await eventually("three ticks") { ticks.count >= 3 }
            try await loop.submit { timer.cancel() }
            let afterCancel = ticks.count
            try await Task.sleep(for: .milliseconds(50))
            #expect(ticks.count == afterCancel)
            let active = try await loop.submit { timer.isActive }
            #expect(!active)
        }
    }

    @Test func aTimerCancelledBeforeItsDelayNeverFires() async throws {
        try await withLoop { loop in
            let fired = Recorder<Int>()
            try await loop.submit {
                let timer = try loop.scheduleTimer(after: 20) { fired.append(1) }
                timer.cancel()
                timer.cancel()
            }
            try await Task.sleep(for: .milliseconds(80))
            #expect(fired.count == 0)
        }
    }

    @Test func aTimerBodyMayScheduleTheNextTimer() async throws {
        try await withLoop { loop in
            let fired = Recorder<Int>()
            try await loop.submit {
                try loop.scheduleTimer(after: 1) {
                    fired.append(1)
                    _ = try? loop.scheduleTimer(after: 1) { fired.append(2) }
                }
            }
            try await eventually("both timers") { fired.count == 2 }
            #expect(fired.values == [1, 2])
        }
    }

    @Test func aNegativeDelayOrNonPositivePeriodIsRefused() async throws {
        try await withLoop { loop in
            let codes = try await loop.submit { () -> [NetError.Code] in
                var codes: [NetError.Code] = []
                do throws(NetError) { try loop.scheduleTimer(after: -1) {} } catch { codes.append(error.code) }
                do throws(NetError) { try loop.scheduleTimer(after: 1, repeating: 0) {} } catch {
                    codes.append(error.code)
                }
                return codes
            }
            #expect(codes == [.invalidArgument, .invalidArgument])
        }
    }
}
