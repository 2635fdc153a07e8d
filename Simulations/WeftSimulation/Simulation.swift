import WeftCore
import WeftSync

/// An op the workload wrote: when, where, and the op itself.
public struct WrittenOp: Sendable, Hashable {
    /// The tick of the write.
    public var tick: UInt64
    /// The replica that wrote it.
    public var replica: Int
    /// The op, as stamped by that replica.
    public var op: Op
}

/// A simulated world running the real merge engine and the real sync sessions: replicas with their
/// own clocks and disks, links between them, and faults, all driven by one seed.
///
/// A run has two phases. During the fault phase the workload writes and the scheduled faults
/// strike; then the world heals (partitions lift, crashed replicas restart, frames stop being
/// lost) and every replica must converge within ``SimulationLimits/ticksMaxConvergence`` ticks.
/// Checkers run all along and at the end; the first broken property ends the run.
///
/// ```swift
/// let report = Simulation(scenario: Scenario.draw(seed: 1, options: ScenarioOptions())).run()
/// print(report.passed, report.traceHashText)
/// ```
///
/// A simulation is single-threaded and runs once.
public final class Simulation {
    /// What this run is made of.
    public let scenario: Scenario
    let plan: WritePlan
    var replicas: [SimulatedReplica] = []
    var configurations: [SyncConfiguration] = []
    var links: [Link] = []
    var connections: [Connection?] = []
    var network: NetworkModel
    var nonces: SeededGenerator
    var diskRandom: SeededGenerator
    var queue = EventQueue()
    var checker: Checker
    var trace = TraceHash()
    var coverage = Coverage()
    var now: UInt64 = 0
    var healTick: UInt64?
    var failure: SimulationFailure?
    var convergenceTicks: UInt64?
    var finalDigest: UInt64?
    var events = 0
    var checksDone = 0
    var foldChecksDone = 0
    var nextWrite = 0
    /// True to keep every op written in ``writtenOps`` (for replays that print them).
    public var recordsOps = false
    /// Events between two checks of a merge engine's invariants, each on one replica in turn (0: none).
    public var invariantCheckIntervalEvents = SimulationLimits.invariantCheckIntervalEvents
    var nextInvariantCheck = 0
    var invariantChecksDone = 0
    /// The ops written, with their tick and replica, when ``recordsOps`` is set.
    public private(set) var writtenOps: [WrittenOp] = []
    /// The folder of this run's SQLite files, once made.
    var sqliteFolder: String?

    /// A world for `scenario` (checked with ``Scenario/validate()`` first when it comes from outside).
    public init(scenario: Scenario) {
        self.scenario = scenario
        plan = WritePlan(scenario: scenario)
        network = NetworkModel(profile: scenario.network, seed: scenario.seed, healTick: scenario.ticksFault)
        nonces = RandomStream.nonces.generator(seed: scenario.seed)
        diskRandom = RandomStream.disk.generator(seed: scenario.seed)
        let ids = Array(plan.replicaIDs.prefix(scenario.replicaCount))
        checker = Checker(ids: ids, registry: Workload.registry, seed: scenario.seed)
        buildReplicas(ids: ids)
        buildLinks()
        if let joiner = scenario.lateJoiner {
            // Alone until it joins: nobody reaches it, and it reaches nobody.
            network.add(
                NetworkModel.Block(episode: -1, fault: .isolate(replica: joiner.replica), endTick: joiner.joinTick))
        }
    }

    deinit { closeDisks() }

    /// The share the hub's sessions cut for the share leaf (from the same credential), or nil.
    private(set) lazy var leafShare: CredentialShare? = {
        guard let leaf = scenario.shareLeaf, configurations.count > Scenario.hubIndex else { return nil }
        let id = replicas[leaf.replica].id
        return configurations[Scenario.hubIndex].tokens.credential(name: "", replica: id).map(CredentialShare.init)
    }()

    /// The index of the share leaf, or nil.
    var leafIndex: Int? { scenario.shareLeaf?.replica }

    /// Runs the scenario to convergence or to the first failure.
    public func run() -> SimulationReport {
        precondition(events == 0, "a simulation runs once")
        start()
        while failure == nil, convergenceTicks == nil, let (tick, event) = queue.next() {
            precondition(tick >= now, "time runs forward")
            now = tick
            checker.now = tick
            events += 1
            trace.add(tick, event.code)
            if events > SimulationLimits.eventsMax {
                fail(.runaway, nil, "more than \(SimulationLimits.eventsMax) events")
                break
            }
            handle(event)
            if invariantCheckIntervalEvents > 0, events >= nextInvariantCheck {
                nextInvariantCheck = events + invariantCheckIntervalEvents
                checkMergeInvariants()
            }
        }
        if failure == nil, convergenceTicks == nil {
            fail(.notConverged, nil, "the event queue ran dry before convergence")
        }
        for replica in replicas where replica.isUp { replica.countEngineRoads(into: &coverage) }
        closeDisks()
        return SimulationReport(
            seed: scenario.seed, replicaCount: scenario.replicaCount, topology: scenario.topology,
            traceHash: trace.value, failure: failure, convergenceTicks: convergenceTicks, ticks: now, events: events,
            coverage: coverage, finalDigest: finalDigest)
    }

