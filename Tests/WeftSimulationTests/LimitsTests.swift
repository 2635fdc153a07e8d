import Testing
import WeftCore
import WeftSync
@testable import WeftSimulation

@Suite struct SimulationLimitsTests {
    @Test func replicaBoundsAreOrderedAndFitTheMeshRule() {
        #expect(SimulationLimits.replicasMin >= 2)
        #expect(SimulationLimits.replicasMin <= SimulationLimits.replicasMax)
        #expect(SimulationLimits.fullMeshReplicasMax < SimulationLimits.replicasMax)
        #expect(SimulationLimits.fullMeshReplicasMax >= 3, "a ring with chords needs more than three replicas")
    }

    @Test func sessionBoundsAreWithinWhatTheSyncLayerAccepts() {
        #expect(SimulationLimits.windowBytesMin >= SyncLimits.windowBytesMin)
        #expect(SimulationLimits.windowBytesMax <= SyncLimits.windowBytesMax)
        #expect(SimulationLimits.batchOpsMax <= SyncLimits.batchOpsMax)
        #expect(SimulationLimits.pingIntervalTicksMin >= SyncLimits.pingIntervalMillisecondsMin)
    }

    @Test func drawnTimeoutsFitTheTimeoutBound() {
        // Drawn: the idle timeout up to six pings, the handshake up to five, or a few trips of the slowest link.
        let trip = 2 * SimulationLimits.latencyTicksMax
        #expect(6 * SimulationLimits.pingIntervalTicksMax <= SimulationLimits.sessionTimeoutTicksMax)
        #expect(SimulationLimits.pingIntervalTicksMax + 6 * trip <= SimulationLimits.sessionTimeoutTicksMax)
        #expect(SimulationLimits.sessionTimeoutTicksMax < UInt64(SimulationLimits.ticksMaxConvergence))
    }

    @Test func clockFaultsStayWithinTheDriftReplicasAccept() {
        // Two replicas skewed the most apart must still accept each other's stamps.
        #expect(UInt64(2 * SimulationLimits.clockOffsetMillisMax) < SimulationLimits.driftMillisMax)
        #expect(SimulationLimits.clockJumpMillisMax <= SimulationLimits.clockOffsetMillisMax)
        #expect(SimulationLimits.driftMillisMax <= CoreLimits.driftMillisMaxDefault)
    }

    @Test func everyWaitAFaultCausesFitsTheConvergenceBound() {
        let bound = UInt64(SimulationLimits.ticksMaxConvergence)
        #expect(SimulationLimits.beyondDriftMillisMax < bound / 4)
        #expect(SimulationLimits.redialTicksMax + SimulationLimits.connectTimeoutTicks < bound / 4)
        #expect(SimulationLimits.delaySpikeTicksMax + 2 * SimulationLimits.latencyTicksMax < bound / 4)
        #expect(SimulationLimits.damageResetTicks < SimulationLimits.pingIntervalTicksMin)
        #expect(SimulationLimits.checkIntervalTicks < bound)
    }

    @Test func faultPhaseAndRateBoundsAreOrdered() {
        #expect(SimulationLimits.ticksFaultMin < SimulationLimits.ticksFaultMax)
        #expect(SimulationLimits.latencyTicksMin <= SimulationLimits.latencyTicksMax)
        #expect(SimulationLimits.syncIntervalTicksMin <= SimulationLimits.syncIntervalTicksMax)
        #expect(SimulationLimits.redialTicksMin <= SimulationLimits.redialTicksMax)
        #expect(SimulationLimits.frameFaultRateMax > 0 && SimulationLimits.frameFaultRateMax < 0.5)
        #expect(SimulationLimits.foldChecksPerRunMax >= 1)
        #expect(SimulationLimits.duplicateCheckOpsMax >= 1)
    }
}
