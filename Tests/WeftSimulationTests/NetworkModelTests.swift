import Testing
import WeftCore
@testable import WeftSimulation

@Suite struct NetworkModelTests {
    static func quiet() -> NetworkProfile {
        NetworkProfile(
            latencyTicksMax: 1, jitterTicksMax: 0, dropRate: 0, duplicateRate: 0, reorderRate: 0, delaySpikeRate: 0,
            chunksBytes: false, resetOnCrashRate: 0)
    }

    @Test func aSymmetricPartitionHoldsBothWaysUntilItLifts() {
        var network = NetworkModel(profile: Self.quiet(), seed: 1, healTick: 10_000)
        network.add(.init(episode: 0, fault: .partition(side: [0, 1], symmetric: true), endTick: 500))
        #expect(network.nextOpenTick(from: 0, to: 2, at: 100) == 500)
        #expect(network.nextOpenTick(from: 2, to: 1, at: 100) == 500)
        #expect(network.nextOpenTick(from: 0, to: 1, at: 100) == 100, "both on the same side")
        #expect(network.nextOpenTick(from: 2, to: 3, at: 100) == 100)
        #expect(!network.reachable(1, 3, at: 100))
        #expect(network.reachable(1, 3, at: 500))
    }

    @Test func anAsymmetricPartitionOnlyHoldsWhatTheSideSends() {
        var network = NetworkModel(profile: Self.quiet(), seed: 1, healTick: 10_000)
        network.add(.init(episode: 0, fault: .partition(side: [2], symmetric: false), endTick: 300))
        #expect(network.nextOpenTick(from: 2, to: 0, at: 10) == 300)
        #expect(network.nextOpenTick(from: 0, to: 2, at: 10) == 10)
        #expect(!network.reachable(0, 2, at: 10), "a connection needs both ways")
    }

    @Test func blocksChainAndHealingCutsThemShort() {
        var network = NetworkModel(profile: Self.quiet(), seed: 1, healTick: 1_000)
        network.add(.init(episode: 0, fault: .clog(from: 0, to: 1), endTick: 200))
        network.add(.init(episode: 1, fault: .isolate(replica: 1), endTick: 5_000))
        #expect(network.nextOpenTick(from: 0, to: 1, at: 50) == 1_000, "the isolation runs past the heal")
        network.remove(episode: 1)
        #expect(network.nextOpenTick(from: 0, to: 1, at: 50) == 200)
        network.heal(at: 120)
        #expect(network.nextOpenTick(from: 0, to: 1, at: 50) == 50)
        #expect(network.fate() == .delivered)
    }

    @Test func framesAreCutAtTheirLengthPrefixes() {
        let bytes: [UInt8] = [0, 0, 0, 2, 10, 7, 0, 0, 0, 1, 11, 0, 0, 0, 3, 4, 1, 2]
        let frames = NetworkModel.frames(in: bytes)
        #expect(frames.map(Array.init) == [[0, 0, 0, 2, 10, 7], [0, 0, 0, 1, 11], [0, 0, 0, 3, 4, 1, 2]])
    }

    @Test func perFrameFaultsFollowTheirRatesAndOnlyDuringTheFaultPhase() {
        var profile = Self.quiet()
        profile.dropRate = 0.05
        profile.duplicateRate = 0.05
        var network = NetworkModel(profile: profile, seed: 3, healTick: 10_000)
        var fates: [NetworkModel.FrameFate: Int] = [:]
        for _ in 0..<20_000 { fates[network.fate(), default: 0] += 1 }
        #expect((700...1_300).contains(fates[.dropped] ?? 0))
        #expect((600...1_300).contains(fates[.duplicated] ?? 0))
        #expect(fates[.reordered] == nil)
        network.heal(at: 0)
        #expect((0..<100).allSatisfy { _ in network.fate() == .delivered })
    }
}