    // MARK: - Set-up

    private func buildReplicas(ids: [ReplicaID]) {
        let hubs: Set<ReplicaID> = scenario.topology == .hub ? [ids[Scenario.hubIndex]] : []
        for (index, id) in ids.enumerated() {
            let profile = scenario.replicas[index]
            // The others do not know a late joiner until it joins; nor does it know them: as a daemon
            // started alone, it learns its members from the sessions it has.
            var members = Set(ids)
            if let joiner = scenario.lateJoiner?.replica {
                if joiner == index { members = [id] } else { members.remove(ids[joiner]) }
            }
            // A leaf holds placeholders, not the ops: it is nobody's member (its acks make nothing stable).
            if let leaf = scenario.shareLeaf?.replica, leaf != index { members.remove(ids[leaf]) }
            replicas.append(
                SimulatedReplica(
                    index: index, id: id, profile: profile, disk: makeDisk(profile, replica: index, id: id),
                    sabotage: scenario.sabotage, members: members, hubs: hubs))
            if profile.clockOffsetMillis != 0 { coverage.bump(.clockSkews) }
            configurations.append(configuration(index: index, ids: ids))
        }
    }

    func makeDisk(_ profile: ReplicaProfile, replica: Int, id: ReplicaID) -> any ReplicaDisk {
        switch profile.storage {
        case .simulatedDisk: return SimulatedDisk()
        case .memoryStore:
            return StoreDisk(memoryFor: id, durability: profile.syncsEveryCommit ? .full : .normal, name: "r\(replica)")
        case .sqliteStore:
            do {
                let folder = try temporaryFolder()
                return try StoreDisk(sqliteAt: folder + "/r\(replica).sqlite", replica: id)
            } catch {
                fail(.localFailure, replica, "cannot open a SQLite store: \(error)")
                return SimulatedDisk()
            }
        }
    }

    private func configuration(index: Int, ids: [ReplicaID]) -> SyncConfiguration {
        var tokens = TokenBook()
        for (other, id) in ids.enumerated() where other != index {
            let pair = "weft-sim shared token \(min(ids[index], id))-\(max(ids[index], id))"
            // The pair's text is always well over the token minimum.
            tokens.set(try! AuthToken(string: pair), for: id.description)
        }
        let role: SyncRole = scenario.topology == .hub && index == Scenario.hubIndex ? .hub : .peer
        if role == .hub, let leaf = scenario.shareLeaf {
            // Validated with the scenario: the rule parses.
            do {
                try leaf.restrict(&tokens, leafID: ids[leaf.replica])
            } catch {
                fail(.localFailure, index, "the share leaf's rule is refused: \(error)")
            }
        }
        var configuration = SyncConfiguration(replica: ids[index], role: role, tokens: tokens)
        let sessions = scenario.sessions
        configuration.windowBytes = sessions.windowBytes
        configuration.batchOpsMax = sessions.batchOpsMax
        configuration.pingIntervalMilliseconds = sessions.pingIntervalTicks
        configuration.idleTimeoutMilliseconds = sessions.idleTimeoutTicks
        configuration.handshakeTimeoutMilliseconds = sessions.handshakeTimeoutTicks
        return configuration
    }

    private func buildLinks() {
        let count = scenario.replicaCount
        var pairs: [(Int, Int)] = []
        switch scenario.topology {
        case .hub:
            pairs = (0..<count).filter { $0 != Scenario.hubIndex }.map { ($0, Scenario.hubIndex) }
        case .mesh where count <= SimulationLimits.fullMeshReplicasMax:
            for first in 0..<count { for second in (first + 1)..<count { pairs.append((first, second)) } }
        case .mesh:
            for index in 0..<count { pairs.append((index, (index + 1) % count)) }
            for index in 0..<count {
                for _ in 0..<SimulationLimits.meshChordsPerReplica {
                    let other = (index + 2 + Int(network.draw(below: UInt64(count - 3)))) % count
                    let pair = (min(index, other), max(index, other))
                    if !pairs.contains(where: {
                        ($0.0 == pair.0 && $0.1 == pair.1) || ($0.0 == pair.1 && $0.1 == pair.0)
                    }) {
                        pairs.append(pair)
                    }
                }
            }
        }
        links = pairs.map { Link(initiator: $0.0, acceptor: $0.1, latency: network.drawLatency()) }
    }

    private func start() {
        for index in links.indices { scheduleDial(index, at: network.draw(below: 5)) }
        for replica in replicas where !replica.profile.syncsEveryCommit {
            queue.schedule(
                .sync(replica: replica.index, generation: replica.generation), at: replica.profile.syncIntervalTicks)
        }
        for (index, episode) in scenario.episodes.enumerated() {
            queue.schedule(.episodeStart(index: index), at: episode.startTick)
        }
        scheduleNextWrite()
        queue.schedule(.heal, at: scenario.ticksFault)
        queue.schedule(.check, at: SimulationLimits.checkIntervalTicks)
    }

