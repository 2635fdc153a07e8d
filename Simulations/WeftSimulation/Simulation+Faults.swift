import WeftCore
import WeftSync

// MARK: - Faults

extension Simulation {
    func startEpisode(_ index: Int) {
        guard healTick == nil else { return }
        let episode = scenario.episodes[index]
        let end = min(episode.endTick, scenario.ticksFault)
        trace.add(UInt64(index))
        switch episode.fault {
        case .partition, .isolate, .clog:
            coverage.bump(episode.fault.counter)
            network.add(NetworkModel.Block(episode: index, fault: episode.fault, endTick: end))
            queue.schedule(.episodeEnd(index: index), at: end)
        case .crash(let replica, _):
            guard replicas[replica].isUp else { return }
            coverage.bump(episode.fault.counter)
            crash(replica)
            queue.schedule(.restart(replica: replica), at: max(end, now + 1))
        case .clockJump(let replica, let delta):
            coverage.bump(episode.fault.counter)
            let limit = SimulationLimits.clockOffsetMillisMax
            replicas[replica].clockOffsetMillis = min(limit, max(-limit, replicas[replica].clockOffsetMillis + delta))
        case .clockBeyondDrift(let replica, let beyond):
            coverage.bump(episode.fault.counter)
            // Measured from the slowest clock, so that the wait it causes stays within `beyond`.
            let slowest = replicas.map(\.clockOffsetMillis).min() ?? 0
            replicas[replica].beyondDriftOffsetMillis = slowest + Int64(SimulationLimits.driftMillisMax + beyond)
            queue.schedule(.episodeEnd(index: index), at: max(end, now + 1))
        }
    }

    func endEpisode(_ index: Int) {
        switch scenario.episodes[index].fault {
        case .partition, .isolate, .clog: network.remove(episode: index)
        case .clockBeyondDrift(let replica, _): replicas[replica].beyondDriftOffsetMillis = nil
        case .crash, .clockJump: break
        }
    }

    /// Power loss at one replica: its sessions vanish without a word (peers may see a reset, or find
    /// out through their idle timeout), and its disk keeps a random prefix of its unsynced commits.
    func crash(_ index: Int) {
        let replica = replicas[index]
        for address in replica.endpoints {
            guard let connection = connections[address.connection] else { continue }
            let peer = address.side ^ 1
            if connection.sessions[peer] != nil, network.chance(scenario.network.resetOnCrashRate) {
                coverage.bump(.connectionsResetByCrash)
                scheduleTransportClosed(toward: peer, of: address.connection)
            }
        }
        let endpoints = replica.endpoints
        replica.countEngineRoads(into: &coverage)
        let unsynced = replica.unsyncedCommits.count
        let kept = Int(diskRandom.below(UInt64(unsynced + 1)))
        let lost = replica.crash(keepingUnsyncedCommits: kept)
        for address in endpoints { forget(address) }
        coverage.bump(.unsyncedCommitsLost, by: unsynced - kept)
        coverage.bump(.opsLostInCrashes, by: lost.count)
        trace.add(UInt64(index), UInt64(kept), UInt64(lost.count))
        record(checker.crashed(index, lost: lost))
    }

    func restart(_ index: Int) {
        let replica = replicas[index]
        guard !replica.isUp else { return }
        let recovered: RecoveredLog
        do {
            recovered = try replica.restart()
        } catch {
            return fail(.localFailure, index, "recovery failed: \(error)")
        }
        coverage.bump(.restarts)
        if replica.profile.storage == .sqliteStore { coverage.bump(.sqliteReopens) }
        coverage.bump(.recoveryChecks)
        record(checker.recovered(index, recovered, durable: replica.durable.vector, state: replica.engine.state))
        if !replica.profile.syncsEveryCommit {
            queue.schedule(
                .sync(replica: index, generation: replica.generation), at: now + replica.profile.syncIntervalTicks)
        }
        for (link, candidate) in links.enumerated() where candidate.initiator == index && !candidate.dialScheduled {
            scheduleDial(link, at: now)
        }
    }

    /// The end of the fault phase: partitions and clogs lift, frames stop being lost, clocks stop
    /// running beyond the drift limit, and crashed replicas restart.
    func heal() {
        healTick = now
        network.heal(at: now)
        trace.add(now)
        for replica in replicas { replica.beyondDriftOffsetMillis = nil }
        for replica in replicas where !replica.isUp { restart(replica.index) }
        for (index, link) in links.enumerated() where link.connection == nil && !link.dialScheduled {
            scheduleDial(index, at: now)
        }
    }
}
