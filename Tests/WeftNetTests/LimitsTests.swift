import Testing
@testable import WeftNet

@Suite struct NetLimitsTests {
    @Test func limitsAreOrdered() {
        #expect(NetLimits.reconnectDelayMillisecondsMin > 0)
        #expect(NetLimits.reconnectDelayMillisecondsMin <= NetLimits.reconnectDelayMillisecondsMax)
    }
}
