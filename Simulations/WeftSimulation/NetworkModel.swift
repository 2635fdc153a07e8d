import WeftCore

/// The simulated network: when bytes sent now reach the other side, and what happens to a frame on
/// the way. Latencies are per link, partitions and clogs hold traffic until they lift (as TCP would
/// retransmit it), and per-frame faults damage a stream.
struct NetworkModel {
    /// A fault that holds traffic in some directions until `endTick`.
    struct Block {
        let episode: Int
        let fault: Fault
        let endTick: UInt64

        /// True when traffic from `source` to `target` is held.
        func holds(from source: Int, to target: Int) -> Bool {
            switch fault {
            case .partition(let side, let symmetric):
                let sourceInside = side.contains(source)
                let targetInside = side.contains(target)
                if sourceInside && !targetInside { return true }
                return symmetric && !sourceInside && targetInside
            case .isolate(let replica): return source == replica || target == replica
            case .clog(let from, let to): return source == from && target == to
            case .crash, .clockJump, .clockBeyondDrift: return false
            }
        }
    }

    /// What happens to one frame.
    enum FrameFate {
        case delivered
        case dropped
        case duplicated
        case reordered
    }

    let profile: NetworkProfile
    private(set) var rng: SeededGenerator
    private(set) var blocks: [Block] = []
    /// No fault holds traffic at or after this tick (healing).
    private(set) var healTick: UInt64
    /// True while per-frame faults and delay spikes are on (the fault phase).
    private(set) var faultsActive = true

    init(profile: NetworkProfile, seed: UInt64, healTick: UInt64) {
        self.profile = profile
        self.rng = RandomStream.network.generator(seed: seed)
        self.healTick = healTick
    }

    /// Draws a base latency for a new link.
    mutating func drawLatency() -> UInt64 {
        SimulationLimits.latencyTicksMin + rng.below(profile.latencyTicksMax)
    }

    mutating func draw(below bound: UInt64) -> UInt64 { rng.below(bound) }
    mutating func chance(_ probability: Double) -> Bool { rng.chance(probability) }

    // MARK: - Faults

    mutating func add(_ block: Block) { blocks.append(block) }

    mutating func remove(episode: Int) { blocks.removeAll { $0.episode == episode } }

    /// Healing: faults stop, held traffic flows.
    mutating func heal(at tick: UInt64) {
        blocks = []
        faultsActive = false
        healTick = min(healTick, tick)
    }

    /// The first tick at or after `tick` at which traffic from `source` to `target` is not held.
    func nextOpenTick(from source: Int, to target: Int, at tick: UInt64) -> UInt64 {
        var open = tick
        var moved = true
        while moved, open < healTick {
            moved = false
            for block in blocks where block.endTick > open && block.holds(from: source, to: target) {
                open = min(block.endTick, healTick)
                moved = true
            }
        }
        return open
    }

    /// True when nothing holds traffic either way between two replicas now.
    func reachable(_ first: Int, _ second: Int, at tick: UInt64) -> Bool {
        nextOpenTick(from: first, to: second, at: tick) == tick
            && nextOpenTick(from: second, to: first, at: tick) == tick
    }

    // MARK: - Frames

    /// When bytes sent at `tick` over a link of base `latency` arrive, and whether a fault held them
    /// (a delay spike, a partition or a clog).
    mutating func arrival(
        from source: Int, to target: Int, tick: UInt64, latency: UInt64
    ) -> (tick: UInt64, spiked: Bool, held: Bool) {
        var arrival = tick + latency
        if profile.jitterTicksMax > 0 { arrival += rng.below(profile.jitterTicksMax + 1) }
        var spiked = false
        if faultsActive, profile.delaySpikeRate > 0, rng.chance(profile.delaySpikeRate) {
            arrival += 1 + rng.below(SimulationLimits.delaySpikeTicksMax)
            spiked = true
        }
        let open = nextOpenTick(from: source, to: target, at: arrival)
        return (open, spiked, open > arrival)
    }

    /// What happens to the next frame.
    mutating func fate() -> FrameFate {
        guard faultsActive, profile.damagesStreams else { return .delivered }
        if profile.dropRate > 0, rng.chance(profile.dropRate) { return .dropped }
        if profile.duplicateRate > 0, rng.chance(profile.duplicateRate) { return .duplicated }
        if profile.reorderRate > 0, rng.chance(profile.reorderRate) { return .reordered }
        return .delivered
    }

    /// Splits bytes at random offsets, as a stream may deliver them (nil to deliver them whole).
    mutating func chunks(of bytes: ArraySlice<UInt8>) -> [ArraySlice<UInt8>]? {
        guard profile.chunksBytes, bytes.count > 1, rng.chance(0.25) else { return nil }
        let first = bytes.startIndex + 1 + Int(rng.below(UInt64(bytes.count - 1)))
        return [bytes[..<first], bytes[first...]]
    }

    /// The whole frames in a send (each send holds one or more whole frames).
    static func frames(in bytes: [UInt8]) -> [ArraySlice<UInt8>] {
        var frames: [ArraySlice<UInt8>] = []
        var start = 0
        while start + 4 <= bytes.count {
            var length = 0
            for index in start..<(start + 4) { length = length << 8 | Int(bytes[index]) }
            let end = start + 4 + length
            precondition(end <= bytes.count, "a send holds whole frames")
            frames.append(bytes[start..<end])
            start = end
        }
        precondition(start == bytes.count, "a send holds whole frames")
        return frames
    }
}
