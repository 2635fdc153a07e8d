import Testing
@testable import WeftSimulation

@Suite struct SimulationLimitsTests {
    @Test func limitsAreOrdered() {
        #expect(SimulationLimits.replicasMin > 0)
        #expect(SimulationLimits.replicasMin <= SimulationLimits.replicasMax)
    }
}