    // MARK: - Events

    /// The bytes of the deliveries to the same endpoint that come next in the queue at this tick, taken
    /// out of it: a socket read returns every byte that has arrived, so they are read with the first.
    private func bytesArrivingWith(connection: Int, side: Int) -> [UInt8] {
        var bytes: [UInt8] = []
        while let (tick, event) = queue.peek(), tick == now, case .deliver(connection, side, let more) = event {
            _ = queue.next()
            events += 1
            trace.add(tick, event.code)
            bytes += more
        }
        return bytes
    }

    private func handle(_ event: Event) {
        switch event {
        case .write(let index): write(index)
        case .deliver(let connection, let side, let bytes):
            deliver(
                bytes + bytesArrivingWith(connection: connection, side: side),
                to: EndpointAddress(connection: connection, side: side))
        case .transportClosed(let connection, let side):
            transportClosed(EndpointAddress(connection: connection, side: side))
        case .timer(let connection, let side, let timer, let generation):
            timerFired(timer, generation: generation, at: EndpointAddress(connection: connection, side: side))
        case .dial(let link): dial(link)
        case .reset(let connection): reset(connection)
        case .sync(let replica, let generation): syncTimerFired(replica, generation: generation)
        case .logGrew(let replica): logGrew(replica)
        case .episodeStart(let index): startEpisode(index)
        case .episodeEnd(let index): endEpisode(index)
        case .restart(let replica): restart(replica)
        case .check: check()
        case .heal: heal()
        }
    }

    func fail(_ kind: SimulationFailure.Kind, _ replica: Int?, _ message: String) {
        guard failure == nil else { return }
        failure = SimulationFailure(kind: kind, tick: now, replica: replica, message: message)
    }

    func record(_ found: SimulationFailure?) {
        if failure == nil, let found { failure = found }
    }

    private func scheduleNextWrite() {
        guard nextWrite < plan.writes.count else { return }
        queue.schedule(.write(index: nextWrite), at: plan.writes[nextWrite].tick)
        nextWrite += 1
    }

    private func write(_ index: Int) {
        scheduleNextWrite()
        let write = plan.writes[index]
        guard write.writer < replicas.count else { return }
        let replica = replicas[write.writer]
        guard replica.isUp else {
            coverage.bump(.writesWhileDown)
            return
        }
        let op: Op
        let encoding: ArraySlice<UInt8>
        let report: ApplyReport
        do {
            (op, encoding, report) = try replica.write(write, now: now)
        } catch {
            return fail(.localFailure, replica.index, "writing failed: \(error)")
        }
        trace.add(op.stamp.time, op.sequence)
        coverage.bump(.opsWritten)
        if recordsOps { writtenOps.append(WrittenOp(tick: now, replica: replica.index, op: op)) }
        if write.path == WritePlan.Bank.path, case .call = write.kind { coverage.bump(.bankTransfers) }
        if write.relation != nil {
            if case .merge = op.kind { coverage.bump(.relationFallbacks) } else { coverage.bump(.relationChanges) }
        }
        count(report)
        record(checker.wrote(op, encoding: encoding, at: replica.index))
        if replica.profile.syncsEveryCommit { scheduleGrowth(replica.index) }
    }

    func count(_ report: ApplyReport) {
        for outcome in report.outcomes.values {
            switch outcome {
            case .applied: break
            case .waiting: coverage.bump(.opsRejected)
            case .rejected(let reason):
                coverage.bump(.opsRejected)
                if case .staleRead = reason { coverage.bump(.transactionsRejected) }
                if case .refusedByFunction = reason { coverage.bump(.callsRefused) }
            }
        }
    }

    func scheduleGrowth(_ index: Int) {
        let replica = replicas[index]
        guard !replica.growthScheduled else { return }
        replica.growthScheduled = true
        queue.schedule(.logGrew(replica: index), at: now)
    }

    private func logGrew(_ index: Int) {
        let replica = replicas[index]
        replica.growthScheduled = false
        guard replica.isUp else { return }
        // The durable log grew: ops every member acked before they were durable here may be stable now,
        // as the daemon's driver decides on each growth.
        replica.acknowledgementsChanged()
        coverage.bump(.opsCompacted, by: replica.compactToStableFrontier())
        for address in replica.endpoints {
            withSession(address) { session, view, now in session.onLocalOpsAppended(source: view, now: now) }
        }
    }

    private func syncTimerFired(_ index: Int, generation: UInt64) {
        let replica = replicas[index]
        guard replica.isUp, replica.generation == generation else { return }
        do {
            if try replica.sync() { scheduleGrowth(index) }
        } catch {
            return fail(.localFailure, index, "sync failed: \(error)")
        }
        queue.schedule(.sync(replica: index, generation: generation), at: now + replica.profile.syncIntervalTicks)
    }
}
