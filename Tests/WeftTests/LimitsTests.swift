import Testing
@testable import Weft

@Suite struct WeftLimitsTests {
    @Test func limitsAreOrdered() {
        #expect(WeftLimits.transactionRetriesMax > 0)
        #expect(WeftLimits.transactionRetriesMax <= WeftLimits.subscriberEventsBufferedMax)
    }
}
